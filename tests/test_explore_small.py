"""The explorer, the model mutants and the suite runner on tiny bounds (SPEC §10.2-§10.4):
the same claims as ``test_explorer.py`` and ``test_model_mutants.py``, on bounds a second
or less each, so that ``scripts/mutation`` (which skips those two files: minutes each)
finds a test that runs the explorer's and the mutants' lines (issue 33, "no coverage")."""

from __future__ import annotations

import importlib
import json

import attrs
import pytest

from mcpbind.model.bounds import NIGHTLY_DEEPER, Part, describe, load_bound, standard_suite, suite
from mcpbind.model.explore import Report, Shared, explore, format_event, reachable, replay
from mcpbind.model.invariants import check_transition
from mcpbind.model.mutants import MUTANTS, Mutant
from mcpbind.model.rules import STANDARD, Rules, _Tables
from mcpbind.model.suite import run_suite
from mcpbind.model.values import Bound, Call, CallRejected, Sample, Sent, ServerSpec, State


def part(name: str, policy: str = "revalidate", *, servers: int = 1, calls: int = 1) -> Part:
    """A part of the standard suite cut to ``servers`` servers, one step, ``calls`` calls."""
    parts = standard_suite(policy, servers=servers, steps=1, calls=calls)  # type: ignore[arg-type]
    return next(p for p in parts if p.name == name)


#: Each model mutant, the smallest cut of its part that exposes it (one step always) and
#: the length of the shortest trace to its target's failure there (breadth first).
SMALLEST: dict[str, tuple[str, int, int, int]] = {
    "bump_generation_when_unchanged": ("revalidate", 1, 1, 5),
    "resolve_through_live_registry": ("revalidate", 1, 1, 8),
    "snapshot_by_reference": ("revalidate", 1, 1, 3),
    "install_page_by_page": ("revalidate", 1, 1, 1),
    "drop_invalid_tools": ("revalidate", 1, 1, 3),
    "install_excluded_tool": ("revalidate", 1, 1, 5),
    "reject_excludable_listing": ("revalidate", 1, 1, 5),
    "deliver_late_answer": ("revalidate", 1, 1, 6),
    "accept_reused_call_id": ("revalidate", 1, 1, 3),
    "shadow_builtin": ("frozen", 2, 1, 3),
    "rename_on_every_refresh": ("frozen", 2, 1, 9),
    "forget_cancel_notification": ("revalidate", 1, 1, 5),
    "cancel_after_end_ends_again": ("revalidate", 1, 1, 3),
    "leave_calls_on_disconnect": ("revalidate", 1, 1, 5),
    "ignore_exclusive_lane": ("revalidate", 1, 2, 4),
    "stuck_lane": ("revalidate", 1, 2, 5),
    "forget_queued_refresh": ("revalidate", 1, 1, 2),
    "skip_approval": ("revalidate", 1, 1, 3),
    "deny_sends": ("revalidate", 1, 1, 4),
    "time_out_while_approving": ("revalidate", 1, 1, 4),
    "fail_fast_when_dormant": ("revalidate", 1, 1, 2),
    "send_while_starting": ("revalidate", 1, 1, 3),
    "strand_waiters_on_lost_start": ("revalidate", 1, 1, 3),
    "forget_cancellations_at_close": ("revalidate", 1, 1, 4),
    "leave_unsent_calls_at_close": ("revalidate", 1, 2, 5),
    "accept_calls_after_close": ("revalidate", 1, 1, 3),
    "resend_at_once": ("revalidate", 1, 1, 4),
    "retry_every_rejection": ("revalidate", 1, 1, 6),
    "retry_on_a_stale_refresh": ("revalidate", 1, 1, 5),
    "uncapped_progress": ("frozen", 2, 1, 3),
    "cancel_task_with_notification": ("revalidate", 1, 1, 5),
    "result_from_late_task_status": ("revalidate", 1, 1, 6),
    "release_lane_for_task": ("revalidate", 1, 2, 5),
    "refresh_before_relisten": ("revalidate", 1, 1, 5),
    "relisten_without_refresh": ("revalidate", 1, 1, 4),
    "expired_call_resent_at_once": ("revalidate", 1, 1, 4),
    "expired_call_resent_every_time": ("revalidate", 1, 1, 6),
    "expiry_keeps_other_calls": ("revalidate", 1, 2, 5),
    "reconfigure_in_two_generations": ("revalidate", 1, 1, 2),
    "restart_unchanged_server": ("revalidate", 1, 1, 1),
    "drop_cancellation_on_removal": ("revalidate", 1, 1, 4),
    "empty_changed_catalog_at_once": ("revalidate", 1, 1, 2),
    "keep_old_catalog_on_failed_replacement": ("revalidate", 1, 1, 3),
    "send_to_removed_server": ("frozen", 1, 1, 4),
    "read_through_live_resources": ("revalidate", 1, 1, 5),
    "publish_resources_apart": ("revalidate", 1, 1, 1),
}


