"""ServerRuntime: one server's sessions, refreshes and first start (SPEC §5, §11.3, §11.12).

Theory of operation
-------------------
One task per enabled server, which the host starts with ``TaskGroup.start``. It connects
(under ``startup_timeout_sec``), runs the first refresh, then serves until the session is
lost. Then it applies INV-8 at once: every call attached to the server fails (through
the call table), the refresh in flight and the queued one are rejected, and the registry
keeps its catalog; it reconnects with exponential backoff and refreshes once connected.
Refreshes are coalesced (LIVE-2): at most one in flight and one queued; a request or a
``list_changed`` while one runs joins the queued one.

The first attempt is reported once, with ``task_status.started(...)``, when it settles:
connected and its first refresh ended; its first connection failed (the value is then
the :class:`ServerStartupError` of a ``required`` server, whose task ends there); its
cached catalog installed (a lazy start); or the host stopped waiting for it
(:meth:`ServerRuntime.stop_waiting`, the optional-startup grace). First catalogs install
in configuration order: each waits for its :class:`Turn`.

``phase`` says where the first start is:

* ``connecting`` — the first attempt is under way;
* ``listed`` — its first listing is in and waits for the servers before it (§11.3);
* ``dormant`` — started ``lazy_when_cached``: its cached catalog is installed, it is not
  connected, nothing is sent; a call or ``host.refresh`` wakes it;
* ``starting`` — woken, before its first refresh ended: calls wait (INV-11);
* ``running`` — settled; sessions come and go;
* ``failed`` — a required server that could not start.

A runtime knows nothing of the host: it gets what it needs in a :class:`RuntimeContext`
(the publisher, the call table, the connector, the catalog cache, the recorder and the
host's settings) and imports nothing above it.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Mapping
from typing import Any, Literal

import anyio
import attrs
from anyio.abc import TaskGroup, TaskStatus

from mcpbind.model import texts
from mcpbind.model.naming import mcp_source
from mcpbind.model.values import Exclusion

from ..calls.elicitation import answer
from ..calls.table import CallTable
from ..catalog.listing import BuildBindings, ReadListing, build_bindings, read_listing, trace_tools
from ..catalog.publisher import Publisher
from ..config.catalog_cache import CatalogCache, server_identity
from ..config.host import HostConfig
from ..config.recorder import LazyFields, Recorder
from ..config.server import ServerConfig
from ..errors import CatalogRejected, ServerStartupError, describe, split_failure, unwrap
from ..values import ElicitationAnswer, ElicitationRequest, RefreshOutcome
from ..wire.seam import Connection, ConnectionLost, Connector, RequestFailed
from .refreshes import Refreshes, RefreshRun
from .startup import StartWaiters, Turn

logger = logging.getLogger("mcpbind.runtime")

STDERR_LINES = 20
"""How many of a server's last stderr lines are kept (its statistics, a startup error)."""

__all__ = [
    "STDERR_LINES",
    "Phase",
    "RuntimeContext",
    "ServerRuntime",
    "ServerStatistics",
    "Session",
]


Phase = Literal["connecting", "listed", "dormant", "starting", "running", "failed"]
"""Where a server's first start is (``mcpbind.impl.server.runtime``, SPEC §11.3, §11.12)."""


@attrs.frozen
class ServerStatistics:
    name: str
    phase: Phase
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
    """The last lines a stdio server wrote to its stderr (logged on
    ``mcpbind.server.<name>``)."""


@attrs.frozen
class RuntimeContext:
    """What every server's runtime shares with the others and the host."""

    publisher: Publisher
    calls: CallTable
    connector: Connector
    cache: CatalogCache
    recorder: Recorder
    config: HostConfig
    read_listing: ReadListing = read_listing
    build_bindings: BuildBindings = build_bindings


@attrs.define(eq=False)
class Session:
    """One live connection and the tasks that serve it."""

    connection: Connection
    group: TaskGroup
    lost: anyio.Event = attrs.field(factory=anyio.Event)


