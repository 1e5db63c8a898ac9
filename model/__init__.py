"""mcpbind's executable specification: a pure, sans-IO transition model (SPEC §2-§10).

Importing this package loads neither trio, anyio nor mcp. ``step(state, event)`` is a
pure function returning ``Transition(state, outputs)``; ``enabled(state)`` lists what
may happen next; :mod:`.invariants` holds one predicate per invariant and
:mod:`.explore` checks them on every reachable state of a bound. Deliberately broken
rule sets live in :mod:`.mutants`, which this package never imports.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, read so by mypy
if TYPE_CHECKING:
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
        CallProgress,
        CallRecord,
        CallRejected,
        CallResponded,
        Cancel,
        Close,
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
        Reconfigure,
        Reconnect,
        RefreshOutcome,
        RefreshRequested,
        Refused,
        Registry,
        Relisten,
        Result,
        Sample,
        Sent,
        ServerSpec,
        SessionExpired,
        State,
        StreamEnded,
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
    "CallProgress",
    "CallRecord",
    "CallRejected",
    "CallResponded",
    "Cancel",
    "Close",
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
    "Reconfigure",
    "Reconnect",
    "RefreshOutcome",
    "RefreshRequested",
    "Refused",
    "Registry",
    "Relisten",
    "Report",
    "Result",
    "Rules",
    "Sample",
    "Sent",
    "ServerSpec",
    "SessionExpired",
    "State",
    "StreamEnded",
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

_WHERE = {
    "Approve": ".values",
    "Binding": ".values",
    "Bound": ".values",
    "Call": ".values",
    "CallFailed": ".values",
    "CallProgress": ".values",
    "CallRecord": ".values",
    "CallRejected": ".values",
    "CallResponded": ".values",
    "Cancel": ".values",
    "Close": ".values",
    "Deny": ".values",
    "Disconnect": ".values",
    "Event": ".values",
    "EventNotEnabled": ".rules",
    "INVARIANTS": ".invariants",
    "Invariant": ".invariants",
    "LateDropped": ".values",
    "ListChanged": ".values",
    "ListDone": ".values",
    "ListFailed": ".values",
    "ListPage": ".values",
    "NameCollision": ".naming",
    "Output": ".values",
    "Published": ".values",
    "Reconfigure": ".values",
    "Reconnect": ".values",
    "RefreshOutcome": ".values",
    "RefreshRequested": ".values",
    "Refused": ".values",
    "Registry": ".values",
    "Relisten": ".values",
    "Report": ".explore",
    "Result": ".values",
    "Rules": ".rules",
    "Sample": ".values",
    "Sent": ".values",
    "ServerSpec": ".values",
    "SessionExpired": ".values",
    "State": ".values",
    "StreamEnded": ".values",
    "Timeout": ".values",
    "ToolDef": ".values",
    "Transition": ".values",
    "Violation": ".explore",
    "assign_names": ".naming",
    "check_state": ".invariants",
    "check_transition": ".invariants",
    "enabled": ".rules",
    "explore": ".explore",
    "format_event": ".explore",
    "initial": ".rules",
    "natural_name": ".naming",
    "sanitize": ".naming",
    "standard_bound": ".bounds",
    "step": ".rules",
}
"""Each name's module. A name loads its module on first use (PEP 562), as
``mcpbind.impl``'s do: the runtime needs :mod:`.values`, :mod:`.naming` and :mod:`.texts`,
not the rules, the invariants and the explorer (issue 29: ``mcpbind catalog`` starts
without them)."""


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


class _Package(types.ModuleType):
    """The import system binds each submodule it loads on its package: once anything
    imported ``mcpbind.model.explore``, ``mcpbind.model.explore`` would be that module and
    no longer the function this package names. It stays the function, as it was when
    this package imported every name at once."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "explore" and isinstance(value, types.ModuleType):
            value = value.explore
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
