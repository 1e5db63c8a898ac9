"""Refinement of a trace against the model: ``mcpbind trace check --strict`` (SPEC §14.5).

Theory of operation
-------------------
The monitors of :mod:`.trace` judge a trace alone. Refinement asks more: is the trace
one of the model's own runs? The inputs of the trace are replayed through the rules, and
between two inputs the outputs the trace shows must be exactly those the model produces
for the earlier one: as a multiset, with the outputs of each call_id in the model's
order. That needs a host that uses mcpbind's names and texts (SPEC §6, §8.7), and a
header that says what the model's bound needs (each server's options, SPEC §14.1).

What the model leaves to its environment is taken from the trace, not guessed:

* the listing a refresh reads is the one its ``list_done`` carries (the model's version
  numbers only count ``list_change`` notifications);
* a server runs tasks once its ``list_done`` says so (``tasks``), or once it made one; it
  ends its ``list_changed`` stream (``streams``) once a ``stream_ended`` says so, and
  forgets sessions (``sessions``) once a ``session_expired`` does;
* which deadline fired (``timeout`` with ``cap``) and whether a call waited for approval
  are timing and policy the model abstracts: a field the trace leaves out is tried both
  ways, and every state whose outputs match is kept. So the checker holds a *set* of
  states, as TLA+ trace validation does; the trace conforms while the set is not empty.

``progress`` records change nothing the outputs show (the idle timeout's count is the
model's stand-in for time, which refinement does not judge), so they are skipped.

A divergence is reported as a :class:`~.trace.TraceViolation` named after the invariant
the first differing output belongs to (``_blame``), at the line of the first differing
record, with what the model expected and what the trace has, and the model events up to
there, so that a replay file can be written (:func:`replay_data`).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from .naming import BUILTIN, READ_RESOURCE, RESOURCE_TOOLS, mcp_source
from .rules import ABSENT, STANDARD, EventNotEnabled, Rules, _guard_key, call_id_for, listings
from .trace import TraceError, TraceRecord, TraceViolation, listed_tool
from .values import (
    OUTPUT_KINDS,
    UNKNOWN_TOOL,
    Approve,
    Binding,
    Bound,
    Call,
    CallFailed,
    CallRecord,
    CallRejected,
    CallResponded,
    Cancel,
    Close,
    Deny,
    Disconnect,
    Event,
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
    SourceCatalog,
    State,
    StreamEnded,
    TaskCreated,
    TaskEnd,
    TaskStatus,
    Timeout,
    ToolDef,
    Transition,
    evolve,
)

__all__ = [
    "TOOL_SEARCH",
    "NotRefinable",
    "RecentRules",
    "Refinement",
    "deferring_view",
    "refine",
    "replay_data",
    "result_text",
]

Normal = tuple[Any, ...]
T = TypeVar("T")
_FAR = 10**9  # pragma: no mutate - any number no trace reaches is "no bound": 9**9 or 11**9 too
"""``max_steps``, ``max_calls`` and the idle re-arms of a trace's bound: no bound."""
_EMPTY_LISTING: tuple[tuple[ToolDef, ...], ...] = ((),)
_SIGNALS = ("notifications/cancelled", "tasks/cancel")
_OPTION_FIELDS = (
    "parallel",
    "tool_timeout_sec",
    "idle_timeout",
    "tool_max_sec",
    "enabled_tools",
    "disabled_tools",
    "approval",
    "lazy",
)


class NotRefinable(TraceError):
    """The trace cannot be refined: its header lacks what the model's bound needs, or it
    uses what refinement does not cover (a lazily started server)."""


@attrs.frozen
class Refinement:
    violation: TraceViolation | None
    """The first divergence, or None: the trace is a run of the model."""
    events: tuple[Event, ...]
    """The model events replayed, up to and including the divergence's input."""
    bound: Bound | None
    """A bound for a replay of ``events`` (every listing at its version), or None when no
    one bound can hold the trace's listings (a server listed two different catalogs
    without a ``list_changed`` between them)."""
    most_states: int
    """The largest set of states the checker held at once."""


# --- the header --------------------------------------------------------------------------


def bound_from_header(header: TraceRecord) -> tuple[Bound, frozenset[str]]:
    """The trace's bound (listings to be filled in from its ``list_done`` records) and
    the servers whose calls may wait for approval."""
    options = header.get("server_options")
    if not isinstance(options, Mapping):
        raise NotRefinable(header.line, 'the header has no "server_options" (SPEC §14.1)')
    specs: list[ServerSpec] = []
    gating: set[str] = set()
    for name in header.get("servers") or ():
        given = options.get(name)
        if not isinstance(given, Mapping):
            raise NotRefinable(header.line, f"server_options has no entry for {name!r}")
        specs.append(server_spec(header, name, given))
        if given.get("approval"):
            gating.add(name)
    extensions = header.get("extensions") or {}
    bound = Bound(
        servers=tuple(specs),
        builtins=tuple(header.get("builtins") or ()),
        extensions=tuple((key, tuple(names)) for key, names in extensions.items()),
        policy=header.get("policy", "revalidate"),
        max_steps=_FAR,
        max_calls=_FAR,
        max_name_length=int(header.get("max_name_length", 64)),
        rearms=_FAR,
    )
    return bound, frozenset(gating)


def server_spec(record: TraceRecord, name: str, given: Mapping[str, Any]) -> ServerSpec:
    """Server ``name`` as the model's bound needs it, from its ``server_options`` (in the
    header, or in a ``reconfigure`` that adds or changes it); its listings are filled in
    from its ``list_done`` records."""
    unknown = sorted(set(given) - set(_OPTION_FIELDS))
    if unknown:
        raise NotRefinable(record.line, f"server_options[{name!r}]: unknown {unknown}")
    if given.get("lazy"):
        raise NotRefinable(
            record.line, f"server {name!r} starts lazily, which refinement does not cover"
        )
    enabled = given.get("enabled_tools")
    return ServerSpec(
        name,
        versions=(_EMPTY_LISTING, _EMPTY_LISTING),
        parallel=bool(given.get("parallel", False)),
        tool_timeout_sec=float(given.get("tool_timeout_sec", 300.0)),
        idle_timeout=bool(given.get("idle_timeout", False)),
        tool_max_sec=float(given.get("tool_max_sec", 3600.0)),
        enabled_tools=None if enabled is None else frozenset(enabled),
        disabled_tools=frozenset(given.get("disabled_tools") or ()),
    )


# --- outputs, normalised ------------------------------------------------------------------


def result_text(status: str, text: str | None) -> str | None:
    """A result's text as the model predicts it: the server's content (``ok``/``error``)
    is not the model's to predict, bad arguments by their prefix; a host's own texts are."""
    if status in ("ok", "error"):
        if text is not None and text.startswith("invalid arguments for "):
            return text.split(": ", 1)[0]
        return None
    return text


