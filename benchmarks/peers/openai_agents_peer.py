"""openai-agents' MCP overheads over its own raw mcp calls; runs in the peer's own venv.

``python openai_agents_peer.py [--size smoke|quick|full]`` prints one JSON object:
``call_overhead_ratio``: the ``FunctionTool`` that ``MCPUtil`` builds for ``echo``, invoked
as the agent runner does (``on_invoke_tool`` with a ``ToolContext``), vs
``server.session.call_tool`` on the same ``ClientSession``; ``catalog_build_ratio``:
``MCPUtil.get_function_tools`` (list, then convert each tool, strict schemas) of a large
server vs the raw paginated ``list_tools`` on the same session. Tracing is disabled (no
network).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from _common import compare, emit, raw_list_all, server_command, sizes, versions
from agents import Agent, RunContextWrapper, set_tracing_disabled
from agents.mcp import MCPServerStdio, MCPUtil
from agents.tool_context import ToolContext


def stdio_server(tools: int) -> MCPServerStdio:
    command, args = server_command(tools)
    return MCPServerStdio(
        params={"command": command, "args": args},
        cache_tools_list=False,
        name="bench",
        client_session_timeout_seconds=120,
    )


async def main() -> None:
    set_tracing_disabled(True)
    size = sizes()
    agent = Agent(name="bench")
    context = RunContextWrapper(context=None)
    figures: dict[str, Any] = {"versions": versions("openai-agents", "mcp")}

    server = stdio_server(1)
    await server.connect()
    try:
        tools = await MCPUtil.get_function_tools(server, True, context, agent)
        echo: Any = next(t for t in tools if t.name == "echo")
        arguments = json.dumps({"text": "x"})

        async def routed(i: int) -> None:
            tool_context = ToolContext(
                context=None, tool_name="echo", tool_call_id=f"c{i}", tool_arguments=arguments
            )
            await echo.on_invoke_tool(tool_context, arguments)

        async def raw(i: int) -> None:
            assert server.session is not None
            await server.session.call_tool("echo", {"text": "x"})

        figures["call_overhead_ratio"] = await compare(
            routed, raw, rounds=size["rounds"], per_round=size["per_round"], warmup=20
        )
    finally:
        await server.cleanup()

    big = stdio_server(size["tools"])
    await big.connect()
    try:
        built: list[int] = []
        listed: list[int] = []

        async def build(i: int) -> None:
            built.append(len(await MCPUtil.get_function_tools(big, True, context, agent)))

        async def raw_list(i: int) -> None:
            assert big.session is not None
            listed.append(await raw_list_all(big.session))

        result = await compare(
            build, raw_list, rounds=size["catalog_rounds"], per_round=1, warmup=2
        )
        result["tools"] = built[-1]
        result["raw_tools"] = listed[-1]
        figures["catalog_build_ratio"] = result
    finally:
        await big.cleanup()
    emit(figures)


if __name__ == "__main__":
    asyncio.run(main())
