"""A stdio echo server written with whatever ``mcp`` the running venv has (1.x or 2.x).

``python peer_server.py [TOOLS]``: ``echo`` plus ``TOOLS - 1`` generated tools, the same
shape as ``benchmarks.suite.echo_server``. Runs inside a peer's own venv, so it imports
nothing from mcpbind.
"""

from __future__ import annotations

import sys
from typing import Any

try:
    from mcp.server.mcpserver import MCPServer as Server  # mcp 2.x
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server  # mcp 1.x


def build(tools: int) -> Any:
    server = Server("bench", log_level="CRITICAL")

    @server.tool(description="echo the text")
    async def echo(text: str) -> str:
        return text

    for index in range(tools - 1):

        async def tool(x: int = 0) -> str:
            return "ok"

        server.add_tool(tool, name=f"tool_{index:05d}", description=f"generated tool {index}")
    _ = echo
    return server


if __name__ == "__main__":
    build(int(sys.argv[1]) if len(sys.argv) > 1 else 1).run()
