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
import os
import pathlib
import sys
import time
from collections.abc import Callable
from typing import Any

from mcpbind.model.bounds import standard_suite
from mcpbind.model.explore import explore
from mcpbind.model.suite import run_suite
from mcpbind.properties.variants import LOCKSTEP_VARIANTS, PLAIN, LockstepVariant

from . import explore as explore_cli

__all__ = ["add_parser", "main"]

DEPTHS = {"ci": {"revalidate": 4, "frozen": 3}, "nightly": {"revalidate": 5, "frozen": 5}}


class Progress:
    """A live progress display on stderr; one line per finished stage."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.finished: list[str] = []
        """Stages finished so far (the one-line summary after Ctrl-C)."""

    def start(self, label: str) -> float:
        if not self.quiet:
            end = "\r" if self.tty else "\n"
            print(f"  … {label}", end=end, file=sys.stderr, flush=True)
        return time.perf_counter()

    def done(self, label: str, started: float, verdict: str) -> None:
        self.finished.append(label)
        if not self.quiet:
            seconds = time.perf_counter() - started
            print(f"  {verdict:<4} {label} ({seconds:.1f} s)", file=sys.stderr, flush=True)


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
            machine_failure("replay", json.loads(path.read_text())["policy"], error)
        return report

    stages = {s.strip() for s in args.stages.split(",") if s.strip()}
    unknown = stages - {"explore", "odometer", "replays", "machines", "mutants"}
    if unknown:
        raise SystemExit(f"mcpbind check: unknown stage(s): {', '.join(sorted(unknown))}")
    if "explore" in stages:
        _explore_stage(report, failures, progress)
    if "odometer" in stages:
        _odometer_stage(args, report, progress, machine_failure, run_odometer)
    if "replays" in stages:
        _replay_stage(args, report, progress, machine_failure, run_replay)
    if "machines" in stages:
        _machine_stage(report, progress, machine_failure, lockstep_property, real_servers_property)
    if args.mutants or "mutants" in stages:
        report["mutants"] = check_mutants(progress, pathlib.Path(args.corpus))
    return report


def _explore_stage(report: dict[str, Any], failures: list[Any], progress: Progress) -> None:
    started = progress.start("explore the model on the standard suite")
    runs = run_suite()
    violations = [
        {**v.to_json(), "policy": r.policy, "part": r.part}
        for r in runs
        for v in r.report.violations
    ]
    report["explore"] = {
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
    from mcpbind.properties.lockstep import MachineFailure  # noqa: PLC0415

    corpus = sorted(pathlib.Path(args.corpus).glob("*.json")) if args.corpus else []
    started = progress.start(f"replay corpus: {len(corpus)} file(s)")
    passed = 0
    for path in corpus:
        try:
            run_replay(path)
            passed += 1
        except MachineFailure as error:
            machine_failure("replay", json.loads(path.read_text())["policy"], error)
    report["replays"] = {"files": len(corpus), "passed": passed}
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

        started = progress.start(f"{name} machine ({policy})")
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


def _counting(test: Callable[[], None], hook: Callable[[], None]) -> Callable[[], None]:
    inner = test.hypothesis.inner_test  # type: ignore[attr-defined]

    def counted(*args: Any, **kwargs: Any) -> None:
        hook()
        inner(*args, **kwargs)

    test.hypothesis.inner_test = counted  # type: ignore[attr-defined]
    return test


def check_mutants(progress: Progress, corpus: pathlib.Path | None = None) -> list[dict[str, Any]]:
    """Every model mutant through the explorer, every runtime mutant through the lockstep
    machine (generation only: a mutant counts as killed at its first failing example)."""
    from mcpbind.model.mutants import MUTANTS  # noqa: PLC0415
    from mcpbind.properties.impl_mutants import IMPL_MUTANTS  # noqa: PLC0415
    from mcpbind.properties.machines import kill_impl_mutant  # noqa: PLC0415

    results: list[dict[str, Any]] = []
    for model_mutant in MUTANTS:
        started = progress.start(f"model mutant {model_mutant.name}")
        killed_by: str | None = None
        for policy in ("revalidate", "frozen"):
            part = next(p for p in standard_suite(policy) if p.name == model_mutant.part)
            found = explore(part.bound, model_mutant, stop_on=model_mutant.target)
            hit = [v for v in found.violations if v.invariant == model_mutant.target]
            if hit:
                killed_by = model_mutant.target
                break
        results.append(
            {
                "name": model_mutant.name,
                "kind": "model",
                "killed": killed_by is not None,
                "invariant": model_mutant.target,
                "examples": found.states,
            }
        )
        progress.done(f"model mutant {model_mutant.name}", started, "kill" if killed_by else "LIVE")
    for impl in IMPL_MUTANTS:
        started = progress.start(f"runtime mutant {impl.name}")
        kill = kill_impl_mutant(impl.name, corpus)
        results.append(
            {
                "name": impl.name,
                "kind": "runtime",
                "killed": kill.killed,
                "invariant": impl.target,
                "check": kill.check,
                "by": kill.by,
                "examples": kill.examples,
            }
        )
        progress.done(f"runtime mutant {impl.name}", started, "kill" if kill.killed else "LIVE")
    return results


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "check",
        help="run every check: explorer, odometer, replay corpus, property machines",
        description=(
            "The main job (SPEC §12.8): the explorer on the standard suite, the exhaustive "
            "odometer against the runtime, the replay corpus, and the Hypothesis property "
            "machines. Exit 0 iff everything holds."
        ),
    )
    parser.add_argument(
        "--profile",
        choices=("ci", "nightly"),
        default=os.environ.get("MCPBIND_HYPOTHESIS_PROFILE", "ci")
        if os.environ.get("MCPBIND_HYPOTHESIS_PROFILE") in ("ci", "nightly")
        else "ci",
        help="budgets (default: ci, or MCPBIND_HYPOTHESIS_PROFILE)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--replay", metavar="FILE", help="run one replay file and stop")
    parser.add_argument(
        "--mutants", action="store_true", help="also run every mutant and report the kills"
    )
    parser.add_argument(
        "--stages",
        default="explore,odometer,replays,machines",
        help="comma-separated stages to run (default: all four; add 'mutants' or use --mutants)",
    )
    parser.add_argument(
        "--corpus", default="tests/replays", help="replay corpus directory (default tests/replays)"
    )
    parser.add_argument(
        "--failures",
        default="mcpbind-failures",
        help="where failing traces are written as replay files (default ./mcpbind-failures)",
    )
    parser.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    progress = Progress(quiet=args.json)
    args.interrupted = lambda: (
        f"{len(progress.finished)} stage(s) finished"
        + (f", the last: {progress.finished[-1]}" if progress.finished else "")
    )
    started = time.perf_counter()
    report = run_checks(args, progress)
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
        print(f"  replays:    {r.get('passed', r.get('files'))}/{r['files']} file(s)")
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
