"""The lockstep machine: the abstract model and the runtime, driven side by side.

Theory of operation
-------------------
One run is one event loop (trio by default; asyncio too, :mod:`.schedulers`) with a
clock that only the machine advances. The
runtime is the production ``Host`` over a :class:`~.scripted.ScriptedConnector`, whose
every request parks until a rule releases it. At each step the machine takes the events
the model's ``enabled(state)`` allows (SPEC §3), lets the chooser pick one, performs it on
both sides, and lets the runtime settle (``wait_all_tasks_blocked``). Then:

1. trace refinement — everything the runtime reported through its recorder during the
   step (publications, refresh outcomes, results, messages sent, refusals, late answers)
   must equal, as a multiset, the outputs the model's transition predicts;
2. projection — the runtime's observable state equals the model's: registry names and
   generation, connections, parked listings and calls, calls in flight, step snapshots;
3. the invariants checked directly on the runtime (:mod:`.impl_invariants`).

At teardown every fault is healed and every parked request answered; each accepted call
must have exactly one result (LIVE-1); the run's own trace must pass the monitors and, but
for a lazy start, refine the model (SPEC §14.5).

Deferral (SPEC §11.9), which the model does not have: when the host defers (the
``deferral`` variant's small ``defer_threshold``), each sampled step of the model is
mapped onto what the spec says the step shows (:func:`.deferral.shown_names`, through
refinement's own ``deferring_view``), and the machine offers what the model's ``enabled``
cannot: ``tool_search`` calls with their arguments (kind ``search``) and calls of the
deferred tools. The model routes them in the mapped step; a search's result is the
oracle's (:func:`.deferral.expected_search`), checked text and all, and what it found is
discovered for the steps sampled afterwards.

Timeouts: each call is accepted a (mock) moment after the previous, so deadlines are
distinct, and ``timeout(c)`` is offered only for the open call with the earliest deadline;
jumping the clock to it fires exactly that one. Every other deadline of the runtime is
disabled in the machine's configuration (listing and startup deadlines, reconnect backoff).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
import attrs
from anyio.abc import TaskGroup

from mcpbind.impl import (
    ApprovalRequest,
    BuiltinTool,
    CatalogCache,
    DuplicateCallId,
    Host,
    HostClosed,
    HostConfig,
    RegistryState,
    ServerConfig,
)
from mcpbind.impl.catalog.planner import StepSnapshot
from mcpbind.impl.config.catalog_cache import server_identity
from mcpbind.impl.config.recorder import NullRecorder, Recorder
from mcpbind.impl.seams import PRODUCTION, Seams
from mcpbind.impl.trace import TraceRecorder, trace_header
from mcpbind.impl.values import RefreshOutcome as ImplOutcome
from mcpbind.impl.values import ToolResult
from mcpbind.model.explore import format_event
from mcpbind.model.refine import RECENT, TOOL_SEARCH, deferring_view, refine, result_text
from mcpbind.model.rules import call_id_for
from mcpbind.model.trace import check_trace, parse_trace
from mcpbind.model.values import (
    Approve,
    Bound,
    Call,
    CallFailed,
    CallProgress,
    CallRejected,
    CallResponded,
    Cancel,
    Close,
    Deny,
    Disconnect,
    Event,
    EventKind,
    LateDropped,
    ListChanged,
    ListDone,
    ListFailed,
    ListPage,
    Output,
    Published,
    Reconfigure,
    Reconnect,
    RefreshOutcome,
    RefreshRequested,
    Refused,
    Registry,
    Relisten,
    Result,
    Sample,
    Sent,
    ServerSpec,
    SessionExpired,
    State,
    StreamEnded,
    TaskCreated,
    TaskStatus,
    Timeout,
)

from . import impl_invariants
from .chooser import Chooser, DrawChooser, ReplayMismatch
from .deferral import SEARCHES, SearchAnswer, expected_search, shown_names
from .run_view import (
    RunView,
    Seen,
    SeenLate,
    SeenOutcome,
    SeenPublished,
    SeenRefused,
    SeenResult,
    SeenSent,
    mcp_names,
    tagged,
)
from .schedulers import Scheduler, scheduler
from .scripted import CALL_ID, Replacement, ScriptedConnector, ScriptedServer, raw_tool
from .variants import PLAIN, LockstepVariant

__all__ = ["REACHED", "MachineFailure", "Observation", "SearchCall", "run_machine"]

KIND_ORDER: tuple[EventKind, ...] = (
    "sample",
    "call",
    "list_done",
    "list_page",
    "progress",
    "call_responded",
    "task_created",
    "task_status",
    "approve",
    "cancel",
    "deny",
    "timeout",
    "list_changed",
    "stream_ended",
    "relisten",
    "refresh_requested",
    "reconfigure",
    "disconnect",
    "reconnect",
    "list_failed",
    "call_failed",
    "call_rejected",
    "session_expired",
    "close",
)
"""The order kinds are offered in: progress before faults, so that the odometer meets the
productive sequences first and Hypothesis shrinks toward them."""
MACHINE_KIND_ORDER: tuple[str, ...] = (*KIND_ORDER[:2], "search", *KIND_ORDER[2:])
"""With the machine's own kind: ``search``, a ``tool_search`` call with its arguments (the
model's ``call`` of a host tool, SPEC §11.9), offered in the ``deferral`` variant."""
TOOL_TIMEOUT = 300.0
IDLE_TIMEOUT = 1.0
"""A server with an idle timeout (SPEC §8.11): its tool timeout, re-armed by progress."""
IDLE_CAP = 1.5
"""Its cap. Each notification comes ``PROGRESS_LEAD`` before the call's idle deadline, so
after one (the machine's ``bound.rearms``) the cap is the earlier deadline (1.5 s, before
the re-armed 1.95 s), as the model has it; before it, the idle deadline is (1 s)."""
PROGRESS_LEAD = 0.05
CLOSE_TIMEOUT = 5.0
REACHED = (
    "cancel after end",
    "close during list",
    "deferring step",
    "deferred call",
    "discovered call",
    "search ok found",
    "search ok",
    "search error",
    "search not run",
)
"""Situations a run counts in its ``coverage`` as it reaches them: a ``cancel`` of a call
that already ended (a model no-op, SPEC §3.1); a ``tools/list`` answer parked as the host
closes (SPEC §11.14: answered, dropped); and, when the host defers (SPEC §11.9), a step
that defers, a call to a deferred tool (``unsupported``), a call to a tool a search
discovered (routed), a search that found tools, one that found none, one with invalid
arguments, and one that did not run (no tool of its step, or arguments that are no
object)."""

