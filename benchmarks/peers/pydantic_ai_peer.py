"""pydantic-ai's MCP overheads over its own raw mcp calls; runs in the peer's own venv.

``python pydantic_ai_peer.py [--size smoke|quick|full]`` prints one JSON object:
``call_overhead_ratio``: ``MCPToolset``'s tool call as a run makes it (the tool's
``args_validator``, then ``MCPToolset.call_tool``) vs ``client.session.call_tool`` on the
toolset's own ``ClientSession``; ``catalog_build_ratio``: ``MCPToolset.get_tools`` (list,
validate each schema, build each ``ToolsetTool``; ``cache_tools=False``) of a large server
vs the raw paginated ``list_tools`` on the same session.
"""

from __future__ import annotations

import asyncio
from typing import Any

from _common import compare, emit, raw_list_all, server_command, sizes, versions
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from pydantic_ai import RunContext
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage


def toolset(tools: int) -> tuple[MCPToolset[None], Client[Any]]:
    command, args = server_command(tools)
    client: Client[Any] = Client(StdioTransport(command, args), timeout=120)
    return MCPToolset(client, cache_tools=False), client


async def main() -> None:
    size = sizes()
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    figures: dict[str, Any] = {"versions": versions("pydantic-ai-slim", "fastmcp-slim", "mcp")}

    small, client = toolset(1)
    async with small:
        echo = (await small.get_tools(ctx))["echo"]

        async def routed(i: int) -> None:
            arguments = echo.args_validator.validate_python({"text": "x"})
            await small.call_tool("echo", arguments, ctx, echo)

        async def raw(i: int) -> None:
            await client.session.call_tool("echo", {"text": "x"})

        figures["call_overhead_ratio"] = await compare(
            routed, raw, rounds=size["rounds"], per_round=size["per_round"], warmup=20
        )

    big, big_client = toolset(size["tools"])
    async with big:
        built: list[int] = []
        listed: list[int] = []

        async def build(i: int) -> None:
            built.append(len(await big.get_tools(ctx)))

        async def raw_list(i: int) -> None:
            listed.append(await raw_list_all(big_client.session))

        result = await compare(
            build, raw_list, rounds=size["catalog_rounds"], per_round=1, warmup=2
        )
        result["tools"] = built[-1]
        result["raw_tools"] = listed[-1]
        figures["catalog_build_ratio"] = result
    emit(figures)


if __name__ == "__main__":
    asyncio.run(main())
