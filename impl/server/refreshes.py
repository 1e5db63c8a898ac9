"""Refreshes: one server's refresh runs, coalesced (SPEC §5.1, LIVE-2).

At most one refresh is in flight and one queued: a request (``Host.refresh``) or a
``list_changed`` while one runs joins the queued one, which starts when the current one
ends. Every caller of ``Host.refresh`` waits on the :class:`RefreshRun` that answers it.
When the session is lost (INV-8) or the host closes (INV-12), the run in flight ends
``rejected`` (a refresh outcome) and the queued one gets the same answer without ever
having run (no outcome is reported for it). The listing itself is read and installed by
the server's runtime; this module only keeps the runs.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import attrs

from mcpbind.model import texts

from ..catalog.publisher import Publisher
from ..config.recorder import Recorder
from ..values import RefreshOutcome

__all__ = ["RefreshRun", "Refreshes"]


@attrs.define(eq=False)
class RefreshRun:
    """One refresh; every ``host.refresh`` it covers waits for its outcome."""

    done: anyio.Event = attrs.field(factory=anyio.Event)
    outcome: RefreshOutcome | None = None


@attrs.define(eq=False)
class Refreshes:
    server: str
    publisher: Publisher
    recorder: Recorder
    on_outcome: Callable[[RefreshOutcome], RefreshOutcome] = lambda outcome: outcome
    """Told every outcome a run gets, before it is reported (the runtime keeps the last
    error); returns the outcome to report (a failed replacement's carries the generation
    of the removal it caused, SPEC §11.17)."""
    current: RefreshRun | None = None
    queued: RefreshRun | None = None
    first: RefreshRun | None = None
    """A refresh asked of a dormant server: its first refresh answers it (SPEC §11.12)."""
    outcomes: dict[str, int] = attrs.field(factory=dict)
    """Refresh outcomes reported so far, by status."""

    def rejected(self, kind: texts.RejectKind, reason: str) -> RefreshOutcome:
        generation = self.publisher.state.generation
        return RefreshOutcome(self.server, "rejected", generation, kind, reason)

    def resolve(self, run: RefreshRun, outcome: RefreshOutcome, *, record: bool) -> None:
        """``run`` ends with ``outcome``; ``record``: it ran, so the outcome is reported."""
        outcome = self.on_outcome(outcome)
        run.outcome = outcome
        if record:
            self.outcomes[outcome.status] = self.outcomes.get(outcome.status, 0) + 1
            self.recorder.refresh_outcome(outcome)
        run.done.set()

    def answered(self, outcome: RefreshOutcome) -> RefreshRun:
        """A run that ends at once with ``outcome`` (reported: the refresh was asked)."""
        run = RefreshRun()
        self.resolve(run, outcome, record=True)
        return run

    def first_run(self) -> RefreshRun:
        """The run a dormant server's first refresh answers (SPEC §11.12)."""
        if self.first is None:
            self.first = RefreshRun()
        return self.first

    def reject_first(self, outcome: RefreshOutcome) -> None:
        """A lazy start's first connection failed, or the server closes or retires: the
        run it owed ends ``outcome``."""
        run, self.first = self.first, None
        if run is not None:
            self.resolve(run, outcome, record=True)

    def renew(self, outcome: RefreshOutcome) -> RefreshRun:
        """INV-14: the session is replaced. The run in flight ends ``outcome`` (reported);
        the queued one, or a new one, is what the new session's first listing answers."""
        current, queued = self.current, self.queued
        self.current = self.queued = None
        if current is not None and current.outcome is None:
            self.resolve(current, outcome, record=True)
        if self.first is None:
            self.first = queued or RefreshRun()
        elif queued is not None:  # never both: a session with a queued run had no first
            self.resolve(queued, outcome, record=False)
        return self.first

    def start(self, run: RefreshRun | None = None) -> RefreshRun:
        """The run in flight from now (the caller starts reading its listing)."""
        self.current = run or RefreshRun()
        return self.current

    def join(self) -> RefreshRun:
        """A refresh runs already: the queued one, which answers every later request."""
        if self.queued is None:
            self.queued = RefreshRun()
        return self.queued

    def finish(self, run: RefreshRun, outcome: RefreshOutcome) -> RefreshRun | None:
        """The run in flight ended with ``outcome``; the queued run to start next, if any."""
        self.current = None
        self.resolve(run, outcome, record=True)
        queued, self.queued = self.queued, None
        return queued

    def reject_every(self, outcome: RefreshOutcome) -> None:
        """INV-12, SPEC §11.17: the host closes or the server retires: every run ends
        ``outcome``, the one a dormant server was asked for too (:meth:`reject_all`, then
        :meth:`reject_first`)."""
        self.reject_all(outcome)
        self.reject_first(outcome)

    def reject_all(self, outcome: RefreshOutcome) -> None:
        """INV-8, INV-12: the run in flight and the queued one end ``rejected``; the one a
        dormant server was asked for waits for a session (:meth:`reject_first` ends it)."""
        current, queued = self.current, self.queued
        self.current = self.queued = None
        if current is not None and current.outcome is None:
            self.resolve(current, outcome, record=True)
        if queued is not None:
            self.resolve(queued, outcome, record=False)  # never ran: not a refresh outcome
