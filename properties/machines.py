"""The property machines as runnable checks: Hypothesis, the odometer, replay files.

Used by the tests and by ``mcpbind check``; each entry point raises
:class:`~.lockstep.MachineFailure` (with the shrunk event trace) when a check fails.
"""

from __future__ import annotations

import contextlib
import gc
import json
import pathlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

import attrs
from hypothesis import given, note
from hypothesis import strategies as st

from mcpbind.impl.seams import PRODUCTION, Seams
from mcpbind.model.bounds import (
    CALLS_ENVIRONMENT,
    IDLE_SERVERS,
    LAZY_SERVERS,
    SESSION_SERVERS,
    TASK_SERVERS,
    load_bound,
    standard_suite,
)
from mcpbind.model.values import Bound, Environment

from .chooser import DrawChooser, Odometer, Probe, ReplayChooser
from .deferral import DEFER_THRESHOLD
from .lockstep import IDLE_CAP, IDLE_TIMEOUT, run_machine
from .variants import PLAIN, LockstepVariant

__all__ = [
    "KillReport",
    "collecting_every",
    "kill_impl_mutant",
    "lockstep_bound",
    "lockstep_property",
    "odometer_shards",
    "run_odometer",
    "run_replay",
]

Policy = Literal["frozen", "revalidate"]
STEPS = 30
GC_RUNS = 20
"""The odometer collects the young generations' garbage every this many runs."""
GC_EXAMPLES = 5
"""A machine in ``mcpbind check`` collects them every this many examples
(:func:`collecting_every`)."""


@contextlib.contextmanager
def collecting_every(runs: int) -> Iterator[Callable[[], None]]:
    """The garbage collector paused inside; the function given, called between two runs
    (a run's garbage is then unreachable), collects the young generations every ``runs``
    calls. A run of the machines leaves cycles (trio's tasks and cancel scopes, the
    host's objects) that the collector's own young passes walk many times over while
    the run goes on, and its full passes walk the long-lived objects (Hypothesis's tree
    of choices, the model's caches) again; one young pass between runs walks each
    object about once. The collector's way of freeing is the only thing that changes:
    no run sees it (docs/development.md, "Measured durations")."""
    calls = 0

    def between_runs() -> None:
        nonlocal calls
        calls += 1
        if calls % runs == 0:
            gc.collect(1)

    collecting = gc.isenabled()
    gc.disable()
    try:
        yield between_runs
    finally:
        if collecting:
            gc.enable()


