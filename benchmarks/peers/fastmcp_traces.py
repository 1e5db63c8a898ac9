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
import contextlib
import pathlib
from importlib import metadata
from typing import Any

from _outside import NAME, Outside, play, write_all
from fastmcp import Client
from fastmcp.client.group import ClientGroup
from fastmcp.client.transports import StdioTransport

SUBJECT = "fastmcp-client-group"


class Subject:
    def __init__(self, group: ClientGroup, trace: Outside) -> None:
        self.group = group
        self.trace = trace
        self.steps = 0

    async def sample(self) -> None:
        """A step: the group lists every member again and rebuilds its routes."""
        tools = await self.group.list_tools()
        self.trace.catalog(sorted(t.name for t in tools))
        self.trace.add("sample", step=self.steps)
        self.steps += 1

    async def call(self, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        trace = self.trace
        trace.current = call_id
        trace.add("call", step=self.steps - 1, call_id=call_id, name=tool)
        status = "failed"
        try:
            result = await self.group.call_tool(tool, arguments, raise_on_error=False)
            status = "error" if result.is_error else "ok"
        except asyncio.CancelledError:
            status = "cancelled"
            raise
        except KeyError:  # the group's own refusal of a name it has no route for
            status = "unsupported"
        except Exception:  # the group's or its client's failure, as a status
            status = "failed"
        finally:
            await trace.settle(call_id, status)


async def run(scenario: str, python: str, server_path: str, log: pathlib.Path) -> str:
    log.write_text("")
    trace = Outside(log, "fastmcp ClientGroup", metadata.version("fastmcp"))
    client: Client[Any] = Client(StdioTransport(python, [server_path, str(log)]), timeout=30)
    group = ClientGroup({NAME: client})
    await group.__aenter__()
    subject = Subject(group, trace)
    try:
        await subject.sample()
        if await play(scenario, subject, trace, f"{NAME}_{{}}".format):
            return trace.end()
        trace.wire()
    finally:
        with contextlib.suppress(Exception):  # a dead server's client may not close
            await group.__aexit__(None, None, None)
    trace.add("close")
    return trace.end()


async def main() -> None:
    await write_all(run, SUBJECT)


if __name__ == "__main__":
    asyncio.run(main())
