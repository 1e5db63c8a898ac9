"""The transition rules of the abstract model: ``enabled(state)`` and ``step(state, event)``.

Theory of operation
-------------------
A state holds the servers (connected or not, the catalog version each would list, the
refresh in flight), the registry (one immutable value per published generation), the
step snapshots sampled so far and the calls accepted so far. Nothing here performs I/O;
what the host would send or report is returned as outputs of the transition.

* Refresh (SPEC §5). ``refresh_requested``, ``list_changed`` and ``reconnect`` start a
  refresh when none runs, or queue one behind it (at most one in flight, one queued:
  LIVE-2). A refresh reads the listing of the version the server had when it started,
  page by page (``list_page``); the final page (``list_done``) validates the whole
  listing, filters it, names it and replaces the source in one publication (INV-1,
  INV-3, INV-5, INV-6), or reports ``unchanged``/``rejected`` and publishes nothing.
  ``list_failed`` and ``disconnect`` end it ``rejected`` with the registry untouched.
* Listening (SPEC §5.7). A server with ``streams`` may end the stream its
  ``list_changed`` arrive on (``stream_ended``); until the host's ``relisten`` is
  acknowledged a change is heard by nobody: the version moves, nothing is owed, and the
  server is ``unread``. ``relisten`` does what a heard notification does (owed, a refresh
  started or queued), so the refresh reads what was missed; any refresh that starts
  clears ``unread``, and a disconnect ends the stream with the session (LIVE-3).
* Steps (SPEC §7). ``sample`` captures the current registry value; the step's plan and
  router are both read from it, so later publications never reach it (INV-2).
* Calls (SPEC §8). ``call`` resolves the name in the step's snapshot, then checks the
  arguments, the binding policy and the connection, then either sends ``tools/call``
  (with the raw name) or queues behind the step's exclusive lane (INV-9). Every
  accepted call ends in exactly one result (INV-4) by ``call_responded``,
  ``call_failed``, ``cancel``, ``timeout`` or ``disconnect``; ending an in-flight call
  early sends exactly one cancellation (INV-7) and makes any later answer "late":
  dropped and counted. ``disconnect`` fails every call of that server at once (INV-8).
  ``call_rejected`` (the server refused the call unrun, -32020) puts it in phase
  ``retrying``: a refresh of its server starts (or is queued behind the one in flight),
  and when that refresh ends the call is sent once more, keeping its lane; a second
  rejection ends it ``failed`` (INV-13). ``session_expired`` (a server with ``sessions``
  no longer knows the session: HTTP 404) replaces the session in one transition: the
  server's other calls in flight fail as on a disconnect, its refresh in flight ends
  ``rejected``, a refresh starts at once, and the refused call waits for it as a
  rejected one does; a call is sent again at most once whatever refused it (INV-14).
* Tasks (SPEC §8.12). A server with ``tasks`` may answer an in-flight call with a task
  (``task_created``): the call stays pending in phase ``task``, keeps its lane and its
  deadline, and ends when a poll finds the task terminal (``task_status``: completed,
  failed or cancelled by the server), or as a sent call ends (cancel, timeout, a failed
  poll, disconnect, close). Ended early, a task gets ``tasks/cancel`` as its one
  cancellation signal, never ``notifications/cancelled`` (INV-7); a status that comes
  after the call ended is late: dropped and counted (INV-4).
* Lazy start (SPEC §3.5, §11.12). A server of ``bound.lazy`` installs its cached
  (version-0) listing at the start, by one publication, and stays ``dormant``: not
  connected, nothing sent. A call routed to it, or ``refresh_requested``, wakes it:
  connected, ``starting``, its first refresh sent. Calls to a dormant or starting server
  wait in phase ``starting`` (INV-11); the end of the first refresh settles the start and
  dispatches them in order under the usual checks, a ``disconnect`` before that fails
  them ``NOT_CONNECTED``; each may still be cancelled or time out, with nothing sent.
* Reconfiguration (SPEC §3.7). A bound scripts at most one ``reconfigure``: servers
  ``added`` (absent until then: no event of any kind), ``removed`` (absent afterwards) and
  ``changed`` (replaced by a new session of a server listing ``replacement``). In one
  transition the removed and changed servers' refreshes end ``rejected``, their pending
  calls ``cancelled`` (sent ones with their cancellation, before the session closes),
  the removed catalogs are emptied by ONE publication (one generation, INV-1), a changed
  server keeps its old catalog until its replacement's first refresh ends (``replacing``;
  installed: replaced; rejected or disconnected: removed by one publication), and the
  unchanged servers are untouched (INV-15, INV-16). A call to a removed server ends
  ``unavailable`` with nothing sent, under both policies.

Guards live in :meth:`Rules.enabled`; effects in the ``_on_*`` methods, which
:attr:`Rules.handlers` maps the event types to. Each effect is split into small hooks so
that :mod:`mcpbind.model.mutants` can break exactly one rule.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Mapping

import attrs

from . import texts
from .naming import (
    BUILTIN,
    NameCollision,
    NamePartition,
    ext_source,
    name_listing,
    partition_names,
    resource_name,
    source_owner,
)
from .values import (
    UNKNOWN_TOOL,
    Approve,
    Binding,
    Bound,
    Call,
    CallFailed,
    CallPhase,
    CallProgress,
    CallRecord,
    CallRejected,
    CallResponded,
    Cancel,
    Close,
    Deny,
    Disconnect,
    Environment,
    Event,
    EventKind,
    Exclusion,
    LateDropped,
    ListChanged,
    ListDone,
    ListFailed,
    Listing,
    ListPage,
    Output,
    Published,
    Reconfigure,
    Reconnect,
    RefreshOutcome,
    RefreshRequested,
    RefreshState,
    Refused,
    Registry,
    Relisten,
    Result,
    Sample,
    Sent,
    ServerSpec,
    ServerState,
    SessionExpired,
    SourceCatalog,
    Start,
    State,
    StreamEnded,
    TaskCreated,
    TaskStatus,
    Timeout,
    ToolDef,
    Transition,
    evolve,
)

__all__ = [
    "GUARDS",
    "EventNotEnabled",
    "Guard",
    "Rules",
    "enabled",
    "initial",
    "left_out",
    "listings",
    "step",
]


class EventNotEnabled(Exception):
    """An event was applied in a state that does not allow it (a misuse of the model)."""

    def __init__(self, event: Event, state: State, why: str) -> None:
        super().__init__(texts.EVENT_NOT_ENABLED.format(event=event, state=state, why=why))
        self.event = event
        self.state = state
        self.why = why


def exclusion(server: str, tool: ToolDef) -> Exclusion:
    """Why ``tool`` of ``server`` is left out of its catalog, with its stable text."""
    assert tool.excluded is not None
    reason = texts.excluded_text(tool.excluded, server=server, tool=tool.name, problem=tool.problem)
    return Exclusion(tool.name, tool.excluded, reason)


def left_out(spec: ServerSpec, tool: ToolDef) -> bool:
    """SPEC §5.4: the host leaves out a valid tool it cannot call: one that must run as a
    task, when its server runs none; one whose x-mcp-header is invalid (on HTTP)."""
    return tool.excluded is not None and not (tool.excluded == "task_required" and spec.tasks)


def listings(state: State, i: int) -> tuple[Listing, ...]:
    """The listings server ``i`` answers with, version by version: a ``changed`` server's
    :attr:`~.values.ServerSpec.replacement` once the reconfiguration happened (SPEC §3.7)."""
    spec = state.bound.servers[i]
    if state.reconfigured and spec.change == "changed":
        return spec.replacement
    return spec.versions


_seconds = functools.cache(texts.seconds)
""":func:`texts.seconds`, each duration said once (a timeout is frequent)."""


@functools.cache  # pragma: no mutate - a pure function of immutable values: only speed
def flat_tools(listing: Listing) -> tuple[ToolDef, ...]:
    """Every tool of a listing, in listing order (pages concatenated)."""
    return tuple(tool for page in listing for tool in page)


Handler = Callable[[State, Event], Transition]
"""The effect of one event type (:attr:`Rules.handlers`)."""


def call_id_for(index: int) -> str:
    """Call ids of the model are issued in order: ``c1``, ``c2``, ..."""
    return f"c{index + 1}"


class _Tables:
    """What a rules instance keeps for one bound (SPEC §10.10): each table maps what a
    computation reads to what it gave. Every computation kept is a function of its key
    and the bound alone and reads no binding policy (a policy read must count, §10.8)."""

    def __init__(self, bound: Bound | None) -> None:
        self.bound = bound
        self.installs: dict[object, tuple[Registry | None, tuple[Output, ...]]] = {}
        """:meth:`Rules.install`: the new registry (None: unchanged) and the outputs."""
        self.closes: dict[object, tuple[typing.Any, ...]] = {}
        """:meth:`Rules._on_close`: the servers, the calls and the outputs."""
        self.disconnects: dict[object, tuple[typing.Any, ...]] = {}
        """:meth:`Rules._on_disconnect`: the server, the calls and the outputs."""
        self.ends: dict[object, tuple[tuple[CallRecord, ...], tuple[Output, ...]]] = {}
        """:meth:`Rules.end_call`: the calls and the outputs."""
        self.events: dict[CallRecord, tuple[Event, ...]] = {}
        """:meth:`Rules.enabled`: each record's events (:meth:`Rules.call_events`)."""


