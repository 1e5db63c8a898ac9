"""The jobs of ``mcpbind check`` and the worker processes that run them (SPEC §12.8).

Every stage splits into jobs that need nothing from each other: the explorer into the
standard suite's parts, the odometer into shards (its sequences by their first event,
``machines.odometer_shards``), the corpus into its files, the machines into one job per
machine and policy. One pool of worker processes, one per core, takes them from one
queue, longest first, so that the explorer's parts and the runtime's checks share the
cores and end together. A job's outcome is plain data, so that the parent assembles the
report in the stages' order whatever order the jobs end in; each job is as deterministic
as it was when the stages ran one after the other (a derandomised Hypothesis run depends
on its test alone, the odometer on its prefix).
"""

from __future__ import annotations

import contextlib
import pathlib
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from mcpbind.model.suite import Run, SuiteJob, run_job, worker_pool
from mcpbind.properties.variants import LOCKSTEP_VARIANTS

__all__ = ["EXPLORER", "WEIGHTS", "Failed", "Job", "Outcome", "explore_weight", "running"]

WEIGHTS = {
    "odometer revalidate": 80.0,
    "odometer frozen": 8.0,
    "real-servers": 20.0,
    "lockstep-streams": 10.0,
    "lockstep-reconfigure": 10.0,
    "lockstep-deferral": 25.0,
}
"""Seconds on one core of the longest stages (ci profile, measured at load 3-7), for the
queue's order only: the longest job first, so that no long job starts last. The
odometer's are split evenly over its shards; a machine not named here counts 6 s."""

EXPLORER = {
    "catalogs": 15.0,
    "calls": 16.0,
    "approval": 11.0,
    "sessions": 10.0,
    "lazy": 7.0,
    "tasks": 5.0,
    "retry": 5.0,
    "reconfigure": 4.5,
    "progress": 1.5,
}
"""Likewise, the explorer's parts under both policies (a part not named: 5 s)."""


def explore_weight(part: str) -> float:
    """A part's place in the queue (:data:`EXPLORER`)."""
    return EXPLORER.get(part, 5.0)


@attrs.frozen
class Job:
    """One unit of a stage; ``name``: the explorer's part, the machine, the replay file."""

    stage: str
    name: str
    policy: str
    weight: float
    depth: int = 0
    prefix: tuple[int, ...] = ()
    part: SuiteJob | None = None


@attrs.frozen
class Failed:
    """A :class:`~mcpbind.properties.lockstep.MachineFailure`, as plain data."""

    check: str
    detail: str
    trace: tuple[str, ...]
    boundary: str

    def error(self) -> Any:
        from mcpbind.properties.lockstep import MachineFailure  # noqa: PLC0415

        return MachineFailure(self.check, self.detail, self.trace, self.boundary)


@attrs.frozen
class Outcome:
    """What a job found: its counts, or how it failed; ``seconds``: the time it took."""

    seconds: float
    explored: tuple[Run, ...] = ()
    """An explorer job's runs: its part under each policy."""
    runs: int = 0
    steps: int = 0
    examples: int = 0
    failure: Failed | None = None
    mismatch: str | None = None
    """A replay file whose events no longer fit the model."""


def run_one(job: Job) -> Outcome:
    """Run ``job`` in this process."""
    from mcpbind.properties.chooser import ReplayMismatch  # noqa: PLC0415
    from mcpbind.properties.lockstep import MachineFailure  # noqa: PLC0415

    begun = time.perf_counter()
    counts: dict[str, Any] = {}
    try:
        _run(job, counts)
    except MachineFailure as error:
        counts["failure"] = Failed(error.check, error.detail, tuple(error.trace), error.boundary)
    except ReplayMismatch as error:
        counts["mismatch"] = f"{job.name} does not replay: {error}"
    return Outcome(seconds=time.perf_counter() - begun, **counts)


def _run(job: Job, counts: dict[str, Any]) -> None:
    """Run ``job``; what it counts goes into ``counts`` as it goes (a failure keeps it)."""
    from mcpbind.properties import machines  # noqa: PLC0415

    if job.stage == "explore":
        assert job.part is not None
        counts["explored"] = tuple(run_job(job.part))
    elif job.stage == "odometer":
        report = machines.run_odometer(job.policy, job.depth, prefix=job.prefix)  # type: ignore[arg-type]
        counts.update(runs=report.runs, steps=report.steps)
    elif job.stage == "replays":
        counts["steps"] = len(machines.run_replay(pathlib.Path(job.name)))
    elif job.name == "real-servers":  # real I/O: its garbage is left to the collector
        counts["examples"] = 0

        def hook() -> None:
            counts["examples"] += 1

        _machine(job, hook)()
    else:
        counts["examples"] = 0
        # A lockstep example's garbage is collected between examples, not during them:
        # the collector's CPU in a machine falls from about 15% to about 4%.
        with machines.collecting_every(machines.GC_EXAMPLES) as between_runs:

            def counted() -> None:
                counts["examples"] += 1
                between_runs()

            _machine(job, counted)()


def _machine(job: Job, hook: Callable[[], None]) -> Callable[[], None]:
    from mcpbind.properties.machines import lockstep_property  # noqa: PLC0415
    from mcpbind.properties.realservers import real_servers_property  # noqa: PLC0415

    if job.name == "real-servers":
        return _counting(real_servers_property(), hook)
    variant = LOCKSTEP_VARIANTS[job.name]
    test: Callable[[], None] = lockstep_property(
        job.policy,  # type: ignore[arg-type]
        on_example=hook,
        variant=variant,
    )
    return test


def _counting(test: Callable[[], None], hook: Callable[[], None]) -> Callable[[], None]:
    inner = test.hypothesis.inner_test  # type: ignore[attr-defined]

    def counted(*args: Any, **kwargs: Any) -> None:
        hook()
        inner(*args, **kwargs)

    test.hypothesis.inner_test = counted  # type: ignore[attr-defined]
    return test


@contextlib.contextmanager
def running(
    jobs: Sequence[Job], workers: int, profile: str
) -> Iterator[Iterator[tuple[int, Outcome]]]:
    """Each job's index and outcome, as they end: in ``workers`` processes (one: in this
    one, in order), the heaviest first. The workers start on entering (before a live
    progress line starts its thread: they are forked) and end on leaving."""
    order = sorted(range(len(jobs)), key=lambda i: (-jobs[i].weight, i))
    if workers <= 1 or len(jobs) <= 1:
        yield ((i, run_one(jobs[i])) for i in order)
        return
    # Forked (the default on Linux): the workers start with what this process imported.
    with worker_pool(min(workers, len(jobs)), _start_worker, initargs=(profile,)) as pool:
        yield pool.imap_unordered(_run_indexed, [(i, jobs[i]) for i in order])


def _run_indexed(indexed: tuple[int, Job]) -> tuple[int, Outcome]:
    return indexed[0], run_one(indexed[1])


def _start_worker(profile: str) -> None:
    """In a worker: Ctrl-C is the parent's to report; the parent's Hypothesis profile."""
    from mcpbind.properties import profiles  # noqa: PLC0415

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    profiles.load(profile)
