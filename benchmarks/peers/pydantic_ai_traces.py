"""pydantic-ai's ``MCPToolset`` through the four trace scenarios of ``traces.py``; runs in
the peer's own venv (asyncio, no mcpbind).

``python pydantic_ai_traces.py SERVER_PYTHON SERVER OUT WORK`` runs each scenario against
``SERVER`` (the tests' logging server, run by ``SERVER_PYTHON``) twice, writes
``pydantic-ai-<scenario>.ndjson`` (``cache_tools`` on, the default) and
``pydantic-ai-uncached-<scenario>.ndjson`` (``cache_tools=False``, its documented switch)
into OUT (its logs in WORK) and prints the names. The toolset (built from a fastmcp
``StdioTransport``, so that it builds its own fastmcp ``Client`` with the message handler
that drops the toolset's tool cache on ``list_changed``) writes no trace, so the harness
writes it from outside (``_outside.py``), making the toolset calls an agent run makes
without a model: a step is ``MCPToolset.get_tools(ctx)`` (what the run's tool manager asks
every toolset for before each model request: from its cache unless dropped, or listed
anew with the cache off), a call is the step's ``ToolsetTool``: its ``args_validator``,
then ``MCPToolset.call_tool(name, args, ctx, tool)``. A name the step lacks is
``unsupported`` (the run's "Unknown tool name" retry), a returned value ``ok``,
``ModelRetry`` (a tool error or a protocol error, with ``tool_error_behavior='retry'``,
the default: the run hands it to the model to retry) ``error``, any other exception
``failed``, a cancelled call ``cancelled``.
"""

from __future__ import annotations

import asyncio
import functools
import pathlib
from importlib import metadata
from typing import Any

from _outside import Outside, Peer, drive, write_all
from fastmcp.client.transports import StdioTransport
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelRetry
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

SUBJECTS = {"pydantic-ai": True, "pydantic-ai-uncached": False}
"""Each subject and its ``cache_tools``."""


class Subject(Peer):
    def __init__(self, toolset: MCPToolset[None], trace: Outside) -> None:
        super().__init__(trace)
        self.toolset = toolset
        self.ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())

    async def listed(self) -> dict[str, Any]:
        """A step: the toolset's tools (from its cache, if on, unless ``list_changed``
        dropped it)."""
        return await self.toolset.get_tools(self.ctx)

    async def invoke(self, found: Any, call_id: str, tool: str, arguments: dict[str, Any]) -> str:
        args = found.args_validator.validate_python(arguments)
        await self.toolset.call_tool(tool, args, self.ctx, found)
        return "ok"

    def failure(self, error: Exception) -> str:
        # ModelRetry: the toolset's tool or protocol error, handed to the model
        return "error" if isinstance(error, ModelRetry) else "failed"


async def run(
    cache_tools: bool, scenario: str, python: str, server_path: str, log: pathlib.Path
) -> str:
    log.write_text("")
    host = "pydantic-ai MCPToolset" + ("" if cache_tools else " (cache_tools=False)")
    trace = Outside(log, host, metadata.version("pydantic-ai-slim"))
    toolset: MCPToolset[None] = MCPToolset(
        StdioTransport(python, [server_path, str(log)]), read_timeout=30, cache_tools=cache_tools
    )
    await toolset.__aenter__()

    async def close() -> None:
        await toolset.__aexit__(None, None, None)

    return await drive(scenario, Subject(toolset, trace), close)


async def main() -> None:
    for subject, cache_tools in SUBJECTS.items():
        await write_all(functools.partial(run, cache_tools), subject)


if __name__ == "__main__":
    asyncio.run(main())
