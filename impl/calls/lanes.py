"""The exclusive lane of each step (SPEC §8.3, INV-9)."""

from __future__ import annotations

import heapq

import anyio
import attrs

__all__ = ["Lane", "Lanes"]


@attrs.define(eq=False)
class Lane:
    """One step's exclusive lane: held by one call at a time; when it frees, the waiting
    call accepted first takes it (SPEC §8.3), whatever order the waiters reached it in.

    Calls reach the lane in the order their approvals were answered (§11.8) or their
    server's start settled (§11.12), which need not be the order they were accepted in;
    the model's ``hand_off`` starts the oldest accepted, so the lane does too (a FIFO lock
    served the first to arrive, which a trace then showed out of the model's order)."""

    _held: bool = False
    _waiting: list[tuple[int, anyio.Event]] = attrs.field(factory=list)
    """A heap by acceptance order (orders are unique: one per accepted call)."""

    def locked(self) -> bool:
        return self._held

    def acquire_nowait(self) -> bool:
        """Take the lane if it is free; False when it is held."""
        if self._held:
            return False
        self._held = True
        return True

    async def acquire(self, order: int) -> None:
        """Wait for the lane; of the waiters, the one with the lowest ``order`` takes it
        when it frees. Cancelled while waiting, the call leaves the queue; cancelled just
        as the lane was handed to it, it passes the lane on."""
        woken = anyio.Event()
        entry = (order, woken)
        heapq.heappush(self._waiting, entry)
        try:
            await woken.wait()
        except BaseException:
            if woken.is_set():
                self.release()
            else:
                self._waiting.remove(entry)
                heapq.heapify(self._waiting)
            raise

    def release(self) -> None:
        """Hand the lane to the oldest waiter, or free it."""
        if self._waiting:
            _, woken = heapq.heappop(self._waiting)
            woken.set()  # the lane stays held: it passes to that waiter
        else:
            self._held = False


@attrs.define(eq=False)
class Lanes:
    """One :class:`Lane` per step, forgotten once nobody holds or waits for it: the calls
    of a step that may not run in parallel take it in turn."""

    _lanes: dict[int, Lane] = attrs.field(factory=dict)
    _spare: Lane | None = None
    """A forgotten lane, free and unwaited, for the next step that needs one: calls made
    one after another would otherwise make a lane each."""

    def get(self, step: int) -> Lane:
        lane = self._lanes.get(step)
        if lane is None:
            lane = self._spare
            if lane is None:
                lane = Lane()
            else:
                self._spare = None
            self._lanes[step] = lane
        return lane

    async def acquire(self, step: int, lane: Lane, order: int) -> None:
        """Wait for ``step``'s lane (taken from :meth:`get`) in acceptance ``order``."""
        try:
            await lane.acquire(order)
        except BaseException:
            self._forget_if_free(step, lane)  # it may have passed the lane to nobody
            raise

    def release(self, step: int, lane: Lane) -> None:
        lane.release()  # hands the lane to the oldest waiter, if any
        self._forget_if_free(step, lane)

    def _forget_if_free(self, step: int, lane: Lane) -> None:
        if not lane.locked():  # nobody holds or waits for it
            self._lanes.pop(step, None)
            self._spare = lane