class Rules:
    """The standard rules. Subclasses in ``mutants.py`` override single hooks."""

    name = "standard"
    _tables = _Tables(None)

    # --- public API ------------------------------------------------------------------

    def initial(self, bound: Bound) -> Transition:
        """The builtin and extension sources installed (non-MCP sources, fixed from the
        start); each lazy server's cached listing installed, in configuration order, and
        the server dormant; every other server connected, its first refresh sent."""
        fixed = [(BUILTIN, bound.builtins)]
        fixed += [(ext_source(contributor), names) for contributor, names in bound.extensions]
        local = tuple(
            SourceCatalog(
                source=source,
                generation=0,
                bindings=tuple(
                    Binding(name, source, None, name, read_only=False, source_generation=0)
                    for name in sorted(names)
                ),
            )
            for source, names in fixed
        )
        catalogs = (*local, *(SourceCatalog(s.source, 0, ()) for s in bound.servers))
        servers = tuple(
            ABSENT
            if s.change == "added"  # SPEC §3.7: not in the configuration until reconfigure
            else ServerState(connected=True, version=0, refresh=RefreshState(version=0))
            for s in bound.servers
        )
        state = State(bound=bound, servers=servers, registry=Registry(0, catalogs))
        outputs: list[Output] = []
        for i, spec in enumerate(bound.servers):
            if not state.servers[i].present:
                continue
            if spec.name in bound.lazy:
                state = self.install_cached(state, i, outputs)
            if state.servers[i].start is None:
                outputs.append(Sent(spec.name, "tools/list"))
        return Transition(state, tuple(outputs))

    def install_cached(self, state: State, i: int, outputs: list[Output]) -> State:
        """SPEC §11.12: the cached listing installs as a refresh would (one publication,
        INV-1/3/5/6) and the server stays dormant; should it no longer install (a name
        now reserved), the server starts eagerly and nothing is reported."""
        spec = state.bound.servers[i]
        found: list[Output] = []
        installed = self.install(state, spec, self.listed_tools(spec, 0), found)
        if any(isinstance(o, RefreshOutcome) and o.status == "rejected" for o in found):
            return state
        outputs.extend(o for o in found if isinstance(o, Published))
        dormant = ServerState(connected=False, version=0, refresh=None, start="dormant")
        return _with_server(installed, i, dormant)

    def enabled(self, state: State) -> list[Event]:
        """Every event the state allows, in a fixed order (SPEC §3, guards)."""
        bound = state.bound
        if state.closed:
            # SPEC §3.6: nothing happens after close but a host trying to call (refused).
            if not state.steps:
                return []
            return [Call(len(state.steps) - 1, call_id_for(len(state.calls)), UNKNOWN_TOOL)]
        events: list[Event] = []
        allowed = bound.environment
        for spec, server in zip(bound.servers, state.servers, strict=True):
            if not server.present:
                continue  # SPEC §3.7: an absent server has no event of any kind
            name = spec.name
            versions = _versions(state, spec)
            for_server: list[Event] = [_event(RefreshRequested, name)]
            refresh = server.refresh
            if refresh is not None and server.connected:
                pages = len(versions[refresh.version])
                if refresh.pages + 1 < pages:
                    for_server.append(_event(ListPage, name))
                else:
                    for_server.append(_event(ListDone, name))
                for_server.append(_event(ListFailed, name))
            if server.version + 1 < len(versions):
                for_server.append(_event(ListChanged, name))
            if server.start != "dormant":  # a dormant server is woken, not reconnected
                for_server.append(_event(Disconnect if server.connected else Reconnect, name))
            if server.connected:
                if not server.listening:
                    for_server.append(_event(Relisten, name))
                elif spec.streams:
                    for_server.append(_event(StreamEnded, name))
            if allowed is None:
                events.extend(for_server)
            else:
                events.extend(e for e in for_server if e.kind in allowed)
        if len(state.steps) < bound.max_steps:
            events.append(_event(Sample))
        if state.steps:
            if len(state.calls) < bound.max_calls:
                # A host issues a step's calls while that step is the latest one; calls
                # of earlier steps may still be running (SPEC §3.1).
                call_id = call_id_for(len(state.calls))
                index = len(state.steps) - 1
                snapshot = state.steps[index]
                assert snapshot is not None
                for name in (*_mcp_names(snapshot), UNKNOWN_TOOL):
                    events.append(_event(Call, index, call_id, name))
                    if bound.bad_arguments:
                        events.append(_event(Call, index, call_id, name, False))
            if state.calls:
                first = state.calls[0]
                events.append(_event(Call, len(state.steps) - 1, first.call_id, UNKNOWN_TOOL))
        self.calls_events(state, events)
        if not state.reconfigured and any(s.change is not None for s in bound.servers):
            events.append(_event(Reconfigure))
        events.append(_event(Close))
        return events

    def calls_events(self, state: State, events: list[Event]) -> None:
        """Every accepted call's events, in order. A record's events depend on it and the
        bound alone: listed once per record, for the bound explored last (SPEC §10.10)."""
        bound = state.bound
        table = self.tables(bound).events
        for record in state.calls:
            found = table.get(record)
            if found is None:
                found = table[record] = tuple(self.call_events(record, bound.environment, bound))
            events.extend(found)

    def tables(self, bound: Bound) -> _Tables:
        """What this instance worked out once for ``bound`` and keeps (SPEC §10.10): the
        tables of the bound used last, new ones for another bound."""
        tables = self._tables
        if tables.bound is not bound:
            tables = self._tables = _Tables(bound)
        return tables

    def call_events(
        self, record: CallRecord, allowed: frozenset[str] | None, bound: Bound
    ) -> list[Event]:
        """What may happen to one accepted call next (answers, approver, host, deadline)."""
        call_id = record.call_id
        events: list[Event] = []
        running = record.phase in {"sent", "task"}
        idle = running and self.idle_timeout(record, bound)
        if idle:
            # SPEC §8.11: progress re-arms the idle deadline; the cap cannot fire before
            # ``rearms`` idle periods have passed. The rules take the timing where each
            # notification comes just before the idle deadline: after ``rearms`` of them
            # the cap is the earlier deadline, and only it (or an answer, a cancel, a
            # disconnect) ends the call.
            if record.progressed < bound.rearms:
                if allowed is None or "progress" in allowed:
                    events.append(CallProgress(call_id))
            elif self.can_time_out(record) and (allowed is None or "timeout" in allowed):
                events.append(Timeout(call_id, cap=True))
        if record.phase == "sent":
            if allowed is None or "call_responded" in allowed:
                events.append(CallResponded(call_id))
            if allowed is None or "call_error" in allowed:
                events.append(CallResponded(call_id, is_error=True))
            if allowed is None or "call_failed" in allowed:
                events.append(CallFailed(call_id))
            if allowed is None or "call_rejected" in allowed:
                events.append(CallRejected(call_id))
            if (allowed is None or "session_expired" in allowed) and self.expires(record, bound):
                events.append(SessionExpired(call_id))
            if (allowed is None or "task_created" in allowed) and self.runs_tasks(record, bound):
                events.append(TaskCreated(call_id))
        elif record.phase == "task":
            if allowed is None or "task_status" in allowed:
                events.append(TaskStatus(call_id))
                events.append(TaskStatus(call_id, is_error=True))
                events.append(TaskStatus(call_id, "failed"))
                events.append(TaskStatus(call_id, "cancelled"))
            if allowed is None or "call_failed" in allowed:
                events.append(CallFailed(call_id))
        elif record.phase == "approval":  # pragma: no mutate - the least phase: <= is ==
            if allowed is None or "approve" in allowed:
                events.append(Approve(call_id))
            if allowed is None or "deny" in allowed:
                events.append(Deny(call_id))
        elif record.late and (allowed is None or "late_answer" in allowed):
            events.append(TaskStatus(call_id) if record.task else CallResponded(call_id))
        if allowed is None or "cancel" in allowed:
            # SPEC §3.1: a host may cancel a call that already ended: it changes nothing.
            events.append(Cancel(call_id))
        if record.phase != "done":
            capped = idle and record.progressed >= bound.rearms
            if (
                self.can_time_out(record)
                and not capped
                and (allowed is None or "timeout" in allowed)
            ):
                events.append(Timeout(call_id))
        return events

    def expires(self, record: CallRecord, bound: Bound) -> bool:
        """SPEC §8.13: the call's server keeps a session it may forget."""
        binding = record.binding
        return binding is not None and binding.server in _session_servers(bound)

    def runs_tasks(self, record: CallRecord, bound: Bound) -> bool:
        """SPEC §8.12: the call's server may answer it with a task."""
        binding = record.binding
        return binding is not None and binding.server in _task_servers(bound)

    def _on_task_created(self, state: State, event: Event) -> Transition:
        """SPEC §8.12: the call runs as a task now; it keeps its lane and its deadline."""
        assert isinstance(event, TaskCreated)
        record = state.call(event.call_id)
        assert record is not None
        return Transition(_replace_call(state, evolve(record, phase="task", task=True)))

    def _on_task_status(self, state: State, event: Event) -> Transition:
        """SPEC §8.12: a terminal task status ends the call with its one result (INV-4):
        ``completed`` as an answer would, ``failed`` and ``cancelled`` (by the server, not
        the host: nothing is owed to it) as ``failed``. After the end: late."""
        assert isinstance(event, TaskStatus)
        record = state.call(event.call_id)
        assert record is not None
        if record.phase != "task":
            return self.late_task_status(state, record)
        if event.status == "completed":
            return self.end_call(state, record, "error" if event.is_error else "ok", None)
        binding = record.binding
        assert binding is not None
        if event.status == "failed":
            text = texts.TASK_FAILED.format(
                tool=binding.remote_name, server=binding.server, why=event.why
            )
        else:
            text = texts.TASK_CANCELLED.format(server=binding.server, tool=binding.remote_name)
        return self.end_call(state, record, "failed", text)

    def late_task_status(self, state: State, record: CallRecord) -> Transition:
        """INV-4: a task status after the call's terminal result is dropped and counted."""
        return self.late_answer(state, record)

    def idle_timeout(self, record: CallRecord, bound: Bound) -> bool:
        """SPEC §8.11: the call's server has an idle timeout that progress re-arms."""
        idle = _idle_servers(bound)
        binding = record.binding
        return bool(idle) and binding is not None and binding.server in idle

    def _on_progress(self, state: State, event: Event) -> Transition:
        """SPEC §8.11: progress on a call to a server with an idle timeout re-arms its
        deadline; each counts towards the cap (LIVE-1 holds because of it)."""
        assert isinstance(event, CallProgress)
        record = state.call(event.call_id)
        assert record is not None
        return Transition(_replace_call(state, self.rearmed(record)))

    def rearmed(self, record: CallRecord) -> CallRecord:
        """LIVE-1: a re-arm counts towards the cap."""
        return evolve(record, progressed=record.progressed + 1)

    def step(self, state: State, event: Event) -> Transition:
        """Apply ``event``; raise :class:`EventNotEnabled` if the state does not allow it."""
        if _guard_key(event) not in self.enabled(state):
            raise EventNotEnabled(event, state, "not in enabled(state)")
        return self.apply(state, event)

    def apply(self, state: State, event: Event) -> Transition:
        """Apply an event known to be enabled (the explorer's fast path)."""
        return self.collected(state, self.handlers[type(event)](state, event))

    def collected(self, state: State, t: Transition) -> Transition:
        """``t``, a transition from ``state``, with the snapshots no call can use any more
        forgotten (:func:`collect_steps`). The steps kept depend on the calls and on
        ``closed`` alone: a close with no call keeps the shared empty tuple of calls, and
        its steps are collected all the same (SPEC §10.10)."""
        after = t.state
        if (
            after.calls is state.calls
            and after.steps is state.steps
            and after.closed is state.closed
        ):
            return t
        steps = collect_steps(after)
        if steps is after.steps:
            return t
        return Transition(_evolve(after, steps=steps), t.outputs)

    @functools.cached_property
    def handlers(self) -> Mapping[type[Event], Handler]:
        """The effect of each event type: this instance's method, so a mutant's override
        is the one applied. Built once per instance (``apply`` runs millions of times)."""
        return {
            RefreshRequested: self._on_refresh_requested,
            ListPage: self._on_list_page,
            ListDone: self._on_list_done,
            ListFailed: self._on_list_failed,
            ListChanged: self._on_list_changed,
            StreamEnded: self._on_stream_ended,
            Relisten: self._on_relisten,
            Sample: self._on_sample,
            Call: self._on_call,
            CallResponded: self._on_call_responded,
            CallRejected: self._on_call_rejected,
            SessionExpired: self._on_session_expired,
            CallFailed: self._on_call_failed,
            Cancel: self._on_cancel,
            Approve: self._on_approve,
            Deny: self._on_deny,
            Timeout: self._on_timeout,
            CallProgress: self._on_progress,
            TaskCreated: self._on_task_created,
            TaskStatus: self._on_task_status,
            Disconnect: self._on_disconnect,
            Reconnect: self._on_reconnect,
            Reconfigure: self._on_reconfigure,
            Close: self._on_close,
        }

    # --- refresh ---------------------------------------------------------------------

    def _on_refresh_requested(self, state: State, event: Event) -> Transition:
        assert isinstance(event, RefreshRequested)
        i = state.bound.index(event.server)
        server = state.servers[i]
        if server.start == "dormant":
            return self.wake(state, i)
        if not server.connected:
            reason = texts.REJECT_NOT_CONNECTED.format(server=event.server)
            outcome = RefreshOutcome(
                event.server, "rejected", state.registry.generation, "disconnected", reason
            )
            return Transition(state, (outcome,))
        if server.refresh is not None:
            return self.coalesce(state, i, stale=False)
        return self.start_refresh(state, i, server)

    def start_refresh(self, state: State, i: int, server: ServerState) -> Transition:
        """A refresh starts: it reads the version the server has now, so a change nobody
        heard is read by it (LIVE-3)."""
        fresh = evolve(server, refresh=RefreshState(version=server.version), unread=False)
        name = state.bound.servers[i].name
        return Transition(_with_server(state, i, fresh), (Sent(name, "tools/list"),))

    def wake(self, state: State, i: int) -> Transition:
        """SPEC §11.12: first use of a dormant server: it connects and its first refresh
        starts; the lazy start settles when that refresh ends (INV-11)."""
        server = evolve(state.servers[i], connected=True, start="starting")
        return self.start_refresh(_with_server(state, i, server), i, server)

    def coalesce(self, state: State, i: int, *, stale: bool) -> Transition:
        """A refresh runs already: queue one behind it (LIVE-2: one in flight, one queued)."""
        server = state.servers[i]
        assert server.refresh is not None
        refresh = evolve(server.refresh, queued=True, fresh=server.refresh.fresh and not stale)
        return Transition(_with_server(state, i, evolve(server, refresh=refresh)))

    def _on_list_page(self, state: State, event: Event) -> Transition:
        assert isinstance(event, ListPage)
        i = state.bound.index(event.server)
        server = state.servers[i]
        assert server.refresh is not None
        refresh = evolve(server.refresh, pages=server.refresh.pages + 1)
        state = _with_server(state, i, evolve(server, refresh=refresh))
        return Transition(state, (Sent(event.server, "tools/list", "cursor"),))

    def _on_list_done(self, state: State, event: Event) -> Transition:
        assert isinstance(event, ListDone)
        i = state.bound.index(event.server)
        spec = state.bound.servers[i]
        refresh = state.servers[i].refresh
        assert refresh is not None
        tools = flat_tools(listings(state, i)[refresh.version])
        outputs: list[Output] = []
        state = self.install(state, spec, tools, outputs)
        return self.end_refresh(state, i, outputs, completed=True)

    def listed_tools(self, spec: ServerSpec, version: int) -> tuple[ToolDef, ...]:
        """Every tool of the full listing, in listing order (pages concatenated)."""
        return tuple(tool for page in spec.versions[version] for tool in page)

    def install(
        self, state: State, spec: ServerSpec, tools: tuple[ToolDef, ...], outputs: list[Output]
    ) -> State:
        """Validate, filter, leave out, name and replace the source in one publication
        (SPEC §5.2-5.5).

        What it does is a function of the registry, the server, the listing and the name
        length alone (the hooks it calls are methods without state of their own, and the
        standard ``publish`` reads no other part of the state), so it is worked out once
        per such key and the new registry and the outputs are shared (SPEC §10.10). A
        ``publish`` overridden (a mutant) may read more: then nothing is kept."""
        if type(self).publish is not Rules.publish:
            return self.installed(state, spec, tools, outputs)
        key = (state.registry, spec, tools)
        memo = self.tables(state.bound).installs
        found = memo.get(key)
        if found is None:
            produced: list[Output] = []
            after = self.installed(state, spec, tools, produced)
            changed = after.registry is not state.registry
            found = memo[key] = (after.registry if changed else None, tuple(produced))
        registry, made = found
        outputs.extend(made)
        return state if registry is None else _evolve(state, registry=registry)

    def installed(
        self, state: State, spec: ServerSpec, tools: tuple[ToolDef, ...], outputs: list[Output]
    ) -> State:
        """:meth:`install` worked out."""
        registry = state.registry
        generation = registry.generation
        server = spec.name
        for tool in tools:
            if self.rejects(tool):
                if tool.over_cap:  # SPEC §5.2: the listing as a whole broke a cap
                    reason = texts.REJECT_CAP.format(server=server, cap=tool.problem)
                    outputs.append(RefreshOutcome(server, "rejected", generation, "cap", reason))
                    return state
                reason = texts.REJECT_INVALID.format(
                    server=server, tool=tool.name, problem=tool.problem
                )
                outputs.append(RefreshOutcome(server, "rejected", generation, "invalid", reason))
                return state
        kept = self.filter_tools(spec, tools)
        excluded = self.exclusions(spec, kept)
        if excluded:
            left_out = {e.tool for e in excluded}
            kept = tuple(t for t in kept if t.name not in left_out)
        assignment = self.assign(registry, spec, kept, state.bound.max_name_length)
        if isinstance(assignment, NameCollision):
            reason = texts.REJECT_COLLISION.format(
                tool=assignment.identity[1],
                server=server,
                name=assignment.name,
                owner=assignment.owner,
            )
            outputs.append(RefreshOutcome(server, "rejected", generation, "collision", reason))
            return state
        old = registry.catalog(spec.source)
        new_generation = old.generation + 1
        bindings = tuple(
            sorted(
                (
                    Binding(
                        assignment[(server, t.name)],
                        spec.source,
                        server,
                        t.name,
                        t.read_only,
                        new_generation,
                        t.spec,
                    )
                    for t in kept
                ),
                key=lambda b: b.name,
            )
        )
        resources = self.resources(spec, tools, new_generation)
        if self.unchanged(old, bindings) and self.same_resources(old, resources):
            outputs.append(RefreshOutcome(server, "unchanged", generation, excluded=excluded))
            return state
        catalog = SourceCatalog(spec.source, new_generation, bindings, resources)
        return self.publish(state, catalog, outputs, excluded)

    def resources(
        self, spec: ServerSpec, tools: tuple[ToolDef, ...], generation: int
    ) -> tuple[Binding, ...]:
        """SPEC §11.20: the listing's resources, part of the catalog it installs; each is
        read by the name :func:`~.naming.resource_name` gives it, sorted by URI."""
        return tuple(
            Binding(
                resource_name(spec.name, t.name),
                spec.source,
                spec.name,
                t.name,
                True,
                generation,
                t.spec,
                resource=True,
            )
            for t in sorted((t for t in tools if t.resource), key=lambda t: t.name)
        )

    def same_resources(self, old: SourceCatalog, resources: tuple[Binding, ...]) -> bool:
        """INV-1: a refresh whose resources changed is a change, as one whose tools did."""
        return [(b.remote_name, b.spec) for b in old.resources] == [
            (b.remote_name, b.spec) for b in resources
        ]

    def rejects(self, tool: ToolDef) -> bool:
        """An invalid tool rejects its whole listing (SPEC §5.3, INV-3)."""
        return not tool.valid

    def exclusions(self, spec: ServerSpec, kept: tuple[ToolDef, ...]) -> tuple[Exclusion, ...]:
        """The valid tools the host leaves out, each with its reason (SPEC §5.4, INV-3): a
        tool that must run as a task is left out only by a server that runs no tasks."""
        return tuple(exclusion(spec.name, t) for t in kept if left_out(spec, t))

    def filter_tools(self, spec: ServerSpec, tools: tuple[ToolDef, ...]) -> tuple[ToolDef, ...]:
        """``enabled_tools`` (allow-list), then ``disabled_tools`` (deny wins), then
        model visibility (SPEC §5.3)."""
        return tuple(
            t
            for t in tools
            if not t.resource
            and (spec.enabled_tools is None or t.name in spec.enabled_tools)
            and t.name not in spec.disabled_tools
            and t.visible
        )

    def assign(
        self, registry: Registry, spec: ServerSpec, kept: tuple[ToolDef, ...], max_length: int
    ) -> dict[tuple[str, str], str] | NameCollision:
        return name_listing(
            spec.name,
            (t.name for t in kept),
            self.partition(registry, spec),
            remembered=dict(registry.remembered),
            max_length=max_length,
        )

    def partition(self, registry: Registry, spec: ServerSpec) -> NamePartition:
        """The installed names as a new listing of ``spec`` sees them (SPEC §6.4-6.6)."""
        return partition_names(
            spec.name,
            ((c.source, b.name, b.remote_name) for c in registry.catalogs for b in c.bindings),
        )

    def unchanged(self, old: SourceCatalog, bindings: tuple[Binding, ...]) -> bool:
        """Equal names, remote tools and specs (generations aside): publish nothing."""
        return len(old.bindings) == len(bindings) and all(
            (a.name, a.remote_name, a.read_only, a.spec)
            == (b.name, b.remote_name, b.read_only, b.spec)
            for a, b in zip(old.bindings, bindings, strict=True)
        )

    def publish(
        self,
        state: State,
        catalog: SourceCatalog,
        outputs: list[Output],
        excluded: tuple[Exclusion, ...] = (),
    ) -> State:
        """Replace one source and advance the generation by exactly one (INV-1)."""
        registry = state.registry
        generation = registry.generation + 1
        catalogs = tuple(catalog if c.source == catalog.source else c for c in registry.catalogs)
        remembered = dict(registry.remembered)
        for b in catalog.bindings:
            assert b.server is not None
            remembered[(b.server, b.remote_name)] = b.name
        new = Registry(generation, catalogs, tuple(sorted(remembered.items())))
        server = source_owner(catalog.source)
        outputs.append(
            Published(generation, catalog.source, tuple(b.name for b in catalog.bindings))
        )
        outputs.append(RefreshOutcome(server, "installed", generation, excluded=excluded))
        return _evolve(state, registry=new)

    def end_refresh(
        self, state: State, i: int, outputs: list[Output], *, completed: bool
    ) -> Transition:
        """The refresh is over: answer notifications it covers, start the queued one."""
        server = state.servers[i]
        refresh = server.refresh
        assert refresh is not None
        owed = server.owed and not (completed and refresh.fresh)
        if server.replacing:
            state = self.replaced(state, i, outputs)
        if refresh.queued:
            # The queued refresh starts: it reads the current version (LIVE-3).
            refreshing = RefreshState(server.version)
            updated = ServerState(True, server.version, refreshing, owed, None, server.listening)
            outputs.append(Sent(state.bound.servers[i].name, "tools/list"))
        else:
            updated = evolve(server, refresh=None, owed=owed, start=None, replacing=False)
        state = _with_server(state, i, updated)
        if server.start == "starting":
            state = self.settle_start(state, state.bound.servers[i].name, outputs)
        if any(c.phase == "retrying" for c in state.calls):
            state = self.resume_retries(state, state.bound.servers[i].name, outputs)
        return Transition(state, tuple(outputs))

    def resume_retries(self, state: State, server: str, outputs: list[Output]) -> State:
        """INV-13: a refresh of ``server`` ended. A call rejected unrun while it was not yet
        running is sent again now (under the checks of SPEC §8.2 that still apply: the
        binding policy); one that waited behind an older refresh now waits for this
        server's next one, which has just started."""
        for record in state.calls:
            binding = record.binding
            if record.phase != "retrying" or binding is None or binding.server != server:
                continue
            if record.behind:
                state = _replace_call(state, evolve(record, behind=False))
                continue
            t = self.resend(state, record)
            state = t.state
            outputs.extend(t.outputs)
        return state

    def resend(self, state: State, record: CallRecord) -> Transition:
        """The one retry of a rejected call (SPEC §8.9): it still holds its lane."""
        binding = record.binding
        assert binding is not None
        assert binding.server is not None
        if state.bound.policy == "revalidate" and not self.still_listed(state, binding):
            return self.end_call(state, record, "unavailable", _unavailable(record, binding))
        state = _replace_call(state, evolve(record, phase="sent", expired=False))
        return Transition(state, (Sent(binding.server, binding.method, binding.remote_name),))

    def settle_start(self, state: State, server: str, outputs: list[Output]) -> State:
        """INV-11: the first refresh of a lazy start ended (installed, unchanged or
        rejected): the calls that waited go on in acceptance order, each under the checks
        of SPEC §8.2 against the state now (the live catalog, the lane)."""
        for record in state.calls:
            binding = record.binding
            if record.phase == "starting" and binding is not None and binding.server == server:
                t = self.dispatch(state, record)  # only this record and the lane change
                state = t.state
                outputs.extend(t.outputs)
        return state

    def _on_list_failed(self, state: State, event: Event) -> Transition:
        assert isinstance(event, ListFailed)
        i = state.bound.index(event.server)
        reason = texts.REJECT_LIST_FAILED.format(server=event.server, why=event.why)
        outcome = RefreshOutcome(
            event.server, "rejected", state.registry.generation, "list_failed", reason
        )
        return self.end_refresh(state, i, [outcome], completed=True)

    def _on_list_changed(self, state: State, event: Event) -> Transition:
        assert isinstance(event, ListChanged)
        i = state.bound.index(event.server)
        server = state.servers[i]
        changed = evolve(server, version=server.version + 1)
        if not server.connected:
            # Nobody hears the notification; the reconnect refresh reads the new version.
            return Transition(_with_server(state, i, changed))
        if not server.listening:
            # SPEC §5.7: the stream is down, nobody hears it; no refresh has read it (LIVE-3).
            return Transition(_with_server(state, i, evolve(changed, unread=True)))
        state = _with_server(state, i, evolve(changed, owed=True))
        return self.notified(state, i)

    def _on_stream_ended(self, state: State, event: Event) -> Transition:
        """SPEC §5.7: the server ended its ``list_changed`` stream; the host hears nothing
        until it listens again."""
        assert isinstance(event, StreamEnded)
        i = state.bound.index(event.server)
        return Transition(_with_server(state, i, evolve(state.servers[i], listening=False)))

    def _on_relisten(self, state: State, event: Event) -> Transition:
        """SPEC §5.7 (LIVE-3): the host listens again; what it may have missed meanwhile is
        read by a refresh, exactly as for a heard notification (LIVE-2's coalescing)."""
        assert isinstance(event, Relisten)
        i = state.bound.index(event.server)
        state = _with_server(state, i, evolve(state.servers[i], listening=True))
        return self.relistened(state, i)

    def relistened(self, state: State, i: int) -> Transition:
        """LIVE-3: listening again is heard as a notification: owed, and a refresh."""
        state = _with_server(state, i, evolve(state.servers[i], owed=True))
        return self.notified(state, i)

    def notified(self, state: State, i: int) -> Transition:
        """LIVE-2: a notification starts a refresh, or queues one behind the running one."""
        server = state.servers[i]
        if server.refresh is not None:
            return self.coalesce(state, i, stale=True)
        return self.start_refresh(state, i, server)

    # --- reconfiguration (SPEC §3.7) ---------------------------------------------------

    def _on_reconfigure(self, state: State, event: Event) -> Transition:
        """INV-15, INV-16: the host applies its new configuration in one transition. For
        each removed or changed server, in configuration order: its refresh in flight ends
        ``rejected`` (``reconfigured``), every call pending on it ends ``cancelled`` (a sent
        one with its one cancellation), and its session closes after them. Removed servers
        become absent; a changed server starts a new session whose first refresh is in
        flight, its old catalog still installed (``replacing``); an added server connects
        and lists. Unchanged servers are untouched. Then ONE publication empties the
        removed servers' non-empty catalogs, every one at the same generation (INV-1), and
        the lanes the ended calls held move on."""
        assert isinstance(event, Reconfigure)
        bound = state.bound
        generation = state.registry.generation
        outputs: list[Output] = []
        calls = state.calls
        steps: set[int] = set()
        for spec, server in zip(bound.servers, state.servers, strict=True):
            if not self.ends_session(spec):
                continue
            how = "removed" if spec.change == "removed" else "replaced"
            if server.refresh is not None:
                reason = texts.REJECT_RECONFIGURED.format(how=how, server=spec.name)
                outputs.append(
                    RefreshOutcome(spec.name, "rejected", generation, "reconfigured", reason)
                )
            calls = self.end_server_calls(calls, spec.name, how, outputs, steps)
            if server.connected:
                outputs.append(Sent(spec.name, "close"))
        servers: list[ServerState] = []
        for spec, server in zip(bound.servers, state.servers, strict=True):
            if spec.change == "removed":
                servers.append(ABSENT)
            elif spec.change == "added" or self.ends_session(spec):
                # A new session: connected, listening, its first refresh in flight; a
                # replacement keeps the old catalog and calls wait for it (INV-11).
                replacing = spec.change != "added"
                start: Start | None = "starting" if replacing else None
                servers.append(
                    ServerState(True, 0, RefreshState(0), start=start, replacing=replacing)
                )
                outputs.append(Sent(spec.name, "tools/list"))
            else:
                servers.append(server)
        state = State(bound, tuple(servers), state.registry, state.steps, calls, state.closed, True)
        emptied = tuple(s.source for s in bound.servers if self.emptied_at_reconfiguration(s))
        state = self.remove_catalogs(state, emptied, outputs)
        for index in sorted(steps):
            state = self.hand_off(state, index, outputs)
        return Transition(state, tuple(outputs))

    def ends_session(self, spec: ServerSpec) -> bool:
        """INV-16: a reconfiguration ends the session of a removed or changed server only."""
        return spec.change in ("removed", "changed")

    def emptied_at_reconfiguration(self, spec: ServerSpec) -> bool:
        """INV-15: the reconfiguration empties the removed servers' catalogs; a changed
        server's stays until its replacement's first refresh ends."""
        return spec.change == "removed"

    def end_server_calls(
        self,
        calls: tuple[CallRecord, ...],
        server: str,
        how: str,
        outputs: list[Output],
        steps: set[int],
    ) -> tuple[CallRecord, ...]:
        """INV-16: every call pending on ``server`` ends ``cancelled`` once, whatever it
        waits for (approval included); a sent one owes its one cancellation (INV-7). A call
        that ended but might still get a late answer is retired: the session is gone."""
        kept: list[CallRecord] = []
        for record in calls:
            binding = record.binding
            if binding is None or binding.server != server:
                kept.append(record)
                continue
            if record.phase == "done":
                kept.append(retire(record, late=False) if record.late else record)
                continue
            sent = record.phase in ("sent", "task")
            if sent:
                template = texts.RECONFIGURED_SENT
            elif record.phase == "retrying":
                template = texts.RECONFIGURED_RETRYING
            else:
                template = texts.RECONFIGURED_UNSENT
            outputs.append(
                Result(record.call_id, "cancelled", template.format(how=how, server=server))
            )
            if sent:
                outputs.extend(self.reconfigure_cancellations(server, record))
            kept.append(retire(record, results=record.results + 1))
            steps.add(record.step)
        return tuple(kept)

    def reconfigure_cancellations(self, server: str, record: CallRecord) -> tuple[Output, ...]:
        """INV-16 (INV-7): a call in flight on a session the reconfiguration ends owes its
        server one cancellation, before the session closes."""
        return self.cancel_messages(server, record)

    def remove_catalogs(
        self, state: State, sources: tuple[str, ...], outputs: list[Output]
    ) -> State:
        """INV-1, INV-15: empty every non-empty catalog of ``sources`` in ONE new registry
        state: one generation, one ``Published(G+1, source, ())`` per source emptied (in
        ``sources``' order). Nothing to empty: G does not move."""
        registry = state.registry
        emptied = {
            c.source
            for c in registry.catalogs
            if c.source in sources and c.bindings  # an empty catalog stays as it is
        }
        if not emptied:
            return state
        generation = registry.generation + 1
        catalogs = tuple(
            SourceCatalog(c.source, c.generation + 1, ()) if c.source in emptied else c
            for c in registry.catalogs
        )
        outputs.extend(Published(generation, s, ()) for s in sources if s in emptied)
        return _evolve(state, registry=Registry(generation, catalogs, registry.remembered))

    def replaced(self, state: State, i: int, outputs: list[Output]) -> State:
        """INV-15: the first refresh of a replacement ended. Installed (or unchanged), its
        catalog took the old one's place by that refresh's publication. Rejected, or the
        connection lost: the old server's catalog is removed in one publication, and the
        refresh's outcome, reported after it, carries the new generation and says the old
        catalog was removed (not that it stays)."""
        spec = state.bound.servers[i]
        k = max(
            n
            for n, o in enumerate(outputs)
            if isinstance(o, RefreshOutcome) and o.server == spec.name
        )
        outcome = outputs[k]
        assert isinstance(outcome, RefreshOutcome)
        if outcome.status != "rejected":
            return state
        del outputs[k]
        state = self.remove_catalogs(state, (spec.source,), outputs)
        reason = None if outcome.reason is None else texts.replacement_rejected(outcome.reason)
        outputs.append(evolve(outcome, generation=state.registry.generation, reason=reason))
        return state

    def _on_reconnect(self, state: State, event: Event) -> Transition:
        assert isinstance(event, Reconnect)
        i = state.bound.index(event.server)
        server = evolve(state.servers[i], connected=True)
        return self.start_refresh(_with_server(state, i, server), i, server)

    # --- close (SPEC §3.6) ------------------------------------------------------------

    def _on_close(self, state: State, event: Event) -> Transition:
        """INV-12: the host shuts down. Refreshes in flight end ``rejected`` and nothing is
        published; every pending call ends ``cancelled`` (a sent one with its one
        cancellation); then each connected server's session is closed, after every
        cancellation owed to it. Afterwards no server is connected and no call accepted."""
        assert isinstance(event, Close)
        bound = state.bound
        generation = state.registry.generation
        # What close does is a function of the bound, the servers, the calls and the
        # generation (the hooks it calls are methods without state of their own): worked
        # out once per such key, for the bound explored last (SPEC §10.10).
        memo = self.tables(bound).closes
        key = (state.servers, state.calls, generation)
        found = memo.get(key)
        if found is None:
            found = memo[key] = self.closing(state)
        servers, calls, outputs = found
        closed = State(bound, servers, state.registry, state.steps, calls, True, state.reconfigured)
        return Transition(closed, outputs)

    def closing(
        self, state: State
    ) -> tuple[tuple[ServerState, ...], tuple[CallRecord, ...], tuple[Output, ...]]:
        """What close does to the servers and the calls, and what it outputs."""
        bound = state.bound
        outputs: list[Output] = []
        generation = state.registry.generation
        for spec, server in zip(bound.servers, state.servers, strict=True):
            if server.refresh is not None and server.connected:
                reason = texts.REJECT_CLOSED.format(server=spec.name)
                outputs.append(RefreshOutcome(spec.name, "rejected", generation, "closed", reason))
        calls: list[CallRecord] = []
        for record in state.calls:
            if record.phase == "done" or not self.ends_at_close(record):
                calls.append(retire(record, late=False) if record.late else record)
                continue
            calls.append(self.end_at_close(record, outputs))
        for spec, server in zip(bound.servers, state.servers, strict=True):
            if server.connected:
                outputs.append(Sent(spec.name, "close"))
        servers = tuple(ServerState(False, 0, None) if s.present else ABSENT for s in state.servers)
        return servers, tuple(calls), tuple(outputs)

    def ends_at_close(self, record: CallRecord) -> bool:
        """INV-12: every pending call ends at close, whatever it waits for."""
        return True

    def end_at_close(self, record: CallRecord, outputs: list[Output]) -> CallRecord:
        """One pending call at close: ``cancelled``; its cancellation if it was sent."""
        sent = record.phase in {"sent", "task"}
        if sent:
            text = texts.CLOSED_SENT
        elif record.phase == "retrying":
            text = texts.CLOSED_EXPIRED if record.expired else texts.CLOSED_RETRYING
        else:
            text = texts.CLOSED_UNSENT
        outputs.append(Result(record.call_id, "cancelled", text))
        if sent:
            assert record.binding is not None
            assert record.binding.server is not None
            outputs.extend(self.close_cancellations(record.binding.server, record))
        return retire(record, results=record.results + 1, late=False)

    def close_cancellations(self, server: str, record: CallRecord) -> tuple[Output, ...]:
        """INV-12 (and INV-7): a call in flight at close owes its server one cancellation,
        delivered before the session closes."""
        return self.cancel_messages(server, record)

    # --- steps -----------------------------------------------------------------------

    def _on_sample(self, state: State, event: Event) -> Transition:
        return Transition(self.sampled(state))

    def sampled(self, state: State) -> State:
        """The step captures the registry value itself (INV-2)."""
        registry = state.registry
        snapshot = Registry(registry.generation, registry.catalogs)  # names need no memory
        return _evolve(state, steps=(*state.steps, snapshot))

    # --- calls -----------------------------------------------------------------------

    def _on_call(self, state: State, event: Event) -> Transition:
        assert isinstance(event, Call)
        if state.closed and not self.accepts_after_close():
            return Transition(state, (Refused(event.call_id, texts.HOST_CLOSED),))
        if state.call(event.call_id) is not None and not self.accept_reused_id(event):
            text = texts.DUPLICATE_CALL_ID.format(call_id=event.call_id)
            return Transition(state, (Refused(event.call_id, text),))
        binding = self.resolve(state, event.step, event.name)
        record = CallRecord(event.call_id, event.step, event.name, binding, False, "done")
        if binding is None:
            text = texts.UNSUPPORTED.format(name=event.name)
            return self.finish_new(state, record, "unsupported", text)
        if not event.arguments_ok:
            text = texts.BAD_ARGUMENTS.format(name=event.name, problem="not a JSON object")
            return self.finish_new(state, record, "error", text)
        if binding.server is None:
            return self.run_local(state, record)
        if self.needs_approval(state, binding):
            return Transition(_replace_call(state, evolve(record, phase="approval")))
        return self.dispatch(state, record)

    def run_local(self, state: State, record: CallRecord) -> Transition:
        """SPEC §3.1: a host tool (builtin, extension, ``tool_search``) runs its handler in
        the host: nothing is sent, and its one result is the handler's answer (``ok``, or
        ``error`` when it fails: the model says ``ok`` for both, as for a server's)."""
        record = evolve(record, phase="done", status="ok", results=1)
        return Transition(_replace_call(state, record), (Result(record.call_id, "ok", None),))

    def needs_approval(self, state: State, binding: Binding) -> bool:
        """SPEC §3.4 (INV-10): with gating active, an MCP call waits for its approval."""
        return state.bound.approval and binding.server is not None

    def dispatch(self, state: State, record: CallRecord) -> Transition:
        """An accepted (and approved) call: the binding policy, the connection, the lane."""
        binding = record.binding
        assert binding is not None
        server = binding.server
        assert server is not None
        i = state.bound.index(server)
        if not state.servers[i].present:
            return self.to_absent(state, record)
        if state.bound.policy == "revalidate" and not self.still_listed(state, binding):
            return self.finish_new(state, record, "unavailable", _unavailable(record, binding))
        if self.waits_for_start(state, i):
            state = _replace_call(state, evolve(record, phase="starting"))
            if state.servers[i].start == "dormant":
                return self.wake(state, i)
            return Transition(state)
        if not state.servers[i].connected:
            text = texts.NOT_CONNECTED.format(server=server)
            return self.finish_new(state, record, "failed", text)
        exclusive = not (binding.read_only or state.bound.servers[i].parallel)
        record = evolve(record, exclusive=exclusive)
        if exclusive and self.lane_busy(state, record.step):
            record = evolve(record, phase="queued")
            return Transition(_replace_call(state, record))
        record = evolve(record, phase="sent")
        return Transition(
            _replace_call(state, record), (Sent(server, binding.method, binding.remote_name),)
        )

    def still_listed(self, state: State, binding: Binding) -> bool:
        """SPEC §7.3: under ``revalidate`` the live catalog still lists the tool (or the
        resource, SPEC §11.20) the step bound."""
        live = state.registry.catalog(binding.source)
        return binding.remote_name in (live.uris() if binding.resource else live.remote_names())

    def to_absent(self, state: State, record: CallRecord) -> Transition:
        """SPEC §3.7 (INV-16): a call whose server a reconfiguration removed ends
        ``unavailable`` with nothing sent, under both policies: a step pinned before the
        removal does not keep the removed server's session."""
        binding = record.binding
        assert binding is not None
        text = texts.REMOVED.format(name=record.name, server=binding.server)
        return self.finish_new(state, record, "unavailable", text)

    def waits_for_start(self, state: State, i: int) -> bool:
        """SPEC §11.12 (INV-11): a call to a dormant or starting server waits for the
        start to settle instead of failing fast or being sent."""
        return state.servers[i].start is not None

    def _on_approve(self, state: State, event: Event) -> Transition:
        """INV-10: only an approval moves a gated call on; the checks of SPEC §8.2 that
        follow it run now, against the state at the time of the answer."""
        assert isinstance(event, Approve)
        record = state.call(event.call_id)
        assert record is not None
        return self.dispatch(state, record)

    def _on_deny(self, state: State, event: Event) -> Transition:
        """INV-10: a denied call ends ``denied`` and nothing is sent."""
        assert isinstance(event, Deny)
        record = state.call(event.call_id)
        assert record is not None
        assert record.binding is not None
        template = texts.DENIED_CANCELLED if event.answer == "cancel" else texts.DENIED_DECLINED
        text = template.format(
            name=record.name, server=record.binding.server, tool=record.binding.remote_name
        )
        return self.end_call(state, record, "denied", text)

    def accept_reused_id(self, event: Call) -> bool:
        """INV-4: a reused call_id is refused."""
        return False

    def accepts_after_close(self) -> bool:
        """INV-12: once the host closed, no call is accepted."""
        return False

    def resolve(self, state: State, step: int, name: str) -> Binding | None:
        """INV-2: the name is looked up in the step's own snapshot."""
        snapshot = state.steps[step]
        return None if snapshot is None else snapshot.lookup(name)

    def lane_busy(self, state: State, step: int) -> bool:
        """INV-9: an exclusive call waits while any exclusive call of its step is ahead."""
        return any(c.step == step and c.exclusive and c.phase != "done" for c in state.calls)

    def finish_new(
        self, state: State, record: CallRecord, status: texts.CallStatus, text: str
    ) -> Transition:
        record = evolve(record, phase="done", status=status, results=1)
        return Transition(_replace_call(state, record), (Result(record.call_id, status, text),))

    def _on_call_responded(self, state: State, event: Event) -> Transition:
        assert isinstance(event, CallResponded)
        record = state.call(event.call_id)
        assert record is not None
        if record.phase != "sent":
            return self.late_answer(state, record)
        status: texts.CallStatus = "error" if event.is_error else "ok"
        return self.end_call(state, record, status, None)

    def _on_call_rejected(self, state: State, event: Event) -> Transition:
        """SPEC §8.9 (INV-13): the server refused the call unrun (-32020). The first time,
        the host refreshes the server (a refresh that starts after the rejection: queued
        behind one in flight) and sends the call once more when it ended; a second
        rejection ends the call ``failed``."""
        assert isinstance(event, CallRejected)
        record = state.call(event.call_id)
        assert record is not None
        binding = record.binding
        assert binding is not None
        assert binding.server is not None
        if record.retried:
            text = texts.REJECTED_AGAIN.format(server=binding.server, tool=binding.remote_name)
            return self.end_call(state, record, "failed", text)
        i = state.bound.index(binding.server)
        server = state.servers[i]
        behind = self.waits_behind(server)
        state = _replace_call(state, evolve(record, phase="retrying", retried=True, behind=behind))
        if server.refresh is not None:
            return self.coalesce(state, i, stale=False)
        return self.start_refresh(state, i, server)

    def _on_session_expired(self, state: State, event: Event) -> Transition:
        """SPEC §8.13 (INV-14): the server refused the call unrun, no longer knowing the
        session (HTTP 404). In this one transition the host opens a new session: the
        server's other calls in flight end as on a disconnect (INV-8), its refresh in flight
        ends ``rejected``, and the new session's first listing starts. The refused call
        waits for that listing to end, then is sent once more, as a call rejected unrun
        (INV-13); refused again after a resend, it ends ``failed``."""
        assert isinstance(event, SessionExpired)
        record = state.call(event.call_id)
        assert record is not None
        binding = record.binding
        assert binding is not None
        assert binding.server is not None
        i = state.bound.index(binding.server)
        outputs: list[Output] = []
        state = self.new_session(state, i, record.call_id, outputs)
        if record.retried:
            text = texts.EXPIRED_AGAIN.format(server=binding.server, tool=binding.remote_name)
            t = self.end_call(state, record, "failed", text)
        else:
            t = self.wait_for_new_session(state, record)
        outputs.extend(t.outputs)
        state = t.state
        t = self.start_refresh(state, i, state.servers[i])
        return Transition(t.state, (*outputs, *t.outputs))

    def new_session(self, state: State, i: int, refused: str, outputs: list[Output]) -> State:
        """INV-14: the old session is gone: its refresh ends ``rejected`` (nothing is
        installed), the new one listens (SPEC §5.7), and the server's calls in flight but
        ``refused`` end as on a disconnect."""
        server = state.servers[i]
        name = state.bound.servers[i].name
        if server.refresh is not None:
            reason = texts.REJECT_DISCONNECTED.format(server=name)
            generation = state.registry.generation
            outputs.append(RefreshOutcome(name, "rejected", generation, "disconnected", reason))
        state = _with_server(state, i, evolve(server, refresh=None, listening=True))
        return self.fail_expired_calls(state, name, refused, outputs)

    def fail_expired_calls(
        self, state: State, server: str, refused: str, outputs: list[Output]
    ) -> State:
        """INV-14 (INV-8's texts): every call of ``server`` in flight on the expired session
        but ``refused`` ends ``failed``, its outcome unknown; no late answer can come. A call
        waiting for its retry is answered by the new session's first listing; a queued call
        or one waiting for approval has sent nothing and goes on."""
        steps: set[int] = set()
        calls: list[CallRecord] = []
        for record in state.calls:
            binding = record.binding
            if binding is None or binding.server != server or record.call_id == refused:
                calls.append(record)
            elif record.phase == "done":
                calls.append(retire(record, late=False) if record.late else record)
            elif record.phase == "retrying":
                calls.append(evolve(record, behind=False) if record.behind else record)
            elif record.phase in ("sent", "task"):
                text = texts.DISCONNECTED.format(server=server)
                outputs.append(Result(record.call_id, "failed", text))
                calls.append(retire(record, results=record.results + 1))
                steps.add(record.step)
            else:
                calls.append(record)
        state = _evolve(state, calls=tuple(calls))
        for index in sorted(steps):
            state = self.hand_off(state, index, outputs)
        return state

    def wait_for_new_session(self, state: State, record: CallRecord) -> Transition:
        """INV-14: the refused call leaves the wire and waits, keeping its lane, for the
        new session's first listing (which starts after it: never ``behind``)."""
        waiting = evolve(record, phase="retrying", retried=True, behind=False, expired=True)
        return Transition(_replace_call(state, waiting))

    def waits_behind(self, server: ServerState) -> bool:
        """INV-13: a refresh already in flight may have read the listing the rejected call
        was built from; the retry waits for the one queued behind it."""
        return server.refresh is not None

    def late_answer(self, state: State, record: CallRecord) -> Transition:
        """INV-4: an answer after the terminal result is dropped and counted."""
        state = _replace_call(state, retire(record, late=False))
        return Transition(state, (LateDropped(record.call_id),))

    def _on_call_failed(self, state: State, event: Event) -> Transition:
        assert isinstance(event, CallFailed)
        record = state.call(event.call_id)
        assert record is not None
        assert record.binding is not None
        text = texts.TRANSPORT.format(
            tool=record.binding.remote_name, server=record.binding.server, why=event.why
        )
        # SPEC §8.12: a poll that failed gives the task up; the server is told (INV-7).
        return self.end_call(state, record, "failed", text, given_up=record.phase == "task")

    def _on_cancel(self, state: State, event: Event) -> Transition:
        assert isinstance(event, Cancel)
        record = state.call(event.call_id)
        assert record is not None
        if record.phase == "done":
            return self.cancel_after_end(state, record)
        return self.end_call(state, record, "cancelled", texts.CANCELLED)

    def cancel_after_end(self, state: State, record: CallRecord) -> Transition:
        """SPEC §3.1: cancelling a call that already ended is a no-op: no second result
        (INV-4), no second cancellation signal (INV-7), a late answer still dropped."""
        return Transition(state)

    def _on_timeout(self, state: State, event: Event) -> Transition:
        assert isinstance(event, Timeout)
        record = state.call(event.call_id)
        assert record is not None
        assert record.binding is not None
        assert record.binding.server
        server = record.binding.server
        spec = state.bound.server(server)
        seconds = _seconds(spec.tool_timeout_sec)
        if record.phase == "starting":
            text = texts.TIMED_OUT_STARTING.format(seconds=seconds, server=server)
        elif event.cap:
            text = texts.TIMED_OUT_CAP.format(seconds=_seconds(spec.tool_max_sec))
        elif record.phase in ("sent", "task") and spec.idle_timeout:
            text = texts.TIMED_OUT_IDLE.format(seconds=seconds)
        elif record.phase == "retrying":
            template = texts.TIMED_OUT_EXPIRED if record.expired else texts.TIMED_OUT_RETRYING
            text = template.format(seconds=seconds, server=server)
        elif record.phase in ("sent", "task"):
            text = texts.TIMED_OUT.format(seconds=seconds)
        else:
            text = texts.TIMED_OUT_QUEUED.format(seconds=seconds)
        return self.end_call(state, record, "timed_out", text)

    def can_time_out(self, record: CallRecord) -> bool:
        """LIVE-1: the deadline runs from dispatch, queued or sent; waiting for approval
        does not count against it (INV-10)."""
        return record.phase != "approval"

    def end_call(
        self,
        state: State,
        record: CallRecord,
        status: texts.CallStatus,
        text: str | None,
        *,
        given_up: bool = False,
    ) -> Transition:
        """The one terminal result of an accepted call (INV-4), then the lane moves on.
        Ended early (cancelled, timed out, or a task ``given_up``), an in-flight call owes
        its server one cancellation signal (INV-7).

        It changes the calls alone, as a function of the calls, the record, the result
        and the bound (the standard ``hand_off`` reads no other part; the other hooks are
        methods without state of their own): worked out once per such key (SPEC §10.10)."""
        if not self._lanes_kept:
            return self.ended(state, record, status, text, given_up=given_up)
        memo = self.tables(state.bound).ends
        key = (state.calls, record, status, text, given_up)
        found = memo.get(key)
        if found is None:
            t = self.ended(state, record, status, text, given_up=given_up)
            found = memo[key] = (t.state.calls, t.outputs)
        calls, outputs = found
        return Transition(_evolve(state, calls=calls), outputs)

    @functools.cached_property
    def steps_unread(self) -> bool:
        """Whether every transition but a ``sample``'s is, its steps aside, a function of
        the event, the bound and the state but its steps (a ``call``'s: and the step it
        names), so that the explorer may keep its checks' results (SPEC §10.10). True of
        the standard rules: no method reads a step but ``sampled``, ``resolve`` (the
        call's own step) and :func:`collect_steps`, which makes steps alone. A rules class
        that replaces a method given the whole state (or anything but a method or a plain
        value) may read the steps there: false."""
        kind = type(self)
        for cls in kind.__mro__[: kind.__mro__.index(Rules)]:
            for name, value in vars(cls).items():
                if name.startswith("__") or value is getattr(Rules, name, None):
                    continue
                if isinstance(value, (str, int, bool)):
                    continue  # a name, a target, a description
                annotations = getattr(value, "__annotations__", None)
                if not callable(value) or annotations is None or "State" in annotations.values():
                    return False
        return True

    @functools.cached_property
    def _lanes_kept(self) -> bool:
        """Whether what ends a call or a connection may be kept (:meth:`end_call`,
        :meth:`_on_disconnect`): the hooks that get the whole state are the standard ones
        (a mutant's may read more of it)."""
        kind = type(self)
        return kind.fail_calls is Rules.fail_calls and kind.hand_off is Rules.hand_off

    def ended(
        self,
        state: State,
        record: CallRecord,
        status: texts.CallStatus,
        text: str | None,
        *,
        given_up: bool = False,
    ) -> Transition:
        """:meth:`end_call` worked out."""
        outputs: list[Output] = [Result(record.call_id, status, text)]
        late = record.late
        in_flight = record.phase in {"sent", "task"}
        if in_flight and (given_up or status in ("cancelled", "timed_out")):
            assert record.binding is not None
            assert record.binding.server is not None
            outputs.extend(self.cancel_messages(record.binding.server, record))
            allowed = state.bound.environment
            if allowed is None or "late_answer" in allowed:
                late = True  # the server may still answer
        if record.step >= 0:
            # What ``_replace_call`` would retire the ended record to, built at once.
            ended = retire(record, results=record.results + 1, late=late)
        else:
            ended = evolve(
                record,
                phase="done",
                status=status,
                results=record.results + 1,
                retried=False,
                behind=False,
                progressed=0,
                expired=False,
                late=late,
            )
        state = _replace_call(state, ended)
        if self.releases_lane(record, status):
            state = self.hand_off(state, record.step, outputs)
        return Transition(state, tuple(outputs))

    def cancel_messages(self, server: str, record: CallRecord) -> tuple[Output, ...]:
        """INV-7: exactly one cancellation signal for an in-flight call the host ends:
        ``tasks/cancel`` for a task (SPEC §8.12), else ``notifications/cancelled``."""
        if record.task:
            return (Sent(server, "tasks/cancel", record.call_id),)
        return (Sent(server, "notifications/cancelled", record.call_id),)

    def releases_lane(self, record: CallRecord, status: texts.CallStatus) -> bool:
        return record.exclusive

    def holds_lane(self, record: CallRecord) -> bool:
        """INV-9: a call in flight holds its step's lane; so does one waiting for its
        retry (SPEC §8.9) and one that runs as a task (SPEC §8.12)."""
        return record.phase in ("sent", "retrying", "task")

    def hand_off(self, state: State, step: int, outputs: list[Output]) -> State:
        """Start the oldest queued exclusive call of the step once no exclusive call is out."""
        calls = state.calls
        for c in calls:
            if c.step == step and c.exclusive and self.holds_lane(c):
                return state
        for record in calls:
            if record.step == step and record.phase == "queued":
                binding = record.binding
                assert binding is not None
                assert binding.server is not None
                outputs.append(Sent(binding.server, binding.method, binding.remote_name))
                return _replace_call(state, evolve(record, phase="sent"))
        return state

    # --- connection ------------------------------------------------------------------

    def _on_disconnect(self, state: State, event: Event) -> Transition:
        assert isinstance(event, Disconnect)
        bound = state.bound
        i = bound.index(event.server)
        server = state.servers[i]
        if server.replacing or not self._lanes_kept:
            return self.disconnected(state, i)
        # Unless a replacement ends with it, a disconnect changes the server and the calls
        # alone, as a function of the server, the calls and the generation (the standard
        # ``fail_calls`` and ``hand_off`` read no other part; the other hooks they call
        # are methods without state of their own): worked out once per such key, for the
        # bound explored last (SPEC §10.10).
        memo = self.tables(bound).disconnects
        key = (i, server, state.calls, state.registry.generation)
        found = memo.get(key)
        if found is None:
            t = self.disconnected(state, i)
            found = memo[key] = (t.state.servers[i], t.state.calls, t.outputs)
        lost, calls, outputs = found
        servers = state.servers
        after = State(
            bound,
            (*servers[:i], lost, *servers[i + 1 :]),
            state.registry,
            state.steps,
            calls,
            state.closed,
            state.reconfigured,
        )
        return Transition(after, outputs)

    def disconnected(self, state: State, i: int) -> Transition:
        """The connection to server ``i`` is lost: its refresh ends ``rejected``, its calls
        fail (INV-8), a replacement's old catalog goes (INV-15)."""
        name = state.bound.servers[i].name
        server = state.servers[i]
        outputs: list[Output] = []
        if server.refresh is not None:
            reason = texts.REJECT_DISCONNECTED.format(server=name)
            outputs.append(
                RefreshOutcome(name, "rejected", state.registry.generation, "disconnected", reason)
            )
        if server.replacing:
            state = self.replaced(state, i, outputs)
        # A new session listens anew (SPEC §5.7): the stream ends with this one.
        lost = evolve(
            server, connected=False, refresh=None, start=None, listening=True, replacing=False
        )
        state = _with_server(state, i, lost)
        return Transition(self.fail_calls(state, name, outputs), tuple(outputs))

    def lost_start_fails(self, record: CallRecord) -> bool:
        """INV-11: a connection lost before the first refresh ended fails the calls that
        waited for the start (``NOT_CONNECTED``: nothing was sent)."""
        return True

    def fail_calls(self, state: State, server: str, outputs: list[Output]) -> State:
        """INV-8: no call of a disconnected server stays in flight or queued."""
        steps: set[int] = set()
        calls: list[CallRecord] = []
        for record in state.calls:
            binding = record.binding
            if binding is None or binding.server != server:
                calls.append(record)
                continue
            if record.phase == "done":
                calls.append(retire(record, late=False) if record.late else record)
                continue
            if record.phase == "approval":
                calls.append(record)  # nothing sent yet: checked again once approved
                continue
            if record.phase == "starting" and not self.lost_start_fails(record):
                calls.append(record)
                continue
            in_flight = record.phase in {"sent", "task"}
            template = texts.DISCONNECTED if in_flight else texts.NOT_CONNECTED
            outputs.append(Result(record.call_id, "failed", template.format(server=server)))
            calls.append(retire(record, results=record.results + 1))
            steps.add(record.step)
        state = _evolve(state, calls=tuple(calls))
        for index in sorted(steps):
            state = self.hand_off(state, index, outputs)
        return state


