"""Demo MCP servers shipped with mcpbind, and the embedded default configuration.

``mcpbind catalog`` and ``mcpbind call`` use them when no configuration is given: three
stdio servers chosen to show what mcpbind handles (README "First run").
"""

from __future__ import annotations

import json
import sys

__all__ = ["DEMO_SERVERS", "demo_toml"]

DEMO_SERVERS = ("git.hub", "git_hub", "notes")


def demo_toml() -> str:
    """The embedded default configuration: each demo server as a stdio subprocess."""
    python = json.dumps(sys.executable)
    tables = []
    for name in DEMO_SERVERS:
        tables.append(
            f"[mcp_servers.{json.dumps(name)}]\n"
            f"command = {python}\n"
            f'args = ["-m", "mcpbind.demo.servers", {json.dumps(name)}]\n'
            "startup_timeout_sec = 20\n"
            "tool_timeout_sec = 10\n"
        )
    return "\n".join(tables)
