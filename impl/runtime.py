"""ServerRuntime: one server's connection, refreshes and in-flight calls (SPEC §5, INV-8).

A runtime task per server connects (under ``startup_timeout_sec``), runs the first
refresh, then waits until the session is lost; it then fails every in-flight call of
that server at once, rejects the refresh in flight, keeps the registry as it was, and
reconnects with exponential backoff, refreshing again once connected.

Refreshes are coalesced (LIVE-2): at most one in flight and one queued. A request while
one runs joins the queued one; a ``list_changed`` does the same.

Fast start (SPEC §11.12): every refresh that succeeds stores its listing in the catalog
cache. A ``lazy_when_cached`` server whose listing is cached installs it at open (one
publication, as a refresh would) and stays *dormant*: unconnected, ``starting`` true,
until the first call or ``host.refresh`` wakes it. Its first session then runs like an
eager one; ``starting`` turns false once that first attempt settles (first refresh done,
or the connection failed), and the calls that waited for it continue or fail then.
"""

from __future__ import annotations

import bisect
import logging
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
import trio

from mcpbind.model import texts

from .catalog import build_bindings, read_listing
from .catalog_cache import server_identity
from .config import ServerConfig
from .connection import Connection, ConnectionLost, Connector, RequestFailed
from .elicitation import DECLINE, answer_problem, decide
from .errors import CatalogRejected, ServerStartupError
from .registry import mcp_source
from .values import ElicitationAnswer, ElicitationRequest, RefreshOutcome

if TYPE_CHECKING:
    from .host import Host, _Call

__all__ = ["ServerRuntime"]

logger = logging.getLogger("mcpbind.runtime")


@attrs.define(eq=False)
class RefreshRun:
    """One refresh; every ``host.refresh`` it covers waits for its outcome."""

    done: trio.Event = attrs.field(factory=trio.Event)
    outcome: RefreshOutcome | None = None