def expected(output: Output) -> Normal:
    """A model output as :func:`observed` reads the same record of a trace."""
    if isinstance(output, Published):
        return ("published", output.generation, output.source, tuple(output.names))
    if isinstance(output, RefreshOutcome):
        excluded = tuple(e.tool for e in output.excluded)
        return (
            "refresh_outcome",
            output.server,
            output.status,
            output.generation,
            output.kind,
            output.reason,
            excluded,
        )
    if isinstance(output, Result):
        return ("result", output.call_id, output.status, result_text(output.status, output.text))
    if isinstance(output, Sent):
        return ("sent", output.server, output.method, output.detail)
    if isinstance(output, Refused):
        return ("refused", output.call_id, output.text)
    assert isinstance(output, LateDropped)
    return ("late_dropped", output.call_id)


def observed(record: TraceRecord) -> Normal:
    get = record.get
    kind = record.kind
    if kind == "published":
        return ("published", get("generation"), get("source"), tuple(get("names") or ()))
    if kind == "refresh_outcome":
        return (
            "refresh_outcome",
            get("server"),
            get("status"),
            get("generation"),
            get("reject"),
            get("reason"),
            tuple(get("excluded") or ()),
        )
    if kind == "result":
        status = get("status")
        return ("result", get("call_id"), status, result_text(status, get("text")))
    if kind == "sent":
        method = get("method")
        detail = get("call_id") if method in _SIGNALS else get("detail") or ""
        return ("sent", get("server"), method, detail)
    if kind == "refused":
        return ("refused", get("call_id"), get("text"))
    return ("late_dropped", get("call_id"))


def _call_of(item: Normal) -> str | None:
    if item[0] in ("result", "refused", "late_dropped"):
        return str(item[1])
    if item[0] == "sent" and item[2] in _SIGNALS:
        return str(item[3])
    return None


# --- the candidates ------------------------------------------------------------------------


@attrs.frozen
class _Candidate:
    state: State
    owed: tuple[tuple[int, Normal], ...]
    """The outputs the model produced that the trace has not shown yet, each with the
    input (its index) that produced it."""
    snapshots: tuple[Registry, ...]
    """Every step's snapshot (the model forgets those no call can use, a trace may not)."""
    loose: frozenset[str] = frozenset()
    """Calls whose result text the model does not choose (an approver that failed)."""
    local: frozenset[str] = frozenset()
    """Calls of host tools: their handler answers ``ok`` or ``error`` (SPEC §3.1)."""
    history: _Link = None
    """The inputs taken, newest first, as the explorer would name them (its call ids, its
    unknown tool, no free-form texts): the events of a replay file."""
    unsent: tuple[tuple[str, int, Normal], ...] = ()
    """The calls whose request the model sent and the trace has not shown yet, each with
    the input that sent it and that request as owed: ``(call_id, batch, item)``."""

    def key(self) -> tuple[Any, ...]:
        """Equal for two candidates exactly when they are equal, and hashed fast: the state
        caches its hash, and a history is compared by identity (``_Refiner._link`` makes
        equal histories one object)."""
        return (
            self.state,
            self.owed,
            self.snapshots,
            self.loose,
            self.local,
            id(self.history),
            self.unsent,
        )

    def events(self) -> tuple[Event, ...]:
        taken: list[Event] = []
        link = self.history
        while link is not None:
            taken.append(link[0])
            link = link[1]
        return tuple(reversed(taken))


_Link = tuple[Event, Any] | None
"""A list that shares its tail: taking one more input copies nothing (a long trace)."""


def _with_spec(state: State, name: str, **changes: Any) -> State:
    bound = state.bound
    specs = tuple(evolve(s, **changes) if s.name == name else s for s in bound.servers)
    return evolve(state, bound=evolve(bound, servers=specs))


def _after_call_input(state: State) -> State:
    """``state`` with the bound a call's input was tried under put back. Its ``approval``
    is read when a call is accepted alone, and ``_calls`` sets it for each call; every
    candidate alive after a call's input took that input alike, so the value left here
    tells none apart (a mutant making it true is equivalent)."""
    return _with_bound(state, rearms=_FAR, approval=False)  # pragma: no mutate - see above


def _with_bound(state: State, **changes: Any) -> State:
    return evolve(state, bound=evolve(state.bound, **changes))


def _replaced(state: State, i: int) -> bool:
    """Server ``i`` answers with its replacement's listings (SPEC §3.7)."""
    return state.reconfigured and state.bound.servers[i].change == "changed"


def _with_listings(state: State, server: str, versions: tuple[Any, ...]) -> State:
    """``state`` with ``server``'s listings (its replacement's once replaced) set."""
    field = "replacement" if _replaced(state, state.bound.index(server)) else "versions"
    return _with_spec(state, server, **{field: versions})


@attrs.frozen
class RecentStatistics:
    """:meth:`RecentRules.statistics`: the answers kept, by kind."""

    initial: int
    enabled: int
    applied: int


class RecentRules:
    """``rules``' answers for the states met lately, kept: ``initial``, ``enabled``, and
    ``apply``'s transitions. The lockstep machine's runs, and the refinement of their
    traces, meet the same states again and again: every run starts from the same ones,
    and runs share their first events (in ``mcpbind check``'s machines and odometer,
    85-95% of these calls repeat one made before). Each answer is a pure function of a
    frozen bound, state and event, so a kept answer is the answer: kept by all three (a
    state's equality leaves its bound out, and refinement changes the bound). An ``apply`` that
    raises is not kept, nor is anything about a state that does not hash (a malformed
    trace's field). Bounded: past ``size`` entries of a kind, all of them are forgotten."""

    def __init__(self, rules: Rules, size: int = 4096) -> None:
        self.rules = rules
        self._size = size
        self._initial: dict[Any, Transition] = {}
        self._enabled: dict[Any, tuple[tuple[Event, ...], frozenset[Event]]] = {}
        self._applied: dict[Any, Transition] = {}

    def initial(self, bound: Bound) -> Transition:
        return self._kept(self._initial, bound, lambda: self.rules.initial(bound))

    def clear(self) -> None:
        """Forget every kept answer."""
        self._initial.clear()
        self._enabled.clear()
        self._applied.clear()

    def statistics(self) -> RecentStatistics:
        """How many answers of each kind are kept now."""
        return RecentStatistics(len(self._initial), len(self._enabled), len(self._applied))

    def enabled(self, state: State) -> tuple[Event, ...]:
        """``rules.enabled(state)``, in its order."""
        return self._guards(state)[0]

    def allows(self, state: State, event: Event) -> bool:
        """``event`` is in ``rules.enabled(state)`` (as ``Rules.step`` tests it)."""
        return _guard_key(event) in self._guards(state)[1]

    def apply(self, state: State, event: Event) -> Transition:
        """``rules.apply(state, event)``."""
        key = (state.bound, state, event)
        return self._kept(self._applied, key, lambda: self.rules.apply(state, event))

    def _guards(self, state: State) -> tuple[tuple[Event, ...], frozenset[Event]]:
        def compute() -> tuple[tuple[Event, ...], frozenset[Event]]:
            events = tuple(self.rules.enabled(state))
            return events, frozenset(events)

        return self._kept(self._enabled, (state.bound, state), compute)

    def _kept(self, kept: dict[Any, T], key: object, compute: Callable[[], T]) -> T:
        try:
            found = kept.get(key)
        except TypeError:  # a field that does not hash
            return compute()
        if found is None:
            if len(kept) >= self._size:
                kept.clear()
            found = kept[key] = compute()
        return found


