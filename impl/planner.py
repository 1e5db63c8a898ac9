"""Planner: step snapshots, the plan and the router of one sampling step (SPEC §7, INV-2).

A step captures the registry state current when it is sampled, together with its
exposure (what the step shows and routes, SPEC §11.9); both are immutable, so nothing
published later reaches the step. ``tool_search`` marks tools discovered here; the
next step sampled shows them.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from .exposure import Exposer
from .registry import Binding, ToolRegistry
from .values import StepSnapshot

__all__ = ["Planner"]


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

    def is_search(self, binding: Binding) -> bool:
        """``binding`` is the host's ``tool_search`` (SPEC §11.9)."""
        return binding is self.exposer.search_binding

    def discover(self, found: Iterable[Binding]) -> None:
        """Show these MCP tools in every step sampled from now on."""
        self.exposer.discover(found)
