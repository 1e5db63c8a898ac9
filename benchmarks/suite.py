"""mcpbind's benchmarks: every figure a ratio against a baseline measured in the same run.

Each comparison takes its rounds in pairs after a warm-up: one round of each side, back to
back, the side that goes first alternating from pair to pair, both sides treated alike
(the garbage collector run before each round and paused inside it). It reports each
side's median per-operation time with its min-max over rounds, and as ``ratio`` the
median over the pairs of the subject's time over the baseline's (``paired``): the two
rounds of a pair are a few milliseconds apart, so a change of the machine's load or
clock hits both, where a ratio of the two sides' medians (``ratio_of_medians``, kept
beside it) lets a busy stretch that fell on more rounds of one side count. In-process
the whole operation runs in this process, and ``cpu_ratio`` is the same paired ratio of
the process's CPU time per round: the time other processes take from this one on a
shared machine is not in it. Nothing here is a test: no figure is asserted anywhere.
"""

from __future__ import annotations

import gc
import os
import pathlib
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from mcpbind.impl import Host, HostConfig, ServerConfig

Op = Callable[[int], Awaitable[Any]]


def _summary(samples: list[float]) -> dict[str, float]:
    return {
        "median_us": round(statistics.median(samples) * 1e6, 2),
        "min_us": round(min(samples) * 1e6, 2),
        "max_us": round(max(samples) * 1e6, 2),
    }


def _paired(mine: list[float], theirs: list[float]) -> float:
    """The median over pairs of rounds of the subject's time over the baseline's."""
    return round(statistics.median(a / b for a, b in zip(mine, theirs, strict=True)), 3)


async def compare(
    subject: Op, baseline: Op, *, rounds: int, per_round: int, warmup: int
) -> dict[str, Any]:
    """``rounds`` pairs of rounds of ``subject`` and ``baseline`` (the module's docstring):
    per-operation medians and the paired ratio, of wall time and of CPU time."""
    counter = [0]

    async def run(op: Op, n: int) -> tuple[float, float]:
        started, cpu = time.perf_counter(), time.process_time()
        for _ in range(n):
            counter[0] += 1
            await op(counter[0])
        return (time.perf_counter() - started) / n, (time.process_time() - cpu) / n

    await run(subject, warmup)
    await run(baseline, warmup)
    times: tuple[list[float], list[float]] = ([], [])  # the subject's, the baseline's
    cpu: tuple[list[float], list[float]] = ([], [])
    for index in range(rounds):
        for side in (0, 1) if index % 2 == 0 else (1, 0):
            gc.collect()
            gc.disable()  # GC paused inside a timed round, collected between rounds
            try:
                wall, used = await run((subject, baseline)[side], per_round)
            finally:
                gc.enable()
            times[side].append(wall)
            cpu[side].append(used)
    mine, theirs = times
    return {
        "ratio": _paired(mine, theirs),
        "statistic": "paired",
        "ratio_of_medians": round(statistics.median(mine) / statistics.median(theirs), 3),
        "cpu_ratio": _paired(*cpu),
        "mcpbind": _summary(mine),
        "baseline": _summary(theirs),
        "rounds": rounds,
        "per_round": per_round,
    }


def echo_server(tools: int = 1) -> MCPServer:
    server = MCPServer("bench", log_level="CRITICAL")

    @server.tool(description="echo the text")
    async def echo(text: str) -> str:
        return text

    for index in range(tools - 1):

        async def tool(x: int = 0) -> str:
            return "ok"

        server.add_tool(tool, name=f"tool_{index:05d}", description=f"generated tool {index}")
    _ = echo
    return server


async def call_overhead(target: Any, *, rounds: int, per_round: int) -> dict[str, Any]:
    """``host.call`` vs ``Client.call_tool`` on the same server (two sessions)."""
    config = HostConfig(servers={"b": ServerConfig(target=target)})
    async with Host.open(config) as host, Client(target, cache=None) as client:
        snap = host.sample()

        async def routed(i: int) -> None:
            await host.call(snap, f"c{i}", "mcp__b__echo", {"text": "x"})

        async def raw(i: int) -> None:
            await client.call_tool("echo", {"text": "x"})

        return await compare(routed, raw, rounds=rounds, per_round=per_round, warmup=50)


