"""The tools of the test server that runs in-process, over stdio and over HTTP
(``stdio_server.py``), so that one test can try all three transports."""

from __future__ import annotations

import pathlib
from typing import Annotated

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from pydantic import Field

Region = Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]
"""A parameter a 2026-07-28 HTTP client mirrors into the ``Mcp-Param-Region`` header."""


#: Listed with ``excludable``: a tool that must run as a task, and one whose
#: ``x-mcp-header`` sits on an object property (invalid; ``MCPServer`` refuses to declare
#: it, so it is added to the listing by hand).
EXCLUDABLE = (
    types.Tool(
        name="research",
        description="Runs only as a task",
        input_schema={"type": "object", "properties": {"topic": {"type": "string"}}},
        execution=types.ToolExecution(task_support="required"),
    ),
    types.Tool(
        name="route",
        description="An x-mcp-header on an object property",
        input_schema={
            "type": "object",
            "properties": {"where": {"type": "object", "x-mcp-header": "Where"}},
        },
    ),
)


class _Listing(MCPServer):
    """``MCPServer`` listing :data:`EXCLUDABLE` after its own tools (``excludable``), and
    hiding the ``x-mcp-header`` annotations from its first ``hidden`` listings (-1:
    from all): a client that believes such a listing sends no ``Mcp-Param-*`` header, and
    the server, which checks calls against its real tools, answers -32020."""

    def __init__(self, name: str, *, excludable: bool, hidden: int) -> None:
        super().__init__(name)
        self._excludable = excludable
        self._hidden = hidden

    async def list_tools(self) -> list[types.Tool]:
        tools = await super().list_tools()
        if self._hidden != 0:
            self._hidden -= 1 if self._hidden > 0 else 0
            tools = [_without_headers(t) for t in tools]
        return [*tools, *EXCLUDABLE] if self._excludable else tools


def _without_headers(tool: types.Tool) -> types.Tool:
    properties = {
        k: {key: v for key, v in p.items() if key != "x-mcp-header"}
        for k, p in tool.input_schema.get("properties", {}).items()
    }
    return tool.model_copy(update={"input_schema": {**tool.input_schema, "properties": properties}})


def make_server(
    state: pathlib.Path, *, excludable: bool = False, hidden_headers: int = 0
) -> MCPServer:
    """echo, whoami (the client's name and version), locate (an ``x-mcp-header``
    parameter), measure (structured, with an outputSchema), modes (the elicitation
    modes the client advertises), connect (answers -32042, URL elicitation required,
    with ``accounts`` URLs to open; each call appends a line to STATE/connects), steps
    (progress per step), refuse (a JSON-RPC error worded as the TypeScript SDK words
    one), slow (a cancelled call appends its tag to
    STATE/cancelled). ``excludable``: :data:`EXCLUDABLE` is listed too;
    ``hidden_headers``: see :class:`_Listing`."""
    if excludable or hidden_headers:
        server: MCPServer = _Listing("stdio-test", excludable=excludable, hidden=hidden_headers)
    else:
        server = MCPServer("stdio-test")

    @server.tool(description="Echo the text back")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Who the client says it is")
    def whoami(ctx: Context) -> str:
        params = ctx.session.client_params
        info = None if params is None else params.client_info
        return "unknown" if info is None else f"{info.name} {info.version}"

    @server.tool(description="Say the region the call was routed by")
    def locate(region: Region) -> str:
        return f"region {region}"

    @server.tool(description="A structured answer, with the output schema MCPServer derives")
    def measure(text: str) -> dict[str, int]:
        return {"length": len(text), "words": len(text.split())}

    @server.tool(description="The elicitation modes the client advertises")
    def modes(ctx: Context) -> str:
        capabilities = ctx.client_capabilities
        elicitation = None if capabilities is None else capabilities.elicitation
        if elicitation is None:
            return "none"
        return ",".join(m for m in ("form", "url") if getattr(elicitation, m) is not None)

    @server.tool(description="Answer with a JSON-RPC error, as the TypeScript SDK words one")
    def refuse() -> str:
        raise MCPError(-32042, "MCP error -32042: this needs a browser")

    @server.tool(description="Needs the user to connect an account at a URL first")
    def connect(accounts: int = 1) -> str:
        with (state / "connects").open("a") as calls:
            calls.write(f"{accounts}\n")
        raise UrlElicitationRequiredError(
            [
                types.ElicitRequestURLParams(
                    message=f"Connect your Example account {n}",
                    url=f"https://example.com/connect?elicitationId=e{n}",
                    elicitation_id=f"e{n}",
                )
                for n in range(1, accounts + 1)
            ]
        )

    @server.tool(description="Report progress once per step, then answer")
    async def steps(ctx: Context, count: int = 3, pause: float = 0.0) -> str:
        for step in range(1, count + 1):
            await ctx.report_progress(step, count, f"step {step}")
            if pause:
                await anyio.sleep(pause)
        return f"{count} steps"

    @server.tool(description="Sleep, noting a cancellation")
    async def slow(seconds: float = 60.0, tag: str = "") -> str:
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            with (state / "cancelled").open("a") as marker:
                marker.write(tag + "\n")
            raise
        return "slept"

    return server
