"""A controllable server connection: the seam of ``impl.connection``, driven by rules.

Every request the runtime makes parks here until a rule of the machine releases it: a
``tools/list`` page is delivered or fails, a ``tools/call`` is answered (ok or
``isError``) or fails, a server disconnects (every parked request raises
``ConnectionLost``) or reconnects (a parked connection attempt goes through), a catalog
changes and ``list_changed`` is announced. The runtime under test is the production
code: only what sits behind :class:`~mcpbind.impl.wire.connection.Connection` is scripted.

Each server keeps its *wire*: what reached it, in order (``open``, ``tools/call``,
``notifications/cancelled``, ``tasks/cancel``, and how the session ended: ``close`` when
the host closed it, ``gone`` after a disconnect, ``killed`` when the host tore it down
while cancelled). As in
the SDK, a cancellation is first handed to the transport (the *outbox*) and written later:
the machine writes outboxes when it settles, a session that closes writes its outbox
first, and a session torn down loses it (INV-12).

Catalogs come from the abstract model's :class:`~mcpbind.model.values.ServerSpec`, so the
implementation and the model list exactly the same tools.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import attrs

from mcpbind.impl.config.server import ServerConfig
from mcpbind.impl.wire.seam import (
    HEADER_MISMATCH,
    Connection,
    ConnectionLost,
    Elicit,
    OnStderr,
    OnStream,
    OnWireProgress,
    RequestFailed,
    ServerError,
    SessionExpired,
    TaskHandle,
    TaskPoll,
)
from mcpbind.model.values import ServerSpec, TaskEnd

from .parked import CALL_ID, PendingCall, PendingList, PendingPoll, raw_tool

__all__ = [
    "CALL_ID",
    "PendingCall",
    "PendingList",
    "Replacement",
    "ScriptedConnector",
    "ScriptedServer",
    "raw_tool",
]


@attrs.frozen
class Replacement:
    """The target of a changed server's new configuration (SPEC §3.7): its first connection
    reaches a new server, up, listing ``spec.replacement`` version by version."""

    spec: ServerSpec


class ScriptedServer:
    """One scripted server: its catalog versions, connection state and parked requests."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.versions = spec.versions
        """What it lists, version by version (a replacement's, once replaced)."""
        self.replaced = False
        self.version = 0
        self.up = True
        self._up_event = anyio.Event()
        self._up_event.set()
        self.lost: anyio.Event | None = None
        self.on_list_changed: Callable[[], None] | None = None
        self.on_stream: OnStream | None = None
        self.listening = True
        """Its ``list_changed`` stream is open: a change is announced (SPEC §5.1)."""
        self.lists: list[PendingList] = []
        self.calls: dict[str, PendingCall] = {}
        self.polls: dict[str, PendingPoll] = {}
        """Calls that run as tasks, by call_id: their parked poll."""
        self.tasks: dict[str, PendingCall] = {}
        """Calls that run as tasks, by call_id, until their task ends or is given up."""
        self.ran_tasks: set[str] = set()
        """Every call_id this server ever ran as a task."""
        self.late: dict[str, Callable[[], None]] = {}
        """Calls the host ended while they were out: the server may still answer."""
        self.connections = 0
        self.connection: _Connection | None = None
        """The connection of the current session."""
        self.wire: list[tuple[str, str]] = []
        self.outbox: list[tuple[str, str]] = []

    def write(self) -> None:
        """The transport writes what it was handed."""
        self.wire.extend(self.outbox)
        self.outbox.clear()

    # --- what the rules do -------------------------------------------------------------

    def page(self, version: int, index: int) -> dict[str, Any]:
        pages = self.versions[version]
        result: dict[str, Any] = {"tools": [raw_tool(t) for t in pages[index]]}
        if index + 1 < len(pages):
            result["nextCursor"] = f"v{version}p{index + 1}"
        return result

    def deliver_page(self) -> None:
        pending = self.lists.pop(0)
        pending.release(self.page(pending.version, pending.page))

    def fail_page(self, why: str) -> None:
        self.lists.pop(0).release(error=RequestFailed(why))

    def answer(self, call_id: str, *, is_error: bool) -> None:
        pending = self.calls.pop(call_id)
        text = "the tool failed" if is_error else f"answer to {call_id}"
        pending.release({"content": [{"type": "text", "text": text}], "isError": is_error})

    def fail_call(self, call_id: str, why: str) -> None:
        self.calls.pop(call_id).release(error=RequestFailed(why))

    async def report_progress(self, call_id: str) -> None:
        """One ``notifications/progress`` for the call (SPEC §8.10)."""
        pending = self.calls[call_id]
        pending.progressed += 1
        if pending.on_progress is not None:
            await pending.on_progress(float(pending.progressed), None, None)

    def expire_session(self, call_id: str) -> None:
        """HTTP 404 (SPEC §8.13): the server no longer knows the session; the call is
        refused unrun (the host then replaces the session)."""
        self.calls.pop(call_id).release(error=SessionExpired("Session not found"))
        if self.connection is not None:
            self.connection.forgotten = True  # nothing sent in it reaches the server now

    def reject_call(self, call_id: str) -> None:
        """-32020 (SPEC §8.9): the call's Mcp-Param-* headers do not match its arguments."""
        error = ServerError(HEADER_MISMATCH, "Mcp-Param-Region header does not match the body")
        self.calls.pop(call_id).release(error=error)

    def create_task(self, call_id: str) -> None:
        """Answer the call with a task handle (SPEC §8.12); its task id is its call_id."""
        pending = self.calls.pop(call_id)
        self.tasks[call_id] = pending
        self.ran_tasks.add(call_id)
        pending.release(TaskHandle(call_id, 0.0))

    def end_task(self, call_id: str, status: TaskEnd, *, is_error: bool, why: str) -> None:
        """The call's parked poll finds its task terminal."""
        pending = self.polls.pop(call_id)
        del self.tasks[call_id]
        if status == "completed":
            text = "the tool failed" if is_error else f"answer to {call_id}"
            result = {"content": [{"type": "text", "text": text}], "isError": is_error}
            pending.release(TaskPoll("completed", result=result))
        else:
            pending.release(TaskPoll(status, message=why if status == "failed" else None))

    def fail_poll(self, call_id: str, why: str) -> None:
        del self.tasks[call_id]
        self.polls.pop(call_id).release(error=RequestFailed(why))

    def answer_late(self, call_id: str) -> None:
        self.late.pop(call_id)()

    def change_catalog(self) -> None:
        self.version += 1
        if self.up and self.listening and self.on_list_changed is not None:
            self.on_list_changed()  # with the stream ended, nobody hears it

    def end_stream(self) -> None:
        """The server ends its ``list_changed`` stream gracefully."""
        self.listening = False
        if self.on_stream is not None:
            self.on_stream("ended")

    def relisten(self) -> None:
        """The host's new ``list_changed`` stream is acknowledged."""
        self.listening = True
        if self.on_stream is not None:
            self.on_stream("relistened")

    def disconnect(self) -> None:
        self.up = False
        self._up_event = anyio.Event()
        if self.lost is not None:
            self.lost.set()
        lost = ConnectionLost("connection closed")
        for pending in self.lists:
            pending.release(error=lost)
        for pending_call in self.calls.values():
            pending_call.release(error=lost)
        for poll in self.polls.values():
            poll.release(error=lost)
        self.lists.clear()
        self.calls.clear()
        self.polls.clear()
        self.tasks.clear()
        self.late.clear()
        self.outbox.clear()  # the session is gone, and what it was handed with it

    def replace(self) -> None:
        """A reconfiguration changed the server (SPEC §3.7): a new server, up, lists the
        replacement from version 0. The machine's runtime closed the old session first."""
        self.replaced = True
        self.versions = self.spec.replacement
        self.version = 0
        self.reconnect()

    def reconnect(self) -> None:
        self.up = True
        self._up_event.set()

    async def wait_up(self) -> None:
        await self._up_event.wait()


