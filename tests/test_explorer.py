"""SPEC §10: the exhaustive explorer and the standard suite (the model mutants:
``test_model_mutants.py``)."""

from __future__ import annotations

import json
import pathlib

import pytest
from cli_runner import mcpbind

from mcpbind.model import explore
from mcpbind.model.bounds import NIGHTLY_DEEPER, standard_suite
from mcpbind.model.explore import liveness_failures
from mcpbind.model.mutants import MUTANTS
from mcpbind.model.suite import Run
from mcpbind.model.table import BEGIN, END, render

SPEC = pathlib.Path(__file__).resolve().parent.parent / "SPEC.md"

# SPEC §10.3 pins these; a change to the rules or the bound shows up here in review.
PINNED = {
    ("catalogs", "frozen"): (37717, 501281),
    ("catalogs", "revalidate"): (37717, 501281),
    ("calls", "frozen"): (35690, 444793),
    ("calls", "revalidate"): (33896, 421173),
    ("approval", "frozen"): (29830, 317634),
    ("approval", "revalidate"): (29027, 308592),
    ("lazy", "frozen"): (14512, 199994),
    ("lazy", "revalidate"): (14512, 199994),
    ("retry", "frozen"): (11631, 130939),
    ("retry", "revalidate"): (11399, 128059),
    ("progress", "frozen"): (4180, 40054),
    ("progress", "revalidate"): (4080, 38988),
    ("tasks", "frozen"): (10388, 130600),
    ("tasks", "revalidate"): (10032, 125418),
    ("sessions", "frozen"): (22476, 257658),
    ("sessions", "revalidate"): (22152, 253704),
    ("reconfigure", "frozen"): (15404, 115894),
    ("reconfigure", "revalidate"): (14618, 109491),
    ("resources", "frozen"): (623, 4822),
    ("resources", "revalidate"): (603, 4628),
}


@pytest.mark.slow
def test_standard_suite_has_no_violation_and_its_pinned_size(standard_runs: list[Run]):
    """INV-1..INV-16 on every reachable state and transition; LIVE-1..LIVE-3 on every drain."""
    sizes = {(r.part, r.policy): (r.report.states, r.report.transitions) for r in standard_runs}
    assert sizes == PINNED
    for run in standard_runs:
        assert run.report.complete
        assert run.report.violations == ()


@pytest.mark.slow
def test_standard_suite_reaches_every_interesting_situation(standard_runs: list[Run]):
    """Non-vacuity: the suite really exercises what the invariants talk about."""
    seen = {(kind, effect) for r in standard_runs for kind, effect, _ in r.report.effects}
    effects = {effect for _, effect in seen}
    for wanted in (
        "publish, refresh installed",
        "refresh unchanged",
        "refresh rejected (invalid)",
        "refresh rejected (collision)",
        "refresh rejected (list_failed)",
        "refresh rejected (disconnected)",
        "result unsupported",
        "result unavailable",
        "result error",
        "refuse duplicate call_id",
        "drop late answer",
        "result cancelled, send notifications/cancelled",
        "result timed_out, send notifications/cancelled",
    ):
        assert wanted in effects, wanted
    assert ("call_responded", "result ok, send tools/call") in seen  # the lane hands off
    assert ("deny", "result denied") in seen  # INV-10: the approval part
    assert ("approve", "send tools/call") in seen
    assert ("approve", "result failed") in seen  # approved after a disconnect
    assert ("disconnect", "refresh rejected (disconnected), result failed") in seen
    assert ("call", "send tools/list") in seen  # INV-11: a call wakes a dormant server
    assert ("list_done", "refresh unchanged, send tools/call") in seen  # the start settles
    assert ("list_failed", "refresh rejected (list_failed), send tools/call") in seen
    # INV-12: close ends calls in flight (with their cancellations, before the sessions
    # close), calls not yet sent, refreshes in flight; a call after close is refused.
    closes = {effect for kind, effect in seen if kind == "close"}
    assert "result cancelled, send close, send notifications/cancelled" in closes
    assert "result cancelled, send close" in closes
    assert any("refresh rejected (closed)" in effect for effect in closes)
    assert ("call", "refuse call after close") in seen
    # SPEC §8.12: a task ends with its status; ended early (cancel, timeout, a failed
    # poll, close) it gets tasks/cancel; a status after the end is dropped.
    assert ("task_created", "state only") in seen
    assert ("task_status", "result ok") in seen
    assert ("task_status", "result error") in seen
    assert ("task_status", "result failed") in seen
    assert ("task_status", "drop late answer") in seen
    assert ("cancel", "result cancelled, send tasks/cancel") in seen
    assert ("timeout", "result timed_out, send tasks/cancel") in seen
    assert ("call_failed", "result failed, send tasks/cancel") in seen
    assert "result cancelled, send close, send tasks/cancel" in closes
    # SPEC §5.7, §8.13: a relisten refreshes (or queues one behind the refresh running); an
    # expired session fails the other calls in flight, ends the refresh in flight and
    # lists anew; a call refused again after its resend ends failed.
    assert ("stream_ended", "state only") in seen
    assert ("relisten", "send tools/list") in seen
    assert ("relisten", "state only") in seen
    assert ("list_changed", "state only") in seen
    expiries = {effect for kind, effect in seen if kind == "session_expired"}
    assert "send tools/list" in expiries
    assert "refresh rejected (disconnected), result failed, send tools/list" in expiries
    assert "result failed, send tools/call, send tools/list" in expiries  # the lane hands off
    # SPEC §3.7 (INV-15, INV-16): a reconfiguration ends the calls on what it removes or
    # replaces (a sent one with its cancellation, before the close), publishes the removal
    # once, frees the lane for a kept server's queued call; a replacement that fails or
    # loses its connection first removes the old catalog.
    reconfigurations = {effect for kind, effect in seen if kind == "reconfigure"}
    assert "send tools/list" in reconfigurations  # nothing installed yet: G stays
    assert (
        "publish, result cancelled, send close, send notifications/cancelled, send tools/call, "
        "send tools/list"
    ) in reconfigurations
    assert any("refresh rejected (reconfigured)" in effect for effect in reconfigurations)
    assert ("list_failed", "publish, refresh rejected (list_failed)") in seen
    assert ("disconnect", "publish, refresh rejected (disconnected), result failed") in seen


