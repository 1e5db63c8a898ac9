"""ServerRuntime: one server's connection, refreshes and in-flight calls (SPEC §5, INV-8).

A runtime task per server connects (under ``startup_timeout_sec``), runs the first
refresh, then waits until the session is lost; it then fails every in-flight call of
that server at once, rejects the refresh in flight, keeps the registry as it was, and
reconnects with exponential backoff, refreshing again once connected.

Refreshes are coalesced (LIVE-2): at most one in flight and one queued. A request while
one runs joins the queued one; a ``list_changed`` does the same.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
import trio

from mcpbind.model import texts

from .catalog import build_bindings, read_listing
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
        self.startup_error: ServerStartupError | None = None
        self.last_error: str | None = None
        """Why the last connection attempt or refresh failed; None after a success."""
        self._current: RefreshRun | None = None
        self._queued: RefreshRun | None = None
        self._nursery: trio.Nursery | None = None
        self._lost = trio.Event()
        self.turn: trio.Event | None = None
        """Set by the host at open: the first catalog installs only after the servers
        before this one in the configuration have installed theirs (or failed)."""

    @property
    def connected(self) -> bool:
        return self.connection is not None

    # --- lifecycle -------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, serve, reconnect with backoff, forever (until the host closes)."""
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
                    self.ready.set()
                    return
                self.ready.set()  # optional: start absent, keep trying
            await trio.sleep(delay)
            delay = min(
                max(delay * 2, self.host.config.reconnect_initial_sec),
                self.host.config.reconnect_max_sec,
            )

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
            first = self._start_refresh()
            if not self.ready.is_set():
                await first.done.wait()
                self.ready.set()
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

    def _start_refresh(self) -> RefreshRun:
        assert self._nursery is not None
        assert self.connection is not None
        run = RefreshRun()
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
            if self.turn is not None and not self.ready.is_set():
                await self.turn.wait()  # first catalogs install in configuration order
            # Decide and publish with no await in between (INV-3).
            state = host.registry.state
            bindings = build_bindings(
                self.name, self.config, tools, state, host.config.max_name_length
            )
            published = host.registry.replace_source(self.source, bindings)
            if published is None:
                outcome = RefreshOutcome(self.name, "unchanged", state.generation)
            else:
                names = tuple(b.name for b in published.catalog(self.source).bindings)
                host.recorder.published(published.generation, self.source, names)
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
