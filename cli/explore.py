"""``mcpbind explore``: the exhaustive explorer over the standard suite (SPEC §10)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from mcpbind.model.bounds import describe, suite
from mcpbind.model.explore import LIVENESS
from mcpbind.model.invariants import INVARIANTS
from mcpbind.model.suite import Run, run_suite
from mcpbind.model.values import Policy

from .progress import Progress

__all__ = ["main"]


def summary(runs: list[Run], args: argparse.Namespace, seconds: float) -> dict[str, Any]:
    """The JSON object of ``mcpbind explore --json`` (docs/model.md, SPEC §10.3)."""
    policies = sorted({r.policy for r in runs})
    parts = suite(args.bound, policies[0], servers=args.servers, steps=args.steps, calls=args.calls)
    violations = [
        {**v.to_json(), "policy": r.policy, "part": r.part}
        for r in runs
        for v in r.report.violations
    ]
    return {
        "bound": {
            "suite": args.bound,
            "servers": args.servers,
            "policies": policies,
            "depth": args.depth,
            "parts": [{"name": p.name, **describe(p.bound)} for p in parts],
        },
        "mutant": args.mutant,
        "states": sum(r.report.states for r in runs),
        "transitions": sum(r.report.transitions for r in runs),
        "depth": max(r.report.depth for r in runs),
        "seconds": round(seconds, 3),
        "states_per_s": _rate(sum(r.report.states for r in runs), seconds),
        "complete": all(r.report.complete for r in runs),
        "runs": [
            {
                "part": r.part,
                "policy": r.policy,
                "states": r.report.states,
                "transitions": r.report.transitions,
                "depth": r.report.depth,
                "seconds": round(r.report.seconds, 3),
                "states_per_s": _rate(r.report.states, r.report.seconds),
                "cpu_seconds": round(r.report.cpu_seconds, 3),
                "complete": r.report.complete,
            }
            for r in runs
        ],
        "violations": violations,
    }


def _rate(states: int, seconds: float) -> int:
    """States per wall-clock second (a run's own time; the whole run's for the total)."""
    return round(states / seconds) if seconds > 0 else 0


def safety_ids() -> str:
    """``INV-1..INV-n``, read from the model's invariants, so no output names a stale range
    (ids are never reused, so they run from 1 without a gap: tests/test_docs.py)."""
    return _id_range("INV", [inv.id for inv in INVARIANTS])


def liveness_ids() -> str:
    """``LIVE-1..LIVE-n``, read from the explorer's liveness checks."""
    return _id_range("LIVE", list(LIVENESS))


def _id_range(prefix: str, ids: list[str]) -> str:
    return f"{prefix}-1..{prefix}-{max(int(i.removeprefix(prefix + '-')) for i in ids)}"


def main(args: argparse.Namespace) -> int:
    if args.list_mutants:
        from mcpbind.model.mutants import MUTANTS  # noqa: PLC0415 - only on request

        for m in MUTANTS:
            print(m.name)
        return 0
    for option in ("steps", "calls", "depth"):
        value = getattr(args, option)
        if value is not None and value < 0:
            print(f"mcpbind explore: --{option} must be >= 0, got {value}", file=sys.stderr)
            return 2
    if args.workers is not None and args.workers < 1:
        print(f"mcpbind explore: --workers must be >= 1, got {args.workers}", file=sys.stderr)
        return 2
    policies: tuple[Policy, ...] = (
        ("frozen", "revalidate") if args.policy == "both" else (args.policy,)
    )
    if args.mutant is not None:
        from mcpbind.model.mutants import MUTANTS  # noqa: PLC0415 - only on request

        known = [m.name for m in MUTANTS]
        if args.mutant not in known:
            print(
                f"mcpbind explore: unknown mutant {args.mutant!r}; known mutants: "
                + ", ".join(known),
                file=sys.stderr,
            )
            return 2
    started = time.perf_counter()
    progress = Progress(quiet=args.json, plain=False)
    begun = progress.start("explore", total=0)
    states = [0]

    def heard(run: Run, total: int) -> None:
        states[0] += run.report.states
        progress.total(total)
        progress.advance(1, progress.rate(states[0], "states"))

    try:
        runs = run_suite(
            policies=policies,
            servers=args.servers,
            steps=args.steps,
            calls=args.calls,
            depth=args.depth,
            mutant=args.mutant,
            workers=args.workers,
            on_run=heard,
            bound=args.bound,
        )
    except KeyError as error:
        progress.close()
        print(f"mcpbind explore: {error.args[0]}", file=sys.stderr)
        return 2
    finally:
        progress.close()
    found = sum(len(r.report.violations) for r in runs)
    verdict = "FAIL" if found else "ok"
    progress.done(f"explore: {len(runs)} parts, {states[0]:,} states", begun, verdict)
    result = summary(runs, args, time.perf_counter() - started)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_human(result, args.all)
    return 1 if result["violations"] else 0


def _print_human(result: dict[str, Any], show_all: bool = False) -> None:
    title = "explore" + (f" (mutant {result['mutant']})" if result["mutant"] else "")
    print(
        f"{title}: {result['states']} states, {result['transitions']} transitions, "
        f"depth {result['depth']}, {result['seconds']:.1f} s"
    )
    print(f"  {'part':<11} {'policy':<11} {'states':>9} {'transitions':>12} {'depth':>6} {'s':>7}")
    for run in result["runs"]:
        note = "" if run["complete"] else "  (cut short)"
        print(
            f"  {run['part']:<11} {run['policy']:<11} {run['states']:>9} "
            f"{run['transitions']:>12} {run['depth']:>6} {run['seconds']:>7.1f}{note}"
        )
    if not result["violations"]:
        print(
            f"no violation: {safety_ids()} hold on every reachable state and transition; "
            f"{liveness_ids()} hold on every drain"
        )
        return
    shown = result["violations"] if show_all else shortest_per_invariant(result["violations"])
    for v in shown:
        print(f"\n{v['invariant']} violated ({v['part']}, {v['policy']}): {v['detail']}")
        print(f"  shortest trace ({len(v['trace'])} events):")
        for number, event in enumerate(v["trace"], 1):
            print(f"  {number:>3}. {event}")
    hidden = len(result["violations"]) - len(shown)
    if hidden:
        print(
            f"\n{len(result['violations'])} violations in all, of "
            f"{len({v['invariant'] for v in shown})} invariant(s): the shortest trace of each "
            f"is shown; --all shows the other {hidden}"
        )


def shortest_per_invariant(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One violation per invariant: the one with the shortest trace (the first found of
    equal length), in the order the invariants were first violated (SPEC §10.3)."""
    best: dict[str, dict[str, Any]] = {}
    for v in violations:
        kept = best.get(v["invariant"])
        if kept is None or len(v["trace"]) < len(kept["trace"]):
            best[v["invariant"]] = v
    return list(best.values())
