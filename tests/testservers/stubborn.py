"""A stdio MCP server that will not go: ``python stubborn.py STATE_DIR``.

It ignores SIGTERM and, once its stdin closes, stays alive anyway, so only the last step
of a host's shutdown (SIGKILL) ends it. Writes its pid to STATE_DIR/pid.
"""

from __future__ import annotations

import os
import pathlib
import signal
import sys
import time

from mcp.server.mcpserver import MCPServer

state = pathlib.Path(sys.argv[1])
state.mkdir(parents=True, exist_ok=True)
(state / "pid").write_text(str(os.getpid()))
server = MCPServer("stubborn")


@server.tool(description="Echo the text back")
def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    server.run()
    time.sleep(3600)  # stdin closed: stay anyway
