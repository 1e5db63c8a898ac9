"""Deliberately broken variants of the runtime: proof that the machines can fail (SPEC §12.7).

Each mutant is a :class:`~mcpbind.impl.seams.Seams` value: the production runtime with one
part replaced, either by a subclass that overrides one public hook (marked ``@override``,
so mypy fails if the hook disappears) or by a broken function of the same shape. A host
built from it (``Host.open(..., seams=mutant.seams)``) is the production host but for that
one rule. They exist only for ``mcpbind check --mutants`` and the tests; nothing in normal
use imports this module.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs
from typing_extensions import override

from mcpbind.impl.calls.approval import ApprovalGate
from mcpbind.impl.calls.endings import Ending
from mcpbind.impl.calls.lanes import Lane, Lanes
from mcpbind.impl.calls.table import CallTable, PendingCall
from mcpbind.impl.catalog.exposure import Exposure
from mcpbind.impl.catalog.listing import BuildBindings, Decision, build_bindings, read_listing
from mcpbind.impl.catalog.planner import Planner, StepSnapshot
from mcpbind.impl.catalog.registry import (
    NO_RESOURCES,
    Binding,
    RegistryState,
    Resources,
    SourceCatalog,
    ToolRegistry,
)
from mcpbind.impl.config.hooks import ApprovalRequest
from mcpbind.impl.config.server import ServerConfig
from mcpbind.impl.errors import CatalogRejected
from mcpbind.impl.reconfigure import ReconfigurePlan, plan_reconfiguration
from mcpbind.impl.router import Router
from mcpbind.impl.seams import PRODUCTION, Seams
from mcpbind.impl.server.context import Session
from mcpbind.impl.server.refreshes import RefreshRun
from mcpbind.impl.server.runtime import ServerRuntime
from mcpbind.impl.wire.seam import Connection, TaskHandle
from mcpbind.model import texts
from mcpbind.model.naming import hashed_name, is_mcp_source, mcp_source

from .variants import PLAIN, LockstepVariant

__all__ = ["IMPL_MUTANTS", "RECONFIGURE_MUTANTS", "RESOURCE_MUTANTS", "ImplMutant", "impl_mutant"]


@attrs.frozen
class ImplMutant:
    name: str
    target: str
    description: str
    seams: Seams
    variant: LockstepVariant = PLAIN
    """The variant of the machine that kills it: with approval gating on (SPEC §3.4), a
    lazily started server (§3.5), an idle timeout that progress re-arms (§8.11), or a
    ``git.hub`` that answers calls with tasks (§8.12)."""


# --- INV-1 ----------------------------------------------------------------------------


class _BumpWhenUnchanged(ToolRegistry):
    @override
    def unchanged(self, old: tuple[Binding, ...], new: tuple[Binding, ...]) -> bool:
        return False  # an unchanged catalog is published again, with a new generation


# --- INV-2 ----------------------------------------------------------------------------


class _LivePlanner(Planner):
    @override
    def sample(self) -> StepSnapshot:
        live, exposer = self.registry, self.exposer

        class Live(StepSnapshot):
            @property
            def state(self) -> RegistryState:
                return live.state

            @property
            def exposure(self) -> Exposure:  # plan and router follow the live state too
                return exposer.expose(live.state)

        snapshot = Live.__new__(Live)
        object.__setattr__(snapshot, "step", self.steps)
        self.steps += 1
        return snapshot


class _RoutingDeferredTools(StepSnapshot):
    """A deferring step whose router falls back to its registry state: its plan (and the
    trace's ``shown``) are right, but a deferred tool is routed and sent."""

    @override
    def binding(self, name: str) -> Binding | None:
        return self.exposure.by_name.get(name) or self.state.by_name.get(name)


class _RouteDeferredTools(Planner):
    @override
    def sample(self) -> StepSnapshot:
        snapshot = super().sample()
        return _RoutingDeferredTools(snapshot.step, snapshot.state, snapshot.exposure)


# --- INV-3 ----------------------------------------------------------------------------


async def _first_page_only(
    server: str,
    list_page: Callable[[str | None], Awaitable[Any]],
    on_request: Callable[[str | None], None] = lambda cursor: None,
) -> list[Any]:
    on_request(None)
    page = await list_page(None)
    if isinstance(page, dict):
        return list(page["tools"])
    return await read_listing(server, list_page)


def _without_invalid_tools(
    server: str,
    config: ServerConfig,
    tools: Sequence[Any],
    state: RegistryState,
    max_length: int,
    *,
    tasks: bool = True,
) -> Decision:
    valid = [t for t in tools if isinstance(t, dict) and isinstance(t.get("inputSchema"), dict)]
    return build_bindings(server, config, valid, state, max_length, tasks=tasks)


def _installing_task_tools(
    server: str,
    config: ServerConfig,
    tools: Sequence[Any],
    state: RegistryState,
    max_length: int,
    *,
    tasks: bool = True,
) -> Decision:
    """Tools that must run as tasks are installed as if they could run as plain calls."""
    plain = [
        {k: v for k, v in t.items() if k != "execution"} if isinstance(t, dict) else t
        for t in tools
    ]
    return build_bindings(server, config, plain, state, max_length, tasks=tasks)


def _rejecting_task_tools(
    server: str,
    config: ServerConfig,
    tools: Sequence[Any],
    state: RegistryState,
    max_length: int,
    *,
    tasks: bool = True,
) -> Decision:
    """A listing with a tool to leave out is rejected whole."""
    decision = build_bindings(server, config, tools, state, max_length, tasks=tasks)
    if decision.excluded:
        first = decision.excluded[0]
        problem = "it must be called as a task"
        raise CatalogRejected(
            "invalid", texts.REJECT_INVALID.format(server=server, tool=first.tool, problem=problem)
        )
    return decision


# --- INV-4 ----------------------------------------------------------------------------


class _LateAnswerRouter(Router):
    @override
    def late_answer(self, call_id: str, *, task: bool = False) -> None:
        super().late_answer(call_id, task=task)
        self.end_call(call_id, Ending("ok", "late"))


class _LateTaskResultRouter(Router):
    @override
    def late_task_status(self, call_id: str) -> None:
        super().late_task_status(call_id)
        self.end_call(call_id, Ending("ok", "late"))


# --- INV-7: tasks ---------------------------------------------------------------------


class _NotifyTaskRouter(Router):
    """A task the host gives up is cancelled as a request: notifications/cancelled."""

    @override
    async def give_up_task(
        self, call: PendingCall, connection: Connection, task: TaskHandle
    ) -> None:
        assert call.server is not None
        self.recorder.sent(call.server, "notifications/cancelled", call.call_id)


# --- INV-13 --------------------------------------------------------------------------


class _ResendAtOnceRouter(Router):
    """A call the server rejected unrun is sent again at once, on the listing it had."""

    @override
    async def retry_refresh(self, runtime: ServerRuntime) -> None:
        return None


class _NoRetryRouter(Router):
    """A call the server rejected unrun ends at once, with no refresh and no retry."""

    @override
    def retries_after_rejection(self) -> int:
        return 0


# --- LIVE-1: an idle timeout that progress re-arms (SPEC §8.11) -------------------------


class _ProgressDoesNotRearm(CallTable):
    """Progress reaches the host but leaves the idle deadline where it was."""

    @override
    def rearm(self, call: PendingCall, idle: float) -> None:
        return None


class _NoCap(CallTable):
    """The idle timeout is re-armed without any cap: a call may run forever."""

    @override
    def attach(self, call: PendingCall, server: str, timeout: float, cap: float = math.inf) -> None:
        super().attach(call, server, timeout, math.inf)


# --- INV-5 and INV-6: naming against a registry that hides some sources ------------------


def _named_against(
    keep: Callable[[str, str], bool],
) -> BuildBindings:
    """``build_bindings`` naming a listing of a server only against the sources ``keep``
    accepts (``keep(own source, other source)``)."""

    def named(
        server: str,
        config: ServerConfig,
        tools: Sequence[Any],
        state: RegistryState,
        max_length: int,
        *,
        tasks: bool = True,
    ) -> Decision:
        own = mcp_source(server)
        catalogs = {s: c for s, c in state.catalogs.items() if keep(own, s)}
        view = RegistryState.build(state.generation, catalogs, state.remembered)
        return build_bindings(server, config, tools, view, max_length, tasks=tasks)

    return named


class _ShadowingRegistry(ToolRegistry):
    """An MCP tool may take a builtin's or an extension tool's name, which it loses."""

    @override
    def check_collisions(self, state: RegistryState, source: str, new: tuple[Binding, ...]) -> None:
        if not is_mcp_source(source):
            super().check_collisions(state, source, new)

    @override
    def merged(
        self, state: RegistryState, source: str, catalog: SourceCatalog
    ) -> Mapping[str, SourceCatalog]:
        names = {b.name for b in catalog.bindings}
        shadowed = {
            s: attrs.evolve(c, bindings=tuple(b for b in c.bindings if b.name not in names))
            for s, c in state.catalogs.items()
            if not is_mcp_source(s)
        }
        return {**super().merged(state, source, catalog), **shadowed}


class _NewcomerWinsRegistry(ToolRegistry):
    """A newcomer takes a name another server's tool holds; that incumbent is renamed."""

    @override
    def check_collisions(self, state: RegistryState, source: str, new: tuple[Binding, ...]) -> None:
        held = {b.name for b in state.by_name.values() if is_mcp_source(b.source)}
        super().check_collisions(state, source, tuple(b for b in new if b.name not in held))

    @override
    def merged(
        self, state: RegistryState, source: str, catalog: SourceCatalog
    ) -> Mapping[str, SourceCatalog]:
        wanted = {b.name for b in catalog.bindings}
        catalogs = dict(super().merged(state, source, catalog))
        for other, other_catalog in state.catalogs.items():
            if other == source or not is_mcp_source(other):
                continue
            renamed = tuple(
                attrs.evolve(b, name=hashed_name(b.server or "", b.remote_name, 64))
                if b.name in wanted
                else b
                for b in other_catalog.bindings
            )
            catalogs[other] = attrs.evolve(other_catalog, bindings=renamed)
        return catalogs


# --- INV-7, INV-8 -----------------------------------------------------------------------


class _CancelOnlyMarks(CallTable):
    @override
    def cancel(self, call_id: str) -> None:
        call = self.get(call_id)
        if call is not None:
            call.mark_ended("cancelled")  # marked, but the request keeps running


class _KeepCallsOnDisconnect(CallTable):
    @override
    def fail_server(self, server: str) -> None:
        return None


# --- INV-12 ---------------------------------------------------------------------------


class _TearDownSessions(ServerRuntime):
    @override
    def end_session(self, session: Session) -> None:
        self.stop()  # the session is cancelled, not closed: what it was handed is lost


class _ForgetPendingAtClose(CallTable):
    @override
    def close_all(self) -> None:
        return None  # the pending calls are left to wait


# --- INV-9 ----------------------------------------------------------------------------


class _NoLane(Lanes):
    @override
    def get(self, step: int) -> Lane:
        return Lane()  # a lane of its own for every call


# --- LIVE-2 ---------------------------------------------------------------------------


class _DeafWhileRefreshing(ServerRuntime):
    @override
    def on_list_changed(self) -> None:
        if self.connected and not self.refreshing:
            self.request_refresh()


class _ResendInTheForgottenSession(Router):
    """A call refused for a forgotten session is sent again in it, with no new session."""

    @override
    def renew_session(
        self, runtime: ServerRuntime, connection: Connection, call: PendingCall
    ) -> RefreshRun:
        done = RefreshRun()
        done.done.set()
        return done


class _KeepCallsInAForgottenSession(CallTable):
    """When the server forgets the session, the other calls in it stay in flight."""

    @override
    def fail_in_flight(self, server: str, *, spare: PendingCall) -> None:
        return None


class _NoRefreshAfterRelisten(ServerRuntime):
    """The host listens again after an ended stream, but reads nothing again."""

    @override
    def after_relisten(self) -> None:
        return None  # a change made while no stream was open stays unseen


# --- INV-10 ---------------------------------------------------------------------------


class _AllowWithoutAsking(ApprovalGate):
    @override
    def decide(
        self,
        *,
        call_id: str,
        server: str,
        tool: str,
        name: str,
        arguments: Mapping[str, Any],
        annotations: Mapping[str, Any] | None,
        config: ServerConfig,
    ) -> ApprovalRequest | str | None:
        return None  # every call goes ahead as if approved


# --- INV-11 ---------------------------------------------------------------------------


class _SendOnceConnected(ServerRuntime):
    @override
    async def wait_started(self, order: int) -> None:
        if self.connection is None:  # waits only until connected, not for the first refresh
            await super().wait_started(order)


class _FailFastWhenDormant(ServerRuntime):
    @override
    async def wait_started(self, order: int) -> None:
        return None  # neither wakes the server nor waits: the call finds no connection


# --- INV-15, INV-16: reconfiguration (SPEC §11.17) ---------------------------------------


class _TwoGenerationRegistry(ToolRegistry):
    """A reconfiguration's removals are published one after the other."""

    @override
    def replace_sources(self, changes: Mapping[str, Iterable[Binding]]) -> RegistryState | None:
        published = None
        for source, bindings in changes.items():
            published = self.replace_source(source, bindings) or published
        return published


def _restarting_unchanged(
    old: Mapping[str, ServerConfig], new: Mapping[str, ServerConfig]
) -> ReconfigurePlan:
    """Every server that stays is treated as changed: its session is replaced."""
    plan = plan_reconfiguration(old, new)
    return attrs.evolve(plan, changed=(*plan.changed, *plan.unchanged), unchanged=())


class _DropCancellationsOnRemoval(CallTable):
    """The calls of a removed server are marked ended but not cancelled, and its session
    closes at once: the requests in flight are never cancelled at the server."""

    @override
    def end_bound(
        self, server: str, how: Literal["removed", "replaced"]
    ) -> tuple[PendingCall, ...]:
        if how != "removed":
            return super().end_bound(server, how)
        for call in self.bound(server):
            call.mark_ended(how)
        return ()


def _with(**parts: Any) -> Seams:
    return attrs.evolve(PRODUCTION, **parts)


IMPL_MUTANTS: tuple[ImplMutant, ...] = (
    ImplMutant(
        "bump_generation_when_unchanged",
        "INV-1",
        "the registry advances its generation on an unchanged refresh",
        _with(registry=_BumpWhenUnchanged),
    ),
    ImplMutant(
        "steps_read_the_live_registry",
        "INV-2",
        "a step snapshot reads the live registry instead of holding its state",
        _with(planner=_LivePlanner),
    ),
    ImplMutant(
        "route_deferred_tools",
        "INV-2",
        "a deferring step routes the MCP tools it does not show (SPEC §11.9: unsupported)",
        _with(planner=_RouteDeferredTools),
        variant=LockstepVariant(deferral=True),
    ),
    ImplMutant(
        "install_the_first_page_only",
        "INV-3",
        "a refresh installs the first tools/list page as the whole catalog",
        _with(read_listing=_first_page_only),
    ),
    ImplMutant(
        "drop_invalid_tools",
        "INV-3",
        "a listing with an invalid tool is installed without it",
        _with(build_bindings=_without_invalid_tools),
    ),
    ImplMutant(
        "install_tools_that_need_tasks",
        "INV-3",
        'a tool with execution.taskSupport "required" is installed instead of left out',
        _with(build_bindings=_installing_task_tools),
    ),
    ImplMutant(
        "reject_a_listing_for_a_tool_to_leave_out",
        "INV-3",
        "a listing with a tool the host must leave out is rejected whole",
        _with(build_bindings=_rejecting_task_tools),
    ),
    ImplMutant(
        "late_answer_becomes_a_result",
        "INV-4",
        "an answer after cancel/timeout is delivered as a second result",
        _with(router=_LateAnswerRouter),
    ),
    ImplMutant(
        "shadow_builtins",
        "INV-5",
        "naming and the registry let an MCP tool take a builtin or extension tool's name",
        _with(
            build_bindings=_named_against(lambda own, other: is_mcp_source(other)),
            registry=_ShadowingRegistry,
        ),
    ),
    ImplMutant(
        "rename_incumbent_on_collision",
        "INV-6",
        "a newcomer takes a colliding name and the other server's incumbent is renamed",
        _with(
            build_bindings=_named_against(
                lambda own, other: other == own or not is_mcp_source(other)
            ),
            registry=_NewcomerWinsRegistry,
        ),
    ),
    ImplMutant(
        "cancel_leaves_the_request_running",
        "INV-7",
        "host.cancel marks the call but never cancels the request at the server",
        _with(calls=_CancelOnlyMarks),
    ),
    ImplMutant(
        "keep_calls_after_disconnect",
        "INV-8",
        "a disconnect does not fail the server's queued and in-flight calls",
        _with(calls=_KeepCallsOnDisconnect),
    ),
    ImplMutant(
        "no_exclusive_lane",
        "INV-9",
        "exclusive calls of a step are sent together",
        _with(lanes=_NoLane),
    ),
    ImplMutant(
        "drop_notifications_during_a_refresh",
        "LIVE-2",
        "a list_changed that arrives while a refresh runs is ignored",
        _with(runtime=_DeafWhileRefreshing),
    ),
    ImplMutant(
        "no_refresh_after_relisten",
        "LIVE-3",
        "after an ended list_changed stream the host listens again but does not refresh",
        _with(runtime=_NoRefreshAfterRelisten),
        variant=LockstepVariant(streams=True),
    ),
    ImplMutant(
        "resend_in_the_forgotten_session",
        "INV-14",
        "a call refused unrun for a forgotten session is sent again at once, in it",
        _with(router=_ResendInTheForgottenSession),
        variant=LockstepVariant(streams=True),
    ),
    ImplMutant(
        "keep_calls_in_a_forgotten_session",
        "INV-14",
        "when the server forgets the session, its other calls in flight are kept",
        _with(calls=_KeepCallsInAForgottenSession),
        variant=LockstepVariant(streams=True),
    ),
    ImplMutant(
        "allow_without_asking",
        "INV-10",
        "the approval gate lets every call through without asking the approver",
        _with(approvals=_AllowWithoutAsking),
        variant=LockstepVariant(approval=True),
    ),
    ImplMutant(
        "tear_down_sessions_at_close",
        "INV-12",
        "closing the host cancels each session instead of closing it, losing owed cancellations",
        _with(runtime=_TearDownSessions),
    ),
    ImplMutant(
        "leave_pending_calls_at_close",
        "INV-12",
        "closing the host does not end the pending calls",
        _with(calls=_ForgetPendingAtClose),
    ),
    ImplMutant(
        "resend_without_a_refresh",
        "INV-13",
        "a call the server rejected unrun (-32020) is sent again at once, with no refresh",
        _with(router=_ResendAtOnceRouter),
    ),
    ImplMutant(
        "give_up_at_the_first_rejection",
        "INV-13",
        "a call the server rejected unrun (-32020) ends failed, with no refresh and no retry",
        _with(router=_NoRetryRouter),
    ),
    ImplMutant(
        "progress_does_not_rearm_the_idle_timeout",
        "LIVE-1",
        "with an idle timeout, progress leaves the call's deadline where it was",
        _with(calls=_ProgressDoesNotRearm),
        variant=LockstepVariant(progress=True),
    ),
    ImplMutant(
        "idle_timeout_without_a_cap",
        "LIVE-1",
        "with an idle timeout, progress re-arms the deadline with no cap on the call's time",
        _with(calls=_NoCap),
        variant=LockstepVariant(progress=True),
    ),
    ImplMutant(
        "cancel_a_task_with_notifications_cancelled",
        "INV-7",
        "a call that runs as a task is cancelled with notifications/cancelled, not tasks/cancel",
        _with(router=_NotifyTaskRouter),
        variant=LockstepVariant(tasks=True),
    ),
    ImplMutant(
        "result_from_a_late_task_status",
        "INV-4",
        "the end of a task the host had given up becomes a second result",
        _with(router=_LateTaskResultRouter),
        variant=LockstepVariant(tasks=True),
    ),
    ImplMutant(
        "send_once_connected",
        "INV-11",
        "a call to a lazily started server is sent once connected, before its first refresh ended",
        _with(runtime=_SendOnceConnected),
        variant=LockstepVariant(lazy=True),
    ),
    ImplMutant(
        "fail_fast_when_dormant",
        "INV-11",
        "a call to a dormant server fails NOT_CONNECTED instead of waking it and waiting",
        _with(runtime=_FailFastWhenDormant),
        variant=LockstepVariant(lazy=True),
    ),
    ImplMutant(
        "reconfigure_in_two_generations",
        "INV-15",
        "a reconfiguration that removes two servers publishes each removal on its own",
        _with(registry=_TwoGenerationRegistry),
        variant=LockstepVariant(reconfigure=True),
    ),
    ImplMutant(
        "restart_unchanged_server",
        "INV-16",
        "a reconfiguration replaces the session of every server it keeps, changed or not",
        _with(reconfigure=_restarting_unchanged),
        variant=LockstepVariant(reconfigure=True),
    ),
    ImplMutant(
        "drop_cancellation_on_removal",
        "INV-16",
        "a removed server's calls in flight end but their cancellation never reaches it",
        _with(calls=_DropCancellationsOnRemoval),
        variant=LockstepVariant(reconfigure=True),
    ),
)

RECONFIGURE_MUTANTS: tuple[ImplMutant, ...] = tuple(
    m for m in IMPL_MUTANTS if m.variant.reconfigure
)
"""The runtime mutants of a reconfiguration (SPEC §11.17): the lockstep machine's
``reconfigure`` variant kills each, and so does its real-server scenario in
``tests/test_reconfigure.py``."""


# --- resources (SPEC §11.20) --------------------------------------------------------


class _LiveResourcesRouter(Router):
    @override
    def resources_seen(self, step: StepSnapshot) -> RegistryState:
        return self.registry.state  # the resource tools answer from the live registry


class _ResourcesApartRegistry(ToolRegistry):
    @override
    def replace_source(
        self, source: str, bindings: Iterable[Binding], resources: Resources = NO_RESOURCES
    ) -> RegistryState | None:
        new = tuple(bindings)
        if self.state.catalog(source).resources == resources:
            return super().replace_source(source, new, resources)
        first = super().replace_source(source, new)  # the tools alone, then the resources
        return super().replace_source(source, new, resources) or first


RESOURCE_MUTANTS: tuple[ImplMutant, ...] = (
    ImplMutant(
        "resources_from_the_live_registry",
        "INV-2",
        "the resource tools list and read by the live registry, not the step's",
        _with(router=_LiveResourcesRouter),
    ),
    ImplMutant(
        "publish_resources_apart",
        "INV-1",
        "a refresh that changes a server's resources publishes its tools, then its resources",
        _with(registry=_ResourcesApartRegistry),
    ),
)
"""The runtime mutants of SPEC §11.20: the scripted servers of the lockstep machine list
no resources, so ``tests/test_resources.py`` kills each over a real server."""


def impl_mutant(name: str) -> ImplMutant:
    for candidate in IMPL_MUTANTS:
        if candidate.name == name:
            return candidate
    known = ", ".join(m.name for m in IMPL_MUTANTS)
    raise KeyError(f"unknown implementation mutant {name!r}; known: {known}")