def test_the_table_names_every_model_mutant():
    assert sorted(SMALLEST) == sorted(m.name for m in MUTANTS)


@pytest.mark.parametrize("m", MUTANTS, ids=lambda m: m.name)
def test_every_model_mutant_is_caught_on_its_smallest_bound_with_the_shortest_trace(m: Mutant):
    """SPEC §10.4 on a cut of the mutant's part: its target fails, with a breadth-first
    (shortest) trace of the pinned length; a safety target's trace replays to the same
    failure under the mutant, and its prefix is clean under the standard rules (which
    break nothing on these bounds: ``test_explorer.py``)."""
    policy, servers, calls, length = SMALLEST[m.name]
    bound = part(m.part, policy, servers=servers, calls=calls).bound
    safety = m.target.startswith("INV")
    limits: dict[str, object] = {"stop_on": m.target} if safety else {"max_depth": 6}
    report = explore(bound, m, **limits)  # type: ignore[arg-type]
    hit = [v for v in report.violations if v.invariant == m.target]
    assert hit, f"{m.name} survived: {m.target} never failed"
    assert len(hit[0].trace) == length
    if safety:
        assert not report.complete  # stopped at the target's first failure
        assert m.target in {inv for inv, _ in replay(bound, hit[0].trace, m)}
        assert replay(bound, hit[0].trace[:-1]) == []


CALLS = part("calls").bound  # one server, one step, one call: 113 states, depth 8


def test_the_calls_part_on_one_server_step_and_call_has_113_states_and_nothing_fails():
    report = explore(CALLS)
    assert (report.states, report.transitions, report.depth) == (113, 501, 8)
    assert report.complete
    assert report.violations == ()
    assert report.effects == ()  # tallied only when asked


@pytest.mark.parametrize(
    ("max_depth", "sizes"),
    [(0, (1, 0, 0)), (2, (17, 22, 2)), (7, (110, 441, 7)), (8, (113, 482, 8)), (9, (113, 501, 8))],
)
def test_max_depth_explores_the_states_up_to_that_depth_and_says_whether_it_cut(
    max_depth: int, sizes: tuple[int, int, int]
):
    """A state at ``max_depth`` is not expanded: at the graph's own depth (8) its last
    states' 19 transitions are left out and the report says it was cut; one deeper, the
    report is the whole graph's, complete."""
    report = explore(CALLS, max_depth=max_depth)
    assert (report.states, report.transitions, report.depth) == sizes
    assert report.complete == (max_depth > 8)


def test_effects_tally_what_each_event_kind_did_on_every_transition():
    """SPEC §3.3's table on the tiny calls part: every transition counted once under its
    event kind and what it produced."""
    report = explore(CALLS, effects=True)
    assert sum(n for _, _, n in report.effects) == report.transitions == 501
    assert report.effects == (
        ("call", "refuse call after close", 8),
        ("call", "refuse duplicate call_id", 42),
        ("call", "result failed", 11),
        ("call", "result unavailable", 3),
        ("call", "result unsupported", 38),
        ("call", "send tools/call", 20),
        ("call_responded", "result ok", 21),
        ("cancel", "result cancelled, send notifications/cancelled", 21),
        ("cancel", "state only", 21),
        (
            "close",
            "refresh rejected (closed), result cancelled, send close, send notifications/cancelled",
            13,
        ),
        ("close", "refresh rejected (closed), send close", 37),
        ("close", "result cancelled, send close, send notifications/cancelled", 8),
        ("close", "send close", 13),
        ("close", "state only", 30),
        ("disconnect", "refresh rejected (disconnected)", 37),
        ("disconnect", "refresh rejected (disconnected), result failed", 13),
        ("disconnect", "result failed", 8),
        ("disconnect", "state only", 13),
        ("list_changed", "send tools/list", 6),
        ("list_changed", "state only", 16),
        ("list_done", "publish, refresh installed", 21),
        ("list_done", "publish, refresh installed, send tools/list", 3),
        ("list_done", "refresh unchanged", 20),
        ("list_done", "refresh unchanged, send tools/list", 6),
        ("reconnect", "send tools/list", 30),
        ("sample", "state only", 21),
        ("timeout", "result timed_out, send notifications/cancelled", 21),
    )