# The scripted bound leaves a tool out on purpose (SPEC §5.4), and every host the machine
# opens warns about it once: thousands per run. A handler on the package logger keeps the
# warnings in the log for whoever configures one, and off a bare terminal (``mcpbind
# check``, ``mcpbind fuzz``), where Python would print them through its last resort.
logging.getLogger("mcpbind").addHandler(logging.NullHandler())


class MachineFailure(AssertionError):
    """The runtime disagreed with the model or broke an invariant; carries the trace."""

    def __init__(self, check: str, detail: str, trace: Sequence[str], boundary: str = "") -> None:
        steps = "\n".join(f"  {n:>3}. {e}" for n, e in enumerate(trace, 1))
        super().__init__(f"{check}: {detail}\nevent trace ({len(trace)} events):\n{steps}")
        self.check = check
        self.detail = detail
        self.trace = list(trace)
        self.boundary = boundary
        """The runtime's own trace up to the failure (SPEC §14), ended; empty if none."""


@attrs.define
class Observation:
    """What the runtime reported (the recorder) and what the machine saw it do."""

    outputs: list[Seen] = attrs.field(factory=list)
    history: list[Seen] = attrs.field(factory=list)
    tracer: Recorder = attrs.field(factory=NullRecorder)
    """Also gets every report: the run's TraceRecorder (SPEC §14), checked at the end."""
    on_close: Callable[[], None] = lambda: None
    """Called when the host records its ``close``, before it closes anything."""

    def published(self, generation: int, source: str, names: tuple[str, ...]) -> None:
        self.tracer.published(generation, source, names)
        self._add(SeenPublished(generation, source, tuple(names)))

    def refresh_outcome(self, outcome: ImplOutcome) -> None:
        self.tracer.refresh_outcome(outcome)
        self._add(
            SeenOutcome(
                outcome.server,
                outcome.status,
                outcome.generation,
                outcome.kind,
                outcome.reason,
                outcome.excluded,
            )
        )

    def result(self, result: ToolResult) -> None:
        self.tracer.result(result)
        text = result_text(result.status, result.output)
        self._add(SeenResult(result.call_id, result.status, text))

    def sent(self, server: str, method: str, detail: str, call_id: str | None = None) -> None:
        self.tracer.sent(server, method, detail, call_id)
        self._add(SeenSent(server, method, detail))

    def refused(self, call_id: str, text: str) -> None:
        self.tracer.refused(call_id, text)
        self._add(SeenRefused(call_id, text))

    def late_dropped(self, call_id: str) -> None:
        self.tracer.late_dropped(call_id)
        self._add(SeenLate(call_id))

    def event(self, kind: EventKind, fields: Mapping[str, Any]) -> None:
        self.tracer.event(kind, fields)  # the machine chose its inputs; the trace has them
        if kind == "close":
            self.on_close()

    def _add(self, item: Seen) -> None:
        self.outputs.append(item)
        self.history.append(item)

    def drain(self) -> list[Seen]:
        outputs, self.outputs = self.outputs, []
        return outputs


def normal(output: Output) -> Seen:
    """A model output in the form the recorder reports it."""
    if isinstance(output, Published):
        return SeenPublished(output.generation, output.source, tuple(output.names))
    if isinstance(output, RefreshOutcome):
        return SeenOutcome(
            output.server,
            output.status,
            output.generation,
            output.kind,
            output.reason,
            output.excluded,
        )
    if isinstance(output, Result):
        return SeenResult(output.call_id, output.status, result_text(output.status, output.text))
    if isinstance(output, Sent):
        return SeenSent(output.server, output.method, output.detail)
    if isinstance(output, Refused):
        return SeenRefused(output.call_id, output.text)
    assert isinstance(output, LateDropped)
    return SeenLate(output.call_id)


@attrs.frozen
class SearchCall:
    """A ``tool_search`` call with its arguments (SPEC §11.9): to the model, the ``call``
    of a host tool of its step, whose handler's answer the oracle predicts
    (:func:`~.deferral.expected_search`)."""

    call: Call
    arguments: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return "search"

    def __str__(self) -> str:
        c = self.call
        return f"search(step={c.step}, call_id={c.call_id!r}, arguments={dict(self.arguments)!r})"


