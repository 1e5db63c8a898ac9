"""What a server tells the host besides its answers (SPEC §5.1, §5.7, §8.13): that its
catalog changed (``list_changed``), that the stream those arrive on ended or is back, and
that it no longer knows the host's session. A part of :class:`.runtime.ServerRuntime`,
whose state it reads and whose refreshes it asks for; each handler decides at once."""

from __future__ import annotations

from mcpbind.model import texts

from ..calls.table import PendingCall
from ..wire.seam import Connection, StreamEvent
from .context import RuntimeContext, Session
from .health import StreamFault
from .refreshes import Refreshes, RefreshRun

__all__ = ["ServerNotices"]


class ServerNotices:
    """The handlers of :class:`.runtime.ServerRuntime` for what its server tells it."""

    name: str
    _context: RuntimeContext
    _session: Session | None
    _refreshes: Refreshes
    _closing: bool
    _hears: bool
    _renewing: bool
    stream_fault: StreamFault | None
    last_error: str | None

    @property
    def connected(self) -> bool:
        return self._session is not None

    @property
    def hears_list_changed(self) -> bool:
        """The current session delivers ``list_changed`` (False: the server said it will
        not, SPEC §5.7)."""
        return self._hears

    def request_refresh(self) -> RefreshRun:
        raise NotImplementedError  # the runtime's

    def on_list_changed(self) -> None:
        """LIVE-2: a notification starts a refresh or joins the queued one."""
        if self.connected and not self._closing:
            self._context.recorder.event("list_changed", {"server": self.name})
            self.request_refresh()

    def on_stream(self, event: StreamEvent) -> None:
        """SPEC §5.1 (LIVE-3): what became of the session's ``list_changed`` stream. An
        end is recorded; a new stream acknowledged after one starts a refresh (or joins
        the queued one), as a notification does: what was announced while no stream was
        open is lost, so the catalog is read again."""
        if event == "unheard":
            self._hears = False
            return
        if event in ("unreachable", "expired", "reachable"):
            self.on_idle_fault(event)
            return
        if not self.connected or self._closing:
            return
        if event == "ended":
            self._context.recorder.event("stream_ended", {"server": self.name})
            return
        self._context.recorder.event("relisten", {"server": self.name})
        self.after_relisten()

    def on_idle_fault(self, event: StreamEvent) -> None:
        """SPEC §11.18: what a handshake-era HTTP session's transport found while idle.
        Said in the server's status only: the session is kept, and the next request
        finds out (a new session, §8.13; or a reconnect, INV-8). No input is recorded:
        the model's events are the request's refusal or loss, when they come."""
        if not self.connected or self._closing:
            return
        if event == "reachable":
            if self.stream_fault is not None:
                self.stream_fault, self.last_error = None, None
            return
        fault: StreamFault = "unreachable" if event == "unreachable" else "expired"
        self.stream_fault = fault
        text = texts.STREAM_UNREACHABLE if fault == "unreachable" else texts.STREAM_EXPIRED
        self.last_error = text.format(server=self.name)

    def after_relisten(self) -> None:
        """LIVE-3: a new stream after an end: the catalog is read again (a seam, §12.7)."""
        self.request_refresh()

    def renew(self, connection: Connection, refused: PendingCall) -> RefreshRun:
        """INV-14 (SPEC §8.13): the server refused ``refused`` unrun, no longer knowing the
        session of ``connection``. Decided at once: the server's other calls in flight end
        as on a disconnect (their outcome is unknown), the refresh in flight ends
        ``rejected``, and a new session replaces the forgotten one at once (no
        ``disconnect``, no backoff). Returns the run its first listing answers (the queued
        refresh's, when one was queued), which ``refused`` waits for. A report about an
        earlier session changes nothing."""
        refreshes = self._refreshes
        session = self._session
        if session is None or session.connection is not connection or self._closing:
            return refreshes.first_run()
        self._session = None
        self._renewing = True
        self._context.calls.fail_in_flight(self.name, spare=refused)
        reason = texts.REJECT_DISCONNECTED.format(server=self.name)
        run = refreshes.renew(refreshes.rejected("disconnected", reason))
        session.lost.set()  # ``_serve`` returns; ``_run`` connects again at once
        return run

    def _renewal_failed(self) -> None:
        """The new session of :meth:`renew` could not be opened: the server is
        disconnected now (INV-8), and the call waiting for its listing learns it."""
        self._renewing = False
        self._context.recorder.event("disconnect", {"server": self.name})
        self._context.calls.fail_server(self.name)
        reason = texts.REJECT_DISCONNECTED.format(server=self.name)
        self._refreshes.reject_first(self._refreshes.rejected("disconnected", reason))
