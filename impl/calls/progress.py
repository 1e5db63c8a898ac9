"""Progress notifications of calls in flight (SPEC §8.10).

Every ``tools/call`` carries a progress token (the SDK's request id). Each
``notifications/progress`` for it reaches the host's ``on_progress`` as one
:class:`~mcpbind.impl.values.Progress`, in the order the server sent them, while the
call is pending; one that arrives after the call ended is dropped and counted, like a
late answer.

Why a feed per call: the SDK runs every progress callback in a task of its own, and trio
may run tasks that became runnable together in either order. The MCP spec makes
``progress`` increase with each notification of a request (basic/utilities/progress), so
a feed collects what arrives in one scheduling batch, yields once, and delivers the batch
sorted by ``progress``, one delivery at a time.
"""

from __future__ import annotations

import heapq
import inspect
import logging
from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
import attrs

from ..config.hooks import OnProgress
from ..values import Progress

__all__ = ["ProgressCounts", "ProgressFeed"]

logger = logging.getLogger("mcpbind.progress")


@attrs.define(eq=False)
class ProgressCounts:
    """What a host's feeds saw: delivered, and dropped because their call had ended."""

    delivered: int = 0
    late: int = 0


@attrs.define(eq=False)
class ProgressFeed:
    """The progress of one call, from its ``tools/call`` to its result."""

    call_id: str
    server: str
    on_progress: OnProgress | None
    counts: ProgressCounts
    rearm: Callable[[], None] | None = None
    """Re-arms the call's idle timeout (SPEC §8.11); None without one."""
    closed: bool = False
    _waiting: list[tuple[float, int, Progress]] = attrs.field(factory=list)
    """A heap by ``(progress, arrival)``: the next to deliver comes first."""
    _arrivals: int = 0
    _lock: anyio.Lock | None = None
    """Made at the first notification: most calls report no progress."""

    def close(self) -> None:
        """The call's answer is in (or the call ended): what arrives from now on is late.
        What arrived before and still waits is delivered now, in order, by a plain
        callback; a coroutine callback gets it from the tasks that received it."""
        self.closed = True
        if self._waiting and not _is_async(self.on_progress):
            while self._waiting:
                self.counts.delivered += 1
                _call(self.on_progress, heapq.heappop(self._waiting)[2])

    @property
    def settles(self) -> bool:
        """Whether :meth:`settle` has anything to wait for: a callback to hand progress
        to. Without one the hot path skips making the coroutine at all."""
        return self.on_progress is not None

    async def settle(self) -> None:
        """The answer is in: let a notification read before it reach the feed first. The
        SDK hands each to a task of its own, which may not have run yet; one trip through
        the scheduler lets it (no cancellation point). Called only when :attr:`settles`:
        without a callback the count is all there is."""
        await anyio.lowlevel.cancel_shielded_checkpoint()

    async def receive(self, progress: float, total: float | None, message: str | None) -> None:
        """The SDK's progress callback for this call's request."""
        if self.closed:
            self.counts.late += 1
            return
        if self.rearm is not None:
            self.rearm()
        if self.on_progress is None:
            self.counts.delivered += 1
            return
        self._arrivals += 1
        item = Progress(self.call_id, self.server, progress, total, message)
        heapq.heappush(self._waiting, (progress, self._arrivals, item))
        await anyio.lowlevel.checkpoint()  # let the rest of this batch arrive first
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            while self._waiting:
                first = heapq.heappop(self._waiting)[2]
                self.counts.delivered += 1
                returned = _call(self.on_progress, first)
                if returned is not None:
                    await _awaited(returned, first)


def _is_async(on_progress: OnProgress | None) -> bool:
    call = getattr(on_progress, "__call__", None)  # noqa: B004 - a callable object's method
    return inspect.iscoroutinefunction(on_progress) or inspect.iscoroutinefunction(call)


def _call(on_progress: OnProgress | None, progress: Progress) -> Awaitable[None] | None:
    """One notification to the host; a failing callback is logged and changes nothing.
    Returns what a coroutine callback returned, to be awaited."""
    assert on_progress is not None
    try:
        returned = on_progress(progress)
    except Exception:
        logger.exception("on_progress failed for call %r; the call goes on", progress.call_id)
        return None
    return returned if inspect.isawaitable(returned) else None


async def _awaited(returned: Awaitable[None], progress: Progress) -> None:
    try:
        await returned
    except Exception:
        logger.exception("on_progress failed for call %r; the call goes on", progress.call_id)
