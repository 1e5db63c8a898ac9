"""Seams: the parts of the runtime a host is built from, named (SPEC §12.7).

A :class:`Host` builds its components from a :class:`Seams` value; the default,
:data:`PRODUCTION`, is the runtime itself. The runtime mutants of
``mcpbind.properties.impl_mutants`` are other values of it: each replaces one part by a
subclass that overrides one public hook (``typing_extensions.override`` makes mypy
check that the hook still exists), or one function by a broken one, so that a
refactoring cannot disarm a mutant without a type error. Nothing else in normal use
passes anything but the default.
"""

from __future__ import annotations

import attrs

from .calls.approval import ApprovalGate
from .calls.lanes import Lanes
from .calls.table import CallTable
from .catalog.listing import BuildBindings, ReadListing, build_bindings, read_listing
from .catalog.planner import Planner
from .catalog.registry import ToolRegistry
from .reconfigure import PlanReconfiguration, plan_reconfiguration
from .router import Router
from .server.runtime import ServerRuntime

__all__ = ["PRODUCTION", "Seams"]


@attrs.frozen
class Seams:
    registry: type[ToolRegistry] = ToolRegistry
    """Publishes registry states (INV-1, INV-3, INV-5, INV-6)."""
    planner: type[Planner] = Planner
    """Captures step snapshots (INV-2)."""
    read_listing: ReadListing = read_listing
    """Reads every page of a listing (INV-3)."""
    build_bindings: BuildBindings = build_bindings
    """Validates, filters and names a listing (INV-3, INV-5, INV-6)."""
    calls: type[CallTable] = CallTable
    """Owns pending calls: cancel (INV-7), fail on disconnect (INV-8)."""
    lanes: type[Lanes] = Lanes
    """The exclusive lane of each step (INV-9)."""
    router: type[Router] = Router
    """One call to its one result (INV-4)."""
    approvals: type[ApprovalGate] = ApprovalGate
    """Approval before sending (INV-10)."""
    runtime: type[ServerRuntime] = ServerRuntime
    """A server's sessions and refreshes (INV-8, INV-11, LIVE-2); how it joins and
    retires on a reconfiguration (INV-15, INV-16)."""
    reconfigure: PlanReconfiguration = plan_reconfiguration
    """What a reconfiguration adds, removes, changes and keeps (SPEC §11.17, INV-16)."""


PRODUCTION = Seams()
