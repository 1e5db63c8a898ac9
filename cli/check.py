"""``mcpbind check``: every check of the model and the runtime, in one command (SPEC §12.8).

Stages: the explorer on the standard suite; the exhaustive odometer against the runtime;
the replay corpus; the property machines (lockstep under both policies, and real
in-process servers). They run side by side, split into jobs that worker processes take
from one queue (:mod:`.check_jobs`). ``--mutants`` runs the deliberately broken models
and runtimes and reports which were killed. Exit 0 iff everything holds (and, with
``--mutants``, every mutant is killed).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time
from collections.abc import Callable
from typing import Any

import attrs

from mcpbind.model.bounds import Suite
from mcpbind.model.suite import suite_jobs
from mcpbind.properties.variants import LOCKSTEP_VARIANTS, PLAIN

from . import explore as explore_cli
from .check_jobs import WEIGHTS, Job, Outcome, explore_weight, running
from .mutants import check_mutants
from .progress import Progress
from .replays import UsageError, bundled_corpus, usage_problem

__all__ = ["USAGE", "main"]

USAGE = 2

DEPTHS = {"ci": {"revalidate": 4, "frozen": 3}, "nightly": {"revalidate": 5, "frozen": 5}}
POLICIES = ("revalidate", "frozen")


def _write_replay(directory: pathlib.Path, stage: str, policy: str, trace: list[str]) -> str:
    from mcpbind.properties.lockstep import replay_file  # noqa: PLC0415 - heavy, on failure only

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stage}-{policy}-{int(time.time())}.json"
    variant = LOCKSTEP_VARIANTS.get(stage, PLAIN)
    path.write_text(replay_file(trace, policy=policy, variant=variant), encoding="utf-8")
    return str(path)


def run_checks(args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
    # Heavy imports (trio, mcp, hypothesis machinery) load only for this command, and
    # once: the workers are forked with them (check_jobs.running).
    from mcpbind.properties import profiles, realservers  # noqa: PLC0415
    from mcpbind.properties.chooser import ReplayMismatch  # noqa: PLC0415
    from mcpbind.properties.lockstep import MachineFailure  # noqa: PLC0415
    from mcpbind.properties.machines import run_replay  # noqa: PLC0415

    del realservers  # loaded for the workers

    profiles.load(args.profile)
    failures: list[dict[str, Any]] = []
    report: dict[str, Any] = {"profile": args.profile, "failures": failures}
    failure_dir = pathlib.Path(args.failures)

    def machine_failure(stage: str, policy: str, error: MachineFailure) -> None:
        entry: dict[str, Any] = {
            "stage": stage,
            "policy": policy,
            "check": error.check,
            "detail": error.detail,
            "trace": error.trace,
        }
        if stage != "real-servers":
            entry["replay_file"] = _write_replay(failure_dir, stage, policy, error.trace)
        if error.boundary:  # the runtime's trace up to the failure (SPEC §14)
            trace_file = failure_dir / f"{stage}-{policy}-{int(time.time())}.trace.ndjson"
            failure_dir.mkdir(parents=True, exist_ok=True)
            trace_file.write_text(error.boundary, encoding="utf-8")
            entry["trace_file"] = str(trace_file)
        failures.append(entry)
        if not args.json:
            print(f"\nFAILED {stage} ({policy}):\n{error}", file=sys.stderr)

    if args.replay:
        path = pathlib.Path(args.replay)
        started = progress.start(f"replay {path}")
        try:
            trace = run_replay(path)
            report["replays"] = {"files": 1, "events": len(trace)}
            progress.done(f"replay {path}: {len(trace)} events", started, "ok")
        except MachineFailure as error:
            progress.done(f"replay {path}", started, "FAIL")
            machine_failure("replay", _policy(path), error)
        except ReplayMismatch as error:  # its events do not fit this model: not a replay
            raise UsageError(f"{path} does not replay: {error}") from None
        return report

    stages = {s.strip() for s in args.stages.split(",") if s.strip()}
    _run_stages(args, stages, report, progress, machine_failure)
    if args.mutants or "mutants" in stages:
        report["mutants"] = check_mutants(progress, _corpus(args))
    return report


def _run_stages(
    args: argparse.Namespace,
    stages: set[str],
    report: dict[str, Any],
    progress: Progress,
    machine_failure: Callable[..., None],
) -> None:
    """The stages side by side: their jobs in one pool of workers (:mod:`.check_jobs`);
    each stage's line when its last job ends, the report in the stages' order."""
    plan = _plan(args, stages)
    if not plan:
        return
    jobs = [job for stage in plan for job in stage.jobs]
    outcomes: list[Outcome | None] = [None] * len(jobs)
    first = 0
    for stage in plan:
        stage.first, first = first, first + len(stage.jobs)
    workers = args.workers or os.cpu_count() or 1
    with running(jobs, workers, args.profile) as ended:
        progress.begin([stage.label for stage in plan], total=len(jobs), unit="jobs")
        states = 0
        try:
            for index, outcome in ended:
                outcomes[index] = outcome
                states += sum(run.report.states for run in outcome.explored)
                detail = progress.rate(states, "states") if states else ""
                progress.advance(1, detail)
                for stage in plan:
                    mine = outcomes[stage.first : stage.first + len(stage.jobs)]
                    if not stage.reported and all(o is not None for o in mine):
                        stage.reported = True
                        ended_ = [o for o in mine if o is not None]
                        label, verdict = stage.end(ended_, report, machine_failure, args)
                        progress.finish(label, sum(o.seconds for o in ended_), verdict)
        finally:
            progress.close()
    for stage in plan:  # the report in the stages' order
        stage.record(report)


@attrs.define(eq=False)
class _Stage:
    """One stage of ``check``: its jobs, and how their outcomes make its report."""

    kind: str
    label: str
    jobs: list[Job]
    policy: str = ""
    depth: int = 0
    first: int = 0
    reported: bool = False
    entry: Any = None

    def end(
        self,
        outcomes: list[Outcome],
        report: dict[str, Any],
        machine_failure: Callable[..., None],
        args: argparse.Namespace,
    ) -> tuple[str, str]:
        """The stage's outcomes: its entry of the report, its failures; its line."""
        if self.kind == "explore":
            return self._explored(outcomes, report)
        if self.kind == "replays":
            return self._replayed(outcomes, report, machine_failure, args)
        # The first failure in the jobs' order: the one the stage met first when it ran
        # in one process (the odometer's shards are in its order).
        failed = next((o.failure for o in outcomes if o.failure is not None), None)
        seconds = round(sum(o.seconds for o in outcomes), 2)
        verdict = "ok" if failed is None else "FAIL"
        if self.kind == "odometer":
            runs = None if failed else sum(o.runs for o in outcomes)
            steps = None if failed else sum(o.steps for o in outcomes)
            self.entry = {"policy": self.policy, "depth": self.depth, "runs": runs}
            self.entry.update(steps=steps, seconds=seconds)
            if failed is not None:
                machine_failure("odometer", self.policy, failed.error())
            return f"odometer {self.policy} depth {self.depth}: {runs} runs", verdict
        name, examples = self.jobs[0].name, outcomes[0].examples
        if failed is not None:
            machine_failure(name, self.policy, failed.error())
        self.entry = {"machine": name, "policy": self.policy, "examples": examples}
        self.entry.update(seconds=seconds, passed=failed is None)
        return f"{name} ({self.policy}): {examples} examples", verdict

    def _explored(self, outcomes: list[Outcome], report: dict[str, Any]) -> tuple[str, str]:
        # Policies outermost, parts in the suite's order (a job holds a part's policies).
        most = max((len(o.explored) for o in outcomes), default=0)
        runs = [o.explored[k] for k in range(most) for o in outcomes if k < len(o.explored)]
        violations = [
            {**v.to_json(), "policy": r.policy, "part": r.part}
            for r in runs
            for v in r.report.violations
        ]
        states = sum(r.report.states for r in runs)
        transitions = sum(r.report.transitions for r in runs)
        bound = self.jobs[0].part.suite if self.jobs and self.jobs[0].part else "standard"
        self.entry = {"bound": bound, "states": states, "transitions": transitions}
        self.entry["violations"] = violations
        for v in violations:
            report["failures"].append({"stage": "explore", **v})
        label = f"explore: {states} states, {len(violations)} violation(s)"
        return label, "ok" if not violations else "FAIL"

    def _replayed(
        self,
        outcomes: list[Outcome],
        report: dict[str, Any],
        machine_failure: Callable[..., None],
        args: argparse.Namespace,
    ) -> tuple[str, str]:
        passed = 0
        for job, outcome in zip(self.jobs, outcomes, strict=True):
            if outcome.failure is not None:
                policy = _policy(pathlib.Path(job.name))
                machine_failure("replay", policy, outcome.failure.error())
            elif outcome.mismatch is not None:  # the model moved on: the file no longer fits
                report["failures"].append(
                    {"stage": "replay", "check": "replay", "detail": outcome.mismatch}
                )
                if not args.json:
                    print(f"\nFAILED replay: {outcome.mismatch}", file=sys.stderr)
            else:
                passed += 1
        files = len(self.jobs)
        self.entry = {"files": files, "passed": passed, "corpus": str(_corpus(args))}
        return f"replay corpus: {passed}/{files} passed", "ok" if passed == files else "FAIL"

    def record(self, report: dict[str, Any]) -> None:
        if self.kind in ("explore", "replays"):
            report[self.kind] = self.entry
        else:
            report.setdefault("odometer" if self.kind == "odometer" else "properties", [])
            report["odometer" if self.kind == "odometer" else "properties"].append(self.entry)