def test_a_violation_carries_every_event_from_the_initial_state_first_event_first():
    """The trace is the path from the initial state: the mutant that forgets the
    cancellation of a call fails INV-7 at the cancel and INV-12 at the close, the fifth
    event each; stopping on INV-7 finds INV-12 on the way, at the same depth."""
    m = next(m for m in MUTANTS if m.name == "forget_cancel_notification")
    bound = part(m.part).bound
    prefix = [
        "list_page(server='git.hub')",
        "list_done(server='git.hub')",
        "sample()",
        "call(step=0, call_id='c1', name='mcp__git_hub__read', arguments_ok=True)",
    ]
    for report in (explore(bound, m, stop_on=m.target), explore(bound, m)):
        found = {v.invariant: [format_event(e) for e in v.trace] for v in report.violations}
        assert found == {
            "INV-7": [*prefix, "cancel(call_id='c1')"],
            "INV-12": [*prefix, "close()"],
        }


# --- the suite runner (SPEC §10.3) --------------------------------------------------------


def sizes(report) -> tuple[int, int, int, bool, tuple[str, ...]]:
    return (
        report.states,
        report.transitions,
        report.depth,
        report.complete,
        tuple(v.invariant for v in report.violations),
    )


@pytest.fixture(scope="module")
def tiny_suite_in_two_workers():
    return run_suite(servers=1, steps=1, calls=1, workers=2)


def test_run_suite_gives_one_run_per_policy_and_part_policies_outermost_in_suite_order(
    tiny_suite_in_two_workers,
):
    """Whatever order the two workers finish in, the runs come back frozen first, then
    revalidate, each in the suite's order of parts, each part's report the one
    ``explore`` gives it alone (the reconfigure part, 3 s alone, pinned instead), whole
    and without a violation."""
    runs = tiny_suite_in_two_workers
    names = [p.name for p in standard_suite(servers=1, steps=1, calls=1)]
    assert [(r.policy, r.part) for r in runs] == [
        (policy, name) for policy in ("frozen", "revalidate") for name in names
    ]
    for r in runs:
        assert r.report.policy == r.policy
        assert r.report.complete
        assert r.report.violations == ()  # the standard rules break nothing (SPEC §10.2)
        if r.part == "reconfigure":
            reconfigure = {"frozen": (6196, 37430), "revalidate": (6028, 36292)}[r.policy]
            assert sizes(r.report) == (*reconfigure, 11, True, ())
        else:
            assert sizes(r.report) == sizes(explore(part(r.part, r.policy).bound))


def test_run_suite_with_a_mutant_stops_each_part_at_its_target_and_names_the_rules():
    """One worker (in process): the approval part fails INV-10 under the mutant that skips
    the approval; the parts without gating never ask for one and stay clean."""
    heard: list[tuple[str, int]] = []
    runs = run_suite(
        servers=1,
        steps=1,
        calls=1,
        workers=1,
        policies=("revalidate",),
        mutant="skip_approval",
        on_run=lambda run, total: heard.append((run.part, total)),
    )
    assert [p for p, _ in heard] == [r.part for r in runs]
    assert {total for _, total in heard} == {10}
    failing = {r.part: [v.invariant for v in r.report.violations] for r in runs}
    assert failing.pop("approval") == ["INV-10"]
    assert set(map(tuple, failing.values())) == {()}
    assert {r.report.rules for r in runs} == {"skip_approval"}


def test_run_suite_left_to_its_defaults_is_the_standard_suite_of_two_servers_both_policies(
    monkeypatch,
):
    """SPEC §10.3's standard suite is what ``run_suite()`` and ``suite_jobs()`` explore
    when told nothing (``tests/conftest.py``'s suite and ``scripts/update-spec-table``
    rely on it; issue 33: ``servers``'s default changed survived). The jobs are caught
    before any exploring."""
    import mcpbind.model.suite as suite_module

    seen = []

    def caught(job):
        seen.append(job)
        return [None] * len(job.policies)

    monkeypatch.setattr(suite_module, "_run_job", caught)
    run_suite(workers=1)
    assert seen == suite_module.suite_jobs()
    assert [j.part for j in seen] == [p.name for p in standard_suite(servers=2)]
    settings = {(j.policies, j.servers, j.steps, j.calls, j.depth, j.mutant) for j in seen}
    assert settings == {(("frozen", "revalidate"), 2, None, None, None, None)}
    assert {(j.effects, j.suite) for j in seen} == {(False, "standard")}


