"""``mcpbind tap --http``: a streamable-HTTP reverse proxy on loopback that records the
wire (SPEC §14.6).

HTTP/1.1 on the host's side is h11 over an anyio listener (so it runs on trio as on
asyncio); the upstream side is the SDK's HTTP client, ``httpx2``. Each request goes to
the upstream origin with its own path and query, its headers as they came (hop-by-hop
ones aside: ``Host`` is the upstream's), so ``Mcp-Session-Id``, ``Authorization``,
``Last-Event-ID`` and ``MCP-Protocol-Version`` pass through; each response comes back
with its status and headers, its body as the upstream's raw bytes (a JSON body once
read whole, an SSE stream chunk by chunk as it arrives). A record is written before the
bytes it describes are forwarded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import attrs
import h11
import httpx2

from .h11io import serve_connection
from .stdio import TapFailed, WireLog, WireReader

__all__ = ["serve_http"]

_HOP_BY_HOP = frozenset(
    {
        b"host",
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"content-length",
    }
)
"""Headers that describe one connection, not the message: never forwarded as they came
(``Content-Length`` is forwarded again by whoever writes the body)."""


class _Events:
    """The ``data`` of each server-sent event in a byte stream (the SSE format's lines)."""

    def __init__(self) -> None:
        self._partial = b""
        self._data: list[bytes] = []

    def feed(self, chunk: bytes) -> list[bytes]:
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        events: list[bytes] = []
        for raw in lines:
            line = raw.rstrip(b"\r")
            if not line:
                if self._data and any(part.strip() for part in self._data):
                    events.append(b"\n".join(self._data))
                self._data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                self._data.append(value[1:] if value.startswith(b" ") else value)
        return events


async def serve_http(
    port: int,
    upstream: str,
    log: WireLog,
    *,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve on 127.0.0.1:``port`` (0: any free port) until cancelled; report the port."""
    url = httpx2.URL(upstream)
    if url.scheme not in ("http", "https") or not url.host:
        raise TapFailed(f"--upstream {upstream!r} is not an http:// or https:// URL")
    origin = f"{url.scheme}://{url.netloc.decode('ascii')}"
    try:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    except OSError as error:
        raise TapFailed(f"cannot listen on 127.0.0.1:{port}: {error.strerror or error}") from error
    reader = WireReader(log.server)
    async with listener, httpx2.AsyncClient(timeout=None, follow_redirects=False) as client:
        task_status.started(listener.extra(anyio.abc.SocketAttribute.local_port))
        await listener.serve(_Proxy(client, origin, reader, log).connection)


@attrs.define(eq=False)
class _Proxy:
    client: httpx2.AsyncClient
    origin: str
    reader: WireReader
    log: WireLog
    expired: set[bytes] = attrs.field(factory=set)
    """The session ids the upstream answered 404 for."""

    async def connection(self, stream: anyio.abc.SocketStream) -> None:
        async def answer(connection: h11.Connection, request: h11.Request, body: bytes) -> bool:
            # false: the host went away mid-answer
            return await _exchange(stream, connection, request, body, self)

        await serve_connection(stream, answer)


async def _exchange(
    stream: anyio.abc.SocketStream,
    connection: h11.Connection,
    request: h11.Request,
    body: bytes,
    proxy: _Proxy,
) -> bool:
    """One request and its answer; False when the host closed the connection first."""
    origin, reader, log = proxy.origin, proxy.reader, proxy.log

    async def send(event: Any) -> None:
        data = connection.send(event)
        if data:
            await stream.send(data)

    method = request.method.decode("ascii")
    headers = [(k, v) for k, v in request.headers if k.lower() not in _HOP_BY_HOP]
    session = dict(request.headers).get(b"mcp-session-id")
    records = reader.line(body, from_host=True) if method == "POST" and body.strip() else []
    if method == "DELETE" and session not in proxy.expired:
        # SPEC §14.6: the DELETE of a session the server answered 404 for closes nothing
        # (a host that opened a new session deletes the one its server forgot).
        records.append({"kind": "sent", "server": log.server, "method": "close", "why": "delete"})
    log.write(records)
    calls = [r["call_id"] for r in records if r["kind"] == "sent" and r["method"] == "tools/call"]
    outgoing = proxy.client.build_request(
        method, origin + request.target.decode("ascii"), headers=headers, content=body
    )
    waiting = list(calls)  # the request's calls that have no answer yet
    closed = False
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            # On 2026-07-28 a host cancels a request by closing its response stream (no
            # notifications/cancelled goes out): watch for that while the answer is due.
            nonlocal closed
            try:
                data = await stream.receive(65536)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                data = b""
            if data:
                connection.receive_data(data)  # a pipelined request: h11 keeps it
                return
            closed = True
            group.cancel_scope.cancel()

        group.start_soon(watch)
        broke = False
        try:
            await _answer(outgoing, session, waiting, proxy, send)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            closed = True
        except _UpstreamBroke:
            broke = True
        group.cancel_scope.cancel()
    if closed:
        # Each call of the request not answered by then got its cancellation, via the
        # closed stream; closing the upstream's stream in turn is how the server hears it.
        log.write(
            {
                "kind": "sent",
                "server": log.server,
                "method": "notifications/cancelled",
                "call_id": call,
                "via": "closed stream",
            }
            for call in waiting
        )
    return not closed and not broke


class _UpstreamBroke(Exception):
    """The upstream broke off an answer whose head went to the host already."""


async def _bad_gateway(send: Callable[[Any], Awaitable[None]], why: str) -> None:
    text = f"mcpbind tap: {why}\n".encode()
    headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(text))]
    await send(h11.Response(status_code=502, headers=headers))
    await send(h11.Data(data=text))
    await send(h11.EndOfMessage())


async def _answer(
    outgoing: httpx2.Request,
    session: bytes | None,
    waiting: list[str],
    proxy: _Proxy,
    send: Callable[[Any], Awaitable[None]],
) -> None:
    """Forward the request upstream and its answer back (SPEC §14.6), recording each
    message of the answer before its bytes go on; ``waiting`` loses each call answered."""
    reader, log = proxy.reader, proxy.log

    def record(data: bytes) -> None:
        records = reader.line(data, from_host=False)
        answered = {r.get("call_id") for r in records if r["kind"] in _ANSWERS}
        waiting[:] = [call for call in waiting if call not in answered]
        log.write(records)

    try:
        response = await proxy.client.send(outgoing, stream=True)
    except httpx2.HTTPError as error:
        await _bad_gateway(send, f"the upstream did not answer: {error}")
        return
    try:
        if response.status_code == 404 and session is not None:
            # A session the server no longer knows (SPEC §8.13): each call it refused.
            proxy.expired.add(session)
            log.write([{"kind": "session_expired", "call_id": call} for call in waiting])
            waiting.clear()
        kept = [
            (k, v)
            for k, v in response.headers.raw
            if k.lower() not in _HOP_BY_HOP - {b"content-length"}
        ]
        content_type = response.headers.get("content-type", "")
        readable = "content-encoding" not in response.headers
        if "text/event-stream" in content_type:
            await send(h11.Response(status_code=response.status_code, headers=kept))
            events = _Events()
            try:
                async for chunk in response.aiter_raw():
                    for data in events.feed(chunk) if readable else ():
                        record(data)
                    await send(h11.Data(data=chunk))
            except httpx2.HTTPError as error:
                # SPEC §14.6: the upstream broke off its stream (its process exited, say);
                # the tap breaks off the host's too: the connection closes mid-body.
                raise _UpstreamBroke from error
        else:  # JSON (or anything else): read whole, recorded before it is forwarded
            try:
                whole = b"".join([chunk async for chunk in response.aiter_raw()])
            except httpx2.HTTPError as error:
                await _bad_gateway(send, f"the upstream broke off its answer: {error}")
                return
            if readable and "json" in content_type and whole.strip():
                record(whole)
            if not any(k.lower() == b"content-length" for k, _ in kept):
                kept.append((b"content-length", b"%d" % len(whole)))
            await send(h11.Response(status_code=response.status_code, headers=kept))
            if whole:
                await send(h11.Data(data=whole))
        await send(h11.EndOfMessage())
    finally:
        await response.aclose()


_ANSWERS = frozenset({"call_responded", "call_failed", "task_created"})