def describe(error: BaseException) -> str:
    """A one-line reason from an exception, unwrapping exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error) or type(error).__name__
    return text.splitlines()[0]


class ServerRuntime:
    def __init__(self, host: Host, name: str, config: ServerConfig, connector: Connector) -> None:
        self.host = host
        self.name = name
        self.source = mcp_source(name)
        self.config = config
        self._connector = connector
        self.connection: Connection | None = None
        self.calls: set[_Call] = set()
        self.ready = trio.Event()
        self.settled = trio.Event()
        """Set with ``ready``, or when ``Host.open`` stops waiting for this optional server
        (the grace of SPEC §11.12): the next server's first install may go ahead."""
        self.starting = False
        """True while a lazily started server is dormant or in its first session before
        its first refresh ended. Calls to it wait in ``wait_started`` instead of failing
        fast or being sent (INV-11)."""
        self.awaiting_turn = False
        """Its first catalog is decided but waits for the servers before it (§11.3)."""
        self._wake = trio.Event()
        self._waiters: list[tuple[int, trio.Event]] = []
        """Calls waiting for the lazy start, by acceptance order, each with its turn."""
        self._first_run: RefreshRun | None = None
        self._identity = server_identity(config)
        self.startup_error: ServerStartupError | None = None
        self.last_error: str | None = None
        """Why the last connection attempt or refresh failed; None after a success."""
        self._current: RefreshRun | None = None
        self._queued: RefreshRun | None = None
        self._nursery: trio.Nursery | None = None
        self._lost = trio.Event()
        self.turn: trio.Event | None = None
        """Set by the host at open: the first catalog installs only after the servers
        before this one in the configuration have installed theirs (or failed, or the
        host stopped waiting for them)."""

    @property
    def connected(self) -> bool:
        return self.connection is not None

    # --- lifecycle -------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, serve, reconnect with backoff, forever (until the host closes)."""
        try:
            await self._run()
        finally:
            self._started()  # the host is closing: calls waiting for a lazy start end now

    async def _run(self) -> None:
        if self.config.startup == "lazy_when_cached" and await self._install_cached():
            await self._wake.wait()  # dormant until first use
        delay = self.host.config.reconnect_initial_sec
        while True:
            why = await self._session()
            if why is not None:
                self.last_error = why
            if why is None:
                delay = self.host.config.reconnect_initial_sec
            elif not self.ready.is_set():
                if self.config.required:
                    self.startup_error = ServerStartupError(self.name, why)
                    self._set_ready()
                    return
                self._set_ready()  # optional: start absent, keep trying
            if why is not None:
                self._start_failed()
            await trio.sleep(delay)
            delay = min(
                max(delay * 2, self.host.config.reconnect_initial_sec),
                self.host.config.reconnect_max_sec,
            )

    def _set_ready(self) -> None:
        self.ready.set()
        self.settled.set()

    def stop_waiting(self) -> None:
        """The host opened without this optional server (SPEC §11.12, grace): servers
        after it install their first catalogs without waiting for it."""
        self.settled.set()

    async def _install_cached(self) -> bool:
        """Install the cached listing as this server's first catalog (SPEC §11.12), in
        its configuration turn; False (connect now) without a usable entry."""
        host = self.host
        tools = host.catalog_cache.get(self._identity)
        if tools is None:
            return False
        await self._wait_turn()
        # Decide and publish with no await in between (INV-3), exactly like a refresh.
        state = host.registry.state
        try:
            bindings = build_bindings(
                self.name, self.config, tools, state, host.config.max_name_length
            )
            host._publish(self.source, bindings)
        except CatalogRejected:
            return False  # e.g. a name now taken by a builtin: let a live refresh decide
        self.starting = True
        self._set_ready()
        return True

    def wake(self) -> None:
        """First use of a dormant server: start connecting (no effect otherwise)."""
        self._wake.set()

    async def wait_started(self, order: int) -> None:
        """Return once a lazy start has settled (at once when none is pending).

        The calls that waited leave in acceptance ``order``, one scheduler pass apart:
        each passes the turn on only once it resumes, and it reaches the exclusive lane
        (SPEC §8.3) before its next checkpoint, so the lane serves them in that order,
        as the model's ``settle_start`` does (SPEC §11.12)."""
        if not self.starting:
            return
        self.wake()
        entry = (order, trio.Event())
        bisect.insort(self._waiters, entry, key=lambda waiter: waiter[0])
        try:
            await entry[1].wait()
        finally:
            self._waiters.remove(entry)
            if entry[1].is_set() and self._waiters:
                self._waiters[0][1].set()

    def _started(self) -> None:
        if self.starting:
            self.starting = False
            if self._waiters:
                self._waiters[0][1].set()  # the first waiter; each passes the turn on

    def _start_failed(self) -> None:
        """The first connection of a lazy start failed: its refresh and calls learn now."""
        if not self.starting:
            return
        run, self._first_run = self._first_run, None
        if run is not None:
            reason = texts.REJECT_NOT_CONNECTED.format(server=self.name)
            generation = self.host.registry.state.generation
            outcome = RefreshOutcome(self.name, "rejected", generation, "disconnected", reason)
            self._resolve(run, outcome, record=True)
        self._started()

    async def _session(self) -> str | None:
        """One connection's life. None once connected and then lost; else why it failed."""
        timeout = self.config.startup_timeout_sec
        deadline = trio.current_time() + timeout if timeout > 0 else math.inf
        connected = False
        with trio.CancelScope(deadline=deadline) as startup:
            try:
                async with self._connector.connect(
                    self.name, self.config, self.on_list_changed, on_elicit=self.elicit
                ) as connection:
                    startup.deadline = math.inf
                    connected = True
                    await self._serve(connection)
            except Exception as error:
                if not connected:
                    if startup.cancel_called:
                        return f"no answer within startup_timeout_sec = {timeout:g}"
                    return describe(error)
            finally:
                if connected:
                    self._disconnected()
        if startup.cancelled_caught and not connected:
            return f"no answer within startup_timeout_sec = {timeout:g}"
        return None

    async def _serve(self, connection: Connection) -> None:
        self._lost = trio.Event()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self.connection = connection
            first = self._start_refresh(self._first_run)
            self._first_run = None
            if not self.ready.is_set() or self.starting:
                await first.done.wait()
                self._set_ready()
                self._started()
            nursery.start_soon(self._watch, connection)
            await self._lost.wait()
            nursery.cancel_scope.cancel()

    async def _watch(self, connection: Connection) -> None:
        await connection.wait_lost()
        self.lost(connection)

    def lost(self, connection: Connection) -> None:
        """Someone saw ``connection`` die (a call or listing got ConnectionLost). A report
        about an earlier session, arriving after a reconnect, changes nothing."""
        if connection is self.connection:
            self._disconnected()
            self._lost.set()

    def _disconnected(self) -> None:
        """INV-8, decided at once: every call of this server fails, the refresh in flight
        and the queued one are rejected, the registry keeps its catalog."""
        if self.connection is None:
            return
        self.connection = None
        self._nursery = None
        for call in list(self.calls):
            call.fail_disconnected()
        reason = texts.REJECT_DISCONNECTED.format(server=self.name)
        outcome = RefreshOutcome(
            self.name, "rejected", self.host.registry.state.generation, "disconnected", reason
        )
        current, queued = self._current, self._queued
        self._current = self._queued = None
        if current is not None and current.outcome is None:
            self._resolve(current, outcome, record=True)
        if queued is not None:
            self._resolve(queued, outcome, record=False)  # never ran: not a refresh outcome

    # --- elicitation (SPEC §11.10) ----------------------------------------------------

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> ElicitationAnswer:
        """The host's answer to this server asking the user for input.

        The policy answers first; only ``ask`` reaches the handler. While the handler
        runs, the tool timeout of every call of this server in flight is paused (the
        request need not say which call it belongs to), then resumed with the time it
        had left. A handler that raises or answers something unusable declines."""
        config = self.host.config
        request = ElicitationRequest(self.name, message, schema)
        answer = decide(config.elicitation, request)
        if answer is not None:
            return answer
        handler = config.elicitation_handler
        assert handler is not None  # HostConfig refuses "ask" without one
        paused = list(self.calls)
        for call in paused:
            call.pause()
        try:
            answer = await handler(request)
        except Exception:
            logger.exception("elicitation handler failed for server %r; declined", self.name)
            return DECLINE
        finally:
            for call in paused:
                call.resume()
        problem = answer_problem(answer)
        if problem is not None:
            logger.error(
                "elicitation handler answer for server %r unusable (%s); declined",
                self.name,
                problem,
            )
            return DECLINE
        return answer

    # --- refresh ---------------------------------------------------------------------

    def on_list_changed(self) -> None:
        """LIVE-2: a notification starts a refresh or joins the queued one."""
        if self.connected:
            self.request_refresh()

    def request_refresh(self) -> RefreshRun:
        """The refresh that will answer this request (SPEC §5.1)."""
        if self.connection is None and self.starting:
            # A lazy start: the first refresh of its first session answers (SPEC §11.12).
            self.wake()
            if self._first_run is None:
                self._first_run = RefreshRun()
            return self._first_run
        if self.connection is None:
            run = RefreshRun()
            reason = texts.REJECT_NOT_CONNECTED.format(server=self.name)
            generation = self.host.registry.state.generation
            outcome = RefreshOutcome(self.name, "rejected", generation, "disconnected", reason)
            self._resolve(run, outcome, record=True)
            return run
        if self._current is None:
            return self._start_refresh()
        if self._queued is None:
            self._queued = RefreshRun()
        return self._queued

    def _start_refresh(self, run: RefreshRun | None = None) -> RefreshRun:
        assert self._nursery is not None
        assert self.connection is not None
        run = run or RefreshRun()
        self._current = run
        self._nursery.start_soon(self._refresh, run, self.connection)
        return run

    def _resolve(self, run: RefreshRun, outcome: RefreshOutcome, *, record: bool) -> None:
        run.outcome = outcome
        self.last_error = outcome.reason if outcome.status == "rejected" else None
        if record:
            self.host.recorder.refresh_outcome(outcome)
        run.done.set()

    async def _refresh(self, run: RefreshRun, connection: Connection) -> None:
        host = self.host
        outcome: RefreshOutcome | None = None
        try:
            timeout = self.config.list_timeout_sec
            with trio.move_on_after(timeout if timeout > 0 else math.inf) as deadline:
                tools = await read_listing(self.name, connection.list_tools, self._on_list_request)
            if deadline.cancelled_caught:
                why = f"no complete listing within list_timeout_sec = {timeout:g}"
                reason = texts.REJECT_LIST_FAILED.format(server=self.name, why=why)
                outcome = self._rejected("list_failed", reason)
                return
            if not self.ready.is_set():
                await self._wait_turn()  # first catalogs install in configuration order
            # Decide and publish with no await in between (INV-3).
            state = host.registry.state
            bindings = build_bindings(
                self.name, self.config, tools, state, host.config.max_name_length
            )
            published = host._publish(self.source, bindings)
            host.catalog_cache.put(self._identity, tools)  # SPEC §11.12
            if published is None:
                outcome = RefreshOutcome(self.name, "unchanged", state.generation)
            else:
                outcome = RefreshOutcome(self.name, "installed", published.generation)
        except CatalogRejected as rejected:
            outcome = self._rejected(rejected.kind, rejected.reason)
        except RequestFailed as failed:
            why = texts.REJECT_LIST_FAILED.format(server=self.name, why=str(failed))
            outcome = self._rejected("list_failed", why)
        except ConnectionLost:
            self.lost(connection)
        finally:
            if outcome is not None and self._current is run:
                self._finish(run, outcome)

    async def _wait_turn(self) -> None:
        if self.turn is not None:
            self.awaiting_turn = not self.turn.is_set()
            try:
                await self.turn.wait()
            finally:
                self.awaiting_turn = False

    def _on_list_request(self, cursor: str | None) -> None:
        self.host.recorder.sent(self.name, "tools/list", "" if cursor is None else "cursor")

    def _rejected(self, kind: Any, reason: str) -> RefreshOutcome:
        generation = self.host.registry.state.generation
        return RefreshOutcome(self.name, "rejected", generation, kind, reason)

    def _finish(self, run: RefreshRun, outcome: RefreshOutcome) -> None:
        self._current = None
        self._resolve(run, outcome, record=True)
        queued, self._queued = self._queued, None
        if queued is not None and self.connection is not None and self._nursery is not None:
            self._current = queued
            self._nursery.start_soon(self._refresh, queued, self.connection)
