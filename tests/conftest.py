"""Shared fixtures. The standard suite is explored once per session (it takes ~40 s).

Every ``async def`` test runs under anyio's pytest plugin (``anyio_mode = "auto"``), once
on trio and once on asyncio: mcpbind's runtime is the same code on both (SPEC §11.13). A
test that needs virtual time runs on trio alone, with a ``MockClock`` (``backends.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
import trio.testing

from mcpbind.model.suite import Run, run_suite

#: Backend parameters with a fresh trio MockClock per test (see backends.py).
MOCK_CLOCKS = {
    "trio-mockclock": {"autojump_threshold": 0},
    "trio-mockclock-real-pace": {"rate": 1.0},
}


@pytest.fixture(params=["trio", "asyncio"])
def anyio_backend(request: Any) -> Any:
    """The backend of one async test: ``trio``, ``asyncio``, or trio with a new MockClock
    (its options' ``clock``) for the tests marked with ``backends.ON_TRIO_MOCK_CLOCK``."""
    clock = MOCK_CLOCKS.get(request.param)
    if clock is not None:
        return ("trio", {"clock": trio.testing.MockClock(**clock)})
    return request.param


@pytest.fixture(scope="session")
def standard_runs() -> list[Run]:
    """The standard suite, both policies, with effects tallied for the transition table."""
    return run_suite(effects=True)
