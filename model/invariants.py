"""One predicate per invariant of SPEC §4 (INV-1..INV-16), over states and transitions.

A state predicate sees one reachable state; a transition predicate sees the state
before, the event and the transition. Each returns ``None`` when the invariant holds
and a one-line explanation when it does not. The liveness properties LIVE-1..LIVE-3
need the whole reachable graph and live in :mod:`mcpbind.model.explore`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Literal

import attrs

from . import texts
from .naming import is_mcp_source, source_owner
from .rules import STANDARD, flat_tools, left_out, listings
from .values import (
    OUTPUT_KIND,
    Approve,
    Bound,
    Call,
    CallFailed,
    CallRejected,
    Cancel,
    Close,
    Deny,
    Disconnect,
    Event,
    EventKind,
    ListDone,
    ListFailed,
    Listing,
    OutputKind,
    Published,
    Reconfigure,
    RefreshOutcome,
    Refused,
    Result,
    Sent,
    ServerSpec,
    SessionExpired,
    State,
    Timeout,
    ToolDef,
    Transition,
)

__all__ = ["INVARIANTS", "STEP_CHECK_IDS", "Invariant", "check_state", "check_transition"]

StatePredicate = Callable[[State], str | None]
TransitionPredicate = Callable[[State, Event, Transition], str | None]
Trigger = OutputKind | EventKind | Literal["registry", "steps"]
"""What a transition touches: an output of that kind, an event of that kind, the registry
or the step snapshots (changed)."""


@attrs.frozen
class Invariant:
    id: str
    title: str
    state: StatePredicate | None = None
    transition: TransitionPredicate | None = None
    triggers: frozenset[Trigger] = frozenset()
    """What a transition must touch for ``transition`` to be able to fail: output kinds,
    ``registry``/``steps`` (changed), ``call``/``disconnect`` (event kinds)."""


# --- INV-1 one generation per refresh ---------------------------------------------------


def inv_1_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-1: a refresh that installs advances G by exactly 1, and so does the removal of
    a failed replacement's old catalog; a reconfiguration by 1 when it empties a catalog,
    all its publications carrying that one generation (SPEC §3.7); anything else by 0."""
    if t.state.registry is before.registry and not t.outputs:
        return None
    g0, g1 = before.registry.generation, t.state.registry.generation
    published = [o for o in t.outputs if isinstance(o, Published)]
    if isinstance(event, Reconfigure):
        if g1 - g0 != (1 if published else 0):
            return f"the reconfiguration moved G {g0}->{g1} with {len(published)} publication(s)"
        apart = sorted({p.generation for p in published} - {g0 + 1})
        if apart:
            return f"the reconfiguration published generation(s) {apart}, not all {g0 + 1}"
        return None
    installed = [o for o in t.outputs if isinstance(o, RefreshOutcome) and o.status == "installed"]
    removals = [
        o
        for o in t.outputs
        if isinstance(o, RefreshOutcome)
        and o.status == "rejected"
        and o.generation > g0
        and before.servers[before.bound.index(o.server)].replacing
    ]
    changes = len(installed) + len(removals)
    if g1 < g0:
        return f"generation went back from {g0} to {g1}"
    if g1 - g0 != changes or len(published) != changes:
        return (
            f"generation moved {g0}->{g1} with {len(installed)} installed refresh(es), "
            f"{len(removals)} removal(s) of a replaced catalog and {len(published)} "
            "publication(s)"
        )
    if t.state.registry != before.registry and g1 == g0:
        return f"registry changed without a new generation (still {g0})"
    for k, pub in enumerate(published):
        if pub.generation != g0 + k + 1:
            return f"publication numbered {pub.generation}, expected {g0 + k + 1}"
    return None


def inv_1_state(state: State) -> str | None:
    """INV-1: every published G names exactly one registry state."""
    seen = {state.registry.generation: state.registry.catalogs}
    for snapshot in state.steps:
        if snapshot is None:
            continue
        other = seen.setdefault(snapshot.generation, snapshot.catalogs)
        if other != snapshot.catalogs:
            return f"generation {snapshot.generation} names two different registry states"
    return None


# --- INV-2 plan/router consistency ------------------------------------------------------


def inv_2_state(state: State) -> str | None:
    """INV-2: every running call holds the binding its step captured at sample time."""
    for record in state.calls:
        if record.step < 0:
            continue  # retired: checked when it ended
        snapshot = state.steps[record.step]
        if snapshot is None:
            return f"{record.call_id} runs on step {record.step}, whose snapshot was dropped"
        captured = snapshot.lookup(record.name)
        if record.binding != captured:
            return (
                f"{record.call_id} runs {record.name} as {record.binding}, but step "
                f"{record.step} captured {captured}"
            )
    return None


def inv_2_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-2: a sampled step never changes; a call resolves through its step's binding."""
    if t.state.steps is not before.steps:
        for index, snapshot in enumerate(before.steps):
            after = t.state.steps[index]
            if after is not None and after != snapshot:
                return f"step {index} changed after it was sampled"
    if not isinstance(event, Call) or before.call(event.call_id) is not None or before.closed:
        return None  # a call after close is refused and changes nothing (INV-12)
    snapshot = before.steps[event.step]
    if snapshot is None:
        return f"{event.call_id} was issued on step {event.step}, whose snapshot was dropped"
    captured = snapshot.lookup(event.name)
    for out in t.outputs:
        mine = isinstance(out, Result) and out.call_id == event.call_id
        if mine and isinstance(out, Result) and (out.status == "unsupported") != (captured is None):
            return (
                f"{event.call_id}: {event.name} ended {out.status}, but step "
                f"{event.step} captured {captured}"
            )
        if not (isinstance(out, Sent) and out.method in ("tools/call", "resources/read")):
            continue
        # A read (SPEC §11.20) is sent for the URI the step listed, a call for its tool.
        bound = (
            None if captured is None else (captured.server, captured.method, captured.remote_name)
        )
        if (out.server, out.method, out.detail) != bound:
            return (
                f"{event.call_id}: sent {out.detail!r} to {out.server}, but step "
                f"{event.step} bound {event.name} to {captured}"
            )
    return None


# --- INV-3 no half-installed catalogs ---------------------------------------------------