def lockstep_bound(policy: Policy, *, calls: int = 3, variant: LockstepVariant = PLAIN) -> Bound:
    """The machine's bound: every scripted version, page and event (rejections unrun too,
    which the explorer leaves to its ``retry`` part); 2 steps, 3 calls. The variant's
    flags change it: with ``approval``, every MCP call also waits for the machine's
    approver (SPEC §3.4); with ``lazy``, ``git.hub`` starts dormant from its cached
    catalog (SPEC §3.5); with ``progress``, only ``git_hub``, with an idle timeout that
    progress re-arms once before the cap (SPEC §8.11), and one step with one call: the
    machine moves the clock to just before that call's deadline for each notification,
    which must pass no other call's deadline; with ``tasks``, the explorer's ``tasks``
    part (installable listings, the calls environment with tasks, late statuses and
    failed polls) for ``git.hub`` only, which may answer calls with tasks (SPEC §8.12),
    2 steps and 2 calls: most runs reach a task; with ``streams``, the machine's own bound
    with ``git.hub`` ending its ``list_changed`` stream and the host listening again (SPEC
    §5.7); with ``reconfigure``, the explorer's ``reconfigure`` part (servers kept,
    removed, changed and added by one reconfiguration, SPEC §3.7) and a second removed
    server (INV-15: two removals, one publication), with every event, 2 steps and the
    calls asked for; with ``deferral``, the machine's own bound in the calls environment
    (SPEC §10.2, with ``list_page`` and late answers) with 3 steps and one call more (a
    search, then a step that shows what it found, then a call of it; the host's
    ``defer_threshold`` is :func:`defer_threshold`'s, SPEC §11.9)."""
    bound = attrs.evolve(
        standard_suite(policy)[0].bound,
        environment=None,
        max_calls=calls,
        approval=variant.approval,
        lazy=LAZY_SERVERS if variant.lazy else (),
    )
    if variant.deferral:
        # The calls environment, git.hub's second page and late answers (the scripted
        # servers may always answer a call the host gave up): faults of other kinds are
        # the other variants'; here the draws go to listings, steps, searches and calls.
        more: frozenset[Environment] = frozenset({"list_page", "late_answer"})
        environment = CALLS_ENVIRONMENT | more
        return attrs.evolve(bound, environment=environment, max_steps=3, max_calls=calls + 1)
    if variant.streams:
        servers = tuple(
            attrs.evolve(s, streams=True, sessions=True) if s.name in SESSION_SERVERS else s
            for s in bound.servers
        )
        return attrs.evolve(bound, servers=servers)
    if variant.reconfigure:
        part = next(p for p in standard_suite(policy) if p.name == "reconfigure").bound
        removed = next(s for s in part.servers if s.change == "removed")
        second = attrs.evolve(removed, name=f"{removed.name}2")  # two removals: one publication
        servers = (*part.servers, second)
        return attrs.evolve(part, servers=servers, environment=None, max_steps=2, max_calls=calls)
    if variant.tasks:
        part = next(p for p in standard_suite(policy) if p.name == "tasks").bound
        servers = tuple(s for s in part.servers if s.name in TASK_SERVERS)
        return attrs.evolve(part, servers=servers, max_steps=2, max_calls=2)
    if not variant.progress:
        return bound
    servers = tuple(
        attrs.evolve(s, idle_timeout=True, tool_timeout_sec=IDLE_TIMEOUT, tool_max_sec=IDLE_CAP)
        for s in bound.servers
        if s.name in IDLE_SERVERS
    )
    return attrs.evolve(bound, servers=servers, max_steps=1, max_calls=1, rearms=1)


def defer_threshold(variant: LockstepVariant) -> int | None:
    """The host's ``defer_threshold`` for ``variant``'s runs: the deferral variant's small
    one (SPEC §11.9); None, the default, for the others."""
    return DEFER_THRESHOLD if variant.deferral else None


def lockstep_property(
    policy: Policy,
    *,
    steps: int = STEPS,
    seams: Seams = PRODUCTION,
    on_example: Callable[[], None] | None = None,
    variant: LockstepVariant = PLAIN,
    backend: str = "trio",
    coverage: Counter[str] | None = None,
) -> Callable[[], None]:
    """A Hypothesis test: random interleavings, model and runtime in lockstep on the
    bound of ``variant``, the runtime on ``backend`` (trio, the machines' scheduler, or
    asyncio); ``coverage`` counts what the examples reached (``lockstep.REACHED``)."""
    bound = lockstep_bound(policy, variant=variant)
    threshold = defer_threshold(variant)

    @given(st.data())
    def lockstep(data: Any) -> None:
        if on_example is not None:
            on_example()
        trace = run_machine(
            bound,
            DrawChooser(data),
            steps=steps,
            seams=seams,
            backend=backend,
            defer_threshold=threshold,
            coverage=coverage,
        )
        note(f"{len(trace)} events")

    lockstep.__name__ = (
        f"lockstep_{policy}"
        + "".join(f"_{flag}" for flag in variant.flags)
        + ("" if backend == "trio" else f"_{backend}")
    )
    return lockstep


@attrs.frozen
class OdometerReport:
    runs: int
    steps: int


def run_odometer(
    policy: Policy,
    depth: int,
    *,
    seams: Seams = PRODUCTION,
    backend: str = "trio",
    coverage: Counter[str] | None = None,
    prefix: Sequence[int] = (),
) -> OdometerReport:
    """Every choice sequence of ``depth`` events, each run in lockstep; with ``prefix``,
    those that begin with these choices (one shard of :func:`odometer_shards`);
    ``coverage`` counts what the runs reached (``lockstep.REACHED``)."""
    bound = lockstep_bound(policy)
    odometer = Odometer(depth, prefix)
    steps = 0
    # A run's garbage is collected every GC_RUNS runs, not during them: 4% fewer
    # instructions per run (docs/development.md, "Measured durations").
    with collecting_every(GC_RUNS) as between_runs:
        while True:
            trace = run_machine(
                bound, odometer, steps=depth, seams=seams, backend=backend, coverage=coverage
            )
            steps += len(trace)
            if not odometer.advance():
                return OdometerReport(odometer.runs, steps)
            between_runs()