async def refresh_ratio(tools: int, *, rounds: int, stdio: bool = False) -> dict[str, Any]:
    """``host.refresh`` of a large server vs the raw paginated ``list_tools`` (in-process,
    or with ``stdio`` one subprocess server per side)."""
    server: Any = stdio_target(tools) if stdio else echo_server(tools)
    # a loaded machine may take longer than the default 30 s to start and list a big server
    big = ServerConfig(target=server, startup_timeout_sec=600, list_timeout_sec=600)
    async with (
        Host.open(HostConfig(servers={"big": big})) as host,
        Client(server, cache=None) as client,
    ):

        async def refresh(i: int) -> None:
            await host.refresh("big")

        async def raw(i: int) -> None:
            cursor = None
            while True:
                page = await client.list_tools(cursor=cursor)
                cursor = page.next_cursor
                if cursor is None:
                    break

        # A figure for a failed server is no figure. Count the registry's tools, not a
        # step's: above defer_threshold a step shows tool_search instead (SPEC §11.9).
        (status,) = host.server_status()
        if not status.connected or status.tools != tools:
            raise RuntimeError(f"the big server did not connect: {status}")
        result = await compare(refresh, raw, rounds=rounds, per_round=1, warmup=2)
        result["tools"] = len(host.registry.state.specs)
        return result


