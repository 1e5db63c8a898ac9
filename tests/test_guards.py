"""SPEC §3.3: each guard is one thing. Its words (the transition table's "enabled when")
sit beside a predicate in ``GUARDS``, and on every reachable state of a small bound the
kinds ``enabled(state)`` lists are exactly the kinds whose predicate holds: a guard
changed in ``enabled`` alone, or in its predicate alone, fails here."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import pytest

from mcpbind.model.bounds import standard_suite
from mcpbind.model.explore import reachable
from mcpbind.model.mutants import mutant
from mcpbind.model.rules import GUARDS, STANDARD, Guard, Rules
from mcpbind.model.values import (
    EVENT_TYPES,
    Bound,
    Call,
    CallRecord,
    Event,
    Reconnect,
    State,
)


def small_bounds() -> list[Bound]:
    """Every part of the standard suite, cut down: one step and one call (two calls in
    ``calls`` and ``sessions``, so that a call queues behind another and an expired
    session fails one), and the catalogs part on one server with the whole environment
    allowed (``environment=None``). The ``reconfigure`` part (SPEC §3.7) keeps its two
    calls: absent servers, a replacement's first refresh and a call to a removed server."""
    parts = {p.name: p.bound for p in standard_suite("revalidate", steps=1, calls=1)}
    catalogs = standard_suite("revalidate", servers=1, steps=2, calls=1)[0].bound
    return [
        attrs.evolve(catalogs, environment=None),
        attrs.evolve(parts["calls"], max_calls=2),
        *(parts[name] for name in ("approval", "lazy", "retry", "progress", "tasks", "resources")),
        attrs.evolve(parts["sessions"], max_calls=2),
        attrs.evolve(parts["reconfigure"], max_calls=2),
    ]


@pytest.fixture(scope="module")
def states() -> list[State]:
    return [state for bound in small_bounds() for state in reachable(bound)]


def disagreements(
    rules: Rules, guards: Mapping[type[Event], Guard], states: list[State]
) -> dict[str, str]:
    """For each event kind on which ``rules.enabled`` and the guard's predicate disagree,
    the first state where they do, described."""
    found: dict[str, str] = {}
    for state in states:
        listed = {type(event) for event in rules.enabled(state)}
        for event_type, guard in guards.items():
            if event_type.kind in found or (event_type in listed) == guard.holds(state):
                continue
            said = "lists it" if event_type in listed else "does not list it"
            phases = [(c.call_id, c.phase, c.late) for c in state.calls]
            found[event_type.kind] = f"enabled {said}; calls {phases}; servers {state.servers}"
    return found


def test_every_event_type_has_a_guard():
    assert set(GUARDS) == set(EVENT_TYPES)


def test_the_small_bounds_meet_every_kind_enabled_and_not_and_every_call_phase(states):
    enabled_somewhere: set[type[Event]] = set()
    disabled_somewhere: set[type[Event]] = set()
    for state in states:
        listed = {type(event) for event in STANDARD.enabled(state)}
        enabled_somewhere |= listed
        disabled_somewhere |= set(EVENT_TYPES) - listed
    assert enabled_somewhere == set(EVENT_TYPES)
    assert disabled_somewhere == set(EVENT_TYPES)
    phases = {record.phase for state in states for record in state.calls}
    assert phases == {"approval", "starting", "queued", "sent", "retrying", "task", "done"}


def test_every_guard_holds_exactly_when_enabled_lists_its_kind(states):
    assert disagreements(STANDARD, GUARDS, states) == {}


class TasksOnEveryServer(Rules):
    """A guard changed in ``enabled`` only: any server may answer a call with a task."""

    def runs_tasks(self, record: CallRecord, bound: Bound) -> bool:
        return record.binding is not None and record.binding.server is not None


def guards_with(event_type: type[Event], holds: Guard) -> dict[type[Event], Guard]:
    return {**GUARDS, event_type: holds}


def reconnect_a_dormant_server_too(state: State) -> bool:
    """Reconnect's predicate with its "a dormant server is woken instead" forgotten."""
    return not state.closed and any(not server.connected for server in state.servers)


def no_reused_call_id(state: State) -> bool:
    """Call's predicate with its "or: a reused call_id" forgotten."""
    return bool(state.steps) and (state.closed or len(state.calls) < state.bound.max_calls)


@pytest.mark.parametrize(
    ("rules", "guards", "kind"),
    [
        pytest.param(mutant("time_out_while_approving"), GUARDS, "timeout", id="enabled-timeout"),
        pytest.param(TasksOnEveryServer(), GUARDS, "task_created", id="enabled-task_created"),
        pytest.param(
            STANDARD,
            guards_with(Reconnect, Guard(GUARDS[Reconnect].text, reconnect_a_dormant_server_too)),
            "reconnect",
            id="predicate-reconnect",
        ),
        pytest.param(
            STANDARD,
            guards_with(Call, Guard(GUARDS[Call].text, no_reused_call_id)),
            "call",
            id="predicate-call",
        ),
    ],
)
def test_a_guard_changed_on_one_side_only_is_found(
    rules: Rules, guards: dict[type[Event], Guard], kind: str, states: list[State]
):
    assert set(disagreements(rules, guards, states)) == {kind}
