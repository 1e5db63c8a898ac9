"""``mcpbind tap`` over stdio, and the reading of the wire both relays share (SPEC §14.6).

Theory of operation
-------------------
The tap is a relay, not a client: it forwards every byte it reads unchanged (a stdio
server's lines, an HTTP request's body and its response's stream) and, beside that,
reads each JSON-RPC message to write what crossed the wire as ``mcpbind-trace/1``
records marked wire-side (``"side": "wire"``, with the wall-clock time ``at`` the tap
read it). :class:`WireReader` is the reading, sans-IO: one message in, the records it
means out, from the requests it has seen (a response names only its request's id).
:class:`WireLog` writes them, each flushed as written. :func:`relay_stdio` and
:func:`serve_http` are the two relays; a record is written before the bytes it describes
are forwarded, so a host's reaction to them always comes later on the shared clock
(the merge of SPEC §14.6 relies on it).

What a record names (SPEC §14.6): ``sent`` for each request or notification of the host
(a ``tools/call`` with its call — the request's id — and tool, a ``tools/list`` page with
its cursor, a cancellation with the call it cancels, a ``tasks/*`` request with its
call, the session's ``close`` at stdin EOF or HTTP DELETE); ``list_page``/``list_done``/
``list_failed`` for each listing's answers; ``call_responded``/``call_failed``/
``task_created``/``task_status`` for a call's; ``list_changed`` (the 2025 notification
and the 2026-07-28 one on a ``subscriptions/listen`` stream alike), ``stream_ended``
when the server answers a listen the host did not cancel, ``relisten`` when a new listen
is acknowledged after that; ``disconnect`` with the child's exit; ``unparsed`` for bytes
that are not JSON-RPC (still forwarded).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TextIO

import anyio
import anyio.abc
import attrs

from mcpbind.model.trace import FORMAT

__all__ = [
    "TapFailed",
    "WireLog",
    "WireReader",
    "relay_stdio",
]

_TERMINAL_TASK = frozenset({"completed", "failed", "cancelled"})


class TapFailed(Exception):
    """The tap could not start: a command that cannot be run, an address in use or not
    on loopback (SPEC §14.6; the CLI exits 2 with this text). Not a library error (the
    tap is the command's alone), so not under ``McpBindError``, whose module loads the
    runtime."""


def _call_id(request_id: Any) -> str:
    """A wire-only trace's name for the call a request starts: its JSON-RPC id as text."""
    return request_id if isinstance(request_id, str) else json.dumps(request_id)


def _key(request_id: Any) -> str:
    return json.dumps(request_id)


def _listed(tool: Any) -> Any:
    """One ``tools/list`` entry as a ``list_done`` carries it: its raw name, and
    ``read_only`` when its annotations say so (INV-9 reads it); None when it has no name."""
    if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
        return None
    annotations = tool.get("annotations")
    if isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True:
        return {"name": tool["name"], "read_only": True}
    return tool["name"]


@attrs.define(eq=False)
class WireReader:
    """Reads one session's JSON-RPC messages into wire-side records (no I/O)."""

    server: str
    _pending: dict[str, tuple[str, Mapping[str, Any]]] = attrs.field(factory=dict)
    _task_calls: dict[str, str] = attrs.field(factory=dict)
    _cancelled: set[str] = attrs.field(factory=set)
    _ended_streams: int = 0

    def line(self, raw: bytes, *, from_host: bool) -> list[dict[str, Any]]:
        """The records of one line (stdio) or one body/event (HTTP)."""
        try:
            value = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as error:
            return [self._unparsed(raw, from_host, f"not JSON ({error})")]
        messages = value if isinstance(value, list) else [value]
        records: list[dict[str, Any]] = []
        for message in messages:
            if not isinstance(message, Mapping) or message.get("jsonrpc") != "2.0":
                records.append(self._unparsed(raw, from_host, "not a JSON-RPC 2.0 message"))
                continue
            read = self.from_host if from_host else self.from_server
            records.extend(read(message))
        return records

    def _unparsed(self, raw: bytes, from_host: bool, why: str) -> dict[str, Any]:
        direction = "to_server" if from_host else "to_host"
        return {
            "kind": "unparsed",
            "server": self.server,
            "direction": direction,
            "bytes": len(raw),
            "why": why,
        }

    def _sent(self, method: str, **fields: Any) -> dict[str, Any]:
        return {"kind": "sent", "server": self.server, "method": method, **fields}

    def from_host(self, message: Mapping[str, Any]) -> list[dict[str, Any]]:
        method = message.get("method")
        if not isinstance(method, str):
            return []  # the host's answer to a server's request: not a record of §14.1
        params = message.get("params")
        params = params if isinstance(params, Mapping) else {}
        if "id" not in message:
            if method == "notifications/cancelled":
                request_id = params.get("requestId")
                self._cancelled.add(_key(request_id))
                asked = self._pending.get(_key(request_id), ("", {}))[0]
                if asked == "tools/call":
                    return [self._sent(method, call_id=_call_id(request_id))]
                # A listen or a listing given up: a signal of no call (INV-7 counts calls').
                return [self._sent(method, detail=asked)] if asked else [self._sent(method)]
            return [self._sent(method)]
        request_id = message["id"]
        self._pending[_key(request_id)] = (method, params)
        if method == "tools/call":
            tool = params.get("name")
            fields = {"call_id": _call_id(request_id), "request_id": request_id}
            if isinstance(tool, str):
                fields["detail"] = tool
            return [self._sent(method, **fields)]
        if method == "tools/list":
            cursor = params.get("cursor")
            return [self._sent(method, **({"detail": cursor} if isinstance(cursor, str) else {}))]
        if method.startswith("tasks/"):
            task = params.get("taskId")
            call = self._task_calls.get(task) if isinstance(task, str) else None
            fields = {"call_id": call} if call is not None else {}
            if isinstance(task, str):
                fields["task_id"] = task
            return [self._sent(method, **fields)]
        return [self._sent(method)]

    def from_server(self, message: Mapping[str, Any]) -> list[dict[str, Any]]:
        method = message.get("method")
        if isinstance(method, str):
            if "id" in message:
                return []  # a server's request (elicitation, sampling, roots)
            if method == "notifications/tools/list_changed":
                return [{"kind": "list_changed", "server": self.server}]
            if method == "notifications/subscriptions/acknowledged" and self._ended_streams:
                self._ended_streams = 0
                return [{"kind": "relisten", "server": self.server}]
            return []
        if "id" not in message:
            return []
        key = _key(message["id"])
        asked = self._pending.pop(key, None)
        if asked is None:
            return []
        method, params = asked
        error = message.get("error")
        result = message.get("result")
        result = result if isinstance(result, Mapping) else {}
        if method == "tools/list":
            return [self._listing(result, error)]
        if method == "tools/call":
            return [self._call_answer(message["id"], result, error)]
        if method == "tasks/result":  # 2025-11-25: the task's own result, once terminal
            call = self._task_calls.get(str(params.get("taskId")))
            if call is None:
                return []
            if error is not None:
                return [{"kind": "task_status", "call_id": call, "status": "failed"}]
            is_error = result.get("isError") is True
            return [
                {
                    "kind": "task_status",
                    "call_id": call,
                    "status": "completed",
                    "is_error": is_error,
                }
            ]
        if method == "tasks/get" and error is None:
            status = result.get("status")
            call = self._task_calls.get(str(params.get("taskId")))
            if status in _TERMINAL_TASK and call is not None:
                record = {"kind": "task_status", "call_id": call, "status": status}
                if status == "completed":
                    inner = result.get("result")
                    is_error = isinstance(inner, Mapping) and inner.get("isError") is True
                    record["is_error"] = is_error
                return [record]
            return []
        if method == "subscriptions/listen" and key not in self._cancelled:
            # The server answered the listen: it ended the stream gracefully (LIVE-3).
            self._ended_streams += 1
            return [{"kind": "stream_ended", "server": self.server}]
        return []

    def _listing(self, result: Mapping[str, Any], error: Any) -> dict[str, Any]:
        if error is not None:
            why = error.get("message") if isinstance(error, Mapping) else None
            return {"kind": "list_failed", "server": self.server, "why": str(why)}
        tools = result.get("tools")
        entries = [_listed(tool) for tool in tools] if isinstance(tools, list) else []
        names = [entry for entry in entries if entry is not None]
        if isinstance(result.get("nextCursor"), str):
            return {"kind": "list_page", "server": self.server, "tools": names}
        return {"kind": "list_done", "server": self.server, "tools": names}

    def _call_answer(
        self, request_id: Any, result: Mapping[str, Any], error: Any
    ) -> dict[str, Any]:
        call = _call_id(request_id)
        if error is not None:
            error = error if isinstance(error, Mapping) else {}
            record: dict[str, Any] = {"kind": "call_failed", "call_id": call}
            record["why"] = str(error.get("message"))
            if isinstance(error.get("code"), int):
                record["code"] = error["code"]
            return record
        task = result.get("task")  # 2025-11-25: a CreateTaskResult
        handle = task if isinstance(task, Mapping) else result
        if (result.get("resultType") == "task" or handle is task) and isinstance(
            handle.get("taskId"), str
        ):
            self._task_calls[handle["taskId"]] = call
            return {"kind": "task_created", "call_id": call, "task_id": handle["taskId"]}
        return {
            "kind": "call_responded",
            "call_id": call,
            "is_error": result.get("isError") is True,
        }


@attrs.define(eq=False)
class WireLog:
    """Writes a wire-side trace (SPEC §14.6): the header at once, each record flushed as
    written, so a tap that is killed leaves a checkable prefix (§14.3)."""

    out: TextIO
    server: str
    transport: str
    version: str
    """mcpbind's, for the header's ``host``."""
    clock: Callable[[], float] = time.time
    _ended: bool = False

    def __attrs_post_init__(self) -> None:
        self._write(
            {
                "kind": "header",
                "format": FORMAT,
                "side": "wire",
                "servers": [self.server],
                "host": {"name": "mcpbind tap", "version": self.version},
                "transport": self.transport,
            }
        )

    def _write(self, record: Mapping[str, Any]) -> None:
        if self._ended:
            return
        self.out.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.out.flush()

    def write(self, records: Iterable[Mapping[str, Any]]) -> None:
        for record in records:
            if record.get("kind") in ("header", "end"):
                self._write(record)
            else:
                self._write({**record, "side": "wire", "at": self.clock()})

    def end(self) -> None:
        self._write({"kind": "end"})
        self._ended = True


class _Lines:
    """Splits a byte stream into lines for reading, without touching what is forwarded."""

    def __init__(self) -> None:
        self._partial = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        data = self._partial + chunk
        *lines, self._partial = data.split(b"\n")
        return [line for line in lines if line.strip()]

    def rest(self) -> bytes:
        rest, self._partial = self._partial, b""
        return rest


def _exit_status(returncode: int) -> int:
    """The child's status as a shell reports it: 128 + N for a child ended by signal N."""
    return 128 - returncode if returncode < 0 else returncode


async def relay_stdio(command: Sequence[str], log: WireLog) -> int:
    """Run ``command`` as the server; relay stdin, stdout (stderr is inherited: the
    child's own bytes) and signals; return the child's exit status (SPEC §14.6)."""
    reader = WireReader(log.server)
    try:
        child = await anyio.open_process(list(command), stdin=-1, stdout=-1, stderr=None)
    except OSError as error:
        raise TapFailed(f"cannot start {command[0]}: {error.strerror or error}") from error
    assert child.stdin is not None
    assert child.stdout is not None
    stdin, stdout = child.stdin, child.stdout

    async def host_to_server() -> None:
        lines = _Lines()
        while True:
            chunk = await anyio.to_thread.run_sync(_read_stdin, abandon_on_cancel=True)
            if not chunk:
                break
            for line in lines.feed(chunk):
                log.write(reader.line(line, from_host=True))
            try:
                await stdin.send(chunk)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return  # the child is gone; its exit ends the relay
        rest = lines.rest()
        if rest.strip():
            log.write(reader.line(rest, from_host=True))
        log.write([{"kind": "sent", "server": log.server, "method": "close", "why": "eof"}])
        await stdin.aclose()

    async def server_to_host() -> None:
        lines = _Lines()
        host_gone = False  # the host closed our stdout: keep reading, so the child runs on
        async for chunk in stdout:
            for line in lines.feed(chunk):
                log.write(reader.line(line, from_host=False))
            if not host_gone:
                host_gone = not await anyio.to_thread.run_sync(_write_stdout, chunk)
        rest = lines.rest()
        if rest.strip():
            log.write(reader.line(rest, from_host=False))

    async def forward_signals() -> None:
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                child.send_signal(signum)

    async with anyio.create_task_group() as group:
        group.start_soon(forward_signals)
        group.start_soon(host_to_server)
        await server_to_host()
        returncode = await child.wait()
        group.cancel_scope.cancel()
    status = _exit_status(returncode)
    end: dict[str, Any] = {"kind": "disconnect", "server": log.server, "exit_status": status}
    log.write([end])
    log.end()
    return status


def _read_stdin() -> bytes:
    try:
        return os.read(0, 65536)
    except OSError:
        return b""


def _write_stdout(chunk: bytes) -> bool:
    """Write all of ``chunk``; False when the host has closed our stdout."""
    view = memoryview(chunk)
    try:
        while view:
            written = os.write(1, view)
            view = view[written:]
    except OSError:
        return False
    return True
