"""The property machines (SPEC §13, issue 4), continued: the machines on asyncio, the
replay corpus and the runtime mutants. Apart from the random interleavings
(``test_properties_lockstep.py``) and the odometer (``test_properties_odometer.py``) so
that pytest-xdist's ``--dist loadfile`` can run the three on different workers."""

from __future__ import annotations

import json
import pathlib

import pytest
from cli_runner import mcpbind
from hypothesis import settings

from mcpbind.model.values import EVENT_KINDS
from mcpbind.properties import profiles
from mcpbind.properties.chooser import ReplayChooser, ReplayMismatch
from mcpbind.properties.impl_mutants import IMPL_MUTANTS, ImplMutant
from mcpbind.properties.lockstep import KIND_ORDER, MachineFailure, replay_file, run_machine
from mcpbind.properties.machines import (
    kill_impl_mutant,
    lockstep_bound,
    lockstep_property,
    run_replay,
)
from mcpbind.properties.realservers import real_servers_property
from mcpbind.properties.variants import LOCKSTEP_VARIANTS, PLAIN, LockstepVariant

REPLAYS = sorted((pathlib.Path(__file__).parent / "replays").glob("*.json"))

#: Event kinds of the model that the lockstep machine does not drive yet. Whoever teaches
#: the machine one moves it into ``KIND_ORDER``.
NOT_YET_DRIVEN: tuple[str, ...] = ()

profiles.load()

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "variant",
    [PLAIN, LockstepVariant(lazy=True), LockstepVariant(reconfigure=True)],
    ids=["plain", "lazy", "reconfigure"],
)
def test_runtime_on_asyncio_refines_the_model_on_random_interleavings(variant):
    """The same runtime on asyncio (SPEC §11.13): a small budget in CI, the machine on a
    virtual-time event loop (``properties/schedulers.py``)."""
    settings(max_examples=40)(lockstep_property("revalidate", backend="asyncio", variant=variant))()


@pytest.mark.parametrize("path", REPLAYS, ids=lambda p: p.stem)
def test_replay_corpus_passes_on_asyncio_and_each_mutant_replay_still_kills_it(path):
    events = json.loads(path.read_text())["events"]
    assert run_replay(path, backend="asyncio") == events
    mutant = next((m for m in IMPL_MUTANTS if m.name == path.stem), None)
    if mutant is not None:
        with pytest.raises(MachineFailure):
            run_replay(path, seams=mutant.seams, backend="asyncio")


def test_real_servers_keep_the_invariants_and_end_every_call_once():
    """INV-1..INV-5 and one result per call_id over real in-process MCPServers."""
    real_servers_property()()


def test_the_machine_orders_every_event_kind_once():
    assert sorted((*KIND_ORDER, *NOT_YET_DRIVEN)) == sorted(EVENT_KINDS)
    assert len(set(KIND_ORDER)) == len(KIND_ORDER)


def test_replay_corpus_is_not_empty():
    assert len(REPLAYS) >= 10


@pytest.mark.parametrize("path", REPLAYS, ids=lambda p: p.stem)
def test_replay_corpus_still_passes(path):
    assert run_replay(path) == json.loads(path.read_text())["events"]


@pytest.mark.parametrize("mutant", IMPL_MUTANTS, ids=lambda m: m.name)
def test_every_runtime_mutant_is_killed_within_the_ci_profile(mutant: ImplMutant):
    report = kill_impl_mutant(mutant.name, REPLAYS[0].parent)
    assert report.killed, f"{mutant.name} survived {report.examples} runs"


def test_runtime_mutant_targets_cover_every_safety_invariant_but_liveness_one():
    targets = {m.target for m in IMPL_MUTANTS}
    assert targets >= {f"INV-{n}" for n in range(1, 14)}