class DirectRules:
    """:class:`RecentRules`' questions, asked of ``rules`` each time and kept nowhere. A
    trace's inputs past its first :data:`RECENT_INPUTS` take these: runs share their first
    events, not their later ones, so a long trace's later states are new and a kept answer
    would only be garbage the collector walks again and again (refinement would stop being
    linear in the trace, SPEC §14.5)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules

    def initial(self, bound: Bound) -> Transition:
        return self.rules.initial(bound)

    def enabled(self, state: State) -> tuple[Event, ...]:
        return tuple(self.rules.enabled(state))

    def allows(self, state: State, event: Event) -> bool:
        return _guard_key(event) in self.rules.enabled(state)

    def apply(self, state: State, event: Event) -> Transition:
        return self.rules.apply(state, event)


RECENT_INPUTS = 128
"""How many of a trace's first inputs ask :class:`RecentRules`; the rest ask
:class:`DirectRules`. A lockstep run (at most 30 steps) stays within it whole."""

RECENT = RecentRules(STANDARD)
"""The standard rules' recent answers, shared by every refinement that uses them and by
the lockstep machine."""


def recent(rules: Rules) -> RecentRules:
    """The shared :data:`RECENT` for the standard rules; for others (a mutant), a new one."""
    return RECENT if rules is STANDARD else RecentRules(rules)


class _Refiner:
    def __init__(self, header: TraceRecord, rules: Rules) -> None:
        self.rules = rules
        self.recent: RecentRules | DirectRules = recent(rules)
        self.bound, self.gating = bound_from_header(header)
        self.listings: dict[tuple[str, bool, int], tuple[tuple[ToolDef, ...], ...]] = {}
        """``(server, replaced, version)`` -> the listing its ``list_done`` showed."""
        self.servers = {s.name for s in self.bound.servers}
        """Every server named so far: the header's, and those a ``reconfigure`` added."""
        self.reconfigured = False
        self.replayable = True
        self.retired: dict[str, CallRecord] = {}
        """Calls that ended for good, by call_id (``_retire``)."""
        self.explorer_ids: dict[str, str] = {}
        """The trace's call_id -> the explorer's, given when a call is first offered."""
        self.reused = False
        """The ``call`` being taken reuses a call_id."""
        self.mcp_calls: set[str] = set()
        """The explorer's ids of accepted calls of MCP tools (a replay's gating)."""
        self.inputs = 0
        """Inputs taken so far: the index of the one being taken."""
        self.causes: dict[int, str] = {}
        self.floors: dict[tuple[str, object], int] = {}
        """``("result", None)`` -> the input that closed the host; ``("sent", server)`` ->
        that server's last disconnect, or the reconfiguration that removed it: an output
        owed since before it is not shown after it (``_floor``)."""
        """The inputs (by index) whose outputs an id of their own owes (``_CAUSE_IDS``)."""
        self.links: dict[tuple[Event, int], _Link] = {}
        """Every history link made, by its event and its tail's identity: equal histories
        are one object, so comparing two candidates' histories is an identity test, not a
        walk of the whole trace (the checker drops equal candidates at every input)."""

    def start(self) -> _Candidate:
        t = self.recent.initial(self.bound)
        return _Candidate(t.state, tuple((0, expected(o)) for o in t.outputs), ())

    # --- one input, every way the trace allows ---------------------------------------

    def variants(self, candidate: _Candidate, record: TraceRecord) -> Iterator[_Candidate]:
        """Each way the model can take ``record`` from ``candidate``."""
        state = candidate.state
        get = record.get
        kind = record.kind
        server = get("server")
        listing = ("refresh_requested", "list_page", "list_done", "list_failed")
        if kind in listing and server not in self.names():
            return
        if kind == "sample":
            shown = get("shown")
            for found in self._apply(candidate, state, Sample()):
                viewed = found if shown is None else _deferring(found, frozenset(shown))
                if viewed is not None:
                    yield viewed
        elif kind == "call":
            yield from self._calls(candidate, record)
        elif kind == "refresh_requested":
            yield from self._apply(candidate, state, RefreshRequested(server))
        elif kind == "list_page":
            yield from self._apply(candidate, self._pages(state, server, extra=2), ListPage(server))
        elif kind == "list_done":
            yield from self._list_done(candidate, record)
        elif kind == "list_failed":
            why = get("why") or "server error"
            yield from self._apply(candidate, state, ListFailed(server, why))
        elif kind == "list_changed" and server in self.names():
            i = state.bound.index(server)
            versions = listings(state, i)
            needed = state.servers[i].version + 2
            if len(versions) < needed:
                padded = versions + (_EMPTY_LISTING,) * (needed - len(versions))
                state = _with_listings(state, server, padded)
            yield from self._apply(candidate, state, ListChanged(server))
        elif kind in ("disconnect", "reconnect") and server in self.names():
            event = Disconnect(server) if kind == "disconnect" else Reconnect(server)
            yield from self._apply(candidate, state, event)
        elif kind == "stream_ended" and server in self.names():
            # The server ends its streams: the trace says so (SPEC §5.7).
            streaming = _with_spec(state, server, streams=True)
            yield from self._apply(candidate, streaming, StreamEnded(server))
        elif kind == "relisten" and server in self.names():
            yield from self._apply(candidate, state, Relisten(server))
        elif kind == "close":
            yield from self._apply(candidate, state, Close())
        elif kind == "reconfigure":
            yield from self._reconfigure(candidate, record)
        else:
            yield from self._call_input(candidate, record)

    def names(self) -> set[str]:
        return self.servers

    def reconfiguring(self, record: TraceRecord) -> None:
        """A ``reconfigure`` record: the servers it adds become names of the trace. One per
        trace: the model's bound scripts at most one reconfiguration (SPEC §3.7)."""
        if self.reconfigured:
            raise NotRefinable(record.line, "a second reconfigure, which refinement does not cover")
        self.reconfigured = True
        self.servers |= set(_listed(record, "added"))

    def _options(self, record: TraceRecord, name: str, options: Mapping[str, Any]) -> ServerSpec:
        """Server ``name`` as a ``reconfigure`` record's ``server_options`` configure it
        (defaults where it gives none); whether its calls may wait for approval too."""
        given = options.get(name)
        given = given if isinstance(given, Mapping) else {}
        others = self.gating - {name}
        # A set built, not a union of two disjoint sets (where ``|`` and ``^`` agree).
        self.gating = frozenset((*others, name)) if given.get("approval") else others
        return server_spec(record, name, given)

    def _reconfigured(
        self,
        record: TraceRecord,
        spec: ServerSpec,
        removed: list[str],
        changed: list[str],
        options: Mapping[str, Any],
    ) -> ServerSpec:
        """``spec`` with the change a ``reconfigure`` makes to it; a changed server's options
        are its replacement's (the model has one spec for both: the old session's options
        no longer matter once its calls ended)."""
        if spec.name in removed:
            return evolve(spec, change="removed")
        if spec.name not in changed:
            return spec
        if spec.name in options:
            spec = evolve(self._options(record, spec.name, options), versions=spec.versions)
        return evolve(spec, change="changed", replacement=(_EMPTY_LISTING, _EMPTY_LISTING))

    def _reconfigure(self, candidate: _Candidate, record: TraceRecord) -> Iterator[_Candidate]:
        """SPEC §3.7: the trace says which servers change; the model's bound learns it here
        (an added server joins it, absent until this input), then takes ``reconfigure``."""
        state = candidate.state
        bound = state.bound
        known = [s.name for s in bound.servers]
        added, removed, changed = (_listed(record, f) for f in ("added", "removed", "changed"))
        if set(added) & set(known) or not set(removed) | set(changed) <= set(known):
            return
        given = record.get("server_options")
        options: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        specs = [
            self._reconfigured(record, spec, removed, changed, options) for spec in bound.servers
        ]
        for name in added:
            specs.append(evolve(self._options(record, name, options), change="added"))
        registry = state.registry
        new = (SourceCatalog(mcp_source(name), 0, ()) for name in added)
        state = evolve(
            state,
            bound=evolve(bound, servers=tuple(specs)),
            servers=(*state.servers, *(ABSENT for _ in added)),
            registry=evolve(registry, catalogs=(*registry.catalogs, *new)),
        )
        yield from self._apply(candidate, state, Reconfigure())

    def _pages(self, state: State, server: str, extra: int) -> State:
        """The listing being read has at least ``pages + extra`` pages."""
        i = state.bound.index(server)
        refresh = state.servers[i].refresh
        if refresh is None:
            return state
        versions = list(listings(state, i))
        while len(versions) <= refresh.version:
            versions.append(_EMPTY_LISTING)
        versions[refresh.version] = ((),) * (refresh.pages + extra)
        return _with_listings(state, server, tuple(versions))

    def _list_done(self, candidate: _Candidate, record: TraceRecord) -> Iterator[_Candidate]:
        server = record.get("server")
        parsed = [listed_tool(entry) for entry in record.get("tools") or ()]
        tools = tuple(t for t in parsed if t is not None)
        if len(tools) != len(parsed):
            raise NotRefinable(record.line, "a tool is a name or an object with a string name")
        state = candidate.state
        i = state.bound.index(server)
        refresh = state.servers[i].refresh
        if refresh is None or not state.servers[i].connected:
            return
        tasks = record.get("tasks")
        if tasks is not None:
            state = _with_spec(state, server, tasks=bool(tasks))
        listing = ((),) * refresh.pages + (tools,)
        versions = list(listings(state, i))
        versions[refresh.version] = listing
        state = _with_listings(state, server, tuple(versions))
        key = (server, _replaced(state, i), refresh.version)
        if self.listings.setdefault(key, listing) != listing:
            self.replayable = False
        for found in self._apply(candidate, state, ListDone(server)):
            # The listing was read; the bound keeps no copy (it is hashed on hot paths).
            versions = list(listings(found.state, i))
            versions[refresh.version] = _EMPTY_LISTING
            yield evolve(found, state=_with_listings(found.state, server, tuple(versions)))

    def _calls(self, candidate: _Candidate, record: TraceRecord) -> Iterator[_Candidate]:
        state = candidate.state
        call_id = record.get("call_id")
        name = record.get("name")
        if not state.steps and not state.closed:
            return  # the model's calls belong to a step
        step = record.get("step")
        if not isinstance(step, int):
            step = len(state.steps) - 1
        if not 0 <= step < len(candidate.snapshots) and not state.closed:
            return
        if not state.closed and state.steps[step] is None:
            steps = list(state.steps)
            steps[step] = candidate.snapshots[step]
            state = evolve(state, steps=tuple(steps))
        retired = self.retired.get(call_id) if self.reused else None
        if retired is not None and state.call(call_id) is None:
            # Offered at an earlier input and ended since: the model refuses it again.
            state = evolve(state, calls=(*state.calls, retired))
        given = record.get("arguments_ok")
        arguments = (True, False) if given is None else (bool(given),)
        gated = (False, True) if self.gating else (False,)
        ways = [
            _with_bound(state, approval=gate)
            for gate in gated
            if not gate or self._may_gate(state, step, name)
        ]
        for ok in arguments:
            for gated_state in ways:
                event = Call(max(step, 0), call_id, name, ok)
                for found in self._apply(candidate, gated_state, event, checked=False):
                    local = self._local(found.state, step, name)
                    yield evolve(found, local=found.local | {call_id}) if local else found

    def _local(self, state: State, step: int, name: str) -> bool:
        """``name`` is a host tool in step ``step`` (its handler runs in the host)."""
        snapshot = state.steps[step] if 0 <= step < len(state.steps) else None
        binding = None if snapshot is None else snapshot.lookup(name)
        return binding is not None and binding.server is None

    def _may_gate(self, state: State, step: int, name: str) -> bool:
        snapshot = state.steps[step] if 0 <= step < len(state.steps) else None
        binding = None if snapshot is None else snapshot.lookup(name)
        return binding is not None and binding.server in self.gating

    def _call_input(self, candidate: _Candidate, record: TraceRecord) -> Iterator[_Candidate]:
        """An input about one call: its answer, its failure, the host's cancel, ..."""
        get = record.get
        call_id = get("call_id")
        kind = record.kind
        state = candidate.state
        record_of = state.call(call_id)
        if record_of is None and kind == "cancel":
            yield from self._cancel_of_no_pending_call(candidate, call_id)
            return
        if record_of is None:
            return
        events: list[tuple[State, Event]] = []
        if kind == "progress":
            yield candidate
            return
        if kind == "call_responded":
            events.append((state, CallResponded(call_id, bool(get("is_error")))))
        elif kind == "call_failed":
            if get("code") is not None:  # a JSON-RPC error answer: the server's own text
                candidate = evolve(candidate, loose=candidate.loose | {call_id})
            events.append((state, CallFailed(call_id, get("why") or "connection reset")))
        elif kind == "call_rejected":
            events.append((state, CallRejected(call_id)))
        elif kind == "session_expired":
            server = record_of.binding.server if record_of.binding else None
            if server is not None:  # the server forgets sessions: the trace says so (§8.13)
                events.append((_with_spec(state, server, sessions=True), SessionExpired(call_id)))
        elif kind == "cancel":
            events.append((state, Cancel(call_id)))
        elif kind == "approve":
            events.append((state, Approve(call_id)))
        elif kind == "deny":
            answer = get("answer")
            denied = Deny(call_id, "cancel" if answer == "cancel" else "decline")
            if answer not in (None, "decline", "cancel"):
                candidate = evolve(candidate, loose=candidate.loose | {call_id})
            events.append((state, denied))
        elif kind == "timeout":
            cap = get("cap")
            for fired in (False, True) if cap is None else (bool(cap),):
                # Which deadline fired is timing: the trace says, the guard follows.
                events.append(
                    (_with_bound(state, rearms=0 if fired else _FAR), Timeout(call_id, fired))
                )
        elif kind == "task_created":
            server = record_of.binding.server if record_of.binding else None
            if server is not None:
                events.append((_with_spec(state, server, tasks=True), TaskCreated(call_id)))
        elif kind == "task_status":
            status = get("status") or "completed"
            ends: dict[str, TaskEnd] = {"completed": "completed", "failed": "failed"}
            ends["cancelled"] = "cancelled"
            if status in ends:
                why = get("why") or "the server gave no reason"
                ended = TaskStatus(call_id, ends[status], bool(get("is_error")), why)
                events.append((state, ended))
        for before, event in events:
            for found in self._apply(candidate, before, event):
                yield evolve(found, state=_after_call_input(found.state))

    def _cancel_of_no_pending_call(
        self, candidate: _Candidate, call_id: str
    ) -> Iterator[_Candidate]:
        """SPEC §3.1: a cancel of a call that ended and left the state (``_retire``) is
        taken as the model takes it (nothing changes); of a call_id no accepted call has,
        it is no event of the model (its events name accepted calls): a stutter step."""
        retired = self.retired.get(call_id)
        if retired is not None:
            state = candidate.state
            state = evolve(state, calls=(*state.calls, retired))
            yield from self._apply(candidate, state, Cancel(call_id))
        elif call_id not in self.explorer_ids:
            yield candidate

    def _apply(
        self, candidate: _Candidate, state: State, event: Event, *, checked: bool = True
    ) -> Iterator[_Candidate]:
        if checked and not self._allowed(state, event):
            return
        try:
            t = self.recent.apply(state, event)
        # A safety net no trace is known to reach (the guard above and ``_calls``' checks
        # come first; 3,000 random two-edit changes of the conforming test traces raise
        # none): a trace that does ends as a divergence, not a traceback. Its types are not
        # mutated: none is raised, so a mutant dropping one cannot be told apart.
        except (EventNotEnabled, AssertionError, KeyError, IndexError):  # pragma: no mutate
            return
        snapshots = candidate.snapshots
        if isinstance(event, Sample):
            latest = t.state.steps[-1]
            assert latest is not None
            snapshots = (*snapshots, latest)
        elif isinstance(event, Call):
            # An accepted call of an MCP tool, counted now: once it ends, ``retire`` keeps
            # no binding to tell it by.
            record = t.state.call(event.call_id)
            if record is not None and record.binding is not None and record.binding.server:
                self.mcp_calls.add(self.explorer_ids.get(record.call_id, record.call_id))
        named = self._explorer_event(state, event)
        unsent = candidate.unsent
        for o in t.outputs:
            if type(o) is Sent and o.method in _CALL_METHODS:
                unsent = (*unsent, *((c, self.inputs, item) for c, item in _requests(state, t)))
                break
        yield evolve(
            candidate,
            state=self._retire(t.state),
            owed=(*candidate.owed, *((self.inputs, expected(o)) for o in t.outputs)),
            snapshots=snapshots,
            history=self._link(named, candidate.history),
            unsent=unsent,
        )

    def _link(self, event: Event, tail: _Link) -> _Link:
        """``(event, tail)``, the one such link: every tail was made here too, so two
        histories are equal exactly when they are the same object."""
        key = (event, id(tail))
        link = self.links.get(key)
        if link is None:
            link = self.links[key] = (event, tail)
        return link

    def taking(self, record: TraceRecord, state: State) -> None:
        """What the trace's next input, ``record``, tells the refiner whatever the
        candidate (``state`` the first one's)."""
        self.inputs += 1
        if self.inputs == RECENT_INPUTS:
            self.recent = DirectRules(self.rules)
        kind = record.kind
        if kind in _CAUSE_IDS:
            self.causes[self.inputs] = kind
        if kind == "close":
            self.floors.setdefault(("result", None), self.inputs)
        elif kind == "disconnect":
            self.floors[("sent", record.get("server"))] = self.inputs
        elif kind == "call":
            _resource_call_covered(state, record)
            self.offered(record.get("call_id"), closed=state.closed)
        elif kind == "reconfigure":
            for server in record.get("removed") or ():
                self.floors[("sent", server)] = self.inputs
            self.reconfiguring(record)

    def offered(self, call_id: str, *, closed: bool) -> None:
        """A ``call`` record: a new call_id gets the explorer's next one."""
        self.reused = call_id in self.explorer_ids
        if not self.reused and not closed:
            self.explorer_ids[call_id] = call_id_for(len(self.explorer_ids))

    def _retire(self, state: State) -> State:
        """Calls that ended and can get no late answer leave the state (so that a long
        trace costs time in proportion to it): kept aside, a reused call_id of one still
        finds it (``_calls``), exactly as the model would."""
        ended = [c for c in state.calls if c.phase == "done" and not c.late]
        if not ended:
            return state
        for record in ended:
            self.retired[record.call_id] = record
        kept = tuple(c for c in state.calls if c.phase != "done" or c.late)
        return evolve(state, calls=kept)

    def _explorer_event(self, state: State, event: Event) -> Event:
        """``event`` (taken in ``state``) as the explorer names it: its call ids (``c1``,
        ``c2``, ... in acceptance order), its unknown tool, the default free-form texts."""
        ids = self.explorer_ids
        if isinstance(event, Call):
            snapshot = state.steps[event.step] if event.step < len(state.steps) else None
            known = snapshot is not None and snapshot.lookup(event.name) is not None
            last = max(len(state.steps) - 1, 0)
            if state.closed or self.reused:
                # The explorer offers a reused call_id as its first call's, after close a
                # new one; either is refused.
                reused = call_id_for(0) if self.reused else call_id_for(len(ids))
                return Call(last, reused, UNKNOWN_TOOL)
            name = event.name if known else UNKNOWN_TOOL
            return Call(event.step, ids[event.call_id], name, event.arguments_ok)
        call_id = getattr(event, "call_id", None)
        if call_id is not None:
            event = evolve(event, call_id=ids.get(call_id, call_id))
        return _guard_key(event)

    def _allowed(self, state: State, event: Event) -> bool:
        key = _guard_key(event)
        call_id = getattr(event, "call_id", None)
        if call_id is not None and not isinstance(event, Call):
            record = state.call(call_id)
            # Never None: _call_input returns before any event of a call not in its state
            # (the states it passes differ in bound or specs, not calls), and a retired
            # call's cancel puts the record back first; so this ``False`` is never read.
            if record is None:
                return False  # pragma: no mutate (unreached: every caller's state holds it)
            return key in self.rules.call_events(record, None, state.bound)
        return self.recent.allows(state, event)