def offered(spec: ServerSpec, tools: tuple[ToolDef, ...]) -> frozenset[str]:
    """The raw names a whole valid listing installs: filtered (SPEC §5.4), without the
    tools the host leaves out."""
    return frozenset(t.name for t in STANDARD.filter_tools(spec, tools) if not left_out(spec, t))


@functools.cache
def complete_catalogs(bound: Bound) -> dict[str, frozenset[frozenset[str]]]:
    """Per source: the raw tool sets a whole valid listing can install."""
    allowed: dict[str, frozenset[frozenset[str]]] = {}
    for spec in bound.servers:
        sets: set[frozenset[str]] = {frozenset()}
        for listing in (*spec.versions, *spec.replacement):  # SPEC §3.7: a replacement's too
            tools = tuple(tool for page in listing for tool in page)
            if all(t.valid for t in tools):
                sets.add(offered(spec, tools))
        allowed[spec.source] = frozenset(sets)
    return allowed


def inv_3_state(state: State) -> str | None:
    """INV-3: each source's catalog is exactly one whole validated listing."""
    allowed = complete_catalogs(state.bound)
    for catalog in state.registry.catalogs:
        if not is_mcp_source(catalog.source):
            continue
        remotes = catalog.remote_names()
        if remotes not in allowed[catalog.source]:
            return f"{catalog.source} installed {sorted(remotes)}, which no whole listing yields"
        if catalog.generation == 0 and remotes:
            return f"{catalog.source} shows tools without any install"
        if any(b.source_generation != catalog.generation for b in catalog.bindings):
            return f"{catalog.source} mixes bindings of two installs"
    return None


def inv_3_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-3: a publication installs the whole validated listing its refresh read, minus
    the tools left out; a listing is rejected as invalid only for an invalid tool, and
    every tool left out is reported."""
    if isinstance(event, ListDone):
        problem = _listing_outcome(before, event, t)
        if problem is not None:
            return problem
    for out in t.outputs:
        if not isinstance(out, Published) or not is_mcp_source(out.source):
            continue
        server = source_owner(out.source)
        i = before.bound.index(server)
        spec = before.bound.servers[i]
        refresh = before.servers[i].refresh
        if not out.names and (isinstance(event, Reconfigure) or before.servers[i].replacing):
            continue  # a removal (SPEC §3.7): INV-15 says when one is due
        if not isinstance(event, ListDone) or event.server != server or refresh is None:
            return f"{out.source} published by {event.kind}, not by the end of its listing"
        versions = listings(before, i)
        if refresh.pages + 1 != len(versions[refresh.version]):
            return f"{out.source} published after {refresh.pages + 1} page(s) of a longer listing"
        tools = tuple(tool for page in versions[refresh.version] for tool in page)
        if not all(tool.valid for tool in tools):
            return f"{out.source} published from a listing with an invalid tool"
        expected = offered(spec, tools)
        catalog = t.state.registry.catalog(out.source)
        installed = catalog.remote_names()
        if installed != expected:
            return f"{out.source} installed {sorted(installed)}, the listing had {sorted(expected)}"
        uris = frozenset(tool.name for tool in tools if tool.resource)
        if catalog.uris() != uris:  # SPEC §11.20: the resources come with the same listing
            return (
                f"{out.source} installed resources {sorted(catalog.uris())}, listed {sorted(uris)}"
            )
    return None


def _listing_outcome(before: State, event: ListDone, t: Transition) -> str | None:
    """The outcome of a whole listing: ``invalid`` only for an invalid tool, and the tools
    left out named (SPEC §5.4)."""
    i = before.bound.index(event.server)
    spec = before.bound.servers[i]
    refresh = before.servers[i].refresh
    if refresh is None:
        return None
    valid, excluded = _listing_facts(spec, listings(before, i)[refresh.version])
    for out in t.outputs:
        if not isinstance(out, RefreshOutcome) or out.server != event.server:
            continue
        if out.status == "rejected" and out.kind == "invalid" and valid:
            return f"{event.server}: a listing whose tools are all valid was rejected: {out.reason}"
        if out.status != "rejected" and tuple(e.tool for e in out.excluded) != excluded:
            reported = [e.tool for e in out.excluded]
            return f"{event.server} left out {list(excluded)} but reported {reported}"
    return None


@functools.cache
def _listing_facts(spec: ServerSpec, listing: Listing) -> tuple[bool, tuple[str, ...]]:
    """Whether every tool of ``listing`` is valid, and the tools the host leaves out."""
    tools = flat_tools(listing)
    valid = all(tool.valid for tool in tools)
    excluded = tuple(
        tool.name for tool in STANDARD.filter_tools(spec, tools) if left_out(spec, tool)
    )
    return valid, excluded


# --- INV-4 one terminal result per call_id ----------------------------------------------


def inv_4_state(state: State) -> str | None:
    """INV-4: an ended call has exactly one result; a running call has none."""
    ids = [c.call_id for c in state.calls]
    if len(ids) != len(set(ids)):
        return "two calls share a call_id"
    for record in state.calls:
        expected = 1 if record.phase == "done" else 0
        if record.results != expected:
            return f"{record.call_id} ({record.phase}) has {record.results} terminal results"
    return None


def inv_4_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-4: a result only for a call that had none; a reused call_id changes nothing."""
    if not t.outputs:
        return None
    seen: set[str] = set()
    for out in t.outputs:
        if not isinstance(out, Result):
            continue
        if out.call_id in seen:
            return f"two results for {out.call_id} in one transition"
        seen.add(out.call_id)
        previous = before.call(out.call_id)
        if previous is not None and previous.phase == "done":
            return f"second terminal result for {out.call_id} ({out.status}) after it had ended"
    if (
        isinstance(event, Call)
        and before.call(event.call_id) is not None
        and t.state.calls != before.calls
    ):
        return f"reused call_id {event.call_id} was accepted"
    return None


# --- INV-5 namespace isolation ----------------------------------------------------------


def inv_5_state(state: State) -> str | None:
    """INV-5: public names are unique across all sources."""
    names = state.registry.names()
    if len(names) != len(set(names)):
        twice = {n for n in names if names.count(n) > 1}  # pragma: no mutate - n is in names
        dupes = sorted(twice)
        return f"names held twice: {dupes}"
    return None