def _evolve(
    state: State,
    *,
    servers: tuple[ServerState, ...] | None = None,
    registry: Registry | None = None,
    steps: tuple[Registry | None, ...] | None = None,
    calls: tuple[CallRecord, ...] | None = None,
) -> State:
    """``attrs.evolve`` for the hottest value, without its per-call introspection."""
    return State(
        state.bound,
        state.servers if servers is None else servers,
        state.registry if registry is None else registry,
        state.steps if steps is None else steps,
        state.calls if calls is None else calls,
        state.closed,
        state.reconfigured,
    )


def _guard_key(event: Event) -> Event:
    """The event with its free-form payload (a failure's ``why``) set to the default, as
    ``enabled`` lists it: the environment chooses that text, the guard does not."""
    if isinstance(event, (ListFailed, CallFailed)):
        default = attrs.fields(type(event)).why.default
        return evolve(event, why=default)
    if isinstance(event, Deny):
        return evolve(event, answer="decline")
    if isinstance(event, TaskStatus):
        return evolve(event, why=attrs.fields(TaskStatus).why.default)
    return event


ABSENT = ServerState(connected=False, version=0, refresh=None, present=False)
"""An absent server (SPEC §3.7): one value, whatever it was before."""


_E = typing.TypeVar("_E")


@functools.cache  # pragma: no mutate - a pure function of immutable values: only speed
def _event(kind: Callable[..., _E], *args: object) -> _E:
    """``kind(*args)``, one object for equal arguments: ``enabled`` lists the same events
    for many states, and the explorer hashes each one it keeps a transition of, which an
    event made once computes once (events cache their hash)."""
    return kind(*args)


