"""How a server joins and leaves a running host (SPEC §11.12, §11.17): its first start's
waiters and lazy start, and what a reconfiguration does to it — a server added or changed
joins (a changed one's replacement keeps the old catalog until its first listing ended,
INV-15), a server removed or replaced retires (INV-16). A part of
:class:`.runtime.ServerRuntime`, whose state it reads; each decision is made at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

import anyio
import attrs

from mcpbind.model import texts

from ..values import RefreshOutcome
from .context import RuntimeContext
from .install import Installer
from .refreshes import Refreshes
from .startup import FirstStart

__all__ = ["ServerMembership"]


class ServerMembership:
    """The parts of :class:`.runtime.ServerRuntime` that start, join and retire it."""

    name: str
    source: str
    _context: RuntimeContext
    _installer: Installer
    _refreshes: Refreshes
    _start: FirstStart
    _closing: bool
    _joined: bool
    _replacing: bool
    _after: anyio.Event | None

    @property
    def starting(self) -> bool:
        """A lazy start is pending: calls to this server wait for it (INV-11)."""
        return self._start.pending

    async def _end(self) -> None:
        raise NotImplementedError  # the runtime's

    def stop_waiting(self) -> None:
        """The host stops waiting for this optional server (the grace of SPEC §11.12).

        Unless its first listing is in and only waits for its turn, it is reported now: it
        starts absent and joins when it connects, and the servers after it install without
        waiting for it."""
        if self._start.phase == "connecting":
            self._start.report()

    async def _install_cached(self) -> bool:
        """Install the cached listing as this server's first catalog (SPEC §11.12), in
        its configuration turn; False (connect now) without a usable entry."""
        tools = self._installer.cached()
        if tools is None:
            return False
        await self._start.wait_turn()
        if not self._installer.install_cached(tools):
            return False
        self._start.enter("dormant")
        self._start.report()
        return True

    def wake(self) -> None:
        """First use of a dormant server: start connecting (no effect otherwise)."""
        self._start.wake()

    async def wait_started(self, order: int) -> None:
        """Return once a lazy start has settled (at once when none is pending).

        The calls that waited leave in acceptance ``order``, one scheduler pass apart:
        each passes the turn on only once it resumes, and it reaches the exclusive lane
        (SPEC §8.3) before its next checkpoint, so the lane serves them in that order,
        as the model's ``settle_start`` does (SPEC §11.12)."""
        await self._start.wait_settled(order)

    def join(self, *, replacing: bool, after: anyio.Event | None = None) -> None:
        """SPEC §11.17: a reconfiguration added this server (``replacing`` False) or
        changed it: this runtime replaces the old one, whose catalog stays installed
        until the replacement's first listing ends (INV-15); calls wait for that as for a
        lazy start (INV-11). It connects once ``after`` is set (the old session closed)."""
        self._joined = True
        self._after = after
        if replacing:
            self._replacing = True
            self._start.enter("starting")

    def retire(self, how: Literal["removed", "replaced"]) -> None:
        """SPEC §11.17 (INV-16), decided at once: a reconfiguration removes or replaces this
        server. Its refresh in flight ends ``rejected`` (``reconfigured``), a listing still
        being read is never installed, and nothing it hears is acted on any more; its
        session closes in :meth:`retired`."""
        self._closing = True
        self._installer.retired = how
        refreshes = self._refreshes
        reason = texts.REJECT_RECONFIGURED.format(how=how, server=self.name)
        refreshes.reject_every(refreshes.rejected("reconfigured", reason))

    async def retired(self, settled: Callable[[], Awaitable[None]]) -> None:
        """Once ``settled`` returned (the calls the reconfiguration ended have their
        results, the cancellations they owe handed to the session), close the session as
        at close (INV-16: every cancellation before the close). Returns once it ended."""
        await settled()
        await self._end()

    def _start_failed(self) -> None:
        """The first connection of a lazy start failed: its refresh and calls learn now."""
        if not self.starting:
            return
        reason = texts.REJECT_NOT_CONNECTED.format(server=self.name)
        refreshes = self._refreshes
        if self._replacing:
            refreshes.first_run()  # the replacement's first listing: it failed (INV-15)
        refreshes.reject_first(refreshes.rejected("disconnected", reason))
        self._start.release()
        self._start.report()

    def _replaced(self, outcome: RefreshOutcome) -> RefreshOutcome:
        """INV-15: the replacement's first listing ended. Installed or unchanged, its
        catalog replaced the old one in one publication; rejected (or lost before it
        ended), the old catalog is removed in one publication, and the outcome, reported
        after it, carries the generation then current and says the old catalog was
        removed (``texts.replacement_rejected``, SPEC §5.6)."""
        self._replacing = False
        if outcome.status != "rejected" or outcome.kind in ("closed", "reconfigured"):
            return outcome
        self._context.publisher.publish(self.source, ())  # nothing when already empty
        generation = self._context.publisher.state.generation
        reason = None if outcome.reason is None else texts.replacement_rejected(outcome.reason)
        return attrs.evolve(outcome, generation=generation, reason=reason)