TOOL_SEARCH = "tool_search"
"""The host's search tool while a step defers (SPEC §11.9): a host tool of that step."""


def deferring_view(snapshot: Registry, shown: frozenset[str]) -> Registry | None:
    """A step's snapshot as a deferring host shows it (SPEC §11.9, §14.1 ``shown``): its
    plan and its router are the tools of ``snapshot`` named in ``shown``, plus
    ``tool_search``, a host tool, when ``shown`` names it. Both come from one set of
    bindings, so INV-2 holds of the view as of the snapshot; the model's rules then route
    the step's calls (a deferred tool is ``unsupported``). A name the snapshot does not
    hold is not a view of it: None. The one mapping from the model's snapshot to a
    deferring step: trace refinement and the lockstep machine both use it."""
    if not shown - {TOOL_SEARCH} <= set(snapshot.names()):
        return None
    catalogs = []
    for catalog in snapshot.catalogs:
        kept = tuple(b for b in catalog.bindings if b.name in shown)
        if catalog.source == BUILTIN and TOOL_SEARCH in shown:
            search = Binding(TOOL_SEARCH, BUILTIN, None, TOOL_SEARCH, True, 0)
            kept = tuple(sorted((*kept, search), key=lambda b: b.name))
        catalogs.append(evolve(catalog, bindings=kept))
    return evolve(snapshot, catalogs=tuple(catalogs))