def test_run_suite_refuses_an_unknown_mutant_before_exploring_anything():
    with pytest.raises(KeyError):
        run_suite(mutant="no_such_mutant", workers=1)


def test_a_second_policy_reusing_the_first_gets_the_report_it_gets_alone():
    """SPEC §10.8 on the tiny calls part: ``Shared`` handed from frozen to revalidate."""
    from mcpbind.model.explore import Shared

    shared = Shared()
    for policy in ("frozen", "revalidate"):
        bound = part("calls", policy).bound
        reused = explore(bound, shared=shared, effects=True)
        alone = explore(bound, effects=True)
        assert attrs.evolve(reused, seconds=0) == attrs.evolve(alone, seconds=0)


@pytest.mark.parametrize("policy", ["frozen", "revalidate"])
def test_every_part_bound_survives_describe_and_load_bound(policy: str):
    """A replay file's ``bound`` (SPEC §14.5) is :func:`describe`'s JSON, read back by
    :func:`load_bound`: each part's bound comes back equal, its environment (the events
    the part allows) included, and so explores to the same sizes."""
    for p in standard_suite(policy, servers=1, steps=1, calls=1):  # type: ignore[arg-type]
        again = load_bound(json.loads(json.dumps(describe(p.bound))))
        assert again == p.bound, p.name
    calls = part("calls", policy).bound
    assert calls.environment is not None
    plain = attrs.evolve(calls, environment=None)
    assert load_bound(json.loads(json.dumps(describe(plain)))) == plain


def test_a_bound_file_that_names_only_its_servers_takes_every_default_of_the_model():
    """A hand-written replay file's ``bound`` may leave out any field but the servers'
    names: each one left out reads as the default of :class:`Bound` and
    :class:`ServerSpec` (issue 33: ``steps`` read as 3 when absent survived)."""
    loaded = load_bound({"servers": [{"name": "s"}]})
    assert loaded == Bound(servers=(ServerSpec("s", ()),))
    assert loaded.environment is None


def test_only_a_call_rejected_unrun_while_a_refresh_runs_is_ever_marked_behind_it():
    """INV-13 on the tiny retry part: ``behind`` marks a retrying call waiting for the
    refresh queued after the one in flight; a call is never accepted, sent or ended so
    marked, and some retrying call is (issue 33: the field's default made ``True``
    survived)."""
    marked = set()
    for state in reachable(part("retry").bound):
        marked |= {record.phase for record in state.calls if record.behind}
    assert marked == {"retrying"}


class _KeepsNothing(Rules):
    """The standard rules, their transitions computed every time (SPEC §10.10)."""

    steps_unread = False  # type: ignore[assignment]  # a plain value for the cached property


@pytest.mark.parametrize("name", ["calls", "catalogs", "approval", "sessions"])
@pytest.mark.parametrize("policy", ["frozen", "revalidate"])
def test_keeping_transitions_for_states_equal_but_in_their_steps_changes_no_report(
    name: str, policy: str
):
    """SPEC §10.10: the explorer's kept transitions give the report computing each gives,
    effects and traces included, with and without a second policy's reuse."""
    bound = part(name, policy, calls=2).bound
    kept = explore(bound, effects=True)
    computed = explore(bound, _KeepsNothing(), effects=True)
    assert attrs.evolve(kept, seconds=0) == attrs.evolve(computed, seconds=0)
    every = explore(bound, every_transition=True)
    assert attrs.evolve(every, seconds=0) == attrs.evolve(kept, seconds=0, effects=())