def _plan(args: argparse.Namespace, stages: set[str]) -> list[_Stage]:
    """The stages asked for, in their order, each split into jobs."""
    from mcpbind.properties.machines import odometer_shards  # noqa: PLC0415

    plan: list[_Stage] = []
    if "explore" in stages:
        # The nightly profile explores the nightly bound (SPEC §10.6), minutes on 2 cores.
        bound: Suite = "nightly" if args.profile == "nightly" else "standard"
        parts = suite_jobs(bound=bound)
        both = ",".join(POLICIES)
        jobs = [Job("explore", p.part, both, explore_weight(p.part), part=p) for p in parts]
        plan.append(_Stage("explore", f"explore the model ({bound} bound)", jobs))
    if "odometer" in stages:
        for policy, depth in DEPTHS[args.profile].items():
            shards = odometer_shards(policy, depth)  # type: ignore[arg-type]
            weight = WEIGHTS.get(f"odometer {policy}", 8.0) / len(shards)
            jobs = [Job("odometer", "odometer", policy, weight, depth, s) for s in shards]
            label = f"odometer {policy}, every sequence of {depth} events"
            plan.append(_Stage("odometer", label, jobs, policy, depth))
    if "replays" in stages:
        directory = _corpus(args)
        files = sorted(directory.glob("*.json"))
        jobs = [Job("replays", str(path), _policy(path), 0.1) for path in files]
        plan.append(_Stage("replays", f"replay corpus in {directory}", jobs))
    if "machines" in stages:
        # The lockstep machine plain, with approval gating (§3.4), with a lazy server
        # (§3.5), ... (§12.2) under both policies; then the real-server machine.
        machines = [(name, policy) for name in LOCKSTEP_VARIANTS for policy in POLICIES]
        machines.append(("real-servers", "revalidate"))
        for name, policy in machines:
            job = Job("machines", name, policy, WEIGHTS.get(name, 6.0))
            plan.append(_Stage("machine", f"{name} machine ({policy})", [job], policy))
    return plan


