"""langchain-mcp-adapters through the four trace scenarios of ``traces.py``; runs in the
peer's own venv (asyncio, no mcpbind; the adapter requires ``mcp<2``).

``python langchain_traces.py SERVER_PYTHON SERVER OUT WORK`` runs each scenario against
``SERVER`` (the tests' logging server, run by ``SERVER_PYTHON``) twice and writes
``langchain-mcp-adapters-<scenario>.ndjson`` and
``langchain-mcp-adapters-session-<scenario>.ndjson`` into OUT (its logs in WORK), printing
the names. The first is the adapter's documented default: a step is
``MultiServerMCPClient.get_tools()`` (it opens a session to list, and each tool it
returns opens a session of its own, a new server process over stdio, for every call);
the second keeps one session open (``MultiServerMCPClient.session``) and a step is
``load_mcp_tools(session)`` on it (it lists on that session, and its tools call through
it). The adapter writes no trace, so the harness writes it from outside (``_outside.py``;
each step lists, so an unchanged catalog is a refresh that changed nothing): a call is
the step's tool's ``ainvoke`` with a tool call (name, args, id), as LangGraph's
``ToolNode`` invokes it; a ``ToolMessage`` with status ``success`` is ``ok``, ``error`` (an
MCP error result, handed to the model) ``error``, an exception (a session or transport
failure: the adapter raises it) ``failed``, a cancelled call ``cancelled``, a name the
step lacks ``unsupported``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import pathlib
from importlib import metadata
from typing import Any

from _outside import NAME, Outside, Peer, play, write_all
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools

SUBJECTS = {"langchain-mcp-adapters": False, "langchain-mcp-adapters-session": True}
"""Each subject and whether it keeps one session open."""


class Subject(Peer):
    LISTED = True

    def __init__(self, client: MultiServerMCPClient, session: Any, trace: Outside) -> None:
        super().__init__(trace)
        self.client = client
        self.session = session

    async def listed(self) -> dict[str, Any]:
        """A step: the tools listed anew (on the open session, or on a session of its own)."""
        if self.session is None:
            tools = await self.client.get_tools(server_name=NAME)
        else:
            tools = await load_mcp_tools(self.session, server_name=NAME)
        return {t.name: t for t in tools}

    async def invoke(self, found: Any, call_id: str, tool: str, arguments: dict[str, Any]) -> str:
        call = {"type": "tool_call", "name": tool, "args": arguments, "id": call_id}
        message = await found.ainvoke(call)
        return "error" if getattr(message, "status", "success") == "error" else "ok"


async def run(
    one_session: bool, scenario: str, python: str, server_path: str, log: pathlib.Path
) -> str:
    log.write_text("")
    host = "langchain-mcp-adapters" + (" (one session)" if one_session else "")
    trace = Outside(log, host, metadata.version("langchain-mcp-adapters"))
    connection: Any = {"transport": "stdio", "command": python, "args": [server_path, str(log)]}
    client = MultiServerMCPClient({NAME: connection})
    played = False

    async def closed(kind: Any, error: Any, _: Any) -> bool:
        # Once played, the session's own close may fail (mcp 1.x's stdio client: a
        # BrokenResourceError out of its reader): the trace has what matters.
        return played and isinstance(error, Exception)

    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_exit(closed)  # runs last, after the session's close
        session = None
        if one_session:
            session = await stack.enter_async_context(client.session(NAME))
        subject = Subject(client, session, trace)
        await subject.sample()
        whole = await play(scenario, subject, trace)
        played = True
        if whole:
            return trace.end()
        trace.wire()
    trace.add("close")
    return trace.end()


async def main() -> None:
    for subject, one_session in SUBJECTS.items():
        await write_all(functools.partial(run, one_session), subject)


if __name__ == "__main__":
    asyncio.run(main())
