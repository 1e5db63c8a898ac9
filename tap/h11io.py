"""Serving HTTP/1.1 on a loopback socket with h11: the keep-alive loop and the reading of
one request, the part the tap's reverse proxy (:mod:`.http`) and the model stub's server
(:mod:`.model_http`) share."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import anyio.abc
import h11

__all__ = ["Answer", "read_request", "serve_connection"]

Answer = Callable[[h11.Connection, h11.Request, bytes], Awaitable[bool]]
"""Answers one request on the connection; false when the connection cannot go on."""


async def serve_connection(stream: anyio.abc.SocketStream, answer: Answer) -> None:
    """One connection, request after request (keep-alive), until the peer closes, sends
    what is not HTTP/1.1, or ``answer`` says the connection cannot go on; closes it."""
    connection = h11.Connection(h11.SERVER)
    async with stream:
        while True:
            try:
                request, body = await read_request(stream, connection)
            except h11.RemoteProtocolError:
                return  # not HTTP/1.1: nothing to answer
            if request is None:
                return
            if not await answer(connection, request, body):
                return
            if connection.our_state is not h11.DONE or connection.their_state is not h11.DONE:
                return
            connection.start_next_cycle()


async def read_request(
    stream: anyio.abc.SocketStream, connection: h11.Connection
) -> tuple[h11.Request | None, bytes]:
    """The next request and its whole body; ``(None, b"")`` when the peer closed first
    (or the connection cannot go on)."""
    request: h11.Request | None = None
    body = bytearray()
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            try:
                data = await stream.receive(65536)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                data = b""
            connection.receive_data(data)
        elif isinstance(event, h11.Request):
            request = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            return request, bytes(body)
        else:  # ConnectionClosed, PAUSED
            return None, b""
