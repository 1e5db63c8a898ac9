"""Reading a stdio server's wire: the logging relay (``testservers/relay.py``) and what
the tests ask of the messages it saw (SPEC §11.14, INV-12)."""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

import anyio
from mcp import StdioServerParameters

HERE = pathlib.Path(__file__).parent / "testservers"
RELAY = HERE / "relay.py"
SERVER = HERE / "stdio_server.py"


def relayed(state: pathlib.Path, log: pathlib.Path) -> StdioServerParameters:
    """The test stdio server, behind the relay that logs its wire to ``log``."""
    args = [str(RELAY), str(log), sys.executable, str(SERVER), str(state)]
    return StdioServerParameters(command=sys.executable, args=args)


def wire(log: pathlib.Path) -> list[tuple[str, Any]]:
    """``(direction, message)`` per line of the relay's log; ``("> ", "EOF")`` at the end."""
    entries: list[tuple[str, Any]] = []
    for line in log.read_text(encoding="utf-8").splitlines():
        direction, body = line[:2], line[2:]
        entries.append((direction, body if body == "EOF" else json.loads(body)))
    return entries


def call_id_of(entries: list[tuple[str, Any]], tool: str) -> Any:
    for direction, message in entries:
        if (
            direction == "> "
            and isinstance(message, dict)
            and message.get("method") == "tools/call"
            and message["params"]["name"] == tool
        ):
            return message["id"]
    raise AssertionError(f"no tools/call of {tool} on the wire")


def assert_cancelled_before_eof(entries: list[tuple[str, Any]], request_id: Any) -> None:
    """Exactly one ``notifications/cancelled`` for ``request_id`` reached the server, and
    it did so before the host closed the server's stdin."""
    cancels = [
        index
        for index, (direction, message) in enumerate(entries)
        if direction == "> "
        and isinstance(message, dict)
        and message.get("method") == "notifications/cancelled"
        and message.get("params", {}).get("requestId") == request_id
    ]
    eof = entries.index(("> ", "EOF"))
    assert len(cancels) == 1, entries
    assert cancels[0] < eof, entries


async def sent(log: pathlib.Path, tool: str) -> None:
    """Wait until ``tools/call`` of ``tool`` is on the wire."""
    with anyio.fail_after(30):
        while True:
            if log.exists():
                try:
                    call_id_of(wire(log), tool)
                except AssertionError:
                    pass
                else:
                    return
            await anyio.sleep(0.02)
