"""Which backend an async test runs on (``conftest.anyio_backend``).

By default both, trio and asyncio. A test whose deadlines are minutes long runs on trio
only, in virtual time: asyncio has no mock clock, and these tests check timing rules
that the other backend shares through the same anyio code (SPEC §11.13).
"""

from __future__ import annotations

import pytest

ON_TRIO_MOCK_CLOCK = pytest.mark.parametrize("anyio_backend", ["trio-mockclock"], indirect=True)
"""Trio only, with a MockClock that jumps to the next deadline when every task waits."""
ON_TRIO_REAL_PACE_CLOCK = pytest.mark.parametrize(
    "anyio_backend", ["trio-mockclock-real-pace"], indirect=True
)
"""Trio only, with a MockClock at real pace that the test may ``jump``."""

# Over streamable HTTP a call answered with progress comes back as an SSE stream that the
# SDK stops reading at the result without closing it: on trio its async generators are
# collected unexhausted (4 ResourceWarnings per call from the raw mcp.Client alone,
# ``python -W always::ResourceWarning`` with ``Client.call_tool(progress_callback=...)``).
TRANSPORTS_WITH_PROGRESS = [
    "inproc",
    "stdio",
    pytest.param(
        "http",
        marks=pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    ),
]
"""In process, over stdio and over HTTP, for tests whose calls report progress."""