async def sample_scaling(large_tools: int, small_tools: int, servers: int = 10) -> dict[str, Any]:
    """``host.sample()`` with ``large_tools`` vs ``small_tools`` (over ``servers`` servers);
    both hosts open at once, rounds alternated as in :func:`compare`. Default settings: the
    large host defers its tools (SPEC §11.9), its cached exposure is what is sampled."""

    def config(total: int) -> HostConfig:
        per = max(1, total // servers)
        return HostConfig(
            servers={f"s{i}": ServerConfig(target=echo_server(per)) for i in range(servers)}
        )

    async with Host.open(config(large_tools)) as large, Host.open(config(small_tools)) as small:

        async def sample_large(i: int) -> None:
            large.sample()

        async def sample_small(i: int) -> None:
            small.sample()

        result = await compare(sample_large, sample_small, rounds=30, per_round=2000, warmup=100)
        result["large_tools"] = len(large.registry.state.specs)
        result["small_tools"] = len(small.registry.state.specs)
        return result


async def concurrency(calls: int) -> dict[str, Any]:
    """``calls`` concurrent calls: throughput and peak traced memory, mcpbind vs raw."""
    server = echo_server()
    result: dict[str, Any] = {"calls": calls}
    async with (
        Host.open(
            HostConfig(
                servers={"b": ServerConfig(target=server, supports_parallel_tool_calls=True)}
            )
        ) as host,
        Client(server, cache=None) as client,
    ):
        snap = host.sample()

        async def through_host(i: int) -> None:
            await host.call(
                snap, f"k{calls}-{i}-{time.perf_counter_ns()}", "mcp__b__echo", {"text": "x"}
            )

        async def raw(i: int) -> None:
            await client.call_tool("echo", {"text": "x"})

        for label, op in (("baseline", raw), ("mcpbind", through_host)):
            gc.collect()
            tracemalloc.start()
            started = time.perf_counter()
            async with anyio.create_task_group() as nursery:
                for i in range(calls):
                    nursery.start_soon(op, i)
            seconds = time.perf_counter() - started
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            result[label] = {
                "seconds": round(seconds, 3),
                "calls_per_s": round(calls / seconds),
                "peak_bytes": peak,
            }
    result["throughput_ratio"] = round(
        result["mcpbind"]["calls_per_s"] / result["baseline"]["calls_per_s"], 3
    )
    result["peak_memory_ratio"] = round(
        result["mcpbind"]["peak_bytes"] / result["baseline"]["peak_bytes"], 3
    )
    return result


def explorer_rate(*, small: bool = False) -> dict[str, Any]:
    """States per second of the explorer on the standard suite's calls part."""
    from mcpbind.model import explore  # noqa: PLC0415
    from mcpbind.model.bounds import standard_suite  # noqa: PLC0415

    part = standard_suite("revalidate", calls=1 if small else None)[1]
    report = explore(part.bound)
    return {
        "states": report.states,
        "transitions": report.transitions,
        "seconds": round(report.seconds, 2),
        "states_per_s": round(report.states / report.seconds),
        "transitions_per_s": round(report.transitions / report.seconds),
    }


def _answered_calls(calls: int) -> list[str]:
    """A trace (SPEC §14) of one server, one step and ``calls`` calls answered in turn."""
    import json  # noqa: PLC0415

    header = {
        "kind": "header",
        "format": "mcpbind-trace/1",
        "policy": "revalidate",
        "servers": ["s"],
        "server_options": {"s": {}},
        "builtins": [],
        "extensions": {},
        "max_name_length": 64,
        "host": {"name": "bench", "version": "1"},
    }
    records: list[dict[str, Any]] = [
        header,
        {"kind": "sent", "server": "s", "method": "tools/list"},
        {"kind": "list_done", "server": "s", "tools": ["t"]},
        {"kind": "published", "generation": 1, "source": "mcp:s", "names": ["mcp__s__t"]},
        {"kind": "refresh_outcome", "server": "s", "status": "installed", "generation": 1},
        {"kind": "sample", "step": 0},
    ]
    for i in range(calls):
        records += [
            {"kind": "call", "step": 0, "call_id": f"a{i}", "name": "mcp__s__t"},
            {
                "kind": "sent",
                "server": "s",
                "method": "tools/call",
                "call_id": f"a{i}",
                "detail": "t",
            },
            {"kind": "call_responded", "call_id": f"a{i}"},
            {"kind": "result", "call_id": f"a{i}", "status": "ok"},
        ]
        records[-3]["detail"] = "t"  # the raw tool it sent
    records += [{"kind": "close"}, {"kind": "sent", "server": "s", "method": "close"}]
    records.append({"kind": "end"})
    return [json.dumps(r) for r in records]


def refine_scaling(large: int, small: int, rounds: int = 5) -> dict[str, Any]:
    """``trace check --strict`` (SPEC §14.5) per call on a trace of ``large`` calls vs one of
    ``small``: about x1 when refinement is linear in the trace."""
    from mcpbind.model.refine import refine  # noqa: PLC0415
    from mcpbind.model.trace import parse_trace  # noqa: PLC0415

    traces = {n: parse_trace(_answered_calls(n)) for n in (large, small)}
    times: dict[int, list[float]] = {large: [], small: []}
    for index in range(rounds):
        for n in (large, small) if index % 2 == 0 else (small, large):
            gc.collect()
            started = time.perf_counter()
            assert refine(traces[n]).violation is None
            times[n].append((time.perf_counter() - started) / n)
    result = {
        "mcpbind": _summary(times[large]),
        "baseline": _summary(times[small]),
        "large_calls": large,
        "small_calls": small,
    }
    result["ratio"] = round(statistics.median(times[large]) / statistics.median(times[small]), 3)
    return result


PROPERTY_GOAL_STEPS_PER_CPU_S = 1000
"""The goal of ``property_steps_per_s``, per CPU second (a shared machine's load moves
the wall-time rate, not this one): the machine's own work on one lockstep machine's
``ci`` budget (400 examples of at most 30 steps, 12,000 steps) at most 12 s of CPU, a
tenth of the two minutes that budget may take with Hypothesis drawing the choices
(``property_hypothesis_steps_per_s``, goal 100 steps/s)."""


class _Seeded:
    """Chooses uniformly with a seeded generator: every run of the benchmark takes the
    same choices, so it times the same steps."""

    def __init__(self, seed: int) -> None:
        import random  # noqa: PLC0415

        self._random = random.Random(seed)

    def choose(self, options: Any, label: str) -> Any:
        return options[self._random.randrange(len(options))]

    def steps(self, most: int) -> int:
        return most  # every run as long as it may be: the steps are what is timed


def property_rate(steps: int, seed: int = 29) -> dict[str, Any]:
    """The lockstep machine (model and runtime, ``revalidate``, on trio) run for a fixed
    number of steps: runs of at most 30 steps, choices from a seeded generator, until
    ``steps`` are done; steps per second of wall time and of this process's CPU time."""
    from mcpbind.properties.lockstep import run_machine  # noqa: PLC0415
    from mcpbind.properties.machines import STEPS, lockstep_bound  # noqa: PLC0415

    bound = lockstep_bound("revalidate")
    chooser = _Seeded(seed)
    done = runs = 0
    started, cpu = time.perf_counter(), time.process_time()
    while done < steps:
        trace = run_machine(bound, chooser, steps=min(STEPS, steps - done))
        if not trace:
            raise RuntimeError("a lockstep run took no step")
        done += len(trace)
        runs += 1
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    return {
        "steps": done,
        "runs": runs,
        "seed": seed,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu_seconds, 2),
        "steps_per_s": round(done / seconds),
        "steps_per_cpu_s": round(done / cpu_seconds),
        "goal_steps_per_cpu_s": PROPERTY_GOAL_STEPS_PER_CPU_S,
    }