class ServerRuntime:
    def __init__(self, name: str, config: ServerConfig, context: RuntimeContext) -> None:
        self.name = name
        self.source = mcp_source(name)
        self.config = config
        self.phase: Phase = "connecting"
        self.last_error: str | None = None
        """Why the last connection attempt or refresh failed; None after a success."""
        self.excluded: tuple[Exclusion, ...] = ()
        """The tools the installed catalog leaves out (SPEC §5.4), from the last listing
        that installed or was unchanged."""
        self._context = context
        self._identity = server_identity(config)
        self._session: Session | None = None
        self._turn: Turn | None = None
        self._reported = anyio.Event()
        """Set once the first attempt settled, or the host stopped waiting for it."""
        self._startup_error: ServerStartupError | None = None
        self._wake = anyio.Event()
        self._waiters = StartWaiters()
        """Calls waiting for the lazy start, by acceptance order."""
        self._refreshes = Refreshes(
            name, context.publisher, context.recorder, on_outcome=self._on_outcome
        )
        self._sessions = 0
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._server_log = logging.getLogger(f"mcpbind.server.{name}")
        self._closing = False
        self._stop = anyio.CancelScope()
        """Cancelled when the host closes a server that has no session to close."""
        self._ended = anyio.Event()

    @property
    def connection(self) -> Connection | None:
        return None if self._session is None else self._session.connection

    @property
    def connected(self) -> bool:
        return self._session is not None

    @property
    def starting(self) -> bool:
        """A lazy start is pending: calls to this server wait for it (INV-11)."""
        return self.phase in ("dormant", "starting")

    @property
    def closing(self) -> bool:
        """The host is closing: this server's session ends and it is not reconnected."""
        return self._closing

    @property
    def refreshing(self) -> bool:
        return self._refreshes.current is not None

    def _on_stderr(self, line: str) -> None:
        """A line of the server's stderr (SPEC §11.14): logged, the last ones kept."""
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
            waiting_for_start=len(self._waiters),
            outcomes=dict(self._refreshes.outcomes),
            last_error=self.last_error,
            stderr=tuple(self._stderr),
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
        the server's life, which runs beside it, says its first attempt settled."""
        self._turn = turn
        try:
            async with anyio.create_task_group() as life:
                life.start_soon(self._live)
                await self._reported.wait()
                task_status.started(self._startup_error)
        finally:
            self._release_waiters()  # the host is closing: calls waiting for a start end now
            self._ended.set()

    async def _live(self) -> None:
        try:
            with self._stop:
                await self._run()
        finally:
            self._report_started()  # ended before its first attempt settled: the host closed

    async def close(self) -> None:
        """INV-12 (SPEC §11.14): the host closes. The refresh in flight ends ``rejected``;
        the session, if there is one, is closed gracefully — the transport delivers what
        it was handed (the cancellations owed), then ends the session as the SDK does
        (stdin closed, then terminate, then kill; an HTTP ``DELETE``) — and the server is
        not reconnected. A server without a session just stops. Returns once it ended."""
        self._closing = True
        refreshes = self._refreshes
        reason = texts.REJECT_CLOSED.format(server=self.name)
        refreshes.reject_all(refreshes.rejected("closed", reason), first=True)
        session = self._session
        if session is None:
            self.stop()
        else:
            self._context.recorder.sent(self.name, "close", "")
            self.end_session(session)
        await self._ended.wait()

    def end_session(self, session: Session) -> None:
        """Close ``session`` unhurried: ``_serve`` returns, so the connection's context ends
        normally and its transport delivers what it was handed first (a seam, §12.7)."""
        session.lost.set()

    def stop(self) -> None:
        """Stop at once: whatever the server's task is doing is cancelled."""
        self._stop.cancel()

    async def _run(self) -> None:
        if self.config.startup == "lazy_when_cached" and await self._install_cached():
            await self._wake.wait()  # dormant until first use
        settings = self._context.config
        delay = settings.reconnect_initial_sec
        while True:  # a host closing while no session is open cancels this (``_stop``)
            failed = await self._attempt()
            if self._closing:  # the session ended because the host closed
                return
            if failed is None:
                delay = settings.reconnect_initial_sec
            else:
                why, cause = failed
                self.last_error = why
                if self.phase == "connecting":  # the first attempt failed
                    if self.config.required:
                        self.phase = "failed"
                        stderr = tuple(self._stderr)
                        error = ServerStartupError(self.name, why, stderr)
                        error.__cause__ = cause  # the typed error behind the text
                        self._report_started(error)
                        return
                    self.phase = "running"  # optional: it starts absent and keeps trying
                    self._report_started()
                self._start_failed()
            await anyio.sleep(delay)
            delay = min(max(delay * 2, settings.reconnect_initial_sec), settings.reconnect_max_sec)

    def _report_started(self, error: ServerStartupError | None = None) -> None:
        """The first attempt settled: tell the host (once) and let the next server install."""
        if not self._reported.is_set():
            self._startup_error = error
            self._reported.set()
        if self._turn is not None:
            self._turn.pass_on()

    def stop_waiting(self) -> None:
        """The host stops waiting for this optional server (the grace of SPEC §11.12).

        Unless its first listing is in and only waits for its turn, it is reported now: it
        starts absent and joins when it connects, and the servers after it install without
        waiting for it."""
        if self.phase == "connecting":
            self._report_started()

    async def _install_cached(self) -> bool:
        """Install the cached listing as this server's first catalog (SPEC §11.12), in
        its configuration turn; False (connect now) without a usable entry."""
        context = self._context
        tools = context.cache.get(self._identity)
        if tools is None:
            return False
        await self._wait_turn()
        # Decide and publish with no await in between (INV-3), exactly like a refresh.
        state = context.publisher.state
        try:
            decision = context.build_bindings(
                self.name, self.config, tools, state, context.config.max_name_length
            )
            context.publisher.publish(self.source, decision.bindings)
        except CatalogRejected:
            return False  # e.g. a name now taken by a builtin: let a live refresh decide
        self.phase = "dormant"
        self._report_started()
        return True

    async def _wait_turn(self) -> None:
        if self._turn is None:
            return
        phase, self.phase = self.phase, "listed"
        try:
            await self._turn.wait()
        finally:
            self.phase = phase

    def wake(self) -> None:
        """First use of a dormant server: start connecting (no effect otherwise)."""
        if self.phase == "dormant":
            self.phase = "starting"
            self._wake.set()

    async def wait_started(self, order: int) -> None:
        """Return once a lazy start has settled (at once when none is pending).

        The calls that waited leave in acceptance ``order``, one scheduler pass apart:
        each passes the turn on only once it resumes, and it reaches the exclusive lane
        (SPEC §8.3) before its next checkpoint, so the lane serves them in that order,
        as the model's ``settle_start`` does (SPEC §11.12)."""
        if self.starting:
            self.wake()
            await self._waiters.wait(order)

    def _release_waiters(self) -> None:
        """A lazy start settled: the first waiter goes on, and each passes the turn on."""
        if self.starting:
            self.phase = "running"
            self._waiters.release()

    def _start_failed(self) -> None:
        """The first connection of a lazy start failed: its refresh and calls learn now."""
        if not self.starting:
            return
        refreshes = self._refreshes
        run, refreshes.first = refreshes.first, None
        if run is not None:
            reason = texts.REJECT_NOT_CONNECTED.format(server=self.name)
            refreshes.resolve(run, refreshes.rejected("disconnected", reason), record=True)
        self._release_waiters()

    async def _attempt(self) -> tuple[str, Exception | None] | None:
        """One connection's life. None once connected and then lost; else why it failed,
        and the error behind that when there is one (a startup error's cause)."""
        timeout = self.config.startup_timeout_sec
        deadline = anyio.current_time() + timeout if timeout > 0 else math.inf
        connected = False
        with anyio.CancelScope(deadline=deadline) as startup:
            try:
                async with self._context.connector.connect(
                    self.name,
                    self.config,
                    self.on_list_changed,
                    on_elicit=self.elicit,
                    on_stderr=self._on_stderr,
                    url_elicitation=self._context.config.elicitation_url,
                ) as connection:
                    # SDK-NOTES: the deadline encloses the client's whole life; lift it now.
                    startup.deadline = math.inf
                    connected = True
                    await self._serve(connection)
            except BaseException as error:
                failure, rest = split_failure(error)
                if failure is None:
                    raise
                if connected:  # the session ended on a fault of its transport: it is lost
                    logger.debug("server %r: session ended: %s", self.name, describe(failure))
                if rest is not None:  # a cancellation came with the fault: it goes on
                    raise rest from failure
                if not connected:
                    if startup.cancel_called:
                        return f"no answer within startup_timeout_sec = {timeout:g}", None
                    return describe(failure), unwrap(failure)
            finally:
                if connected:
                    self._disconnected()
        if startup.cancelled_caught and not connected:
            return f"no answer within startup_timeout_sec = {timeout:g}", None
        return None

    async def _serve(self, connection: Connection) -> None:
        async with anyio.create_task_group() as group:
            session = self._session = Session(connection, group)
            self._sessions += 1
            if self._sessions > 1:  # a session again after a lost one (SPEC §3.1)
                self._context.recorder.event("reconnect", {"server": self.name})
            first = self._start_refresh(self._refreshes.first)
            self._refreshes.first = None
            if self.phase in ("connecting", "starting"):  # this refresh settles the start
                await first.done.wait()
                self._release_waiters()
                self.phase = "running"
                self._report_started()
            group.start_soon(self._watch, connection)
            await session.lost.wait()
            group.cancel_scope.cancel()

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
        if not self._closing:
            self._context.recorder.event("disconnect", {"server": self.name})
        self._context.calls.fail_server(self.name)
        reason = texts.REJECT_DISCONNECTED.format(server=self.name)
        self._refreshes.reject_all(self._refreshes.rejected("disconnected", reason))

    # --- elicitation (SPEC §11.10) ----------------------------------------------------

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        """The host's answer to this server asking the user for input (SPEC §11.10); the
        tool timeouts of its calls wait while the user is asked."""
        settings = self._context.config
        return await answer(
            request,
            settings.elicitation,
            settings.elicitation_handler,
            self._context.calls,
            url=settings.elicitation_url,
        )

    # --- refresh ---------------------------------------------------------------------

    def on_list_changed(self) -> None:
        """LIVE-2: a notification starts a refresh or joins the queued one."""
        if self.connected and not self._closing:
            self._context.recorder.event("list_changed", {"server": self.name})
            self.request_refresh()

    def request_refresh(self) -> RefreshRun:
        """The refresh that will answer this request (SPEC §5.1)."""
        refreshes = self._refreshes
        if self._session is None and self.starting:
            # A lazy start: the first refresh of its first session answers (SPEC §11.12).
            self.wake()
            if refreshes.first is None:
                refreshes.first = RefreshRun()
            return refreshes.first
        if self._session is None:
            run = RefreshRun()
            reason = texts.REJECT_NOT_CONNECTED.format(server=self.name)
            refreshes.resolve(run, refreshes.rejected("disconnected", reason), record=True)
            return run
        if refreshes.current is None:
            return self._start_refresh()
        return refreshes.join()

    def _start_refresh(self, run: RefreshRun | None = None) -> RefreshRun:
        session = self._session
        assert session is not None
        run = self._refreshes.start(run)
        session.group.start_soon(self._refresh, run, session.connection)
        return run

    def _on_outcome(self, outcome: RefreshOutcome) -> None:
        if outcome.status == "rejected":
            self.last_error = outcome.reason
            return
        self.last_error = None
        if outcome.excluded != self.excluded:
            for left_out in outcome.excluded:
                if left_out not in self.excluded:
                    logger.warning("%s", left_out.reason)
            self.excluded = outcome.excluded

    async def _refresh(self, run: RefreshRun, connection: Connection) -> None:
        context = self._context
        outcome: RefreshOutcome | None = None
        listed = False
        try:
            timeout = self.config.list_timeout_sec
            with anyio.move_on_after(timeout if timeout > 0 else math.inf) as deadline:
                tools = await context.read_listing(
                    self.name, connection.list_tools, self._on_list_request
                )
            if deadline.cancelled_caught:
                why = f"no complete listing within list_timeout_sec = {timeout:g}"
                context.recorder.event("list_failed", {"server": self.name, "why": why})
                reason = texts.REJECT_LIST_FAILED.format(server=self.name, why=why)
                outcome = self._refreshes.rejected("list_failed", reason)
                return
            if self.phase == "connecting":
                await self._wait_turn()  # first catalogs install in configuration order
            # Decide and publish with no await in between (INV-3). The listing is in the
            # trace where it is decided, so its outputs follow it (SPEC §14.1).
            tasks = connection.runs_tasks()
            listed = True
            context.recorder.event("list_done", LazyFields(lambda: self._listed(tools, tasks)))
            state = context.publisher.state
            decision = context.build_bindings(
                self.name,
                self.config,
                tools,
                state,
                context.config.max_name_length,
                tasks=tasks,
            )
            published = context.publisher.publish(self.source, decision.bindings)
            context.cache.put(self._identity, tools)  # SPEC §11.12
            excluded = decision.excluded
            if published is None:
                outcome = RefreshOutcome(
                    self.name, "unchanged", state.generation, excluded=excluded
                )
            else:
                outcome = RefreshOutcome(
                    self.name, "installed", published.generation, excluded=excluded
                )
        except CatalogRejected as rejected:
            if not listed:  # a page or a cap rejected the listing before its end
                fault: dict[str, Any] = {"name": rejected.subject, "problem": rejected.problem}
                if rejected.kind == "cap":
                    fault["over_cap"] = True
                context.recorder.event("list_done", {"server": self.name, "tools": [fault]})
            outcome = self._refreshes.rejected(rejected.kind, rejected.reason)
        except RequestFailed as failed:
            context.recorder.event("list_failed", {"server": self.name, "why": str(failed)})
            why = texts.REJECT_LIST_FAILED.format(server=self.name, why=str(failed))
            outcome = self._refreshes.rejected("list_failed", why)
        except ConnectionLost:
            self.lost(connection)
        finally:
            if outcome is not None and self._refreshes.current is run:
                queued = self._refreshes.finish(run, outcome)
                if queued is not None and self._session is not None and not self._closing:
                    self._start_refresh(queued)

    def _on_list_request(self, cursor: str | None) -> None:
        recorder = self._context.recorder
        if cursor is not None:  # a page with more to come arrived (SPEC §3.1 list_page)
            recorder.event("list_page", {"server": self.name})
        recorder.sent(self.name, "tools/list", "" if cursor is None else "cursor")

    def _listed(self, tools: list[Any], tasks: bool) -> dict[str, Any]:
        """The ``list_done`` of a trace: each tool as the rules see it (SPEC §14.1)."""
        entries = trace_tools(self.name, self.config, tools, tasks=tasks)
        return {"server": self.name, "tools": entries, "tasks": tasks}
