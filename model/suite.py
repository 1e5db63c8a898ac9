"""The standard suite explored in parallel (SPEC §10.3): every part under every policy.

Used by ``mcpbind explore``, ``mcpbind check``, the tests and ``scripts/update-spec-table``.
Each part runs in a worker process of its own (the explorer is CPU-bound and pure), under
every policy asked for, one after the other, the later ones reusing what the first
computed without reading the policy (SPEC §10.8); the results come back in the suite's
order whatever order the workers finish in.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.pool
import os
import signal
from collections.abc import Callable, Iterator

import attrs

from .bounds import Suite, suite
from .explore import Report, Shared, collector_paused, explore
from .rules import STANDARD, Rules
from .values import Policy

__all__ = ["Run", "SuiteJob", "run_job", "run_suite", "suite_jobs"]


@attrs.frozen
class _Job:
    part: str
    policies: tuple[Policy, ...]
    servers: int
    steps: int | None
    calls: int | None
    depth: int | None
    mutant: str | None
    effects: bool = False
    suite: Suite = "standard"


SuiteJob = _Job
"""One part of the standard suite under its policies, to explore (:func:`suite_jobs`)."""


@attrs.frozen
class Run:
    """One part of the standard suite explored under one policy."""

    part: str
    policy: Policy
    report: Report


def _rules(mutant_name: str | None) -> Rules:
    if mutant_name is None:
        return STANDARD
    from .mutants import mutant  # noqa: PLC0415 - mutants load only on request

    return mutant(mutant_name)


def _run_job(job: _Job) -> list[Run]:
    # The collector stays off until the first policy's graph, kept in ``shared`` for the
    # others, is freed: this function's locals are, on return.
    with collector_paused():
        return _explore_job(job)


def _explore_job(job: _Job) -> list[Run]:
    rules = _rules(job.mutant)
    stop_on = getattr(rules, "target", None) or None
    shared = Shared() if len(job.policies) > 1 else None
    runs = []
    for policy in job.policies:
        parts = suite(job.suite, policy, servers=job.servers, steps=job.steps, calls=job.calls)
        part = next(p for p in parts if p.name == job.part)
        report = explore(
            part.bound,
            rules,
            max_depth=job.depth,
            stop_on=stop_on,
            effects=job.effects,
            shared=shared,
        )
        runs.append(Run(job.part, policy, report))
    return runs


def suite_jobs(
    *,
    policies: tuple[Policy, ...] = ("frozen", "revalidate"),
    servers: int = 2,
    steps: int | None = None,
    calls: int | None = None,
    depth: int | None = None,
    mutant: str | None = None,
    effects: bool = False,
    bound: Suite = "standard",
) -> list[SuiteJob]:
    """The suite's runs as jobs, one per part, under every policy, in the suite's order;
    :func:`run_job` runs one (in any process: a job is plain data). For a caller that
    schedules the parts with other work (``mcpbind check``). ``bound="nightly"``: the
    nightly bound's parts (SPEC §10.6)."""
    return [
        _Job(part.name, policies, servers, steps, calls, depth, mutant, effects, bound)
        for part in suite(bound, policies[0], servers=servers, steps=steps, calls=calls)
    ]


def run_job(job: SuiteJob) -> list[Run]:
    """Explore one part of the suite under its policies, in order (a job of
    :func:`suite_jobs`): one :class:`Run` per policy."""
    return _run_job(job)


_WEIGHTS = {
    "catalogs": 10.1,  # pragma: no mutate
    "calls": 10.0,  # pragma: no mutate
    "approval": 7.5,  # pragma: no mutate
    "sessions": 6.7,  # pragma: no mutate
    "lazy": 4.9,  # pragma: no mutate
    "retry": 3.4,  # pragma: no mutate
    "reconfigure": 3.4,  # pragma: no mutate
    "tasks": 2.6,  # pragma: no mutate
    "progress": 0.9,  # pragma: no mutate
    "resources": 0.1,  # pragma: no mutate
}
"""CPU seconds of each part under both policies (the standard suite's ``cpu_seconds``,
load 16): the order the workers are handed the parts in, heaviest first (a part not
named: 1). The nightly bound's parts keep the same order. Not mutated (issue 33): a
weight orders the work and nothing else; the runs come back in the suite's order."""


def _run_indexed(indexed: tuple[int, _Job]) -> tuple[int, list[Run]]:
    return indexed[0], _run_job(indexed[1])


def run_suite(
    *,
    policies: tuple[Policy, ...] = ("frozen", "revalidate"),
    servers: int = 2,
    steps: int | None = None,
    calls: int | None = None,
    depth: int | None = None,
    mutant: str | None = None,
    workers: int | None = None,
    effects: bool = False,
    on_run: Callable[[Run, int], None] | None = None,
    bound: Suite = "standard",
) -> list[Run]:
    """Explore every part of the standard suite under every policy, in parallel: one
    :class:`Run` per policy and part, policies outermost, parts in the suite's order.
    ``mutant`` names a model mutant (:mod:`.mutants`) to explore instead of the rules,
    stopping at its target's first violation; an unknown name raises ``KeyError`` before
    any process starts. ``on_run(run, total)`` hears each run as it ends (progress).
    ``bound="nightly"`` explores the nightly bound's parts instead (SPEC §10.6)."""
    _rules(mutant)
    jobs = suite_jobs(
        policies=policies,
        servers=servers,
        steps=steps,
        calls=calls,
        depth=depth,
        mutant=mutant,
        effects=effects,
        bound=bound,
    )
    count = min(len(jobs), workers or os.cpu_count() or 1)
    heard = on_run or (lambda run, total: None)
    total = len(jobs) * len(policies)
    runs: list[list[Run]] = [[] for _ in jobs]
    if count <= 1:
        for i, job in enumerate(jobs):
            runs[i] = _run_job(job)
            for run in runs[i]:
                heard(run, total)
    else:
        # A multiprocessing pool, not concurrent.futures: leaving it terminates the
        # workers, so Ctrl-C stops at once; the workers ignore SIGINT (one line from the
        # parent). One job at a time, the heaviest first, so that no long one starts last.
        order = sorted(enumerate(jobs), key=lambda job: -_WEIGHTS.get(job[1].part, 1.0))
        with worker_pool(count, _ignore_sigint) as pool:
            for i, part_runs in pool.imap_unordered(_run_indexed, order):
                runs[i] = part_runs
                for run in part_runs:
                    heard(run, total)
    # Policies outermost, parts in the suite's order.
    return [part_runs[k] for k in range(len(policies)) for part_runs in runs]


@contextlib.contextmanager
def worker_pool(
    count: int,
    initializer: Callable[..., None],
    method: str | None = None,
    initargs: tuple[object, ...] = (),
) -> Iterator[multiprocessing.pool.Pool]:
    """A pool whose workers never see SIGINT: created with it blocked (the mask is
    inherited), so a terminal's Ctrl-C, sent to the whole process group, reaches the
    parent alone, even before a worker's initializer has run. A Ctrl-C while the pool is
    made lands once it is made, inside ``with``: the workers are always ended."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        context = multiprocessing.get_context(method)
        pool = context.Pool(count, initializer=initializer, initargs=initargs)
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        raise
    with pool:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        yield pool


def _ignore_sigint() -> None:
    """In a worker process: Ctrl-C is the parent's to report."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
