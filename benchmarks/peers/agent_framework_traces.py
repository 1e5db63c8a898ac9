"""Microsoft agent-framework's ``MCPStdioTool`` through the four trace scenarios of
``traces.py``; runs in the peer's own venv (asyncio, no mcpbind).

``python agent_framework_traces.py SERVER_PYTHON SERVER OUT WORK`` runs each scenario
against ``SERVER`` (the tests' logging server, run by ``SERVER_PYTHON``), writes
``agent-framework-<scenario>.ndjson`` into OUT (its logs in WORK) and prints the names.
The tool (it loads the server's tools as ``FunctionTool`` s when entered and, on the
2026-07-28 protocol, opens a ``subscriptions/listen`` stream and reloads them in the
background on each ``list_changed``) writes no trace, so the harness writes it from
outside (``_outside.py``), making the calls an agent run makes without a model: a step is
the tool's ``functions``, which ``Agent.run`` copies into the run's tool list at its
start, a call is the step's ``FunctionTool.invoke(arguments=..., tool_call_id=...)``, as
the run's function-invocation loop calls it. A name the step lacks is ``unsupported``, a
returned value ``ok``, the tool's ``ToolExecutionException`` ``error`` (the server's error
result) or ``failed`` (an ``MCPError`` under it: the connection or the protocol failed),
any other exception ``failed``, a cancelled call ``cancelled``.
"""

from __future__ import annotations

import asyncio
import logging
import pathlib
from importlib import metadata
from typing import Any

from _outside import NAME, Outside, Peer, drive, write_all
from agent_framework import MCPStdioTool
from agent_framework.exceptions import ToolExecutionException
from mcp import MCPError

SUBJECT = "agent-framework"


class Subject(Peer):
    def __init__(self, tool: MCPStdioTool, trace: Outside) -> None:
        super().__init__(trace)
        self.tool = tool

    async def listed(self) -> dict[str, Any]:
        """A step: the functions the tool holds now (as its last load left them)."""
        return {f.name: f for f in self.tool.functions}

    async def invoke(self, found: Any, call_id: str, tool: str, arguments: dict[str, Any]) -> str:
        await found.invoke(arguments=arguments, tool_call_id=call_id)
        return "ok"

    def failure(self, error: Exception) -> str:
        if isinstance(error, ToolExecutionException):  # the server's error, or a lost link
            causes = (*error.args, error.__cause__)
            return "failed" if any(isinstance(c, MCPError) for c in causes) else "error"
        return "failed"


async def run(scenario: str, python: str, server_path: str, log: pathlib.Path) -> str:
    log.write_text("")
    trace = Outside(log, "agent-framework MCPStdioTool", metadata.version("agent-framework-core"))
    tool = MCPStdioTool(name=NAME, command=python, args=[server_path, str(log)])
    await tool.__aenter__()

    async def close() -> None:
        await tool.__aexit__(None, None, None)

    return await drive(scenario, Subject(tool, trace), close)


async def main() -> None:
    # Its failed calls and lost subscriptions are logged at ERROR/WARNING on stderr: the
    # trace has them.
    logging.getLogger("agent_framework").setLevel(logging.CRITICAL)
    await write_all(run, SUBJECT)


if __name__ == "__main__":
    asyncio.run(main())
