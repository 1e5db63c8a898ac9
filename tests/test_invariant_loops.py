"""Every invariant check still reports a violation when fine entries come before the
offending one (SPEC §10.4; issue 33, the ``continue`` made ``break`` survivors).

A check loops over the calls, the servers, the published steps or a transition's outputs,
skipping (``continue``) the entries its rule does not concern; if a skip ended the loop
instead, every entry after the first skipped one would go unchecked. The violations come
from the model mutants, each explored on its smallest bound (``test_explore_small.py``),
a few of each check per mutant, and from a few forged ones (the state checks no mutant
breaks there; a reconfiguration that also publishes); the fine entries are every call
record, every server and every output of the standard rules' states and transitions on
the same bound. Each violation is checked again with one of them put first (a call under
a fresh id, a server under a fresh name with its own empty catalog, an unpublished step,
an output about no call), for every one of them. In process, 25 of the 38 ``continue``
of ``model/invariants.py`` made ``break`` fail here; the others skip entries that only
a second call in a rarer phase (waiting for a start, retrying, expired) or a
reconfiguration's outputs would put first (docs/development.md, "Fourth pass")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest
from test_explore_small import SMALLEST

from mcpbind.model.bounds import standard_suite
from mcpbind.model.explore import reachable
from mcpbind.model.invariants import CANCEL_SIGNALS, INVARIANTS
from mcpbind.model.mutants import MUTANTS
from mcpbind.model.rules import STANDARD, Rules
from mcpbind.model.values import (
    Bound,
    CallRecord,
    Event,
    LateDropped,
    Output,
    Published,
    Reconfigure,
    RefreshOutcome,
    Refused,
    Result,
    Sent,
    ServerSpec,
    ServerState,
    SourceCatalog,
    State,
    Transition,
    evolve,
)

CHECKS = [
    (inv.id, kind)
    for inv in INVARIANTS
    for kind, check in (("state", inv.state), ("transition", inv.transition))
    if check is not None
]
BY_ID = {inv.id: inv for inv in INVARIANTS}

#: Checks no model mutant breaks on its smallest bound; none of them skips an entry of a
#: loop (INV-5 and INV-6 compare whole partitions of names).
UNBROKEN = {("INV-5", "transition"), ("INV-6", "transition")}

#: Outputs a check counts (INV-1: a generation per publication and installed refresh):
#: one more of them answers the violation instead of coming before it.
COUNTED: dict[str, tuple[type, ...]] = {"INV-1": (Published, RefreshOutcome)}

PER_CHECK = 8  # forged violations kept for each check
PER_MUTANT = 3  # violations kept for each check and mutant (mutants break checks apart)
PER_BOUND = 1500  # states visited on each bound (the tiny bounds have a few hundred)

Example = tuple[Bound, Any]  # a violating state, or (before, event, transition)


@attrs.frozen
class Fine:
    records: list[CallRecord]
    servers: list[tuple[ServerSpec, ServerState]]
    outputs: list[Output]


def bound_of(name: str) -> Bound:
    policy, servers, calls, _ = SMALLEST[name]
    m = next(m for m in MUTANTS if m.name == name)
    parts = standard_suite(policy, servers=servers, steps=1, calls=calls)  # type: ignore[arg-type]
    return next(p for p in parts if p.name == m.part).bound


def states(bound: Bound, rules: Rules = STANDARD) -> Iterator[State]:
    for n, state in enumerate(reachable(bound, rules)):
        if n == PER_BOUND:
            return
        yield state


def forged(bound: Bound) -> dict[tuple[str, str], list[State]]:
    """State violations no mutant makes on a tiny bound, forged from the standard rules'
    states: a step published under the registry's generation with other catalogs
    (INV-1), a running call counted as ended (INV-4), a retry not counted as one (INV-13),
    a sent call marked as waiting after an expiry (INV-14)."""
    found: dict[tuple[str, str], list[State]] = {}
    for state in states(bound):
        if state.registry.catalogs and not state.steps:
            snapshot = evolve(state.registry, catalogs=())
            found.setdefault(("INV-1", "state"), []).append(evolve(state, steps=(snapshot,)))
        for record in state.calls:
            if record.phase != "sent":
                continue
            others = tuple(c for c in state.calls if c is not record)
            for key, broken in (
                (("INV-4", "state"), evolve(record, results=1)),
                (("INV-13", "state"), evolve(record, phase="retrying")),
                (("INV-14", "state"), evolve(record, expired=True)),
            ):
                found.setdefault(key, []).append(evolve(state, calls=(*others, broken)))
    return {key: examples[:PER_CHECK] for key, examples in found.items()}


def forged_publications(bound: Bound) -> Iterator[tuple[State, Event, Transition]]:
    """A reconfiguration that also publishes a server's tools (INV-3: only the end of a
    listing does), after what it publishes itself, removals among them."""
    kept = 0
    for state in states(bound):
        for event in STANDARD.enabled(state):
            if not isinstance(event, Reconfigure) or kept == PER_CHECK:
                continue
            t = STANDARD.apply(state, event)
            spec = state.bound.servers[0]
            extra = Published(t.state.registry.generation, spec.source, ("forged",))
            kept += 1
            yield state, event, Transition(t.state, (*t.outputs, extra))


@pytest.fixture(scope="module")
def violations() -> dict[tuple[str, str], list[Example]]:
    found: dict[tuple[str, str], list[Example]] = {}

    counts: dict[tuple[str, str], int] = {}

    def keep(key: tuple[str, str], bound: Bound, example: object, *, forged: bool = False) -> None:
        if forged or counts.get(key, 0) < PER_MUTANT:
            counts[key] = counts.get(key, 0) + 1
            found.setdefault(key, []).append((bound, example))

    for m in MUTANTS:
        if not m.target.startswith("INV"):
            continue
        counts.clear()
        bound = bound_of(m.name)
        for state in states(bound, m):
            for inv in INVARIANTS:
                if inv.state is not None and inv.state(state) is not None:
                    keep((inv.id, "state"), bound, state)
            for event in m.enabled(state):
                t = m.apply(state, event)
                for inv in INVARIANTS:
                    if inv.transition is not None and inv.transition(state, event, t):
                        keep((inv.id, "transition"), bound, (state, event, t))
    calls = bound_of("leave_calls_on_disconnect")
    for key, examples in forged(calls).items():
        for state in examples:
            keep(key, calls, state, forged=True)
    reconfigure = bound_of("reconfigure_in_two_generations")
    for example in forged_publications(reconfigure):
        keep(("INV-3", "transition"), reconfigure, example, forged=True)
    return found


@pytest.fixture(scope="module")
def fine() -> Callable[[Bound], Fine]:
    """Every call record, every server (spec and state) and every output of the standard
    rules' states and transitions on a bound."""
    pools: dict[Bound, Fine] = {}

    def of(bound: Bound) -> Fine:
        if bound not in pools:
            records: set[CallRecord] = set()
            servers: set[tuple[ServerSpec, ServerState]] = set()
            outputs: set[Output] = set()
            for state in states(bound):
                records.update(state.calls)
                servers.update(zip(state.bound.servers, state.servers, strict=True))
                for event in STANDARD.enabled(state):
                    outputs.update(STANDARD.apply(state, event).outputs)
            pools[bound] = Fine(
                sorted(records, key=repr), sorted(servers, key=repr), sorted(outputs, key=repr)
            )
        return pools[bound]

    return of


