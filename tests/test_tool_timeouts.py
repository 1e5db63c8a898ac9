"""The tool timeout (SPEC §8.4): ``tool_timeout_sec`` bounds a call from the moment it
reaches its server; 0 means none. A real in-process server whose tool works for the
row's seconds, under trio's virtual time."""

from __future__ import annotations

import anyio
import pytest
import trio
import trio.testing
from mcp.server.mcpserver import MCPServer

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.model import texts


def working() -> MCPServer:
    server = MCPServer("working")

    @server.tool(description="Works for the given seconds, then says done")
    async def work(seconds: float) -> str:
        await anyio.sleep(seconds)
        return "done"

    _ = work
    return server


ROWS = [
    # tool_timeout_sec, the work's seconds -> status, text, virtual seconds taken
    (0, 100_000.0, "ok", '{"result":"done"}', 100_000.0),  # 0: no timeout at all
    (5, 4.0, "ok", '{"result":"done"}', 4.0),
    (5, 6.0, "timed_out", texts.TIMED_OUT.format(seconds="5 seconds"), 5.0),
]


@pytest.mark.trio
@pytest.mark.parametrize("row", ROWS, ids=["zero-is-none", "in-time", "too-long"])
async def test_a_call_runs_until_its_tool_timeout_and_a_zero_timeout_never_ends_it(
    autojump_clock: trio.testing.MockClock, row: tuple[float, float, str, str, float]
) -> None:
    timeout, work, status, text, took = row
    server = ServerConfig(target=working(), tool_timeout_sec=timeout)
    async with Host.open(HostConfig(servers={"s": server})) as host:
        started = anyio.current_time()
        result = await host.call(host.sample(), "c1", "mcp__s__work", {"seconds": work})
        elapsed = anyio.current_time() - started
    assert result.status == status, result.output
    if status == "ok":
        assert result.output.endswith(text)
    else:
        assert result.output == text
    assert took <= elapsed < took + 1