ODOMETER_GOAL_RUNS_PER_CPU_S = 200
"""The goal of ``odometer_runs_per_s``, per CPU second: the ``ci`` odometer of ``mcpbind
check`` (13,703 runs: every sequence of 4 events under ``revalidate``, of 3 under
``frozen``) in at most 69 s of CPU, its share of the 180 CPU seconds that 90 s of wall
time give on 2 cores. A run costs its setup (the host opened over the scripted servers,
their first listings) and its teardown (every call answered, the run's trace checked)
more than its steps: the figure is per run."""


def odometer_rate(policy: str, depth: int) -> dict[str, Any]:
    """The odometer (``properties.machines.run_odometer``): every sequence of ``depth``
    events under ``policy``, each run from the start in lockstep, after a warm-up of
    depth 1; runs and steps per second of wall time and of CPU time (this process's and
    its children's)."""
    import resource  # noqa: PLC0415

    from mcpbind.properties.machines import run_odometer  # noqa: PLC0415

    def cpu() -> float:
        own, children = (
            resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    run_odometer("frozen", 1)  # imports, first-use caches
    started, cpu_started = time.perf_counter(), cpu()
    report = run_odometer(policy, depth)  # type: ignore[arg-type]
    seconds, cpu_seconds = time.perf_counter() - started, cpu() - cpu_started
    return {
        "policy": policy,
        "depth": depth,
        "runs": report.runs,
        "steps": report.steps,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu_seconds, 2),
        "runs_per_s": round(report.runs / seconds),
        "runs_per_cpu_s": round(report.runs / cpu_seconds),
        "steps_per_cpu_s": round(report.steps / cpu_seconds),
        "goal_runs_per_cpu_s": ODOMETER_GOAL_RUNS_PER_CPU_S,
    }


def property_hypothesis_rate(examples: int) -> dict[str, Any]:
    """The lockstep machine as ``mcpbind check`` runs it: Hypothesis draws the choices
    (``ci`` profile, ``examples`` runs of at most 30 steps); steps per second, the
    drawing included (the machine's own rate is :func:`property_rate`)."""
    from hypothesis import given, settings  # noqa: PLC0415
    from hypothesis import strategies as st  # noqa: PLC0415

    from mcpbind.properties import profiles  # noqa: PLC0415
    from mcpbind.properties.chooser import DrawChooser  # noqa: PLC0415
    from mcpbind.properties.lockstep import run_machine  # noqa: PLC0415
    from mcpbind.properties.machines import lockstep_bound  # noqa: PLC0415

    profiles.load("ci")
    bound = lockstep_bound("revalidate")
    steps = [0]

    @settings(max_examples=examples)
    @given(st.data())
    def lockstep(data: Any) -> None:
        steps[0] += len(run_machine(bound, DrawChooser(data), steps=30))

    started = time.perf_counter()
    lockstep()
    seconds = time.perf_counter() - started
    return {
        "steps": steps[0],
        "seconds": round(seconds, 2),
        "steps_per_s": round(steps[0] / seconds),
    }


async def peer_session_group(*, rounds: int, per_round: int) -> dict[str, Any]:
    """mcp's own ``ClientSessionGroup``: its ``call_tool`` over its own session's raw call,
    on the same stdio server (the peer's overhead over its own raw call, like for like)."""
    from mcp.client.session_group import ClientSessionGroup  # noqa: PLC0415

    async with ClientSessionGroup() as group:
        session = await group.connect_to_server(stdio_target())

        async def grouped(i: int) -> None:
            await group.call_tool("echo", {"text": "x"})

        async def raw(i: int) -> None:
            await session.call_tool("echo", {"text": "x"})

        result = await compare(grouped, raw, rounds=rounds, per_round=per_round, warmup=20)
        result["peer"] = result.pop("mcpbind")
        return result