def _corpus(args: argparse.Namespace) -> pathlib.Path:
    return bundled_corpus() if args.corpus is None else pathlib.Path(args.corpus)


def _policy(path: pathlib.Path) -> str:
    return str(json.loads(path.read_text(encoding="utf-8")).get("policy", "revalidate"))


def main(args: argparse.Namespace) -> int:
    problem = usage_problem(args)
    if problem is not None:  # SPEC §15: one line, exit 2, nothing run
        print(f"mcpbind check: {problem}", file=sys.stderr)
        return USAGE
    progress = Progress(quiet=args.json)
    args.interrupted = lambda: (
        f"{len(progress.finished)} stage(s) finished"
        + (f", the last: {progress.finished[-1]}" if progress.finished else "")
    )
    started = time.perf_counter()
    try:
        report = run_checks(args, progress)
    except UsageError as error:
        progress.close()
        print(f"mcpbind check: {error}", file=sys.stderr)
        return USAGE
    finally:
        progress.close()
    report["seconds"] = round(time.perf_counter() - started, 2)
    mutants = report.get("mutants", [])
    report["ok"] = not report["failures"] and all(m["killed"] for m in mutants)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_summary(report)
    return 0 if report["ok"] else 1


def _print_summary(report: dict[str, Any]) -> None:
    print(f"mcpbind check ({report['profile']} profile), {report['seconds']:.1f} s")
    if "explore" in report:
        e = report["explore"]
        print(f"  explorer:   {e['states']} states, {e['transitions']} transitions checked")
    for o in report.get("odometer", []):
        print(
            f"  odometer:   {o['policy']}, depth {o['depth']}: {o['runs']} runs, {o['steps']} steps"
        )
    if "replays" in report:
        r = report["replays"]
        source = f" in {r['corpus']}" if "corpus" in r else ""
        print(f"  replays:    {r.get('passed', r.get('files'))}/{r['files']} file(s){source}")
    for p in report.get("properties", []):
        print(f"  machine:    {p['machine']} ({p['policy']}): {p['examples']} examples")
    for m in report.get("mutants", []):
        state = "killed" if m["killed"] else "SURVIVED"
        print(f"  mutant:     {m['kind']} {m['name']}: {state} ({m['invariant']})")
    print(f"  invariants: {explore_cli.safety_ids()} and {explore_cli.liveness_ids()}")
    if report["failures"]:
        print(f"FAILED: {len(report['failures'])} check(s); traces above")
        for f in report["failures"]:
            if f.get("replay_file"):
                print(f"  replay with: mcpbind check --replay {f['replay_file']}")
    else:
        print("all checks passed")