def inv_5_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-5: one publication replaces one source and touches no other source's names."""
    if t.state.registry is before.registry:
        return None
    published = {o.source for o in t.outputs if isinstance(o, Published)}
    for old, new in zip(before.registry.catalogs, t.state.registry.catalogs, strict=True):
        if old != new and old.source not in published:
            return f"{old.source} changed although only {sorted(published)} was replaced"
        if not is_mcp_source(old.source) and old != new:
            return f"the non-MCP source {old.source} changed"
    return None


# --- INV-6 stable names -----------------------------------------------------------------


def inv_6_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-6: while (server, tool) stays listed, its public name does not change."""
    if t.state.registry is before.registry:
        return None
    old = {(b.server, b.remote_name): b.name for c in before.registry.catalogs for b in c.bindings}
    for catalog in t.state.registry.catalogs:
        for b in catalog.bindings:
            name = old.get((b.server, b.remote_name))
            if name is not None and name != b.name:
                return f"{b.server}/{b.remote_name} was renamed from {name} to {b.name}"
    return None


# --- INV-7 cancellation is delivered ----------------------------------------------------


CANCEL_SIGNALS = ("notifications/cancelled", "tasks/cancel")
"""INV-7: the two ways to cancel at the server: a request, and a task (SPEC §8.12)."""


def inv_7_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-7: an in-flight call ended by cancel/timeout (or a task given up after a failed
    poll) gets exactly one cancellation signal at its server, and no other call does:
    ``tasks/cancel`` for a call that runs as a task, never ``notifications/cancelled``;
    ``notifications/cancelled`` otherwise."""
    if not t.outputs:
        return None
    given_up = isinstance(event, CallFailed)  # a failed poll gives a task up (SPEC §8.12)
    for out in t.outputs:
        if isinstance(out, Sent):
            if out.method in CANCEL_SIGNALS:
                break
        elif isinstance(out, Result) and (given_up or out.status in ("cancelled", "timed_out")):
            break
    else:
        return None  # no call owed a cancellation and none was sent
    wanted: dict[str, list[str]] = {}
    for out in t.outputs:
        if not isinstance(out, Result):
            continue
        record = before.call(out.call_id)
        if record is None or record.phase not in ("sent", "task"):
            continue
        if out.status in ("cancelled", "timed_out") or (given_up and record.phase == "task"):
            signal = "tasks/cancel" if record.phase == "task" else "notifications/cancelled"
            wanted[out.call_id] = [signal]
    sent: dict[str, list[str]] = {}
    for out in t.outputs:
        if isinstance(out, Sent) and out.method in CANCEL_SIGNALS:
            sent.setdefault(out.detail, []).append(out.method)
            i = before.bound.index(out.server)
            if not before.servers[i].connected:
                return f"cancellation sent to disconnected server {out.server}"
    for call_id in sorted(wanted.keys() | sent.keys()):
        if wanted.get(call_id, []) != sent.get(call_id, []):
            got, owed = sent.get(call_id, []), wanted.get(call_id, [])
            return f"{call_id}: sent {got} to cancel it, owed {owed}"
    return None


# --- INV-8 disconnect fails fast, loses nothing -----------------------------------------


def inv_8_state(state: State) -> str | None:
    """INV-8: nothing of a disconnected server is in flight (a call still waiting for its
    approval has sent nothing and is checked again once approved)."""
    # strict only asserts the model's one state per spec (the initial state, a
    # reconfiguration): dropping it is an equivalent mutant (seed 101); so below
    for spec, server in zip(state.bound.servers, state.servers, strict=True):  # pragma: no mutate
        if server.connected:
            continue
        if server.refresh is not None:
            return f"refresh of disconnected {spec.name} still in flight"
        for record in state.calls:
            if record.binding is None or record.binding.server != spec.name:
                continue
            if record.phase in ("queued", "sent", "retrying", "task"):
                return f"{record.call_id} to disconnected {spec.name} is still {record.phase}"
            if record.late:
                return f"{record.call_id} awaits a late answer from disconnected {spec.name}"
    return None


