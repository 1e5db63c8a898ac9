"""First starts (SPEC §11.3, §11.12): one server's first start and its phase, the order
first catalogs install in across servers, and the calls that wait for a lazy start.

A server's first attempt is reported to the host once, when it settles: connected and its
first refresh ended; its first connection failed (with the :class:`ServerStartupError` of
a ``required`` server); its cached catalog installed (a lazy start); or the host stopped
waiting for it (the optional-startup grace). First catalogs install in configuration
order: each waits for its :class:`Turn`."""

from __future__ import annotations

import bisect
from collections.abc import Awaitable, Callable

import anyio
import attrs

from ..errors import ServerStartupError, moved
from .phases import SERVER_PHASES, ServerPhase

__all__ = ["FirstStart", "StartWaiters", "Turn", "install_order"]


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


class FirstStart:
    """One server's first start: its phase (:mod:`.phases`), its turn in the install
    order, the one report to the host, and the calls waiting for a lazy start."""

    def __init__(self, server: str) -> None:
        self._server = server
        self._phase: ServerPhase = "connecting"
        self.turn: Turn | None = None
        self._reported = anyio.Event()
        """Set once the first attempt settled, or the host stopped waiting for it."""
        self.error: ServerStartupError | None = None
        self._woken = anyio.Event()
        self.waiters = StartWaiters()
        """Calls waiting for the lazy start, by acceptance order."""

    @property
    def phase(self) -> ServerPhase:
        return self._phase

    def enter(self, phase: ServerPhase) -> None:
        """The one way the phase changes: along :data:`.phases.SERVER_PHASES`."""
        moved(f"server {self._server!r}", SERVER_PHASES, self._phase, phase)
        self._phase = phase

    @property
    def pending(self) -> bool:
        """A lazy start is pending: calls to this server wait for it (INV-11)."""
        return self._phase in ("dormant", "starting")

    def report(self, error: ServerStartupError | None = None) -> None:
        """The first attempt settled: tell the host (once) and let the next server install."""
        if not self._reported.is_set():
            self.error = error
            self._reported.set()
        if self.turn is not None:
            self.turn.pass_on()

    async def wait_reported(self) -> ServerStartupError | None:
        await self._reported.wait()
        return self.error

    async def wait_turn(self) -> None:
        """Wait, ``listed``, for the servers before this one (SPEC §11.3)."""
        if self.turn is None:
            return
        phase = self._phase
        self.enter("listed")
        try:
            await self.turn.wait()
        finally:
            self.enter(phase)

    def wake(self) -> None:
        """First use of a dormant server: start connecting (no effect otherwise)."""
        if self._phase == "dormant":
            self.enter("starting")
            self._woken.set()

    async def wait_woken(self) -> None:
        await self._woken.wait()

    async def wait_settled(self, order: int) -> None:
        """Wake a dormant server and return once its lazy start has settled (at once
        when none is pending); see :meth:`StartWaiters.wait` for the order."""
        if self.pending:
            self.wake()
            await self.waiters.wait(order)

    def release(self) -> None:
        """A lazy start settled (or will never settle): the waiting calls go on."""
        if self.pending:
            self.enter("running")
            self.waiters.release()

    def settle(self) -> None:
        """The first refresh of a first or lazy start ended: ``running`` from now."""
        if self.pending:
            self.release()
        else:
            self.enter("running")
        self.report()

    async def settle_with(self, wait: Callable[[], Awaitable[None]]) -> None:
        """``settle`` once ``wait`` returned, when a start is under way; else nothing."""
        if self._phase in ("connecting", "starting"):
            await wait()
            self.settle()