Offer = Event | SearchCall
"""What a rule may do: a model event, or a search with its arguments."""


def label(offer: Offer) -> str:
    """An offer as traces and replay files name it."""
    return str(offer) if isinstance(offer, SearchCall) else _event_label(offer)


# Each step names every offer of the kind drawn, and runs offer the same events again and
# again: an event's name (a pure function of a frozen value) is made once.
_event_label = functools.lru_cache(maxsize=4096)(format_event)


async def _builtin(arguments: dict[str, Any]) -> str:
    return "builtin"


def host_config(
    bound: Bound,
    approver: Any = None,
    *,
    reconfigured: bool = False,
    defer_threshold: int | None = None,
) -> HostConfig:
    """The runtime's configuration for ``bound``. With gating (``bound.approval``) every
    server's tools are in mode ``prompt``, so every MCP call asks, as in the model (§3.4).
    A server of ``bound.lazy`` starts ``lazy_when_cached`` from a catalog cache that holds
    its version-0 listing, as the model's (SPEC §3.5). The servers of the bound's one
    reconfiguration (SPEC §3.7): an ``added`` one only once ``reconfigured``, a
    ``removed`` one only before; a ``changed`` one's target is then a
    :class:`~.scripted.Replacement` (its effective configuration is not equal). With
    ``defer_threshold``, the host defers above it (SPEC §11.9); else the default, which
    the machine's bounds stay far below."""
    gating: dict[str, Any] = {"default_tools_approval_mode": "prompt"} if bound.approval else {}
    absent = "removed" if reconfigured else "added"
    servers = {
        spec.name: ServerConfig(
            # the scripted connector ignores the target but for a replacement
            target=Replacement(spec) if reconfigured and spec.change == "changed" else spec,
            tool_timeout_sec=spec.tool_timeout_sec if spec.idle_timeout else TOOL_TIMEOUT,
            idle_timeout=spec.idle_timeout,
            tool_max_sec=spec.tool_max_sec,
            list_timeout_sec=0,
            startup_timeout_sec=0,
            supports_parallel_tool_calls=spec.parallel,
            enabled_tools=spec.enabled_tools,
            disabled_tools=spec.disabled_tools,
            startup="lazy_when_cached" if spec.name in bound.lazy else "eager",
            **gating,
        )
        for spec in bound.servers
        if spec.change != absent
    }
    cache = CatalogCache()
    for spec in bound.servers:
        if spec.name in bound.lazy:
            listing = [raw_tool(tool) for page in spec.versions[0] for tool in page]
            cache.put(server_identity(servers[spec.name]), listing)
    builtins = tuple(
        BuiltinTool(name, "a host tool", {"type": "object"}, _builtin) for name in bound.builtins
    )
    contributors = tuple(_Extension(contributor, names) for contributor, names in bound.extensions)
    deferral: dict[str, Any] = (
        {} if defer_threshold is None else {"defer_threshold": defer_threshold}
    )
    return HostConfig(
        servers=servers,
        max_name_length=bound.max_name_length,
        binding_policy=bound.policy,
        builtins=builtins,
        reconnect_initial_sec=0,
        reconnect_max_sec=0,
        approver=approver if bound.approval else None,
        close_timeout_sec=CLOSE_TIMEOUT,
        contributors=contributors,
        catalog_cache=cache,
        **deferral,
    )


@attrs.frozen
class _Extension:
    """A tool contributor with a fixed tool list: the model's ``ext:<id>`` source."""

    id: str
    names: tuple[str, ...]

    def tools(self) -> list[BuiltinTool]:
        return [
            BuiltinTool(name, "an extension tool", {"type": "object"}, _builtin)
            for name in self.names
        ]


