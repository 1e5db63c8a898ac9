"""Planner: step snapshots, the plan and the router of one sampling step (SPEC §7, INV-2).

A step captures the registry state current when it is sampled, together with its
exposure (what the step shows and routes, SPEC §11.9); both are immutable, so nothing
published later reaches the step. ``tool_search`` marks tools discovered here; the
next step sampled shows them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .exposure import Exposer, Exposure
from .registry import Binding, RegistryState, ToolRegistry, ToolSpec

__all__ = ["Planner", "StepSnapshot"]


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


@attrs.define(eq=False)
class Planner:
    registry: ToolRegistry
    exposer: Exposer
    steps: int = 0
    """Steps sampled so far; the next one is numbered ``steps``."""

    def sample(self) -> StepSnapshot:
        """The current registry state as one step's plan and router (O(1) amortised)."""
        state = self.registry.state
        snapshot = StepSnapshot(self.steps, state, self.exposer.expose(state))
        self.steps += 1
        return snapshot

    def is_resource_tool(self, binding: Binding) -> bool:
        """``binding`` is one of the host's three resource tools (SPEC §11.20)."""
        for tool in self.exposer.resource_tools:  # noqa: SIM110 - no generator: every call asks
            if binding is tool:
                return True
        return False

    def is_search(self, binding: Binding) -> bool:
        """``binding`` is the host's ``tool_search`` (SPEC §11.9)."""
        return binding is self.exposer.search_binding

    def discover(self, found: Iterable[Binding]) -> None:
        """Show these MCP tools in every step sampled from now on."""
        self.exposer.discover(found)
