"""The property machines (SPEC §13, issue 4), continued: the odometer, every sequence of
events up to a depth against the runtime, and its shards (SPEC §12.8). A module of its
own: the longest test of the machines, which pytest-xdist's ``--dist loadfile`` can then
run beside the others."""

from __future__ import annotations

import gc
import weakref
from collections import Counter

import pytest

from mcpbind.properties import profiles
from mcpbind.properties.chooser import Odometer
from mcpbind.properties.machines import collecting_every, odometer_shards, run_odometer

profiles.load()

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(("policy", "depth"), [("revalidate", 4), ("frozen", 3)])
def test_runtime_refines_the_model_on_every_sequence_up_to_a_depth(policy, depth):
    """Among them, a cancel of a call that ended and listings answered at close."""
    reached: Counter[str] = Counter()
    report = run_odometer(policy, depth, coverage=reached)
    assert report.runs > 1000
    assert reached["cancel after end"] > 0
    assert reached["close during list"] > 0


def test_odometer_enumerates_every_sequence_once():
    seen = []
    odometer = Odometer(depth=2)
    while True:
        seen.append((odometer.choose("ab", "x"), odometer.choose("xyz", "y")))
        if not odometer.advance():
            break
    assert seen == [(a, b) for a in "ab" for b in "xyz"]


def test_odometer_with_a_prefix_enumerates_the_sequences_that_begin_with_it():
    seen = []
    odometer = Odometer(depth=2, prefix=(1,))
    while True:
        seen.append((odometer.choose("ab", "x"), odometer.choose("xyz", "y")))
        if not odometer.advance():
            break
    assert seen == [("b", x) for x in "xyz"]
    assert odometer.runs == 3


def test_odometer_shards_together_run_exactly_the_odometers_sequences():
    whole = run_odometer("frozen", 2)
    shards = odometer_shards("frozen", 2)
    assert len(shards) > 1
    parts = [run_odometer("frozen", 2, prefix=shard) for shard in shards]
    assert sum(p.runs for p in parts) == whole.runs
    assert sum(p.steps for p in parts) == whole.steps


class _Cycle:
    """Garbage only the collector frees: it refers to itself."""

    def __init__(self) -> None:
        self.me = self


def test_between_runs_the_paused_collector_frees_a_runs_cycles_every_nth_call():
    """The machines' and the odometer's runs keep the collector off; their cycles are
    freed by the call that completes each ``runs`` calls, and the collector is on again
    after."""
    assert gc.isenabled()
    with collecting_every(3) as between_runs:
        assert not gc.isenabled()
        garbage = _Cycle()
        gone = weakref.ref(garbage)
        del garbage
        between_runs()
        between_runs()
        assert gone() is not None  # two calls of three: not yet
        between_runs()
        assert gone() is None
    assert gc.isenabled()


def test_a_collector_paused_by_its_caller_stays_paused():
    gc.disable()
    try:
        with collecting_every(2):
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
