"""fastmcp's ``ClientGroup`` through the four trace scenarios of ``traces.py``; runs in the
peer's own venv (asyncio, no mcpbind).

``python fastmcp_traces.py SERVER_PYTHON SERVER OUT WORK`` runs each scenario against
``SERVER`` (the tests' logging server, run by ``SERVER_PYTHON``), writes
``fastmcp-client-group-<scenario>.ndjson`` into OUT (its logs in WORK) and prints the
names. The group (one fastmcp ``Client`` per server, here the one member ``tasks``, its
tools named ``tasks_<tool>``, collision-checked, each call routed to the client that
listed it) writes no trace, so the harness writes it from outside (``_outside.py``): a
step is what ``ClientGroup.list_tools()`` returns (its documented catalog refresh, called
once per step), a call is ``ClientGroup.call_tool(name, arguments,
raise_on_error=False)``; a result with ``is_error`` is ``error``, one without ``ok``, the
group's ``KeyError`` for an unknown name ``unsupported``, any other exception ``failed``,
a cancelled call ``cancelled``.
"""

from __future__ import annotations

import asyncio
import pathlib
from importlib import metadata
from typing import Any

from _outside import NAME, Outside, Peer, drive, write_all
from fastmcp import Client
from fastmcp.client.group import ClientGroup
from fastmcp.client.transports import StdioTransport

SUBJECT = "fastmcp-client-group"


class Subject(Peer):
    CHECKS_NAMES = False  # the group routes by what it listed last, whatever a step showed

    def __init__(self, group: ClientGroup, trace: Outside) -> None:
        super().__init__(trace)
        self.group = group

    async def listed(self) -> dict[str, Any]:
        """A step: the group lists every member again and rebuilds its routes."""
        return {t.name: t for t in await self.group.list_tools()}

    async def invoke(self, found: Any, call_id: str, tool: str, arguments: dict[str, Any]) -> str:
        result = await self.group.call_tool(tool, arguments, raise_on_error=False)
        return "error" if result.is_error else "ok"

    def failure(self, error: Exception) -> str:
        # KeyError: the group's own refusal of a name it has no route for
        return "unsupported" if isinstance(error, KeyError) else "failed"


async def run(scenario: str, python: str, server_path: str, log: pathlib.Path) -> str:
    log.write_text("")
    trace = Outside(log, "fastmcp ClientGroup", metadata.version("fastmcp"))
    client: Client[Any] = Client(StdioTransport(python, [server_path, str(log)]), timeout=30)
    group = ClientGroup({NAME: client})
    await group.__aenter__()

    async def close() -> None:
        await group.__aexit__(None, None, None)

    return await drive(scenario, Subject(group, trace), close, f"{NAME}_{{}}".format)


async def main() -> None:
    await write_all(run, SUBJECT)


if __name__ == "__main__":
    asyncio.run(main())
