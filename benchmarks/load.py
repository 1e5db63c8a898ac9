"""Load under faults (issue 6): N calls across 4 servers with random injected faults.

    python -m benchmarks.load [--calls 10000] [--seed 1] [--json PATH]

Three in-process ``MCPServer``s answer, fail with ``isError``, raise a transport error,
or hang (the tool timeout ends the call); the host cancels some calls; a fourth server is
a real stdio subprocess that is killed with SIGKILL from time to time. Every call_id must
end exactly once, in the status its fault implies; afterwards no trio task and no child
process may be left. Peak traced memory is measured at 1,000 and at N calls.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import signal
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from typing import Any

import attrs
import trio
from mcp import StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

from mcpbind.impl import Host, HostConfig, ServerConfig

LOWLEVEL = (
    pathlib.Path(__file__).resolve().parent.parent / "tests" / "testservers" / "stdio_lowlevel.py"
)
FAULTS = ("ok", "error", "transport", "hang", "cancel", "ok", "ok")
EXPECTED = {
    "ok": {"ok"},
    "error": {"error"},
    "transport": {"failed"},
    "hang": {"timed_out"},
    "cancel": {"cancelled"},
    "stdio": {"ok", "failed"},
}


def fault_server(name: str) -> MCPServer:
    server = MCPServer(name, log_level="CRITICAL")

    @server.tool(description="does what its fault says")
    async def work(fault: str, n: int) -> str:
        if fault == "error":
            raise ToolError(f"call {n} failed on purpose")
        if fault == "transport":
            raise MCPError(-32603, f"call {n}: transport fault")
        if fault in ("hang", "cancel"):
            await trio.sleep_forever()
        return f"done {n}"

    _ = work
    return server


@attrs.frozen
class LoadReport:
    calls: int
    seconds: float
    statuses: dict[str, int]
    wrong: list[str]
    kills: int
    killed_calls_failed: int
    tasks_left: int
    children_left: int
    peak_bytes: int


def children() -> list[int]:
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                found.append(int(entry))
    return found


async def _run(  # noqa: PLR0915 - the load driver reads best as one scenario
    calls: int, seed: int, concurrency: int, state: pathlib.Path
) -> dict[str, Any]:
    rng = random.Random(seed)
    stdio = StdioServerParameters(command=sys.executable, args=[str(LOWLEVEL), str(state)])
    servers = {
        f"s{i}": ServerConfig(
            target=fault_server(f"s{i}"), tool_timeout_sec=1.0, supports_parallel_tool_calls=True
        )
        for i in range(3)
    }
    servers["p"] = ServerConfig(target=stdio, supports_parallel_tool_calls=True, tool_timeout_sec=5)
    config = HostConfig(servers=servers, reconnect_initial_sec=0.02, reconnect_max_sec=0.1)
    statuses: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    wrong: list[str] = []
    kills = 0
    slots = trio.Semaphore(concurrency)
    baseline = trio.lowlevel.current_statistics().tasks_living
    async with Host.open(config) as host:

        async def one(n: int, fault: str) -> None:
            try:
                call_id = f"c{n}"
                snap = host.sample()
                if fault == "stdio":
                    name, args = "mcp__p__echo", {"text": str(n)}
                else:
                    name, args = f"mcp__s{n % 3}__work", {"fault": fault, "n": n}
                async with trio.open_nursery() as nursery:
                    if fault == "cancel":

                        async def cancel_soon() -> None:
                            # cancel() is a no-op until the call is accepted: keep asking
                            while True:
                                await trio.sleep(0.005)
                                host.cancel(call_id)

                        nursery.start_soon(cancel_soon)
                    result = await host.call(snap, call_id, name, args)
                    nursery.cancel_scope.cancel()
                seen[result.call_id] += 1
                statuses[result.status] += 1
                if result.status not in EXPECTED[fault]:
                    wrong.append(f"{call_id} ({fault}) ended {result.status}: {result.output[:80]}")
            finally:
                slots.release()

        async with trio.open_nursery() as nursery:
            for n in range(calls):
                fault = "stdio" if n % 4 == 3 else rng.choice(FAULTS)
                await slots.acquire()  # back-pressure: at most `concurrency` calls alive
                nursery.start_soon(one, n, fault)
                if n % 500 == 499 and (state / "pid").exists():
                    await trio.sleep(0.05)
                    try:
                        os.kill(int((state / "pid").read_text()), signal.SIGKILL)
                        kills += 1
                    except ProcessLookupError:
                        pass
                if n % 50 == 49:
                    await trio.sleep(0)
        twice = [c for c, k in seen.items() if k != 1]
        wrong.extend(f"{c} ended {seen[c]} times" for c in twice)
        if len(seen) != calls:
            wrong.append(f"{calls - len(seen)} calls never ended")
    await trio.sleep(0.1)  # let the SDK's closing tasks finish
    tasks_left = trio.lowlevel.current_statistics().tasks_living - baseline
    return {"statuses": dict(statuses), "wrong": wrong, "kills": kills, "tasks_left": tasks_left}


def run_load(calls: int, seed: int = 1, concurrency: int = 100) -> LoadReport:
    with tempfile.TemporaryDirectory() as state:
        tracemalloc.start()
        started = time.perf_counter()
        result = trio.run(_run, calls, seed, concurrency, pathlib.Path(state))
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    failed = result["statuses"].get("failed", 0)
    return LoadReport(
        calls=calls,
        seconds=round(seconds, 2),
        statuses=result["statuses"],
        wrong=result["wrong"],
        kills=result["kills"],
        killed_calls_failed=failed,
        tasks_left=result["tasks_left"],
        children_left=len(children()),
        peak_bytes=peak,
    )


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    small = run_load(1_000, args.seed)
    large = run_load(args.calls, args.seed)
    ratio = large.peak_bytes / small.peak_bytes
    report = {
        "small": attrs.asdict(small) | {"wrong": small.wrong[:5]},
        "large": attrs.asdict(large) | {"wrong": large.wrong[:5]},
        "peak_memory_ratio": round(ratio, 2),
    }
    print(json.dumps(report, indent=2))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2))
    ok = not small.wrong and not large.wrong and ratio <= 2.0
    ok = ok and large.tasks_left == 0 and large.children_left == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
