"""A trace (``mcpbind-trace/1``, SPEC §14.1) of a host layer that writes none, from outside:
the harness's inputs, the host's answers, its catalog, and what reached the server (the
tests' logging server's log). Plain Python and anyio: it also runs in a peer's own venv.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import pathlib
from typing import Any

import anyio

FORMAT = "mcpbind-trace/1"
NAME = "tasks"
"""The server's name in every scenario."""


async def wait_for(log: pathlib.Path, prefix: str, timeout: float = 10.0) -> None:
    """Until the server's log has a line starting with ``prefix``."""
    with anyio.fail_after(timeout):
        while not any(line.startswith(prefix) for line in log.read_text().splitlines()):
            await anyio.sleep(0.01)


class Outside:
    """A trace of a host that writes none: the harness's inputs, the host's answers, its
    catalog, and the server's log of what reached it (merged as the harness observed
    them)."""

    def __init__(self, log: pathlib.Path, host: str, version: str) -> None:
        self.log = log
        self.read = 0
        self.generation = 0
        self.names: list[str] | None = None
        self.current: str | None = None
        self.records: list[dict[str, Any]] = [
            {
                "kind": "header",
                "format": FORMAT,
                "policy": "frozen",  # it routes by the catalog it built at connect
                "servers": [NAME],
                "builtins": [],
                "extensions": {},
                "max_name_length": 64,
                "host": {"name": host, "version": version},
            }
        ]

    async def settle(self, call_id: str, status: str) -> None:
        """A call ended at the layer with ``status`` (an asyncio harness, even while it is
        cancelled): what the server logged for it, its cancellation too if the layer sent
        one, then its result."""
        await asyncio.shield(asyncio.sleep(0.05))
        if status == "cancelled":
            with contextlib.suppress(TimeoutError):
                await asyncio.shield(wait_for(self.log, "notifications/cancelled", 2.0))
        self.wire()
        self.add("result", call_id=call_id, status=status)

    def add(self, kind: str, **fields: Any) -> None:
        self.records.append({"kind": kind, **fields})

    def wire(self) -> None:
        """What reached the server since last time, as the host's sends."""
        lines = self.log.read_text().splitlines()
        for line in lines[self.read :]:
            what, _, detail = line.partition(" ")
            sent = {"server": NAME, "call_id": self.current}
            if what == "tools/call":
                self.add("sent", method="tools/call", detail=detail, **sent)
            elif what == "notifications/cancelled" and "listen" not in detail:
                self.add("sent", method="notifications/cancelled", **sent)
            elif what == "list_changed":
                self.add("list_changed", server=NAME)
        self.read = len(lines)

    def catalog(self, names: list[str]) -> None:
        """The host's catalog now: a publication when it changed."""
        if names != self.names:
            self.generation += 1
            # Its catalog changed, so it listed: where, the harness cannot see, nor what.
            self.add("list_done", server=NAME)
            self.add("published", generation=self.generation, source=f"mcp:{NAME}", names=names)
            self.add("refresh_outcome", server=NAME, status="installed", generation=self.generation)
            self.names = names

    def end(self) -> str:
        self.add("end")
        return "".join(json.dumps(r) + "\n" for r in self.records)