@pytest.mark.parametrize(
    ("name", "servers"),
    [("calls", 2), ("catalogs", 1), ("approval", 1), ("sessions", 1), ("tasks", 1)],
)
def test_states_equal_but_in_their_steps_make_the_same_transitions_but_in_their_steps(
    name: str, servers: int
):
    """The premise of SPEC §10.10, on every pair of reachable states equal but in their
    steps (none closed): each event both list but ``sample`` gives, the steps aside, the
    same transition and the same failed checks but INV-2's (a ``call`` when it names steps
    holding the same snapshot)."""
    bound = part(name, "revalidate", servers=servers, calls=2).bound
    classes: dict[tuple[object, ...], list[State]] = {}
    for state in reachable(bound):
        if not state.closed:
            key = (state.servers, state.registry, state.calls, state.reconfigured)
            classes.setdefault(key, []).append(state)
    pairs = 0
    for states in classes.values():
        first = states[0]
        listed = set(STANDARD.enabled(first))
        for other in states[1:]:
            for event in STANDARD.enabled(other):
                if event not in listed or isinstance(event, Sample):
                    continue
                if isinstance(event, Call) and first.steps[event.step] != other.steps[event.step]:
                    continue
                a, b = STANDARD.apply(first, event), STANDARD.apply(other, event)
                assert attrs.evolve(a.state, steps=()) == attrs.evolve(b.state, steps=())
                assert a.outputs == b.outputs
                found = [
                    check_transition(s, event, t, steps=False) for s, t in ((first, a), (other, b))
                ]
                assert found[0] == found[1]
                pairs += 1
    assert pairs > 100


def test_only_rules_that_replace_no_method_given_the_whole_state_keep_transitions():
    """SPEC §10.10: a mutant replacing a hook given a record keeps them; one replacing a
    hook given the state (where it may read the steps) computes every time."""
    assert STANDARD.steps_unread
    # Fresh instances: the shared ones cache the answer where a test first asks, so the
    # coverage run credited the computation to another test and scripts/mutation never
    # chose this one (seed 104: the plain-value test negated survived).
    by_name = {m.name: type(m)() for m in MUTANTS}
    assert by_name["forget_cancel_notification"].steps_unread  # cancel_messages(server, record)
    assert not by_name["resolve_through_live_registry"].steps_unread  # resolve(state, ...)
    assert not by_name["snapshot_by_reference"].steps_unread  # publish(state, ...)


PARTS = [p.name for p in standard_suite()]


def _bare(report: Report) -> Report:
    return attrs.evolve(report, seconds=0)


def _explored_bare(bound: Bound, monkeypatch: pytest.MonkeyPatch) -> Report:
    """``bound`` explored with none of the explorer's bookkeeping: the rules' memo tables
    new at every use, no transition kept for states equal but in their steps (and so no
    part interned for their keys), no second policy's reuse."""
    with monkeypatch.context() as patched:
        patched.setattr(Rules, "tables", lambda self, bound: _Tables(bound))
        return explore(bound, _KeepsNothing(), effects=True)


@pytest.mark.parametrize("name", PARTS)
def test_the_explorers_bookkeeping_changes_no_report_of_any_part(
    name: str, monkeypatch: pytest.MonkeyPatch
):
    """SPEC §10.8 and §10.10: every part of the standard suite, cut small, explored under
    both policies with every table the explorer and the rules keep (memo tables, kept
    transitions, the second policy reusing the first) gives the report computed from
    scratch: states, transitions, depth, violations with their traces, effects."""
    shared = Shared()
    for policy in ("frozen", "revalidate"):
        bound = part(name, policy).bound
        kept = explore(bound, effects=True, shared=shared)
        assert _bare(kept) == _bare(_explored_bare(bound, monkeypatch)), policy
        assert kept.states > 1
        assert kept.transitions >= kept.states - 1


def test_a_state_check_that_reads_the_policy_is_computed_again_under_the_other(
    monkeypatch: pytest.MonkeyPatch,
):
    """SPEC §10.8: a state's checks are reused by the second policy only when they read no
    policy. Give the state checks one that fails under ``revalidate`` alone (on a closed
    host): the second policy, reusing the first's graph, still meets it, with the trace it
    meets alone."""
    from mcpbind.model import invariants

    def closed_under_revalidate(state: State) -> str | None:
        if state.closed and state.bound.policy == "revalidate":
            return "closed under revalidate"
        return None

    checks = (*invariants._STATE_CHECKS, ("TEST-1", closed_under_revalidate))
    monkeypatch.setattr(invariants, "_STATE_CHECKS", checks)
    shared = Shared()
    reports = []
    for policy in ("frozen", "revalidate"):
        bound = part("calls", policy).bound
        reused = explore(bound, shared=shared)
        assert _bare(reused) == _bare(explore(bound)), policy
        reports.append(reused)
    assert [[v.invariant for v in r.violations] for r in reports] == [[], ["TEST-1"]]