def _deferring(candidate: _Candidate, shown: frozenset[str]) -> _Candidate | None:
    """The step just sampled, as the trace's ``shown`` says the host showed it."""
    state = candidate.state
    snapshot = state.steps[-1]
    assert snapshot is not None
    view = deferring_view(snapshot, shown)
    if view is None:
        return None
    return evolve(
        candidate,
        state=evolve(state, steps=(*state.steps[:-1], view)),
        snapshots=(*candidate.snapshots[:-1], view),
    )


# --- the check -----------------------------------------------------------------------------


def _every_server_started(records: Sequence[TraceRecord]) -> None:
    """The model starts every server: its first ``tools/list`` is sent in any trace it
    refines. A server of the header that no record names never started (it failed at
    once, or could not be spawned): not covered (SPEC §14.5)."""
    named = {record.get("server") for record in records[1:]}
    for name in records[0].get("servers") or ():
        if name not in named:
            raise NotRefinable(
                records[0].line,
                f"server {name!r} never started (no record names it), which refinement "
                "does not cover",
            )


def refine(records: Sequence[TraceRecord], rules: Rules = STANDARD) -> Refinement:
    """Replay ``records`` (a parsed trace) through ``rules``; raise :class:`NotRefinable`
    when the header does not give the bound."""
    refiner = _Refiner(records[0], rules)  # the header first: its own reasons come first
    _every_server_started(records)
    candidates = [refiner.start()]
    most = 1
    for record in records[1:]:
        if record.kind in OUTPUT_KINDS:
            item = observed(record)
            floor = _floor(refiner, item) if refiner.floors else 0
            request: tuple[object, bool] | None = None
            if item[0] == "sent" and item[2] in _CALL_METHODS:
                named = record.get("call_id")
                request = (named, named in refiner.explorer_ids)
            shown = [
                found
                for c in candidates
                if (found := _consume(c, item, floor, request)) is not None
            ]
            if not shown:
                violation = _extra(refiner, candidates[0], record, floor)
                return _failed(refiner, candidates[0], violation, most)
            candidates = shown
            continue
        if record.kind == "end":
            done = [c for c in candidates if not c.owed]
            if not done:
                violation = _missing(refiner, candidates[0], record)
                return _failed(refiner, candidates[0], violation, most)
            candidates = done
            break
        refiner.taking(record, candidates[0].state)
        if record.kind in _LISTING_ANSWERS:
            # SPEC §14.5: an answer never comes before its request.
            asked = [c for c in candidates if _asked(c, record)]
            if not asked:
                return _failed(
                    refiner, candidates[0], _unasked(refiner, candidates[0], record), most
                )
            candidates = asked
        unasked: list[_Candidate] = []
        if record.kind in _CALL_ANSWERS and any(c.unsent for c in candidates):
            # SPEC §14.5: nor does a call's answer come before its request.
            call_id = record.get("call_id")
            asked = []
            for c in candidates:
                (asked if _sent_request(c, call_id) is None else unasked).append(c)
            candidates = asked
        following = _Distinct()
        for candidate in candidates:
            for found in refiner.variants(candidate, record):
                following.add(found)
        if not following.kept:
            if unasked:
                violation = _unsent(refiner, unasked[0], record)
                return _failed(refiner, unasked[0], violation, most)
            return _failed(refiner, candidates[0], _not_allowed(candidates[0], record), most)
        candidates = following.kept
        most = max(most, len(candidates))
    first = candidates[0]
    return Refinement(None, first.events(), _replay_bound(refiner, first), most)


