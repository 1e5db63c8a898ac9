"""Host: the facade an agent host uses (README "Library quick start").

::

    async with Host.open(config) as host:
        snap = host.sample()
        result = await host.call(snap, "call-1", "mcp__fs__read", {"path": "x"})

The router lives here: the call_id table (INV-4), resolution through the step's snapshot
(INV-2), approval (SPEC §11.8), the binding policy (SPEC §7), the exclusive lane (INV-9),
timeouts and cancellation (INV-7) and fail-fast on disconnect (INV-8). Exceptions are
translated into results exactly once, in :meth:`Host.call`; only :class:`DuplicateCallId`
escapes.
"""

from __future__ import annotations

import json
import logging
import math
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import attrs
import trio

from mcpbind.model import texts

from .approval import ApprovalGate, ApprovalRequest
from .catalog_cache import DEFAULT_CATALOG_CACHE, CatalogCache
from .config import HostConfig
from .connection import ConnectionLost, Connector, McpConnector, RequestFailed
from .contributors import (
    ContributorOutcome,
    McpServerContributor,
    ServerProvenance,
    ToolContributor,
    TurnContext,
    TurnInput,
    TurnInputContributor,
    TurnItemContributor,
    apply_overlays,
    ext_source,
    local_binding,
    read_tools,
    run_turn_inputs,
    run_turn_items,
)
from .encoding import APPROX_BYTES_PER_TOKEN, OutputLimit, encode_result, wall_time_header
from .errors import ContributorRejected, DuplicateCallId, HostClosed, UnknownServer
from .exposure import MAX_SEARCH_LIMIT, TOOL_SEARCH, Exposer, parse_search_arguments, search_output
from .recorder import NullRecorder, Recorder
from .registry import BUILTIN, Binding, RegistryState, ToolRegistry
from .runtime import ServerRuntime
from .values import (
    ContentItem,
    HostStatistics,
    RefreshOutcome,
    ServerStatus,
    StepSnapshot,
    ToolResult,
)

__all__ = ["META_CALL_ID", "META_SESSION_ID", "META_STEP", "Host"]

# SPEC §11.10: request metadata under our own prefix (MCP reserves prefixes whose second
# label is ``modelcontextprotocol`` or ``mcp``; ``dev.mcpbind/`` is not one of them).
META_SESSION_ID = "dev.mcpbind/session_id"
META_STEP = "dev.mcpbind/step"
META_CALL_ID = "dev.mcpbind/call_id"

logger = logging.getLogger("mcpbind.contributors")

_CANCELLED = "cancelled"
_DISCONNECTED = "disconnected"


@attrs.define(eq=False)
class _Call:
    """One call in flight (or queued for the lane)."""

    call_id: str
    server: str
    scope: trio.CancelScope
    sent: bool = False
    ended_by: str | None = None
    """Who ended it early: "cancelled" (host.cancel) or "disconnected"; None: deadline."""
    paused: int = 0
    """Elicitations of its server being asked now; the deadline waits while > 0."""
    remaining: float = math.inf

    def pause(self) -> None:
        """Stop the tool timeout's clock (SPEC §11.10); nests."""
        if self.paused == 0:
            self.remaining = self.scope.deadline - trio.current_time()
            self.scope.deadline = math.inf
        self.paused += 1

    def resume(self) -> None:
        self.paused -= 1
        if self.paused == 0:
            self.scope.deadline = trio.current_time() + self.remaining

    def cancel(self) -> None:
        if self.ended_by is None:
            self.ended_by = _CANCELLED
            self.scope.cancel()

    def fail_disconnected(self) -> None:
        if self.ended_by is None:
            self.ended_by = _DISCONNECTED
            self.scope.cancel()


