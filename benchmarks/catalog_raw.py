"""``python -m benchmarks.catalog_raw``: what ``mcpbind catalog`` does for the embedded
demo, with the raw SDK only: start the three demo servers (stdio, at once), list each
one's tools, print a line per tool, stop them. The baseline of ``catalog_ratio``."""

from __future__ import annotations

import sys

import anyio
from mcp import Client, StdioServerParameters

from mcpbind.demo import DEMO_SERVERS


async def main() -> None:
    found: dict[str, list[str]] = {}

    async def list_one(name: str) -> None:
        target = StdioServerParameters(
            command=sys.executable, args=["-m", "mcpbind.demo.servers", name]
        )
        async with Client(target, cache=None) as client:
            names: list[str] = []
            cursor = None
            while True:
                page = await client.list_tools(cursor=cursor)
                names += [tool.name for tool in page.tools]
                cursor = page.next_cursor
                if cursor is None:
                    break
            found[name] = names

    async with anyio.create_task_group() as group:
        for name in DEMO_SERVERS:
            group.start_soon(list_one, name)
    for name in DEMO_SERVERS:
        for tool in found[name]:
            print(f"{name}\t{tool}")


if __name__ == "__main__":
    anyio.run(main, backend="trio")
