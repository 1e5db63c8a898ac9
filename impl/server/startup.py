"""First starts across servers: the order first catalogs install in, and the calls that
wait for a lazy start (SPEC §11.3, §11.12)."""

from __future__ import annotations

import bisect

import anyio
import attrs

__all__ = ["StartWaiters", "Turn", "install_order"]


@attrs.define(eq=False)
class Turn:
    """A place in the order first catalogs install in (SPEC §11.3)."""

    before: anyio.Event | None = None
    """Set once the server before this one has installed its first catalog, failed, or
    been given up on; None for the first server."""
    decided: anyio.Event = attrs.field(factory=anyio.Event)

    async def wait(self) -> None:
        if self.before is not None:
            await self.before.wait()

    def pass_on(self) -> None:
        self.decided.set()


def install_order(count: int) -> list[Turn]:
    """``count`` turns, each after the one before it."""
    turns: list[Turn] = []
    for _ in range(count):
        turns.append(Turn(turns[-1].decided if turns else None))
    return turns


@attrs.define(eq=False)
class StartWaiters:
    """Calls waiting for a lazy start (INV-11), released in acceptance order."""

    _waiting: list[tuple[int, anyio.Event]] = attrs.field(factory=list)

    def __len__(self) -> int:
        return len(self._waiting)

    async def wait(self, order: int) -> None:
        """Return once released. The waiters leave in acceptance ``order``, one scheduler
        pass apart: each passes the turn on only once it resumes, and it reaches the
        exclusive lane (SPEC §8.3) before its next checkpoint, so the lane serves them in
        that order, as the model's ``settle_start`` does (SPEC §11.12)."""
        entry = (order, anyio.Event())
        bisect.insort(self._waiting, entry, key=lambda waiter: waiter[0])
        try:
            await entry[1].wait()
        finally:
            self._waiting.remove(entry)
            if entry[1].is_set() and self._waiting:
                self._waiting[0][1].set()

    def release(self) -> None:
        """The start settled: the first waiter goes on, and each passes the turn on."""
        if self._waiting:
            self._waiting[0][1].set()
