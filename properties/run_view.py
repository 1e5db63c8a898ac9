"""What the checks of a lockstep run read: the runtime's reports as typed records, and
the run seen from outside (SPEC §12.2).

:mod:`.lockstep` records every report of the runtime's recorder as one of the ``Seen*``
records below and compares them, as a multiset, with the model's outputs (trace
refinement). :mod:`.impl_invariants` reads a run only through :class:`RunView`, which the
machine's run satisfies; neither module needs the other's private names.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import ClassVar, Protocol

import attrs

from mcpbind.impl import HostConfig, RegistryState, StepSnapshot, ToolResult
from mcpbind.model import texts
from mcpbind.model.naming import Identity
from mcpbind.model.values import Bound, Exclusion

from .scripted import ScriptedServer

__all__ = [
    "RunView",
    "Seen",
    "SeenLate",
    "SeenOutcome",
    "SeenPublished",
    "SeenRefused",
    "SeenResult",
    "SeenSent",
    "mcp_names",
    "tagged",
]


@attrs.frozen
class SeenPublished:
    """The runtime published a registry state."""

    kind: ClassVar[str] = "published"
    generation: int
    source: str
    names: tuple[str, ...]


@attrs.frozen
class SeenOutcome:
    """A refresh ended (SPEC §5.6); ``reject`` is the outcome's kind of rejection."""

    kind: ClassVar[str] = "outcome"
    server: str
    status: texts.OutcomeStatus
    generation: int
    reject: texts.RejectKind | None
    reason: str | None
    excluded: tuple[Exclusion, ...]


@attrs.frozen
class SeenResult:
    """A call ended; ``text`` as :func:`mcpbind.model.refine.result_text` compares it."""

    kind: ClassVar[str] = "result"
    call_id: str
    status: texts.CallStatus
    text: str | None


@attrs.frozen
class SeenSent:
    """A message sent to a server: the raw tool name for calls, the call_id for cancels."""

    kind: ClassVar[str] = "sent"
    server: str
    method: str
    detail: str


@attrs.frozen
class SeenRefused:
    """A misuse refused with a typed error."""

    kind: ClassVar[str] = "refused"
    call_id: str
    text: str


@attrs.frozen
class SeenLate:
    """An answer for a call that had already ended, dropped (INV-4)."""

    kind: ClassVar[str] = "late"
    call_id: str


Seen = SeenPublished | SeenOutcome | SeenResult | SeenSent | SeenRefused | SeenLate
"""One report of the runtime (or one output of the model, in the same form)."""


def tagged(seen: Seen) -> tuple[object, ...]:
    """``seen`` as a tuple led by its kind: how a failure prints it, in a stable order."""
    return (seen.kind, *attrs.astuple(seen, recurse=False))


class RunView(Protocol):
    """A lockstep run after a step, as the invariant checks read it. Nothing here changes
    the run: a check is a function of what it sees."""

    @property
    def bound(self) -> Bound:
        """The bound the run explores."""
        ...

    @property
    def history(self) -> Sequence[Seen]:
        """Everything the runtime reported since the host opened, in order."""
        ...

    @property
    def cached_installs(self) -> int:
        """Publications of cached catalogs at the start (lazy servers, SPEC §11.12)."""
        ...

    @property
    def registry(self) -> RegistryState:
        """The runtime's live registry state."""
        ...

    @property
    def config(self) -> HostConfig:
        """The configuration the host was opened with."""
        ...

    @property
    def connected(self) -> Mapping[str, bool]:
        """Per server, whether the runtime holds a connection to it."""
        ...

    @property
    def previous_names(self) -> Mapping[Identity, str] | None:
        """The public name of each MCP tool at the previous check (:func:`mcp_names`);
        None before the first."""
        ...

    @property
    def snapshots(self) -> Sequence[StepSnapshot]:
        """Every step sampled so far, in order."""
        ...

    @property
    def sampled(self) -> Sequence[Mapping[str, tuple[str | None, str]]]:
        """Per sampled step, its names and what each was bound to when it was sampled:
        ``(server, remote name)``."""
        ...

    @property
    def results(self) -> Mapping[str, Sequence[ToolResult]]:
        """The results the host's callers got, per call_id."""
        ...

    @property
    def call_steps(self) -> Mapping[str, int]:
        """The step of each call the model accepted."""
        ...

    @property
    def approvals(self) -> Collection[str]:
        """The calls waiting for the machine's approver."""
        ...

    @property
    def servers(self) -> Mapping[str, ScriptedServer]:
        """The scripted servers, by name: what is parked at each and what reached it."""
        ...

    @property
    def closing(self) -> bool:
        """A ``close`` rule ran: the host is closing (or closed)."""
        ...

    @property
    def closed(self) -> bool:
        """Leaving ``Host.open`` has finished."""
        ...


def mcp_names(registry: RegistryState) -> dict[Identity, str]:
    """The public name of each MCP tool the registry holds, by identity (INV-6)."""
    return {b.identity: b.name for b in registry.by_name.values() if b.server}
