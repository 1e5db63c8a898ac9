"""SPEC §10.4: every model mutant is caught by the invariant it targets, with a trace that
replays, and the invariants' triggers hide no violation. Apart from the standard suite's
tests (``test_explorer.py``), so that under pytest-xdist's ``--dist loadfile`` the two
heaviest groups of explorations can run on different workers."""

from __future__ import annotations

import functools
import json

import attrs
import pytest

from mcpbind.cli import mutants as cli_mutants
from mcpbind.cli.main import main
from mcpbind.model import Bound, Rules, explore
from mcpbind.model.bounds import standard_suite
from mcpbind.model.explore import LIVENESS, Report, Shared, replay
from mcpbind.model.mutants import MUTANTS, Mutant


def explored(
    name: str,
    policy: str,
    *,
    stop_on: str | None = None,
    max_depth: int | None = None,
    every_transition: bool = False,
) -> Report:
    """The explorer on the standard part a model mutant breaks (:func:`explore_once`)."""
    m = next(m for m in MUTANTS if m.name == name)
    part = next(p for p in standard_suite(policy) if p.name == m.part)
    return explore_once(
        part.bound, m, stop_on=stop_on, max_depth=max_depth, every_transition=every_transition
    )


def explore_once(
    bound: Bound,
    rules: Rules,
    *,
    stop_on: str | None = None,
    max_depth: int | None = None,
    every_transition: bool = False,
) -> Report:
    """:func:`explore`, each search run once. The search is deterministic, so the tests
    that ask the same one share a run: for a safety mutant, the one ``mcpbind check``
    runs (up to the target, triggers on) is ``first_violation_of``'s, ``verdicts``' (the
    one with triggers), the policy-reuse test's and ``check --mutants``' own. The limits
    are passed in one order, so a search asked with a default spelled out or left out
    is the same one. Under pytest-xdist the module runs on one worker (``--dist
    loadfile``), so they share it there too."""
    return _explore_once(bound, rules, stop_on, max_depth, every_transition)


@functools.cache
def _explore_once(
    bound: Bound, rules: Rules, stop_on: str | None, max_depth: int | None, every: bool
) -> Report:
    return explore(bound, rules, stop_on=stop_on, max_depth=max_depth, every_transition=every)


def first_violation_of(m: Mutant):
    for policy in ("revalidate", "frozen"):
        part = next(p for p in standard_suite(policy) if p.name == m.part)
        report = explored(m.name, policy, stop_on=m.target)
        hit = [v for v in report.violations if v.invariant == m.target]
        if hit:
            return part.bound, hit[0]
    return None, None


@pytest.mark.parametrize("m", MUTANTS, ids=lambda m: m.name)
def test_every_model_mutant_is_caught_by_the_invariant_it_targets(m: Mutant):
    bound, violation = first_violation_of(m)
    assert violation is not None, f"{m.name} survived: {m.target} never failed"
    assert violation.trace, "a violation comes with its trace"
    if m.target.startswith("INV"):
        # the shortest trace replays to the same failure through the guarded step()
        found = {inv for inv, _ in replay(bound, violation.trace, m)}
        assert m.target in found
        # ... and the standard rules accept every prefix without any failure
        assert replay(bound, violation.trace[:-1]) == []


def verdicts(
    m: Mutant, policy: str, *, every: bool, remembered: bool = True
) -> dict[str, tuple[object, ...]]:
    """The violations the explorer finds for ``m`` (each id with its shortest trace): the
    search ``mcpbind check`` runs (up to the target) for a safety mutant, the graph up to
    depth 6 for a liveness one (a full graph of a broken rule set need not be finite).
    ``remembered=False``: a run of its own, for invariants changed by the caller."""
    limits: dict[str, object] = (
        {"stop_on": m.target} if m.target.startswith("INV") else {"max_depth": 6}
    )
    if remembered:
        report = explored(m.name, policy, every_transition=every, **limits)  # type: ignore[arg-type]
    else:
        part = next(p for p in standard_suite(policy) if p.name == m.part)
        report = explore(part.bound, m, every_transition=every, **limits)  # type: ignore[arg-type]
    return {v.invariant: v.trace for v in report.violations}


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
@pytest.mark.parametrize("m", MUTANTS, ids=lambda m: m.name)
def test_invariant_triggers_hide_no_violation_of_any_mutant(m: Mutant, policy: str):
    """``Invariant.triggers`` only skips checks that cannot fail: checking every transition
    invariant on every transition finds the same violations, with the same traces."""
    assert verdicts(m, policy, every=False) == verdicts(m, policy, every=True)


