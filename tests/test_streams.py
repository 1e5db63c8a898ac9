"""A ``list_changed`` stream that the server ends is listened to again, and what it missed
is read (SPEC §5.1, LIVE-3); a server that serves none says so (issue 27)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from testservers.inproc import deaf_server, streams_server
from testservers.recorders import Inputs

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.wire.connection import relisten_delay


async def wait_for(host: Host, name: str) -> None:
    with anyio.fail_after(5):
        while host.sample().binding(name) is None:
            await anyio.sleep(0.01)


async def test_an_ended_stream_is_listened_to_again_and_a_change_it_missed_reaches_the_catalog():
    """LIVE-3: the change announced while no stream was open is lost as a notification,
    and read by the refresh that follows the new stream."""
    streams = streams_server("a")
    inputs = Inputs()
    config = HostConfig(servers={"s": ServerConfig(target=streams.server)})
    async with Host.open(config, recorder=inputs) as host:
        await streams.add("b")  # heard while the stream is open
        await wait_for(host, "mcp__s__b")
        streams.end_streams()
        await streams.add("c")  # no stream is open: nobody hears it
        await wait_for(host, "mcp__s__c")
        after = inputs.seen[inputs.seen.index("stream_ended") :]
        assert after[:3] == ["stream_ended", "relisten", "tools/list"]
        assert host.server_status()[0].hears_list_changed
        await streams.add("d")  # the new stream delivers again
        await wait_for(host, "mcp__s__d")


async def test_a_stream_ended_again_and_again_is_listened_to_again_each_time():
    streams = streams_server("a")
    config = HostConfig(servers={"s": ServerConfig(target=streams.server)})
    async with Host.open(config) as host:
        for name in ("b", "c", "d"):
            streams.end_streams()
            await streams.add(name)
            await wait_for(host, f"mcp__s__{name}")


async def assert_not_heard(target: Any) -> None:
    """The host opens on ``target`` (one tool) and its status ends up saying the server is
    connected but not heard, in ``server_status`` and in the runtime's statistics."""
    config = HostConfig(servers={"s": ServerConfig(target=target)})
    async with Host.open(config) as host:
        with anyio.fail_after(5):
            while host.server_status()[0].hears_list_changed:
                await anyio.sleep(0.01)
        status = host.server_status()[0]
        assert (status.connected, status.tools) == (True, 1)
        assert not host.servers["s"].statistics().hears_list_changed


async def test_a_server_that_serves_no_list_changed_stream_says_so_in_its_status():
    await assert_not_heard(deaf_server("a"))


def acknowledging_nothing() -> Server[Any]:
    """A lowlevel 2026-07-28 server that acknowledges ``subscriptions/listen`` but honors
    none of the notifications asked for, then keeps the stream open."""

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tool = types.Tool(name="a", input_schema={"type": "object"})
        return types.ListToolsResult(tools=[tool])

    async def listen(ctx: Any, params: Any) -> Any:
        ack = types.SubscriptionsAcknowledgedNotification(
            params=types.SubscriptionsAcknowledgedNotificationParams(
                notifications=types.SubscriptionFilter(),
                _meta={SUBSCRIPTION_ID_META_KEY: ctx.request_id},
            )
        )
        await ctx.session.send_notification(ack, related_request_id=ctx.request_id)
        await anyio.sleep_forever()

    return Server("nothing-honored", on_list_tools=on_list_tools, on_subscriptions_listen=listen)


async def test_a_listen_acknowledged_without_list_changed_says_the_server_is_not_heard():
    """SPEC §5.7: the server answered the listen, but will not deliver ``list_changed``;
    its status says so, as for a server that refuses the listen outright."""
    await assert_not_heard(acknowledging_nothing())


def test_listening_again_waits_longer_only_when_streams_keep_ending():
    assert [relisten_delay(n) for n in (1, 2, 3, 4)] == [0.0, 0.5, 1.0, 2.0]
    assert relisten_delay(30) == 30.0
