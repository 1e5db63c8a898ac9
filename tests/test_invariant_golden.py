"""Every invariant check's exact verdicts on transitions one edit away from the model's,
pinned (issue 33: the survivors in ``model/invariants.py`` are loops whose ``continue``,
``break`` or body nobody's inputs reach, and ``and``/``or`` whose two sides never differ
on the states the standard rules make).

For small cuts of the standard suite (``CUTS``), every transition of the standard rules'
reachable graph (states breadth first, each state's events in the order of their text,
``STRIDE``-th transitions only on the larger cuts) is edited once, in every way below,
and what :func:`check_transition` (with its triggers, as the explorer runs it) and
:func:`check_state` of the edited target say is recorded:

* its outputs: one dropped, doubled, or swapped with the next; one field of one output
  changed to a neighbouring value (``neighbour``: the next status, method or phase,
  another server, a text with a letter more, a flag flipped, a number one more); each
  of these also behind an output about no call (``NOBODY``), so that the edited output
  comes second after one every check of a call skips;
* its outputs with one more at the end: a ``notifications/cancelled`` or an ``ok``
  result for a call of the state before (so that one output a check skips, or
  accepts, comes before one it must flag);
* its target state: one call record dropped, doubled, or swapped with the next (so the
  offending record comes second, after one a check skips); one field of one call record
  or of one server changed to a neighbour; one catalog of its registry dropped, doubled,
  swapped, or a field of it changed; its steps copied (equal, not the same object: the
  plan of checks is cached by identity), the last snapshot dropped, made ``None`` or
  given another generation; ``closed`` and ``reconfigured`` flipped;
* the state before it: one field of one call record changed (the phase a check reads
  before deciding).

Each cut's row pins the number of edits, how many of them each invariant flags, a
digest of every edit's label and whole verdict, and the first few distinct texts each
invariant gives (readable in review). A changed loop (``continue`` made ``break``), a
loop run zero times or an ``and`` made ``or`` changes a verdict somewhere in these rows.

For two more conforming traces (``TRACES``: ``tests/test_trace_strict.py``'s
reconfiguration with the removed server's call reporting progress, or running as a
task), every trace one edit away, judged as ``tests/test_model_golden.py`` judges its
seven: the ids and lines :func:`check_trace` and ``refine`` report, and a digest of
their texts.

The table is the block between the ``GENERATED`` markers, written by
``scripts/update-golden`` with the other golden tables (it lives in this file for the
reason ``tests/test_model_golden.py`` gives).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any, get_args

import attrs
import pytest
from test_explore_small import part
from test_model_golden import perturbed, verdict
from test_trace_strict import RECONFIGURED

from mcpbind.model.explore import format_event
from mcpbind.model.invariants import check_state, check_transition
from mcpbind.model.rules import STANDARD
from mcpbind.model.trace import check_trace, parse_trace
from mcpbind.model.values import (
    CallPhase,
    CallRecord,
    Event,
    LateDropped,
    Method,
    Result,
    Sent,
    ServerState,
    State,
    Transition,
    evolve,
)

#: (policy, part, servers, calls) of each cut, and the stride of the transitions edited.
CUTS: list[tuple[str, str, int, int, int]] = [
    ("revalidate", "calls", 1, 2, 1),
    ("revalidate", "calls", 2, 1, 1),
    ("frozen", "approval", 1, 1, 1),
    ("revalidate", "approval", 1, 2, 3),
    ("revalidate", "sessions", 1, 1, 3),
    ("revalidate", "lazy", 1, 1, 1),
    ("frozen", "lazy", 1, 2, 3),
    ("revalidate", "retry", 1, 2, 5),
    ("revalidate", "tasks", 1, 2, 5),
    ("revalidate", "progress", 1, 1, 3),
    ("revalidate", "reconfigure", 1, 1, 40),
    ("frozen", "reconfigure", 1, 1, 40),
]

STATUSES = ["ok", "error", "failed", "cancelled", "timed_out", "denied", "unavailable"]
PHASES: list[str] = list(get_args(CallPhase))
METHODS: list[str] = list(get_args(Method))
SAMPLES = 3  # distinct texts kept per invariant and cut
NOBODY = LateDropped("nobody")  # an output about no call of the state


def cut_name(cut: tuple[str, str, int, int, int]) -> str:
    policy, name, servers, calls, stride = cut
    return f"{policy}/{name}/{servers}s{calls}c/{stride}"


def _next(values: list[str], value: str) -> str:
    return values[(values.index(value) + 1) % len(values)] if value in values else values[0]


def neighbour(field: str, value: Any, servers: tuple[str, ...]) -> Any:
    """Another value of a field, of the same shape: the one edit of a field."""
    if field == "status":
        return _next(STATUSES, value)
    if field == "phase":
        return _next(PHASES, value)
    if field == "method":
        return _next(METHODS, value)
    if field == "server":
        others = [s for s in servers if s != value]
        return others[0] if others else f"{value}z"
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return f"{value}z"
    if value is None and field == "text":
        return "z"
    if isinstance(value, tuple):
        return value[:-1] if value else ()
    return None  # a binding, a refresh, a start: gone


def _fields(value: Any, servers: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    for f in attrs.fields(type(value)):
        old = getattr(value, f.name)
        new = neighbour(f.name, old, servers)
        if new != old:
            yield f.name, evolve(value, **{f.name: new})


def _edits(items: tuple[Any, ...], what: str, servers: tuple[str, ...]) -> Iterator[Any]:
    """``(label, items)`` one edit away: one dropped, doubled, swapped, a field changed."""
    for i in range(len(items)):
        yield f"{what}{i} dropped", items[:i] + items[i + 1 :]
        yield f"{what}{i} doubled", items[: i + 1] + items[i:]
        if i + 1 < len(items):
            yield f"{what}{i} swapped", (*items[:i], items[i + 1], items[i], *items[i + 2 :])
        for name, changed in _fields(items[i], servers):
            yield f"{what}{i}.{name}", (*items[:i], changed, *items[i + 1 :])


def edited(before: State, t: Transition) -> Iterator[tuple[str, State, Transition]]:
    """Every (label, before, transition) one edit away from ``(before, t)``."""
    servers = tuple(s.name for s in before.bound.servers)
    after = t.state
    for label, outputs in _edits(t.outputs, "out", servers):
        yield label, before, Transition(after, outputs)
        # the same behind an output about no call, which every check of a call skips
        yield f"{label} behind another", before, Transition(after, (NOBODY, *outputs))
    for record in before.calls:
        server = servers[0] if record.binding is None else record.binding.server
        for extra in (
            Sent(server or servers[0], "notifications/cancelled", record.call_id),
            Result(record.call_id, "ok"),
        ):
            yield (
                f"{type(extra).__name__} for {record.call_id} added",
                before,
                Transition(after, (*t.outputs, extra)),
            )
    for label, calls in _edits(after.calls, "call", servers):
        yield label, before, Transition(evolve(after, calls=calls), t.outputs)
    for i, server in enumerate(after.servers):
        for name, changed in _fields(server, servers):
            states = (*after.servers[:i], changed, *after.servers[i + 1 :])
            yield f"server{i}.{name}", before, Transition(evolve(after, servers=states), t.outputs)
    for label, catalogs in _edits(after.registry.catalogs, "catalog", servers):
        registry = evolve(after.registry, catalogs=catalogs)
        yield label, before, Transition(evolve(after, registry=registry), t.outputs)
    if after.steps:
        # an equal copy first: a plan is cached by whether the steps are the same object
        last = after.steps[-1]
        for label, steps in (
            ("copied", (*after.steps,)),
            ("dropped", after.steps[:-1]),
            ("none", (*after.steps[:-1], None)),
            ("changed", (*after.steps[:-1], last and evolve(last, generation=last.generation + 1))),
        ):
            yield f"steps {label}", before, Transition(evolve(after, steps=steps), t.outputs)
    for flag in ("closed", "reconfigured"):
        flipped = evolve(after, **{flag: not getattr(after, flag)})
        yield flag, before, Transition(flipped, t.outputs)
    for i, record in enumerate(before.calls):
        for name, changed in _fields(record, servers):
            calls = (*before.calls[:i], changed, *before.calls[i + 1 :])
            yield f"before call{i}.{name}", evolve(before, calls=calls), t


def transitions(cut: tuple[str, str, int, int, int]) -> Iterator[tuple[State, Event, Transition]]:
    """Every ``stride``-th transition of the cut's reachable graph, breadth first."""
    policy, name, servers, calls, stride = cut
    first = STANDARD.initial(part(name, policy, servers=servers, calls=calls).bound).state
    seen = {first}
    order = [first]
    n = 0
    for state in order:
        for event in sorted(STANDARD.enabled(state), key=format_event):
            t = STANDARD.apply(state, event)
            if t.state not in seen:
                seen.add(t.state)
                order.append(t.state)
            if n % stride == 0:
                yield state, event, t
            n += 1


def verdicts(cut: tuple[str, str, int, int, int]) -> dict[str, Any]:
    digest = hashlib.sha256()
    edits = 0
    flagged: dict[str, int] = {}
    texts: dict[str, list[str]] = {}
    for number, (before, event, t) in enumerate(transitions(cut)):
        for label, b, e in edited(before, t):
            try:
                found = check_transition(b, event, e) + check_state(e.state)
            except (AssertionError, KeyError, ValueError, IndexError, AttributeError) as exc:
                found = [("crash", type(exc).__name__)]
            edits += 1
            digest.update(f"{number} {format_event(event)} {label}: {found!r}\n".encode())
            for inv, why in found:
                flagged[inv] = flagged.get(inv, 0) + 1
                kept = texts.setdefault(inv, [])
                if len(kept) < SAMPLES and why not in kept:
                    kept.append(why)
    return {
        "edits": edits,
        "flagged": dict(sorted(flagged.items())),
        "digest": digest.hexdigest(),
        "samples": dict(sorted(texts.items())),
    }