@functools.cache  # pragma: no mutate - a pure function of immutable values: only speed
def _reconfigurable(bound: Bound) -> bool:
    """Some server of ``bound`` has a ``change``: its one ``reconfigure`` is possible."""
    return any(s.change is not None for s in bound.servers)


@functools.cache  # pragma: no mutate - a pure function of immutable values: only speed
def _idle_servers(bound: Bound) -> frozenset[str]:
    """The servers of ``bound`` with an idle timeout (the explorer's hot path)."""
    return frozenset(s.name for s in bound.servers if s.idle_timeout)


@functools.cache  # pragma: no mutate - a pure function of immutable values: only speed
def _session_servers(bound: Bound) -> frozenset[str]:
    """The servers of ``bound`` that may forget the host's session (the hot path)."""
    return frozenset(s.name for s in bound.servers if s.sessions)


@functools.cache  # pragma: no mutate - a pure function of immutable values: only speed
def _task_servers(bound: Bound) -> frozenset[str]:
    """The servers of ``bound`` that may answer a call with a task (the hot path)."""
    return frozenset(s.name for s in bound.servers if s.tasks)


def _with_server(state: State, i: int, server: ServerState) -> State:
    servers = state.servers
    return _evolve(state, servers=(*servers[:i], server, *servers[i + 1 :]))


