"""The exclusive lane of each step (SPEC §8.3, INV-9)."""

from __future__ import annotations

import anyio
import attrs

__all__ = ["Lanes"]


@attrs.define(eq=False)
class Lanes:
    """One FIFO ``anyio.Lock`` per step, forgotten once nobody holds or waits for it: the
    calls of a step that may not run in parallel take it in turn."""

    _locks: dict[int, anyio.Lock] = attrs.field(factory=dict)
    _spare: anyio.Lock | None = None
    """A forgotten lane, free and unwaited, for the next step that needs one: calls made
    one after another would otherwise make a lock each."""

    def get(self, step: int) -> anyio.Lock:
        lane = self._locks.get(step)
        if lane is None:
            lane = self._spare
            if lane is None:
                lane = anyio.Lock()
            else:
                self._spare = None
            self._locks[step] = lane
        return lane

    def release(self, step: int, lane: anyio.Lock) -> None:
        lane.release()  # hands the lane to the oldest waiter, if any
        # An anyio Lock passes itself on to its oldest waiter on release (trio's and
        # asyncio's both): a lane released and not locked has nobody waiting for it.
        if not lane.locked():
            self._locks.pop(step, None)
            self._spare = lane