@pytest.mark.parametrize("name", ["forget_queued_refresh", "stuck_lane", "uncapped_progress"])
def test_stopping_on_an_invariant_never_violated_still_checks_liveness(name: str):
    """``stop_on`` ends the search early only once its id failed: a liveness mutant
    explored with ``stop_on`` naming a safety invariant it keeps gets the report of the
    search without it, its liveness violation included."""
    m = next(m for m in MUTANTS if m.name == name)
    policy, servers, calls, _ = SMALLEST[name]
    bound = part(m.part, policy, servers=servers, calls=calls).bound
    alone = explore(bound, m, max_depth=6)
    stopping = explore(bound, m, max_depth=6, stop_on="INV-1")
    assert m.target in [v.invariant for v in alone.violations]
    assert _bare(stopping) == _bare(alone)


def test_resend_at_once_resends_a_rejected_call_once_and_then_follows_the_standard_rules():
    """The ``resend_at_once`` mutant breaks INV-13 once: the call it sends again at once is
    marked retried, so the server's second rejection of it takes the standard path (issue
    33: the mark made ``False``, a mutant resending forever, survived)."""
    m = next(m for m in MUTANTS if m.name == "resend_at_once")
    seen = 0
    for state in reachable(part("retry").bound):
        for event in STANDARD.enabled(state):
            if not isinstance(event, CallRejected):
                continue
            record = state.call(event.call_id)
            assert record is not None
            if record.retried:
                continue
            once = m.apply(state, event)
            again = once.state.call(event.call_id)
            assert again is not None
            assert again.retried
            assert [(o.method, o.detail) for o in once.outputs if isinstance(o, Sent)] == [
                ("tools/call", record.binding.remote_name if record.binding else None)
            ]
            if event in STANDARD.enabled(once.state):
                assert m.apply(once.state, event) == STANDARD.apply(once.state, event)
                seen += 1
    assert seen > 0


#: Each model mutant's graph on its smallest cut, up to two events past its shortest failing
#: trace (:data:`SMALLEST`): states and transitions. ``tests/test_model_golden.py`` pins the
#: violations met there; this pins what the mutant does besides (issue 33: a flag a mutant
#: sets for its later events, made ``False``, met the same violations and survived).
MUTANT_GRAPHS: dict[str, tuple[int, int]] = {
    "bump_generation_when_unchanged": (293, 1520),
    "resolve_through_live_registry": (375, 2714),
    "snapshot_by_reference": (145, 592),
    "install_page_by_page": (65, 153),
    "drop_invalid_tools": (170, 598),
    "install_excluded_tool": (262, 1472),
    "reject_excludable_listing": (238, 1438),
    "deliver_late_answer": (311, 1960),
    "accept_reused_call_id": (139, 556),
    "shadow_builtin": (1309, 5951),
    "rename_on_every_refresh": (13790, 139595),
    "forget_cancel_notification": (261, 1470),
    "cancel_after_end_ends_again": (84, 236),
    "leave_calls_on_disconnect": (274, 1537),
    "ignore_exclusive_lane": (171, 651),
    "stuck_lane": (216, 1042),
    "forget_queued_refresh": (83, 268),
    "skip_approval": (84, 236),
    "deny_sends": (122, 419),
    "time_out_while_approving": (122, 435),
    "fail_fast_when_dormant": (59, 176),
    "send_while_starting": (114, 538),
    "strand_waiters_on_lost_start": (119, 500),
    "forget_cancellations_at_close": (102, 353),
    "leave_unsent_calls_at_close": (214, 1036),
    "accept_calls_after_close": (141, 557),
    "resend_at_once": (132, 512),
    "retry_every_rejection": (167, 871),
    "retry_on_a_stale_refresh": (162, 756),
    "uncapped_progress": (363, 1101),
    "cancel_task_with_notification": (142, 648),
    "result_from_late_task_status": (154, 808),
    "release_lane_for_task": (397, 2156),
    "refresh_before_relisten": (351, 1636),
    "relisten_without_refresh": (207, 788),
    "expired_call_resent_at_once": (268, 999),
    "expired_call_resent_every_time": (421, 2164),
    "expiry_keeps_other_calls": (763, 3583),
    "reconfigure_in_two_generations": (790, 2076),
    "restart_unchanged_server": (277, 603),
    "drop_cancellation_on_removal": (3030, 11173),
    "empty_changed_catalog_at_once": (736, 1976),
    "keep_old_catalog_on_failed_replacement": (1615, 5149),
    "send_to_removed_server": (3112, 11330),
    "read_through_live_resources": (110, 441),
    "publish_resources_apart": (36, 61),
}


