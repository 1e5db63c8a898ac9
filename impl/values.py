"""Values the runtime hands to its callers: results, refresh outcomes, step snapshots."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from mcpbind.model import texts

from .exposure import Exposer, Exposure
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


def _exposure_of(snapshot: StepSnapshot) -> Exposure:
    return Exposer(None, None).expose(snapshot.state)


@attrs.frozen(eq=False)
class StepSnapshot:
    """One sampling step: its plan (``specs``) and its router (``binding``) are the one
    exposure computed from one registry state, which nothing changes afterwards (INV-2).
    Building one is O(1) amortised (the host caches the exposure, SPEC §11.9)."""

    step: int
    state: RegistryState
    exposure: Exposure = attrs.field(
        default=attrs.Factory(_exposure_of, takes_self=True), repr=False
    )
    """What the step shows; by default every tool of ``state``, unshortened."""

    @property
    def generation(self) -> int:
        return self.state.generation

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """The tool specs shown to the model, sorted by name."""
        return self.exposure.specs

    @property
    def names(self) -> Mapping[str, Binding]:
        """The router's table: every name this step accepts."""
        return self.exposure.by_name

    @property
    def deferred(self) -> int:
        """MCP tools of the registry state this step does not show; ``tool_search`` finds
        them (SPEC §11.9). 0 when the step shows every tool."""
        return self.exposure.deferred

    def binding(self, name: str) -> Binding | None:
        """What ``name`` executes in this step, or None when the step has no such tool."""
        return self.exposure.by_name.get(name)

    def full_input_schema(self, name: str) -> Mapping[str, Any] | None:
        """The full input schema of ``name`` as its server listed it, even when the step
        shows a shortened one (SPEC §11.9); None when the step has no such tool."""
        binding = self.exposure.by_name.get(name)
        return None if binding is None else binding.spec.full_input_schema


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
