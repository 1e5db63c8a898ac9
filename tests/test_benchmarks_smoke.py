"""The benchmark command keeps working (tiny sizes; nothing here asserts a time)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mcpbind.impl import HostConfig

KEYS = {
    "call_overhead_ratio",
    "refresh_ratio",
    "sample_scaling_ratio",
    "concurrency",
    "explorer_states_per_s",
    "property_steps_per_s",
    "property_hypothesis_steps_per_s",
    "odometer_runs_per_s",
    "asyncio",
    "catalog_ratio",
    "machine",
}


@pytest.mark.slow
def test_benchmark_command_runs_and_writes_every_figure(tmp_path):
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smoke", "--json", str(out)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    assert set(figures) >= KEYS
    assert set(figures["call_overhead_ratio"]) == {"inproc", "stdio"}
    # the same figures on asyncio, each against the raw mcp.Client on asyncio
    assert set(figures["asyncio"]["call_overhead_ratio"]) == {"inproc", "stdio"}
    assert set(figures["asyncio"]["concurrency"]) == set(figures["concurrency"])
    assert "call overhead, in-process (asyncio)" in done.stdout
    for result in (figures["call_overhead_ratio"]["inproc"], figures["refresh_ratio"]):
        assert {"ratio", "mcpbind", "baseline"} <= set(result)
    assert "call overhead, in-process" in done.stdout
    # a busy run is told from a slow one
    assert len(figures["machine"]["loadavg_start"]) == len(figures["machine"]["loadavg_end"]) == 3
    assert {"ratio", "mcpbind", "baseline"} <= set(figures["catalog_ratio"])
    # the lockstep machine runs a fixed number of seeded steps, its goal stated beside it
    machine = figures["property_steps_per_s"]
    assert machine["steps"] == 60
    assert {"steps_per_s", "steps_per_cpu_s", "goal_steps_per_cpu_s", "seed"} <= set(machine)
    # the odometer runs every sequence of its depth, its goal per run stated beside it
    odometer = figures["odometer_runs_per_s"]
    assert (odometer["runs"], odometer["depth"]) == (12, 1)
    assert {"runs_per_s", "runs_per_cpu_s", "steps_per_cpu_s", "goal_runs_per_cpu_s"} <= set(
        odometer
    )
    # The big server is above defer_threshold, as in the quick and full runs: a step then
    # shows tool_search, not the tools, and the refresh figure must still count them all.
    threshold = HostConfig().defer_threshold
    assert threshold is not None
    assert figures["refresh_ratio"]["tools"] > threshold
