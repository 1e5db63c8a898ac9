"""Real MCP servers for the tests, built with the SDK's MCPServer and lowlevel Server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import attrs
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged


@attrs.define
class Probe:
    """What a test server saw: cancellations, concurrency."""

    cancelled: list[str] = attrs.field(factory=list)
    running: int = 0
    peak: dict[str, int] = attrs.field(factory=dict)
    calls: list[str] = attrs.field(factory=list)
    release: anyio.Event = attrs.field(factory=anyio.Event)

    def enter(self, kind: str) -> None:
        self.running += 1
        self.peak[kind] = max(self.peak.get(kind, 0), self.running)

    def leave(self) -> None:
        self.running -= 1


def fs_server(probe: Probe | None = None, name: str = "fs") -> MCPServer:
    """read (read-only), write, slow (waits for probe.release), fail (isError), add_tool."""
    probe = probe or Probe()
    server = MCPServer(name)

    @server.tool(description="Read a file", annotations=types.ToolAnnotations(readOnlyHint=True))
    async def read(path: str) -> str:
        probe.calls.append(f"read:{path}")
        probe.enter("read")
        try:
            await anyio.sleep(0.01)
        finally:
            probe.leave()
        return f"contents of {path}"

    @server.tool(description="Write a file")
    async def write(path: str, text: str = "") -> str:
        probe.calls.append(f"write:{path}")
        probe.enter("write")
        try:
            await anyio.sleep(0.01)
        finally:
            probe.leave()
        return f"wrote {path}"

    @server.tool(description="Wait until released")
    async def slow(tag: str = "") -> str:
        probe.calls.append(f"slow:{tag}")
        try:
            await probe.release.wait()
        except anyio.get_cancelled_exc_class():
            probe.cancelled.append(tag)
            raise
        return "released"

    @server.tool(description="Always fails")
    def fail() -> str:
        raise ValueError("the tool failed on purpose")

    @server.tool(description="Structured answer")
    def stats() -> dict[str, int]:
        return {"files": 3, "bytes": 42}

    @server.tool(description="Add a tool and announce list_changed")
    async def grow(tool: str, ctx: Context) -> str:
        def added() -> str:
            return tool

        server.add_tool(added, name=tool, description=f"added {tool}")
        await ctx.notify_tools_changed()
        return f"added {tool}"

    @server.tool(description="Add a tool and send notifications/tools/list_changed")
    async def grow_legacy(tool: str, ctx: Context) -> str:
        def added() -> str:
            return tool

        server.add_tool(added, name=tool, description=f"added {tool}")
        await ctx.request_context.session.send_tool_list_changed()
        return f"added {tool}"

    _ = (read, write, slow, fail, stats, grow, grow_legacy)
    return server


def paged_server(
    pages: list[list[dict[str, Any]]],
    *,
    fail_page: int | None = None,
    cursors: Callable[[int], str] = lambda i: f"page-{i}",
) -> Server[Any]:
    """A lowlevel server that lists ``pages`` one ``tools/list`` page at a time."""

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params else None
        index = 0 if cursor is None else int(cursor.rsplit("-", 1)[1])
        if fail_page is not None and index == fail_page:
            raise MCPError(types.INTERNAL_ERROR, f"page {index} is broken")
        tools = [types.Tool.model_validate(t) for t in pages[index]]
        more = index + 1 < len(pages)
        return types.ListToolsResult(tools=tools, next_cursor=cursors(index + 1) if more else None)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == "explode":
            raise MCPError(types.INTERNAL_ERROR, "the server exploded")
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

    return Server("paged", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}, **extra}


async def announce(server: MCPServer) -> None:
    """Publish list_changed from outside a request (the server's subscription bus)."""
    await server._subscriptions.publish(ToolsListChanged())


@attrs.define(eq=False)
class Streams:
    """A lowlevel server whose ``list_changed`` streams a test ends gracefully, as the
    SDK's own server does when it drains or a slow client's backlog fills (SPEC §5.1)."""

    server: Server[Any]
    bus: InMemorySubscriptionBus
    handler: ListenHandler
    tools: list[str]

    async def add(self, name: str) -> None:
        """Add a tool and announce it on the open streams (none hear it if none is open)."""
        self.tools.append(name)
        await self.bus.publish(ToolsListChanged())

    def end_streams(self) -> None:
        """End every open listen stream gracefully (the SDK's ``ListenHandler.close``)."""
        self.handler.close()


def streams_server(*tools: str) -> Streams:
    bus = InMemorySubscriptionBus()
    handler = ListenHandler(bus)
    listed = list(tools)

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool(n)) for n in listed])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

    server = Server(
        "streams",
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_subscriptions_listen=handler,
    )
    return Streams(server, bus, handler, listed)


def deaf_server(*tools: str) -> Server[Any]:
    """A lowlevel server that refuses ``subscriptions/listen``: no ``list_changed`` ever."""

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool(n)) for n in tools])

    async def refuse(ctx: Any, params: Any) -> Any:
        raise MCPError(types.METHOD_NOT_FOUND, "subscriptions/listen is not served here")

    return Server("deaf", on_list_tools=on_list_tools, on_subscriptions_listen=refuse)
