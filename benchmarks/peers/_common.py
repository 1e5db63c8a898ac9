"""What every peer runner shares: the alternating comparison of ``benchmarks.suite``, on
asyncio, and the stdio server command. Runs inside a peer's own venv (no mcpbind, no trio).
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import pathlib
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

Op = Callable[[int], Awaitable[Any]]

SERVER = str(pathlib.Path(__file__).with_name("peer_server.py"))
# rounds, calls per round, catalog rounds, catalog size
SIZES = {
    "smoke": {"rounds": 2, "per_round": 5, "catalog_rounds": 2, "tools": 16},
    "quick": {"rounds": 10, "per_round": 25, "catalog_rounds": 5, "tools": 2048},
    "full": {"rounds": 30, "per_round": 50, "catalog_rounds": 15, "tools": 2048},
}


def server_command(tools: int) -> tuple[str, list[str]]:
    """The peer venv's own python running ``peer_server.py`` with ``tools`` tools."""
    return sys.executable, [SERVER, str(tools)]


def _summary(samples: list[float]) -> dict[str, float]:
    return {
        "median_us": round(statistics.median(samples) * 1e6, 2),
        "min_us": round(min(samples) * 1e6, 2),
        "max_us": round(max(samples) * 1e6, 2),
    }


async def compare(
    subject: Op, baseline: Op, *, rounds: int, per_round: int, warmup: int
) -> dict[str, Any]:
    """``benchmarks.suite.compare`` on asyncio: alternate rounds after a warm-up, GC paused
    inside a timed round; per-operation medians with min-max, their ratio and difference."""
    counter = [0]

    async def run(op: Op, n: int) -> float:
        started = time.perf_counter()
        for _ in range(n):
            counter[0] += 1
            await op(counter[0])
        return (time.perf_counter() - started) / n

    await run(subject, warmup)
    await run(baseline, warmup)
    mine: list[float] = []
    theirs: list[float] = []
    for index in range(rounds):
        order = (subject, baseline) if index % 2 == 0 else (baseline, subject)
        for op in order:
            gc.collect()
            gc.disable()
            try:
                (mine if op is subject else theirs).append(await run(op, per_round))
            finally:
                gc.enable()
    peer, base = statistics.median(mine), statistics.median(theirs)
    return {
        "ratio": round(peer / base, 3),
        "diff_us": round((peer - base) * 1e6, 2),
        "peer": _summary(mine),
        "baseline": _summary(theirs),
        "rounds": rounds,
        "per_round": per_round,
    }


def sizes() -> dict[str, int]:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=sorted(SIZES), default="full")
    return SIZES[parser.parse_args().size]


async def raw_list_all(session: Any) -> int:
    """The raw paginated ``list_tools`` of an mcp ``ClientSession`` (1.x: ``cursor=``,
    2.x: ``params=``); the number of tools."""
    two = "params" in inspect.signature(session.list_tools).parameters
    cursor = None
    count = 0
    while True:
        if cursor is None:
            page = await session.list_tools()
        elif two:
            from mcp import types  # noqa: PLC0415

            page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        else:
            page = await session.list_tools(cursor=cursor)
        count += len(page.tools)
        cursor = page.next_cursor if hasattr(page, "next_cursor") else page.nextCursor
        if cursor is None:
            return count


def versions(*names: str) -> dict[str, str]:
    from importlib.metadata import version  # noqa: PLC0415

    return {name: version(name) for name in names}


def emit(figures: dict[str, Any]) -> None:
    print(json.dumps(figures))