def call_first(state: State, record: CallRecord) -> State:
    return evolve(state, calls=(evolve(record, call_id="first"), *state.calls))


def server_first(state: State, server: tuple[ServerSpec, ServerState]) -> State:
    spec, server_state = server
    spec = evolve(spec, name="first.server")
    catalog = SourceCatalog(spec.source, state.registry.generation, ())
    registry = evolve(state.registry, catalogs=(catalog, *state.registry.catalogs))
    bound = evolve(state.bound, servers=(spec, *state.bound.servers))
    return evolve(state, bound=bound, servers=(server_state, *state.servers), registry=registry)


def foreign(output: Output) -> Output:
    """``output`` about a call no state holds (a cancellation sent for a call that owed
    one would answer the violation instead of coming before it)."""
    if isinstance(output, Sent) and output.method in CANCEL_SIGNALS:
        return evolve(output, detail="first")
    if isinstance(output, Result | Refused | LateDropped):
        return evolve(output, call_id="first")
    return output


def step_first(state: State, _: None) -> State:
    return evolve(state, steps=(None, *state.steps))


def test_every_check_but_the_two_that_compare_names_has_violations_to_pad(violations):
    assert sorted(set(CHECKS) - set(violations)) == sorted(UNBROKEN)


@pytest.mark.parametrize(("inv_id", "kind"), CHECKS, ids=[f"{i}-{k}" for i, k in CHECKS])
def test_a_check_still_reports_a_violation_after_any_fine_entry_put_before_it(
    inv_id: str, kind: str, violations, fine
):
    inv = BY_ID[inv_id]
    missed = []
    for bound, example in violations.get((inv_id, kind), []):
        pool = fine(bound)
        pads: list[tuple[str, Callable[[State, Any], State], list[Any]]] = [
            ("call", call_first, pool.records),
            ("server", server_first, pool.servers),
        ]
        if kind == "state":  # a transition's steps are numbered by its events
            pads.append(("step", step_first, [None]))
        for what, pad, entries in pads:
            for entry in entries:
                if kind == "state":
                    assert inv.state is not None
                    verdict = inv.state(pad(example, entry))
                else:
                    assert inv.transition is not None
                    before, event, t = example
                    after = Transition(pad(t.state, entry), t.outputs)
                    verdict = inv.transition(pad(before, entry), event, after)
                if verdict is None:
                    missed.append(f"{what} {entry!r} first")
        if kind == "transition":
            assert inv.transition is not None
            before, event, t = example
            for output in pool.outputs:
                if isinstance(output, COUNTED.get(inv_id, ())):
                    continue
                after = Transition(t.state, (foreign(output), *t.outputs))
                if inv.transition(before, event, after) is None:
                    missed.append(f"output {output!r} first")
    assert missed == []