def collect_steps(state: State) -> tuple[Registry | None, ...]:
    """Forget snapshots no call can use any more: a bisimulation reduction.

    Calls are only issued on the latest step, so an earlier step with no running call,
    or the latest one once the call budget is spent, is never read again; replacing it
    by ``None`` merges states that differ only in such dead snapshots.
    """
    steps = state.steps
    if not steps:
        return steps
    last = len(steps) - 1
    keep_last = not state.closed and len(state.calls) < state.bound.max_calls
    calls = state.calls
    for i, snapshot in enumerate(steps):
        if snapshot is None or (i == last and keep_last):
            continue
        for record in calls:
            if record.step == i:
                break
        else:
            break  # a snapshot no call uses: rebuild below
    else:
        return steps
    used = {c.step for c in calls if c.step >= 0}
    return tuple(s if i in used or (i == last and keep_last) else None for i, s in enumerate(steps))


def retired(record: CallRecord) -> CallRecord:
    """A finished call with no answer pending, reduced to what its future depends on.

    Nothing after the end of a call reads its step, name, binding or status (the
    invariants about them are checked on the transition that ended it), so finished
    calls that differ only in those are one state: a bisimulation reduction.
    """
    return retire(record)


_RETIRED: dict[tuple[object, ...], CallRecord] = {}
"""One object per retired record (the explorer's hot path): equal ones are identical,
so states holding them compare and hash at the cost of an identity check."""


