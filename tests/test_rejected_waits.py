"""A call the server rejected unrun (``-32020``, SPEC §8.9, INV-13) waits for a refresh
before it goes once more. How such a call ends when the host closes, or its tool timeout
fires, while that refresh has not ended: the ``_RETRYING`` texts, which say the server
rejected it, not the ``_EXPIRED`` ones of a forgotten session (§8.13). A real in-process
server rejects every call unrun and its every listing after the first never answers;
trio's virtual time runs the timeout."""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
import trio
import trio.testing
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from testservers.recorders import Inputs

from mcpbind.impl import Host, HostConfig, ServerChange, ServerConfig
from mcpbind.model import texts


class Rejecting:
    """A lowlevel server with one tool ``t`` that it rejects unrun (-32020), and whose
    listings after the first never answer: a refresh it is asked for stalls."""

    def __init__(self) -> None:
        self.listings = 0
        self.calls = 0
        self.refreshing = anyio.Event()

    def server(self) -> Server:
        async def on_list_tools(ctx: object, params: object) -> types.ListToolsResult:
            self.listings += 1
            if self.listings > 1:
                self.refreshing.set()
                await anyio.sleep_forever()
            tool = types.Tool(name="t", input_schema={"type": "object"})
            return types.ListToolsResult(tools=[tool])

        async def on_call_tool(ctx: object, params: object) -> types.CallToolResult:
            self.calls += 1
            raise MCPError(-32020, "Mcp-Param-Region does not match the arguments")

        return Server("rejecting", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


@pytest.mark.trio
async def test_a_rejected_call_waiting_for_its_refresh_when_the_host_closes_says_it_was_rejected(
    autojump_clock: trio.testing.MockClock,
):
    rejecting = Rejecting()
    config = HostConfig(servers={"s": ServerConfig(target=rejecting.server())})
    results = []
    # the caller outlives the host
    async with anyio.create_task_group() as callers, Host.open(config) as host:
        step = host.sample()

        async def call() -> None:
            results.append(await host.call(step, "c1", "mcp__s__t", {}))

        callers.start_soon(call)
        await rejecting.refreshing.wait()
    assert [(r.status, r.output) for r in results] == [("cancelled", texts.CLOSED_RETRYING)]
    assert rejecting.calls == 1  # it was never sent again


@pytest.mark.trio
async def test_a_rejected_call_whose_refresh_stalls_times_out_saying_it_was_rejected(
    autojump_clock: trio.testing.MockClock,
):
    rejecting = Rejecting()
    server = ServerConfig(target=rejecting.server(), tool_timeout_sec=5, list_timeout_sec=60)
    inputs = Inputs()
    async with Host.open(HostConfig(servers={"s": server}), recorder=inputs) as host:
        started = anyio.current_time()
        result = await host.call(host.sample(), "c1", "mcp__s__t", {})
        took = anyio.current_time() - started
    assert result.status == "timed_out"
    assert result.output == texts.TIMED_OUT_RETRYING.format(seconds="5 seconds", server="s")
    assert rejecting.calls == 1
    assert rejecting.listings == 2  # the refresh started and never ended
    assert 5.0 <= took < 6.0
    # the inputs (SPEC §3.1): rejected once, then its deadline, recorded once
    after = inputs.seen[inputs.seen.index("call") :]
    assert [k for k in after if k in ("call_rejected", "timeout", "call_failed")] == [
        "call_rejected",
        "timeout",
    ]


@pytest.mark.trio
@pytest.mark.parametrize("how", ["cancelled", "removed", "replaced"])
async def test_a_rejected_call_waiting_for_its_refresh_ends_as_its_ender_says(
    autojump_clock: trio.testing.MockClock, how: str
):
    """Cancelled by the host: ``CANCELLED``, as any call; its server removed or replaced
    by a reconfiguration (SPEC §11.17): the text that says it waited to be sent again."""
    rejecting = Rejecting()
    server = ServerConfig(target=rejecting.server())
    results = []
    async with Host.open(HostConfig(servers={"s": server})) as host:
        step = host.sample()

        async def call() -> None:
            results.append(await host.call(step, "c1", "mcp__s__t", {}))

        async with anyio.create_task_group() as callers:
            callers.start_soon(call)
            await rejecting.refreshing.wait()
            if how == "cancelled":
                host.cancel("c1")
            elif how == "removed":
                report = await host.reconfigure(HostConfig(servers={}))
                # SPEC §11.17: gone, no tool left, the waiting call ended (mutation seed
                # 103: the removed server's tool count made -1 went unseen)
                assert report.servers == (ServerChange("s", "removed", False, 0, None, 1),)
            else:
                replacement = ServerConfig(target=Rejecting().server(), tool_timeout_sec=9)
                await host.reconfigure(HostConfig(servers={"s": replacement}))
    if how == "cancelled":
        expected = texts.CANCELLED
    else:
        expected = texts.RECONFIGURED_RETRYING.format(how=how, server="s")
    assert [(r.status, r.output) for r in results] == [("cancelled", expected)]
    assert rejecting.calls == 1