@attrs.define(eq=False)
class _Run:
    bound: Bound
    chooser: Chooser
    steps: int
    seams: Seams
    scheduler: Scheduler
    trace: list[str] = attrs.field(factory=list)
    observation: Observation = attrs.field(factory=Observation)
    state: State | None = None
    host: Host | None = None
    servers: dict[str, ScriptedServer] = attrs.field(factory=dict)
    snapshots: list[StepSnapshot] = attrs.field(factory=list)
    sampled: list[dict[str, tuple[str | None, str]]] = attrs.field(factory=list)
    deadlines: dict[str, float] = attrs.field(factory=dict)
    caps: dict[str, float] = attrs.field(factory=dict)
    """Calls to a server with an idle timeout: when their cap fires (SPEC §8.11)."""
    results: dict[str, list[ToolResult]] = attrs.field(factory=dict)
    refused: list[str] = attrs.field(factory=list)
    outcomes: list[ImplOutcome] = attrs.field(factory=list)
    nursery: TaskGroup | None = None
    previous_names: dict[tuple[str, str], str] | None = None
    """The MCP tools' names at the previous invariant check (INV-6)."""
    call_events: int = 0
    cached_installs: int = 0
    """Publications of cached catalogs at the start (lazy servers, SPEC §11.12)."""
    stack: contextlib.AsyncExitStack | None = None
    planned: int = 0
    """Rules this run will take (the chooser's ``steps``)."""
    taken: int = 0
    """Rules taken so far."""
    closing: bool = False
    """A ``close`` rule ran: the host is closing (or closed)."""
    closed: bool = False
    """Leaving ``Host.open`` has finished."""
    written: io.StringIO = attrs.field(factory=io.StringIO)
    """The run's trace (SPEC §14), as the observation writes it."""
    approvals: dict[str, tuple[anyio.Event, list[str]]] = attrs.field(factory=dict)
    """Calls waiting for the machine's approver: released by ``approve``/``deny`` rules."""
    defer_threshold: int | None = None
    """The ``defer_threshold`` the run sets, and then searches (SPEC §11.9); None: the
    host's default, which the bounds stay below."""
    threshold: int | None = None
    """The host's ``defer_threshold`` as configured: what the oracle applies to every
    step (:func:`~.deferral.shown_names`)."""
    coverage: Counter[str] = attrs.field(factory=Counter)
    """How often the run reached each situation worth reaching (:data:`REACHED`)."""
    discovered: set[tuple[str, str]] = attrs.field(factory=set)
    """The identities the run's searches discovered, as the oracle has them (§11.9)."""
    latest: Registry | None = None
    """The model's snapshot of the latest step before the deferral view: every tool of
    its registry state, deferred or not."""

    # --- the run as the invariant checks see it (run_view.RunView) ----------------------

    @property
    def history(self) -> list[Seen]:
        return self.observation.history

    @property
    def registry(self) -> RegistryState:
        assert self.host is not None
        return self.host.registry.state

    @property
    def config(self) -> HostConfig:
        assert self.host is not None
        return self.host.config

    @property
    def connected(self) -> Mapping[str, bool]:
        assert self.host is not None
        return self.host.statistics().connected

    @property
    def call_steps(self) -> dict[str, int]:
        assert self.state is not None
        return {c.call_id: c.step for c in self.state.calls}

    async def approver(self, request: ApprovalRequest) -> str:
        """The approver of a gated run: parks each request until a rule answers it."""
        answered, answer = anyio.Event(), ["cancel"]
        self.approvals[request.call_id] = (answered, answer)
        try:
            await answered.wait()
        finally:
            del self.approvals[request.call_id]
        return answer[0]

    def answer_approval(self, call_id: str, answer: str) -> None:
        pending = self.approvals.get(call_id)
        if pending is None:
            raise self.fail("machine", f"{call_id} is not waiting for approval")
        pending[1][0] = answer
        pending[0].set()

    def fail(self, check: str, detail: str) -> MachineFailure:
        written = self.written.getvalue()
        if written and not written.endswith('{"kind": "end"}\n'):
            written += '{"kind": "end"}\n'
        return MachineFailure(check, detail, self.trace, written)

    # --- the run -----------------------------------------------------------------------

    async def main(self) -> None:
        self.servers = {s.name: ScriptedServer(s) for s in self.bound.servers}
        connector = ScriptedConnector(self.servers)
        initial = RECENT.initial(self.bound)
        self.state = initial.state
        config = host_config(self.bound, self.approver, defer_threshold=self.defer_threshold)
        self.threshold = config.defer_threshold
        self.observation.tracer = TraceRecorder(self.written, trace_header(config))
        self.observation.on_close = self._answer_listings_at_close
        # The host is opened inside the callers' task group, so a ``close`` rule can close
        # it while calls are pending: they are the host's callers and outlive it (INV-12).
        async with anyio.create_task_group() as nursery, contextlib.AsyncExitStack() as stack:
            self.host = await stack.enter_async_context(
                Host.open(
                    config,
                    connector=connector,
                    recorder=self.observation,
                    wait_ready=False,
                    seams=self.seams,
                )
            )
            self.nursery, self.stack = nursery, stack
            # However the host is left (a close rule, the end of the run, a failure), a
            # close that waits for something no rule gives runs out its timeout.
            stack.callback(nursery.start_soon, self._close_watchdog)
            await self.settle()
            self.compare(initial.outputs, "initial")
            self.cached_installs = sum(isinstance(o, Published) for o in initial.outputs)
            self.planned = self.chooser.steps(self.steps)
            for taken in range(self.planned):
                self.taken = taken
                if not await self.step():
                    break
            await self.teardown()
            nursery.cancel_scope.cancel()

    async def settle(self) -> None:
        """Every task waits for a rule; then the transports write what they were handed."""
        await self.scheduler.settle()
        for server in self.servers.values():
            server.write()

    def options(self) -> list[Offer]:
        assert self.state is not None
        extra = self.deferral_offers()
        events: list[Offer] = [*RECENT.enabled(self.state), *extra]
        # A call waiting for approval has no deadline yet (SPEC §3.4, INV-10).
        open_calls = [c for c in self.state.calls if c.phase not in ("done", "approval")]
        earliest = min(open_calls, key=lambda c: self.deadlines[c.call_id], default=None)
        # Drawn at random, close would end half the runs after a few rules; Hypothesis is
        # offered it in a run's last two rules only (the odometer and replays: at every one).
        late = not isinstance(self.chooser, DrawChooser) or self.taken >= self.planned - 2
        # The one reconfiguration, likewise, from a run's middle on: calls are out by then.
        middle = not isinstance(self.chooser, DrawChooser) or self.taken >= self.planned // 2
        return [
            e
            for e in events
            if (
                not isinstance(e, Timeout)
                or (earliest is not None and e.call_id == earliest.call_id)
            )
            and (late or not isinstance(e, Close))
            and (middle or not isinstance(e, Reconfigure))
        ]

    def deferral_offers(self) -> list[Offer]:
        """SPEC §11.9, in a run that defers: calls the model's ``enabled`` does not list,
        since the model's steps show every tool: ``tool_search`` with each of
        :data:`~.deferral.SEARCHES` (and with arguments that are no object), and each MCP
        tool of the latest step's registry state that the step does not show."""
        state = self.state
        assert state is not None
        if self.defer_threshold is None or state.closed or not state.steps:
            return []
        if len(state.calls) >= state.bound.max_calls or self.latest is None:
            return []
        step, call_id = len(state.steps) - 1, call_id_for(len(state.calls))
        search = Call(step, call_id, TOOL_SEARCH)
        offers: list[Offer] = [SearchCall(search, arguments) for arguments in SEARCHES]
        offers.append(attrs.evolve(search, arguments_ok=False))
        view = state.steps[step]
        assert view is not None
        shown = set(view.names())
        offers += [
            Call(step, call_id, b.name)
            for c in self.latest.catalogs
            for b in c.bindings
            if b.server is not None and b.name not in shown
        ]
        return offers

    async def step(self) -> bool:
        events = self.options()
        if not events:
            return False
        # Two-level choice: the kind first, so that rare kinds (a cancel, a late answer)
        # are as likely as the ones offered many times (calls to every name).
        kinds = sorted({e.kind for e in events}, key=MACHINE_KIND_ORDER.index)
        kind = self.chooser.choose(kinds, "kind")
        by_name = {label(e): e for e in events if e.kind == kind}
        offer = by_name[self.chooser.choose(list(by_name), "event")]
        self.trace.append(label(offer))
        assert self.state is not None
        before = self.state
        event = offer.call if isinstance(offer, SearchCall) else offer
        self.note_reached(before, offer)
        # Every offer is one of the model's ``enabled`` events or a call the deferral
        # offers, which the model routes in the step's view: applied as it is.
        transition = RECENT.apply(before, event)
        await self.perform(offer)
        await self.settle()
        self.state = transition.state
        outputs: Sequence[Output] = transition.outputs
        if isinstance(event, Sample):
            self.state = self.deferred(self.state)
        elif isinstance(offer, SearchCall) or (
            isinstance(event, Call) and event.name == TOOL_SEARCH
        ):
            outputs = self.searched(before, offer, outputs)
        self.compare(outputs, label(offer))
        self.check_projection()
        self.check_invariants(before)
        return True

    def deferred(self, state: State) -> State:
        """The step just sampled as SPEC §11.9 says the host shows it: the model's
        snapshot mapped through the view trace refinement uses (``deferring_view``)."""
        snapshot = self.latest = state.steps[-1]
        if snapshot is None:
            return state  # no call can use it (the model forgot it): nothing to show
        shown = shown_names(snapshot, self.threshold, self.discovered)
        if shown is None:
            return state
        self.coverage["deferring step"] += 1
        view = deferring_view(snapshot, shown)
        if view is None:
            raise self.fail("machine", f"{sorted(shown)} is not a view of the step")
        return attrs.evolve(state, steps=(*state.steps[:-1], view))

    def searched(self, before: State, offer: Offer, outputs: Sequence[Output]) -> list[Output]:
        """A ``tool_search`` call ended: its result is the oracle's (SPEC §11.9), which
        the model leaves to the host tool's handler (``ok``, SPEC §3.1); what it found is
        discovered for the steps sampled from now on."""
        call = offer.call if isinstance(offer, SearchCall) else offer
        assert isinstance(call, Call)
        view = before.steps[call.step]
        is_tool = view is not None and view.lookup(TOOL_SEARCH) is not None
        if not is_tool or not call.arguments_ok or not isinstance(offer, SearchCall):
            self.coverage["search not run"] += 1
            return list(outputs)  # unsupported or not an object: the model's own texts
        assert self.latest is not None
        answer = expected_search(self.latest, offer.arguments)
        self.coverage[f"search {answer.status}" + (" found" if answer.found else "")] += 1
        self.check_search(call.call_id, answer)
        self.discovered.update(answer.found)
        text = result_text(answer.status, answer.text)
        return [
            Result(o.call_id, answer.status, text)
            if isinstance(o, Result) and o.call_id == call.call_id
            else o
            for o in outputs
        ]

    def check_search(self, call_id: str, answer: SearchAnswer) -> None:
        """The runtime's ``tool_search`` result, text and all, is the oracle's."""
        results = self.results.get(call_id, [])
        if len(results) != 1:
            raise self.fail("tool_search", f"{call_id} ended with {len(results)} results")
        got = results[0]
        text = got.output
        if answer.status == "ok":
            head, _, text = got.output.partition("\n")
            if re.fullmatch(r"Wall time: \d+\.\d{4} seconds", head) is None:
                raise self.fail("tool_search", f"{call_id}: {head!r} is no wall-time line")
        if (got.status, text) != (answer.status, answer.text):
            raise self.fail(
                "tool_search (SPEC §11.9)",
                f"{call_id} ended {got.status} {text!r}; the spec says {answer.status} "
                f"{answer.text!r}",
            )

    def note_reached(self, before: State, offer: Offer) -> None:
        """Count the situations :data:`REACHED` names, as the rule is taken."""
        if isinstance(offer, Cancel):
            record = before.call(offer.call_id)
            if record is not None and record.phase == "done":
                self.coverage["cancel after end"] += 1
        elif isinstance(offer, Call) and self.latest is not None and not before.closed:
            view = before.steps[offer.step]
            binding = self.latest.lookup(offer.name)
            if binding is None or binding.server is None or view is None:
                return
            if view.lookup(offer.name) is None:
                self.coverage["deferred call"] += 1
            elif view.lookup(TOOL_SEARCH) is not None:
                self.coverage["discovered call"] += 1

    # --- performing a model event on the runtime ---------------------------------------

    async def perform(self, event: Offer) -> None:
        host, nursery = self.host, self.nursery
        assert host is not None
        assert nursery is not None
        if isinstance(event, SearchCall):
            self._start_call(event.call, dict(event.arguments))
        elif isinstance(event, RefreshRequested):
            nursery.start_soon(self._refresh, event.server)
        elif isinstance(event, ListPage | ListDone):
            self.servers[event.server].deliver_page()
        elif isinstance(event, ListFailed):
            self.servers[event.server].fail_page(event.why)
        elif isinstance(event, ListChanged):
            self.servers[event.server].change_catalog()
        elif isinstance(event, StreamEnded):
            self.servers[event.server].end_stream()
        elif isinstance(event, Relisten):
            self.servers[event.server].relisten()
        elif isinstance(event, Sample):
            snapshot = host.sample()
            self.snapshots.append(snapshot)
            self.sampled.append({n: (b.server, b.remote_name) for n, b in snapshot.names.items()})
        elif isinstance(event, Call):
            self._start_call(event)
        elif isinstance(event, CallResponded | CallFailed | CallRejected | CallProgress):
            await self._server_acts(event)
        elif isinstance(event, SessionExpired):
            self._server_of(event.call_id).expire_session(event.call_id)
        elif isinstance(event, TaskCreated | TaskStatus):
            self._task_acts(event)
        elif isinstance(event, Cancel):
            host.cancel(event.call_id)
        elif isinstance(event, Approve):
            # The tool timeout starts now (dispatch); the same geometric spacing as calls.
            self.call_events += 1
            self.scheduler.jump(2.0**-self.call_events)
            self.deadlines[event.call_id] = anyio.current_time() + TOOL_TIMEOUT
            self.answer_approval(event.call_id, "allow")
        elif isinstance(event, Deny):
            self.answer_approval(event.call_id, event.answer)
        elif isinstance(event, Timeout):
            deadline = self.caps[event.call_id] if event.cap else self.deadlines[event.call_id]
            self.scheduler.jump(max(0.0, deadline - anyio.current_time()))
        elif isinstance(event, Disconnect):
            self.servers[event.server].disconnect()
        elif isinstance(event, Reconnect):
            self.servers[event.server].reconnect()
        elif isinstance(event, Reconfigure):
            nursery.start_soon(self._reconfigure)
        elif isinstance(event, Close):
            await self._close()

    async def _server_acts(
        self, event: CallResponded | CallFailed | CallRejected | CallProgress
    ) -> None:
        """A server answers, fails, rejects or reports progress on a call."""
        server = self._server_of(event.call_id)
        if isinstance(event, CallResponded):
            if event.call_id in server.calls:
                server.answer(event.call_id, is_error=event.is_error)
            else:
                server.answer_late(event.call_id)
        elif isinstance(event, CallFailed):
            if event.call_id in server.polls:
                server.fail_poll(event.call_id, event.why)  # a poll of its task
            else:
                server.fail_call(event.call_id, event.why)
        elif isinstance(event, CallRejected):
            server.reject_call(event.call_id)
        else:
            # Just before the idle deadline, so that a runtime that does not re-arm it
            # times the call out at the next notification or deadline the model chose.
            lead = self.deadlines[event.call_id] - PROGRESS_LEAD - anyio.current_time()
            self.scheduler.jump(max(0.0, lead))
            await server.report_progress(event.call_id)
            idle = self._server_spec(event.call_id).tool_timeout_sec
            self.deadlines[event.call_id] = anyio.current_time() + idle

    def _start_call(self, event: Call, arguments: Any = None) -> None:
        """The host calls: the call's task starts, its deadlines are noted."""
        assert self.nursery is not None
        # Geometric spacing: the k-th call event comes 2**-k s after the previous one,
        # so deadlines are distinct and no later spacing (their sum is smaller than
        # any gap between two deadlines) can reach a deadline that a timeout rule did
        # not choose.
        self.call_events += 1
        self.scheduler.jump(2.0**-self.call_events)
        if event.call_id not in self.deadlines:
            timeout, cap = self._timeouts_of(event)
            self.deadlines[event.call_id] = anyio.current_time() + timeout
            if cap is not None:
                self.caps[event.call_id] = anyio.current_time() + cap
        if arguments is None:
            arguments = {CALL_ID: event.call_id} if event.arguments_ok else "[1]"
        self.nursery.start_soon(
            self._call, self.snapshots[event.step], event.call_id, event.name, arguments
        )

    def _task_acts(self, event: TaskCreated | TaskStatus) -> None:
        """A server answers a call with a task, or a poll finds the task ended (late: the
        end of a task the host gave up)."""
        server = self._server_of(event.call_id)
        if isinstance(event, TaskCreated):
            server.create_task(event.call_id)
        elif event.call_id in server.polls:
            server.end_task(event.call_id, event.status, is_error=event.is_error, why=event.why)
        else:
            server.answer_late(event.call_id)

    async def _close(self) -> None:
        """Leave Host.open in the task that entered it (anyio cancel scopes must be left
        by the task that entered them); the close needs no rule to finish."""
        assert self.stack is not None
        assert self.nursery is not None
        self.closing = True
        await self.stack.aclose()
        self.closed = True

    def _answer_listings_at_close(self) -> None:
        """Every parked ``tools/list`` is answered as the host starts to close: the answer
        races the close (seen against server-everything). The model's ``close`` ends the
        refresh ``rejected``; the runtime must drop the answer, ask for no further page
        and install nothing (INV-12)."""
        for server in self.servers.values():
            if server.lists:
                self.coverage["close during list"] += 1
            while server.lists:
                server.deliver_page()

    async def _close_watchdog(self) -> None:
        """A close that waits for something no rule gives runs out its close_timeout_sec:
        the machine's clock moves only when the machine moves it, so it moves it here."""
        await self.settle()
        if not self.closed:
            self.scheduler.jump(CLOSE_TIMEOUT + 1)

    def _timeouts_of(self, event: Call) -> tuple[float, float | None]:
        """The tool timeout the runtime gives this call, and its cap with an idle timeout."""
        assert self.state is not None
        snapshot = self.state.steps[event.step]
        binding = None if snapshot is None else snapshot.lookup(event.name)
        if binding is None or binding.server is None:
            return TOOL_TIMEOUT, None
        spec = self.state.bound.server(binding.server)
        if not spec.idle_timeout:
            return TOOL_TIMEOUT, None
        return spec.tool_timeout_sec, spec.tool_max_sec

    def _server_spec(self, call_id: str) -> ServerSpec:
        assert self.state is not None
        record = self.state.call(call_id)
        assert record is not None
        assert record.binding is not None
        assert record.binding.server is not None
        return self.state.bound.server(record.binding.server)

    def _server_of(self, call_id: str) -> ScriptedServer:
        for server in self.servers.values():
            if call_id in server.calls or call_id in server.late or call_id in server.polls:
                return server
        raise self.fail("machine", f"{call_id} is neither parked nor late at any server")

    async def _reconfigure(self) -> None:
        """SPEC §11.17: the host takes the bound's reconfigured servers; the call returns
        once the new servers' first attempts settled (rules release their listings)."""
        assert self.host is not None
        config = host_config(
            self.bound, self.approver, reconfigured=True, defer_threshold=self.defer_threshold
        )
        with contextlib.suppress(HostClosed):
            await self.host.reconfigure(config)

    async def _refresh(self, server: str) -> None:
        assert self.host is not None
        self.outcomes.append(await self.host.refresh(server))

    async def _call(self, snapshot: StepSnapshot, call_id: str, name: str, arguments: Any) -> None:
        assert self.host is not None
        try:
            result = await self.host.call(snapshot, call_id, name, arguments)
        except (DuplicateCallId, HostClosed):
            self.refused.append(call_id)
            return
        self.results.setdefault(call_id, []).append(result)

    # --- checks --------------------------------------------------------------------------

    def compare(self, expected: Sequence[Output], label: str) -> None:
        want = Counter(normal(o) for o in expected)
        got = Counter(self.observation.drain())
        if want != got:
            missing = sorted(repr(tagged(o)) for o in (want - got).elements())
            extra = sorted(repr(tagged(o)) for o in (got - want).elements())
            raise self.fail(
                "trace refinement",
                f"after {label}: the model predicts {missing or 'nothing more'}; "
                f"the runtime also did {extra or 'nothing more'}",
            )

    def check_projection(self) -> None:
        state, host = self.state, self.host
        assert state is not None
        assert host is not None
        model_names = {
            b.name: (b.server, b.remote_name) for c in state.registry.catalogs for b in c.bindings
        }
        impl_state = host.registry.state
        impl_names = {n: (b.server, b.remote_name) for n, b in impl_state.by_name.items()}
        mismatches = []
        if model_names != impl_names:
            mismatches.append(f"registry {impl_names} != model {model_names}")
        if state.registry.generation != impl_state.generation:
            mismatches.append(
                f"generation {impl_state.generation} != model {state.registry.generation}"
            )
        stats = host.statistics()
        for spec, server in zip(self.bound.servers, state.servers, strict=True):
            scripted = self.servers[spec.name]
            if (spec.name in stats.connected) != server.present:  # SPEC §3.7
                mismatches.append(f"{spec.name} present={spec.name in stats.connected}")
            if stats.connected.get(spec.name, False) != server.connected:
                mismatches.append(f"{spec.name} connected={stats.connected.get(spec.name)}")
            listing = server.refresh is not None and server.connected
            if bool(scripted.lists) != listing or len(scripted.lists) > 1:
                mismatches.append(f"{spec.name} has {len(scripted.lists)} listing(s) parked")
            # A call in flight parks its tools/call; one that runs as a task, its poll.
            for phase, parked in (("sent", scripted.calls), ("task", scripted.polls)):
                model = {
                    c.call_id
                    for c in state.calls
                    if c.phase == phase and c.binding and c.binding.server == spec.name
                }
                if set(parked) != model:
                    mismatches.append(
                        f"{spec.name} parked for {phase} calls {sorted(parked)} != {sorted(model)}"
                    )
            late = {
                c.call_id
                for c in state.calls
                if c.late and c.binding is not None and c.binding.server == spec.name
            }
            if set(scripted.late) != late:
                mismatches.append(f"{spec.name} late {sorted(scripted.late)} != {sorted(late)}")
        open_calls = sum(1 for c in state.calls if c.phase != "done")
        if stats.calls_in_flight != open_calls:
            mismatches.append(f"{stats.calls_in_flight} calls in flight != model {open_calls}")
        for index, snapshot in enumerate(state.steps):
            if snapshot is None:
                continue
            names = {b.name for c in snapshot.catalogs for b in c.bindings}
            shown = set(self.snapshots[index].names)
            if shown != names:  # a deferring step: SPEC §11.9's view of the model's
                mismatches.append(
                    f"step {index} shows {sorted(shown - names)} that the model's does not "
                    f"and not {sorted(names - shown)}"
                )
        if mismatches:
            raise self.fail("projection", "; ".join(mismatches))

    def check_invariants(self, before: State) -> None:
        assert self.host is not None
        view: RunView = self
        for check in impl_invariants.CHECKS:
            why = check(view)
            if why is not None:
                raise self.fail(check.__name__, why)
        self.previous_names = mcp_names(self.registry)

    async def teardown(self) -> None:
        """LIVE-1: heal every fault, answer every parked request; each call ends once."""
        for server in self.servers.values():
            if not server.up:
                server.reconnect()
            elif not server.listening:
                server.relisten()  # LIVE-3: the host listens again, and reads what it missed
        for _ in range(100):
            await self.settle()
            progressed = False
            for call_id in list(self.approvals):
                self.answer_approval(call_id, "allow")
                progressed = True
            for server in self.servers.values():
                for call_id in list(server.calls):
                    server.answer(call_id, is_error=False)
                    progressed = True
                for call_id in list(server.polls):
                    server.end_task(call_id, "completed", is_error=False, why="")
                    progressed = True
                while server.lists:
                    server.deliver_page()
                    progressed = True
            if not progressed:
                break
        await self.settle()
        assert self.state is not None
        accepted = {c.call_id for c in self.state.calls}
        for call_id in sorted(accepted):
            count = len(self.results.get(call_id, []))
            if count != 1:
                raise self.fail("LIVE-1", f"{call_id} ended with {count} results after teardown")
        self.check_trace()

    def check_trace(self) -> None:
        """SPEC §14: the run's own trace conforms to the trace monitors."""
        tracer = self.observation.tracer
        assert isinstance(tracer, TraceRecorder)
        tracer.end()
        records = parse_trace(self.written.getvalue().splitlines())
        found = check_trace(records)
        if found:
            raise self.fail("trace monitors", "; ".join(str(v) for v in found))
        if not self.bound.lazy:  # refinement does not cover lazy starts (SPEC §14.5)
            refined = refine(records)
            if refined.violation is not None:
                raise self.fail("trace refinement (--strict)", str(refined.violation))


