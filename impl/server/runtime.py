"""ServerRuntime: one server's sessions, refreshes and first start (SPEC §5, §11.3, §11.12).

Theory of operation
-------------------
One task per enabled server, which the host starts with ``TaskGroup.start``. It connects
(under ``startup_timeout_sec``), runs the first refresh, then serves until the session is
lost. Then it applies INV-8 at once: every call attached to the server fails (through
the call table), the refresh in flight and the queued one are rejected, and the registry
keeps its catalog; it reconnects with exponential backoff and refreshes once connected.
Refreshes are coalesced (LIVE-2): at most one in flight and one queued; a request or a
``list_changed`` while one runs joins the queued one. Its first start, phase and report
are a :class:`~.startup.FirstStart`; listings are an :class:`~.install.Installer`'s; what
the server tells it besides answers is :class:`~.notices.ServerNotices`'; how it starts
lazily, joins and retires on a reconfiguration (SPEC §11.17) is
:class:`~.membership.ServerMembership`'s.

A runtime knows nothing of the host: it gets what it needs in a :class:`RuntimeContext`
(the publisher, the call table, the connector, the catalog cache, the recorder and the
host's settings) and imports nothing above it.
"""

from __future__ import annotations

import functools
import logging
from collections import deque
from collections.abc import Mapping

import anyio
import attrs
from anyio.abc import TaskStatus

from mcpbind.model import texts
from mcpbind.model.naming import mcp_source
from mcpbind.model.values import Exclusion

from ..calls.elicitation import answer
from ..config.server import ServerConfig
from ..errors import CredentialsRequired, LoginRequired, ServerStartupError
from ..values import RefreshOutcome
from ..wire.seam import Connection, ConnectionLost
from .attempt import Failed, connect_and_serve
from .context import RuntimeContext, Session
from .health import ServerState, StreamFault, server_state
from .install import Installer
from .membership import ServerMembership
from .notices import ServerNotices
from .phases import ServerPhase
from .refreshes import Refreshes, RefreshRun
from .startup import FirstStart, Turn

logger = logging.getLogger("mcpbind.runtime")

STDERR_LINES = 20
"""How many of a server's last stderr lines are kept (its statistics, a startup error)."""

__all__ = ["STDERR_LINES", "ServerRuntime", "ServerStatistics"]


@attrs.frozen
class ServerStatistics:
    name: str
    phase: ServerPhase
    connected: bool
    sessions: int
    """Connections made so far."""
    refreshing: bool
    """A refresh is in flight."""
    refresh_queued: bool
    waiting_for_start: int
    """Calls waiting for a lazy start to settle (INV-11)."""
    outcomes: Mapping[str, int]
    """Refresh outcomes so far, by status."""
    last_error: str | None
    stderr: tuple[str, ...] = ()
    hears_list_changed: bool = True
    """The current session delivers ``list_changed`` (False: on 2026-07-28 the server
    left it out of its acknowledged ``subscriptions/listen`` filter, or does not serve
    ``subscriptions/listen``: its catalog is read only on a refresh)."""
    """The last lines a stdio server wrote to its stderr (logged on
    ``mcpbind.server.<name>``)."""


