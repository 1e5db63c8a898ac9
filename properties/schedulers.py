"""Where a lockstep run executes: trio (the machines' own scheduler) or asyncio (SPEC §12.2).

A run needs three things of its event loop: to run the machine's ``main``, a clock that
only the machine advances (``jump``), and ``settle``: return once every other task waits
for something only a rule can give. Trio has them built in (``MockClock`` with rate 0,
``wait_all_tasks_blocked``). Asyncio has neither, so :class:`AsyncioScheduler` runs on a
:class:`VirtualTimeLoop`, whose ``time()`` is a number the machine sets, and settles by
yielding until no callback is ready and no timer is due. That reads two private fields of
asyncio's base event loop (``_ready``, ``_scheduled``): this is test machinery, pinned to
CPython's asyncio, never used by the runtime.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import trio
import trio.testing

__all__ = ["AsyncioScheduler", "Scheduler", "TrioScheduler", "VirtualTimeLoop", "scheduler"]


class Scheduler(Protocol):
    name: str

    def run(self, main: Callable[[], Awaitable[None]]) -> None: ...

    def jump(self, seconds: float) -> None: ...

    async def settle(self) -> None: ...


class TrioScheduler:
    name = "trio"

    def __init__(self) -> None:
        self.clock = trio.testing.MockClock()

    def run(self, main: Callable[[], Awaitable[None]]) -> None:
        anyio.run(main, backend="trio", backend_options={"clock": self.clock})

    def jump(self, seconds: float) -> None:
        self.clock.jump(seconds)

    async def settle(self) -> None:
        await trio.testing.wait_all_tasks_blocked()


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock stands still until :meth:`jump` moves it."""

    def __init__(self) -> None:
        super().__init__()
        self._now = 0.0

    def time(self) -> float:
        return self._now

    def jump(self, seconds: float) -> None:
        self._now += seconds


class AsyncioScheduler:
    name = "asyncio"

    def __init__(self) -> None:
        self.loop: VirtualTimeLoop | None = None
        self._settling = 0

    def _new_loop(self) -> VirtualTimeLoop:
        self.loop = VirtualTimeLoop()
        return self.loop

    def run(self, main: Callable[[], Awaitable[None]]) -> None:
        anyio.run(main, backend="asyncio", backend_options={"loop_factory": self._new_loop})

    def jump(self, seconds: float) -> None:
        assert self.loop is not None
        self.loop.jump(seconds)

    async def settle(self) -> None:
        """Yield until nothing but other settling tasks is ready and no timer is due. Each
        other task inside ``settle`` has exactly one wake-up ready at any time (its own
        ``sleep(0)``), so several tasks may settle at once without waiting on each other."""
        loop = self.loop
        assert loop is not None
        self._settling += 1
        try:
            while True:
                await asyncio.sleep(0)
                ready: Any = loop._ready  # type: ignore[attr-defined]  # see the docstring
                scheduled: Any = loop._scheduled  # type: ignore[attr-defined]
                due = bool(scheduled) and scheduled[0].when() <= loop.time()
                if len(ready) <= self._settling - 1 and not due:
                    return
        finally:
            self._settling -= 1


def scheduler(name: str) -> Scheduler:
    """A fresh scheduler for one run: ``trio`` or ``asyncio``."""
    if name == "trio":
        return TrioScheduler()
    if name == "asyncio":
        return AsyncioScheduler()
    raise ValueError(f"unknown scheduler {name!r}; known: trio, asyncio")
