"""``mcpbind check``: every check of the model and the runtime, in one command (SPEC §12.8).

Stages: the explorer on the standard suite; the exhaustive odometer against the runtime;
the replay corpus; the property machines (lockstep under both policies, and real
in-process servers). ``--mutants`` runs the deliberately broken models and runtimes and
reports which were killed. Exit 0 iff everything holds (and, with ``--mutants``, every
mutant is killed).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from collections.abc import Callable
from typing import Any, Literal

from mcpbind.model.suite import run_suite
from mcpbind.properties.variants import LOCKSTEP_VARIANTS, PLAIN, LockstepVariant

from . import explore as explore_cli
from .mutants import check_mutants
from .progress import Progress
from .replays import UsageError, bundled_corpus, usage_problem

__all__ = ["USAGE", "main"]

USAGE = 2

DEPTHS = {"ci": {"revalidate": 4, "frozen": 3}, "nightly": {"revalidate": 5, "frozen": 5}}


def _write_replay(directory: pathlib.Path, stage: str, policy: str, trace: list[str]) -> str:
    from mcpbind.properties.lockstep import replay_file  # noqa: PLC0415 - heavy, on failure only

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stage}-{policy}-{int(time.time())}.json"
    variant = LOCKSTEP_VARIANTS.get(stage, PLAIN)
    path.write_text(replay_file(trace, policy=policy, variant=variant), encoding="utf-8")
    return str(path)


def run_checks(args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
    # Heavy imports (trio, mcp, hypothesis machinery) load only for this command.
    from mcpbind.properties import profiles  # noqa: PLC0415
    from mcpbind.properties.chooser import ReplayMismatch  # noqa: PLC0415
    from mcpbind.properties.lockstep import MachineFailure  # noqa: PLC0415
    from mcpbind.properties.machines import (  # noqa: PLC0415
        lockstep_property,
        run_odometer,
        run_replay,
    )
    from mcpbind.properties.realservers import real_servers_property  # noqa: PLC0415

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
    if "explore" in stages:
        # The nightly profile explores the nightly bound (SPEC §10.6), minutes on 2 cores.
        bound: Literal["standard", "nightly"] = (
            "nightly" if args.profile == "nightly" else "standard"
        )
        _explore_stage(report, failures, progress, bound)
    if "odometer" in stages:
        _odometer_stage(args, report, progress, machine_failure, run_odometer)
    if "replays" in stages:
        _replay_stage(args, report, progress, machine_failure, run_replay)
    if "machines" in stages:
        _machine_stage(report, progress, machine_failure, lockstep_property, real_servers_property)
    if args.mutants or "mutants" in stages:
        report["mutants"] = check_mutants(progress, _corpus(args))
    return report


def _explore_stage(
    report: dict[str, Any],
    failures: list[Any],
    progress: Progress,
    bound: Literal["standard", "nightly"] = "standard",
) -> None:
    started = progress.start(f"explore the model ({bound} bound)", total=0)
    states = [0]

    def heard(run: Any, total: int) -> None:
        states[0] += run.report.states
        progress.total(total)
        progress.advance(1, progress.rate(states[0], "states"))

    runs = run_suite(on_run=heard, bound=bound)
    violations = [
        {**v.to_json(), "policy": r.policy, "part": r.part}
        for r in runs
        for v in r.report.violations
    ]
    report["explore"] = {
        "bound": bound,
        "states": sum(r.report.states for r in runs),
        "transitions": sum(r.report.transitions for r in runs),
        "violations": violations,
    }
    for v in violations:
        failures.append({"stage": "explore", **v})
    progress.done(
        f"explore: {report['explore']['states']} states, {len(violations)} violation(s)",
        started,
        "ok" if not violations else "FAIL",
    )


def _odometer_stage(
    args: argparse.Namespace,
    report: dict[str, Any],
    progress: Progress,
    machine_failure: Callable[..., None],
    run_odometer: Callable[..., Any],
) -> None:
    from mcpbind.properties.lockstep import MachineFailure  # noqa: PLC0415

    report["odometer"] = []
    for policy, depth in DEPTHS[args.profile].items():
        started = progress.start(f"odometer {policy}, every sequence of {depth} events")
        begun = time.perf_counter()
        try:
            odometer = run_odometer(policy, depth)
            entry = {
                "policy": policy,
                "depth": depth,
                "runs": odometer.runs,
                "steps": odometer.steps,
            }
            verdict = "ok"
        except MachineFailure as error:
            entry = {"policy": policy, "depth": depth, "runs": None, "steps": None}
            machine_failure("odometer", policy, error)
            verdict = "FAIL"
        entry["seconds"] = round(time.perf_counter() - begun, 2)
        report["odometer"].append(entry)
        progress.done(f"odometer {policy} depth {depth}: {entry['runs']} runs", started, verdict)


def _replay_stage(
    args: argparse.Namespace,
    report: dict[str, Any],
    progress: Progress,
    machine_failure: Callable[..., None],
    run_replay: Callable[..., Any],
) -> None:
    from mcpbind.properties.chooser import ReplayMismatch  # noqa: PLC0415
    from mcpbind.properties.lockstep import MachineFailure  # noqa: PLC0415

    directory = _corpus(args)
    corpus = sorted(directory.glob("*.json"))
    started = progress.start(f"replay corpus in {directory}", total=len(corpus), unit="files")
    passed = 0
    for path in corpus:
        progress.advance(1)
        try:
            run_replay(path)
            passed += 1
        except MachineFailure as error:
            machine_failure("replay", _policy(path), error)
        except ReplayMismatch as error:  # the model moved on: the file no longer fits it
            detail = f"{path} does not replay: {error}"
            report["failures"].append({"stage": "replay", "check": "replay", "detail": detail})
            if not args.json:
                print(f"\nFAILED replay: {detail}", file=sys.stderr)
    report["replays"] = {"files": len(corpus), "passed": passed, "corpus": str(directory)}
    progress.done(
        f"replay corpus: {passed}/{len(corpus)} passed",
        started,
        "ok" if passed == len(corpus) else "FAIL",
    )


def _machine_stage(
    report: dict[str, Any],
    progress: Progress,
    machine_failure: Callable[..., None],
    lockstep_property: Callable[..., Any],
    real_servers_property: Callable[..., Any],
) -> None:
    from mcpbind.properties.lockstep import MachineFailure  # noqa: PLC0415

    report["properties"] = []
    machines: list[tuple[str, str, Callable[..., Callable[[], None]]]] = []
    # The lockstep machine plain, with approval gating (§3.4), with a lazy server (§3.5).
    for name, variant in LOCKSTEP_VARIANTS.items():
        for policy in ("revalidate", "frozen"):

            def lockstep(
                hook: Callable[[], None], policy: str = policy, variant: LockstepVariant = variant
            ) -> Callable[[], None]:
                test: Callable[[], None] = lockstep_property(
                    policy, on_example=hook, variant=variant
                )
                return test

            machines.append((name, policy, lockstep))
    machines += [
        ("real-servers", "revalidate", lambda hook: _counting(real_servers_property(), hook)),
    ]
    for name, policy, build in machines:
        count = [0]

        def hook(count: list[int] = count) -> None:
            count[0] += 1
            progress.advance(1)

        started = progress.start(f"{name} machine ({policy})", unit="examples")
        begun = time.perf_counter()
        try:
            build(hook)()
            verdict = "ok"
        except MachineFailure as error:
            machine_failure(name, policy, error)
            verdict = "FAIL"
        seconds = time.perf_counter() - begun
        report["properties"].append(
            {
                "machine": name,
                "policy": policy,
                "examples": count[0],
                "seconds": round(seconds, 2),
                "passed": verdict == "ok",
            }
        )
        progress.done(f"{name} ({policy}): {count[0]} examples", started, verdict)


def _corpus(args: argparse.Namespace) -> pathlib.Path:
    return bundled_corpus() if args.corpus is None else pathlib.Path(args.corpus)


def _policy(path: pathlib.Path) -> str:
    return str(json.loads(path.read_text(encoding="utf-8")).get("policy", "revalidate"))


def _counting(test: Callable[[], None], hook: Callable[[], None]) -> Callable[[], None]:
    inner = test.hypothesis.inner_test  # type: ignore[attr-defined]

    def counted(*args: Any, **kwargs: Any) -> None:
        hook()
        inner(*args, **kwargs)

    test.hypothesis.inner_test = counted  # type: ignore[attr-defined]
    return test


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