@pytest.mark.parametrize("m", MUTANTS, ids=lambda m: m.name)
def test_each_model_mutant_near_its_failure_has_its_pinned_graph(m: Mutant):
    policy, servers, calls, length = SMALLEST[m.name]
    bound = part(m.part, policy, servers=servers, calls=calls).bound
    report = explore(bound, m, max_depth=length + 2)
    assert (report.states, report.transitions) == MUTANT_GRAPHS[m.name]


def test_a_second_policy_reusing_a_search_stopped_early_gets_the_report_it_gets_alone(
    monkeypatch: pytest.MonkeyPatch,
):
    """SPEC §10.8 with ``stop_on``: the first policy's search stops at its first violation
    (a state check patched in that fails under ``frozen`` once a call is accepted),
    leaving states found but not explored; the second, which never meets it, explores
    them all reusing the first's rows, and gets the report it gets alone."""
    from mcpbind.model import invariants

    def a_call_under_frozen(state: State) -> str | None:
        if state.calls and state.bound.policy == "frozen":
            return "a call under frozen"
        return None

    checks = (*invariants._STATE_CHECKS, ("TEST-1", a_call_under_frozen))
    monkeypatch.setattr(invariants, "_STATE_CHECKS", checks)
    shared = Shared()
    reports = []
    for policy in ("frozen", "revalidate"):
        bound = part("calls", policy).bound
        reused = explore(bound, stop_on="TEST-1", shared=shared)
        assert _bare(reused) == _bare(explore(bound, stop_on="TEST-1")), policy
        reports.append(reused)
    assert [r.complete for r in reports] == [False, True]


def test_nightly_bound_is_the_standard_suite_deeper_by_its_table():
    """SPEC §10.6: the same parts, servers and environments; more calls (or steps). Here,
    not in test_explorer.py (which mutation testing skips), so bounds.py's nightly loop
    is reached (issue 33)."""
    for policy in ("frozen", "revalidate"):
        standard = standard_suite(policy)
        nightly = suite("nightly", policy)
        assert [p.name for p in nightly] == [p.name for p in standard]
        for small, deep in zip(standard, nightly, strict=True):
            more_steps, more_calls = NIGHTLY_DEEPER[small.name]
            assert deep.bound.max_steps == small.bound.max_steps + more_steps
            assert deep.bound.max_calls == small.bound.max_calls + more_calls
            assert deep.bound.servers == small.bound.servers
            assert deep.bound.environment == small.bound.environment
        assert any(more != (0, 0) for more in NIGHTLY_DEEPER.values())
    assert suite("standard", "frozen") == standard_suite("frozen")


def test_a_step_check_failing_on_a_transition_kept_for_equal_states_is_reported(monkeypatch):
    """SPEC §10.10: with the standard rules the explorer keeps the transitions of states
    equal but in their steps and runs only the checks that read the steps on each; such a
    check's failure is reported with the others (issue 33: ``failed + stepwise`` made
    ``&`` was reached by no chosen test: no standard rule fails one)."""
    # The module: the package exports its explore() under the same name.
    explore_module = importlib.import_module("mcpbind.model.explore")
    checked = explore_module.check_transition

    def forged(before, event, t, *, every=False, steps=None):
        # INV-2 reads the steps: its failure is in the whole plan and in the steps' part.
        found = checked(before, event, t, every=every, steps=steps)
        return (
            [*found, ("INV-2", "forged")] if steps is not False and type(event) is Call else found
        )

    monkeypatch.setattr(explore_module, "check_transition", forged)
    report = explore(CALLS, stop_on="INV-2")
    assert [(v.invariant, v.detail) for v in report.violations] == [("INV-2", "forged")]
    assert type(report.violations[0].trace[-1]) is Call
    # The first such transition computes the checks it keeps and reports the others.
    from_scratch = explore(CALLS, _KeepsNothing(), stop_on="INV-2")
    assert report.violations == from_scratch.violations