def catalog_ratio(rounds: int) -> dict[str, Any]:
    """``mcpbind catalog`` on the embedded demo vs the raw SDK listing the same three
    servers (``benchmarks/catalog_raw.py``): whole processes, start-up and imports
    included, in pairs of runs as :func:`compare` takes its rounds; wall time per run, and
    the CPU time of the run's processes (the command's and its three servers'), which the
    load of a shared machine moves far less. Run from an empty directory, so that no
    ``./mcpbind.toml`` is read."""
    import resource  # noqa: PLC0415
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    root = str(pathlib.Path(__file__).resolve().parent.parent)
    found = shutil.which("mcpbind", path=str(pathlib.Path(sys.executable).parent))
    command = [found] if found else [sys.executable, "-m", "mcpbind.cli"]
    sides = {
        "mcpbind": [*command, "catalog"],
        "baseline": [sys.executable, "-m", "benchmarks.catalog_raw"],
    }
    # Both sides run from bytecode written by the warm-up, as from an installed package:
    # with PYTHONDONTWRITEBYTECODE in the environment, every run compiled again each of
    # mcpbind's modules whose bytecode was missing or older than its source.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = root
    times: dict[str, list[float]] = {side: [] for side in sides}
    cpu: dict[str, list[float]] = {side: [] for side in sides}

    def children_cpu() -> float:
        # a waited-for child's usage includes its own waited-for children: the servers
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime

    with tempfile.TemporaryDirectory() as empty:

        def run(side: str) -> tuple[float, float]:
            started, used = time.perf_counter(), children_cpu()
            subprocess.run(
                sides[side], cwd=empty, env=env, check=True, capture_output=True, timeout=300
            )
            return time.perf_counter() - started, children_cpu() - used

        run("mcpbind")  # warm-up: the file system cache, the bytecode (written)
        run("baseline")
        for index in range(rounds):
            for side in ("mcpbind", "baseline") if index % 2 == 0 else ("baseline", "mcpbind"):
                wall, used = run(side)
                times[side].append(wall)
                cpu[side].append(used)
    result: dict[str, Any] = {side: _summary(samples) for side, samples in times.items()}
    result["ratio"] = _paired(times["mcpbind"], times["baseline"])
    result["statistic"] = "paired"
    result["ratio_of_medians"] = round(
        statistics.median(times["mcpbind"]) / statistics.median(times["baseline"]), 3
    )
    result["cpu_ratio"] = _paired(cpu["mcpbind"], cpu["baseline"])
    result["cpu"] = {side: _summary(samples) for side, samples in cpu.items()}
    result["rounds"] = rounds
    return result


def stdio_target(tools: int = 1) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "benchmarks.echo_stdio", str(tools)]
    )


SIZES = {
    # smoke's "tools" is above the default defer_threshold (100), as quick's and full's are.
    "smoke": {
        "rounds": 2,
        "per_round": 5,
        "tools": 120,
        "sample": (100, 10),
        "calls": (10, 20),
        "trace_calls": (100, 10),
    },
    "quick": {
        "rounds": 30,
        "per_round": 20,
        "tools": 256,
        "sample": (1000, 100),
        "calls": (100, 1000),
        "trace_calls": (4000, 400),
    },
    "full": {
        "rounds": 100,
        "per_round": 30,
        "tools": 2048,
        "sample": (10_000, 100),
        "calls": (1000, 10_000),
        "trace_calls": (20_000, 2000),
    },
}


async def run_all(size: str, progress: Callable[[str], None]) -> dict[str, Any]:
    sizes = SIZES[size]
    rounds, per_round = sizes["rounds"], sizes["per_round"]
    figures: dict[str, Any] = {"size": size}
    progress("call overhead (in-process)")
    inproc = await call_overhead(echo_server(), rounds=rounds, per_round=per_round)
    progress("call overhead (stdio)")
    stdio = await call_overhead(stdio_target(), rounds=rounds, per_round=per_round // 2)
    figures["call_overhead_ratio"] = {"inproc": inproc, "stdio": stdio}
    progress("peer: mcp ClientSessionGroup (stdio)")
    figures["peers"] = {
        "mcp.ClientSessionGroup": {
            "call_overhead_ratio": await peer_session_group(rounds=rounds, per_round=per_round // 2)
        }
    }
    progress("refresh of a large server")
    figures["refresh_ratio"] = await refresh_ratio(sizes["tools"], rounds=max(3, rounds // 2))
    progress("sample scaling")
    figures["sample_scaling_ratio"] = await sample_scaling(*sizes["sample"])
    progress("concurrency")
    figures["concurrency"] = {str(n): await concurrency(n) for n in sizes["calls"]}
    return figures


async def run_asyncio(size: str, progress: Callable[[str], None]) -> dict[str, Any]:
    """The call overhead and concurrency figures again on asyncio: the same runtime (it is
    written on anyio), each against the raw ``mcp.Client`` on asyncio too (SPEC §11.13)."""
    sizes = SIZES[size]
    rounds, per_round = sizes["rounds"], sizes["per_round"]
    progress("asyncio: call overhead (in-process)")
    inproc = await call_overhead(echo_server(), rounds=rounds, per_round=per_round)
    progress("asyncio: call overhead (stdio)")
    stdio = await call_overhead(stdio_target(), rounds=rounds, per_round=per_round // 2)
    progress("asyncio: concurrency")
    return {
        "call_overhead_ratio": {"inproc": inproc, "stdio": stdio},
        "concurrency": {str(n): await concurrency(n) for n in sizes["calls"]},
    }