def inv_8_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-8: a disconnect keeps the catalog (a replacement's old one aside, INV-15);
    calls to a disconnected server fail at once."""
    if not t.outputs:
        return None
    if (
        isinstance(event, Disconnect)
        and t.state.registry != before.registry
        and not before.servers[before.bound.index(event.server)].replacing
    ):
        return f"disconnect of {event.server} changed the registry"
    # What close and a reconfiguration send to end a session (owed cancellations, then
    # the session's end) goes to servers connected until their sessions close (INV-12,
    # INV-16); anything else to servers still connected after the event.
    ending = isinstance(event, Close | Reconfigure)
    for out in t.outputs:
        if isinstance(out, Sent):
            i = before.bound.index(out.server)
            closing = ending and out.method in ("close", *CANCEL_SIGNALS)
            servers = before.servers if closing else t.state.servers
            if not servers[i].connected:
                return f"{out.method} sent to disconnected {out.server}"
    return None


# --- INV-9 the exclusive lane -----------------------------------------------------------


def inv_9_state(state: State) -> str | None:
    """INV-9: at most one exclusive call of a step is in flight (or holds its lane while
    it waits for its retry, SPEC §8.9)."""
    busy: dict[int, str] = {}
    for record in state.calls:
        if record.exclusive and record.phase in ("sent", "retrying", "task"):
            other = busy.setdefault(record.step, record.call_id)
            if other != record.call_id:
                return f"exclusive calls {other} and {record.call_id} in flight together"
    return None


# --- INV-10 approval gates sending ------------------------------------------------------


def inv_10_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-10: with gating active, a call leaves approval only by approve (then the usual
    checks), deny (``denied``, nothing sent) or cancel; nothing times out while waiting."""
    gated = before.bound.approval
    approving = event.call_id if isinstance(event, Approve) else None
    for record in t.state.calls if gated else ():
        old = before.call(record.call_id)
        old_phase = None if old is None else old.phase
        if old_phase not in (None, "approval") or record.phase in ("approval", "done"):
            continue
        if gated and record.call_id != approving:
            return f"{record.call_id} became {record.phase} without an approval ({event.kind})"
    approved = isinstance(event, Approve)
    for out in t.outputs:
        if not isinstance(out, Result):
            continue
        status = out.status
        if status == "denied":
            old = before.call(out.call_id)
            waiting = old is not None and old.phase == "approval"
            if not (waiting and isinstance(event, Deny)):
                return f"{out.call_id} ended denied without waiting for approval and a deny"
        elif status != "cancelled" and not approved:
            old = before.call(out.call_id)
            if old is not None and old.phase == "approval":
                return f"{out.call_id} ended {status} while it waited for approval"
    if isinstance(event, Deny) and any(
        isinstance(out, Sent) and out.method == "tools/call" for out in t.outputs
    ):
        return f"deny of {event.call_id} sent tools/call"
    return None


# --- INV-11 a lazy start is waited for ---------------------------------------------------


def inv_11_state(state: State) -> str | None:
    """INV-11: a dormant server is unconnected with nothing in flight; a starting one is
    connected with its first refresh in flight; a call waits only for a start under way."""
    for spec, server in zip(state.bound.servers, state.servers, strict=True):  # pragma: no mutate
        if server.start == "dormant" and (server.connected or server.refresh is not None):
            return f"dormant {spec.name} is connected or refreshing"
        if server.start == "starting" and not (server.connected and server.refresh):
            return f"{spec.name} is starting without a connection and its first refresh"
    for record in state.calls:
        if record.phase != "starting":
            continue
        assert record.binding is not None
        assert record.binding.server is not None
        i = state.bound.index(record.binding.server)
        if state.servers[i].start != "starting":
            return (
                f"{record.call_id} waits for {record.binding.server} to start, which is "
                f"{state.servers[i].start or 'not starting'}"
            )
    return None


def _settles(event: Event, server: str) -> bool:
    """The event ends ``server``'s first refresh, settling a lazy start."""
    return isinstance(event, ListDone | ListFailed) and event.server == server


def inv_11_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-11: nothing but the waking ``tools/list`` reaches a dormant server; no
    ``tools/call`` reaches a server before its first refresh ended; a call to a dormant or
    starting server waits (never fails fast); a waiting call ends only when the start
    settles, by its own cancel or timeout (``TIMED_OUT_STARTING``), or ``NOT_CONNECTED``
    when the connection is lost first, with nothing sent for it. A close ends a start
    under way as INV-12 says."""
    if isinstance(event, Close):
        return None
    for old_server in before.servers:
        if old_server.start is not None:
            break
    else:
        for call in before.calls:
            if call.phase == "starting":
                break
        else:
            return None  # no start under way and none settled: nothing below can fail
    bound = before.bound
    for i, (spec, old) in enumerate(zip(bound.servers, before.servers, strict=True)):
        if old.start is None:
            continue
        new = t.state.servers[i]
        sent = [o for o in t.outputs if isinstance(o, Sent) and o.server == spec.name]
        if old.start == "dormant":
            if new.start == "dormant" and sent:
                return f"{sent[0].method} sent to dormant {spec.name}"
            if new.start not in ("dormant", "starting"):
                return f"dormant {spec.name} became {new.start} without starting"
        if new.start is not None and any(o.method == "tools/call" for o in sent):
            return f"tools/call sent to {spec.name} before its first refresh ended"
    waiting = {c.call_id: c for c in before.calls if c.phase == "starting"}
    for out in t.outputs:
        cancelling = isinstance(out, Sent) and out.method in CANCEL_SIGNALS
        if cancelling and isinstance(out, Sent) and out.detail in waiting:
            return f"cancellation sent for {out.detail}, which was never sent"
        if not isinstance(out, Result):
            continue
        record = waiting.get(out.call_id)
        if record is None:
            if isinstance(event, Call) and out.call_id == event.call_id and out.status == "failed":
                snapshot = before.steps[event.step]
                binding = None if snapshot is None else snapshot.lookup(event.name)
                server = None if binding is None else binding.server
                if server is not None and before.servers[bound.index(server)].start is not None:
                    return f"{out.call_id} to lazy {server} failed fast"
            continue
        assert record.binding is not None
        assert record.binding.server is not None
        server = record.binding.server
        if isinstance(event, Cancel | Reconfigure) and out.status == "cancelled":
            continue  # the host's cancel; a reconfiguration as INV-16 says
        if isinstance(event, Timeout) and out.status == "timed_out":
            seconds = texts.seconds(bound.server(server).tool_timeout_sec)
            if out.text != texts.TIMED_OUT_STARTING.format(seconds=seconds, server=server):
                return f"{out.call_id} timed out waiting for {server} as {out.text!r}"
            continue
        if isinstance(event, Disconnect) and event.server == server:
            if out.status != "failed" or out.text != texts.NOT_CONNECTED.format(server=server):
                return f"{out.call_id} ended {out.status} when {server}'s start failed"
            continue
        if _settles(event, server) and out.status == "unavailable":
            continue  # revalidated against the live catalog once started (SPEC §7.3)
        return f"{out.call_id} ended {out.status} by {event.kind} while waiting for {server}"
    return None


# --- INV-12 close loses nothing ---------------------------------------------------------


def inv_12_state(state: State) -> str | None:
    """INV-12: once the host closed, no call is pending, no server connected, no refresh
    in flight."""
    if not state.closed:
        return None
    pending = [c.call_id for c in state.calls if c.phase != "done"]
    if pending:
        return f"{pending} still pending after close"
    for spec, server in zip(state.bound.servers, state.servers, strict=True):  # pragma: no mutate
        if server.connected or server.refresh is not None:
            return f"{spec.name} still connected or refreshing after close"
    return None


def inv_12_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-12: close ends every pending call once, ``cancelled`` with a closing text; a
    call in flight gets its one cancellation, and every cancellation reaches its server
    before that server's session closes; refreshes in flight end ``rejected`` and nothing
    is published; every connected server's session is closed once. After close a call is
    refused and changes nothing."""
    if before.closed:
        if t.state is not before and t.state != before:
            return f"{event.kind} after close changed the state"
        if any(not isinstance(o, Refused) for o in t.outputs):
            return f"{event.kind} after close produced {[OUTPUT_KIND[type(o)] for o in t.outputs]}"
        return None
    if not isinstance(event, Close):
        return None
    results: dict[str, list[Result]] = {}
    for out in t.outputs:
        if isinstance(out, Published):
            return f"close published generation {out.generation}"
        if isinstance(out, Result):
            results.setdefault(out.call_id, []).append(out)
    for record in before.calls:
        if record.phase == "done":
            if record.call_id in results:
                return f"{record.call_id} ended before close and got another result"
            continue
        got = results.get(record.call_id, [])
        closing = {
            "sent": texts.CLOSED_SENT,
            "task": texts.CLOSED_SENT,
            "retrying": texts.CLOSED_EXPIRED if record.expired else texts.CLOSED_RETRYING,
        }
        text = closing.get(record.phase, texts.CLOSED_UNSENT)
        if [(r.status, r.text) for r in got] != [("cancelled", text)]:
            return f"{record.call_id} ({record.phase}) ended {[r.status for r in got]} at close"
    for spec, server in zip(before.bound.servers, before.servers, strict=True):
        mine = [o for o in t.outputs if isinstance(o, Sent) and o.server == spec.name]
        closes = [n for n, o in enumerate(mine) if o.method == "close"]
        if closes != ([len(mine) - 1] if server.connected else []):
            return f"{spec.name}'s session closed {len(closes)} times, or not last"
        cancelled = sorted((o.detail, o.method) for o in mine if o.method in CANCEL_SIGNALS)
        owed = sorted(
            (c.call_id, "tasks/cancel" if c.phase == "task" else "notifications/cancelled")
            for c in before.calls
            if c.phase in ("sent", "task")
            and c.binding is not None
            and c.binding.server == spec.name
        )
        if cancelled != owed:
            return f"{spec.name} got cancellations {cancelled} at close, owed {owed}"
        if any(o.method not in (*CANCEL_SIGNALS, "close") for o in mine):
            return f"close sent {[o.method for o in mine]} to {spec.name}"
        outcomes = [o for o in t.outputs if isinstance(o, RefreshOutcome) and o.server == spec.name]
        flying = server.refresh is not None and server.connected
        if [(o.status, o.kind) for o in outcomes] != ([("rejected", "closed")] if flying else []):
            return f"{spec.name}'s refresh ended {[o.status for o in outcomes]} at close"
    return None


# --- INV-13 a call rejected unrun is retried once, after a refresh ------------------------


def inv_13_state(state: State) -> str | None:
    """INV-13: a call waiting for its retry was rejected once, and a refresh of its
    server that will answer it is in flight (queued behind the current one if it waits
    behind)."""
    for record in state.calls:
        if record.phase != "retrying":
            continue
        if not record.retried:
            return f"{record.call_id} waits for a retry it is not counted as having"
        assert record.binding is not None
        assert record.binding.server is not None
        server = state.servers[state.bound.index(record.binding.server)]
        if server.refresh is None:
            return f"{record.call_id} waits for its retry with no refresh in flight"
        if record.behind and not server.refresh.queued:
            return f"{record.call_id} waits behind a refresh with nothing queued after it"
    return None


def inv_13_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-13: the first rejection of a call sends nothing and starts (or queues, behind
    one in flight) a refresh of its server; a second rejection ends it ``failed``; a call
    is sent again only when a refresh of its server that started after its rejection
    ended."""
    if isinstance(event, CallRejected):
        old = before.call(event.call_id)
        new = t.state.call(event.call_id)
        assert old is not None
        assert new is not None
        if old.retried:
            statuses = [o.status for o in t.outputs if isinstance(o, Result)]
            if new.phase != "done" or statuses[:1] != ["failed"]:
                return f"{event.call_id} was rejected twice and is {new.phase}"
            return None
        if new.phase != "retrying":
            return f"{event.call_id} was rejected unrun and is {new.phase}, not retrying"
        assert old.binding is not None
        assert old.binding.server is not None
        refreshing = before.servers[before.bound.index(old.binding.server)].refresh
        if refreshing is not None and not new.behind:
            return f"{event.call_id} would retry on a refresh that started before its rejection"
    for record in t.state.calls:
        if record.phase != "sent":
            continue
        old = before.call(record.call_id)
        if old is None or old.phase != "retrying":
            continue
        assert record.binding is not None
        server = record.binding.server
        ended = isinstance(event, (ListDone, ListFailed)) and event.server == server
        if not ended or old.behind:
            return f"{record.call_id} was sent again by {event.kind} before its refresh ended"
    return None


# --- INV-14 an expired session is replaced once per refusal ------------------------------


def inv_14_state(state: State) -> str | None:
    """INV-14: a call waiting after an expired session was refused once, and waits for a
    listing of the new session: its server is connected with a refresh in flight, which
    started after the expiry (the call never waits behind an older one)."""
    for record in state.calls:
        if not record.expired:
            continue
        if record.phase != "retrying" or not record.retried:
            return f"{record.call_id} is marked expired while {record.phase}"
        if record.behind:
            return f"{record.call_id} waits behind a refresh of the expired session"
        assert record.binding is not None
        assert record.binding.server is not None
        server = state.servers[state.bound.index(record.binding.server)]
        if not server.connected or server.refresh is None:
            return f"{record.call_id} waits for a new session's listing that is not in flight"
    return None


def inv_14_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-14: at ``session_expired(c)`` the host replaces the session in one transition:
    ``c`` sends nothing and waits (phase ``retrying``), or ends ``failed`` if it had been
    sent once more already; every other call of that server in flight ends ``failed``
    (``DISCONNECTED``); a refresh in flight ends ``rejected``; the server stays connected
    and listening, and a new listing (``tools/list``) starts. A call that waited after an
    expiry is sent again only when a refresh of its server ended."""
    if isinstance(event, SessionExpired):
        problem = _expiry(before, event, t)
        if problem is not None:
            return problem
    for record in t.state.calls:
        if record.phase != "sent":
            continue
        old = before.call(record.call_id)
        if old is None or not old.expired:
            continue
        assert record.binding is not None
        server = record.binding.server
        if not (isinstance(event, (ListDone, ListFailed)) and event.server == server):
            return f"{record.call_id} was sent again by {event.kind} before its new listing ended"
    return None


def _expiry(before: State, event: SessionExpired, t: Transition) -> str | None:
    """What ``session_expired`` must do at once (INV-14)."""
    old = before.call(event.call_id)
    new = t.state.call(event.call_id)
    assert old is not None
    assert new is not None
    assert old.binding is not None
    server = old.binding.server
    assert server is not None
    results = {o.call_id: o.status for o in t.outputs if isinstance(o, Result)}
    if old.retried:
        if new.phase != "done" or results.get(event.call_id) != "failed":
            return f"{event.call_id} was refused unrun twice and is {new.phase}"
    elif new.phase != "retrying" or not new.retried:
        return f"{event.call_id} was refused unrun at an expiry and is {new.phase}, not waiting"
    for record in before.calls:
        binding = record.binding
        mine = binding is not None and binding.server == server
        in_flight = record.phase in ("sent", "task") and record.call_id != event.call_id
        if mine and in_flight and results.get(record.call_id) != "failed":
            return f"{record.call_id} stayed in flight on the expired session of {server}"
    sent = [o for o in t.outputs if isinstance(o, Sent) and o.server == server]
    if not any(o.method == "tools/list" and not o.detail for o in sent):
        return f"the new session of {server} starts no listing"
    i = before.bound.index(server)
    outcomes = [
        (o.status, o.kind)
        for o in t.outputs
        if isinstance(o, RefreshOutcome) and o.server == server
    ]
    if outcomes != ([("rejected", "disconnected")] if before.servers[i].refresh else []):
        return f"the refresh of the expired session of {server} ended {outcomes}"
    after = t.state.servers[i]
    if not (after.connected and after.listening and after.refresh is not None):
        return f"{server} is not connected, listening and listing on its new session"
    return None


# --- INV-15 a reconfiguration is one publication ------------------------------------------


def inv_15_state(state: State) -> str | None:
    """INV-15: an absent server has no catalog; a server is ``replacing`` only while the
    new session of a changed server runs its first refresh (the old catalog installed)."""
    if _settled(state):
        return None
    registry = state.registry
    for spec, server in zip(state.bound.servers, state.servers, strict=True):  # pragma: no mutate
        if not server.present and registry.catalog(spec.source).bindings:
            return f"absent {spec.name} still has tools installed"
        if server.replacing and not (
            state.reconfigured
            and spec.change == "changed"
            and server.connected
            and server.refresh is not None
            and server.start == "starting"
        ):
            return f"{spec.name} is replacing without its replacement's first refresh in flight"
    return None


def inv_15_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-15: a reconfiguration publishes once: exactly the removed servers' non-empty
    catalogs are emptied, in configuration order, and a changed server's catalog stays
    as it was. Later, a changed server's source is published while it is replacing only
    by its replacement's first refresh: installed, or (rejected, or the connection lost)
    emptied; a replacement that failed leaves no old catalog behind (a close publishes
    nothing, INV-12)."""
    bound = before.bound
    if not isinstance(event, Reconfigure) and _settled(before):
        return None  # nothing absent or replacing: nothing of the below can happen
    published = [o for o in t.outputs if isinstance(o, Published)]
    if isinstance(event, Reconfigure):
        due = [
            s.source
            for s in bound.servers
            if s.change == "removed" and before.registry.catalog(s.source).bindings
        ]
        shown = [(o.source, o.names) for o in published]
        if shown != [(source, ()) for source in due]:
            return f"the reconfiguration published {shown}, expected the removals of {due}"
        for spec in bound.servers:
            if spec.change != "changed":
                continue
            if t.state.registry.catalog(spec.source) != before.registry.catalog(spec.source):
                return f"the reconfiguration changed {spec.name}'s catalog before it was listed"
        return None
    outcomes = {o.server: o for o in t.outputs if isinstance(o, RefreshOutcome)}
    for out in published:
        server = source_owner(out.source)
        i = bound.index(server)
        if not before.servers[i].present:
            return f"{out.source} of absent {server} published"
        if before.servers[i].replacing and server not in outcomes:
            return f"{out.source} published while replacing, not by its first refresh's end"
    if isinstance(event, Close):
        return None  # close publishes nothing (INV-12): the registry stays as it was
    for i, (spec, old_server) in enumerate(zip(bound.servers, before.servers, strict=True)):
        outcome = outcomes.get(spec.name)
        if not old_server.replacing or t.state.servers[i].replacing or outcome is None:
            continue
        left = t.state.registry.catalog(spec.source).bindings
        if outcome.status == "rejected" and left:
            return f"{spec.name}'s replacement failed ({outcome.kind}) and the old catalog stays"
    return None


def _settled(state: State) -> bool:
    """Every server is present and none is replacing: the usual case, checked first."""
    return all(s.present and not s.replacing for s in state.servers)


# --- INV-16 a reconfiguration ends exactly what it replaces --------------------------------


def inv_16_state(state: State) -> str | None:
    """INV-16: nothing of an absent server is connected, refreshing or pending: no call
    bound to it waits, runs or awaits a late answer."""
    if all(s.present for s in state.servers):
        return None
    for spec, server in zip(state.bound.servers, state.servers, strict=True):  # pragma: no mutate
        if server.present:
            continue
        if server.connected or server.refresh is not None or server.start is not None:
            return f"absent {spec.name} is connected, refreshing or starting"
        for record in state.calls:
            if record.binding is None or record.binding.server != spec.name:
                continue
            if record.phase != "done" or record.late:
                return f"{record.call_id} of absent {spec.name} is {record.phase}"
    return None


_ENDED_BY_RECONFIGURATION = {
    "sent": texts.RECONFIGURED_SENT,
    "task": texts.RECONFIGURED_SENT,
    "retrying": texts.RECONFIGURED_RETRYING,
}


def inv_16_transition(before: State, event: Event, t: Transition) -> str | None:
    """INV-16: no message ever reaches an absent server, and a call to one ends
    ``unavailable`` (``REMOVED``) with nothing sent. A reconfiguration leaves every
    unchanged server as it was (no close, no call ended, no refresh rejected); ends every
    call pending on a removed or changed server once, ``cancelled`` with its text, a sent
    one with its one cancellation before that server's close; rejects their refreshes in
    flight (``reconfigured``); closes their sessions if connected; then a changed or an
    added server lists on its new session."""
    bound = before.bound
    if isinstance(event, Reconfigure):
        return _reconfiguration(before, t)
    if all(s.present for s in before.servers):
        return None  # every server present, before and after (only reconfigure changes it)
    for out in t.outputs:
        if not isinstance(out, Sent):
            continue
        i = bound.index(out.server)
        if not before.servers[i].present and not t.state.servers[i].present:
            return f"{out.method} sent to absent {out.server}"
    dispatched = _dispatched(before, event)
    if dispatched is None:
        return None
    call_id, name, server = dispatched
    if before.servers[bound.index(server)].present:
        return None
    got = [(o.status, o.text) for o in t.outputs if isinstance(o, Result) and o.call_id == call_id]
    after = t.state.call(call_id)
    if not got and after is not None and after.phase == "approval":
        return None  # checked once approved (SPEC §8.2)
    if isinstance(event, Call) and not event.arguments_ok:
        return None  # the arguments are checked first (SPEC §8.2)
    if got != [("unavailable", texts.REMOVED.format(name=name, server=server))]:
        return f"{call_id} to removed {server} ended {got}"
    return None


def _dispatched(before: State, event: Event) -> tuple[str, str, str] | None:
    """``(call_id, name, server)`` of a new call (``call``) or one approved (``approve``) to
    an MCP tool: what is dispatched by the event."""
    if isinstance(event, Call):
        if before.closed or before.call(event.call_id) is not None:
            return None
        snapshot = before.steps[event.step]
        binding = None if snapshot is None else snapshot.lookup(event.name)
        name, call_id = event.name, event.call_id
    elif isinstance(event, Approve):
        record = before.call(event.call_id)
        assert record is not None
        binding, name, call_id = record.binding, record.name, record.call_id
    else:
        return None
    if binding is None or binding.server is None:
        return None
    return call_id, name, binding.server


def _reconfiguration(before: State, t: Transition) -> str | None:
    """What ``reconfigure`` must do at once (INV-16)."""
    results = {o.call_id: o for o in t.outputs if isinstance(o, Result)}
    for i, spec in enumerate(before.bound.servers):
        name = spec.name
        old, new = before.servers[i], t.state.servers[i]
        mine = [o for o in t.outputs if isinstance(o, Sent) and o.server == name]
        outcomes = [
            (o.status, o.kind)
            for o in t.outputs
            if isinstance(o, RefreshOutcome) and o.server == name
        ]
        calls = [c for c in before.calls if c.binding is not None and c.binding.server == name]
        if spec.change is None:
            if new != old or outcomes or any(o.method != "tools/call" for o in mine):
                return f"the reconfiguration touched unchanged {name}: {[o.method for o in mine]}"
            ended = [c.call_id for c in calls if c.call_id in results]
            if ended:
                return f"the reconfiguration ended {ended} of unchanged {name}"
            continue
        if spec.change == "added":
            if [o.method for o in mine] != ["tools/list"] or not new.connected:
                return f"added {name} got {[o.method for o in mine]} and is not listing"
            continue
        how = "removed" if spec.change == "removed" else "replaced"
        if outcomes != ([("rejected", "reconfigured")] if old.refresh is not None else []):
            return f"{name}'s refresh ended {outcomes} at the reconfiguration"
        owed: list[tuple[str, str]] = []
        for record in calls:
            if record.phase == "done":
                continue
            template = _ENDED_BY_RECONFIGURATION.get(record.phase, texts.RECONFIGURED_UNSENT)
            text = template.format(how=how, server=name)
            got = results.get(record.call_id)
            if got is None or (got.status, got.text) != ("cancelled", text):
                return f"{record.call_id} ({record.phase}) on {how} {name} did not end cancelled"
            if record.phase in ("sent", "task"):
                signal = "tasks/cancel" if record.phase == "task" else "notifications/cancelled"
                owed.append((record.call_id, signal))
        methods = [o.method for o in mine]
        closing = ["close"] if old.connected else []
        opening = ["tools/list"] if spec.change == "changed" else []
        cancelled = [(o.detail, o.method) for o in mine if o.method in CANCEL_SIGNALS]
        if sorted(cancelled) != sorted(owed):
            return f"{name} got cancellations {cancelled} at the reconfiguration, owed {owed}"
        signals = [m for m in methods if m in CANCEL_SIGNALS]
        if methods != signals + closing + opening:
            return f"{name} got {methods} at the reconfiguration"
        if spec.change == "removed" and new.present:
            return f"removed {name} is still present"
        if spec.change == "changed" and not (new.replacing and new.connected and new.refresh):
            return f"changed {name} does not list on a new session"
    return None


INVARIANTS: tuple[Invariant, ...] = (
    Invariant(
        "INV-1",
        "one generation per refresh",
        inv_1_state,
        inv_1_transition,
        frozenset({"registry", "published", "refresh_outcome"}),
    ),
    Invariant(
        "INV-2",
        "plan/router consistency",
        inv_2_state,
        inv_2_transition,
        frozenset({"steps", "call"}),
    ),
    Invariant(
        "INV-3",
        "no half-installed catalogs",
        inv_3_state,
        inv_3_transition,
        frozenset({"published", "refresh_outcome"}),
    ),
    Invariant(
        "INV-4",
        "one terminal result per call_id",
        inv_4_state,
        inv_4_transition,
        frozenset({"result", "call"}),
    ),
    Invariant(
        "INV-5", "namespace isolation", inv_5_state, inv_5_transition, frozenset({"registry"})
    ),
    Invariant("INV-6", "stable names", None, inv_6_transition, frozenset({"registry"})),
    Invariant(
        "INV-7",
        "cancellation is delivered",
        None,
        inv_7_transition,
        frozenset({"result", "sent"}),
    ),
    Invariant(
        "INV-8",
        "disconnect fails fast, loses nothing",
        inv_8_state,
        inv_8_transition,
        frozenset({"disconnect", "sent"}),
    ),
    Invariant("INV-9", "one exclusive call per step in flight", inv_9_state, None),
    Invariant(
        "INV-10",
        "approval gates sending",
        None,
        inv_10_transition,
        frozenset({"call", "approve", "deny", "result", "sent"}),
    ),
    Invariant(
        "INV-11",
        "a lazy start is waited for",
        inv_11_state,
        inv_11_transition,
        frozenset({"sent", "result", "refresh_outcome", "published", "call"}),
    ),
    Invariant(
        "INV-12",
        "close loses nothing",
        inv_12_state,
        inv_12_transition,
        frozenset({"close", "call", "refused"}),
    ),
    Invariant(
        "INV-13",
        "a call rejected unrun is retried once, after a refresh",
        inv_13_state,
        inv_13_transition,
        frozenset({"call_rejected", "sent"}),
    ),
    Invariant(
        "INV-14",
        "an expired session is replaced once per refusal",
        inv_14_state,
        inv_14_transition,
        frozenset({"session_expired", "sent"}),
    ),
    Invariant(
        "INV-15",
        "a reconfiguration is one publication",
        inv_15_state,
        inv_15_transition,
        frozenset({"reconfigure", "published", "refresh_outcome"}),
    ),
    Invariant(
        "INV-16",
        "a reconfiguration ends exactly what it replaces",
        inv_16_state,
        inv_16_transition,
        frozenset({"reconfigure", "sent", "call", "approve"}),
    ),
)
_STATE_CHECKS = tuple((inv.id, inv.state) for inv in INVARIANTS if inv.state is not None)
_TRANSITION_CHECKS = tuple(
    (inv.id, inv.transition, inv.triggers) for inv in INVARIANTS if inv.transition is not None
)


def check_state(state: State) -> list[tuple[str, str]]:
    """Every state invariant that fails, as ``(id, explanation)``."""
    failures = []
    for inv_id, predicate in _STATE_CHECKS:
        why = predicate(state)
        if why is not None:
            failures.append((inv_id, why))
    return failures


def triggers_of(before: State, event: Event, t: Transition) -> set[Trigger]:
    """What a transition touched; a transition predicate can only fail if it is triggered."""
    found: set[Trigger] = {OUTPUT_KIND[type(out)] for out in t.outputs}
    if t.state.registry is not before.registry:
        found.add("registry")
    if t.state.steps is not before.steps:
        found.add("steps")
    if isinstance(event, _EVENT_TRIGGERS):
        found.add(event.kind)
    return found


_EVENT_TRIGGERS = (
    Call,
    CallRejected,
    SessionExpired,
    Disconnect,
    Approve,
    Deny,
    Close,
    Reconfigure,
)
"""The event types whose kind is a trigger (the others trigger by what they touch)."""

_Plan = tuple[tuple[str, TransitionPredicate], ...]
_PLANS: dict[tuple[object, ...], tuple[_Plan, _Plan, _Plan]] = {}
"""The predicates a transition runs, by what decides its triggers: the event's type, the
output types and whether the registry and the steps changed; with the plan, its
predicates but those of ``_STEP_CHECKS``, and those. The explorer sees a few hundred such
shapes and millions of transitions."""
_PLANNED_FROM: list[object] = [None]
"""The ``_TRANSITION_CHECKS`` the plans were made from (a test narrows it)."""

_STEP_CHECKS: frozenset[TransitionPredicate] = frozenset({inv_2_transition})
"""The transition predicates that read the step snapshots whatever the event: INV-2
compares them before and after. Every other predicate reads a step only to resolve a
``call``'s name, in the step the call names (SPEC §10.10)."""
STEP_CHECK_IDS: frozenset[str] = frozenset(
    inv.id for inv in INVARIANTS if inv.transition in _STEP_CHECKS
)
"""The ids of :data:`_STEP_CHECKS`: which of a transition's failures read its steps."""


def check_transition(
    before: State,
    event: Event,
    t: Transition,
    *,
    every: bool = False,
    steps: bool | None = None,
) -> list[tuple[str, str]]:
    """Every transition invariant that fails, as ``(id, explanation)``. A predicate runs
    only on a transition that touches one of its ``triggers``; with ``every``, on all of
    them (what the test that triggers hide nothing compares against). With ``steps``, only
    the predicates that read the step snapshots whatever the event (INV-2); with
    ``steps=False``, only the others: a caller that keeps their results for the states
    equal but in their steps (SPEC §10.10)."""
    if every:
        plans = _EVERY.get(_TRANSITION_CHECKS)
        if plans is None:
            _EVERY.clear()
            plans = _EVERY[_TRANSITION_CHECKS] = _split(
                tuple((inv_id, predicate) for inv_id, predicate, _ in _TRANSITION_CHECKS)
            )
    else:
        after = t.state
        shape = (
            type(event),
            after.registry is not before.registry,
            after.steps is not before.steps,
            *map(type, t.outputs),
        )
        if _PLANNED_FROM[0] is not _TRANSITION_CHECKS:
            _PLANS.clear()
            _PLANNED_FROM[0] = _TRANSITION_CHECKS
        found = _PLANS.get(shape)
        if found is None:
            touched = triggers_of(before, event, t)
            found = _PLANS[shape] = _split(
                tuple(
                    (inv_id, predicate)
                    for inv_id, predicate, triggers in _TRANSITION_CHECKS
                    if not triggers.isdisjoint(touched)
                )
            )
        plans = found
    plan = plans[0] if steps is None else plans[2] if steps else plans[1]
    if not plan:
        return []
    return _run(plan, before, event, t)


_EVERY: dict[object, tuple[_Plan, _Plan, _Plan]] = {}
"""The plan of ``every``, split, for the ``_TRANSITION_CHECKS`` it was made from."""


def _split(plan: _Plan) -> tuple[_Plan, _Plan, _Plan]:
    """The plan; its predicates but those of ``_STEP_CHECKS``; those."""
    return (
        plan,
        tuple(p for p in plan if p[1] not in _STEP_CHECKS),
        tuple(p for p in plan if p[1] in _STEP_CHECKS),
    )


def _run(plan: _Plan, before: State, event: Event, t: Transition) -> list[tuple[str, str]]:
    failures = []
    for inv_id, predicate in plan:
        why = predicate(before, event, t)
        if why is not None:
            failures.append((inv_id, why))
    return failures