def test_a_replay_of_a_mutant_kill_fails_on_that_mutant_with_the_same_trace():
    path = pathlib.Path(__file__).parent / "replays" / "late_answer_becomes_a_result.json"
    events = json.loads(path.read_text())["events"]
    mutant = next(m for m in IMPL_MUTANTS if m.name == "late_answer_becomes_a_result")
    with pytest.raises(MachineFailure) as failure:
        run_replay(path, seams=mutant.seams)
    assert failure.value.trace == events
    assert "('result', 'c1', 'ok', None)" in str(failure.value)


@pytest.mark.parametrize("name", ["send_once_connected", "fail_fast_when_dormant"])
def test_a_lazy_replay_fails_on_its_mutant_and_passes_on_the_runtime(name):
    """INV-11: the replay files carry ``"lazy": true`` and run the lazily started bound."""
    path = pathlib.Path(__file__).parent / "replays" / f"{name}.json"
    assert json.loads(path.read_text())["lazy"] is True
    assert run_replay(path) == json.loads(path.read_text())["events"]
    mutant = next(m for m in IMPL_MUTANTS if m.name == name)
    with pytest.raises(MachineFailure, match="trace refinement"):
        run_replay(path, seams=mutant.seams)


def test_replay_refuses_an_event_the_model_does_not_allow():
    with pytest.raises(ReplayMismatch, match=r"step 0: reconnect is not allowed here"):
        run_machine(lockstep_bound("revalidate"), ReplayChooser(["reconnect(server='git.hub')"]))


def test_check_reports_the_same_with_one_worker_or_two(tmp_path):
    """The stages' jobs in one process or two (SPEC §12.8): the same report, in order."""
    reports = []
    for workers in ("1", "2"):
        args = ("check", "--stages", "replays", "--workers", workers, "--json")
        done = mcpbind(*args, "--profile", "ci", "--failures", str(tmp_path))
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        del report["seconds"]
        reports.append(report)
    assert reports[0] == reports[1]
    assert reports[0]["replays"]["passed"] == len(REPLAYS)


def test_check_prints_each_stage_when_it_starts_and_when_its_last_job_ends(tmp_path):
    done = mcpbind("check", "--stages", "replays", "--workers", "2", "--failures", str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith("  … replay corpus in ")
    assert lines[1].startswith(f"  ok   replay corpus: {len(REPLAYS)}/{len(REPLAYS)} passed (")
    assert f"replays:    {len(REPLAYS)}/{len(REPLAYS)} file(s)" in done.stdout


def test_cli_check_replay_runs_one_file_against_model_and_runtime():
    done = mcpbind("check", "--replay", str(REPLAYS[0]), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert report["replays"]["files"] == 1


def test_check_writes_each_lockstep_variant_as_a_replay_of_that_variant(tmp_path):
    """SPEC §12.3: a replay file carries the variant of the machine that failed, so it
    replays the same bound: before any call, git.hub is listing in the plain bound and
    dormant in the lazy one."""
    assert dict(LOCKSTEP_VARIANTS) == {
        "lockstep": LockstepVariant(),
        "lockstep-approval": LockstepVariant(approval=True),
        "lockstep-lazy": LockstepVariant(lazy=True),
        "lockstep-progress": LockstepVariant(progress=True),
        "lockstep-tasks": LockstepVariant(tasks=True),
        "lockstep-streams": LockstepVariant(streams=True),
        "lockstep-reconfigure": LockstepVariant(reconfigure=True),
        "lockstep-deferral": LockstepVariant(deferral=True),
    }
    events = ["list_page(server='git.hub')"]
    for stage, variant in LOCKSTEP_VARIANTS.items():
        path = tmp_path / f"{stage}.json"
        path.write_text(replay_file(events, policy="frozen", variant=variant))
        assert LockstepVariant.from_json(json.loads(path.read_text())) == variant
        # dormant; one page; one server; other servers (a reconfiguration's)
        if variant.lazy or variant.progress or variant.tasks or variant.reconfigure:
            with pytest.raises(ReplayMismatch, match="list_page is not allowed here"):
                run_replay(path)
        else:
            assert run_replay(path) == events