class _Distinct:
    """The candidates found for one input, each once, in the order found: what
    ``if found not in kept: kept.append(found)`` keeps, with candidates compared by
    :meth:`_Candidate.key`. Most inputs leave one or two (a scan is cheapest); a trace
    that leaves many is checked by hashing (each state hashes once, its hash cached),
    unless a value the trace put in a state does not hash (a malformed field): then by
    scanning, as before."""

    _SCAN = 4

    def __init__(self) -> None:
        self.kept: list[_Candidate] = []
        self._keys: list[tuple[Any, ...]] = []
        self._hashed: set[tuple[Any, ...]] | None = None
        self._hashable = True

    def add(self, found: _Candidate) -> None:
        if not self.kept:  # the first is kept: most inputs find no other
            self.kept.append(found)
            return
        if not self._keys:
            self._keys.append(self.kept[0].key())
        key = found.key()
        if self._hashed is not None:
            try:
                if key in self._hashed:
                    return
                self._hashed.add(key)
            except TypeError:
                self._hashed, self._hashable = None, False
                if key in self._keys:
                    return
        elif key in self._keys:
            return
        self._keys.append(key)
        if self._hashable and self._hashed is None and len(self._keys) > self._SCAN:
            try:
                self._hashed = set(self._keys)
            except TypeError:
                self._hashable = False
        self.kept.append(found)


def _resource_call_covered(state: State, record: TraceRecord) -> None:
    """SPEC §11.20: the model covers a read of a resource its step lists (the runtime
    writes its call as ``read_mcp_resource(<server>, <uri>)``); the two list tools and a
    read of a URI the step never listed are host tools the model has no rule for."""
    name, step = record.get("name"), record.get("step")
    if not isinstance(name, str):
        return
    covered = name not in RESOURCE_TOOLS
    if covered and name.startswith(READ_RESOURCE + "(") and isinstance(step, int):
        snapshot = state.steps[step] if 0 <= step < len(state.steps) else None
        covered = snapshot is not None and snapshot.lookup(name) is not None
    if not covered:
        raise NotRefinable(
            record.line, f"a call of {name}, a resource tool refinement does not cover (§11.20)"
        )


def _listed(record: TraceRecord, field: str) -> list[str]:
    """The server names a ``reconfigure`` record lists under ``field``, in its order."""
    value = record.get(field)
    return [str(name) for name in value] if isinstance(value, list) else []


_LISTING_ANSWERS = frozenset({"list_page", "list_done", "list_failed"})
"""The inputs that answer a ``tools/list`` request (SPEC §3.1)."""


def _request(candidate: _Candidate, record: TraceRecord) -> tuple[int, Normal] | None:
    """The oldest ``tools/list`` to the server of ``record`` (an answer of a listing) that
    the model sent and the trace has not shown: a listing is answered after it is sent."""
    server = record.get("server")
    for batch, item in candidate.owed:
        if item[0] == "sent" and item[1] == server and item[2] == "tools/list":
            return batch, item
    return None


def _asked(candidate: _Candidate, record: TraceRecord) -> bool:
    return _request(candidate, record) is None


def _unasked(refiner: _Refiner, candidate: _Candidate, record: TraceRecord) -> TraceViolation:
    return _before_its_request(refiner, record, _request(candidate, record))


