"""Reading one HTTP/1.1 request off a loopback socket with h11: the part the tap's reverse
proxy (:mod:`.http`) and the model stub's server (:mod:`.model_http`) share."""

from __future__ import annotations

import anyio
import anyio.abc
import h11

__all__ = ["read_request"]


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
