"""google-adk's ``McpToolset`` through the four trace scenarios of ``traces.py``; runs in
the peer's own venv (asyncio, no mcpbind).

``python google_adk_traces.py SERVER_PYTHON SERVER OUT WORK`` runs each scenario against
``SERVER`` (the tests' logging server, run by ``SERVER_PYTHON``), writes
``google-adk-<scenario>.ndjson`` into OUT (its logs in WORK) and prints the names. The
toolset (``StdioConnectionParams``; ``tool_list_cache_ttl_seconds`` unset, its default:
it lists on every ``get_tools()``) writes no trace, so the harness writes it from outside
(``_outside.py``; each step lists, so an unchanged catalog is a refresh that changed
nothing), making the calls an agent run makes without asking a model: a step is
``McpToolset.get_tools()``, a call the step's ``McpTool.run_async(args=...,
tool_context=...)`` with a ``ToolContext`` over an ``InvocationContext`` of an
``LlmAgent`` (never asked: no model is reached) and an ``InMemorySessionService``
session. A result marked ``isError`` is ``error``, ADK's own ``{"error": ...}`` (a
failed session, handed to the model) or an exception ``failed``, any other result
``ok``, a cancelled call ``cancelled``, a name the step lacks ``unsupported``.
"""

from __future__ import annotations

import asyncio
import logging
import pathlib
from importlib import metadata
from typing import Any

from _outside import Outside, Peer, drive, write_all
from google.adk.agents import LlmAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.sessions import InMemorySessionService
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.adk.tools.tool_context import ToolContext
from mcp import StdioServerParameters

SUBJECT = "google-adk"


class Subject(Peer):
    LISTED = True

    def __init__(self, toolset: McpToolset, context: InvocationContext, trace: Outside) -> None:
        super().__init__(trace)
        self.toolset = toolset
        self.context = context

    async def listed(self) -> dict[str, Any]:
        """A step: the toolset lists the server's tools (no cache by default)."""
        return {t.name: t for t in await self.toolset.get_tools()}

    async def invoke(self, found: Any, call_id: str, tool: str, arguments: dict[str, Any]) -> str:
        context = ToolContext(self.context, function_call_id=call_id)
        result = await found.run_async(args=arguments, tool_context=context)
        if isinstance(result, dict) and "error" in result:
            return "failed"
        if isinstance(result, dict) and result.get("isError"):
            return "error"
        return "ok"


async def run(scenario: str, python: str, server_path: str, log: pathlib.Path) -> str:
    log.write_text("")
    trace = Outside(log, "google-adk McpToolset", metadata.version("google-adk"))
    server = StdioServerParameters(command=python, args=[server_path, str(log)])
    toolset = McpToolset(connection_params=StdioConnectionParams(server_params=server, timeout=30))
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name="traces", user_id="harness")
    agent = LlmAgent(name="traces", model="never-asked")
    context = InvocationContext(
        session_service=sessions, invocation_id="traces", agent=agent, session=session
    )
    return await drive(scenario, Subject(toolset, context, trace), toolset.close)


async def main() -> None:
    # Its failed calls are logged at ERROR/WARNING on stderr: the trace has them.
    logging.getLogger("google_adk").setLevel(logging.CRITICAL)
    await write_all(run, SUBJECT)


if __name__ == "__main__":
    asyncio.run(main())
