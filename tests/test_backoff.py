"""When an optional server that cannot be reached is tried again (SPEC §11.2): at once,
then after ``reconnect_initial_sec``, doubling up to ``reconnect_max_sec``; the status
counts the failed attempts and says the last error, until an attempt connects. In trio's
virtual time (``MockClock``), against a real in-process server whose first connections
the connector refuses."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest
import trio
import trio.testing
from testservers.inproc import paged_server, tool

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.wire.connector import McpConnector


class Refusing(McpConnector):
    """The production connector, but the first ``refusals`` connections fail; records the
    virtual time of every attempt."""

    def __init__(self, refusals: int) -> None:
        super().__init__()
        self.refusals = refusals
        self.attempts: list[float] = []

    def connect(self, *args: Any, **kwargs: Any) -> AbstractAsyncContextManager[Any]:
        self.attempts.append(trio.current_time())
        if len(self.attempts) <= self.refusals:
            return self._refused()
        return super().connect(*args, **kwargs)

    @asynccontextmanager
    async def _refused(self) -> Any:
        raise OSError("connection refused")
        yield


@pytest.mark.trio
@pytest.mark.parametrize(
    ("initial", "maximum", "refusals", "times"),
    [
        (1, 4, 5, [0, 1, 3, 7, 11, 15]),  # doubles, then held at the maximum
        (2, 2, 2, [0, 2, 4]),  # a maximum equal to the start: a fixed delay
        (0.5, 60, 4, [0, 0.5, 1.5, 3.5, 7.5]),
        (3, 1, 2, [0, 3, 4]),  # the maximum under the start: the first wait alone is longer
    ],
)
async def test_an_unreachable_optional_server_is_tried_again_with_doubling_delays_up_to_the_cap(
    autojump_clock: trio.testing.MockClock, initial, maximum, refusals, times
):
    connector = Refusing(refusals)
    server = ServerConfig(target=paged_server([[tool("echo")]]))
    config = HostConfig(
        servers={"s": server}, reconnect_initial_sec=initial, reconnect_max_sec=maximum
    )
    async with Host.open(config, connector=connector) as host:
        [absent] = host.server_status()
        assert (absent.connected, absent.attempts) == (False, 1)
        assert absent.error is not None
        assert "connection refused" in absent.error
        start, counted = connector.attempts[0], [1]
        while not host.server_status()[0].connected:
            await trio.sleep(0.01)
            if host.server_status()[0].attempts != counted[-1]:
                counted.append(host.server_status()[0].attempts)
        assert counted == [*range(1, refusals + 1), 0]  # each failure counted, then reset
        assert [round(t - start, 2) for t in connector.attempts] == times
        [back] = host.server_status()
        assert (back.attempts, back.error) == (0, None)
        assert [s.name for s in host.sample().specs] == ["mcp__s__echo"]
