"""One connection's life: connect under ``startup_timeout_sec``, serve, end (SPEC §11.3).

SDK-NOTES: a deadline on ``Client.__aenter__`` alone corrupts the cancel-scope stack, so
the startup deadline encloses the client's whole life and is lifted once connected. A
transport that fails while it is being cancelled raises both in one group: the failure
is told apart from the cancellation, which goes on.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager

import anyio

from ..errors import describe, split_failure, unwrap
from ..wire.seam import Connection

__all__ = ["Failed", "connect_and_serve"]

logger = logging.getLogger("mcpbind.runtime")

Failed = tuple[str, Exception | None]
"""Why an attempt failed to connect, and the error behind that when there is one (a
startup error's cause)."""


async def connect_and_serve(
    server: str,
    connect: Callable[[], AbstractAsyncContextManager[Connection]],
    timeout: float,
    serve: Callable[[Connection], Awaitable[None]],
    disconnected: Callable[[], None],
) -> Failed | None:
    """Connect (``timeout`` seconds at most, 0: no limit), then ``serve`` the connection
    until it returns; ``disconnected`` runs once a connected session has ended, however
    it ended. None once connected and then ended; else why it failed to connect."""
    # 0: none; never negative (ServerConfig checks it): its truth is the test
    deadline = anyio.current_time() + timeout if timeout else math.inf
    connected = False
    late = f"no answer within startup_timeout_sec = {timeout:g}", None
    with anyio.CancelScope(deadline=deadline) as startup:
        try:
            async with connect() as connection:
                startup.deadline = math.inf  # connected: the deadline is lifted
                connected = True
                await serve(connection)
        except BaseException as error:
            failure, rest = split_failure(error)
            if failure is None:
                raise
            if connected:  # the session ended on a fault of its transport: it is lost
                logger.debug("server %r: session ended: %s", server, describe(failure))
            if rest is not None:  # a cancellation came with the fault: it goes on
                raise rest from failure
            if not connected:
                if startup.cancel_called:
                    return late
                return describe(failure), unwrap(failure)
        finally:
            if connected:
                disconnected()
    if startup.cancelled_caught and not connected:
        return late
    return None