@pytest.mark.slow
def test_spec_transition_table_is_generated_from_the_model(standard_runs: list[Run]):
    table = render((k, e) for r in standard_runs for k, e, _ in r.report.effects)
    text = SPEC.read_text(encoding="utf-8")
    current = text[text.index(BEGIN) : text.index(END) + len(END)]
    assert current == table, "run scripts/update-spec-table and commit SPEC.md"


def test_breadth_first_search_reports_a_shortest_trace():
    """snapshot_by_reference breaks INV-2 after: sample, then the first install."""
    m = next(m for m in MUTANTS if m.name == "snapshot_by_reference")
    bound = standard_suite("revalidate")[0].bound
    report = explore(bound, m, stop_on="INV-2")
    (violation,) = [v for v in report.violations if v.invariant == "INV-2"]
    assert [e.kind for e in violation.trace] == ["sample", "list_done"]


def test_depth_limit_cuts_the_search_and_says_so():
    bound = standard_suite("revalidate")[1].bound
    report = explore(bound, max_depth=3)
    assert not report.complete
    assert report.depth == 3
    assert report.violations == ()


def test_liveness_catches_a_drain_that_can_run_forever():
    state = standard_suite("revalidate")[0].bound
    from mcpbind.model import initial

    s0 = initial(state).state
    # two states draining into each other, no drain-terminal state
    failures = liveness_failures([s0, s0], [[1], [0]])
    assert {inv for inv, _, _ in failures} == {"LIVE-1", "LIVE-2", "LIVE-3"}
    assert liveness_failures([s0, s0], [[1], []]) == []


def test_cli_explore_json_reports_the_bound_counts_and_no_violation():
    # One server: 8,031 states in ten parts, a fifth of the CPU of two servers' 38,587.
    args = ("--servers", "1", "--steps", "1", "--calls", "1", "--policy", "frozen", "--json")
    done = mcpbind("explore", *args)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) >= {"bound", "states", "transitions", "depth", "seconds", "violations"}
    assert result["violations"] == []
    assert result["bound"]["policies"] == ["frozen"]
    parts = [p["name"] for p in result["bound"]["parts"]]
    assert parts == [
        "catalogs",
        "calls",
        "approval",
        "sessions",
        "reconfigure",
        "lazy",
        "retry",
        "progress",
        "tasks",
        "resources",
    ]
    assert result["states"] == sum(r["states"] for r in result["runs"]) > 1000
    # the rate of each run and of the whole, states per second of wall clock
    # (seconds are rounded to the millisecond, the rate to the state)
    for entry in (result, *result["runs"]):
        rate, seconds = entry["states_per_s"], entry["seconds"]
        assert rate > 0
        assert abs(rate * seconds - entry["states"]) <= rate * 0.0005 + seconds + 1
    # and the CPU time each run took in its worker
    assert all(run["cpu_seconds"] > 0 for run in result["runs"])


def test_cli_explore_nightly_bound_parses_and_runs_on_a_tiny_bound():
    done = mcpbind(
        "explore", "--bound", "nightly", "--servers", "1", "--steps", "1", "--calls", "0",
        "--policy", "frozen", "--workers", "1", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["bound"]["suite"] == "nightly"
    assert result["violations"] == []
    calls = {p["name"]: p["calls"] for p in result["bound"]["parts"]}
    assert calls == {name: more for name, (_, more) in NIGHTLY_DEEPER.items()}
    assert result["complete"]
    assert result["states"] == sum(r["states"] for r in result["runs"]) > 0


def test_cli_explore_rejects_an_unknown_bound():
    done = mcpbind("explore", "--bound", "weekly")
    assert done.returncode == 2
    assert "weekly" in done.stderr


def test_cli_explore_mutant_exits_1_with_the_targeted_violation_and_its_trace():
    done = mcpbind("explore", "--mutant", "forget_cancel_notification", "--json")
    assert done.returncode == 1, done.stderr
    violations = json.loads(done.stdout)["violations"]
    # INV-12 sees the same fault once the host closes after it: the cancellation is owed.
    assert {v["invariant"] for v in violations} == {"INV-7", "INV-12"}
    inv_7 = [v for v in violations if v["invariant"] == "INV-7"]
    assert all(v["trace"][-1].startswith(("cancel(", "timeout(")) for v in inv_7)


def test_cli_explore_lists_mutants_one_per_line():
    done = mcpbind("explore", "--list-mutants")
    assert done.returncode == 0
    assert done.stdout.split() == [m.name for m in MUTANTS]


def test_cli_explore_unknown_mutant_is_a_usage_error():
    done = mcpbind("explore", "--mutant", "nope")
    assert done.returncode == 2
    assert "unknown mutant 'nope'" in done.stderr
    assert "forget_cancel_notification" in done.stderr