def _before_its_request(
    refiner: _Refiner, record: TraceRecord, found: tuple[int, Normal] | None
) -> TraceViolation:
    """An answer recorded before ``found``, the request the model sends first."""
    assert found is not None
    batch, first = found
    fields = {k: v for k, v in record.fields.items() if k != "kind"}
    expected_text = f"first {first!r}, which the model sends before its answer"
    return TraceViolation(
        _owed_blame(refiner, batch, first), record.line, expected_text, f"{record.kind} {fields}"
    )


_CALL_METHODS = frozenset({"tools/call", "resources/read"})
"""The requests that send a call (SPEC §11.20: a resource's read is a call)."""

_CALL_ANSWERS = frozenset(
    ("call_responded", "call_failed", "call_rejected", "session_expired", "task_created")
) | {"progress"}
"""The inputs that answer a call's request, or come of it (a task, progress)."""


def _requests(before: State, t: Transition) -> Iterator[tuple[str, Normal]]:
    """The calls ``t`` sends (new in phase ``sent``, or sent again), each with its request
    as owed."""
    for record in t.state.calls:
        if record.phase != "sent":
            continue
        was = before.call(record.call_id)
        if was is not None and was.phase == "sent":
            continue
        binding = record.binding
        assert binding is not None
        assert binding.server is not None
        yield record.call_id, ("sent", binding.server, binding.method, binding.remote_name)


def _request_shown(
    unsent: tuple[tuple[str, int, Normal], ...], item: Normal, request: tuple[object, bool]
) -> tuple[tuple[str, int, Normal], ...] | None:
    """``unsent`` once the trace showed a call's request ``item``: the call it names is
    sent; None when it names a call of the trace (``request``: its ``call_id``, and
    whether a ``call`` offered it) that was not sent so. A request naming no call, or one
    the trace never offered (a host may write its JSON-RPC id), stands for the oldest
    call of that request."""
    call_id, known = request
    first = None
    for index, (owner, _, owed) in enumerate(unsent):
        if owed != item:
            continue
        if owner == call_id:
            return unsent[:index] + unsent[index + 1 :]
        if first is None:
            first = index
    if known:
        return None
    if first is None:
        return unsent
    return unsent[:first] + unsent[first + 1 :]


def _sent_request(candidate: _Candidate, call_id: object) -> tuple[int, Normal] | None:
    """The request of call ``call_id`` the model sent and the trace has not shown."""
    for owner, batch, item in candidate.unsent:
        if owner == call_id:
            return batch, item
    return None


def _unsent(refiner: _Refiner, candidate: _Candidate, record: TraceRecord) -> TraceViolation:
    return _before_its_request(refiner, record, _sent_request(candidate, record.get("call_id")))


def _failed(
    refiner: _Refiner, candidate: _Candidate, violation: TraceViolation, most: int
) -> Refinement:
    return Refinement(violation, candidate.events(), _replay_bound(refiner, candidate), most)


def _floor(refiner: _Refiner, item: Normal) -> int:
    """The first input whose outputs may still show ``item`` (SPEC §14.5): a ``result``
    made before the ``close`` is shown before it, a request to a server before its
    ``disconnect`` or the ``reconfigure`` that removed it."""
    if item[0] == "result":
        return refiner.floors.get(("result", None), 0)
    if item[0] == "sent":
        return refiner.floors.get(("sent", item[1]), 0)
    return 0


def _published_first(candidate: _Candidate, index: int, item: Normal) -> Normal | None:
    """For a ``refresh_outcome`` owed at ``index``: an install of its server owed before
    it (a refresh publishes, then reports its outcome: SPEC §14.5)."""
    if item[0] != "refresh_outcome":
        return None
    source = mcp_source(str(item[1]))
    for _, owed in candidate.owed[:index]:
        if owed[0] == "published" and owed[2] == source and owed[3]:
            return owed
    return None


def _consume(
    candidate: _Candidate,
    item: Normal,
    floor: int = 0,
    request: tuple[object, bool] | None = None,
) -> _Candidate | None:
    """``candidate`` once the trace showed ``item``: the oldest equal output it owes from
    input ``floor`` on, unless an older one of the same call is still owed (each call's
    order is kept), or, for an outcome, an install of its server; a call's ``request``
    (:func:`_request_shown`) is no longer unsent."""
    loose, local = candidate.loose, candidate.local
    want = _loosen(item, loose, local)
    call_id = _call_of(item)
    for index, (batch, owed) in enumerate(candidate.owed):
        if _loosen(owed, loose, local) == want:
            if batch < floor or _published_first(candidate, index, item) is not None:
                continue
            if call_id is not None and any(
                b < batch and _call_of(o) == call_id for b, o in candidate.owed[:index]
            ):
                return None
            owed_now = candidate.owed[:index] + candidate.owed[index + 1 :]
            if request is None:
                return evolve(candidate, owed=owed_now)
            unsent = _request_shown(candidate.unsent, item, request)
            if unsent is None:
                return None
            return evolve(candidate, owed=owed_now, unsent=unsent)
    return None


def _loosen(item: Normal, loose: frozenset[str], local: frozenset[str]) -> Normal:
    if item[0] == "result" and item[1] in local and item[2] in ("ok", "error"):
        return ("result", item[1], "ok", None)  # the host tool's handler answered
    if item[0] == "result" and item[1] in loose:
        return (*item[:3], None)
    return item


def _owed_text(candidate: _Candidate) -> str:
    shown = [repr(item) for _, item in candidate.owed]
    return f"[{', '.join(shown)}]" if shown else "nothing"


def _extra(
    refiner: _Refiner, candidate: _Candidate, record: TraceRecord, floor: int = 0
) -> TraceViolation:
    item = observed(record)
    expected_text = f"one of the outputs the model owes: {_owed_text(candidate)}"
    blamed = _blame(candidate.state, item)
    call_id = _call_of(item)
    earlier = [
        (batch, o) for batch, o in candidate.owed if call_id is not None and _call_of(o) == call_id
    ]
    at = [i for i, (_, o) in enumerate(candidate.owed) if o == item]
    stale = [i for i in at if candidate.owed[i][0] < floor]
    published = _published_first(candidate, at[0], item) if at else None
    if stale and len(stale) == len(at):
        # Owed, but since before the close (a result) or the disconnect (a request).
        if item[0] == "result":
            blamed, when = "INV-12", "the close"
        elif blamed == "INV-16":
            when = f"the reconfiguration that removed {item[1]}"
        else:
            blamed, when = "INV-8", f"{item[1]}'s disconnect"
        expected_text = f"{item!r} before {when}, as the model made it"
    elif published is not None:
        blamed = "INV-3"
        expected_text = f"first {published!r}, which the model publishes before its outcome"
    elif item in [o for _, o in candidate.owed] and earlier and earlier[0][1] != item:
        # Owed, but after an output of the same call the trace has not shown: that one.
        batch, first = earlier[0]
        blamed = _owed_blame(refiner, batch, first)
        expected_text = f"first {first!r}, which the model owes before it"
    elif item[0] == "result":
        owed = [(b, o) for b, o in candidate.owed if o[0] == "result" and o[1] == item[1]]
        if owed:  # the call's result, with another status or text than the model's
            batch, first = owed[0]
            blamed = _CAUSE_IDS.get(refiner.causes.get(batch, "")) or _blame_status(
                candidate.state, str(first[2]), str(item[2])
            )
    return TraceViolation(blamed, record.line, expected_text, repr(item))