class _Connection:
    def __init__(self, server: ScriptedServer, lost: anyio.Event) -> None:
        self._server = server
        self._lost = lost
        self.forgotten = False
        """The server no longer knows this session (SPEC §8.13): what is sent in it is
        refused, and no answer comes from it."""

    def _check(self) -> None:
        if self._lost.is_set():
            raise ConnectionLost("connection closed")

    async def list_tools(self, cursor: str | None) -> Any:
        self._check()
        server = self._server
        if cursor is None:
            version, page = server.version, 0
        else:
            version_text, page_text = cursor[1:].split("p")
            version, page = int(version_text), int(page_text)
        pending = PendingList(cursor=cursor, version=version, page=page)
        server.lists.append(pending)
        try:
            return await pending.wait()
        finally:
            if pending in server.lists:  # cancelled while parked
                server.lists.remove(pending)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        on_sent: Callable[[], None],
        on_late: Callable[[], None],
        meta: Mapping[str, Any] | None = None,
        on_progress: OnWireProgress | None = None,
        task_support: str | None = None,
    ) -> Any:
        self._check()
        server = self._server
        call_id = str(arguments[CALL_ID])
        pending = PendingCall(call_id=call_id, name=name, on_late=on_late, on_progress=on_progress)
        on_sent()
        server.wire.append(("tools/call", call_id))
        server.calls[call_id] = pending
        try:
            return await pending.wait()
        except anyio.get_cancelled_exc_class():
            if server.calls.get(call_id) is pending:
                del server.calls[call_id]
                if server.up and not self.forgotten:
                    server.late[call_id] = on_late  # the server may still answer
                    server.outbox.append(("notifications/cancelled", call_id))
            raise

    def runs_tasks(self) -> bool:
        return self._server.spec.tasks

    def declares_resources(self) -> bool:
        """The scripted servers list tools only: the resources of SPEC §11.20 are the
        abstract model's ``resources`` part and the real servers' tests."""
        return False

    def resources_version(self) -> object:
        return self  # one session, which hears no change of resources

    async def list_resources(self, cursor: str | None, *, templates: bool = False) -> Any:
        raise RequestFailed("the scripted server declares no resources")

    async def read_resource(
        self, uri: str, *, on_sent: Callable[[], None], on_late: Callable[[], None]
    ) -> Any:
        raise RequestFailed("the scripted server declares no resources")

    async def poll_task(self, task: TaskHandle) -> TaskPoll:
        self._check()
        server = self._server
        pending = PendingPoll(call_id=task.task_id)
        server.polls[task.task_id] = pending
        try:
            return await pending.wait()  # type: ignore[no-any-return]
        finally:
            if server.polls.get(task.task_id) is pending:  # abandoned: nothing is sent
                del server.polls[task.task_id]

    async def cancel_task(self, task: TaskHandle, *, on_late: Callable[[], None]) -> None:
        self._check()
        server = self._server
        server.tasks.pop(task.task_id, None)
        server.outbox.append(("tasks/cancel", task.task_id))
        if server.up:
            server.late[task.task_id] = on_late  # the task may still report its end

    async def wait_lost(self) -> None:
        await self._lost.wait()