def retire(
    record: CallRecord, *, results: int | None = None, late: bool | None = None
) -> CallRecord:
    """``retired(evolve(record, results=results, late=late))`` without building the
    evolved record: :func:`retired` reads only the call id, the results, ``late``, the
    server and ``task``."""
    count = record.results if results is None else results
    if record.late if late is None else late:
        assert record.binding is not None
        key: tuple[object, ...] = (record.call_id, count, record.binding.server, record.task)
        found = _RETIRED.get(key)
        if found is None:
            found = _RETIRED[key] = CallRecord(
                record.call_id,
                -1,
                "",
                record.binding.server_only(),
                False,
                "done",
                None,
                count,
                late=True,
                task=record.task,
            )
        return found
    key = (record.call_id, count)
    found = _RETIRED.get(key)
    if found is None:
        found = _RETIRED[key] = CallRecord(record.call_id, -1, "", None, False, "done", None, count)
    return found


def _replace_call(state: State, record: CallRecord) -> State:
    if record.phase == "done" and record.step >= 0:
        record = retired(record)
    calls = state.calls
    for i, existing in enumerate(calls):
        if existing.call_id == record.call_id:
            return _evolve(state, calls=(*calls[:i], record, *calls[i + 1 :]))
    return _evolve(state, calls=(*calls, record))


