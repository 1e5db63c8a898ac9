"""The tool registry: immutable states, one per published generation (SPEC §2.2, §5.5).

``ToolRegistry.replace_source`` is the way a catalog changes (``replace_sources`` changes
several in one publication, for a reconfiguration, SPEC §11.17): it validates the new
catalog against every other source, then publishes one new :class:`RegistryState`
(``generation + 1``) or nothing at all when the catalog is unchanged (INV-1, INV-3,
INV-5). Everything a step needs (the sorted specs, the name index) is computed once per
publication, so sampling a step is O(1) (SPEC §7.1).

The three steps of a replacement are hooks (``check_collisions``, ``unchanged``,
``merged``), the seams through which the runtime mutants of SPEC §12.7 break one rule.
Sources and the partition of names a listing is named against come from
:mod:`mcpbind.model.naming`, shared with the abstract model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Literal

import attrs

from mcpbind.model import texts
from mcpbind.model.naming import (
    BUILTIN,
    EXT_PREFIX,
    Identity,
    NameCollision,
    NamePartition,
    name_listing,
    partition_names,
    source_owner,
)

from ..errors import CatalogRejected, ContributorRejected
from .structured import OutputSchema

__all__ = [
    "NO_RESOURCES",
    "Binding",
    "RegistryState",
    "Resources",
    "SourceCatalog",
    "ToolRegistry",
    "ToolSpec",
]

_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@attrs.frozen
class Resources:
    """A server's resources and resource templates as it listed them (SPEC §11.20): part of
    its catalog, read by the same refresh and installed by the same publication."""

    declared: bool = attrs.field(default=False, eq=False)
    """The server declares the ``resources`` capability: the two list tools answer for it
    (for any other server they answer ``RESOURCE_NO_SERVER``). The three resource tools
    themselves are shown only while a catalog of the step *lists* a resource or a
    template (:func:`~.resources.lists_resources`), since ``MCPServer`` declares the
    capability whether it has resources or not. Not compared: a session's capabilities
    do not change, and a catalog is a change only for what it lists (the model's view)."""
    resources: tuple[Mapping[str, Any], ...] = ()
    """Each ``Resource`` of ``resources/list``, as listed (plain JSON), in listing order."""
    templates: tuple[Mapping[str, Any], ...] = ()
    """Each ``ResourceTemplate`` of ``resources/templates/list``, as listed."""
    uris: frozenset[str] = attrs.field(eq=False, repr=False)

    @uris.default
    def _uris(self) -> frozenset[str]:
        return frozenset(r["uri"] for r in self.resources if isinstance(r.get("uri"), str))


NO_RESOURCES = Resources()


@attrs.frozen
class ToolSpec:
    """What the model is shown for one tool."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    annotations: Mapping[str, Any] | None = None
    shortened_from: Mapping[str, Any] | None = None
    """The server's full input schema when ``input_schema`` is a shortened view of it
    (SPEC §11.9); None when ``input_schema`` is the full schema."""

    output_schema: Mapping[str, Any] | None = None
    """The tool's ``outputSchema`` as listed (SPEC §8.8); None when it declares none."""
    output_check: OutputSchema | None = attrs.field(default=None, eq=False, repr=False)
    """The validator of ``output_schema``, built once per listing."""
    task_support: str | None = None
    """``execution.taskSupport`` as listed (2025-11-25): ``required`` makes the host call
    the tool as a task (SPEC §8.12); None when the tool declares none."""

    @property
    def full_input_schema(self) -> Mapping[str, Any]:
        """The input schema as the server listed it, shortened or not."""
        return self.input_schema if self.shortened_from is None else self.shortened_from


@attrs.frozen
class Binding:
    """Public name -> the tool that executes it (SPEC §2.3)."""

    name: str
    source: str
    server: str | None
    """None for non-MCP sources."""
    remote_name: str
    spec: ToolSpec
    source_generation: int
    read_only: bool
    """The tool only reads (MCP: ``readOnlyHint``): it takes the parallel lane. No default:
    every source states it (a default no caller used was a mutant no test could kill)."""
    handler: Callable[[dict[str, Any]], Awaitable[str]] | None = attrs.field(
        default=None, repr=False
    )
    """The code a non-MCP binding runs (None for MCP). Part of the binding, so a step runs
    the handler of the registry state it was sampled from (INV-2, SPEC §11.11)."""
    resource: Literal["listed", "unlisted"] | None = None
    """A read of one resource (SPEC §11.20): ``remote_name`` is its URI, sent with
    ``resources/read``; made per call by ``read_mcp_resource``, never installed.
    ``listed``: the step's catalog lists the URI (the binding policy applies to it);
    ``unlisted``: a URI the step never listed, read as given."""

    @property
    def identity(self) -> Identity:
        return (self.server or "", self.remote_name)


@attrs.frozen
class SourceCatalog:
    source: str
    generation: int
    bindings: tuple[Binding, ...]
    """Sorted by public name."""
    resources: Resources = NO_RESOURCES
    """An MCP server's resources (SPEC §11.20), under the same source generation."""

    def remote_names(self) -> frozenset[str]:
        return frozenset(b.remote_name for b in self.bindings)


@attrs.frozen(eq=False)
class RegistryState:
    """One published registry value. Compared by identity: each generation is one state."""

    generation: int
    catalogs: Mapping[str, SourceCatalog]
    by_name: Mapping[str, Binding]
    specs: tuple[ToolSpec, ...]
    """Every binding's spec, sorted by name: the plan of a step sampled from this state."""
    remembered: Mapping[Identity, str]
    live_remotes: Mapping[str, frozenset[str]]
    """Per source, the raw names it lists (the ``revalidate`` check, SPEC §7.3)."""

    @classmethod
    def build(
        cls,
        generation: int,
        catalogs: Mapping[str, SourceCatalog],
        remembered: Mapping[Identity, str],
    ) -> RegistryState:
        by_name = {b.name: b for c in catalogs.values() for b in c.bindings}
        specs = tuple(by_name[name].spec for name in sorted(by_name))
        return cls(
            generation=generation,
            catalogs=MappingProxyType(dict(catalogs)),
            by_name=MappingProxyType(by_name),
            specs=specs,
            remembered=MappingProxyType(dict(remembered)),
            live_remotes=MappingProxyType({s: c.remote_names() for s, c in catalogs.items()}),
        )

    def catalog(self, source: str) -> SourceCatalog:
        return self.catalogs.get(source) or SourceCatalog(source, 0, ())

    def partition(self, server: str) -> NamePartition:
        """The installed names as a new listing of ``server`` sees them (SPEC §6.4-6.6)."""
        return partition_names(
            server,
            ((c.source, b.name, b.remote_name) for c in self.catalogs.values() for b in c.bindings),
        )

    def name_tools(
        self, server: str, raw_names: Iterable[str], max_length: int
    ) -> dict[Identity, str] | NameCollision:
        """Name one server's listing against this state (SPEC §6)."""
        return name_listing(
            server,
            raw_names,
            self.partition(server),
            remembered=self.remembered,
            max_length=max_length,
        )


class ToolRegistry:
    """Holds the current :class:`RegistryState`; publishes new ones atomically."""

    def __init__(
        self,
        builtins: Iterable[Binding] = (),
        extensions: Iterable[tuple[str, Iterable[Binding]]] = (),
    ) -> None:
        """The initial state (``G = 0``): the builtins, then each extension source in order.

        Raises :class:`ContributorRejected` (``collision``) when an extension's tool takes a
        name a builtin or an earlier extension holds: the later source is refused (INV-5)."""
        builtin = SourceCatalog(BUILTIN, 0, tuple(sorted(builtins, key=lambda b: b.name)))
        catalogs = {BUILTIN: builtin} if builtin.bindings else {}
        self._state = RegistryState.build(0, catalogs, _EMPTY)
        for source, bindings in extensions:
            new = tuple(sorted(bindings, key=lambda b: b.name))
            self.check_collisions(self._state, source, new)
            if new:
                catalogs[source] = SourceCatalog(source, 0, new)
                self._state = RegistryState.build(0, catalogs, _EMPTY)

    @property
    def state(self) -> RegistryState:
        return self._state

    def replace_source(
        self, source: str, bindings: Iterable[Binding], resources: Resources = NO_RESOURCES
    ) -> RegistryState | None:
        """Replace ``source``'s catalog in one publication; None when unchanged.

        Raises :class:`CatalogRejected` (``collision``; :class:`ContributorRejected` for an
        extension source) when a name is held by another source (INV-5): the incumbent
        keeps it, and the registry is then exactly as it was.
        """
        state = self._state
        new = tuple(sorted(bindings, key=lambda b: b.name))
        self.check_collisions(state, source, new)
        old = state.catalog(source)
        if self.unchanged(old.bindings, new) and old.resources == resources:
            return None  # INV-1: a refresh whose resources changed is a change too
        generation = old.generation + 1
        catalog = SourceCatalog(
            source,
            generation,
            tuple(attrs.evolve(b, source_generation=generation) for b in new),
            resources,
        )
        remembered = dict(state.remembered)
        for b in catalog.bindings:
            if b.server is not None:
                remembered[b.identity] = b.name
        self._state = RegistryState.build(
            state.generation + 1, self.merged(state, source, catalog), remembered
        )
        return self._state

    def replace_sources(self, changes: Mapping[str, Iterable[Binding]]) -> RegistryState | None:
        """Replace several sources' catalogs in ONE publication (SPEC §11.17, INV-1, INV-15):
        a reconfiguration empties the catalogs of the servers it removes together. None
        when no catalog changes. Raises as :meth:`replace_source` does, with the registry
        untouched."""
        state = self._state
        catalogs: Mapping[str, SourceCatalog] = state.catalogs
        remembered = dict(state.remembered)
        view = state
        changed = False
        for source, bindings in changes.items():
            new = tuple(sorted(bindings, key=lambda b: b.name))
            self.check_collisions(view, source, new)
            old = view.catalog(source)
            if self.unchanged(old.bindings, new) and old.resources == NO_RESOURCES:
                continue  # a removal: its resources go with its tools
            generation = old.generation + 1
            catalog = SourceCatalog(
                source,
                generation,
                tuple(attrs.evolve(b, source_generation=generation) for b in new),
            )
            for b in catalog.bindings:
                if b.server is not None:
                    remembered[b.identity] = b.name
            catalogs = self.merged(view, source, catalog)
            view = RegistryState.build(state.generation, catalogs, remembered)
            changed = True
        if not changed:
            return None
        self._state = RegistryState.build(state.generation + 1, catalogs, remembered)
        return self._state

    # --- the hooks of a replacement (seams of SPEC §12.7) --------------------------------

    def check_collisions(self, state: RegistryState, source: str, new: tuple[Binding, ...]) -> None:
        """INV-5: every name of ``new`` is free or already ``source``'s own; raises
        :class:`CatalogRejected` (:class:`ContributorRejected` for ``ext:``) otherwise."""
        for b in new:
            owner = state.by_name.get(b.name)
            if owner is None or owner.source == source:
                continue
            if source.startswith(EXT_PREFIX):
                raise ContributorRejected(
                    "collision",
                    texts.EXT_COLLISION.format(
                        name=b.name, contributor=source_owner(source), owner=owner.source
                    ),
                )
            raise CatalogRejected(
                "collision",
                texts.REJECT_COLLISION.format(
                    tool=b.remote_name, server=b.server, name=b.name, owner=owner.source
                ),
            )

    def unchanged(self, old: tuple[Binding, ...], new: tuple[Binding, ...]) -> bool:
        """Equal names, remote tools, specs and handlers (generations aside): INV-1 says a
        replacement that changes nothing publishes nothing."""
        # the lengths are compared first: strict only asserts it (an equivalent mutant)
        return len(old) == len(new) and all(
            (a.name, a.remote_name, a.spec, a.read_only)
            == (b.name, b.remote_name, b.spec, b.read_only)
            and a.handler is b.handler
            for a, b in zip(old, new, strict=True)  # pragma: no mutate
        )

    def merged(
        self, state: RegistryState, source: str, catalog: SourceCatalog
    ) -> Mapping[str, SourceCatalog]:
        """The catalogs of the next state: ``source`` replaced, every other source exactly
        as it was (INV-5: a refresh of one source never touches another's names)."""
        return {**state.catalogs, source: catalog}