class ScriptedConnector:
    """A :class:`~mcpbind.impl.wire.connection.Connector` over scripted servers."""

    def __init__(self, servers: Mapping[str, ScriptedServer]) -> None:
        self.servers = dict(servers)

    def connect(
        self,
        server: str,
        config: ServerConfig,
        on_list_changed: Callable[[], None],
        *,
        on_elicit: Elicit | None = None,
        on_stderr: OnStderr | None = None,
        url_elicitation: bool,
        on_stream: OnStream | None = None,
    ) -> AbstractAsyncContextManager[Connection]:
        # Scripted servers never elicit and write no stderr.
        scripted = self.servers[server]
        if isinstance(config.target, Replacement) and not scripted.replaced:
            scripted.replace()
        return self._connect(scripted, on_list_changed, on_stream)

    @asynccontextmanager
    async def _connect(
        self,
        server: ScriptedServer,
        on_list_changed: Callable[[], None],
        on_stream: OnStream | None,
    ) -> AsyncIterator[Connection]:
        await server.wait_up()
        lost = anyio.Event()
        server.lost = lost
        server.on_list_changed = on_list_changed
        server.on_stream = on_stream
        server.listening = True  # a new session listens anew
        server.connections += 1
        server.wire.append(("open", ""))
        connection = server.connection = _Connection(server, lost)
        try:
            yield connection
        except BaseException:
            server.outbox.clear()  # torn down: what was handed is lost
            server.late.clear()
            server.wire.append(("killed", ""))
            raise
        else:
            if server.up and server.lost is lost:
                server.write()  # closed unhurried: what was handed goes first
                server.wire.append(("close", ""))
                server.late.clear()  # no answer comes after the session ended
            else:
                server.outbox.clear()
                server.wire.append(("gone", ""))
        finally:
            if server.lost is lost:
                server.on_list_changed = None
                server.on_stream = None
