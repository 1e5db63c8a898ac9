"""Host: the facade an agent host uses (docs/library/index.md).

::

    async with Host.open(config) as host:
        snap = host.sample()
        result = await host.call(snap, "call-1", "mcp__fs__read", {"path": "x"})

The host builds the components of SPEC §11.1 and owns their lifecycle: the registry and
its :class:`~.publisher.Publisher`, the :class:`~.planner.Planner` (steps), the
:class:`~.calls.CallTable`, the :class:`~.router.Router` (every call, SPEC §8), one
:class:`~.runtime.ServerRuntime` per enabled server, and the extension contributors
(SPEC §11.11). It starts the servers in configuration order and waits for them
(SPEC §11.3, §11.12); everything else it hands to the component that owns it.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import attrs
from anyio.abc import TaskGroup

from mcpbind.model import texts
from mcpbind.model.naming import BUILTIN
from mcpbind.model.values import Exclusion

from .calls.table import CallTable
from .catalog.exposure import Exposer
from .catalog.planner import StepSnapshot
from .catalog.publisher import Publisher
from .catalog.resources import resource_tool_bindings
from .config.catalog_cache import DEFAULT_CATALOG_CACHE, CatalogCache
from .config.contributors import (
    TurnContext,
    kinds,
)
from .config.host import HostConfig
from .config.recorder import NullRecorder, Recorder, records
from .config.server import RESOURCE_TOOL_NAMES, TOOL_SEARCH
from .contributors import (
    ContributorOutcome,
    ServerProvenance,
    ToolContributors,
    TurnInput,
    apply_overlays,
    local_binding,
    run_turn_inputs,
    run_turn_items,
)
from .errors import HostClosed, ServerStartupError, UnknownServer
from .lifetime import HostLifetime
from .reconfigure import Reconfiguring
from .router import META_CALL_ID, META_SESSION_ID, META_STEP
from .seams import PRODUCTION, Seams
from .server.context import RuntimeContext
from .server.health import ServerState
from .server.runtime import ServerRuntime
from .server.startup import Turn, install_order
from .values import RefreshOutcome, ToolResult
from .wire.connector import McpConnector
from .wire.oauth import Authorizer
from .wire.seam import Connector

__all__ = ["META_CALL_ID", "META_SESSION_ID", "META_STEP", "Host", "HostStatistics", "ServerStatus"]


@attrs.frozen
class HostStatistics:
    generation: int
    connected: Mapping[str, bool]
    calls_in_flight: int
    results: Mapping[str, int]
    """Terminal results so far, by status."""
    late_dropped: int
    """Answers that arrived after their call had ended (dropped, INV-4)."""
    progress: int = 0
    """Progress notifications received for pending calls (SPEC §8.10)."""
    late_progress: int = 0
    """Progress notifications that arrived after their call had ended (dropped)."""


@attrs.frozen
class ServerStatus:
    """One server as ``mcpbind catalog`` shows it."""

    name: str
    connected: bool
    tools: int
    """Tools of this server in the current registry state."""
    error: str | None
    """Why its last connection attempt or refresh failed, if it did."""
    excluded: tuple[Exclusion, ...] = ()
    """The tools its catalog leaves out, with why (SPEC §5.4)."""
    hears_list_changed: bool = True
    """Its session delivers ``list_changed``; False: the server said it will not, so its
    catalog changes only on ``Host.refresh`` (SPEC §5.1)."""
    state: ServerState = "connected"
    """What it is doing now (SPEC §11.18): ``starting``, ``dormant``, ``connected``,
    ``unreachable``, ``reconnecting``, ``login_required``, ``failed``, ``closed``; while it is
    down ``error`` says why (the last failed attempt, or that its session ended)."""
    attempts: int = 0
    """Connection attempts that failed since its last session (0 while connected)."""


class Host(Reconfiguring, HostLifetime):
    """Exposes the tools of several MCP servers to a model and routes its calls."""

    def __init__(
        self,
        config: HostConfig,
        *,
        connector: Connector | None = None,
        recorder: Recorder | None = None,
        seams: Seams = PRODUCTION,
    ) -> None:
        self.config = config
        self.recorder: Recorder = recorder or NullRecorder()
        self._recording = records(self.recorder)
        """Whether the recorder keeps anything: else a step's event is not made."""
        self.catalog_cache: CatalogCache = config.catalog_cache or DEFAULT_CATALOG_CACHE
        # SPEC §11.11: the overlay and the contributors' first tools are decided before
        # anything starts; their tools are part of the initial registry state (G = 0).
        by_kind = kinds(config.contributors)
        self._overlay = apply_overlays(config.servers, list(by_kind.servers))
        self._tool_contributors = ToolContributors(
            by_kind.tools,
            reserved=_reserved(config),
        )
        self._item_contributors = by_kind.items
        self._input_contributors = by_kind.inputs
        builtins = [local_binding(t, BUILTIN) for t in config.builtins]
        self.registry = seams.registry(builtins, self._tool_contributors.initial())
        self._publisher = Publisher(self.registry, self.recorder)
        resource_tools = resource_tool_bindings() if config.resource_tools else ()
        self._planner = seams.planner(
            self.registry,
            Exposer(config.defer_threshold, config.schema_limit_bytes, resource_tools),
        )
        self.approvals = seams.approvals(config.approver, config.config_path)
        """The approval gate (SPEC §11.8); ``approvals.statistics()`` reports it."""
        self._calls: CallTable = seams.calls()
        context = RuntimeContext(
            publisher=self._publisher,
            calls=self._calls,
            connector=connector or McpConnector(authorizer=Authorizer.for_host(config)),
            cache=self.catalog_cache,
            recorder=self.recorder,
            config=config,
            read_listing=seams.read_listing,
            build_bindings=seams.build_bindings,
        )
        self._context = context
        self._make_runtime = seams.runtime
        self._plan = seams.reconfigure
        self._group: TaskGroup | None = None
        self._reconfiguring = anyio.Lock()
        self._retiring = []
        self.servers: dict[str, ServerRuntime] = {
            name: seams.runtime(name, server, context)
            for name, server in self._overlay.servers.items()
            if server.enabled
        }
        self.session_id = uuid.uuid4().hex
        """This host's id, sent in the ``_meta`` of every ``tools/call`` (SPEC §11.10)."""
        self._router = seams.router(
            config=config,
            servers=self.servers,
            calls=self._calls,
            lanes=seams.lanes(),
            approvals=self.approvals,
            planner=self._planner,
            registry=self.registry,
            recorder=self.recorder,
            session_id=self.session_id,
        )
        self._turns = 0
        self._open = False
        # SPEC §11.18: what ``begin_step`` re-checks (:mod:`.lifetime`).
        self._steps = 0
        found = getattr(context.connector, "authorizer", None)
        self._authorizer = found if isinstance(found, Authorizer) else None

    # --- lifecycle -------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        config: HostConfig,
        *,
        connector: Connector | None = None,
        recorder: Recorder | None = None,
        wait_ready: bool = True,
        seams: Seams = PRODUCTION,
    ) -> AsyncIterator[Host]:
        """Connect every enabled server and run its first refresh, then yield the host.

        A ``required`` server that cannot start raises :class:`ServerStartupError` (after
        everything started is closed again); an optional one starts absent and is retried
        with backoff. With ``optional_startup_grace_sec`` set, optional servers are waited
        for at most that long and join later. A ``lazy_when_cached`` server with a cached
        listing is ready at once and connects on first use (SPEC §11.12). With
        ``wait_ready=False`` the host is yielded at once and servers join as they connect
        (a step sampled before shows what is installed so far)."""
        host = cls(config, connector=connector, recorder=recorder, seams=seams)
        failure: BaseException | None = None
        async with anyio.create_task_group() as group:
            host._group = group
            if wait_ready:
                failure = await host._start(group)
            else:
                for runtime in host.servers.values():
                    group.start_soon(runtime.run, name=f"mcpbind server {runtime.name}")
            if failure is None:
                host._open = True
                try:
                    yield host
                except BaseException as error:  # re-raised below, outside the group
                    failure = error
            host._open = False
            with anyio.CancelScope(shield=True):  # graceful even when the block was cancelled
                await host._close()
            group.cancel_scope.cancel()
        if failure is not None:
            raise failure

    async def _start(self, group: TaskGroup) -> ServerStartupError | None:
        """Start every server in ``group`` and wait until each has reported its first
        attempt: required servers fully, optional ones at most the grace (SPEC §11.12).
        First catalogs install in configuration order, so that names that collide across
        servers resolve the same way on every start (SPEC §11.3). Returns the first
        required server's startup error, in configuration order, or None."""
        runtimes = list(self.servers.values())
        errors: list[ServerStartupError | None] = [None] * len(runtimes)

        async def start(index: int, runtime: ServerRuntime, turn: Turn) -> None:
            name = f"mcpbind server {runtime.name}"
            errors[index] = await group.start(runtime.run, turn, name=name)

        grace = self.config.optional_startup_grace_sec
        grace_over = anyio.CancelScope()
        async with anyio.create_task_group() as waiting:
            if grace is not None:
                waiting.start_soon(self._end_grace, grace, grace_over)
            async with anyio.create_task_group() as starting:
                for index, (runtime, turn) in enumerate(
                    zip(runtimes, install_order(len(runtimes)), strict=True)
                ):
                    starting.start_soon(start, index, runtime, turn)
            grace_over.cancel()
        return next((error for error in errors if error is not None), None)

    async def _close(self) -> None:
        """SPEC §11.14 (INV-12), within ``close_timeout_sec``: every pending call ends
        ``cancelled`` and its caller gets the result (a call in flight hands its one
        cancellation to its session first); then every server closes its session
        gracefully, after what it was handed. What is left after the timeout is cancelled
        (the SDK still stops a stdio server's process, shielded)."""
        timeout = self.config.close_timeout_sec
        self.recorder.event("close", {})
        for runtime in self.servers.values():
            runtime.closing_starts()  # a listing answered from now on installs nothing
        # 0: none; never negative (HostConfig checks it): its truth is the test
        with anyio.move_on_after(timeout if timeout else math.inf):
            self._calls.close_all()
            await self._calls.wait_empty()
            # Every server's close is decided first, then waited for: a task per server
            # would only wait side by side for the same ends.
            for runtime in self.servers.values():
                runtime.begin_close()
            for runtime in self.servers.values():
                await runtime.wait_ended()
            for retirement in list(self._retiring):  # a reconfiguration's, under way
                await retirement.closed.wait()

    async def _end_grace(self, grace: float, scope: anyio.CancelScope) -> None:
        with scope:
            await anyio.sleep(grace)
            for runtime in self.servers.values():
                if not runtime.config.required:
                    runtime.stop_waiting()  # it joins when it connects

    def _check_open(self) -> None:
        if not self._open:
            raise HostClosed

    def _runtime(self, server: str) -> ServerRuntime:
        runtime = self.servers.get(server)
        if runtime is None:
            raise UnknownServer(server, sorted(self.servers))
        return runtime

    # --- steps and refreshes ---------------------------------------------------------

    def sample(self) -> StepSnapshot:
        """The current registry state as one step's plan and router (O(1) amortised, INV-2).

        Above ``defer_threshold`` tools the step shows the builtins, ``tool_search`` and
        the MCP tools a search discovered; oversized input schemas are shown shortened
        (SPEC §11.9)."""
        self._check_open()
        snapshot = self._planner.sample()
        if self._recording:
            fields: dict[str, Any] = {"step": snapshot.step, "generation": snapshot.generation}
            if snapshot.exposure.view.deferring:  # what the step shows (SPEC §14.1 ``shown``)
                fields["shown"] = sorted(snapshot.names)
            self.recorder.event("sample", fields)
        return snapshot

    async def refresh(self, server: str, *, resources: bool = False) -> RefreshOutcome:
        """Refresh one server's catalog (coalesced, SPEC §5.1) and return its outcome.
        Its resource lists are read again when a change of them was heard, or with
        ``resources=True`` in any case (SPEC §11.20)."""
        self._check_open()
        runtime = self._runtime(server)
        self.recorder.event("refresh_requested", {"server": server})
        if resources:  # SPEC §11.20: asked for, change heard or not
            runtime.forget_resources()
        run = runtime.request_refresh()
        await run.done.wait()
        assert run.outcome is not None
        return run.outcome

    def server_status(self) -> list[ServerStatus]:
        """Every enabled server: connected or not, what it is doing (``state``, SPEC
        §11.18), tools installed, last error, failed attempts, the tools left out of its
        catalog. Read from the runtimes' fields: no I/O, no await."""
        state = self.registry.state
        return [
            ServerStatus(
                name,
                r.connected,
                len(state.catalog(r.source).bindings),
                r.last_error,
                r.excluded,
                r.hears_list_changed,
                r.state,
                r.attempts,
            )
            for name, r in self.servers.items()
        ]

    def server_provenance(self) -> ServerProvenance:
        """The servers this host runs from, with every MCP server contributor's action in
        order and, per name it touched, the action that won (SPEC §11.11)."""
        return self._overlay

    def refresh_contributors(self) -> tuple[ContributorOutcome, ...]:
        """Re-read every tool contributor's tools, in order (SPEC §11.11).

        Each changed list is one publication (INV-1) of the whole list (INV-3); an invalid
        list, or one taking a name another source holds (INV-5), is ``rejected`` and the
        contributor keeps its previous tools. Steps already sampled keep their handlers."""
        self._check_open()
        return self._tool_contributors.refresh(self._publisher)

    async def turn_input(self, user_input: str) -> TurnInput:
        """The user's input, unchanged, and every turn-input contributor's fragments in
        contributor order (SPEC §11.11). A contributor that fails adds nothing; the others
        still run."""
        self._check_open()
        context = TurnContext(self._turns, user_input, tuple(self.servers))
        self._turns += 1
        return await run_turn_inputs(self._input_contributors, context)

    def statistics(self) -> HostStatistics:
        routed = self._router.statistics()
        return HostStatistics(
            generation=self.registry.state.generation,
            connected={name: r.connected for name, r in self.servers.items()},
            calls_in_flight=len(self._calls),
            results=routed.results,
            late_dropped=routed.late_dropped,
            progress=routed.progress,
            late_progress=routed.late_progress,
        )

    # --- calls -----------------------------------------------------------------------

    async def call(
        self, step: StepSnapshot, call_id: str, name: str, arguments: Any = None
    ) -> ToolResult:
        """Route one call of ``step`` and return its terminal result (SPEC §8.2).

        ``arguments``: a mapping, or JSON text of an object (empty text means ``{}``).
        Raises :class:`DuplicateCallId` if ``call_id`` was used before on this host.
        Turn-item contributors then rewrite the result's output, in order (SPEC §11.11).
        Once the host closed, raises :class:`HostClosed` (INV-12: nothing is accepted)."""
        if not self._open:
            self.recorder.event("call", {"step": step.step, "call_id": call_id, "name": name})
            self.recorder.refused(call_id, texts.HOST_CLOSED)
            raise HostClosed
        result = await self._router.call(step, call_id, name, arguments)
        if self._item_contributors:
            result = await run_turn_items(self._item_contributors, result)
        return result

    def cancel(self, call_id: str) -> None:
        """End the pending call ``call_id`` as ``cancelled``; no effect once it ended."""
        self.recorder.event("cancel", {"call_id": call_id})
        self._router.cancel(call_id)


def _reserved(config: HostConfig) -> dict[str, str]:
    """The names no extension contributor may take, each with while what (SPEC §11.9,
    §11.20)."""
    reserved = {}
    if config.defer_threshold is not None:
        reserved[TOOL_SEARCH] = "while defer_threshold is set"
    if config.resource_tools:
        reserved.update((name, "while resource_tools is on") for name in RESOURCE_TOOL_NAMES)
    return reserved