_STATUS_IDS = {
    "denied": "INV-10",
    "unsupported": "INV-2",
    "unavailable": "INV-2",
    "cancelled": "INV-7",
    "timed_out": "INV-7",
}


def _blame_status(state: State, owed: str, seen: str) -> str:
    """A result whose status or text differs from the model's: the invariant that says
    which status that call must end in (SPEC §14.5)."""
    if state.closed:
        return "INV-12"
    for status in (owed, seen):
        if status in _STATUS_IDS:
            return _STATUS_IDS[status]
    if "failed" in (owed, seen) and any(not s.connected for s in state.servers):
        return "INV-8"
    return "REFINE"


#: Inputs whose outputs their own id owes, whatever the output (SPEC §14.5): a relisten's
#: refresh (LIVE-3), what an expired session's replacement does (INV-14).
_CAUSE_IDS = {"relisten": "LIVE-3", "session_expired": "INV-14"}

#: What an output the trace never shows is owed under (SPEC §14.5).
_OWED_IDS = {
    "published": "INV-1",
    "refresh_outcome": "INV-3",
    "result": "LIVE-1",
    "refused": "INV-4",
    "late_dropped": "INV-4",
    "tools/call": "INV-2",
    "tools/list": "LIVE-2",
    "notifications/cancelled": "INV-7",
    "tasks/cancel": "INV-7",
    "close": "INV-12",
}


def _owed_blame(refiner: _Refiner, batch: int, item: Normal) -> str:
    """The id an owed output belongs to: its input's own (``_CAUSE_IDS``), else its kind's."""
    cause = _CAUSE_IDS.get(refiner.causes.get(batch, ""))
    if cause is not None:
        return cause
    return _OWED_IDS.get(str(item[2] if item[0] == "sent" else item[0]), "REFINE")


def _missing(refiner: _Refiner, candidate: _Candidate, record: TraceRecord) -> TraceViolation:
    expected_text = f"by the end, the outputs the model owes: {_owed_text(candidate)}"
    batch, first = candidate.owed[0]
    return TraceViolation(_owed_blame(refiner, batch, first), record.line, expected_text, "none")


def _not_allowed(candidate: _Candidate, record: TraceRecord) -> TraceViolation:
    fields = {k: v for k, v in record.fields.items() if k != "kind"}
    if record.kind == "sample" and record.get("shown") is not None:
        # The step shows a tool its registry state does not hold (SPEC §11.9).
        expected_text = "a step that shows tools of its registry state only (and tool_search)"
        return TraceViolation("INV-2", record.line, expected_text, f"sample {fields}")
    expected_text = f"an input the model allows here (SPEC §3.1), not {record.kind}"
    return TraceViolation("REFINE", record.line, expected_text, f"{record.kind} {fields}")


def _blame(state: State, item: Normal | None) -> str:
    """The invariant a differing output belongs to (SPEC §14.5, the table)."""
    if item is None:
        return "REFINE"
    kind = item[0]
    if kind == "published":
        return "INV-1" if item[1] != state.registry.generation else "INV-3"
    if kind == "refresh_outcome":
        return "INV-3"
    if kind in ("refused", "late_dropped"):
        return "INV-4"
    if kind == "sent":  # pragma: no mutate - only "result" is left, and it sorts before
        method, server = item[2], item[1]
        i = state.bound.index(server) if server in [s.name for s in state.bound.servers] else -1
        if i >= 0 and not state.servers[i].present:
            return "INV-16"  # nothing reaches an absent server (SPEC §3.7)
        if method in _SIGNALS:
            return "INV-12" if state.closed else "INV-7"
        if method == "close":
            return "INV-12"
        if method == "tools/list":
            return "LIVE-2"
        if i >= 0 and not state.servers[i].connected:
            return "INV-8"
        mine = [c for c in state.calls if c.binding and c.binding.server == server]
        phases = {c.phase for c in mine}
        expired = any(c.phase == "retrying" and c.expired for c in mine)
        for phase, blamed in (
            ("approval", "INV-10"),
            ("queued", "INV-9"),
            ("starting", "INV-11"),
            ("retrying", "INV-14" if expired else "INV-13"),
        ):
            if phase in phases:
                return blamed
        return "INV-2"
    if kind == "result":
        call = state.call(str(item[1]))
        return _blame_result(state, call, str(item[2]))
    return "REFINE"


def _blame_result(state: State, call: CallRecord | None, status: str) -> str:
    if state.closed:
        return "INV-12"
    if call is None or call.results:
        return "INV-4"
    if status == "denied" or call.phase == "approval":
        return "INV-10"
    if status in ("unsupported", "unavailable"):
        return "INV-2"
    return "REFINE"


# --- replay files ------------------------------------------------------------------------


def _replay_bound(refiner: _Refiner, candidate: _Candidate) -> Bound | None:
    """A bound in which the replay's events are the explorer's own: every listing at its
    version, the steps and calls counted; None when no one bound can hold the trace (a
    server listed two catalogs with no ``list_changed`` between them; gating that
    covers some calls only)."""
    if not refiner.replayable:
        return None
    events = candidate.events()
    ids = refiner.explorer_ids
    gated = {ids.get(c.call_id, c.call_id) for c in candidate.state.calls if c.phase == "approval"}
    gated |= {e.call_id for e in events if isinstance(e, (Approve, Deny))}
    if gated and gated != refiner.mcp_calls:
        return None
    bound = candidate.state.bound
    specs = []
    for spec in bound.servers:
        changes: dict[str, Any] = {}
        for field, replaced in (("versions", False), ("replacement", True)):
            if replaced and spec.change != "changed":
                continue
            known = {
                v: listing
                for (s, r, v), listing in refiner.listings.items()
                if s == spec.name and r == replaced
            }
            count = max([*known, len(getattr(spec, field)) - 1, 0]) + 1
            changes[field] = tuple(known.get(v, _EMPTY_LISTING) for v in range(count))
        specs.append(evolve(spec, **changes))
    samples = sum(1 for e in events if isinstance(e, Sample))
    return evolve(
        bound,
        servers=tuple(specs),
        max_steps=max(samples, 1),
        max_calls=max(len(ids), 1),
        approval=bool(gated),
        rearms=2,
    )


def replay_data(refinement: Refinement, *, source: str, line: int) -> dict[str, Any]:
    """A replay of a refined trace's inputs (SPEC §14.5): the bound and the events, in
    the form :func:`mcpbind.model.explore.replay` and ``mcpbind check --replay`` read."""
    from .bounds import describe  # noqa: PLC0415 - rare
    from .explore import format_event  # noqa: PLC0415 - rare

    data: dict[str, Any] = {
        "source": source,
        "line": line,
        "events": [format_event(e) for e in refinement.events],
    }
    if refinement.bound is not None:
        data["bound"] = describe(refinement.bound)
        data["policy"] = refinement.bound.policy
    return data
