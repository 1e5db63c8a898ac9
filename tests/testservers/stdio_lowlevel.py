"""A lowlevel stdio MCP server for fault tests: ``python stdio_lowlevel.py STATE_DIR``.

* writes its pid to STATE_DIR/pid;
* ``tools/list`` hangs while STATE_DIR/hang-list exists;
* exits at startup while STATE_DIR/fail-starts holds a positive number (decremented each
  time), so a test can make the first N starts fail;
* tools: ``echo`` (answers), ``hang`` (never answers).
"""

from __future__ import annotations

import os
import pathlib
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

state = pathlib.Path(sys.argv[1])
state.mkdir(parents=True, exist_ok=True)
failing = state / "fail-starts"
if failing.exists():
    left = int(failing.read_text() or "0")
    if left > 0:
        failing.write_text(str(left - 1))
        sys.exit(4)
(state / "pid").write_text(str(os.getpid()))

TOOLS = [
    types.Tool(name="echo", input_schema={"type": "object"}),
    types.Tool(name="hang", input_schema={"type": "object"}),
]


async def on_list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    while (state / "hang-list").exists():
        await anyio.sleep(0.05)
    return types.ListToolsResult(tools=TOOLS)


async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "hang":
        await anyio.sleep_forever()
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


server = Server("lowlevel", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