def odometer_shards(policy: Policy, depth: int, choices: int = 2) -> list[tuple[int, ...]]:
    """The odometer split by its first ``choices`` choices (2: the first event, its kind
    and which one), in the order the odometer meets them: the shards' runs together are
    exactly :func:`run_odometer`'s, and each shard runs on its own (in parallel, by
    ``mcpbind check``). Learnt by short probing runs, one per shard but the last level's."""
    bound = lockstep_bound(policy)
    shards: list[tuple[int, ...]] = [()]
    for _ in range(choices):
        split: list[tuple[int, ...]] = []
        for prefix in shards:
            probe = Probe(prefix)
            run_machine(bound, probe, steps=depth)
            if probe.options is None:  # the run ends before this choice: a shard of its own
                split.append(prefix)
            else:
                split += [(*prefix, digit) for digit in range(probe.options)]
        shards = split
    return shards


def run_replay(
    path: pathlib.Path,
    *,
    seams: Seams = PRODUCTION,
    backend: str = "trio",
    coverage: Counter[str] | None = None,
) -> list[str]:
    """Run one replay file (SPEC §12.3) against the model and the runtime."""
    data = json.loads(path.read_text(encoding="utf-8"))
    events = list(data["events"])
    if "bound" in data:  # a trace's inputs (``mcpbind trace check --strict``, SPEC §14.5)
        return run_machine(
            load_bound(data["bound"]),
            ReplayChooser(events),
            steps=len(events),
            seams=seams,
            backend=backend,
        )
    variant = LockstepVariant.from_json(data)
    bound = lockstep_bound(
        data.get("policy", "revalidate"), calls=int(data.get("calls", 3)), variant=variant
    )
    return run_machine(
        bound,
        ReplayChooser(events),
        steps=len(events),
        seams=seams,
        backend=backend,
        defer_threshold=defer_threshold(variant),
        coverage=coverage,
    )


@attrs.frozen
class KillReport:
    """How a runtime mutant was killed: by which check, with what, after how many runs."""

    killed: bool
    check: str | None
    by: str | None
    examples: int


def kill_impl_mutant(name: str, corpus: pathlib.Path | None = None) -> KillReport:
    """Run the machines against one runtime mutant until a check fails (SPEC §12.7).

    Its own replay in ``corpus`` (``<name>.json``) first, when there is one; then
    Hypothesis, generation only (a mutant is killed at its first failing example;
    shrinking is not needed to count it), under each policy; then the odometer at depth 4.
    """
    from hypothesis import Phase, settings  # noqa: PLC0415

    from .impl_mutants import impl_mutant  # noqa: PLC0415
    from .lockstep import MachineFailure  # noqa: PLC0415

    mutant = impl_mutant(name)
    count = [0]
    replay = None if corpus is None else corpus / f"{name}.json"
    if replay is not None and replay.exists():
        try:
            run_replay(replay, seams=mutant.seams)
        except MachineFailure as error:
            return KillReport(True, error.check, f"replay {replay.name}", 1)

    def hook() -> None:
        count[0] += 1

    generate_only = settings(phases=[Phase.explicit, Phase.reuse, Phase.generate], print_blob=False)
    for policy in ("revalidate", "frozen"):
        try:
            generate_only(
                lockstep_property(
                    policy,
                    seams=mutant.seams,
                    on_example=hook,
                    variant=mutant.variant,
                )
            )()
        except MachineFailure as error:
            variant = next((f", {flag}" for flag in mutant.variant.flags), "")
            return KillReport(True, error.check, f"hypothesis ({policy}{variant})", count[0])
    try:
        report = run_odometer("revalidate", 4, seams=mutant.seams)
    except MachineFailure as error:
        return KillReport(True, error.check, "odometer (revalidate, depth 4)", count[0])
    return KillReport(False, None, None, count[0] + report.runs)
