"""fastmcp's MCP overheads over its own raw mcp calls; runs in the peer's own venv.

``python fastmcp_peer.py [--size smoke|quick|full]`` prints one JSON object:
``call_overhead_ratio``: ``ClientGroup.call_tool`` (fastmcp's multi-server router, one
member ``b``, namespaced ``b_echo``) vs ``client.session.call_tool`` on the member's own
``ClientSession``; ``catalog_build_ratio``: ``ClientGroup.list_tools`` (list every member,
namespace and route each tool) of a large server vs the raw paginated ``list_tools`` on
the same session.
"""

from __future__ import annotations

import asyncio
from typing import Any

from _common import compare, emit, raw_list_all, server_command, sizes, versions
from fastmcp import Client
from fastmcp.client.group import ClientGroup
from fastmcp.client.transports import StdioTransport


def group(tools: int) -> tuple[ClientGroup, Client[Any]]:
    command, args = server_command(tools)
    client: Client[Any] = Client(StdioTransport(command, args), timeout=120)
    return ClientGroup({"b": client}), client


async def main() -> None:
    size = sizes()
    figures: dict[str, Any] = {"versions": versions("fastmcp", "mcp")}

    small, client = group(1)
    async with small:
        await small.list_tools()

        async def routed(i: int) -> None:
            await small.call_tool("b_echo", {"text": "x"})

        async def raw(i: int) -> None:
            await client.session.call_tool("echo", {"text": "x"})

        figures["call_overhead_ratio"] = await compare(
            routed, raw, rounds=size["rounds"], per_round=size["per_round"], warmup=20
        )

    big, big_client = group(size["tools"])
    async with big:
        built: list[int] = []
        listed: list[int] = []

        async def build(i: int) -> None:
            built.append(len(await big.list_tools()))

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
