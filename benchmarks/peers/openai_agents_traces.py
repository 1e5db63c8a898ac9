"""openai-agents through the four trace scenarios of ``traces.py``; runs in the peer's own
venv (asyncio, no mcpbind).

``python openai_agents_traces.py SERVER_PYTHON SERVER OUT WORK`` runs each scenario against
``SERVER`` (the tests' logging server, run by ``SERVER_PYTHON``), writes
``openai-agents-<scenario>.ndjson`` into OUT (its logs in WORK) and prints the names. The
agent layer writes no trace, so the harness writes it from outside (``_outside.py``): a
step is the ``FunctionTool`` list ``MCPUtil.get_function_tools`` builds (with
``cache_tools_list=False`` it lists the server's tools again for each step), a call is the
tool's ``on_invoke_tool`` as the agent runner invokes it; a returned text is ``ok``, the
framework's own error text (its default failure function) ``failed``, a cancelled
invocation ``cancelled``.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
from importlib import metadata
from typing import Any

from _outside import NAME, Outside, Peer, drive, write_all
from agents import Agent, RunContextWrapper, set_tracing_disabled
from agents.mcp import MCPServerStdio, MCPUtil
from agents.tool_context import ToolContext

FAILED = "An error occurred while running the tool"


class Subject(Peer):
    def __init__(self, server: MCPServerStdio, trace: Outside) -> None:
        super().__init__(trace)
        self.server = server
        self.agent = Agent(name="traces")
        self.context = RunContextWrapper(context=None)

    async def listed(self) -> dict[str, Any]:
        """A step: the agent layer lists the server's tools again (cache off)."""
        tools = await MCPUtil.get_function_tools(self.server, False, self.context, self.agent)
        return {t.name: t for t in tools}

    async def invoke(self, found: Any, call_id: str, tool: str, arguments: dict[str, Any]) -> str:
        text = json.dumps(arguments)
        context = ToolContext(
            context=None, tool_name=tool, tool_call_id=call_id, tool_arguments=text
        )
        output = await found.on_invoke_tool(context, text)
        return "failed" if str(output).startswith(FAILED) else "ok"


async def run(scenario: str, python: str, server_path: str, log: pathlib.Path) -> str:
    log.write_text("")
    trace = Outside(log, "openai-agents", metadata.version("openai-agents"))
    server = MCPServerStdio(
        params={"command": python, "args": [server_path, str(log)]},
        cache_tools_list=False,
        name=NAME,
        client_session_timeout_seconds=30,
    )
    await server.connect()
    return await drive(scenario, Subject(server, trace), server.cleanup)


async def main() -> None:
    set_tracing_disabled(True)
    await write_all(run, "openai-agents")


if __name__ == "__main__":
    asyncio.run(main())
