"""``python -m benchmarks [--quick] [--json PATH]``: mcpbind against the raw SDK.

Prints a table and, with ``--json``, writes every figure as one JSON object. Every figure
is a ratio against a baseline measured in the same run (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
from typing import Any

import anyio

from .suite import (
    SIZES,
    catalog_ratio,
    explorer_rate,
    odometer_rate,
    property_hypothesis_rate,
    property_rate,
    refine_scaling,
    run_all,
    run_asyncio,
)


def table(figures: dict[str, Any]) -> str:
    lines = ["figure                                  mcpbind      baseline     ratio"]

    def row(label: str, result: dict[str, Any], *, cpu: bool = False) -> None:
        """``cpu``: both sides' work is in this process or its children, so the paired
        CPU-time ratio is shown too (over stdio the server's CPU is not in it)."""
        subject = result["mcpbind"] if "mcpbind" in result else result["peer"]
        mine, theirs = subject["median_us"], result["baseline"]["median_us"]
        used = f" (CPU x{result['cpu_ratio']:.3f})" if cpu else ""
        lines.append(f"{label:<38} {mine:>9.1f}us {theirs:>9.1f}us   x{result['ratio']:.3f}{used}")

    row("call overhead, in-process", figures["call_overhead_ratio"]["inproc"], cpu=True)
    row("call overhead, stdio", figures["call_overhead_ratio"]["stdio"])
    on_asyncio = figures["asyncio"]
    row(
        "call overhead, in-process (asyncio)", on_asyncio["call_overhead_ratio"]["inproc"], cpu=True
    )
    row("call overhead, stdio (asyncio)", on_asyncio["call_overhead_ratio"]["stdio"])
    row(f"refresh, {figures['refresh_ratio']['tools']} tools", figures["refresh_ratio"], cpu=True)
    for peer, result in figures.get("peers", {}).items():
        row(f"peer {peer}, call (stdio)", result["call_overhead_ratio"])
    s = figures["sample_scaling_ratio"]
    row(f"sample(), {s['large_tools']} vs {s['small_tools']} tools", s)
    for backend, concurrency in (
        ("", figures["concurrency"]),
        (" (asyncio)", on_asyncio["concurrency"]),
    ):
        for n, c in concurrency.items():
            lines.append(
                f"{n + ' concurrent calls, throughput' + backend:<38} "
                f"{c['mcpbind']['calls_per_s']:>9}/s "
                f"{c['baseline']['calls_per_s']:>9}/s   x{c['throughput_ratio']:.3f}"
            )
            lines.append(
                f"{n + ' concurrent calls, peak memory' + backend:<38} "
                f"{c['mcpbind']['peak_bytes'] // 1024:>9}KB "
                f"{c['baseline']['peak_bytes'] // 1024:>9}KB   x{c['peak_memory_ratio']:.3f}"
            )
    c = figures["catalog_ratio"]
    row("mcpbind catalog, demo (whole process)", c, cpu=True)
    r = figures["refine_scaling_ratio"]
    row(f"trace --strict per call, {r['large_calls']} vs {r['small_calls']}", r)
    e = figures["explorer_states_per_s"]
    lines.append(f"explorer: {e['states_per_s']} states/s ({e['transitions_per_s']} transitions/s)")
    h = figures["property_hypothesis_steps_per_s"]
    lines.append(f"lockstep machine under Hypothesis (as check): {h['steps_per_s']} steps/s")
    p = figures["property_steps_per_s"]
    lines.append(
        f"lockstep machine: {p['steps_per_s']} steps/s ({p['steps']} steps; "
        f"{p['steps_per_cpu_s']} per CPU second, goal at least {p['goal_steps_per_cpu_s']})"
    )
    o = figures["odometer_runs_per_s"]
    lines.append(
        f"odometer ({o['policy']}, depth {o['depth']}): {o['runs_per_s']} runs/s "
        f"({o['runs']} runs, {o['steps']} steps; {o['runs_per_cpu_s']} per CPU second, "
        f"goal at least {o['goal_runs_per_cpu_s']})"
    )
    m = figures.get("machine")
    if m is not None:
        lines.append(
            f"machine: {m['cpus']} CPUs, load average {m['loadavg_start'][0]:.2f} at the start, "
            f"{m['loadavg_end'][0]:.2f} at the end"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, about a minute")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes: only that the command still works"
    )
    parser.add_argument("--json", metavar="PATH", help="write the figures as one JSON object")
    args = parser.parse_args()

    def progress(label: str) -> None:
        print(f"  … {label}", file=sys.stderr, flush=True)

    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    load_before = os.getloadavg()
    figures = anyio.run(run_all, size, progress, backend="trio")
    figures["asyncio"] = anyio.run(run_asyncio, size, progress, backend="asyncio")
    progress("trace refinement scaling")
    figures["refine_scaling_ratio"] = refine_scaling(*SIZES[size]["trace_calls"])
    progress("mcpbind catalog vs the raw SDK on the demo servers")
    figures["catalog_ratio"] = catalog_ratio({"smoke": 1, "quick": 8, "full": 20}[size])
    progress("explorer and property machine rates")
    figures["explorer_states_per_s"] = explorer_rate(small=args.smoke)
    figures["property_steps_per_s"] = property_rate({"smoke": 60, "quick": 600, "full": 6000}[size])
    figures["property_hypothesis_steps_per_s"] = property_hypothesis_rate(
        {"smoke": 3, "quick": 20, "full": 200}[size]
    )
    odometer = {"smoke": ("frozen", 1), "quick": ("frozen", 2), "full": ("revalidate", 3)}
    figures["odometer_runs_per_s"] = odometer_rate(*odometer[size])
    # The machine's load average (1, 5, 15 min) at the start and the end: every figure is a
    # ratio within this run, and the load tells a busy run from a slow one.
    figures["machine"] = {
        "cpus": os.cpu_count(),
        "loadavg_start": [round(x, 2) for x in load_before],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
    }
    print(table(figures))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