def run_machine(
    bound: Bound,
    chooser: Chooser,
    *,
    steps: int = 30,
    seams: Seams = PRODUCTION,
    backend: str = "trio",
    defer_threshold: int | None = None,
    coverage: Counter[str] | None = None,
) -> list[str]:
    """One lockstep run on ``backend`` (``trio`` or ``asyncio``); returns its event trace,
    raises :class:`MachineFailure`. With ``defer_threshold``, the host defers above it and
    the machine searches (SPEC §11.9); ``coverage`` gets the situations of
    :data:`REACHED` the run reached, counted."""
    runner = scheduler(backend)
    run = _Run(bound, chooser, steps, seams, runner, defer_threshold=defer_threshold)
    if coverage is not None:
        run.coverage = coverage
    try:
        runner.run(run.main)
    except BaseExceptionGroup as group:
        failure = _first(group)
        if failure is None:
            raise
        raise failure from None
    return run.trace


def _first(group: BaseExceptionGroup[Any]) -> Exception | None:
    """The machine's own verdict inside the task groups' exception groups, if any."""
    for error in group.exceptions:
        if isinstance(error, MachineFailure | ReplayMismatch):
            return error
        if isinstance(error, BaseExceptionGroup):
            found = _first(error)
            if found is not None:
                return found
    return None


def replay_file(
    trace: Sequence[str],
    *,
    policy: str,
    seed: object = None,
    variant: LockstepVariant = PLAIN,
) -> str:
    """A replay file: JSON with the policy and the event trace (SPEC §12.3), then the
    variant's flags (``"approval": true`` for a run with approval gating, ``"lazy": true``
    for a run with a lazily started server, ``"progress"``, ``"tasks"``, ``"streams"``,
    ``"reconfigure"``, ``"deferral"`` for those)."""
    data: dict[str, Any] = {"policy": policy, "events": list(trace), "seed": seed}
    data.update(variant.to_json())
    return json.dumps(data, indent=2) + "\n"