def parse_arguments(arguments: Any) -> dict[str, Any] | str:
    """A dict, or why the arguments are not a JSON object (SPEC §8.1)."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, str | bytes):
        text = arguments.decode() if isinstance(arguments, bytes) else arguments
        if not text.strip():
            return {}
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            return f"not valid JSON ({error.msg} at position {error.pos})"
        except ValueError as error:
            return f"not valid JSON ({error})"
        if isinstance(value, dict):
            return value
        return f"JSON {type(value).__name__} where an object is required"
    if arguments is None:
        return {}
    return f"{type(arguments).__name__} where an object is required"


def _tool_limit(byte_limit: int | None, token_limit: int | None) -> OutputLimit:
    """SPEC §11.5: ``output_byte_limit`` wins; tokens count 4 bytes each."""
    if byte_limit is not None:
        return OutputLimit("bytes", byte_limit)
    assert token_limit is not None
    return OutputLimit("bytes", token_limit * APPROX_BYTES_PER_TOKEN)


class Host:
    """Exposes the tools of several MCP servers to a model and routes its calls."""

    def __init__(
        self,
        config: HostConfig,
        *,
        connector: Connector | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        self.config = config
        self.recorder: Recorder = recorder or NullRecorder()
        self.catalog_cache: CatalogCache = config.catalog_cache or DEFAULT_CATALOG_CACHE
        self._connector = connector or McpConnector()
        builtins = [local_binding(t, BUILTIN) for t in config.builtins]
        # SPEC §11.11: the overlay and the contributors' first tools are decided before
        # anything starts; their tools are part of the initial registry state (G = 0).
        contributors = config.contributors
        self._overlay = apply_overlays(
            config.servers, [c for c in contributors if isinstance(c, McpServerContributor)]
        )
        self._tool_contributors = tuple(c for c in contributors if isinstance(c, ToolContributor))
        self._item_contributors = tuple(
            c for c in contributors if isinstance(c, TurnItemContributor)
        )
        self._input_contributors = tuple(
            c for c in contributors if isinstance(c, TurnInputContributor)
        )
        extensions = []
        for contributor in self._tool_contributors:
            bindings = self._read_tools(contributor)
            if isinstance(bindings, str):
                reason = texts.EXT_INVALID.format(contributor=contributor.id, problem=bindings)
                raise ContributorRejected("invalid", reason)
            extensions.append((ext_source(contributor.id), bindings))
        self.registry = ToolRegistry(builtins, extensions)
        self._exposer = Exposer(config.defer_threshold, config.schema_limit_bytes)
        self.approvals = ApprovalGate(config.approver, config.config_path)
        """The approval gate (SPEC §11.8); ``approvals.statistics()`` reports it."""
        self.servers: dict[str, ServerRuntime] = {
            name: ServerRuntime(self, name, server, self._connector)
            for name, server in self._overlay.servers.items()
            if server.enabled
        }
        self._turns = 0
        self._steps = 0
        self._ids: set[str] = set()
        self._active: dict[str, _Call] = {}
        self._lanes: dict[int, trio.Lock] = {}
        self._results: Counter[str] = Counter()
        self._late_dropped = 0
        self._open = False
        self.session_id = uuid.uuid4().hex
        """This host's id, sent in the ``_meta`` of every ``tools/call`` (SPEC §11.10)."""
        self._default_limit = (
            None if config.output_limit is None else OutputLimit("characters", config.output_limit)
        )
        # SPEC §11.5: each tool's limit, decided once (server -> raw tool -> limit), for the
        # servers the host runs (after the contributors' overlay, SPEC §11.11).
        self._tool_limits: dict[str, dict[str, OutputLimit]] = {}
        for name, server in self._overlay.servers.items():
            limits = {
                tool: _tool_limit(settings.output_byte_limit, settings.output_token_limit)
                for tool, settings in server.tools.items()
                if settings.output_byte_limit is not None or settings.output_token_limit is not None
            }
            if limits:
                self._tool_limits[name] = limits

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
    ) -> AsyncIterator[Host]:
        """Connect every enabled server and run its first refresh, then yield the host.

        A ``required`` server that cannot start raises :class:`ServerStartupError` (after
        everything started is closed again); an optional one starts absent and is retried
        with backoff. With ``optional_startup_grace_sec`` set, optional servers are waited
        for at most that long and join later. A ``lazy_when_cached`` server with a cached
        listing is ready at once and connects on first use (SPEC §11.12). With
        ``wait_ready=False`` the host is yielded at once and servers join as they connect
        (a step sampled before shows what is installed so far)."""
        host = cls(config, connector=connector, recorder=recorder)
        failure: BaseException | None = None
        if wait_ready:
            # First catalogs install in configuration order, so that names that collide
            # across servers resolve the same way on every start (SPEC §11.3).
            previous: ServerRuntime | None = None
            for runtime in host.servers.values():
                runtime.turn = previous.settled if previous is not None else None
                previous = runtime
        async with trio.open_nursery() as nursery:
            for runtime in host.servers.values():
                nursery.start_soon(runtime.run, name=f"mcpbind server {runtime.name}")
            if wait_ready:
                await host._wait_ready()
            errors = [r.startup_error for r in host.servers.values() if r.startup_error]
            if errors:
                failure = errors[0]
            else:
                host._open = True
                try:
                    yield host
                except BaseException as error:  # re-raised below, outside the nursery
                    failure = error
            host._open = False
            nursery.cancel_scope.cancel()
        if failure is not None:
            raise failure

    async def _wait_ready(self) -> None:
        """Required servers fully; optional ones at most the grace (SPEC §11.12)."""
        grace = self.config.optional_startup_grace_sec
        if grace is None:
            for runtime in self.servers.values():
                await runtime.ready.wait()
            return
        optional = [r for r in self.servers.values() if not r.config.required]
        with trio.move_on_after(grace):
            for runtime in optional:
                await runtime.ready.wait()
        # A server whose listing is in but waits for its turn made it: it installs as
        # soon as the servers before it are installed or given up on, which is now.
        made_it = [r for r in optional if r.awaiting_turn]
        for runtime in optional:
            if not runtime.ready.is_set() and not runtime.awaiting_turn:
                runtime.stop_waiting()  # starts absent; joins when it connects
        for runtime in self.servers.values():
            if runtime.config.required or runtime in made_it:
                await runtime.ready.wait()

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
        state = self.registry.state
        snapshot = StepSnapshot(self._steps, state, self._exposer.expose(state))
        self._steps += 1
        return snapshot

    async def refresh(self, server: str) -> RefreshOutcome:
        """Refresh one server's catalog (coalesced, SPEC §5.1) and return its outcome."""
        self._check_open()
        run = self._runtime(server).request_refresh()
        await run.done.wait()
        assert run.outcome is not None
        return run.outcome

    def server_status(self) -> list[ServerStatus]:
        """Every enabled server: connected or not, tools installed, last error."""
        state = self.registry.state
        return [
            ServerStatus(name, r.connected, len(state.catalog(r.source).bindings), r.last_error)
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
        outcomes: list[ContributorOutcome] = []
        for contributor in self._tool_contributors:
            outcome = self._refresh_contributor(contributor)
            if outcome.status == "rejected":
                logger.warning("%s", outcome.reason)
            outcomes.append(outcome)
        return tuple(outcomes)

    def _read_tools(self, contributor: ToolContributor) -> tuple[Binding, ...] | str:
        """``read_tools``; while deferral is on, the name ``tool_search`` is the host's
        (SPEC §11.9), so a list that holds it is invalid."""
        bindings = read_tools(contributor)
        if (
            not isinstance(bindings, str)
            and self.config.defer_threshold is not None
            and any(b.name == TOOL_SEARCH for b in bindings)
        ):
            return f"the name {TOOL_SEARCH} is reserved while defer_threshold is set"
        return bindings

    def _refresh_contributor(self, contributor: ToolContributor) -> ContributorOutcome:
        cid = contributor.id
        generation = self.registry.state.generation
        bindings = self._read_tools(contributor)
        if isinstance(bindings, str):
            reason = texts.EXT_INVALID.format(contributor=cid, problem=bindings)
            return ContributorOutcome(cid, "rejected", generation, "invalid", reason)
        try:
            published = self._publish(ext_source(cid), bindings)
        except ContributorRejected as rejected:
            return ContributorOutcome(cid, "rejected", generation, rejected.kind, rejected.reason)
        if published is None:
            return ContributorOutcome(cid, "unchanged", generation)
        return ContributorOutcome(cid, "installed", published.generation)

    def _publish(self, source: str, bindings: Iterable[Binding]) -> RegistryState | None:
        """Replace ``source`` in one publication and report it (``published``, SPEC §3.2);
        None when unchanged. Raises as :meth:`ToolRegistry.replace_source` does, with the
        registry untouched. Every install goes through here: refreshes, cached catalogs
        (SPEC §11.12) and tool contributors (SPEC §11.11)."""
        published = self.registry.replace_source(source, bindings)
        if published is not None:
            names = tuple(b.name for b in published.catalog(source).bindings)
            self.recorder.published(published.generation, source, names)
        return published

    async def turn_input(self, user_input: str) -> TurnInput:
        """The user's input, unchanged, and every turn-input contributor's fragments in
        contributor order (SPEC §11.11). A contributor that fails adds nothing; the others
        still run."""
        self._check_open()
        context = TurnContext(self._turns, user_input, tuple(self.servers))
        self._turns += 1
        return await run_turn_inputs(self._input_contributors, context)

    def statistics(self) -> HostStatistics:
        return HostStatistics(
            generation=self.registry.state.generation,
            connected={name: r.connected for name, r in self.servers.items()},
            calls_in_flight=len(self._active),
            results=dict(self._results),
            late_dropped=self._late_dropped,
        )

    # --- calls -----------------------------------------------------------------------

    def cancel(self, call_id: str) -> None:
        """End the pending call ``call_id`` as ``cancelled``; no effect once it ended."""
        call = self._active.get(call_id)
        if call is not None:
            call.cancel()

    def _end(
        self,
        call_id: str,
        status: texts.CallStatus,
        output: str,
        items: tuple[ContentItem, ...] = (),
    ) -> ToolResult:
        result = ToolResult(call_id, status, output, items)
        self._results[status] += 1
        self.recorder.result(result)
        return result

    async def call(
        self, step: StepSnapshot, call_id: str, name: str, arguments: Any = None
    ) -> ToolResult:
        """Route one call of ``step`` and return its terminal result (SPEC §8.2).

        ``arguments``: a mapping, or JSON text of an object (empty text means ``{}``).
        Raises :class:`DuplicateCallId` if ``call_id`` was used before on this host.
        Turn-item contributors then rewrite the result's output, in order (SPEC §11.11)."""
        result = await self._route(step, call_id, name, arguments)
        if self._item_contributors:
            result = await run_turn_items(self._item_contributors, result)
        return result

    async def _route(
        self, step: StepSnapshot, call_id: str, name: str, arguments: Any
    ) -> ToolResult:
        self._check_open()
        if call_id in self._ids:
            error = DuplicateCallId(call_id)
            self.recorder.refused(call_id, str(error))
            raise error
        self._ids.add(call_id)
        order = len(self._ids)  # acceptance order: calls that wait for a start keep it
        accepted = trio.current_time()
        binding = step.binding(name)
        if binding is None:
            return self._end(call_id, "unsupported", texts.UNSUPPORTED.format(name=name))
        parsed = parse_arguments(arguments)
        if isinstance(parsed, str):
            text = texts.BAD_ARGUMENTS.format(name=name, problem=parsed)
            return self._end(call_id, "error", text)
        if binding.server is None:
            if binding is self._exposer.search_binding:
                return self._tool_search(call_id, step, parsed)
            return await self._call_local(call_id, binding, parsed)
        server = binding.server
        runtime = self.servers[server]
        verdict = self.approvals.decide(
            call_id=call_id,
            server=server,
            tool=binding.remote_name,
            name=name,
            arguments=parsed,
            annotations=binding.spec.annotations,
            config=runtime.config,
        )
        if isinstance(verdict, str):
            return self._end(call_id, "denied", verdict)
        if verdict is not None:
            refused = await self._await_approval(verdict)
            if refused is not None:
                return refused
        gone = self._revalidated(call_id, binding, name)
        if gone is not None:
            return gone
        started = trio.current_time()
        if runtime.starting:
            # SPEC §11.12 (INV-11): a server started lazily is waited for, dormant or
            # connected, until its first refresh has ended; not failed fast, not sent to.
            early = await self._wait_started(call_id, runtime, started, order)
            if early is not None:
                return early
            gone = self._revalidated(call_id, binding, name)  # against the live catalog
            if gone is not None:
                return gone
        elif runtime.connection is None:
            return self._end(call_id, "failed", texts.NOT_CONNECTED.format(server=server))
        exclusive = not (binding.read_only or runtime.config.supports_parallel_tool_calls)
        return await self._dispatch(
            call_id=call_id,
            step=step.step,
            binding=binding,
            arguments=parsed,
            runtime=runtime,
            exclusive=exclusive,
            accepted=accepted,
            started=started,
        )

    def _revalidated(self, call_id: str, binding: Binding, name: str) -> ToolResult | None:
        """SPEC §7.3: under ``revalidate``, a tool its server no longer lists ends
        ``unavailable`` with nothing sent; None when the call may go on."""
        if self.config.binding_policy != "revalidate":
            return None
        live = self.registry.state.live_remotes.get(binding.source, frozenset())
        if binding.remote_name in live:
            return None
        text = texts.UNAVAILABLE.format(name=name, server=binding.server, tool=binding.remote_name)
        return self._end(call_id, "unavailable", text)

    def _pending(self, call_id: str, runtime: ServerRuntime, started: float) -> _Call:
        """Register a call of ``runtime`` as pending under its tool timeout, which runs from
        ``started`` (after any approval; a wait for a lazy start counts): SPEC §8.4, §11.8,
        §11.12. The wall time runs from acceptance, so it includes the approval wait."""
        timeout = runtime.config.tool_timeout_sec
        scope = trio.CancelScope(deadline=started + timeout if timeout > 0 else math.inf)
        call = _Call(call_id, runtime.name, scope)
        self._active[call_id] = call
        runtime.calls.add(call)
        return call

    async def _wait_started(
        self, call_id: str, runtime: ServerRuntime, started: float, order: int
    ) -> ToolResult | None:
        """Wait for a lazy start to settle, under the call's own deadline (LIVE-1); a
        result if the call ends here, else None. The start itself is bounded by the
        server's ``startup_timeout_sec`` (connecting) and ``list_timeout_sec`` (its first
        listing). Waiting calls go on in acceptance ``order`` (SPEC §11.12, INV-11)."""
        server = runtime.name
        timeout = runtime.config.tool_timeout_sec
        call = self._pending(call_id, runtime, started)
        scope = call.scope
        try:
            with scope:
                await runtime.wait_started(order)
        finally:
            del self._active[call_id]
            runtime.calls.discard(call)
        if call.ended_by == _CANCELLED:
            return self._end(call_id, "cancelled", texts.CANCELLED)
        if scope.cancelled_caught and call.ended_by is None:
            text = texts.TIMED_OUT_STARTING.format(seconds=f"{timeout:g}", server=server)
            return self._end(call_id, "timed_out", text)
        if call.ended_by == _DISCONNECTED or runtime.connection is None:
            return self._end(call_id, "failed", texts.NOT_CONNECTED.format(server=server))
        return None

    async def _await_approval(self, request: ApprovalRequest) -> ToolResult | None:
        """Ask the approver; None when allowed, else the call's terminal result. The call
        is pending meanwhile, so ``cancel`` ends it ``cancelled`` (nothing is sent)."""
        scope = trio.CancelScope()
        call = _Call(request.call_id, request.server, scope)
        self._active[request.call_id] = call
        denial: str | None = None
        try:
            with scope:
                denial = await self.approvals.ask(request)
        finally:
            del self._active[request.call_id]
        if call.ended_by == _CANCELLED:
            return self._end(request.call_id, "cancelled", texts.CANCELLED)
        if denial is not None:
            return self._end(request.call_id, "denied", denial)
        return None

    async def _dispatch(
        self,
        *,
        call_id: str,
        step: int,
        binding: Binding,
        arguments: dict[str, Any],
        runtime: ServerRuntime,
        exclusive: bool,
        accepted: float,
        started: float,
    ) -> ToolResult:
        server = runtime.name
        timeout = runtime.config.tool_timeout_sec
        call = self._pending(call_id, runtime, started)
        scope = call.scope
        lane = self._lane(step) if exclusive else None
        raw: Any = None
        failure: str | None = None
        connection = runtime.connection

        def on_sent() -> None:
            call.sent = True
            self.recorder.sent(server, "tools/call", binding.remote_name)

        try:
            with scope:
                if lane is not None:
                    try:
                        lane.acquire_nowait()  # uncontended: no extra trip through the scheduler
                    except trio.WouldBlock:
                        await lane.acquire()
                try:
                    connection = runtime.connection
                    if connection is None:  # lost while this call waited for the lane
                        call.fail_disconnected()
                        await trio.lowlevel.checkpoint()
                    else:
                        raw = await connection.call_tool(
                            binding.remote_name,
                            arguments,
                            on_sent=on_sent,
                            on_late=lambda: self.late_answer(call_id),
                            meta={
                                META_SESSION_ID: self.session_id,
                                META_STEP: step,
                                META_CALL_ID: call_id,
                            },
                        )
                finally:
                    if lane is not None:
                        lane.release()
                        self._forget_lane(step, lane)
        except ConnectionLost:
            call.fail_disconnected()
            if connection is not None:
                runtime.lost(connection)
        except RequestFailed as error:
            failure = str(error)
        finally:
            del self._active[call_id]
            runtime.calls.discard(call)
        seconds = trio.current_time() - accepted
        if scope.cancelled_caught or call.ended_by == _DISCONNECTED:
            return self._ended_early(call, timeout, binding)
        if failure is not None:
            text = texts.TRANSPORT.format(tool=binding.remote_name, server=server, why=failure)
            return self._end(call_id, "failed", text)
        status, output, items = encode_result(
            raw,
            seconds,
            server=server,
            tool=binding.remote_name,
            limit=self._limit(server, binding.remote_name),
            image_capable=self.config.image_capable,
        )
        return self._end(call_id, status, output, items)

    def _limit(self, server: str, tool: str) -> OutputLimit | None:
        """The tool's own limit, else the host's (SPEC §11.5); no allocation per call."""
        limits = self._tool_limits.get(server)
        if limits is None:
            return self._default_limit
        return limits.get(tool, self._default_limit)

    def _ended_early(self, call: _Call, timeout: float, binding: Binding) -> ToolResult:
        server = call.server
        if call.ended_by == _DISCONNECTED:
            template = texts.DISCONNECTED if call.sent else texts.NOT_CONNECTED
            return self._end(call.call_id, "failed", template.format(server=server))
        if call.sent:
            # The SDK cancelled the request at the server when the scope was cancelled:
            # one notifications/cancelled over JSON-RPC, the handler itself in-process.
            self.recorder.sent(server, "notifications/cancelled", call.call_id)
        if call.ended_by == _CANCELLED:
            return self._end(call.call_id, "cancelled", texts.CANCELLED)
        template = texts.TIMED_OUT if call.sent else texts.TIMED_OUT_QUEUED
        return self._end(call.call_id, "timed_out", template.format(seconds=f"{timeout:g}"))

    def _lane(self, step: int) -> trio.Lock:
        lane = self._lanes.get(step)
        if lane is None:
            lane = self._lanes[step] = trio.Lock()
        return lane

    def _forget_lane(self, step: int, lane: trio.Lock) -> None:
        if not lane.locked() and lane.statistics().tasks_waiting == 0:
            self._lanes.pop(step, None)

    async def _call_local(
        self, call_id: str, binding: Binding, arguments: dict[str, Any]
    ) -> ToolResult:
        """A builtin or extension tool: the handler captured in the step's binding (INV-2)."""
        handler = binding.handler
        assert handler is not None, "a non-MCP binding carries its handler"
        started = trio.current_time()
        scope = trio.CancelScope()
        call = _Call(call_id, binding.source, scope)
        self._active[call_id] = call
        output: str | None = None
        try:
            with scope:
                output = await handler(arguments)
        except Exception as error:
            text = f"{wall_time_header(trio.current_time() - started)}\n{error}"
            return self._end(call_id, "error", text)
        finally:
            del self._active[call_id]
        if scope.cancelled_caught or output is None:
            return self._end(call_id, "cancelled", texts.CANCELLED)
        return self._end(
            call_id, "ok", f"{wall_time_header(trio.current_time() - started)}\n{output}"
        )

    def _tool_search(
        self, call_id: str, step: StepSnapshot, arguments: dict[str, Any]
    ) -> ToolResult:
        """SPEC §11.9: rank the step's MCP tools, discover the matches for later steps."""
        started = trio.current_time()
        parsed = parse_search_arguments(arguments)
        if isinstance(parsed, str):
            text = texts.SEARCH_BAD_ARGUMENTS.format(problem=parsed, maximum=MAX_SEARCH_LIMIT)
            return self._end(call_id, "error", text)
        query, limit = parsed
        found = step.exposure.view.search(query, limit)
        self._exposer.discover(found)
        header = wall_time_header(trio.current_time() - started)
        return self._end(call_id, "ok", f"{header}\n{search_output(query, found)}")

    def late_answer(self, call_id: str) -> None:
        """A connection reports an answer for a call that already ended (INV-4)."""
        self._late_dropped += 1
        self.recorder.late_dropped(call_id)