@pytest.mark.parametrize("m", MUTANTS, ids=lambda m: m.name)
def test_the_second_policy_reusing_the_first_finds_every_mutant_violation_the_same(m: Mutant):
    """SPEC §10.8: exploring a part under frozen, then under revalidate reusing every
    transition and check that did not read the policy, gives each policy the report it
    gets alone: the same violations with the same traces, the same sizes and effects."""
    limits: dict[str, object] = (
        {"stop_on": m.target} if m.target.startswith("INV") else {"max_depth": 6}
    )
    shared = Shared()
    for policy in ("frozen", "revalidate"):
        part = next(p for p in standard_suite(policy) if p.name == m.part)
        alone = explored(m.name, policy, **limits)  # type: ignore[arg-type]
        reused = explore(part.bound, m, shared=shared, **limits)  # type: ignore[arg-type]
        assert attrs.evolve(reused, seconds=0) == attrs.evolve(alone, seconds=0)


def test_policy_reads_are_seen_so_a_policy_sensitive_transition_is_not_reused():
    """The transitions that read the policy are computed again under the other one: the
    progress part's sizes differ by policy (SPEC §10.3) and come out as pinned with reuse."""
    shared = Shared()
    sizes = []
    for policy in ("frozen", "revalidate"):
        part = next(p for p in standard_suite(policy) if p.name == "progress")
        report = explore(part.bound, shared=shared)
        sizes.append((report.states, report.transitions))
    assert sizes == [(4180, 40054), (4080, 38988)]


def test_a_trigger_set_that_hides_a_violation_is_caught(monkeypatch):
    """The comparison above can fail: give INV-7 (a transition invariant only) a trigger
    that a forgotten cancellation never touches, and the filtered run misses what the
    unfiltered one finds."""
    from mcpbind.model import invariants

    narrowed = tuple(
        (inv, predicate, frozenset({"published"}) if inv == "INV-7" else triggers)
        for inv, predicate, triggers in invariants._TRANSITION_CHECKS
    )
    monkeypatch.setattr(invariants, "_TRANSITION_CHECKS", narrowed)
    m = next(m for m in MUTANTS if m.name == "forget_cancel_notification")
    filtered = verdicts(m, "revalidate", every=False, remembered=False)
    every = verdicts(m, "revalidate", every=True, remembered=False)
    assert "INV-7" in every
    assert filtered != every


def test_mutant_names_are_unique_and_each_names_a_known_invariant():
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names))
    ids = {f"INV-{n}" for n in range(1, 17)} | set(LIVENESS)
    assert {m.target for m in MUTANTS} == ids  # at least one mutant per invariant


def test_cli_check_mutants_reports_every_mutant_killed(tmp_path, capsys, monkeypatch):
    """``mcpbind check --stages mutants`` run in this process (what is checked is its
    report, not the process): its explorations of the model mutants are the searches
    this module's tests run (:func:`explore_once`), each run once; the runtime mutants
    are its own, killed through the replay corpus."""
    monkeypatch.setattr(cli_mutants, "explore", explore_once)
    status = main(["check", "--stages", "mutants", "--json", "--failures", str(tmp_path)])
    out, err = capsys.readouterr()
    assert status == 0, out + err
    mutants = json.loads(out)["mutants"]
    assert {m["kind"] for m in mutants} == {"model", "runtime"}
    assert len(mutants) >= 8 + 8
    for m in mutants:
        assert m["killed"], m
        assert m["invariant"].startswith(("INV-", "LIVE-"))