@functools.lru_cache(maxsize=4096)  # pragma: no mutate - pure, immutable values: speed only
def _mcp_names(snapshot: Registry) -> tuple[str, ...]:
    """What a step's calls may name: its MCP tools, then reads of its resources (a
    registry's hash is cached, and the snapshots of a search are few)."""
    tools = sorted(b.name for c in snapshot.catalogs for b in c.bindings if b.server is not None)
    return (*tools, *sorted(b.name for c in snapshot.catalogs for b in c.resources))


def _unavailable(record: CallRecord, binding: Binding) -> str:
    """The text of a call ``revalidate`` ends: its tool, or resource, is no longer listed."""
    if binding.resource:
        return texts.RESOURCE_UNAVAILABLE.format(uri=binding.remote_name, server=binding.server)
    server, tool = binding.server, binding.remote_name
    return texts.UNAVAILABLE.format(name=record.name, server=server, tool=tool)


STANDARD = Rules()

# --- guards, event kind by event kind (SPEC §3.3) ------------------------------------


@attrs.frozen
class Guard:
    """When an event kind is enabled, in words and as a predicate.

    ``text`` is the guard as SPEC §3.3's transition table states it; ``holds(state)`` says
    whether some event of the kind is in ``STANDARD.enabled(state)``, decided apart from
    ``enabled``, so that a test can check one against the other on every reachable state
    of a bound. Both take the bound's ``environment`` into account: a kind it leaves out
    is never enabled."""

    text: str
    holds: Callable[[State], bool]