# --- the trace monitors --------------------------------------------------------------------


def _after_send(records: list[dict[str, Any]], extra: dict[str, Any]) -> list[dict[str, Any]]:
    i = next(i for i, r in enumerate(records) if r.get("method") == "tools/call")
    return [*records[: i + 1], extra, *records[i + 1 :]]


def _as_task(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The call runs as a task: its cancellation is ``tasks/cancel`` (SPEC §8.12)."""
    task = _after_send(records, {"kind": "task_created", "call_id": "a", "task_id": "t1"})
    signal = {"method": "notifications/cancelled"}
    return [{**r, "method": "tasks/cancel"} if signal.items() <= r.items() else r for r in task]


#: Conforming traces beside ``test_model_golden``'s, each reaching a monitor's condition
#: those do not: a call in flight on a removed server that reported progress, or runs as
#: a task, when the reconfiguration comes (INV-16's calls in flight, ``trace.py``'s
#: ``sent`` of a ``tools/call``).
TRACES: dict[str, list[dict[str, Any]]] = {
    "reconfigured_with_progress": _after_send(RECONFIGURED, {"kind": "progress", "call_id": "a"}),
    "reconfigured_task": _as_task(RECONFIGURED),
}


def trace_verdicts(records: list[dict[str, Any]]) -> dict[str, str]:
    """Each edit's short verdict (``test_model_golden.verdict``), and a digest of all."""
    rows = {"as written": verdict(records), **{n: verdict(r) for n, r in perturbed(records)}}
    digest = hashlib.sha256("\n".join(f"{n}: {t}" for n, (_, t) in rows.items()).encode())
    return {**{n: short for n, (short, _) in rows.items()}, "digest": digest.hexdigest()}


def tables() -> dict[str, Any]:
    return {
        **{cut_name(cut): verdicts(cut) for cut in CUTS},
        **{name: trace_verdicts(records) for name, records in TRACES.items()},
    }


# --- the tests -----------------------------------------------------------------------------

BEGIN = "# BEGIN GENERATED by scripts/update-golden"
END = "# END GENERATED"

# BEGIN GENERATED by scripts/update-golden
TABLES: dict[str, Any] = json.loads(
    r"""
{
 "revalidate/calls/1s2c/1": {
  "edits": 141831,
  "flagged": {
   "INV-1": 31671,
   "INV-10": 290,
   "INV-12": 8269,
   "INV-13": 822,
   "INV-14": 2551,
   "INV-15": 2993,
   "INV-16": 1024,
   "INV-2": 4334,
   "INV-3": 3074,
   "INV-4": 17172,
   "INV-5": 24709,
   "INV-7": 8387,
   "INV-8": 4236,
   "INV-9": 82,
   "crash": 8506
  },
  "digest": "6c513c5035fef980d310bbbc9087d7f64af4e2defb5c4c7ac06a680f8ed4889f",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 0)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 0 publication(s)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 2 publication(s)"
   ],
   "INV-10": [
    "c1 ended denied without waiting for approval and a deny",
    "c2 ended denied without waiting for approval and a deny"
   ],
   "INV-12": [
    "git.hub's refresh ended [] at close",
    "git.hub's refresh ended ['rejected', 'rejected'] at close",
    "git.hub's refresh ended ['ok'] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c2 waits for a retry it is not counted as having",
    "c1 was sent again by call before its refresh ended"
   ],
   "INV-14": [
    "c1 is marked expired while done",
    "c1 is marked expired while sent",
    "c2 is marked expired while done"
   ],
   "INV-15": [
    "git.hub is replacing without its replacement's first refresh in flight",
    "absent git.hub still has tools installed"
   ],
   "INV-16": [
    "absent git.hub is connected, refreshing or starting"
   ],
   "INV-2": [
    "c1: no_such_tool ended ok, but step 0 captured None",
    "step 0 changed after it was sampled",
    "c1: sent 'read' to git.hub, but step 0 bound mcp__git_hub__read to Binding(name='mcp__git_hub__read', source='mcp:git.hub', server='git.hub', remote_name='read', read_only=True, source_generation=1, spec='', resource=False)"
   ],
   "INV-3": [
    "mcp:git.hub mixes bindings of two installs",
    "mcp:git.hub installed ['read'], the listing had ['read', 'search']",
    "mcp:git.hub installed ['read'], which no whole listing yields"
   ],
   "INV-4": [
    "two results for c1 in one transition",
    "two calls share a call_id",
    "c1 (approval) has 1 terminal results"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "ext:admin changed although only [] was replaced",
    "names held twice: ['shell']"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server git.hub",
    "c1: sent [] to cancel it, owed ['notifications/cancelled']"
   ],
   "INV-8": [
    "tools/list sent to disconnected git.hub",
    "disconnect of git.hub changed the registry",
    "refresh of disconnected git.hub still in flight"
   ],
   "INV-9": [
    "exclusive calls c1 and c2 in flight together"
   ],
   "crash": [
    "KeyError",
    "ValueError",
    "IndexError"
   ]
  }
 },
 "revalidate/calls/2s1c/1": {
  "edits": 546692,
  "flagged": {
   "INV-1": 157627,
   "INV-10": 700,
   "INV-12": 39688,
   "INV-13": 1601,
   "INV-14": 4882,
   "INV-15": 26454,
   "INV-16": 8006,
   "INV-2": 13228,
   "INV-3": 19579,
   "INV-4": 33896,
   "INV-5": 153139,
   "INV-7": 20618,
   "INV-8": 33025,
   "crash": 37141
  },
  "digest": "1ed90ef12235ba6d0b0a95543294511ae38d62522239fcb2fbec4fdb5b8175e0",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 0)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 0 publication(s)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 2 publication(s)"
   ],
   "INV-10": [
    "c1 ended denied without waiting for approval and a deny"
   ],
   "INV-12": [
    "git.hub's refresh ended [] at close",
    "git.hub's refresh ended ['rejected', 'rejected'] at close",
    "git.hub's refresh ended ['ok'] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c1 was sent again by list_changed before its refresh ended",
    "c1 was sent again by reconnect before its refresh ended"
   ],
   "INV-14": [
    "c1 is marked expired while done",
    "c1 is marked expired while sent",
    "c1 was sent again by list_changed before its new listing ended"
   ],
   "INV-15": [
    "git.hub is replacing without its replacement's first refresh in flight",
    "git_hub is replacing without its replacement's first refresh in flight",
    "absent git.hub still has tools installed"
   ],
   "INV-16": [
    "absent git_hub is connected, refreshing or starting",
    "absent git.hub is connected, refreshing or starting"
   ],
   "INV-2": [
    "c1: no_such_tool ended ok, but step 0 captured None",
    "c1 runs on step 0, whose snapshot was dropped",
    "step 0 changed after it was sampled"
   ],
   "INV-3": [
    "mcp:git.hub mixes bindings of two installs",
    "mcp:git.hub installed ['read'], the listing had ['read', 'search']",
    "mcp:git.hub installed ['read'], which no whole listing yields"
   ],
   "INV-4": [
    "two results for c1 in one transition",
    "two calls share a call_id",
    "c1 (approval) has 1 terminal results"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "ext:admin changed although only [] was replaced",
    "names held twice: ['shell']"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server git.hub",
    "c1: sent [] to cancel it, owed ['notifications/cancelled']"
   ],
   "INV-8": [
    "tools/list sent to disconnected git.hub",
    "tools/list sent to disconnected git_hub",
    "refresh of disconnected git_hub still in flight"
   ],
   "crash": [
    "KeyError",
    "ValueError",
    "IndexError"
   ]
  }
 },
 "frozen/approval/1s1c/1": {
  "edits": 46869,
  "flagged": {
   "INV-1": 12921,
   "INV-10": 732,
   "INV-11": 168,
   "INV-12": 3263,
   "INV-13": 64,
   "INV-14": 573,
   "INV-15": 1386,
   "INV-16": 435,
   "INV-2": 1261,
   "INV-3": 1422,
   "INV-4": 4449,
   "INV-5": 11578,
   "INV-7": 1489,
   "INV-8": 1795,
   "crash": 3604
  },
  "digest": "1e8730d844c75b85503b6dfb94648c4353d6b0f72d224a08aea1221707f5b15c",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 0)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 0 publication(s)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 2 publication(s)"
   ],
   "INV-10": [
    "c1 became starting without an approval (call)",
    "c1z became sent without an approval (approve)",
    "c1 ended ok while it waited for approval"
   ],
   "INV-11": [
    "c1 waits for git.hub to start, which is not starting",
    "c1 ended denied by deny while waiting for git.hub",
    "c1 ended failed by approve while waiting for git.hub"
   ],
   "INV-12": [
    "git.hub's refresh ended [] at close",
    "git.hub's refresh ended ['rejected', 'rejected'] at close",
    "git.hub's refresh ended ['ok'] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c1 was sent again by list_changed before its refresh ended"
   ],
   "INV-14": [
    "c1 is marked expired while done",
    "c1 is marked expired while approval",
    "c1 is marked expired while sent"
   ],
   "INV-15": [
    "git.hub is replacing without its replacement's first refresh in flight",
    "absent git.hub still has tools installed"
   ],
   "INV-16": [
    "absent git.hub is connected, refreshing or starting",
    "c1 of absent git.hub is approval"
   ],
   "INV-2": [
    "c1: no_such_tool ended ok, but step 0 captured None",
    "c1 runs on step 0, whose snapshot was dropped",
    "step 0 changed after it was sampled"
   ],
   "INV-3": [
    "mcp:git.hub mixes bindings of two installs",
    "mcp:git.hub installed ['read'], the listing had ['read', 'search']",
    "mcp:git.hub installed ['read'], which no whole listing yields"
   ],
   "INV-4": [
    "two results for c1 in one transition",
    "two calls share a call_id",
    "c1 (approval) has 1 terminal results"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "ext:admin changed although only [] was replaced",
    "names held twice: ['shell']"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server git.hub",
    "c1: sent [] to cancel it, owed ['notifications/cancelled']"
   ],
   "INV-8": [
    "tools/list sent to disconnected git.hub",
    "disconnect of git.hub changed the registry",
    "refresh of disconnected git.hub still in flight"
   ],
   "crash": [
    "KeyError",
    "ValueError",
    "IndexError"
   ]
  }
 },
 "revalidate/approval/1s2c/3": {
  "edits": 130658,
  "flagged": {
   "INV-1": 29740,
   "INV-10": 3327,
   "INV-11": 752,
   "INV-12": 6297,
   "INV-13": 514,
   "INV-14": 2480,
   "INV-15": 2603,
   "INV-16": 1042,
   "INV-2": 4633,
   "INV-3": 2711,
   "INV-4": 15676,
   "INV-5": 21049,
   "INV-7": 5634,
   "INV-8": 3385,
   "INV-9": 47,
   "crash": 7401
  },
  "digest": "101b39ac87cdce2f5c9e10ef1dec9da3fc1bef32144593cf68efc5476a8964af",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 0)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 0 publication(s)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 2 publication(s)"
   ],
   "INV-10": [
    "c1 became starting without an approval (call)",
    "c1 ended ok while it waited for approval",
    "c2 became starting without an approval (call)"
   ],
   "INV-11": [
    "c1 waits for git.hub to start, which is not starting",
    "c2 waits for git.hub to start, which is not starting",
    "c1 ended denied by deny while waiting for git.hub"
   ],
   "INV-12": [
    "git.hub's refresh ended [] at close",
    "git.hub's refresh ended ['rejected', 'rejected'] at close",
    "git.hub's refresh ended ['ok'] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c1 was sent again by list_changed before its refresh ended",
    "c2 waits for a retry it is not counted as having"
   ],
   "INV-14": [
    "c1 is marked expired while done",
    "c1 is marked expired while approval",
    "c2 is marked expired while done"
   ],
   "INV-15": [
    "git.hub is replacing without its replacement's first refresh in flight",
    "absent git.hub still has tools installed"
   ],
   "INV-16": [
    "absent git.hub is connected, refreshing or starting",
    "c1 of absent git.hub is approval",
    "c2 of absent git.hub is approval"
   ],
   "INV-2": [
    "step 0 changed after it was sampled",
    "c1: no_such_tool ended ok, but step 0 captured None",
    "c1 runs mcp__git_hub__searchz as Binding(name='mcp__git_hub__search', source='mcp:git.hub', server='git.hub', remote_name='search', read_only=False, source_generation=1, spec='', resource=False), but step 0 captured None"
   ],
   "INV-3": [
    "mcp:git.hub mixes bindings of two installs",
    "mcp:git.hub installed ['read'], the listing had ['read', 'search']",
    "mcp:git.hub installed ['read'], which no whole listing yields"
   ],
   "INV-4": [
    "two results for c1 in one transition",
    "two calls share a call_id",
    "c1 (approval) has 1 terminal results"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "ext:admin changed although only [] was replaced",
    "names held twice: ['shell']"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server git.hub",
    "c2: sent ['notifications/cancelled'] to cancel it, owed []"
   ],
   "INV-8": [
    "tools/list sent to disconnected git.hub",
    "refresh of disconnected git.hub still in flight",
    "disconnect of git.hub changed the registry"
   ],
   "INV-9": [
    "exclusive calls c1 and c2 in flight together"
   ],
   "crash": [
    "KeyError",
    "ValueError",
    "IndexError"
   ]
  }
 },
 "revalidate/sessions/1s1c/3": {
  "edits": 76918,
  "flagged": {
   "INV-1": 19933,
   "INV-10": 164,
   "INV-12": 5563,
   "INV-13": 398,
   "INV-14": 2527,
   "INV-15": 2138,
   "INV-16": 752,
   "INV-2": 1922,
   "INV-3": 2201,
   "INV-4": 6620,
   "INV-5": 17794,
   "INV-7": 3397,
   "INV-8": 3205,
   "crash": 6125
  },
  "digest": "40e40db7644a6f598059a78ff8a898db37e94ba7a83b08d75e7cff0ab9253960",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 0)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 0 publication(s)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 2 publication(s)"
   ],
   "INV-10": [
    "c1 ended denied without waiting for approval and a deny"
   ],
   "INV-12": [
    "git.hub's refresh ended [] at close",
    "git.hub's refresh ended ['rejected', 'rejected'] at close",
    "git.hub's refresh ended ['ok'] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c1 waits behind a refresh with nothing queued after it",
    "c1 waits for its retry with no refresh in flight"
   ],
   "INV-14": [
    "c1 is marked expired while done",
    "c1 is marked expired while sent",
    "the new session of git.hub starts no listing"
   ],
   "INV-15": [
    "git.hub is replacing without its replacement's first refresh in flight",
    "absent git.hub still has tools installed"
   ],
   "INV-16": [
    "absent git.hub is connected, refreshing or starting"
   ],
   "INV-2": [
    "step 0 changed after it was sampled",
    "c1: no_such_tool ended ok, but step 0 captured None",
    "c1 runs on step 0, whose snapshot was dropped"
   ],
   "INV-3": [
    "mcp:git.hub mixes bindings of two installs",
    "mcp:git.hub installed ['read'], the listing had ['read', 'search']",
    "mcp:git.hub installed ['read'], which no whole listing yields"
   ],
   "INV-4": [
    "two results for c1 in one transition",
    "two calls share a call_id",
    "c1 (approval) has 1 terminal results"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "ext:admin changed although only [] was replaced",
    "names held twice: ['shell']"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server git.hub",
    "c1: sent [] to cancel it, owed ['notifications/cancelled']"
   ],
   "INV-8": [
    "tools/list sent to disconnected git.hub",
    "refresh of disconnected git.hub still in flight",
    "disconnect of git.hub changed the registry"
   ],
   "crash": [
    "KeyError",
    "ValueError",
    "IndexError"
   ]
  }
 },
 "revalidate/lazy/1s1c/1": {
  "edits": 53056,
  "flagged": {
   "INV-1": 15055,
   "INV-10": 80,
   "INV-11": 550,
   "INV-12": 3178,
   "INV-13": 165,
   "INV-14": 585,
   "INV-15": 1640,
   "INV-16": 566,
   "INV-2": 1400,
   "INV-3": 1762,
   "INV-4": 4069,
   "INV-5": 13060,
   "INV-7": 1874,
   "INV-8": 2151,
   "crash": 4230
  },
  "digest": "1de95474caca5f76a5ba2238e859a2453504ba4b96e0fcee35da0f3a90de75a7",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 1)",
    "generation 1 names two different registry states",
    "generation moved 1->2 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 0 publication(s)"
   ],
   "INV-10": [
    "c1 ended denied without waiting for approval and a deny"
   ],
   "INV-11": [
    "dormant git.hub is connected or refreshing",
    "tools/call sent to git.hub before its first refresh ended",
    "git.hub is starting without a connection and its first refresh"
   ],
   "INV-12": [
    "git.hub still connected or refreshing after close",
    "git.hub's refresh ended [] at close",
    "git.hub's refresh ended ['rejected', 'rejected'] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c1 was sent again by list_changed before its refresh ended",
    "c1 was sent again by refresh_requested before its refresh ended"
   ],
   "INV-14": [
    "c1 is marked expired while starting",
    "c1 is marked expired while done",
    "c1 is marked expired while sent"
   ],
   "INV-15": [
    "absent git.hub still has tools installed",
    "git.hub is replacing without its replacement's first refresh in flight"
   ],
   "INV-16": [
    "absent git.hub is connected, refreshing or starting"
   ],
   "INV-2": [
    "c1: sent '' to git.hub, but step 0 bound mcp__git_hub__read to Binding(name='mcp__git_hub__read', source='mcp:git.hub', server='git.hub', remote_name='read', read_only=True, source_generation=1, spec='', resource=False)",
    "c1 runs mcp__git_hub__readz as Binding(name='mcp__git_hub__read', source='mcp:git.hub', server='git.hub', remote_name='read', read_only=True, source_generation=1, spec='', resource=False), but step 0 captured None",
    "c1 runs on step 0, whose snapshot was dropped"
   ],
   "INV-3": [
    "mcp:git.hub mixes bindings of two installs",
    "mcp:git.hub installed ['read'], which no whole listing yields",
    "git.hub left out ['research'] but reported []"
   ],
   "INV-4": [
    "two calls share a call_id",
    "c1 (starting) has 1 terminal results",
    "two results for c1 in one transition"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "ext:admin changed although only [] was replaced",
    "names held twice: ['shell']"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server git.hub",
    "c1: sent [] to cancel it, owed ['notifications/cancelled']"
   ],
   "INV-8": [
    "tools/list sent to disconnected git.hub",
    "refresh of disconnected git.hub still in flight",
    "disconnect of git.hub changed the registry"
   ],
   "crash": [
    "ValueError",
    "KeyError",
    "IndexError"
   ]
  }
 },
 "frozen/lazy/1s2c/3": {
  "edits": 92581,
  "flagged": {
   "INV-1": 20936,
   "INV-10": 178,
   "INV-11": 1038,
   "INV-12": 4133,
   "INV-13": 589,
   "INV-14": 1669,
   "INV-15": 1920,
   "INV-16": 737,
   "INV-2": 2999,
   "INV-3": 2042,
   "INV-4": 9933,
   "INV-5": 15304,
   "INV-7": 4385,
   "INV-8": 2619,
   "INV-9": 82,
   "crash": 5660
  },
  "digest": "2258459a5cff82f321a69881b6c0e53f7cb8098db084bafbb575e1dbec356fff",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 1)",
    "generation 1 names two different registry states",
    "registry changed without a new generation (still 2)"
   ],
   "INV-10": [
    "c1 ended denied without waiting for approval and a deny",
    "c2 ended denied without waiting for approval and a deny"
   ],
   "INV-11": [
    "dormant git.hub is connected or refreshing",
    "git.hub is starting without a connection and its first refresh",
    "tools/call sent to git.hub before its first refresh ended"
   ],
   "INV-12": [
    "git.hub still connected or refreshing after close",
    "['c1'] still pending after close",
    "git.hub's refresh ended [] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c2 waits for a retry it is not counted as having",
    "c1 was sent again by call before its refresh ended"
   ],
   "INV-14": [
    "c1 is marked expired while starting",
    "c2 is marked expired while done",
    "c1 is marked expired while done"
   ],
   "INV-15": [
    "absent git.hub still has tools installed",
    "git.hub is replacing without its replacement's first refresh in flight"
   ],
   "INV-16": [
    "absent git.hub is connected, refreshing or starting"
   ],
   "INV-2": [
    "c1: sent '' to git.hub, but step 0 bound mcp__git_hub__search to Binding(name='mcp__git_hub__search', source='mcp:git.hub', server='git.hub', remote_name='search', read_only=False, source_generation=1, spec='', resource=False)",
    "c1 runs mcp__git_hub__searchz as Binding(name='mcp__git_hub__search', source='mcp:git.hub', server='git.hub', remote_name='search', read_only=False, source_generation=1, spec='', resource=False), but step 0 captured None",
    "c1 runs on step 0, whose snapshot was dropped"
   ],
   "INV-3": [
    "mcp:git.hub mixes bindings of two installs",
    "mcp:git.hub installed ['read'], which no whole listing yields",
    "git.hub left out ['research'] but reported []"
   ],
   "INV-4": [
    "two calls share a call_id",
    "c1 (starting) has 1 terminal results",
    "reused call_id c1 was accepted"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "ext:admin changed although only [] was replaced",
    "names held twice: ['shell']"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server git.hub",
    "c2: sent ['notifications/cancelled'] to cancel it, owed []"
   ],
   "INV-8": [
    "refresh of disconnected git.hub still in flight",
    "tools/list sent to disconnected git.hub",
    "disconnect of git.hub changed the registry"
   ],
   "INV-9": [
    "exclusive calls c1 and c2 in flight together"
   ],
   "crash": [
    "ValueError",
    "KeyError",
    "IndexError"
   ]
  }
 },
 "revalidate/retry/1s2c/5": {
  "edits": 144171,
  "flagged": {
   "INV-1": 30241,
   "INV-10": 364,
   "INV-12": 7032,
   "INV-13": 2115,
   "INV-14": 2320,
   "INV-15": 2692,
   "INV-16": 1060,
   "INV-2": 4334,
   "INV-3": 2843,
   "INV-4": 15498,
   "INV-5": 21710,
   "INV-7": 7133,
   "INV-8": 3700,
   "INV-9": 163,
   "crash": 8914
  },
  "digest": "91ebfd8f283c343044d9f7a372e9605b8b1ec902a69e6c7767ea7138ae351572",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 0)",
    "generation 0 names two different registry states",
    "registry changed without a new generation (still 1)"
   ],
   "INV-10": [
    "c1 ended denied without waiting for approval and a deny",
    "c2 ended denied without waiting for approval and a deny"
   ],
   "INV-12": [
    "git.hub's refresh ended [] at close",
    "git.hub's refresh ended ['rejected', 'rejected'] at close",
    "git.hub's refresh ended ['ok'] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c2 waits for a retry it is not counted as having",
    "c1 was sent again by call before its refresh ended"
   ],
   "INV-14": [
    "c1 is marked expired while done",
    "c2 is marked expired while done",
    "c1 is marked expired while sent"
   ],
   "INV-15": [
    "git.hub is replacing without its replacement's first refresh in flight",
    "absent git.hub still has tools installed"
   ],
   "INV-16": [
    "absent git.hub is connected, refreshing or starting"
   ],
   "INV-2": [
    "step 0 changed after it was sampled",
    "c1: no_such_tool ended ok, but step 0 captured None",
    "c2: no_such_tool ended ok, but step 0 captured None"
   ],
   "INV-3": [
    "mcp:git.hub mixes bindings of two installs",
    "mcp:git.hub installed ['read'], which no whole listing yields",
    "mcp:git.hub installed ['read'], the listing had ['read', 'search']"
   ],
   "INV-4": [
    "two results for c1 in one transition",
    "two calls share a call_id",
    "c1 (approval) has 1 terminal results"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "ext:admin changed although only [] was replaced",
    "names held twice: ['shell']"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server git.hub",
    "c1: sent [] to cancel it, owed ['notifications/cancelled']"
   ],
   "INV-8": [
    "tools/list sent to disconnected git.hub",
    "refresh of disconnected git.hub still in flight",
    "disconnect of git.hub changed the registry"
   ],
   "INV-9": [
    "exclusive calls c1 and c2 in flight together"
   ],
   "crash": [
    "KeyError",
    "ValueError",
    "IndexError"
   ]
  }
 },
 "revalidate/tasks/1s2c/5": {
  "edits": 176399,
  "flagged": {
   "INV-1": 35229,
   "INV-10": 286,
   "INV-12": 8305,
   "INV-13": 557,
   "INV-14": 3267,
   "INV-15": 3351,
   "INV-16": 1355,
   "INV-2": 5623,
   "INV-3": 3353,
   "INV-4": 21695,
   "INV-5": 26929,
   "INV-7": 11207,
   "INV-8": 4190,
   "INV-9": 94,
   "crash": 9324
  },
  "digest": "47c83c27362b5e515aa192db9d47dd90fa2bafc8ffb52c0771932655ef8489de",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 0)",
    "registry changed without a new generation (still 1)",
    "generation 0 names two different registry states"
   ],
   "INV-10": [
    "c1 ended denied without waiting for approval and a deny",
    "c2 ended denied without waiting for approval and a deny"
   ],
   "INV-12": [
    "git.hub's refresh ended [] at close",
    "git.hub's refresh ended ['rejected', 'rejected'] at close",
    "git.hub's refresh ended ['ok'] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c2 waits for a retry it is not counted as having",
    "c1 was sent again by call before its refresh ended"
   ],
   "INV-14": [
    "c1 is marked expired while done",
    "c1 is marked expired while sent",
    "c2 is marked expired while done"
   ],
   "INV-15": [
    "git.hub is replacing without its replacement's first refresh in flight",
    "absent git.hub still has tools installed"
   ],
   "INV-16": [
    "absent git.hub is connected, refreshing or starting"
   ],
   "INV-2": [
    "step 0 changed after it was sampled",
    "c1: no_such_tool ended ok, but step 0 captured None",
    "c1: sent 'search' to git.hub, but step 0 bound mcp__git_hub__search to Binding(name='mcp__git_hub__search', source='mcp:git.hub', server='git.hub', remote_name='search', read_only=False, source_generation=1, spec='', resource=False)"
   ],
   "INV-3": [
    "mcp:git.hub mixes bindings of two installs",
    "mcp:git.hub installed ['read'], which no whole listing yields",
    "mcp:git.hub installed ['read', 'research'], which no whole listing yields"
   ],
   "INV-4": [
    "two results for c1 in one transition",
    "two calls share a call_id",
    "c1 (approval) has 1 terminal results"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "ext:admin changed although only [] was replaced",
    "names held twice: ['shell']"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server git.hub",
    "c1: sent [] to cancel it, owed ['notifications/cancelled']"
   ],
   "INV-8": [
    "tools/list sent to disconnected git.hub",
    "disconnect of git.hub changed the registry",
    "refresh of disconnected git.hub still in flight"
   ],
   "INV-9": [
    "exclusive calls c1 and c2 in flight together"
   ],
   "crash": [
    "KeyError",
    "ValueError",
    "IndexError"
   ]
  }
 },
 "revalidate/progress/1s1c/3": {
  "edits": 9914,
  "flagged": {
   "INV-1": 2723,
   "INV-10": 8,
   "INV-12": 587,
   "INV-13": 20,
   "INV-14": 106,
   "INV-15": 309,
   "INV-16": 93,
   "INV-2": 252,
   "INV-3": 319,
   "INV-4": 851,
   "INV-5": 2625,
   "INV-7": 319,
   "INV-8": 488,
   "crash": 815
  },
  "digest": "1933cae2cbb210d32970160c43429a5f306111bc0a6cf562641587107d80e3c2",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 0)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 0 publication(s)",
    "generation moved 0->1 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 2 publication(s)"
   ],
   "INV-10": [
    "c1 ended denied without waiting for approval and a deny"
   ],
   "INV-12": [
    "git.hub's refresh ended [] at close",
    "git.hub's refresh ended ['rejected', 'rejected'] at close",
    "git.hub's refresh ended ['ok'] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c1 was sent again by list_changed before its refresh ended"
   ],
   "INV-14": [
    "c1 is marked expired while done",
    "c1 is marked expired while sent",
    "c1 was sent again by list_changed before its new listing ended"
   ],
   "INV-15": [
    "git.hub is replacing without its replacement's first refresh in flight",
    "absent git.hub still has tools installed"
   ],
   "INV-16": [
    "absent git.hub is connected, refreshing or starting"
   ],
   "INV-2": [
    "step 0 changed after it was sampled",
    "c1: no_such_tool ended ok, but step 0 captured None",
    "c1 runs on step 0, whose snapshot was dropped"
   ],
   "INV-3": [
    "mcp:git.hub mixes bindings of two installs",
    "mcp:git.hub installed ['read'], the listing had ['read', 'search']",
    "mcp:git.hub installed ['read'], which no whole listing yields"
   ],
   "INV-4": [
    "two results for c1 in one transition",
    "two calls share a call_id",
    "c1 (approval) has 1 terminal results"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "ext:admin changed although only [] was replaced",
    "names held twice: ['shell']"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server git.hub",
    "c1: sent [] to cancel it, owed ['notifications/cancelled']"
   ],
   "INV-8": [
    "tools/list sent to disconnected git.hub",
    "refresh of disconnected git.hub still in flight",
    "disconnect of git.hub changed the registry"
   ],
   "crash": [
    "KeyError",
    "ValueError",
    "IndexError"
   ]
  }
 },
 "revalidate/reconfigure/1s1c/40": {
  "edits": 81261,
  "flagged": {
   "INV-1": 18054,
   "INV-11": 338,
   "INV-12": 4851,
   "INV-13": 130,
   "INV-14": 531,
   "INV-15": 5802,
   "INV-16": 3280,
   "INV-2": 1517,
   "INV-3": 1593,
   "INV-4": 3484,
   "INV-5": 18084,
   "INV-7": 1331,
   "INV-8": 3185,
   "crash": 7629
  },
  "digest": "ef3e3b96ba975d848a0a26775551563cb6d4c12798bea5aafe860d46b6ffeb59",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 0)",
    "registry changed without a new generation (still 1)",
    "generation 0 names two different registry states"
   ],
   "INV-11": [
    "c is starting without a connection and its first refresh",
    "c1 waits for c to start, which is startingz",
    "cancellation sent for c1, which was never sent"
   ],
   "INV-12": [
    "a's refresh ended [] at close",
    "a's refresh ended ['rejected', 'rejected'] at close",
    "a's refresh ended ['ok'] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c1 was sent again by reconfigure before its refresh ended"
   ],
   "INV-14": [
    "c1 is marked expired while done",
    "c1 is marked expired while sent",
    "c1 was sent again by reconfigure before its new listing ended"
   ],
   "INV-15": [
    "a is replacing without its replacement's first refresh in flight",
    "b is replacing without its replacement's first refresh in flight",
    "c is replacing without its replacement's first refresh in flight"
   ],
   "INV-16": [
    "absent d is connected, refreshing or starting",
    "absent b is connected, refreshing or starting",
    "absent c is connected, refreshing or starting"
   ],
   "INV-2": [
    "step 0 changed after it was sampled",
    "c1 runs on step 0, whose snapshot was dropped",
    "c1: no_such_tool ended ok, but step 0 captured None"
   ],
   "INV-3": [
    "mcp:a mixes bindings of two installs",
    "mcp:b mixes bindings of two installs",
    "mcp:b installed [], the listing had ['search']"
   ],
   "INV-4": [
    "second terminal result for c1 (ok) after it had ended",
    "two calls share a call_id",
    "c1 (approval) has 1 terminal results"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "mcp:a changed although only [] was replaced",
    "mcp:b changed although only [] was replaced"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server a",
    "c1: sent [] to cancel it, owed ['notifications/cancelled']"
   ],
   "INV-8": [
    "tools/list sent to disconnected a",
    "tools/list sent to disconnected b",
    "tools/list sent to disconnected c"
   ],
   "crash": [
    "KeyError",
    "ValueError",
    "IndexError"
   ]
  }
 },
 "frozen/reconfigure/1s1c/40": {
  "edits": 83823,
  "flagged": {
   "INV-1": 18959,
   "INV-11": 351,
   "INV-12": 5324,
   "INV-13": 157,
   "INV-14": 562,
   "INV-15": 5873,
   "INV-16": 3307,
   "INV-2": 1643,
   "INV-3": 1628,
   "INV-4": 4047,
   "INV-5": 18614,
   "INV-7": 1369,
   "INV-8": 2948,
   "crash": 7844
  },
  "digest": "a4f9306818b784b76d6a113f6f8c096adf380f8127185854931fc690b01c3752",
  "samples": {
   "INV-1": [
    "registry changed without a new generation (still 0)",
    "registry changed without a new generation (still 1)",
    "generation 0 names two different registry states"
   ],
   "INV-11": [
    "c is starting without a connection and its first refresh",
    "c1 waits for c to start, which is startingz",
    "cancellation sent for c1, which was never sent"
   ],
   "INV-12": [
    "a's refresh ended [] at close",
    "a's refresh ended ['rejected', 'rejected'] at close",
    "a's refresh ended ['ok'] at close"
   ],
   "INV-13": [
    "c1 waits for a retry it is not counted as having",
    "c1 was sent again by reconfigure before its refresh ended"
   ],
   "INV-14": [
    "c1 is marked expired while done",
    "c1 is marked expired while sent",
    "c1 was sent again by reconfigure before its new listing ended"
   ],
   "INV-15": [
    "a is replacing without its replacement's first refresh in flight",
    "b is replacing without its replacement's first refresh in flight",
    "c is replacing without its replacement's first refresh in flight"
   ],
   "INV-16": [
    "absent d is connected, refreshing or starting",
    "absent b is connected, refreshing or starting",
    "absent c is connected, refreshing or starting"
   ],
   "INV-2": [
    "step 0 changed after it was sampled",
    "c1 runs on step 0, whose snapshot was dropped",
    "c1: no_such_tool ended ok, but step 0 captured None"
   ],
   "INV-3": [
    "mcp:a mixes bindings of two installs",
    "mcp:b mixes bindings of two installs",
    "mcp:b installed [], the listing had ['search']"
   ],
   "INV-4": [
    "second terminal result for c1 (ok) after it had ended",
    "two calls share a call_id",
    "c1 (approval) has 1 terminal results"
   ],
   "INV-5": [
    "builtin changed although only [] was replaced",
    "mcp:a changed although only [] was replaced",
    "mcp:b changed although only [] was replaced"
   ],
   "INV-7": [
    "c1: sent ['notifications/cancelled'] to cancel it, owed []",
    "cancellation sent to disconnected server a",
    "c1: sent [] to cancel it, owed ['notifications/cancelled']"
   ],
   "INV-8": [
    "tools/list sent to disconnected a",
    "tools/list sent to disconnected b",
    "tools/list sent to disconnected c"
   ],
   "crash": [
    "KeyError",
    "ValueError",
    "IndexError"
   ]
  }
 },
 "reconfigured_with_progress": {
  "as written": "ok | refines",
  "drop 2": "ok | LIVE-2@3",
  "double 2": "ok | LIVE-2@3",
  "swap 2-3": "ok | refines",
  "2.server=\"x\"": "ok | LIVE-2@3",
  "2.server dropped": "parse@2",
  "2.method=\"tools/call\"": "ok | INV-2@2",
  "2.method dropped": "parse@2",
  "drop 3": "ok | LIVE-2@6",
  "double 3": "ok | LIVE-2@4",
  "swap 3-4": "ok | refines",
  "3.server=\"s\"": "ok | LIVE-2@3",
  "3.server dropped": "parse@3",
  "3.method=\"tools/call\"": "ok | INV-2@3",
  "3.method dropped": "parse@3",
  "drop 4": "INV-3@4 | INV-1@4",
  "double 4": "ok | REFINE@5",
  "swap 4-5": "INV-3@4 | INV-1@4",
  "4.server=\"x\"": "INV-3@5 | INV-3@5",
  "4.server dropped": "INV-3@5 | REFINE@4",
  "4.tools=[]": "INV-3@5 | INV-1@5",
  "4.tools dropped": "ok | INV-1@5",
  "drop 5": "INV-1@7 | INV-3@5",
  "double 5": "INV-1@6 INV-3@6 | INV-3@6",
  "swap 5-6": "INV-3@6 | INV-3@5",
  "5.generation=2": "INV-1@5 | INV-1@5",
  "5.generation dropped": "parse@5",
  "5.source=\"mcp:sz\"": "INV-3@5 INV-5@24 | INV-3@5",
  "5.source dropped": "parse@5",
  "5.names=[]": "ok | INV-3@5",
  "5.names dropped": "parse@5",
  "drop 6": "ok | INV-3@36",
  "double 6": "ok | INV-3@7",
  "swap 6-7": "ok | refines",
  "6.server=\"x\"": "ok | INV-3@6",
  "6.server dropped": "parse@6",
  "6.status=\"ok\"": "ok | INV-3@6",
  "6.status dropped": "parse@6",
  "6.generation=2": "ok | INV-3@6",
  "6.generation dropped": "ok | INV-3@6",
  "drop 7": "INV-3@7 | INV-1@7",
  "double 7": "ok | REFINE@8",
  "swap 7-8": "INV-3@7 | INV-1@7",
  "7.server=\"s\"": "INV-3@8 | REFINE@7",
  "7.server dropped": "INV-3@8 | REFINE@7",
  "7.tools=[]": "INV-3@8 | INV-1@8",
  "7.tools dropped": "ok | INV-1@8",
  "drop 8": "INV-1@16 | INV-3@8",
  "double 8": "INV-1@9 INV-3@9 | INV-3@9",
  "swap 8-9": "INV-3@9 | INV-3@8",
  "8.generation=3": "INV-1@8 | INV-1@8",
  "8.generation dropped": "parse@8",
  "8.source=\"mcp:xz\"": "INV-3@8 | INV-3@8",
  "8.source dropped": "parse@8",
  "8.names=[]": "ok | INV-3@8",
  "8.names dropped": "parse@8",
  "drop 9": "ok | INV-3@36",
  "double 9": "ok | INV-3@10",
  "swap 9-10": "ok | refines",
  "9.server=\"s\"": "ok | INV-3@9",
  "9.server dropped": "parse@9",
  "9.status=\"ok\"": "ok | INV-3@9",
  "9.status dropped": "parse@9",
  "9.generation=3": "ok | INV-3@9",
  "9.generation dropped": "ok | INV-3@9",
  "drop 10": "ok | REFINE@10",
  "double 10": "ok | refines",
  "swap 10-11": "ok | REFINE@10",
  "10.step=1": "ok | refines",
  "10.step dropped": "ok | refines",
  "drop 11": "INV-4@14 | INV-2@11",
  "double 11": "ok | INV-4@16",
  "swap 11-12": "ok | INV-2@11",
  "11.step=1": "ok | REFINE@11",
  "11.step dropped": "ok | refines",
  "11.call_id=\"az\"": "INV-4@15 INV-12@37 LIVE-1@37 | REFINE@13",
  "11.call_id dropped": "parse@11",
  "11.name=\"mcp__x__uz\"": "ok | INV-2@12",
  "11.name dropped": "parse@11",
  "drop 12": "ok | INV-2@12",
  "double 12": "ok | INV-2@13",
  "swap 12-13": "ok | INV-2@12",
  "12.server=\"s\"": "ok | INV-2@12",
  "12.server dropped": "parse@12",
  "12.method=\"tools/list\"": "ok | LIVE-2@12",
  "12.method dropped": "parse@12",
  "12.call_id=\"az\"": "ok | refines",
  "12.call_id dropped": "ok | refines",
  "12.detail=\"uz\"": "ok | INV-2@12",
  "12.detail dropped": "ok | INV-2@12",
  "drop 13": "ok | refines",
  "double 13": "ok | refines",
  "swap 13-14": "ok | REFINE@14",
  "13.call_id=\"az\"": "ok | REFINE@13",
  "13.call_id dropped": "ok | REFINE@13",
  "drop 14": "INV-3@16 INV-12@19 | REFINE@14",
  "double 14": "ok | not refinable",
  "swap 14-15": "ok | REFINE@14",
  "14.added=[]": "ok | LIVE-2@21",
  "14.added dropped": "parse@14",
  "14.removed=[]": "INV-3@17 | REFINE@15",
  "14.removed dropped": "parse@14",
  "14.changed=[]": "INV-12@20 | INV-12@19",
  "14.changed dropped": "parse@14",
  "drop 15": "INV-9@25 INV-12@36 LIVE-1@36 | LIVE-1@36",
  "double 15": "INV-4@16 | INV-4@16",
  "swap 15-16": "ok | refines",
  "15.call_id=\"az\"": "INV-4@15 INV-9@26 INV-12@37 LIVE-1@37 | INV-4@15",
  "15.call_id dropped": "parse@15",
  "15.status=\"timed_out\"": "INV-16@15 | INV-7@15",
  "15.status dropped": "parse@15",
  "15.text=\"call cancelled: a reconfiguration removed server 'x' while the call was in flight; the server was told to cancel itz\"": "ok | INV-7@15",
  "15.text dropped": "ok | INV-7@15",
  "drop 16": "INV-7@15 | INV-7@36",
  "double 16": "INV-7@17 | INV-16@17",
  "swap 16-17": "ok | refines",
  "16.server=\"s\"": "ok | INV-7@16",
  "16.server dropped": "parse@16",
  "16.method=\"tools/list\"": "INV-7@15 INV-16@16 | INV-16@16",
  "16.method dropped": "parse@16",
  "16.call_id=\"az\"": "INV-7@15 | INV-16@16",
  "16.call_id dropped": "INV-7@15 | INV-16@16",
  "drop 17": "INV-1@23 | INV-1@36",
  "double 17": "ok | INV-3@18",
  "swap 17-18": "ok | refines",
  "17.generation=4": "INV-1@17 | INV-1@17",
  "17.generation dropped": "parse@17",
  "17.source=\"mcp:xz\"": "INV-3@17 | INV-3@17",
  "17.source dropped": "parse@17",
  "17.names=[\"z\"]": "INV-3@17 | INV-3@17",
  "17.names dropped": "parse@17",
  "drop 18": "ok | INV-12@36",
  "double 18": "INV-12@19 INV-16@19 | INV-16@19",
  "swap 18-19": "ok | refines",
  "18.server=\"s\"": "INV-12@20 | INV-12@19",
  "18.server dropped": "parse@18",
  "18.method=\"tools/list\"": "INV-16@18 | INV-16@18",
  "18.method dropped": "parse@18",
  "drop 19": "ok | INV-12@36",
  "double 19": "INV-12@21 | INV-12@20",
  "swap 19-20": "ok | refines",
  "19.server=\"x\"": "INV-12@19 INV-16@19 | INV-16@19",
  "19.server dropped": "parse@19",
  "19.method=\"tools/list\"": "ok | LIVE-2@20",
  "19.method dropped": "parse@19",
  "drop 20": "ok | LIVE-2@22",
  "double 20": "ok | LIVE-2@21",
  "swap 20-21": "ok | refines",
  "20.server=\"x\"": "INV-12@20 INV-16@20 | INV-16@20",
  "20.server dropped": "parse@20",
  "20.method=\"tools/call\"": "ok | INV-2@20",
  "20.method dropped": "parse@20",
  "drop 21": "ok | LIVE-2@28",
  "double 21": "ok | LIVE-2@22",
  "swap 21-22": "ok | refines",
  "21.server=\"x\"": "INV-12@21 INV-16@21 | INV-16@21",
  "21.server dropped": "parse@21",
  "21.method=\"tools/call\"": "ok | INV-2@21",
  "21.method dropped": "parse@21",
  "drop 22": "INV-4@27 | INV-2@25",
  "double 22": "ok | INV-4@29",
  "swap 22-23": "ok | refines",
  "22.step=1": "ok | REFINE@22",
  "22.step dropped": "ok | refines",
  "22.call_id=\"bz\"": "INV-4@28 INV-12@37 LIVE-1@37 | REFINE@27",
  "22.call_id dropped": "parse@22",
  "22.name=\"mcp__s__tz\"": "ok | INV-2@26",
  "22.name dropped": "parse@22",
  "drop 23": "INV-3@23 | INV-1@23",
  "double 23": "ok | REFINE@24",
  "swap 23-24": "INV-3@23 | INV-1@23",
  "23.server=\"x\"": "INV-3@24 | REFINE@23",
  "23.server dropped": "INV-3@24 | REFINE@23",
  "23.tools=[\"t\"]": "INV-3@24 | INV-1@24",
  "23.tools dropped": "ok | INV-3@24",
  "drop 24": "INV-1@29 | INV-3@24",
  "double 24": "INV-1@25 INV-3@25 | INV-3@25",
  "swap 24-25": "INV-3@25 | INV-3@24",
  "24.generation=5": "INV-1@24 | INV-1@24",
  "24.generation dropped": "parse@24",
  "24.source=\"mcp:sz\"": "INV-3@24 INV-5@24 | INV-3@24",
  "24.source dropped": "parse@24",
  "24.names=[\"mcp__s__t\"]": "ok | INV-3@24",
  "24.names dropped": "parse@24",
  "drop 25": "ok | INV-3@36",
  "double 25": "ok | INV-3@26",
  "swap 25-26": "ok | refines",
  "25.server=\"x\"": "ok | INV-3@25",
  "25.server dropped": "parse@25",
  "25.status=\"ok\"": "ok | INV-3@25",
  "25.status dropped": "parse@25",
  "25.generation=5": "ok | INV-3@25",
  "25.generation dropped": "ok | INV-3@25",
  "drop 26": "ok | INV-2@26",
  "double 26": "ok | INV-2@27",
  "swap 26-27": "ok | INV-2@26",
  "26.server=\"x\"": "INV-12@26 INV-16@26 | INV-16@26",
  "26.server dropped": "parse@26",
  "26.method=\"tools/list\"": "ok | LIVE-2@26",
  "26.method dropped": "parse@26",
  "26.call_id=\"bz\"": "ok | refines",
  "26.call_id dropped": "ok | refines",
  "26.detail=\"tz\"": "ok | INV-2@26",
  "26.detail dropped": "ok | INV-2@26",
  "drop 27": "ok | REFINE@27",
  "double 27": "ok | REFINE@28",
  "swap 27-28": "ok | REFINE@27",
  "27.call_id=\"bz\"": "ok | REFINE@27",
  "27.call_id dropped": "ok | REFINE@27",
  "drop 28": "INV-12@36 LIVE-1@36 | LIVE-1@36",
  "double 28": "INV-4@29 | INV-4@29",
  "swap 28-29": "ok | refines",
  "28.call_id=\"bz\"": "INV-4@28 INV-12@37 LIVE-1@37 | INV-4@28",
  "28.call_id dropped": "parse@28",
  "28.status=\"error\"": "ok | REFINE@28",
  "28.status dropped": "parse@28",
  "drop 29": "INV-3@29 | INV-1@29",
  "double 29": "ok | REFINE@30",
  "swap 29-30": "INV-3@29 | INV-1@29",
  "29.server=\"x\"": "INV-3@30 | REFINE@29",
  "29.server dropped": "INV-3@30 | REFINE@29",
  "29.tools=[]": "INV-3@30 | INV-1@30",
  "29.tools dropped": "ok | INV-1@30",
  "drop 30": "ok | INV-3@30",
  "double 30": "INV-1@31 INV-3@31 | INV-3@31",
  "swap 30-31": "INV-3@31 | INV-3@30",
  "30.generation=6": "INV-1@30 | INV-1@30",
  "30.generation dropped": "parse@30",
  "30.source=\"mcp:yz\"": "INV-3@30 | INV-3@30",
  "30.source dropped": "parse@30",
  "30.names=[]": "ok | INV-3@30",
  "30.names dropped": "parse@30",
  "drop 31": "ok | INV-3@36",
  "double 31": "ok | INV-3@32",
  "swap 31-32": "ok | refines",
  "31.server=\"x\"": "ok | INV-3@31",
  "31.server dropped": "parse@31",
  "31.status=\"ok\"": "ok | INV-3@31",
  "31.status dropped": "parse@31",
  "31.generation=6": "ok | INV-3@31",
  "31.generation dropped": "ok | INV-3@31",
  "drop 32": "INV-4@32 | INV-4@32",
  "double 32": "ok | INV-4@38",
  "swap 32-33": "INV-4@32 | INV-4@32",
  "32.step=1": "ok | REFINE@32",
  "32.step dropped": "ok | refines",
  "32.call_id=\"cz\"": "INV-4@33 INV-12@37 LIVE-1@37 | INV-4@33",
  "32.call_id dropped": "parse@32",
  "32.name=\"mcp__x__uz\"": "ok | INV-2@33",
  "32.name dropped": "parse@32",
  "drop 33": "INV-12@36 LIVE-1@36 | LIVE-1@36",
  "double 33": "INV-4@34 | INV-4@34",
  "swap 33-34": "INV-12@34 | INV-12@34",
  "33.call_id=\"cz\"": "INV-4@33 INV-12@37 LIVE-1@37 | INV-4@33",
  "33.call_id dropped": "parse@33",
  "33.status=\"ok\"": "ok | INV-2@33",
  "33.status dropped": "parse@33",
  "33.text=\"tool mcp__x__u is no longer available: server 'x' was removed by a reconfiguration; nothing was sent; sample a new step to see the current toolsz\"": "ok | INV-2@33",
  "33.text dropped": "ok | INV-2@33",
  "drop 34": "ok | INV-12@34",
  "double 34": "ok | REFINE@35",
  "swap 34-35": "ok | INV-12@34",
  "drop 35": "ok | INV-12@36",
  "double 35": "INV-12@36 | INV-12@36",
  "swap 35-36": "ok | refines",
  "35.server=\"x\"": "INV-12@35 INV-16@35 | INV-16@35",
  "35.server dropped": "parse@35",
  "35.method=\"tools/list\"": "ok | LIVE-2@35",
  "35.method dropped": "parse@35",
  "drop 36": "ok | INV-12@36",
  "double 36": "INV-12@37 | INV-12@37",
  "36.server=\"x\"": "INV-12@36 INV-16@36 | INV-16@36",
  "36.server dropped": "parse@36",
  "36.method=\"tools/list\"": "ok | LIVE-2@36",
  "36.method dropped": "parse@36",
  "digest": "55e2ab858b2759d5883d624477018d0db2a50ea009cdbb5f5e1f7c1424a6c073"
 },
 "reconfigured_task": {
  "as written": "ok | refines",
  "drop 2": "ok | LIVE-2@3",
  "double 2": "ok | LIVE-2@3",
  "swap 2-3": "ok | refines",
  "2.server=\"x\"": "ok | LIVE-2@3",
  "2.server dropped": "parse@2",
  "2.method=\"tools/call\"": "ok | INV-2@2",
  "2.method dropped": "parse@2",
  "drop 3": "ok | LIVE-2@6",
  "double 3": "ok | LIVE-2@4",
  "swap 3-4": "ok | refines",
  "3.server=\"s\"": "ok | LIVE-2@3",
  "3.server dropped": "parse@3",
  "3.method=\"tools/call\"": "ok | INV-2@3",
  "3.method dropped": "parse@3",
  "drop 4": "INV-3@4 | INV-1@4",
  "double 4": "ok | REFINE@5",
  "swap 4-5": "INV-3@4 | INV-1@4",
  "4.server=\"x\"": "INV-3@5 | INV-3@5",
  "4.server dropped": "INV-3@5 | REFINE@4",
  "4.tools=[]": "INV-3@5 | INV-1@5",
  "4.tools dropped": "ok | INV-1@5",
  "drop 5": "INV-1@7 | INV-3@5",
  "double 5": "INV-1@6 INV-3@6 | INV-3@6",
  "swap 5-6": "INV-3@6 | INV-3@5",
  "5.generation=2": "INV-1@5 | INV-1@5",
  "5.generation dropped": "parse@5",
  "5.source=\"mcp:sz\"": "INV-3@5 INV-5@24 | INV-3@5",
  "5.source dropped": "parse@5",
  "5.names=[]": "ok | INV-3@5",
  "5.names dropped": "parse@5",
  "drop 6": "ok | INV-3@36",
  "double 6": "ok | INV-3@7",
  "swap 6-7": "ok | refines",
  "6.server=\"x\"": "ok | INV-3@6",
  "6.server dropped": "parse@6",
  "6.status=\"ok\"": "ok | INV-3@6",
  "6.status dropped": "parse@6",
  "6.generation=2": "ok | INV-3@6",
  "6.generation dropped": "ok | INV-3@6",
  "drop 7": "INV-3@7 | INV-1@7",
  "double 7": "ok | REFINE@8",
  "swap 7-8": "INV-3@7 | INV-1@7",
  "7.server=\"s\"": "INV-3@8 | REFINE@7",
  "7.server dropped": "INV-3@8 | REFINE@7",
  "7.tools=[]": "INV-3@8 | INV-1@8",
  "7.tools dropped": "ok | INV-1@8",
  "drop 8": "INV-1@16 | INV-3@8",
  "double 8": "INV-1@9 INV-3@9 | INV-3@9",
  "swap 8-9": "INV-3@9 | INV-3@8",
  "8.generation=3": "INV-1@8 | INV-1@8",
  "8.generation dropped": "parse@8",
  "8.source=\"mcp:xz\"": "INV-3@8 | INV-3@8",
  "8.source dropped": "parse@8",
  "8.names=[]": "ok | INV-3@8",
  "8.names dropped": "parse@8",
  "drop 9": "ok | INV-3@36",
  "double 9": "ok | INV-3@10",
  "swap 9-10": "ok | refines",
  "9.server=\"s\"": "ok | INV-3@9",
  "9.server dropped": "parse@9",
  "9.status=\"ok\"": "ok | INV-3@9",
  "9.status dropped": "parse@9",
  "9.generation=3": "ok | INV-3@9",
  "9.generation dropped": "ok | INV-3@9",
  "drop 10": "ok | REFINE@10",
  "double 10": "ok | refines",
  "swap 10-11": "ok | REFINE@10",
  "10.step=1": "ok | refines",
  "10.step dropped": "ok | refines",
  "drop 11": "INV-4@14 | INV-2@11",
  "double 11": "ok | INV-4@16",
  "swap 11-12": "ok | INV-2@11",
  "11.step=1": "ok | REFINE@11",
  "11.step dropped": "ok | refines",
  "11.call_id=\"az\"": "INV-4@15 INV-12@37 LIVE-1@37 | REFINE@13",
  "11.call_id dropped": "parse@11",
  "11.name=\"mcp__x__uz\"": "ok | INV-2@12",
  "11.name dropped": "parse@11",
  "drop 12": "ok | INV-2@12",
  "double 12": "ok | INV-2@13",
  "swap 12-13": "ok | INV-2@12",
  "12.server=\"s\"": "ok | INV-2@12",
  "12.server dropped": "parse@12",
  "12.method=\"tools/list\"": "ok | LIVE-2@12",
  "12.method dropped": "parse@12",
  "12.call_id=\"az\"": "ok | refines",
  "12.call_id dropped": "ok | refines",
  "12.detail=\"uz\"": "ok | INV-2@12",
  "12.detail dropped": "ok | INV-2@12",
  "drop 13": "ok | INV-16@15",
  "double 13": "ok | REFINE@14",
  "swap 13-14": "ok | REFINE@14",
  "13.call_id=\"az\"": "ok | REFINE@13",
  "13.call_id dropped": "ok | REFINE@13",
  "13.task_id=\"t1z\"": "ok | refines",
  "13.task_id dropped": "ok | refines",
  "drop 14": "INV-3@16 INV-12@19 | REFINE@14",
  "double 14": "ok | not refinable",
  "swap 14-15": "ok | REFINE@14",
  "14.added=[]": "ok | LIVE-2@21",
  "14.added dropped": "parse@14",
  "14.removed=[]": "INV-3@17 | REFINE@15",
  "14.removed dropped": "parse@14",
  "14.changed=[]": "INV-12@20 | INV-12@19",
  "14.changed dropped": "parse@14",
  "drop 15": "INV-9@25 INV-12@36 LIVE-1@36 | LIVE-1@36",
  "double 15": "INV-4@16 | INV-4@16",
  "swap 15-16": "ok | refines",
  "15.call_id=\"az\"": "INV-4@15 INV-9@26 INV-12@37 LIVE-1@37 | INV-4@15",
  "15.call_id dropped": "parse@15",
  "15.status=\"timed_out\"": "INV-16@15 | INV-7@15",
  "15.status dropped": "parse@15",
  "15.text=\"call cancelled: a reconfiguration removed server 'x' while the call was in flight; the server was told to cancel itz\"": "ok | INV-7@15",
  "15.text dropped": "ok | INV-7@15",
  "drop 16": "INV-7@15 | INV-7@36",
  "double 16": "INV-7@17 | INV-16@17",
  "swap 16-17": "ok | refines",
  "16.server=\"s\"": "ok | INV-7@16",
  "16.server dropped": "parse@16",
  "16.method=\"tools/list\"": "INV-7@15 INV-16@16 | INV-16@16",
  "16.method dropped": "parse@16",
  "16.call_id=\"az\"": "INV-7@15 | INV-16@16",
  "16.call_id dropped": "INV-7@15 | INV-16@16",
  "drop 17": "INV-1@23 | INV-1@36",
  "double 17": "ok | INV-3@18",
  "swap 17-18": "ok | refines",
  "17.generation=4": "INV-1@17 | INV-1@17",
  "17.generation dropped": "parse@17",
  "17.source=\"mcp:xz\"": "INV-3@17 | INV-3@17",
  "17.source dropped": "parse@17",
  "17.names=[\"z\"]": "INV-3@17 | INV-3@17",
  "17.names dropped": "parse@17",
  "drop 18": "ok | INV-12@36",
  "double 18": "INV-12@19 INV-16@19 | INV-16@19",
  "swap 18-19": "ok | refines",
  "18.server=\"s\"": "INV-12@20 | INV-12@19",
  "18.server dropped": "parse@18",
  "18.method=\"tools/list\"": "INV-16@18 | INV-16@18",
  "18.method dropped": "parse@18",
  "drop 19": "ok | INV-12@36",
  "double 19": "INV-12@21 | INV-12@20",
  "swap 19-20": "ok | refines",
  "19.server=\"x\"": "INV-12@19 INV-16@19 | INV-16@19",
  "19.server dropped": "parse@19",
  "19.method=\"tools/list\"": "ok | LIVE-2@20",
  "19.method dropped": "parse@19",
  "drop 20": "ok | LIVE-2@22",
  "double 20": "ok | LIVE-2@21",
  "swap 20-21": "ok | refines",
  "20.server=\"x\"": "INV-12@20 INV-16@20 | INV-16@20",
  "20.server dropped": "parse@20",
  "20.method=\"tools/call\"": "ok | INV-2@20",
  "20.method dropped": "parse@20",
  "drop 21": "ok | LIVE-2@28",
  "double 21": "ok | LIVE-2@22",
  "swap 21-22": "ok | refines",
  "21.server=\"x\"": "INV-12@21 INV-16@21 | INV-16@21",
  "21.server dropped": "parse@21",
  "21.method=\"tools/call\"": "ok | INV-2@21",
  "21.method dropped": "parse@21",
  "drop 22": "INV-4@27 | INV-2@25",
  "double 22": "ok | INV-4@29",
  "swap 22-23": "ok | refines",
  "22.step=1": "ok | REFINE@22",
  "22.step dropped": "ok | refines",
  "22.call_id=\"bz\"": "INV-4@28 INV-12@37 LIVE-1@37 | REFINE@27",
  "22.call_id dropped": "parse@22",
  "22.name=\"mcp__s__tz\"": "ok | INV-2@26",
  "22.name dropped": "parse@22",
  "drop 23": "INV-3@23 | INV-1@23",
  "double 23": "ok | REFINE@24",
  "swap 23-24": "INV-3@23 | INV-1@23",
  "23.server=\"x\"": "INV-3@24 | REFINE@23",
  "23.server dropped": "INV-3@24 | REFINE@23",
  "23.tools=[\"t\"]": "INV-3@24 | INV-1@24",
  "23.tools dropped": "ok | INV-3@24",
  "drop 24": "INV-1@29 | INV-3@24",
  "double 24": "INV-1@25 INV-3@25 | INV-3@25",
  "swap 24-25": "INV-3@25 | INV-3@24",
  "24.generation=5": "INV-1@24 | INV-1@24",
  "24.generation dropped": "parse@24",
  "24.source=\"mcp:sz\"": "INV-3@24 INV-5@24 | INV-3@24",
  "24.source dropped": "parse@24",
  "24.names=[\"mcp__s__t\"]": "ok | INV-3@24",
  "24.names dropped": "parse@24",
  "drop 25": "ok | INV-3@36",
  "double 25": "ok | INV-3@26",
  "swap 25-26": "ok | refines",
  "25.server=\"x\"": "ok | INV-3@25",
  "25.server dropped": "parse@25",
  "25.status=\"ok\"": "ok | INV-3@25",
  "25.status dropped": "parse@25",
  "25.generation=5": "ok | INV-3@25",
  "25.generation dropped": "ok | INV-3@25",
  "drop 26": "ok | INV-2@26",
  "double 26": "ok | INV-2@27",
  "swap 26-27": "ok | INV-2@26",
  "26.server=\"x\"": "INV-12@26 INV-16@26 | INV-16@26",
  "26.server dropped": "parse@26",
  "26.method=\"tools/list\"": "ok | LIVE-2@26",
  "26.method dropped": "parse@26",
  "26.call_id=\"bz\"": "ok | refines",
  "26.call_id dropped": "ok | refines",
  "26.detail=\"tz\"": "ok | INV-2@26",
  "26.detail dropped": "ok | INV-2@26",
  "drop 27": "ok | REFINE@27",
  "double 27": "ok | REFINE@28",
  "swap 27-28": "ok | REFINE@27",
  "27.call_id=\"bz\"": "ok | REFINE@27",
  "27.call_id dropped": "ok | REFINE@27",
  "drop 28": "INV-12@36 LIVE-1@36 | LIVE-1@36",
  "double 28": "INV-4@29 | INV-4@29",
  "swap 28-29": "ok | refines",
  "28.call_id=\"bz\"": "INV-4@28 INV-12@37 LIVE-1@37 | INV-4@28",
  "28.call_id dropped": "parse@28",
  "28.status=\"error\"": "ok | REFINE@28",
  "28.status dropped": "parse@28",
  "drop 29": "INV-3@29 | INV-1@29",
  "double 29": "ok | REFINE@30",
  "swap 29-30": "INV-3@29 | INV-1@29",
  "29.server=\"x\"": "INV-3@30 | REFINE@29",
  "29.server dropped": "INV-3@30 | REFINE@29",
  "29.tools=[]": "INV-3@30 | INV-1@30",
  "29.tools dropped": "ok | INV-1@30",
  "drop 30": "ok | INV-3@30",
  "double 30": "INV-1@31 INV-3@31 | INV-3@31",
  "swap 30-31": "INV-3@31 | INV-3@30",
  "30.generation=6": "INV-1@30 | INV-1@30",
  "30.generation dropped": "parse@30",
  "30.source=\"mcp:yz\"": "INV-3@30 | INV-3@30",
  "30.source dropped": "parse@30",
  "30.names=[]": "ok | INV-3@30",
  "30.names dropped": "parse@30",
  "drop 31": "ok | INV-3@36",
  "double 31": "ok | INV-3@32",
  "swap 31-32": "ok | refines",
  "31.server=\"x\"": "ok | INV-3@31",
  "31.server dropped": "parse@31",
  "31.status=\"ok\"": "ok | INV-3@31",
  "31.status dropped": "parse@31",
  "31.generation=6": "ok | INV-3@31",
  "31.generation dropped": "ok | INV-3@31",
  "drop 32": "INV-4@32 | INV-4@32",
  "double 32": "ok | INV-4@38",
  "swap 32-33": "INV-4@32 | INV-4@32",
  "32.step=1": "ok | REFINE@32",
  "32.step dropped": "ok | refines",
  "32.call_id=\"cz\"": "INV-4@33 INV-12@37 LIVE-1@37 | INV-4@33",
  "32.call_id dropped": "parse@32",
  "32.name=\"mcp__x__uz\"": "ok | INV-2@33",
  "32.name dropped": "parse@32",
  "drop 33": "INV-12@36 LIVE-1@36 | LIVE-1@36",
  "double 33": "INV-4@34 | INV-4@34",
  "swap 33-34": "INV-12@34 | INV-12@34",
  "33.call_id=\"cz\"": "INV-4@33 INV-12@37 LIVE-1@37 | INV-4@33",
  "33.call_id dropped": "parse@33",
  "33.status=\"ok\"": "ok | INV-2@33",
  "33.status dropped": "parse@33",
  "33.text=\"tool mcp__x__u is no longer available: server 'x' was removed by a reconfiguration; nothing was sent; sample a new step to see the current toolsz\"": "ok | INV-2@33",
  "33.text dropped": "ok | INV-2@33",
  "drop 34": "ok | INV-12@34",
  "double 34": "ok | REFINE@35",
  "swap 34-35": "ok | INV-12@34",
  "drop 35": "ok | INV-12@36",
  "double 35": "INV-12@36 | INV-12@36",
  "swap 35-36": "ok | refines",
  "35.server=\"x\"": "INV-12@35 INV-16@35 | INV-16@35",
  "35.server dropped": "parse@35",
  "35.method=\"tools/list\"": "ok | LIVE-2@35",
  "35.method dropped": "parse@35",
  "drop 36": "ok | INV-12@36",
  "double 36": "INV-12@37 | INV-12@37",
  "36.server=\"x\"": "INV-12@36 INV-16@36 | INV-16@36",
  "36.server dropped": "parse@36",
  "36.method=\"tools/list\"": "ok | LIVE-2@36",
  "36.method dropped": "parse@36",
  "digest": "b7ff82a775a5d882c85230b16fe07bc9b803827da74f8d43909e749b55666289"
 }
}
"""  # noqa: E501 - generated, one row a line
)
# END GENERATED


@pytest.mark.parametrize("cut", CUTS, ids=cut_name)
def test_every_check_gives_its_pinned_verdicts_on_edited_transitions(
    cut: tuple[str, str, int, int, int],
) -> None:
    assert verdicts(cut) == TABLES[cut_name(cut)]


@pytest.mark.parametrize("name", TRACES)
def test_the_trace_monitors_give_their_pinned_verdicts_on_edited_traces(name: str) -> None:
    assert trace_verdicts(TRACES[name]) == TABLES[name]


def test_the_added_traces_conform() -> None:
    assert {name: verdict(records)[0] for name, records in TRACES.items()} == dict.fromkeys(
        TRACES, "ok | refines"
    )


def test_a_read_in_flight_on_a_removed_server_must_end_cancelled() -> None:
    """INV-16: a read (``resources/read``, SPEC §11.20) is a call the reconfiguration
    ends as it ends a ``tools/call`` (the model's ``end_server_calls``)."""
    sent = {"method": "tools/call", "call_id": "a"}
    read = {"method": "resources/read", "detail": "file:///u"}
    records = [{**r, **read} if sent.items() <= r.items() else r for r in RECONFIGURED]
    at = next(i for i, r in enumerate(records) if r["kind"] == "result" and r["call_id"] == "a")

    def inv_16(status: str) -> list[str]:
        ended = [*records[:at], {**records[at], "status": status}, *records[at + 1 :]]
        found = check_trace(parse_trace([json.dumps(r) for r in ended]))
        return [f"{v.invariant}@{v.line}" for v in found if v.invariant == "INV-16"]

    assert inv_16("cancelled") == []
    assert inv_16("ok") == [f"INV-16@{at + 1}"]


def test_a_result_edit_is_judged_per_output() -> None:
    """The edits reach an ended call's status (a sanity check of ``edited``)."""
    before, _, t = next(
        (b, e, t)
        for b, e, t in transitions(CUTS[0])
        if any(isinstance(o, Result) for o in t.outputs)
    )
    labels = [label for label, _, _ in edited(before, t)]
    assert any(label.endswith(".status") for label in labels)
    assert isinstance(before.calls, tuple)
    assert all(isinstance(c, CallRecord) for c in before.calls)
    assert all(isinstance(s, ServerState) for s in before.servers)
