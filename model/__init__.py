"""mcpbind's executable specification: a pure, sans-IO transition model (SPEC §2-§10).

Importing this package loads neither trio, anyio nor mcp. ``step(state, event)`` is a
pure function returning ``Transition(state, outputs)``; ``enabled(state)`` lists what
may happen next; :mod:`.invariants` holds one predicate per invariant and
:mod:`.explore` checks them on every reachable state of a bound. Deliberately broken
rule sets live in :mod:`.mutants`, which this package never imports.
"""

from .bounds import standard_bound
from .explore import Report, Violation, explore, format_event
from .invariants import INVARIANTS, Invariant, check_state, check_transition
from .naming import NameCollision, assign_names, natural_name, sanitize
from .rules import EventNotEnabled, Rules, enabled, initial, step
from .values import (
    Approve,
    Binding,
    Bound,
    Call,
    CallFailed,
    CallRecord,
    CallResponded,
    Cancel,
    Deny,
    Disconnect,
    Event,
    LateDropped,
    ListChanged,
    ListDone,
    ListFailed,
    ListPage,
    Output,
    Published,
    Reconnect,
    RefreshOutcome,
    RefreshRequested,
    Refused,
    Registry,
    Result,
    Sample,
    Sent,
    ServerSpec,
    State,
    Timeout,
    ToolDef,
    Transition,
)

__all__ = [
    "INVARIANTS",
    "Approve",
    "Binding",
    "Bound",
    "Call",
    "CallFailed",
    "CallRecord",
    "CallResponded",
    "Cancel",
    "Deny",
    "Disconnect",
    "Event",
    "EventNotEnabled",
    "Invariant",
    "LateDropped",
    "ListChanged",
    "ListDone",
    "ListFailed",
    "ListPage",
    "NameCollision",
    "Output",
    "Published",
    "Reconnect",
    "RefreshOutcome",
    "RefreshRequested",
    "Refused",
    "Registry",
    "Report",
    "Result",
    "Rules",
    "Sample",
    "Sent",
    "ServerSpec",
    "State",
    "Timeout",
    "ToolDef",
    "Transition",
    "Violation",
    "assign_names",
    "check_state",
    "check_transition",
    "enabled",
    "explore",
    "format_event",
    "initial",
    "natural_name",
    "sanitize",
    "standard_bound",
    "step",
]