def _allows(state: State, *what: Environment) -> bool:
    """The bound lets the environment do one of ``what``."""
    allowed = state.bound.environment
    return allowed is None or any(w in allowed for w in what)


def _some_server(
    state: State, kind: EventKind, test: Callable[[ServerSpec, ServerState], bool]
) -> bool:
    """The host is open, the environment may do ``kind`` and some present server passes
    ``test`` (an absent server has no event of any kind, SPEC §3.7)."""
    # one state per spec, always: strict only asserts it (an equivalent mutant)
    servers = zip(state.bound.servers, state.servers, strict=True)  # pragma: no mutate
    return (
        not state.closed
        and _allows(state, kind)
        and any(server.present and test(spec, server) for spec, server in servers)
    )


def _versions(state: State, spec: ServerSpec) -> tuple[Listing, ...]:
    """:func:`listings` by spec: a changed server's replacement once reconfigured."""
    return spec.replacement if state.reconfigured and spec.change == "changed" else spec.versions


def _some_call(state: State, test: Callable[[CallRecord], bool]) -> bool:
    """The host is open and some accepted call passes ``test``."""
    return not state.closed and any(test(record) for record in state.calls)


def _listing(server: ServerState) -> bool:
    """A refresh is in flight and the server is connected: pages can arrive."""
    return server.refresh is not None and server.connected


def _last_page(versions: tuple[Listing, ...], server: ServerState) -> bool:
    """The next page of the listing in flight is its last."""
    refresh = server.refresh
    assert refresh is not None
    return refresh.pages + 1 >= len(versions[refresh.version])


def _late(record: CallRecord) -> bool:
    """The call ended while its server still had it: an answer may still come."""
    return record.phase == "done" and record.late


def _server_of(record: CallRecord) -> str | None:
    return None if record.binding is None else record.binding.server


def _answerable(state: State, record: CallRecord) -> bool:
    sent = record.phase == "sent" and _allows(state, "call_responded", "call_error")
    late = _late(record) and not record.task and _allows(state, "late_answer")
    return sent or late


def _task_answerable(state: State, record: CallRecord) -> bool:
    polled = record.phase == "task" and _allows(state, "task_status")
    late = _late(record) and record.task and _allows(state, "late_answer")
    return polled or late


def _progressing(state: State, record: CallRecord) -> bool:
    return (
        record.phase in ("sent", "task")
        and _server_of(record) in _idle_servers(state.bound)
        and record.progressed < state.bound.rearms
        and _allows(state, "progress")
    )


def _in_phase(state: State, kind: EventKind, *phases: CallPhase) -> bool:
    """Some call is in one of ``phases`` and the environment may do ``kind``."""
    return _allows(state, kind) and _some_call(state, lambda r: r.phase in phases)


#: The guard of every event type: what ``Rules.enabled`` encodes, in words beside a
#: predicate (SPEC §3.3; ``tests/test_guards.py`` checks the two agree).
GUARDS: dict[type[Event], Guard] = {
    RefreshRequested: Guard(
        "the server is present (wakes a dormant server; rejected at once while the server "
        "is disconnected)",
        lambda s: _some_server(s, "refresh_requested", lambda spec, server: True),
    ),
    ListPage: Guard(
        "a refresh is in flight, the server is connected, pages remain after this one",
        lambda s: _some_server(
            s,
            "list_page",
            lambda spec, server: _listing(server) and not _last_page(_versions(s, spec), server),
        ),
    ),
    ListDone: Guard(
        "a refresh is in flight, the server is connected, this is its last page",
        lambda s: _some_server(
            s,
            "list_done",
            lambda spec, server: _listing(server) and _last_page(_versions(s, spec), server),
        ),
    ),
    ListFailed: Guard(
        "a refresh is in flight and the server is connected",
        lambda s: _some_server(s, "list_failed", lambda spec, server: _listing(server)),
    ),
    ListChanged: Guard(
        "the server has a next scripted catalog version",
        lambda s: _some_server(
            s,
            "list_changed",
            lambda spec, server: server.version + 1 < len(_versions(s, spec)),
        ),
    ),
    StreamEnded: Guard(
        "the server is connected and listening on a stream it may end (`streams`)",
        lambda s: _some_server(
            s,
            "stream_ended",
            lambda spec, server: spec.streams and server.connected and server.listening,
        ),
    ),
    Relisten: Guard(
        "the server is connected and not listening",
        lambda s: _some_server(
            s, "relisten", lambda spec, server: server.connected and not server.listening
        ),
    ),
    Sample: Guard(
        "fewer steps than the bound's",
        lambda s: not s.closed and len(s.steps) < s.bound.max_steps,
    ),
    Call: Guard(
        "a step exists and fewer calls than the bound's (or: a reused call_id; or, once the "
        "host closed, a new call, refused)",
        lambda s: bool(s.steps) and (s.closed or len(s.calls) < s.bound.max_calls or bool(s.calls)),
    ),
    CallResponded: Guard(
        "the call is in flight (not as a task), or ended with a late answer still possible",
        lambda s: _some_call(s, lambda r: _answerable(s, r)),
    ),
    CallRejected: Guard("the call is in flight", lambda s: _in_phase(s, "call_rejected", "sent")),
    SessionExpired: Guard(
        "the call is in flight (not as a task) to a server that may forget its session "
        "(`sessions`)",
        lambda s: (
            _allows(s, "session_expired")
            and _some_call(
                s, lambda r: r.phase == "sent" and _server_of(r) in _session_servers(s.bound)
            )
        ),
    ),
    CallFailed: Guard(
        "the call is in flight (as a task: a poll failed)",
        lambda s: _in_phase(s, "call_failed", "sent", "task"),
    ),
    Cancel: Guard(
        "the call was accepted: it waits for approval, a lazy start or its retry, is queued, "
        "is in flight or runs as a task; or it ended (nothing happens)",
        lambda s: _in_phase(
            s, "cancel", "approval", "starting", "retrying", "queued", "sent", "task", "done"
        ),
    ),
    Approve: Guard("the call waits for approval", lambda s: _in_phase(s, "approve", "approval")),
    Deny: Guard("the call waits for approval", lambda s: _in_phase(s, "deny", "approval")),
    Timeout: Guard(
        "the call waits for a lazy start or its retry, is queued, is in flight or runs as a "
        "task (not while it waits for approval)",
        lambda s: _in_phase(s, "timeout", "starting", "retrying", "queued", "sent", "task"),
    ),
    CallProgress: Guard(
        "the call is in flight (or runs as a task) to a server with an idle timeout and "
        "fewer progress notifications re-armed it than the cap's idle periods (then a cap "
        "timeout is enabled instead)",
        lambda s: _some_call(s, lambda r: _progressing(s, r)),
    ),
    TaskCreated: Guard(
        "the call is in flight to a server that runs tasks",
        lambda s: (
            _allows(s, "task_created")
            and _some_call(
                s, lambda r: r.phase == "sent" and _server_of(r) in _task_servers(s.bound)
            )
        ),
    ),
    TaskStatus: Guard(
        "the call runs as a task, or ended as one with a late status still possible",
        lambda s: _some_call(s, lambda r: _task_answerable(s, r)),
    ),
    Disconnect: Guard(
        "the server is connected",
        lambda s: _some_server(
            s, "disconnect", lambda spec, server: server.connected and server.start != "dormant"
        ),
    ),
    Reconnect: Guard(
        "the server is disconnected (a dormant server is woken instead)",
        lambda s: _some_server(
            s,
            "reconnect",
            lambda spec, server: not server.connected and server.start != "dormant",
        ),
    ),
    Reconfigure: Guard(
        "the host is open, has not reconfigured yet and some server of the bound has a "
        "`change` (the bound scripts one reconfiguration)",
        lambda s: not s.closed and not s.reconfigured and _reconfigurable(s.bound),
    ),
    Close: Guard(
        "the host is open (afterwards no other event is enabled but a call, which is refused)",
        lambda s: not s.closed,
    ),
}


def initial(bound: Bound) -> Transition:
    return STANDARD.initial(bound)


def enabled(state: State) -> list[Event]:
    return STANDARD.enabled(state)


def step(state: State, event: Event) -> Transition:
    return STANDARD.step(state, event)
