"""A trace (``mcpbind-trace/1``, SPEC §14.1) of a host layer that writes none, from outside:
the harness's inputs, the host's answers, its catalog, and what reached the server (the
tests' logging server's log). Plain Python and anyio: it also runs in a peer's own venv.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import pathlib
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio

FORMAT = "mcpbind-trace/1"
NAME = "tasks"
"""The server's name in every scenario."""
SCENARIOS = ("cancel_in_flight", "reused_call_id", "server_dies_mid_call", "refresh_during_a_step")
SLOW = {"steps": 50, "seconds": 5.0}
QUICK = {"steps": 1, "seconds": 0.01}


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

    def catalog(self, names: list[str], listed: bool = False) -> None:
        """The host's catalog now: a publication when it changed; ``listed``: the harness
        knows the host listed for it (its step lists), so an unchanged one is a refresh
        that changed nothing."""
        if names != self.names:
            self.generation += 1
            # Its catalog changed, so it listed: where, the harness cannot see, nor what.
            self.add("list_done", server=NAME)
            self.add("published", generation=self.generation, source=f"mcp:{NAME}", names=names)
            self.add("refresh_outcome", server=NAME, status="installed", generation=self.generation)
            self.names = names
        elif listed:
            self.add("list_done", server=NAME)
            self.add("refresh_outcome", server=NAME, status="unchanged", generation=self.generation)

    def end(self) -> str:
        self.add("end")
        return "".join(json.dumps(r) + "\n" for r in self.records)


class Subject(Protocol):
    """A peer host layer as an asyncio harness drives it: a step, a call."""

    async def sample(self) -> None: ...

    async def call(self, call_id: str, tool: str, arguments: dict[str, Any]) -> None: ...


class Peer:
    """The :class:`Subject` of a harness, written once: a step records what
    :meth:`listed` gives as the catalog; a call records its ``call``, runs :meth:`invoke`
    and ends in one status (``unsupported`` for a name the step lacks, ``cancelled``,
    :meth:`failure` of an exception), recorded by :meth:`Outside.settle`."""

    LISTED = False
    """The harness knows each step lists anew (``Outside.catalog``'s ``listed``)."""
    CHECKS_NAMES = True
    """A name the step lacks is ``unsupported`` before the layer is asked (False: the
    layer is asked anyway; its routes may outlive its last listing)."""

    def __init__(self, trace: Outside) -> None:
        self.trace = trace
        self.tools: dict[str, Any] = {}
        self.steps = 0

    async def listed(self) -> dict[str, Any]:
        """The layer's tools for a step, by name."""
        raise NotImplementedError

    async def invoke(self, found: Any, call_id: str, tool: str, arguments: dict[str, Any]) -> str:
        """Call ``tool`` (``found``: the step's tool of that name) and say its status."""
        raise NotImplementedError

    def failure(self, error: Exception) -> str:
        """The status of a call the layer failed by raising ``error``."""
        return "failed"

    async def sample(self) -> None:
        self.tools = await self.listed()
        self.trace.catalog(sorted(self.tools), listed=self.LISTED)
        self.trace.add("sample", step=self.steps)
        self.steps += 1

    async def call(self, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        trace = self.trace
        trace.current = call_id
        trace.add("call", step=self.steps - 1, call_id=call_id, name=tool)
        status = "failed"
        try:
            found = self.tools.get(tool)
            if found is None and self.CHECKS_NAMES:
                status = "unsupported"
            else:
                status = await self.invoke(found, call_id, tool, arguments)
        except asyncio.CancelledError:
            status = "cancelled"
            raise
        except Exception as error:  # the layer's or its client's failure, as a status
            status = self.failure(error)
        finally:
            await trace.settle(call_id, status)


async def drive(
    scenario: str,
    subject: Peer,
    close: Callable[[], Awaitable[Any]],
    tool: Callable[[str], str] = str,
) -> str:
    """The whole trace of ``scenario`` (:func:`play` after the first step), the layer
    closed by ``close`` at the end (a dead server's client may fail to close: ignored)."""
    trace = subject.trace
    try:
        await subject.sample()
        if await play(scenario, subject, trace, tool):
            return trace.end()
        trace.wire()
    finally:
        with contextlib.suppress(Exception):
            await close()
    trace.add("close")
    return trace.end()


async def play(
    scenario: str,
    subject: Subject,
    trace: Outside,
    tool: Callable[[str], str] = str,
) -> bool:
    """One scenario of :data:`SCENARIOS` after the subject's first step (an asyncio harness;
    ``tool`` spells a server tool's name as the subject names it). True when the trace is
    whole while the subject is still open (``refresh_during_a_step``: observed while open,
    as for the other subjects), else the caller reads the wire once more and closes."""
    if scenario == "cancel_in_flight":
        task = asyncio.create_task(subject.call("c1", tool("long_operation"), SLOW))
        await wait_for(trace.log, "tools/call long_operation")
        trace.wire()
        trace.add("cancel", call_id="c1")
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    elif scenario == "reused_call_id":
        await subject.call("c1", tool("long_operation"), QUICK)
        await subject.call("c1", tool("long_operation"), QUICK)
    elif scenario == "server_dies_mid_call":
        await subject.call("c1", tool("die"), {"after": 0.2})
        await subject.call("c2", tool("long_operation"), QUICK)
    else:
        await subject.call("c1", tool("retire"), {"name": "doomed"})
        await asyncio.sleep(2.0)  # the subject sees the change only at its next step
        await subject.call("c2", tool("doomed"), {})
        await subject.sample()  # the next step
        return True
    return False


async def write_all(
    run: Callable[[str, str, str, pathlib.Path], Awaitable[str]], subject: str
) -> None:
    """A harness's entry point: ``SERVER_PYTHON SERVER OUT WORK`` from the command line,
    each scenario's trace written as ``OUT/<subject>-<scenario>.ndjson`` (its server's log
    in WORK), the names printed as a JSON list."""
    python, server_path, out, work = sys.argv[1:5]
    written = []
    for scenario in SCENARIOS:
        text = await run(scenario, python, server_path, pathlib.Path(work) / f"{scenario}.log")
        path = pathlib.Path(out) / f"{subject}-{scenario}.ndjson"
        path.write_text(text, encoding="utf-8")
        written.append(str(path))
    print(json.dumps(written))
