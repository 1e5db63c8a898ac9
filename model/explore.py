"""Exhaustive breadth-first exploration of the model on a bound (SPEC §10).

Every reachable state is visited once (states are canonical, hashable values); every
state and transition invariant of :mod:`invariants` is checked on each. Because the
search is breadth-first, the first violation found of each invariant comes with a
shortest event trace.

Liveness is checked on the graph afterwards, over the *drain* events: what happens
with no new input from the host or the environment (pages and answers arrive, calls
fail or time out, lost servers come back, the host listens again to a server that
ended its stream, the approver answers):

* LIVE-1: every maximal drain ends with every accepted call terminal;
* LIVE-2: every maximal drain ends with every ``list_changed`` answered by a refresh
  that started after it;
* LIVE-3: every maximal drain ends with every connected server listening and no change
  unread (one that nobody heard while the stream was down);
* all: no drain runs forever (the drain subgraph is acyclic).

A maximal drain ends in a state with no drain event enabled; such states are
reachable, so checking them all, plus acyclicity, covers every drain.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TypeVar

import attrs

from . import texts
from .invariants import STEP_CHECK_IDS, check_state, check_transition
from .rules import STANDARD, Rules
from .values import (
    Approve,
    Bound,
    Call,
    CallFailed,
    CallProgress,
    CallRecord,
    CallResponded,
    Deny,
    Event,
    ListDone,
    ListFailed,
    ListPage,
    Output,
    Policy,
    Published,
    Reconnect,
    RefreshOutcome,
    Refused,
    Registry,
    Relisten,
    Result,
    Sample,
    Sent,
    ServerState,
    State,
    TaskCreated,
    TaskStatus,
    Timeout,
    Transition,
)

__all__ = [
    "DRAIN_EVENTS",
    "LIVENESS",
    "Report",
    "Violation",
    "collector_paused",
    "explore",
    "format_event",
    "liveness_failures",
    "reachable",
    "replay",
]

_T = TypeVar("_T")

DRAIN_EVENTS: tuple[type, ...] = (
    Approve,  # the approver answers every request (allowing or denying), SPEC §3.4
    Deny,
    ListPage,
    ListDone,
    ListFailed,
    CallResponded,
    CallFailed,
    Timeout,
    CallProgress,  # a server may keep reporting progress; the cap still ends the drain
    TaskCreated,  # a task is polled to its end (SPEC §8.12)
    TaskStatus,
    Reconnect,
    Relisten,  # the host listens again, with backoff, until the server acknowledges it
)


_DRAIN_TYPES = frozenset(DRAIN_EVENTS)
"""The drain event types, for a lookup by exact type (events are final classes)."""


@attrs.frozen
class Violation:
    invariant: str
    detail: str
    trace: tuple[Event, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "invariant": self.invariant,
            "detail": self.detail,
            "trace": [format_event(e) for e in self.trace],
        }


@attrs.frozen
class Report:
    policy: str
    rules: str
    states: int
    transitions: int
    depth: int
    seconds: float
    complete: bool
    """False when ``max_depth`` cut the search short."""
    violations: tuple[Violation, ...]
    effects: tuple[tuple[str, str, int], ...]
    """``(event kind, effect, transitions)``: what each event kind was seen to do."""
    cpu_seconds: float = attrs.field(default=0.0, eq=False)
    """The CPU time of this process the search took (``seconds`` is wall clock). Not
    compared: two searches that found the same are equal however long each took."""


#: Fields added to an event after replay files used it: shown only when not at their
#: default, so that the traces written before them still replay.
_SHOWN_WHEN_SET: dict[type, tuple[str, ...]] = {Timeout: ("cap",)}


def format_event(event: Event) -> str:
    """``kind(arg=value, ...)``: the form traces and replay files use."""
    fields = attrs.asdict(event)
    for name in _SHOWN_WHEN_SET.get(type(event), ()):
        if not fields[name]:
            del fields[name]
    args = ", ".join(f"{k}={v!r}" for k, v in fields.items())
    return f"{event.kind}({args})"


def effect_of(outputs: Iterable[Output]) -> str:
    """A short, canonical description of what a transition produced."""
    parts: list[str] = []
    for out in outputs:
        if isinstance(out, RefreshOutcome):
            parts.append(f"refresh {out.status}" + (f" ({out.kind})" if out.kind else ""))
        elif isinstance(out, Result):
            parts.append(f"result {out.status}")
        elif isinstance(out, Sent):
            parts.append(f"send {out.method}")
        elif isinstance(out, Published):
            parts.append("publish")
        elif isinstance(out, Refused):
            closed = out.text == texts.HOST_CLOSED
            parts.append("refuse call after close" if closed else "refuse duplicate call_id")
        else:
            parts.append("drop late answer")
    return ", ".join(sorted(set(parts))) or "state only"


def explore(
    bound: Bound,
    rules: Rules = STANDARD,
    *,
    max_depth: int | None = None,
    stop_on: str | None = None,
    effects: bool = False,
    every_transition: bool = False,
    shared: Shared | None = None,
) -> Report:
    """Visit every state reachable on ``bound``; stop early once ``stop_on`` is violated.

    With ``effects``, also tally what each event kind was seen to do (the transition
    table of SPEC §3.3). With ``every_transition``, every transition invariant is checked
    on every transition, its ``triggers`` ignored (slower; the same verdict). With
    ``shared``, a new :class:`Shared` records what did not depend on the binding policy,
    and one that recorded an exploration of the same part and rules under the other
    policy gives it to this one (SPEC §10.8); the report is the same either way."""
    started = time.perf_counter()
    cpu_started = time.process_time()
    with collector_paused():
        report = _explore(
            bound=bound,
            rules=rules,
            max_depth=max_depth,
            stop_on=stop_on,
            want_effects=effects,
            every=every_transition,
            started=started,
            shared=shared,
        )
        return attrs.evolve(report, cpu_seconds=time.process_time() - cpu_started)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off in the block, and on after it if it was before.

    The state graph is acyclic, garbage-free data that reference counting frees: a GC pass
    over it finds nothing and only costs time. A caller that keeps a graph after
    :func:`explore` (a :class:`Shared`) pauses it until the graph is freed: otherwise the
    first passes after the search walk every object in it (about 5% of a part's CPU)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _explore(  # noqa: PLR0915 - one BFS loop reads better whole than split into helpers
    *,
    bound: Bound,
    rules: Rules,
    max_depth: int | None,
    stop_on: str | None,
    want_effects: bool,
    every: bool,
    started: float,
    shared: Shared | None,
) -> Report:
    recording = shared is not None and shared.rows is None
    given = None if shared is None or recording else shared
    # The second policy names states by the first's parts (its ``ids``' keys).
    canonical = _Interner() if given is None or given.interner is None else given.interner
    given_rows: list[_Row | None] = [] if given is None or given.rows is None else given.rows
    given_checks: list[list[tuple[str, str]] | None] = [] if given is None else given.checks
    given_events: list[tuple[Event, ...] | None] = [] if given is None else given.events
    given_keys: list[_Key] = [] if given is None else given.keys
    given_states: list[State] = [] if given is None else given.states
    # One tuple for equal outputs: what a row or a kept transition holds is mostly these.
    kept: dict[tuple[Output, ...], tuple[Output, ...]] = {}
    # SPEC §10.10: what a transition gave (its steps aside) and what its checks but
    # INV-2's found, for the states equal but in their steps: one table for each such
    # class, found by the ids of its parts (those of a stored state are the interner's,
    # alive while it is, so an id names one value).
    kept_transitions: dict[tuple[int, int, int, bool], dict[object, _Kept]] | None = (
        {} if rules.steps_unread else None
    )
    if recording:
        bound = _watched(bound)
    rows: list[_Row | None] = []
    kept_events: list[tuple[Event, ...] | None] = []
    checks: list[list[tuple[str, str]] | None] = []
    key = canonical.key(rules.initial(bound).state)
    first = canonical.state(key, bound)
    ids: dict[_Key, int] = {key: 0}
    states: list[State] = [first]
    parent: list[int] = [-1]
    via: list[Event | None] = [None]
    depth: list[int] = [0]
    drain: list[list[int]] = []
    violations: dict[str, Violation] = {}
    effects: dict[tuple[str, str], int] = {}
    transitions = 0

    def trace_to(index: int) -> tuple[Event, ...]:
        events: list[Event] = []
        while index > 0:
            event = via[index]
            assert event is not None
            events.append(event)
            index = parent[index]
        return tuple(reversed(events))

    def record(found: list[tuple[str, str]], trace: tuple[Event, ...]) -> None:
        for inv, detail in found:
            if inv not in violations:
                violations[inv] = Violation(inv, detail, trace)

    record(check_state(first), ())
    checks.append(None)
    queue: deque[int] = deque([0])
    complete = True
    reads = _POLICY_READS
    drain_types = _DRAIN_TYPES
    while queue:
        if stop_on is not None and stop_on in violations:
            complete = False
            break
        index = queue.popleft()
        state = states[index]
        successors: list[int] = []
        drain.extend([] for _ in range(index + 1 - len(drain)))
        if max_depth is not None and depth[index] >= max_depth:
            complete = False
            drain[index] = [-1]  # unexplored: no liveness verdict for this state
            continue
        known: _Row | None = None
        listed: tuple[Event, ...] | list[Event] | None = None
        if given is not None:
            other = given.ids.get(canonical.key(state))
            if other is not None:
                known = given_rows[other]
                listed = given_events[other]
        read = reads[0]
        # The first's events, in its order, when known: its ``enabled`` read no policy.
        events = rules.enabled(state) if listed is None else listed
        assert known is None or len(known) == len(events)
        row: list[_Done | None] | None = None
        same_but_steps: dict[object, _Kept] | None = None
        if kept_transitions is not None and known is None and not state.closed:
            base = (id(state.servers), id(state.registry), id(state.calls), state.reconfigured)
            same_but_steps = kept_transitions.get(base)
            if same_but_steps is None:
                same_but_steps = kept_transitions[base] = {}
        if recording and reads[0] == read:
            row = []
        for k, event in enumerate(events):
            done = None if known is None else known[k]
            if done is None:
                if same_but_steps is None or type(event) is Sample:
                    read = reads[0]
                    t = rules.apply(state, event)
                    failed = check_transition(state, event, t, every=every)
                    pure = reads[0] == read
                    gave, outputs = t.state, t.outputs
                    if outputs and row is not None:
                        outputs = kept.setdefault(outputs, outputs)
                    parts = canonical.parts(gave, state)
                else:
                    # A call reads the step it names too.
                    which = (event, state.steps[event.step]) if type(event) is Call else event
                    entry = same_but_steps.get(which)
                    if entry is None:
                        read = reads[0]
                        t = rules.apply(state, event)
                        # All the checks at once; those that read the steps are not kept.
                        failed = stepwise = _NONE  # one empty list for the many kept
                        found = check_transition(state, event, t, every=every)
                        if found:
                            failed = [f for f in found if f[0] not in STEP_CHECK_IDS] or _NONE
                            stepwise = [f for f in found if f[0] in STEP_CHECK_IDS]
                        gave, outputs = t.state, t.outputs
                        if outputs:
                            outputs = kept.setdefault(outputs, outputs)
                        parts = canonical.parts(gave, state)
                        entry = same_but_steps[which] = (
                            gave.servers,
                            gave.registry,
                            gave.calls,
                            gave.closed,
                            gave.reconfigured,
                            outputs,
                            failed,
                            reads[0] == read,
                            (parts[0], parts[1], parts[3]),
                        )
                    else:
                        servers, registry, calls, closed, again, outputs, failed = entry[:7]
                        interned = entry[8]
                        steps = state.steps
                        gave = State(state.bound, servers, registry, steps, calls, closed, again)
                        t = rules.collected(state, Transition(gave, outputs))
                        # Its parts: kept as the rules made them (``collected`` compares
                        # identities), the interner's equal ones beside them.
                        gave = t.state
                        collected = gave.steps
                        if collected is not steps:
                            collected = canonical.steps(collected)
                        parts = (interned[0], interned[1], collected, interned[2])
                        stepwise = check_transition(state, event, t, every=every, steps=True)
                    pure = entry[7]
                    if stepwise:
                        failed = failed + stepwise
                key = (
                    id(parts[0]),
                    id(parts[1]),
                    id(parts[2]),
                    id(parts[3]),
                    gave.closed,
                    gave.reconfigured,
                )
            else:
                key, outputs, failed = given_keys[done[0]], done[1], done[2]
            transitions += 1
            if want_effects:
                kind = (event.kind, effect_of(outputs))
                effects[kind] = effects.get(kind, 0) + 1
            if failed:
                record(failed, (*trace_to(index), event))
            target = ids.get(key)
            if target is None:
                target = len(states)
                if done is None:
                    new = State(bound, *parts, gave.closed, gave.reconfigured)
                else:
                    new = _on(bound, given_states[done[0]])
                ids[key] = target
                states.append(new)
                parent.append(index)
                via.append(event)
                depth.append(depth[index] + 1)
                same = None
                if given is not None:
                    other = given.ids.get(key) if done is None else done[0]
                    same = None if other is None else given_checks[other]
                read = reads[0]
                found = check_state(new) if same is None else same
                if recording:
                    checks.append(found if reads[0] == read else None)
                if found:
                    record(found, trace_to(target))
                queue.append(target)
            if type(event) in drain_types:
                successors.append(target)
            if row is not None:
                row.append((target, outputs, failed or _NONE) if pure else None)
        drain[index] = successors
        if recording:
            rows.extend(None for _ in range(index + 1 - len(rows)))
            rows[index] = None if row is None else tuple(row)
            kept_events.extend(None for _ in range(index + 1 - len(kept_events)))
            kept_events[index] = None if row is None else tuple(events)
    if not (stop_on is not None and stop_on in violations):
        drain.extend([-1] for _ in range(len(states) - len(drain)))
        for inv, detail, index in liveness_failures(states, drain):
            if inv not in violations:
                violations[inv] = Violation(inv, detail, trace_to(index))
    if recording:
        assert shared is not None
        rows.extend(None for _ in range(len(states) - len(rows)))
        kept_events.extend(None for _ in range(len(states) - len(kept_events)))
        shared.ids, shared.states, shared.rows, shared.checks = ids, states, rows, checks
        shared.keys = list(ids)  # a state's index is its order of insertion
        shared.events = kept_events
        shared.interner = canonical
    return Report(
        policy=bound.policy,
        rules=rules.name,
        states=len(states),
        transitions=transitions,
        depth=max(depth),
        seconds=time.perf_counter() - started,
        complete=complete,
        violations=tuple(sorted(violations.values(), key=lambda v: _id_key(v.invariant))),
        effects=tuple(sorted((k, e, n) for (k, e), n in effects.items())),
    )


_Done = tuple[int, tuple[Output, ...], list[tuple[str, str]]]
"""A transition of a state: the index of its target, its outputs, the checks that failed."""
_Row = tuple[_Done | None, ...]
"""A state's transitions, in ``enabled`` order (None: not shared); None for a state whose
``enabled`` read the policy."""
_NONE: list[tuple[str, str]] = []
_Kept = tuple[
    tuple[ServerState, ...],
    Registry,
    tuple[CallRecord, ...],
    bool,
    bool,
    tuple[Output, ...],
    list[tuple[str, str]],
    bool,
    tuple[tuple[ServerState, ...], Registry, tuple[CallRecord, ...]],
]
"""A transition kept for the states equal but in their steps (SPEC §10.10): its state's
servers, registry, calls, ``closed`` and ``reconfigured``, its outputs, the checks but
INV-2's that failed, whether it read no policy, the interner's servers, registry and calls
equal to those kept (:class:`_Interner`: their ids are the state's key but in the steps)."""


class Shared:
    """What the exploration of one part under one policy leaves for the same part and
    rules under the other (SPEC §10.8): for each state whose events did not depend on the
    binding policy, each transition that did not read it; its state checks if they did
    not."""

    def __init__(self) -> None:
        self.ids: dict[_Key, int] = {}
        """Each state's index, by its key in :attr:`interner` (:meth:`_Interner.key`)."""
        self.keys: list[_Key] = []
        """Each state's key, by its index."""
        self.interner: _Interner | None = None
        self.states: list[State] = []
        self.rows: list[_Row | None] | None = None
        self.checks: list[list[tuple[str, str]] | None] = []
        self.events: list[tuple[Event, ...] | None] = []
        """Each state's ``enabled``, kept with its row (None where the row is)."""


_POLICY_READS = [0]  # pragma: no mutate - only differences of the count are read
"""How many times a watched bound's ``policy`` was read (:func:`_watched`)."""
_POLICY = Bound.__dict__["policy"]


class _WatchedBound(Bound):
    """A bound that counts the reads of its ``policy``: a computation that made none
    would have gone the same way under the other policy."""

    @property  # the base class's field, read through this property
    def policy(self) -> Policy:
        _POLICY_READS[0] += 1
        return _POLICY.__get__(self)  # type: ignore[no-any-return]

    @policy.setter
    def policy(self, value: Policy) -> None:
        _POLICY.__set__(self, value)


def _watched(bound: Bound) -> Bound:
    return _WatchedBound(**{f.name: getattr(bound, f.name) for f in attrs.fields(Bound)})


class _Interner:
    """One object per distinct value of a state's parts (servers, registries, calls), and
    each state named by its parts' ids.

    Equal parts being one object, two states are equal exactly when their keys are
    (:meth:`key`: the ids of their four parts, ``closed``, ``reconfigured``), and a key
    is hashed and compared in C, where a state's hash and equality are Python calls down
    every part. A successor shares with its state the parts its event did not touch: those
    are known by identity (:meth:`parts`) or by their id (the interner holds every object
    it gave out, so no other live object has its id); only the parts the event made anew
    are looked up by value. It also keeps one copy of each part in memory however many
    states hold it."""

    def __init__(self) -> None:
        self._parts: dict[object, object] = {}
        self._known: dict[int, object] = {}
        """Every part the interner gave out, by its id."""

    def _one(self, value: _T) -> _T:
        return self._parts.setdefault(value, value)  # type: ignore[return-value]

    def key(self, state: State) -> _Key:
        """The state's key: equal for equal states only (its parts become the interner's)."""
        known = self._known
        servers, registry, steps, calls = state.servers, state.registry, state.steps, state.calls
        return (
            id(servers) if id(servers) in known else id(self._tuple(servers)),
            id(registry) if id(registry) in known else id(self._registry(registry)),
            id(steps) if id(steps) in known else id(self._tuple(steps)),
            id(calls) if id(calls) in known else id(self._tuple(calls)),
            state.closed,
            state.reconfigured,
        )

    def parts(self, state: State, like: State) -> _Parts:
        """The interner's servers, registry, steps and calls equal to ``state``'s.

        ``like`` is made of the interner's parts (a state it named: the one ``state``
        follows), so a part the two share is the interner's, known without a lookup. A
        lookup by id is slow in a large table: ids are addresses, multiples of 16, which
        a dict hashes to themselves, so it probes several slots, a cache miss each."""
        known = self._known
        servers, registry, steps, calls = state.servers, state.registry, state.steps, state.calls
        return (
            servers if servers is like.servers or id(servers) in known else self._tuple(servers),
            registry
            if registry is like.registry or id(registry) in known
            else self._registry(registry),
            steps if steps is like.steps else self.steps(steps),
            calls if calls is like.calls or id(calls) in known else self._tuple(calls),
        )

    def steps(self, steps: tuple[Registry | None, ...]) -> tuple[Registry | None, ...]:
        """The interner's steps equal to ``steps``."""
        return steps if id(steps) in self._known else self._tuple(steps)

    def _tuple(self, value: tuple[_T, ...]) -> tuple[_T, ...]:
        one = self._parts.get(value)
        if one is None:
            one = self._one(tuple([None if v is None else self._one(v) for v in value]))
            self._known[id(one)] = one
        return one  # type: ignore[return-value]

    def _registry(self, value: Registry) -> Registry:
        one = self._one(value)
        self._known[id(one)] = one
        return one

    def state(self, key: _Key, bound: Bound) -> State:
        """The state ``key`` names, made of the interner's parts, on ``bound``."""
        part = self._known
        servers, registry, steps, calls, closed, again = key
        return State(
            bound,
            part[servers],  # type: ignore[arg-type]  # the key's parts, by kind
            part[registry],  # type: ignore[arg-type]
            part[steps],  # type: ignore[arg-type]
            part[calls],  # type: ignore[arg-type]
            closed,
            again,
        )


_Key = tuple[int, int, int, int, bool, bool]
"""A state's key in an :class:`_Interner`: the ids of its servers, registry, steps and
calls, its ``closed`` and ``reconfigured``."""
_Parts = tuple[
    tuple[ServerState, ...], Registry, tuple[Registry | None, ...], tuple[CallRecord, ...]
]
"""A state's servers, registry, steps and calls, the interner's (:meth:`_Interner.parts`)."""


def _on(bound: Bound, state: State) -> State:
    """``state`` on ``bound``: the same parts (a state of one policy's graph, under the
    other's bound)."""
    return State(
        bound,
        state.servers,
        state.registry,
        state.steps,
        state.calls,
        state.closed,
        state.reconfigured,
    )


def _id_key(invariant: str) -> tuple[str, int]:
    family, _, number = invariant.partition("-")
    return (family, int(number))


LIVENESS = ("LIVE-1", "LIVE-2", "LIVE-3")
"""The liveness ids, checked on the drain subgraph (SPEC §4)."""


def liveness_failures(states: list[State], drain: list[list[int]]) -> list[tuple[str, str, int]]:
    """LIVE-1..LIVE-3 over the drain subgraph: ``(id, explanation, state index)``."""
    failures: list[tuple[str, str, int]] = []
    seen: set[str] = set()
    for index, successors in enumerate(drain):
        if successors:
            continue  # not drain-terminal (or not explored: marked [-1])
        state = states[index]
        if "LIVE-1" not in seen:
            open_calls = [c.call_id for c in state.calls if c.phase != "done"]
            if open_calls:
                seen.add("LIVE-1")
                failures.append(("LIVE-1", f"drain ends with {open_calls} unanswered", index))
        if "LIVE-2" not in seen:
            owed = [
                s.name for s, v in zip(state.bound.servers, state.servers, strict=False) if v.owed
            ]
            if owed:
                seen.add("LIVE-2")
                failures.append(
                    ("LIVE-2", f"drain ends with list_changed of {owed} unanswered", index)
                )
        if "LIVE-3" not in seen:
            stale = [
                s.name
                for s, v in zip(state.bound.servers, state.servers, strict=False)
                if v.unread or (v.connected and not v.listening)
            ]
            if stale:
                seen.add("LIVE-3")
                failures.append(
                    ("LIVE-3", f"drain ends with {stale} not listening or a change unread", index)
                )
    cycle = _drain_cycle(drain)
    if cycle is not None:
        for inv in LIVENESS:
            if inv not in seen:
                failures.append((inv, "a drain can run forever (cycle of drain events)", cycle))
    return failures


def _drain_cycle(drain: list[list[int]]) -> int | None:
    """A state on a cycle of drain edges, or None (Kahn's algorithm)."""
    indegree = [0] * len(drain)
    for successors in drain:
        for target in successors:
            if target >= 0:
                indegree[target] += 1
    ready = [i for i, d in enumerate(indegree) if d == 0]
    removed = 0
    while ready:
        i = ready.pop()
        removed += 1
        for target in drain[i]:
            if target >= 0:
                indegree[target] -= 1
                if indegree[target] == 0:
                    ready.append(target)
    if removed == len(drain):
        return None
    return next(i for i, d in enumerate(indegree) if d > 0)


def replay(bound: Bound, events: Iterable[Event], rules: Rules = STANDARD) -> list[tuple[str, str]]:
    """Apply ``events`` from the initial state through the guarded ``step``; return the
    safety invariants that fail on the way (a trace from a report reproduces its
    violation, LIVE ids aside: they are properties of the whole graph)."""
    state = rules.initial(bound).state
    failures = check_state(state)
    for event in events:
        t = rules.step(state, event)
        failures.extend(check_transition(state, event, t))
        failures.extend(check_state(t.state))
        state = t.state
    return failures


def reachable(bound: Bound, rules: Rules = STANDARD) -> Iterator[State]:
    """Every state reachable on ``bound``, each once, breadth-first; nothing is checked
    (for a test that needs the states themselves, such as the guards' against
    ``enabled``)."""
    first = rules.initial(bound).state
    seen = {first}
    queue = deque([first])
    while queue:
        state = queue.popleft()
        yield state
        for event in rules.enabled(state):
            target = rules.apply(state, event).state
            if target not in seen:
                seen.add(target)
                queue.append(target)
