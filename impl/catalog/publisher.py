"""Publisher: the one path by which the registry changes (SPEC §2.2, §3.2 ``published``).

Every install goes through :meth:`Publisher.publish`: a server's refresh and its cached
catalog (:mod:`.runtime`, SPEC §11.12) and a tool contributor's list (SPEC §11.11); a
reconfiguration's removals go through :meth:`Publisher.publish_many`, one publication for
all of them (SPEC §11.17). It
replaces one source in the registry and reports the publication to the recorder, so
the trace of ``published`` outputs and the registry's generations cannot drift apart
(INV-1). Callers decide what to publish synchronously, with no ``await`` between reading
:attr:`Publisher.state` and publishing (INV-3).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from ..config.recorder import Recorder
from .registry import NO_RESOURCES, Binding, RegistryState, Resources, ToolRegistry

__all__ = ["Publisher"]


@attrs.define(eq=False)
class Publisher:
    registry: ToolRegistry
    recorder: Recorder

    @property
    def state(self) -> RegistryState:
        """The registry state published last."""
        return self.registry.state

    def publish(
        self, source: str, bindings: Iterable[Binding], resources: Resources = NO_RESOURCES
    ) -> RegistryState | None:
        """Replace ``source`` (its tools and its resources, SPEC §11.20) in one publication
        and report it; None when unchanged.

        Raises as :meth:`ToolRegistry.replace_source` does, with the registry untouched."""
        published = self.registry.replace_source(source, bindings, resources)
        if published is not None:
            names = tuple(b.name for b in published.catalog(source).bindings)
            self.recorder.published(published.generation, source, names)
        return published

    def publish_many(self, changes: Mapping[str, Iterable[Binding]]) -> RegistryState | None:
        """Replace every source of ``changes`` in ONE publication and report each changed
        source with that one generation, in the order given (SPEC §11.17, INV-1, INV-15);
        None when nothing changed. Raises as :meth:`ToolRegistry.replace_sources` does."""
        before = self.registry.state
        published = self.registry.replace_sources(changes)
        if published is not None:
            for source in changes:
                catalog = published.catalog(source)
                old = before.catalog(source)
                if (catalog.bindings, catalog.resources) != (old.bindings, old.resources):
                    names = tuple(b.name for b in catalog.bindings)
                    self.recorder.published(published.generation, source, names)
        return published