class ServerRuntime(ServerNotices, ServerMembership):
    def __init__(self, name: str, config: ServerConfig, context: RuntimeContext) -> None:
        self.name = name
        self.source = mcp_source(name)
        self.config = config
        self.last_error: str | None = None
        """Why the last connection attempt or refresh failed; None after a success."""
        self.excluded: tuple[Exclusion, ...] = ()
        """The tools the installed catalog leaves out (SPEC §5.4), from the last listing
        that installed or was unchanged."""
        self._context = context
        self._installer = Installer(name, config, context)
        self._session: Session | None = None
        self._start = FirstStart(name)
        settings = context.config
        self._elicit = functools.partial(  # SPEC §11.10: its calls' timeouts wait meanwhile
            answer,
            policy=settings.elicitation,
            handler=settings.elicitation_handler,
            calls=context.calls,
            url=settings.elicitation_url,
        )
        self._refreshes = Refreshes(
            name, context.publisher, context.recorder, on_outcome=self._on_outcome
        )
        self._sessions = 0
        self._renewing = False
        """A session the server forgot is being replaced (INV-14, :meth:`renew`)."""
        self._hears = True
        """The session delivers ``list_changed`` (False: the server said it will not)."""
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._spawns = 0
        """Connection attempts so far: the lines kept are those of the latest one that
        wrote any (a server retried after failing at start shows them once)."""
        self._stderr_of = 0
        self._server_log = logging.getLogger(f"mcpbind.server.{name}")
        self._closing = False
        self._stop = anyio.CancelScope()
        """Cancelled when the host closes a server that has no session to close."""
        self._ended = anyio.Event()
        self.attempts = 0
        """Connection attempts failed since its last session (SPEC §11.18)."""
        self.login_required = False
        """The last attempt failed for want of credentials (SPEC §11.18)."""
        self.stream_fault: StreamFault | None = None
        """What the transport found of the server while the session was idle."""
        self._retry = anyio.Event()
        """Set to end the backoff wait at once (:meth:`reconnect_now`)."""
        self._settled = anyio.Event()
        """Set when an attempt settles: connected and listed once, or failed."""
        self._joined = False
        """A reconfiguration started it (SPEC §11.17): a failed first attempt is reported,
        and it keeps trying, as an optional server does."""
        self._replacing = False
        """It replaces a changed server whose catalog is still installed (INV-15)."""
        self._after: anyio.Event | None = None

    @property
    def phase(self) -> ServerPhase:
        """Where its first start is (:mod:`.phases`)."""
        return self._start.phase

    @property
    def connection(self) -> Connection | None:
        return None if self._session is None else self._session.connection

    @property
    def state(self) -> ServerState:
        """What it is doing now, in one word (:mod:`.health`, SPEC §11.18)."""
        return server_state(
            phase=self.phase,
            connected=self.connected,
            closing=self._closing,
            login_required=self.login_required,
            stream_fault=self.stream_fault,
        )

    @property
    def closing(self) -> bool:
        """The host is closing: this server's session ends and it is not reconnected."""
        return self._closing

    @property
    def refreshing(self) -> bool:
        return self._refreshes.current is not None

    def _on_stderr(self, line: str, spawn: int = 0) -> None:
        """A line of the server's stderr (SPEC §11.14): logged, the last ones of the
        latest attempt kept."""
        if spawn != self._stderr_of:
            self._stderr.clear()
            self._stderr_of = spawn
        self._stderr.append(line)
        self._server_log.info("%s", line)

    def statistics(self) -> ServerStatistics:
        return ServerStatistics(
            name=self.name,
            phase=self.phase,
            connected=self.connected,
            sessions=self._sessions,
            refreshing=self.refreshing,
            refresh_queued=self._refreshes.queued is not None,
            waiting_for_start=len(self._start.waiters),
            outcomes=dict(self._refreshes.outcomes),
            last_error=self.last_error,
            stderr=tuple(self._stderr),
            hears_list_changed=self._hears,
        )

    # --- lifecycle -------------------------------------------------------------------

    async def run(
        self,
        turn: Turn | None = None,
        *,
        task_status: TaskStatus[ServerStartupError | None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Connect, serve, reconnect with backoff until the host closes; report the first
        attempt through ``task_status`` (see the module docstring). With a ``turn``, the
        first catalog installs only once the servers before it are decided.

        The report is made by this task itself (anyio's asyncio backend requires it), once
        the server's life, which runs beside it, says its first attempt settled. Started
        without ``task_status`` (``start_soon``), it has nothing to report and lives the
        server's life itself: one task fewer per server."""
        self._start.turn = turn
        try:
            if task_status is anyio.TASK_STATUS_IGNORED:  # nothing to report: no second task
                await self._live()
            else:
                async with anyio.create_task_group() as life:
                    life.start_soon(self._live)
                    task_status.started(await self._start.wait_reported())
        finally:
            self._start.release()  # the host is closing: calls waiting for a start end now
            self._settled.set()  # and so does anyone waiting for an attempt
            self._ended.set()

    async def _live(self) -> None:
        try:
            with self._stop:
                await self._run()
        finally:
            self._start.report()  # ended before its first attempt settled: the host closed

    def closing_starts(self) -> None:
        """The host starts to close (SPEC §11.14), decided at once: a listing that answers
        from now on is dropped, and no queued refresh starts (INV-12); ``begin_close`` ends the
        refresh runs."""
        self._installer.closing = True

    def begin_close(self) -> None:
        """INV-12 (SPEC §11.14): the host closes, decided at once. The refresh in flight
        ends ``rejected``; the session, if there is one, is closed gracefully — the
        transport delivers what it was handed (the cancellations owed), then ends the
        session as the SDK does (stdin closed, then terminate, then kill; an HTTP
        ``DELETE``) — and the server is not reconnected. A server without a session just
        stops. :meth:`wait_ended` returns once it ended (the host decides every server's
        close, then waits: no task for each)."""
        self._closing = True
        self.closing_starts()
        refreshes = self._refreshes
        reason = texts.REJECT_CLOSED.format(server=self.name)
        refreshes.reject_every(refreshes.rejected("closed", reason))
        self._end_now()

    async def wait_ended(self) -> None:
        """Return once the server's task ended (its session closed, or it stopped)."""
        await self._ended.wait()

    async def _end(self) -> None:
        self._end_now()
        await self.wait_ended()

    def _end_now(self) -> None:
        session = self._session
        if session is None:
            self.stop()
        else:
            self._context.recorder.sent(self.name, "close", "")
            self.end_session(session)

    async def wait_reported(self) -> None:
        """Return once its first attempt settled, or the host stopped waiting for it."""
        await self._start.wait_reported()

    def end_session(self, session: Session) -> None:
        """Close ``session`` unhurried: ``_serve`` returns, so the connection's context ends
        normally and its transport delivers what it was handed first (a seam, §12.7)."""
        session.lost.set()

    def stop(self) -> None:
        """Stop at once: whatever the server's task is doing is cancelled."""
        self._stop.cancel()

    async def _run(self) -> None:
        if self._after is not None:
            await self._after.wait()  # the session it replaces is closed first (SPEC §11.17)
        lazy = self.config.startup == "lazy_when_cached" and not self._replacing
        if lazy and await self._install_cached():
            await self._start.wait_woken()  # dormant until first use
        settings = self._context.config
        delay = settings.reconnect_initial_sec
        while True:  # a host closing while no session is open cancels this (``_stop``)
            failed = await self._attempt()
            if self._closing:  # the session ended because the host closed
                return
            if failed is None:
                delay = settings.reconnect_initial_sec
                if self._renewing:
                    continue  # INV-14: the new session replaces the forgotten one at once
            else:
                if self._renewing:
                    self._renewal_failed()
                why, cause = failed
                self.last_error = why
                self.attempts += 1
                self.login_required = isinstance(cause, CredentialsRequired | LoginRequired)
                self._attempt_settled()
                if self.phase == "connecting":  # the first attempt failed
                    if self.config.required and not self._joined:
                        self._start.enter("failed")
                        stderr = tuple(self._stderr)
                        error = ServerStartupError(self.name, why, stderr)
                        error.__cause__ = cause  # the typed error behind the text
                        self._start.report(error)
                        return
                    self._start.enter("running")  # optional: it starts absent, keeps trying
                    self._start.report()
                self._start_failed()
            with anyio.move_on_after(delay):
                await self._retry.wait()  # SPEC §11.18: new credentials end the wait
            self._retry = anyio.Event()
            delay = min(delay * 2, settings.reconnect_max_sec)

    async def _attempt(self) -> Failed | None:
        """One connection's life (:func:`.attempt.connect_and_serve`)."""
        self._spawns += 1
        spawn = self._spawns

        def on_stderr(line: str) -> None:
            self._on_stderr(line, spawn)

        return await connect_and_serve(
            self.name,
            lambda: self._context.connector.connect(
                self.name,
                self.config,
                self.on_list_changed,
                on_elicit=self._elicit,
                on_stderr=on_stderr,
                url_elicitation=self._context.config.elicitation_url,
                on_stream=self.on_stream,
            ),
            self.config.startup_timeout_sec,
            self._serve,
            self._disconnected,
        )

    async def _serve(self, connection: Connection) -> None:
        async with anyio.create_task_group() as group:
            session = self._session = Session(connection, group)
            self._sessions += 1
            self._hears = True
            self.attempts, self.login_required, self.stream_fault = 0, False, None
            renewing, self._renewing = self._renewing, False
            if self._sessions > 1 and not renewing:  # a session again after a lost one (SPEC §3.1)
                self._context.recorder.event("reconnect", {"server": self.name})
            first = self._start_refresh(self._refreshes.first)
            self._refreshes.first = None
            await self._start.settle_with(first.done.wait)  # this refresh settles a start
            if first.done.is_set():  # a first start waited for it: settled now
                self._attempt_settled()
            else:
                group.start_soon(self._settle_after, first)
            group.start_soon(self._watch, connection)
            await session.lost.wait()
            group.cancel_scope.cancel()

    async def _settle_after(self, first: RefreshRun) -> None:
        await first.done.wait()
        self._attempt_settled()

    def _attempt_settled(self) -> None:
        self._settled.set()
        self._settled = anyio.Event()

    async def reconnect_now(self) -> None:
        """SPEC §11.18: connect again at once, without waiting out the backoff, and return
        once that attempt settled (connected and listed, or failed). At once when a
        session is open, the host is closing, or the first start has not settled."""
        if self.connected or self._closing or self.phase != "running":
            return
        settled = self._settled
        self._retry.set()
        await settled.wait()

    async def _watch(self, connection: Connection) -> None:
        await connection.wait_lost()
        self.lost(connection)

    def lost(self, connection: Connection) -> None:
        """Someone saw ``connection`` die (a call or listing got ConnectionLost). A report
        about an earlier session, arriving after a reconnect, changes nothing."""
        session = self._session
        if session is not None and session.connection is connection:
            self._disconnected()
            session.lost.set()

    def _disconnected(self) -> None:
        """INV-8, decided at once: every call of this server fails, the refresh in flight
        and the queued one are rejected, the registry keeps its catalog."""
        if self._session is None:
            return
        self._session = None
        if self._closing:  # its calls and refreshes were ended already (INV-12, INV-16),
            return  # and its name may be its replacement's now
        self._context.recorder.event("disconnect", {"server": self.name})
        self._context.calls.fail_server(self.name)
        reason = texts.REJECT_DISCONNECTED.format(server=self.name)
        self._refreshes.reject_all(self._refreshes.rejected("disconnected", reason))
        self.last_error = texts.SESSION_ENDED.format(server=self.name)  # §11.18, not the refresh's

    # --- refresh ---------------------------------------------------------------------

    def forget_resources(self) -> None:
        """SPEC §11.20: the next refresh reads the resource lists again, change heard
        or not (an explicit refresh)."""
        self._installer.forget_resources()

    def request_refresh(self) -> RefreshRun:
        """The refresh that will answer this request (SPEC §5.1)."""
        refreshes = self._refreshes
        if self._session is None and self.starting:
            # A lazy start: the first refresh of its first session answers (SPEC §11.12).
            self.wake()
            return refreshes.first_run()
        if self._session is None:
            reason = texts.REJECT_NOT_CONNECTED.format(server=self.name)
            return refreshes.answered(refreshes.rejected("disconnected", reason))
        if refreshes.current is None:
            return self._start_refresh()
        return refreshes.join()

    def _start_refresh(self, run: RefreshRun | None = None) -> RefreshRun:
        session = self._session
        assert session is not None
        run = self._refreshes.start(run)
        session.group.start_soon(self._refresh, run, session.connection)
        return run

    def _on_outcome(self, outcome: RefreshOutcome) -> RefreshOutcome:
        if self._replacing:
            outcome = self._replaced(outcome)
        if outcome.status == "rejected":
            self.last_error = outcome.reason
            return outcome
        self.last_error = None
        if outcome.excluded != self.excluded:
            for left_out in outcome.excluded:
                if left_out not in self.excluded:
                    logger.warning("%s", left_out.reason)
            self.excluded = outcome.excluded
        return outcome

    async def _refresh(self, run: RefreshRun, connection: Connection) -> None:
        outcome: RefreshOutcome | None = None
        try:
            outcome = await self._installer.refresh(connection, self._before_install)
        except ConnectionLost:
            self.lost(connection)
        finally:
            if outcome is not None and self._refreshes.current is run:
                queued = self._refreshes.finish(run, outcome)
                if queued is not None and self._session is not None and not self._installer.closing:
                    self._start_refresh(queued)

    async def _before_install(self) -> None:
        if self.phase == "connecting":
            await self._start.wait_turn()  # first catalogs install in configuration order
