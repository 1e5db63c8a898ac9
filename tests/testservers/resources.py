"""A real MCP server that publishes resources and resource templates and changes them
(SPEC §11.20): the SDK's lowlevel ``Server``, in process."""

from __future__ import annotations

from typing import Any

import anyio
import attrs
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourcesListChanged, ToolsListChanged

README = "docs://readme"
LOGO = "docs://logo"
SLOW = "docs://slow"
PAGES = "docs://pages/{name}"
PIXEL = "iVBORw0KGgo="  # base64 of a PNG's first bytes: what the host counts, not shows


@attrs.define(eq=False)
class Docs:
    """The server, what it lists, and what it saw."""

    server: Server[Any]
    bus: InMemorySubscriptionBus
    listed: dict[str, str]
    """uri -> the text it reads as (``LOGO`` reads as a PNG blob)."""
    reads: list[str] = attrs.field(factory=list)
    resource_lists: int = 0
    """How many ``resources/list`` requests it answered."""
    more_tools: list[str] = attrs.field(factory=list)
    cancelled: list[str] = attrs.field(factory=list)
    release: anyio.Event = attrs.field(factory=anyio.Event)

    def drop(self, uri: str) -> None:
        del self.listed[uri]

    def add(self, uri: str, text: str) -> None:
        self.listed[uri] = text

    async def add_tool(self, name: str) -> None:
        """A tool more, and ``toolsListChanged`` on the open ``subscriptions/listen``
        streams."""
        self.more_tools.append(name)
        await self.bus.publish(ToolsListChanged())

    async def announce(self) -> None:
        """``resourcesListChanged`` on the open ``subscriptions/listen`` streams."""
        await self.bus.publish(ResourcesListChanged())


def docs_server() -> Docs:
    bus = InMemorySubscriptionBus()
    docs: Docs

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {"uri": {"type": "string"}}}
        tools = [
            types.Tool(name="link", description="A link to a page", input_schema=schema),
            types.Tool(name="drop", description="Drop a resource, say so", input_schema=schema),
        ]
        tools += [
            types.Tool(name=n, description="one more", input_schema=schema) for n in docs.more_tools
        ]
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        uri = str((params.arguments or {}).get("uri", ""))
        if params.name == "drop":  # handshake era: the notification, not the stream
            docs.drop(uri)
            await ctx.session.send_resource_list_changed()
            return types.CallToolResult(content=[types.TextContent(type="text", text="dropped")])
        link = types.ResourceLink(type="resource_link", uri=uri, name="a page of the docs")
        return types.CallToolResult(content=[link])

    async def on_list_resources(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        docs.resource_lists += 1
        resources = [
            types.Resource(uri=uri, name=uri.rsplit("/", 1)[1], mime_type=_mime(uri))
            for uri in docs.listed
        ]
        return types.ListResourcesResult(resources=resources)

    async def on_list_resource_templates(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(uri_template=PAGES, name="page")
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def on_read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        docs.reads.append(uri)
        if uri == SLOW:
            try:
                await docs.release.wait()
            except anyio.get_cancelled_exc_class():
                docs.cancelled.append(uri)
                raise
        if uri == LOGO:
            blob = types.BlobResourceContents(uri=uri, mime_type="image/png", blob=PIXEL)
            return types.ReadResourceResult(contents=[blob])
        if uri.startswith("docs://pages/"):
            text = f"the page {uri.rsplit('/', 1)[1]}"
        elif uri in docs.listed:
            text = docs.listed[uri]
        else:
            raise MCPError(-32002, f"no resource {uri}")
        content = types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)
        return types.ReadResourceResult(contents=[content])

    server = Server(
        "docs",
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
        on_read_resource=on_read_resource,
        on_subscriptions_listen=ListenHandler(bus),
    )
    docs = Docs(server, bus, {README: "read me first", LOGO: "", SLOW: "at last"})
    return docs


def _mime(uri: str) -> str:
    return "image/png" if uri == LOGO else "text/plain"
