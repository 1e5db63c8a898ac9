"""Values the runtime hands to its callers: results, refresh outcomes, step snapshots."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from mcpbind.model import texts

from .registry import Binding, RegistryState, ToolSpec

__all__ = ["HostStatistics", "RefreshOutcome", "ServerStatus", "StepSnapshot", "ToolResult"]


@attrs.frozen
class ToolResult:
    """The one terminal result of a call (INV-4). ``output`` is what the model sees."""

    call_id: str
    status: texts.CallStatus
    output: str


@attrs.frozen
class RefreshOutcome:
    """How one refresh ended (SPEC §5.6)."""

    server: str
    status: texts.OutcomeStatus
    generation: int
    kind: texts.RejectKind | None = None
    reason: str | None = None


@attrs.frozen(eq=False)
class StepSnapshot:
    """One sampling step: its plan (``specs``) and its router (``binding``) read the same
    registry state, which nothing changes afterwards (INV-2). Building one is O(1)."""

    step: int
    state: RegistryState

    @property
    def generation(self) -> int:
        return self.state.generation

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """The tool specs shown to the model, sorted by name."""
        return self.state.specs

    @property
    def names(self) -> Mapping[str, Binding]:
        """The router's table: every name this step accepts."""
        return self.state.by_name

    def binding(self, name: str) -> Binding | None:
        """What ``name`` executes in this step, or None when the step has no such tool."""
        return self.state.by_name.get(name)


@attrs.frozen
class HostStatistics:
    generation: int
    connected: Mapping[str, bool]
    calls_in_flight: int
    results: Mapping[str, int]
    """Terminal results so far, by status."""
    late_dropped: int
    """Answers that arrived after their call had ended (dropped, INV-4)."""


@attrs.frozen
class ServerStatus:
    """One server as ``mcpbind catalog`` shows it."""

    name: str
    connected: bool
    tools: int
    """Tools of this server in the current registry state."""
    error: str | None
    """Why its last connection attempt or refresh failed, if it did."""
