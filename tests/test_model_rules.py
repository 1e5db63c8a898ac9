"""The model's transition rules, one behaviour at a time (SPEC §3, §5, §7, §8)."""

from __future__ import annotations

import subprocess
import sys

import attrs
import pytest

from mcpbind.model import (
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
    EventNotEnabled,
    LateDropped,
    ListChanged,
    ListDone,
    ListFailed,
    ListPage,
    Published,
    Reconfigure,
    Reconnect,
    RefreshOutcome,
    RefreshRequested,
    Refused,
    Relisten,
    Result,
    Sample,
    Sent,
    ServerSpec,
    SessionExpired,
    State,
    StreamEnded,
    Timeout,
    ToolDef,
    check_state,
    check_transition,
    enabled,
    initial,
    step,
    texts,
)
from mcpbind.model.bounds import standard_bound, standard_suite
from mcpbind.model.explore import replay
from mcpbind.model.invariants import inv_14_transition
from mcpbind.model.mutants import mutant
from mcpbind.model.naming import resource_name
from mcpbind.model.rules import STANDARD, Rules, collect_steps
from mcpbind.model.values import (
    EVENT_KINDS,
    EVENT_TYPES,
    OUTPUT_KIND,
    OUTPUT_KINDS,
    OUTPUT_TYPES,
    Event,
    Exclusion,
    Output,
    TaskCreated,
    TaskStatus,
    Transition,
)

SEARCH = ToolDef("search")
READ = ToolDef("read", read_only=True)
WRITE = ToolDef("write")
BROKEN = ToolDef("broken", valid=False, problem="inputSchema is not a JSON object")


def bound(*servers: ServerSpec, policy="revalidate", builtins=(), calls=3, steps=2) -> Bound:
    return Bound(
        servers=servers, builtins=builtins, policy=policy, max_steps=steps, max_calls=calls
    )


def run(b: Bound, *events: Event) -> tuple[State, list[Output]]:
    """Apply events through the public ``step``, checking every invariant on the way."""
    state = initial(b).state
    outputs: list[Output] = []
    for event in events:
        t = step(state, event)
        assert check_transition(state, event, t) == []
        assert check_state(t.state) == []
        state = t.state
        outputs = list(t.outputs)
    return state, outputs


ONE = ServerSpec("fs", versions=(((SEARCH,), (READ,)), ((READ, BROKEN),), ((READ, WRITE),)))


def test_importing_the_model_loads_neither_trio_nor_mcp_nor_anyio():
    code = (
        "import sys, mcpbind.model, mcpbind.model.mutants, mcpbind.model.table;"
        "bad = sorted(m for m in ('trio', 'mcp', 'anyio') if m in sys.modules);"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_initial_state_sends_one_tools_list_per_server_and_publishes_nothing():
    t = initial(bound(ONE))
    assert t.outputs == (Sent("fs", "tools/list"),)
    assert t.state.registry.generation == 0


def test_a_paged_listing_installs_once_after_its_last_page():
    """INV-1, INV-3: pages are collected; one publication at the end."""
    b = bound(ONE)
    state, outputs = run(b, ListPage("fs"))
    assert outputs == [Sent("fs", "tools/list", "cursor")]
    assert state.registry.generation == 0
    state, outputs = run(b, ListPage("fs"), ListDone("fs"))
    assert outputs == [
        Published(1, "mcp:fs", ("mcp__fs__read", "mcp__fs__search")),
        RefreshOutcome("fs", "installed", 1),
    ]


def test_refresh_of_an_unchanged_catalog_publishes_nothing():
    """INV-1: unchanged advances the generation by 0."""
    state, outputs = run(
        bound(ONE),
        ListPage("fs"),
        ListDone("fs"),
        RefreshRequested("fs"),
        ListPage("fs"),
        ListDone("fs"),
    )
    assert outputs == [RefreshOutcome("fs", "unchanged", 1)]
    assert state.registry.generation == 1


def test_one_invalid_tool_rejects_the_whole_listing_and_keeps_the_previous_catalog():
    """INV-3."""
    state, outputs = run(
        bound(ONE), ListPage("fs"), ListDone("fs"), ListChanged("fs"), ListDone("fs")
    )
    (outcome,) = outputs
    assert isinstance(outcome, RefreshOutcome)
    assert (outcome.status, outcome.kind, outcome.generation) == ("rejected", "invalid", 1)
    assert outcome.reason == texts.REJECT_INVALID.format(
        server="fs", tool="broken", problem="inputSchema is not a JSON object"
    )
    assert state.registry.catalog("mcp:fs").remote_names() == {"search", "read"}


def test_a_tool_to_leave_out_is_reported_and_the_rest_of_its_listing_installs():
    """INV-3 (SPEC §5.4): exclusion is per tool, with its kind and stable text."""
    research = ToolDef("research", excluded="task_required")
    route = ToolDef("route", excluded="x_mcp_header", problem="bad header")
    spec = ServerSpec("fs", versions=(((SEARCH, research, route),),))
    state, outputs = run(bound(spec), ListDone("fs"))
    assert outputs == [
        Published(1, "mcp:fs", ("mcp__fs__search",)),
        RefreshOutcome(
            "fs",
            "installed",
            1,
            excluded=(
                Exclusion(
                    "research",
                    "task_required",
                    texts.excluded_text("task_required", server="fs", tool="research"),
                ),
                Exclusion(
                    "route",
                    "x_mcp_header",
                    texts.EXCLUDED_X_MCP_HEADER.format(
                        tool="route", server="fs", problem="bad header"
                    ),
                ),
            ),
        ),
    ]
    assert state.registry.catalog("mcp:fs").remote_names() == {"search"}


def test_a_disabled_tool_to_leave_out_is_not_reported():
    spec = ServerSpec(
        "fs",
        versions=(((SEARCH, ToolDef("research", excluded="task_required")),),),
        disabled_tools=frozenset({"research"}),
    )
    _, outputs = run(bound(spec), ListDone("fs"))
    assert outputs[-1] == RefreshOutcome("fs", "installed", 1)


def test_an_invalid_tool_rejects_its_listing_even_beside_a_tool_to_leave_out():
    spec = ServerSpec("fs", versions=(((ToolDef("research", excluded="task_required"), BROKEN),),))
    _, outputs = run(bound(spec), ListDone("fs"))
    (outcome,) = outputs
    assert isinstance(outcome, RefreshOutcome)
    assert (outcome.status, outcome.kind) == ("rejected", "invalid")


def test_a_name_owned_by_a_builtin_rejects_the_refresh_naming_both():
    """INV-5."""
    spec = ServerSpec("fs", versions=(((ToolDef("shell_x"),),),))
    b = bound(spec, builtins=("mcp__fs__shell_x",))
    state, outputs = run(b, ListDone("fs"))
    (outcome,) = outputs
    assert isinstance(outcome, RefreshOutcome)
    assert outcome.kind == "collision"
    assert "mcp__fs__shell_x" in (outcome.reason or "")
    assert "'builtin'" in (outcome.reason or "")
    assert state.registry.generation == 0


def test_servers_colliding_after_sanitising_keep_the_first_installed_name():
    """INV-5, INV-6: the second server's tool is renamed, the first keeps its name."""
    a = ServerSpec("git.hub", versions=(((SEARCH,),),))
    b_ = ServerSpec("git_hub", versions=(((SEARCH,),),))
    state, _ = run(bound(a, b_), ListDone("git_hub"), ListDone("git.hub"))
    names = {b.server: b.name for c in state.registry.catalogs for b in c.bindings}
    assert names["git_hub"] == "mcp__git_hub__search"
    assert names["git.hub"].startswith("mcp__git_hub__search_")


def test_list_changed_during_a_refresh_queues_exactly_one_more():
    """LIVE-2: one in flight, one queued; the queued one starts when the first ends."""
    b = bound(ONE)
    state, outputs = run(b, ListChanged("fs"), ListChanged("fs"))
    assert outputs == []  # coalesced: still one in flight
    server = state.servers[0]
    assert server.refresh is not None
    assert server.refresh.queued
    assert server.owed
    state, outputs = run(b, ListChanged("fs"), ListChanged("fs"), ListPage("fs"), ListDone("fs"))
    assert Sent("fs", "tools/list") in outputs  # the queued refresh starts
    assert state.servers[0].owed  # ...and only it can answer the notifications
    state, _ = run(
        b, ListChanged("fs"), ListChanged("fs"), ListPage("fs"), ListDone("fs"), ListDone("fs")
    )
    assert not state.servers[0].owed
    assert state.registry.catalog("mcp:fs").remote_names() == {"read", "write"}


def test_list_failed_rejects_and_keeps_the_registry():
    state, outputs = run(bound(ONE), ListFailed("fs", "boom"))
    assert outputs == [
        RefreshOutcome(
            "fs",
            "rejected",
            0,
            "list_failed",
            texts.REJECT_LIST_FAILED.format(server="fs", why="boom"),
        )
    ]
    assert state.servers[0].refresh is None


def installed(policy="revalidate", **kw) -> tuple[Bound, list[Event]]:
    return bound(ONE, policy=policy, **kw), [ListPage("fs"), ListDone("fs"), Sample()]


def test_call_to_a_name_not_in_the_step_is_unsupported():
    b, prefix = installed()
    _, outputs = run(b, *prefix, Call(0, "c1", "no_such_tool"))
    assert outputs == [Result("c1", "unsupported", texts.UNSUPPORTED.format(name="no_such_tool"))]


def test_call_with_arguments_that_are_not_an_object_ends_error_and_sends_nothing():
    b, prefix = installed()
    _, outputs = run(b, *prefix, Call(0, "c1", "mcp__fs__search", arguments_ok=False))
    assert outputs == [
        Result(
            "c1",
            "error",
            texts.BAD_ARGUMENTS.format(name="mcp__fs__search", problem="not a JSON object"),
        )
    ]


def test_call_sends_the_raw_tool_name_and_ends_with_the_servers_answer():
    b, prefix = installed()
    _, outputs = run(b, *prefix, Call(0, "c1", "mcp__fs__search"))
    assert outputs == [Sent("fs", "tools/call", "search")]
    _, outputs = run(
        b, *prefix, Call(0, "c1", "mcp__fs__search"), CallResponded("c1", is_error=True)
    )
    assert outputs == [Result("c1", "error", None)]


def test_step_keeps_its_binding_after_a_refresh_removes_the_tool():
    """INV-2 under both policies: the name stays; revalidate refuses, frozen sends."""
    later = [ListChanged("fs"), ListChanged("fs"), ListDone("fs"), ListDone("fs")]
    b, prefix = installed("revalidate")
    state, outputs = run(b, *prefix, *later, Call(0, "c1", "mcp__fs__search"))
    assert state.registry.generation == 2
    assert outputs == [
        Result(
            "c1",
            "unavailable",
            texts.UNAVAILABLE.format(name="mcp__fs__search", server="fs", tool="search"),
        )
    ]
    b, prefix = installed("frozen")
    _, outputs = run(b, *prefix, *later, Call(0, "c1", "mcp__fs__search"))
    assert outputs == [Sent("fs", "tools/call", "search")]


def test_forgetting_snapshots_keeps_the_steps_themselves_while_every_one_is_readable():
    """SPEC §10.10: a step a running call uses, and the latest while calls are left, are
    kept; when nothing is forgotten the steps are the same tuple, not an equal copy (the
    invariants' plan of checks and the explorer's interner know them by identity)."""
    b, prefix = installed()
    call = Call(0, "c1", "mcp__fs__search")
    state, _ = run(b, *prefix, call, Sample())
    assert len(state.steps) == 2
    assert None not in state.steps
    assert collect_steps(state) is state.steps
    done, _ = run(b, *prefix, call, Sample(), CallResponded("c1"))
    assert done.steps[0] is None  # no call left on it: forgotten
    assert done.steps[1] == state.steps[1]


def test_exclusive_calls_queue_and_the_next_starts_when_the_lane_frees():
    """INV-9: non-read-only calls of a step never overlap; read-only ones do."""
    b, prefix = installed()
    calls = [Call(0, "c1", "mcp__fs__search"), Call(0, "c2", "mcp__fs__search")]
    state, outputs = run(b, *prefix, *calls)
    assert outputs == []
    assert [c.phase for c in state.calls] == ["sent", "queued"]
    _, outputs = run(b, *prefix, *calls, Call(0, "c3", "mcp__fs__read"))
    assert outputs == [Sent("fs", "tools/call", "read")]  # read-only: parallel lane
    _, outputs = run(b, *prefix, *calls, CallResponded("c1"))
    assert outputs == [Result("c1", "ok", None), Sent("fs", "tools/call", "search")]


def test_cancel_of_an_in_flight_call_sends_one_cancellation_and_drops_the_late_answer():
    """INV-4, INV-7."""
    b, prefix = installed()
    call = Call(0, "c1", "mcp__fs__search")
    _, outputs = run(b, *prefix, call, Cancel("c1"))
    assert outputs == [
        Result("c1", "cancelled", texts.CANCELLED),
        Sent("fs", "notifications/cancelled", "c1"),
    ]
    state, outputs = run(b, *prefix, call, Cancel("c1"), CallResponded("c1"))
    assert outputs == [LateDropped("c1")]
    assert state.call("c1") is not None
    assert CallResponded("c1") not in enabled(state)


def test_cancel_of_a_call_running_as_a_task_sends_tasks_cancel_and_drops_the_late_status():
    """SPEC §8.12, INV-7: once the server made the call a task, its cancellation is
    ``tasks/cancel``, not ``notifications/cancelled`` (issue 33: ``task=True`` at
    ``task_created`` made ``False`` survived)."""
    tasks = attrs.evolve(ONE, tasks=True)
    b = bound(tasks)
    prefix = [ListPage("fs"), ListDone("fs"), Sample(), Call(0, "c1", "mcp__fs__search")]
    _, outputs = run(b, *prefix, TaskCreated("c1"), Cancel("c1"))
    assert outputs == [
        Result("c1", "cancelled", texts.CANCELLED),
        Sent("fs", "tasks/cancel", "c1"),
    ]
    _, outputs = run(b, *prefix, TaskCreated("c1"), Cancel("c1"), TaskStatus("c1"))
    assert outputs == [LateDropped("c1")]
    _, outputs = run(b, *prefix, Cancel("c1"))  # not yet a task: the plain cancellation
    assert outputs[1:] == [Sent("fs", "notifications/cancelled", "c1")]


def test_close_ends_every_pending_call_once_and_closes_the_sessions_after_their_cancellations():
    """INV-12: a call in flight and a queued one end cancelled; only the one in flight is
    cancelled at the server, before its session closes; a refresh in flight is rejected."""
    b, prefix = installed()
    calls = [Call(0, "c1", "mcp__fs__search"), Call(0, "c2", "mcp__fs__search")]
    state, outputs = run(b, *prefix, *calls, RefreshRequested("fs"), Close())
    assert outputs == [
        RefreshOutcome("fs", "rejected", 1, "closed", texts.REJECT_CLOSED.format(server="fs")),
        Result("c1", "cancelled", texts.CLOSED_SENT),
        Sent("fs", "notifications/cancelled", "c1"),
        Result("c2", "cancelled", texts.CLOSED_UNSENT),
        Sent("fs", "close"),
    ]
    assert state.closed
    assert not any(s.connected for s in state.servers)
    assert all(c.phase == "done" and c.results == 1 for c in state.calls)


def test_a_call_after_close_is_refused_and_changes_nothing():
    """INV-12: once closed, a call is refused (HOST_CLOSED) and nothing else can happen."""
    b, prefix = installed()
    state, _ = run(b, *prefix, Close())
    after = enabled(state)
    assert after == [Call(0, "c1", "no_such_tool")]
    t = step(state, after[0])
    assert t.outputs == (Refused("c1", texts.HOST_CLOSED),)
    assert t.state == state


def test_timeout_of_a_queued_call_sends_nothing():
    b, prefix = installed()
    calls = [Call(0, "c1", "mcp__fs__search"), Call(0, "c2", "mcp__fs__search")]
    _, outputs = run(b, *prefix, *calls, Timeout("c2"))
    assert outputs == [
        Result("c2", "timed_out", texts.TIMED_OUT_QUEUED.format(seconds="300 seconds"))
    ]


def test_reused_call_id_is_refused_and_changes_nothing():
    """INV-4."""
    b, prefix = installed()
    state, _ = run(b, *prefix, Call(0, "c1", "mcp__fs__search"))
    after, outputs = run(
        b, *prefix, Call(0, "c1", "mcp__fs__search"), Call(0, "c1", "no_such_tool")
    )
    assert outputs == [Refused("c1", texts.DUPLICATE_CALL_ID.format(call_id="c1"))]
    assert after == state


def test_disconnect_fails_every_call_rejects_the_refresh_and_keeps_the_catalog():
    """INV-8."""
    b, prefix = installed()
    calls = [Call(0, "c1", "mcp__fs__search"), Call(0, "c2", "mcp__fs__search")]
    state, outputs = run(b, *prefix, *calls, RefreshRequested("fs"), Disconnect("fs"))
    assert outputs == [
        RefreshOutcome(
            "fs", "rejected", 1, "disconnected", texts.REJECT_DISCONNECTED.format(server="fs")
        ),
        Result("c1", "failed", texts.DISCONNECTED.format(server="fs")),
        Result("c2", "failed", texts.NOT_CONNECTED.format(server="fs")),
    ]
    assert state.registry.catalog("mcp:fs").remote_names() == {"search", "read"}
    _, outputs = run(b, *prefix, Disconnect("fs"), Call(0, "c1", "mcp__fs__read"))
    assert outputs == [Result("c1", "failed", texts.NOT_CONNECTED.format(server="fs"))]


def test_reconnect_starts_a_refresh():
    b, prefix = installed()
    _, outputs = run(b, *prefix, Disconnect("fs"), Reconnect("fs"))
    assert outputs == [Sent("fs", "tools/list")]


def test_transport_error_fails_only_that_call():
    b, prefix = installed()
    state, outputs = run(b, *prefix, Call(0, "c1", "mcp__fs__read"), CallFailed("c1", "reset"))
    assert outputs == [
        Result("c1", "failed", texts.TRANSPORT.format(tool="read", server="fs", why="reset"))
    ]
    assert state.servers[0].connected


def test_an_event_the_state_does_not_allow_raises_one_error_naming_state_and_event():
    state = initial(bound(ONE)).state
    with pytest.raises(
        EventNotEnabled, match=r"can't handle event Reconnect\(server='fs'\) in state State\("
    ):
        step(state, Reconnect("fs"))
    with pytest.raises(EventNotEnabled):
        step(state, Cancel("c9"))


def test_states_are_canonical_values():
    b = bound(ONE)
    first, _ = run(b, ListPage("fs"), ListDone("fs"))
    second, _ = run(b, ListPage("fs"), ListDone("fs"))
    assert first == second
    assert hash(first) == hash(second)
    assert attrs.evolve(first, bound=bound(ONE, policy="frozen")) == first  # config, not state


class _HandOffCountsSteps(Rules):
    """The standard rules but a lane's hand-off that reads more of the state than what
    ends a call or a connection is kept by (the number of steps)."""

    def hand_off(self, state: State, step: int, outputs: list[Output]) -> State:
        outputs.append(LateDropped(f"{len(state.steps)} steps"))
        return super().hand_off(state, step, outputs)


class _FailCallsCountsSteps(Rules):
    """The standard rules but a disconnect's failing of calls that reads the steps too."""

    def fail_calls(self, state: State, server: str, outputs: list[Output]) -> State:
        outputs.append(LateDropped(f"{len(state.steps)} steps"))
        return super().fail_calls(state, server, outputs)


@pytest.mark.parametrize(
    ("rules", "ending"),
    [
        (_HandOffCountsSteps(), CallResponded("c1")),
        (_HandOffCountsSteps(), Disconnect("fs")),
        (_FailCallsCountsSteps(), Disconnect("fs")),
    ],
    ids=["hand-off/answer", "hand-off/disconnect", "fail-calls/disconnect"],
)
def test_rules_with_their_own_lane_hooks_work_out_every_end_and_keep_no_other_states_answer(
    rules: Rules, ending: Event
):
    """SPEC §10.10: what ends a call or a connection is kept per key only for the standard
    hooks; rules whose ``hand_off`` or ``fail_calls`` reads more of the state get their
    own answer for each state (issue 33: ``not self._lanes_kept`` made
    ``self._lanes_kept`` in ``end_call`` and ``_on_disconnect`` survived: the standard
    rules give the same answers either way)."""
    b, prefix = installed()
    one = initial(b).state
    for event in (*prefix, Call(0, "c1", "mcp__fs__search")):
        one = rules.step(one, event).state
    two = rules.step(one, Sample()).state
    assert two.calls == one.calls
    for state in (one, two):
        outputs = rules.step(state, ending).outputs
        assert LateDropped(f"{len(state.steps)} steps") in outputs


def test_a_gated_call_sends_nothing_until_approved_and_a_deny_ends_it_denied():
    """INV-10 (SPEC §3.4): approve dispatches, deny ends denied, nothing times out while
    waiting, cancel sends no cancellation, a disconnect meanwhile does not fail it."""
    plain, prefix = installed()
    b = attrs.evolve(plain, approval=True)
    call = Call(0, "c1", "mcp__fs__search")
    state, outputs = run(b, *prefix, call)
    assert outputs == []
    assert state.call("c1").phase == "approval"
    assert Timeout("c1") not in enabled(state)
    _, outputs = run(b, *prefix, call, Approve("c1"))
    assert outputs == [Sent("fs", "tools/call", "search")]
    where = {"name": "mcp__fs__search", "server": "fs", "tool": "search"}
    _, outputs = run(b, *prefix, call, Deny("c1"))
    assert outputs == [Result("c1", "denied", texts.DENIED_DECLINED.format(**where))]
    _, outputs = run(b, *prefix, call, Deny("c1", answer="cancel"))
    assert outputs == [Result("c1", "denied", texts.DENIED_CANCELLED.format(**where))]
    _, outputs = run(b, *prefix, call, Cancel("c1"))
    assert outputs == [Result("c1", "cancelled", texts.CANCELLED)]
    state, outputs = run(b, *prefix, call, Disconnect("fs"))
    assert outputs == []
    _, outputs = run(b, *prefix, call, Disconnect("fs"), Approve("c1"))
    assert outputs == [Result("c1", "failed", texts.NOT_CONNECTED.format(server="fs"))]
    _, outputs = run(plain, *prefix, call)
    assert outputs == [Sent("fs", "tools/call", "search")]  # gating inactive: no wait


def lazy(policy="revalidate") -> Bound:
    return attrs.evolve(bound(ONE, policy=policy), lazy=("fs",))


def test_a_lazy_server_installs_its_cached_catalog_at_the_start_and_sends_nothing():
    """INV-11 (SPEC §3.5): one publication of the cached listing, the server dormant."""
    t = initial(lazy())
    assert t.outputs == (Published(1, "mcp:fs", ("mcp__fs__read", "mcp__fs__search")),)
    server = t.state.servers[0]
    assert (server.connected, server.refresh, server.start) == (False, None, "dormant")
    assert Disconnect("fs") not in enabled(t.state)
    assert Reconnect("fs") not in enabled(t.state)  # woken, not reconnected


def test_a_call_to_a_dormant_server_wakes_it_and_waits_for_its_first_refresh():
    """INV-11: the call waits (phase starting), the wake sends only tools/list; the end of
    the first refresh dispatches the waiting calls in order, through the exclusive lane."""
    b = lazy()
    first, second = Call(0, "c1", "mcp__fs__search"), Call(0, "c2", "mcp__fs__search")
    state, outputs = run(b, Sample(), first)
    assert outputs == [Sent("fs", "tools/list")]
    assert state.call("c1").phase == "starting"
    assert state.servers[0].start == "starting"
    state, outputs = run(b, Sample(), first, second)
    assert outputs == []  # already starting: it waits too, nothing is sent
    state, outputs = run(b, Sample(), first, second, ListPage("fs"), ListDone("fs"))
    assert outputs == [RefreshOutcome("fs", "unchanged", 1), Sent("fs", "tools/call", "search")]
    assert [state.call(c).phase for c in ("c1", "c2")] == ["sent", "queued"]


def test_a_host_refresh_wakes_a_dormant_server():
    state, outputs = run(lazy(), RefreshRequested("fs"))
    assert outputs == [Sent("fs", "tools/list")]
    assert state.servers[0].start == "starting"


def test_a_live_catalog_that_dropped_the_tool_ends_the_waiting_call_unavailable():
    """INV-11, SPEC §7.3: revalidated against the live catalog once started; frozen sends."""
    events = [Sample(), ListChanged("fs"), ListChanged("fs"), Call(0, "c1", "mcp__fs__search")]
    _, outputs = run(lazy(), *events, ListDone("fs"))
    where = {"name": "mcp__fs__search", "server": "fs", "tool": "search"}
    assert Result("c1", "unavailable", texts.UNAVAILABLE.format(**where)) in outputs
    _, outputs = run(lazy("frozen"), *events, ListDone("fs"))
    assert Sent("fs", "tools/call", "search") in outputs


def test_a_call_waiting_for_a_start_fails_if_the_connection_is_lost_and_times_out_unsent():
    """INV-11: NOT_CONNECTED on a lost start, TIMED_OUT_STARTING on its deadline, no
    cancellation for either, and the call is never sent."""
    b = lazy()
    prefix = [Sample(), Call(0, "c1", "mcp__fs__read")]
    state, outputs = run(b, *prefix, Disconnect("fs"))
    assert Result("c1", "failed", texts.NOT_CONNECTED.format(server="fs")) in outputs
    assert state.servers[0].start is None
    assert Reconnect("fs") in enabled(state)
    _, outputs = run(b, *prefix, Timeout("c1"))
    text = texts.TIMED_OUT_STARTING.format(seconds="300 seconds", server="fs")
    assert outputs == [Result("c1", "timed_out", text)]
    _, outputs = run(b, *prefix, Cancel("c1"))
    assert outputs == [Result("c1", "cancelled", texts.CANCELLED)]


def test_inv_11_reports_a_waiting_call_ended_cancelled_by_anything_but_a_cancel():
    """INV-11: a call waiting for a start ends ``cancelled`` only by its own cancel (or a
    reconfiguration); the check reports a timeout or a lost start that ended it so
    (issue 33: its ``and`` turned ``or`` survived)."""
    state, _ = run(lazy(), Sample(), Call(0, "c1", "mcp__fs__read"))
    cancelled = Result("c1", "cancelled", texts.CANCELLED)
    assert check_transition(state, Cancel("c1"), step(state, Cancel("c1"))) == []
    for event in (Timeout("c1"), Disconnect("fs")):
        t = step(state, event)
        kept = tuple(o for o in t.outputs if not isinstance(o, Result))
        forged = attrs.evolve(t, outputs=(*kept, cancelled))
        assert [i for i, _ in check_transition(state, event, forged)] == ["INV-11"]


def test_inv_11_checks_every_call_a_lost_start_ends_past_one_ended_right():
    """INV-11: two calls wait for a start that is lost; the first ends as it should
    (``failed``, not connected), a forged second ends ``ok``, and the check reports the
    second (issue 33: the ``continue`` after a right ending made ``break`` survived)."""
    b = lazy()
    state, _ = run(b, Sample(), Call(0, "c1", "mcp__fs__read"), Call(0, "c2", "mcp__fs__read"))
    t = step(state, Disconnect("fs"))
    failed = Result("c1", "failed", texts.NOT_CONNECTED.format(server="fs"))
    assert failed in t.outputs
    kept = tuple(o for o in t.outputs if not (isinstance(o, Result) and o.call_id == "c2"))
    forged = attrs.evolve(t, outputs=(*kept, Result("c2", "ok")))
    found = check_transition(state, Disconnect("fs"), forged, every=True)
    assert [i for i, _ in found] == ["INV-11"]
    assert "c2" in found[0][1]


def test_inv_16_reports_a_call_still_pending_on_a_server_no_longer_present():
    """INV-16: a state where a removed server's call is still sent is reported (issue 33:
    the loop over the calls made to run zero times survived)."""
    state, _ = run(
        bound(ONE), ListPage("fs"), ListDone("fs"), Sample(), Call(0, "c1", "mcp__fs__read")
    )
    gone = attrs.evolve(state.servers[0], present=False, connected=False, refresh=None)
    forged = attrs.evolve(state, servers=(gone,))
    assert ("INV-16", "c1 of absent fs is sent") in check_state(forged)


@pytest.mark.parametrize(
    ("status", "text"),
    [("failed", texts.DISCONNECTED.format(server="fs")), ("error", None)],
    ids=["failed-saying-disconnected", "error-saying-not-connected"],
)
def test_inv_11_wants_a_waiting_call_whose_start_failed_ended_failed_and_not_connected(
    status, text
):
    """INV-11: a call waiting for a lazy start whose connection is lost ends ``failed``
    with ``NOT_CONNECTED`` (nothing was sent); a forged ending right in one of the two
    and wrong in the other is reported (issue 33: their ``or`` made ``and``, which takes
    either alone, survived)."""
    state, _ = run(lazy(), Sample(), Call(0, "c1", "mcp__fs__read"))
    t = step(state, Disconnect("fs"))
    right = Result("c1", "failed", texts.NOT_CONNECTED.format(server="fs"))
    assert right in t.outputs
    wrong = attrs.evolve(right, status=status, text=right.text if text is None else text)
    forged = attrs.evolve(t, outputs=tuple(wrong if o == right else o for o in t.outputs))
    found = check_transition(state, Disconnect("fs"), forged, every=True)
    assert found == [("INV-11", f"c1 ended {status} when fs's start failed")]


def test_inv_11_judges_the_end_of_a_call_still_waiting_when_no_start_is_under_way():
    """INV-11: a call still ``starting`` in a state where no server's start is under way
    (forged: its server's start settled without it) and ended ``ok`` by a sample is
    reported; the check's shortcut skips a transition only when no start is under way and
    no call waits for one (issue 33: its ``phase == "starting"`` negated survived)."""
    state, _ = run(lazy(), Sample(), Call(0, "c1", "mcp__fs__read"))
    assert state.call("c1").phase == "starting"
    settled = attrs.evolve(state, servers=(attrs.evolve(state.servers[0], start=None),))
    forged = Transition(settled, (Result("c1", "ok"),))
    found = check_transition(settled, Sample(), forged, every=True)
    assert found == [("INV-11", "c1 ended ok by sample while waiting for fs")]


def test_a_failed_first_listing_still_settles_the_start_and_the_call_is_sent():
    b = lazy()
    _, outputs = run(b, Sample(), Call(0, "c1", "mcp__fs__read"), ListFailed("fs"))
    assert Sent("fs", "tools/call", "read") in outputs


# --- SPEC §8.9, INV-13: a call rejected unrun -----------------------------------------

WRITER = ServerSpec("fs", versions=(((WRITE,),), ((WRITE,),)))
IN_FLIGHT = (ListDone("fs"), Sample(), Call(0, "c1", "mcp__fs__write"))


def test_a_rejected_call_waits_for_a_refresh_then_is_sent_once_more():
    b = bound(WRITER)
    state, outputs = run(b, *IN_FLIGHT, CallRejected("c1"))
    assert outputs == [Sent("fs", "tools/list")]
    record = state.call("c1")
    assert record is not None
    assert (record.phase, record.retried) == ("retrying", True)
    state, outputs = run(b, *IN_FLIGHT, CallRejected("c1"), ListDone("fs"))
    assert outputs == [RefreshOutcome("fs", "unchanged", 1), Sent("fs", "tools/call", "write")]


def test_inv_13_reports_a_call_waiting_for_a_retry_it_was_never_counted_for():
    """INV-13: a forged state where a call waits for its retry (``retrying``) but was
    never rejected (``retried`` false) is reported (issue 33: the loop over the calls made
    to run zero times survived)."""
    state, _ = run(bound(WRITER), *IN_FLIGHT, CallRejected("c1"))
    record = state.call("c1")
    assert check_state(state) == []
    forged = attrs.evolve(state, calls=(attrs.evolve(record, retried=False),))
    assert ("INV-13", "c1 waits for a retry it is not counted as having") in check_state(forged)


def test_a_rejection_during_a_refresh_waits_for_the_refresh_queued_behind_it():
    b = bound(WRITER)
    events = (*IN_FLIGHT, ListChanged("fs"), CallRejected("c1"))
    _, outputs = run(b, *events)
    assert outputs == []
    _, outputs = run(b, *events, ListDone("fs"))
    assert Sent("fs", "tools/list") in outputs
    assert Sent("fs", "tools/call", "write") not in outputs
    _, outputs = run(b, *events, ListDone("fs"), ListDone("fs"))
    assert outputs[-1] == Sent("fs", "tools/call", "write")


def test_a_second_rejection_fails_the_call_and_a_waiting_retry_owes_no_cancellation():
    b = bound(WRITER)
    _, outputs = run(b, *IN_FLIGHT, CallRejected("c1"), ListDone("fs"), CallRejected("c1"))
    text = texts.REJECTED_AGAIN.format(server="fs", tool="write")
    assert outputs == [Result("c1", "failed", text)]
    _, outputs = run(b, *IN_FLIGHT, CallRejected("c1"), Cancel("c1"))
    assert outputs == [Result("c1", "cancelled", texts.CANCELLED)]
    _, outputs = run(b, *IN_FLIGHT, CallRejected("c1"), Timeout("c1"))
    (result,) = outputs
    assert isinstance(result, Result)
    assert result.text == texts.TIMED_OUT_RETRYING.format(seconds="300 seconds", server="fs")


# --- SPEC §5.7, LIVE-3: a list_changed stream the server ends ----------------------------

STREAMING = attrs.evolve(WRITER, streams=True)


def test_a_change_while_the_stream_is_down_is_unread_until_the_host_listens_again():
    """LIVE-3: nobody hears it (nothing owed, no refresh); relisten refreshes for it."""
    b = bound(STREAMING)
    state, outputs = run(b, ListDone("fs"), StreamEnded("fs"), ListChanged("fs"))
    assert outputs == []
    server = state.servers[0]
    assert (server.listening, server.unread, server.owed, server.refresh) == (
        False,
        True,
        False,
        None,
    )
    assert Relisten("fs") in enabled(state)
    assert StreamEnded("fs") not in enabled(state)
    state, outputs = run(b, ListDone("fs"), StreamEnded("fs"), ListChanged("fs"), Relisten("fs"))
    assert outputs == [Sent("fs", "tools/list")]
    assert (state.servers[0].listening, state.servers[0].unread) == (True, False)
    assert state.servers[0].refresh is not None
    assert state.servers[0].refresh.version == 1  # it reads what was missed


def test_a_relisten_during_a_refresh_queues_exactly_one_more():
    b = bound(STREAMING)
    state, outputs = run(b, StreamEnded("fs"), Relisten("fs"))
    assert outputs == []
    assert state.servers[0].refresh is not None
    assert state.servers[0].refresh.queued
    _, outputs = run(b, StreamEnded("fs"), Relisten("fs"), ListDone("fs"))
    assert outputs[-1] == Sent("fs", "tools/list")


def test_a_disconnect_ends_the_stream_with_the_session_and_the_reconnect_reads_the_change():
    b = bound(STREAMING)
    events = (ListDone("fs"), StreamEnded("fs"), ListChanged("fs"), Disconnect("fs"))
    state, _ = run(b, *events)
    assert state.servers[0].listening
    assert Relisten("fs") not in enabled(state)
    state, outputs = run(b, *events, Reconnect("fs"))
    assert outputs == [Sent("fs", "tools/list")]
    assert not state.servers[0].unread


def test_inv_8_reports_a_refresh_in_flight_on_any_disconnected_server_not_only_the_first():
    """INV-8: nothing of a disconnected server is in flight; a forged state where the
    second server lost its connection with its first listing out is reported, past the
    first server, connected (issue 33: the check's ``continue`` made ``break`` survived)."""
    state = initial(bound(ServerSpec("a", versions=(((READ,),),)), WRITER)).state
    assert [s.refresh is not None for s in state.servers] == [True, True]
    lost = attrs.evolve(state.servers[1], connected=False)
    forged = attrs.evolve(state, servers=(state.servers[0], lost))
    assert ("INV-8", "refresh of disconnected fs still in flight") in check_state(forged)


def test_a_server_that_does_not_end_its_stream_has_no_stream_event():
    state, _ = run(bound(WRITER), ListDone("fs"))
    kinds = {event.kind for event in enabled(state)}
    assert not kinds & {"stream_ended", "relisten"}


# --- SPEC §8.13, INV-14: a session the server no longer knows ------------------------------

EXPIRING = ServerSpec("fs", versions=(((WRITE, READ),), ((WRITE, READ),)), sessions=True)
TWO_IN_FLIGHT = (
    ListDone("fs"),
    Sample(),
    Call(0, "c1", "mcp__fs__write"),
    Call(0, "c2", "mcp__fs__read"),
)


def test_an_expired_session_fails_the_other_calls_ends_the_refresh_and_lists_anew():
    b = bound(EXPIRING)
    events = (*TWO_IN_FLIGHT, RefreshRequested("fs"), SessionExpired("c1"))
    state, outputs = run(b, *events)
    assert outputs == [
        RefreshOutcome(
            "fs", "rejected", 1, "disconnected", texts.REJECT_DISCONNECTED.format(server="fs")
        ),
        Result("c2", "failed", texts.DISCONNECTED.format(server="fs")),
        Sent("fs", "tools/list"),
    ]
    record = state.call("c1")
    assert record is not None
    assert (record.phase, record.retried, record.expired) == ("retrying", True, True)
    assert state.servers[0].connected
    assert state.registry.generation == 1  # the catalog stays


def test_inv_14_reads_the_refresh_outcomes_of_the_expired_server_alone():
    """INV-14 asks the expired server's refresh to end ``rejected``; an outcome of another
    server in the same transition, whatever its name's order, is no part of it."""
    b = bound(EXPIRING)
    before, _ = run(b, *TWO_IN_FLIGHT, RefreshRequested("fs"))
    event = SessionExpired("c1")
    t = step(before, event)
    assert inv_14_transition(before, event, t) is None
    for other in ("a", "zz"):  # sorting before and after "fs"
        outcome = RefreshOutcome(other, "unchanged", 1)
        assert inv_14_transition(before, event, Transition(t.state, (*t.outputs, outcome))) is None
    rejected_twice = Transition(t.state, (*t.outputs, t.outputs[0]))
    assert "the refresh of the expired session of fs ended" in (
        inv_14_transition(before, event, rejected_twice) or ""
    )


def test_a_call_refused_for_an_expired_session_is_sent_once_more_after_the_new_listing():
    b = bound(EXPIRING)
    events = (*TWO_IN_FLIGHT, SessionExpired("c1"), ListDone("fs"))
    _, outputs = run(b, *events)
    assert outputs == [RefreshOutcome("fs", "unchanged", 1), Sent("fs", "tools/call", "write")]
    _, outputs = run(b, *events, SessionExpired("c1"))
    text = texts.EXPIRED_AGAIN.format(server="fs", tool="write")
    assert outputs == [Result("c1", "failed", text), Sent("fs", "tools/list")]


def test_inv_14_reports_an_expired_call_sent_again_when_another_servers_listing_ended():
    """INV-14: a call refused for an expired session is sent again only when a listing of
    its own server ends; the check reports one sent when server ``a``'s first listing
    ended instead (issue 33: ``event.server == server`` made ``<=`` survived, and ``a``
    sorts before ``fs``)."""
    other = ServerSpec("a", versions=(((READ,),),))
    state, _ = run(bound(EXPIRING, other), *TWO_IN_FLIGHT, SessionExpired("c1"))
    record = state.call("c1")
    assert record is not None
    assert (record.phase, record.expired) == ("retrying", True)
    event = ListDone("a")
    t = step(state, event)
    assert check_transition(state, event, t) == []
    calls = tuple(attrs.evolve(c, phase="sent") if c.call_id == "c1" else c for c in t.state.calls)
    sent = Sent("fs", "tools/call", "write")
    forged = attrs.evolve(t, state=attrs.evolve(t.state, calls=calls), outputs=(*t.outputs, sent))
    assert ("INV-14", "c1 was sent again by list_done before its new listing ended") in (
        check_transition(state, event, forged)
    )


def test_an_expiry_naming_its_call_by_an_equal_but_distinct_string_is_judged_the_same():
    """INV-14 compares call ids by value: the refiner and the property machines build an
    event's call_id from another trace record than the call's (parsed JSON: equal
    strings, distinct objects), and the expired call itself is not one left in flight
    (issue 33: ``!=`` made ``is not`` survived, the tests' ids all being one object)."""
    state, _ = run(bound(EXPIRING), *TWO_IN_FLIGHT)
    call_id = "".join(["c", "1"])
    assert call_id == "c1"
    assert call_id is not state.calls[0].call_id
    event = SessionExpired(call_id)
    t = step(state, event)
    assert t.state.call("c1").phase == "retrying"
    assert check_transition(state, event, t) == []


def test_a_call_waiting_after_an_expiry_times_out_or_closes_saying_so():
    b = bound(EXPIRING)
    _, outputs = run(b, *TWO_IN_FLIGHT, SessionExpired("c1"), Timeout("c1"))
    text = texts.TIMED_OUT_EXPIRED.format(seconds="300 seconds", server="fs")
    assert outputs == [Result("c1", "timed_out", text)]  # nothing of it is in flight
    _, outputs = run(b, *TWO_IN_FLIGHT, SessionExpired("c1"), Close())
    assert Result("c1", "cancelled", texts.CLOSED_EXPIRED) in outputs
    assert Sent("fs", "notifications/cancelled", "c1") not in outputs


def test_a_call_rejected_unrun_then_refused_for_an_expired_session_is_not_sent_a_third_time():
    """INV-13 and INV-14 share one resend: any second refusal unrun ends the call."""
    b = bound(EXPIRING)
    events = (*TWO_IN_FLIGHT, CallRejected("c1"), ListDone("fs"), SessionExpired("c1"))
    _, outputs = run(b, *events)
    text = texts.EXPIRED_AGAIN.format(server="fs", tool="write")
    assert Result("c1", "failed", text) in outputs
    assert Sent("fs", "tools/call", "write") not in outputs


# --- SPEC §8.11: an idle timeout that progress re-arms, capped ---------------------------

IDLE = ServerSpec("fs", versions=(((WRITE,),),), idle_timeout=True, tool_timeout_sec=60)


def test_progress_re_arms_an_idle_timeout_until_the_cap_is_the_only_deadline():
    b = attrs.evolve(bound(IDLE), rearms=2)
    state, outputs = run(b, *IN_FLIGHT, CallProgress("c1"))
    assert outputs == []
    assert CallProgress("c1") in enabled(state)
    assert Timeout("c1") in enabled(state)
    state, _ = run(b, *IN_FLIGHT, CallProgress("c1"), CallProgress("c1"))
    assert CallProgress("c1") not in enabled(state)
    assert Timeout("c1") not in enabled(state)
    assert Timeout("c1", cap=True) in enabled(state)
    _, outputs = run(b, *IN_FLIGHT, CallProgress("c1"), CallProgress("c1"), Timeout("c1", cap=True))
    assert outputs == [
        Result("c1", "timed_out", texts.TIMED_OUT_CAP.format(seconds="3600 seconds")),
        Sent("fs", "notifications/cancelled", "c1"),
    ]


def test_an_idle_timeout_says_no_progress_came_and_a_plain_server_has_no_progress_event():
    _, outputs = run(bound(IDLE), *IN_FLIGHT, Timeout("c1"))
    assert outputs[0] == Result(
        "c1", "timed_out", texts.TIMED_OUT_IDLE.format(seconds="60 seconds")
    )
    state, _ = run(bound(WRITER), *IN_FLIGHT)
    assert CallProgress("c1") not in enabled(state)


# --- reconfiguration (SPEC §3.7) ------------------------------------------------------------

KEPT = ServerSpec("a", versions=(((SEARCH,),),))
REMOVED = ServerSpec("b", versions=(((SEARCH,),),), change="removed")
CHANGED = ServerSpec("c", versions=(((SEARCH,),),), change="changed", replacement=(((WRITE,),),))
ADDED = ServerSpec("d", versions=(((SEARCH,),),), change="added")


def reconfigurable(policy="revalidate") -> tuple[Bound, list[Event]]:
    """Kept ``a``, removed ``b``, changed ``c`` and added ``d``; ``a``, ``b``, ``c``
    installed and one step sampled."""
    b = bound(KEPT, REMOVED, CHANGED, ADDED, policy=policy, steps=2)
    return b, [ListDone("a"), ListDone("b"), ListDone("c"), Sample()]


def test_an_added_server_is_absent_until_the_reconfiguration_and_then_lists():
    """SPEC §3.7 (INV-16): nothing is sent to an added server and no event names it before
    the reconfiguration; afterwards it is connected and its first refresh is in flight."""
    b, prefix = reconfigurable()
    first = initial(b)
    assert [o for o in first.outputs if isinstance(o, Sent)] == [
        Sent("a", "tools/list"),
        Sent("b", "tools/list"),
        Sent("c", "tools/list"),
    ]
    state, _ = run(b, *prefix)
    assert not any(getattr(e, "server", None) == "d" for e in enabled(state))
    assert Reconfigure() in enabled(state)
    state, outputs = run(b, *prefix, Reconfigure())
    assert Sent("d", "tools/list") in outputs
    assert ListDone("d") in enabled(state)
    assert Reconfigure() not in enabled(state)  # once per run


def test_a_reconfiguration_cancels_the_calls_of_what_it_replaces_and_publishes_once():
    """INV-15, INV-16: the calls on the removed and the changed server end cancelled (the
    one in flight with its cancellation, before its server's session closes); the removed
    catalog is emptied by one publication; the changed server keeps its catalog while its
    replacement lists; the kept server and its call are untouched."""
    b, prefix = reconfigurable()
    calls = [Call(0, "c1", "mcp__b__search"), Call(0, "c2", "mcp__c__search")]
    state, outputs = run(b, *prefix, *calls, Reconfigure())
    assert outputs == [
        Result("c1", "cancelled", texts.RECONFIGURED_SENT.format(how="removed", server="b")),
        Sent("b", "notifications/cancelled", "c1"),
        Sent("b", "close"),
        Result("c2", "cancelled", texts.RECONFIGURED_UNSENT.format(how="replaced", server="c")),
        Sent("c", "close"),
        Sent("c", "tools/list"),
        Sent("d", "tools/list"),
        Published(4, "mcp:b", ()),
    ]
    assert state.registry.generation == 4
    assert state.registry.catalog("mcp:c").remote_names() == {"search"}
    assert state.servers[2].replacing
    assert not state.servers[1].present


def test_a_removed_servers_catalog_is_emptied_under_its_next_source_generation():
    """SPEC §3.2 (INV-1, INV-3): emptying a removed server's catalog is an install like
    any other: its source generation moves by exactly one, as the registry's does, and
    the other catalogs keep theirs (mutation seed 91: ``c.generation + 1`` made ``+ 2``
    survived; only the registry's generation was pinned)."""
    b, prefix = reconfigurable()
    before, _ = run(b, *prefix)
    after, _ = run(b, *prefix, Reconfigure())
    emptied = after.registry.catalog("mcp:b")
    assert emptied.bindings == ()
    assert emptied.generation == before.registry.catalog("mcp:b").generation + 1 == 2
    for source in ("mcp:a", "mcp:c"):
        assert after.registry.catalog(source) == before.registry.catalog(source)


def test_inv_10_reports_a_call_leaving_approval_unapproved_after_one_still_waiting():
    """INV-10: a forged transition where the first of two gated calls still waits and the
    second was sent without its approve is reported, past the first (issue 33: the
    check's ``continue`` over a call that still waits made ``break`` survived)."""
    plain, prefix = installed()
    b = attrs.evolve(plain, approval=True)
    calls = (Call(0, "c1", "mcp__fs__search"), Call(0, "c2", "mcp__fs__search"))
    before, _ = run(b, *prefix, *calls)
    assert [r.phase for r in before.calls] == ["approval", "approval"]
    sent = attrs.evolve(before.calls[1], phase="sent")
    forged = Transition(
        attrs.evolve(before, calls=(before.calls[0], sent)), (Sent("fs", "tools/call", "search"),)
    )
    found = check_transition(before, Approve("c1"), forged, every=True)
    assert ("INV-10", "c2 became sent without an approval (approve)") in found


def test_a_call_waiting_for_approval_on_a_removed_server_ends_cancelled_unsent():
    """INV-16: a reconfiguration ends a call of the removed server that still waits for
    its approval, ``cancelled`` as one never sent, with no cancellation (issue 33:
    ``record.phase == "done"`` made ``<``, which only ``approval`` passes, survived)."""
    plain, prefix = reconfigurable()
    b = attrs.evolve(plain, approval=True)
    state, outputs = run(b, *prefix, Call(0, "c1", "mcp__b__search"))
    assert outputs == []
    assert state.call("c1").phase == "approval"
    _, outputs = run(b, *prefix, Call(0, "c1", "mcp__b__search"), Reconfigure())
    unsent = texts.RECONFIGURED_UNSENT.format(how="removed", server="b")
    assert Result("c1", "cancelled", unsent) in outputs
    assert Sent("b", "notifications/cancelled", "c1") not in outputs


def test_inv_16_reports_a_message_sent_to_a_removed_server_after_the_reconfiguration():
    """INV-16: after the reconfiguration, a forged transition that sends to the removed
    server is reported (issue 33: the shortcut for "every server present" negated, which
    skipped the check exactly when one is absent, survived)."""
    b, prefix = reconfigurable()
    state, _ = run(b, *prefix, Reconfigure())
    assert not state.servers[1].present
    t = step(state, Sample())
    assert check_transition(state, Sample(), t, every=True) == []
    forged = attrs.evolve(t, outputs=(*t.outputs, Sent("b", "tools/list")))
    found = check_transition(state, Sample(), forged, every=True)
    assert ("INV-16", "tools/list sent to absent b") in found


def test_inv_16_leaves_a_refused_call_naming_a_removed_servers_tool_alone():
    """INV-16: a call to a removed server's tool that is refused (the host closed, or its
    id is taken) dispatches nothing, so INV-16 asks no ``unavailable`` result of it
    (issue 33: ``before.closed or ...`` made ``and`` in the check's ``_dispatched``
    survived: the model offers only an unknown name after close or with a reused id)."""
    b, prefix = reconfigurable()
    state, _ = run(b, *prefix, Call(0, "c1", "mcp__a__search"), Reconfigure())
    assert not state.servers[1].present
    assert state.steps[0] is not None
    reused = Call(0, "c1", "mcp__b__search")
    t = STANDARD.apply(state, reused)
    assert t.outputs == (Refused("c1", texts.DUPLICATE_CALL_ID.format(call_id="c1")),)
    assert check_transition(state, reused, t) == []
    assert check_transition(state, reused, t, every=True) == []
    closed = attrs.evolve(state, closed=True)
    late = Call(0, "c2", "mcp__b__search")
    t = STANDARD.apply(closed, late)
    assert t.outputs == (Refused("c2", texts.HOST_CLOSED),)
    assert check_transition(closed, late, t) == []
    assert check_transition(closed, late, t, every=True) == []


def test_inv_15_reports_a_present_server_replacing_with_no_reconfiguration_behind_it():
    """INV-15: a forged state whose one server, present, is ``replacing`` though nothing
    was reconfigured is reported: the check's shortcut (every server present, none
    replacing) does not take it (issue 33: the shortcut's ``not`` dropped survived)."""
    state, _ = run(bound(ONE), ListPage("fs"), ListDone("fs"))
    forged = attrs.evolve(state, servers=(attrs.evolve(state.servers[0], replacing=True),))
    expected = ("INV-15", "fs is replacing without its replacement's first refresh in flight")
    assert check_state(forged) == [expected]


def test_a_reconfiguration_that_removes_no_tool_does_not_move_the_generation():
    """INV-1: a reconfiguration whose removed server had no tools installed publishes
    nothing; a refresh in flight on it ends rejected (reconfigured)."""
    b = bound(KEPT, REMOVED, CHANGED, ADDED)
    state, outputs = run(b, ListDone("a"), Reconfigure())
    assert state.registry.generation == 1
    assert not any(isinstance(o, Published) for o in outputs)
    reason = texts.REJECT_RECONFIGURED.format(how="removed", server="b")
    assert RefreshOutcome("b", "rejected", 1, "reconfigured", reason) in outputs


def test_a_call_to_a_removed_server_is_unavailable_and_sends_nothing_under_both_policies():
    """SPEC §3.7 (INV-16): a step sampled before the removal does not keep the removed
    server's session, even under ``frozen``."""
    for policy in ("frozen", "revalidate"):
        b, prefix = reconfigurable(policy)
        _, outputs = run(b, *prefix, Reconfigure(), Call(0, "c1", "mcp__b__search"))
        text = texts.REMOVED.format(name="mcp__b__search", server="b")
        assert outputs == [Result("c1", "unavailable", text)]


def test_a_pinned_call_to_a_changed_server_waits_for_its_replacement():
    """SPEC §3.7: ``frozen`` binds names, not sessions: the call waits for the new session's
    first refresh, then goes to it; ``revalidate`` checks it against the new catalog."""
    b, prefix = reconfigurable("frozen")
    state, outputs = run(b, *prefix, Reconfigure(), Call(0, "c1", "mcp__c__search"))
    assert outputs == []
    assert state.call("c1").phase == "starting"
    state, outputs = run(b, *prefix, Reconfigure(), Call(0, "c1", "mcp__c__search"), ListDone("c"))
    assert outputs[:2] == [
        Published(5, "mcp:c", ("mcp__c__write",)),
        RefreshOutcome("c", "installed", 5),
    ]
    assert outputs[2:] == [Sent("c", "tools/call", "search")]
    b, prefix = reconfigurable("revalidate")
    _, outputs = run(b, *prefix, Reconfigure(), Call(0, "c1", "mcp__c__search"), ListDone("c"))
    text = texts.UNAVAILABLE.format(name="mcp__c__search", server="c", tool="search")
    assert outputs[-1] == Result("c1", "unavailable", text)


def test_a_replacement_whose_first_refresh_fails_removes_the_old_catalog():
    """INV-15: the old catalog goes in one publication; the outcome says why, with the new
    generation, and that the old catalog was removed (not that it stays); the same when the
    replacement disconnects first."""
    b, prefix = reconfigurable()
    state, outputs = run(b, *prefix, Reconfigure(), ListFailed("c"))
    reason = texts.REJECT_LIST_FAILED.format(server="c", why="server error")
    reason = reason.replace(texts.PREVIOUS_CATALOG_STAYS, texts.REPLACED_CATALOG_REMOVED)
    assert outputs == [
        Published(5, "mcp:c", ()),
        RefreshOutcome("c", "rejected", 5, "list_failed", reason),
    ]
    assert not state.servers[2].replacing
    state, outputs = run(b, *prefix, Reconfigure(), Disconnect("c"))
    reason = texts.REJECT_DISCONNECTED.format(server="c")
    reason = reason.replace(texts.PREVIOUS_CATALOG_STAYS, texts.REPLACED_CATALOG_REMOVED)
    assert outputs == [
        Published(5, "mcp:c", ()),
        RefreshOutcome("c", "rejected", 5, "disconnected", reason),
    ]


def test_the_reconfiguration_mutants_are_caught_by_their_invariants():
    """INV-15 and INV-16 fail on the mutants that break them, on one short run each."""
    b, prefix = reconfigurable()
    state, _ = run(b, *prefix, Call(0, "c1", "mcp__b__search"))
    dropped = mutant("drop_cancellation_on_removal").apply(state, Reconfigure())
    assert "INV-16" in {inv for inv, _ in check_transition(state, Reconfigure(), dropped)}
    emptied = mutant("empty_changed_catalog_at_once").apply(state, Reconfigure())
    assert "INV-15" in {inv for inv, _ in check_transition(state, Reconfigure(), emptied)}


# --- one vocabulary: the kinds of events and outputs ---------------------------------------


def test_every_event_type_has_its_own_kind_in_the_order_of_event_kinds():
    assert tuple(t.kind for t in EVENT_TYPES) == EVENT_KINDS
    assert len(set(EVENT_KINDS)) == len(EVENT_KINDS)


def test_every_output_type_has_its_own_kind_in_the_order_of_output_kinds():
    assert tuple(OUTPUT_KIND[t] for t in OUTPUT_TYPES) == OUTPUT_KINDS
    assert len(set(OUTPUT_KINDS)) == len(OUTPUT_KINDS)
    assert not set(OUTPUT_KINDS) & set(EVENT_KINDS)


def test_every_event_type_has_one_effect_and_a_mutant_that_overrides_it_is_applied():
    assert set(STANDARD.handlers) == set(EVENT_TYPES)
    plain, prefix = installed()
    b = attrs.evolve(plain, approval=True)
    state, _ = run(b, *prefix, Call(0, "c1", "mcp__fs__search"))
    denied = STANDARD.apply(state, Deny("c1"))
    assert [type(o) for o in denied.outputs] == [Result]
    sent = mutant("deny_sends").apply(state, Deny("c1"))
    assert sent.outputs == (Sent("fs", "tools/call", "search"),)


def test_a_duration_of_one_second_is_said_in_the_singular():
    """Issue 28: "timed out after 1 seconds" (SPEC §8.7, ``texts.seconds``)."""
    assert texts.seconds(1) == "1 second"
    assert texts.seconds(1.0) == "1 second"
    assert texts.seconds(0.5) == "0.5 seconds"
    assert texts.seconds(300) == "300 seconds"
    assert texts.TIMED_OUT.format(seconds=texts.seconds(1)).startswith(
        "call timed out after 1 second;"
    )


def test_each_part_of_the_standard_suite_has_the_steps_and_calls_its_docstring_names():
    """SPEC §10.2's budgets, pinned here beside the state counts the explorations pin
    (issue 33: a part's default step budget negated survived every fast test)."""
    from mcpbind.model.bounds import standard_suite

    budgets = {part.name: (part.bound.max_steps, part.bound.max_calls) for part in standard_suite()}
    assert budgets == {
        "catalogs": (2, 1),
        "calls": (2, 3),
        "approval": (2, 2),
        "sessions": (1, 2),
        "reconfigure": (1, 2),
        "lazy": (2, 2),
        "retry": (1, 2),
        "progress": (1, 2),
        "tasks": (1, 2),
        "resources": (2, 2),
    }
    overridden = {(p.bound.max_steps, p.bound.max_calls) for p in standard_suite(steps=3, calls=4)}
    assert overridden == {(3, 4)}


# --- resources (SPEC §11.20) --------------------------------------------------------------

DOC_A, DOC_B = ToolDef("file:///a", resource=True), ToolDef("file:///b", resource=True)
DOCS = ServerSpec("docs", versions=(((SEARCH, DOC_A),), ((SEARCH, DOC_B),)))
READ_A = resource_name("docs", "file:///a")


def test_a_resource_only_refresh_installs_in_one_generation_and_a_step_keeps_what_it_saw():
    """INV-1: a resource refresh is a refresh (one publication, one generation); INV-2:
    the step sampled before it still lists the resource it saw, and reads it as such."""
    b = bound(DOCS)
    state, outputs = run(b, ListDone("docs"), Sample(), ListChanged("docs"), ListDone("docs"))
    assert outputs == [
        Published(2, "mcp:docs", ("mcp__docs__search",)),
        RefreshOutcome("docs", "installed", 2),
    ]
    assert state.registry.catalog("mcp:docs").uris() == {"file:///b"}
    step0 = state.steps[0]
    assert step0 is not None
    assert step0.catalog("mcp:docs").uris() == {"file:///a"}
    _, outputs = run(b, ListDone("docs"), Sample(), Call(0, "c1", READ_A))
    assert outputs == [Sent("docs", "resources/read", "file:///a")]


@pytest.mark.parametrize(
    ("second", "publications"),
    [
        (((SEARCH, WRITE, DOC_A),), 2),  # the same URI: a new source generation all the same
        (((SEARCH, DOC_B),), 2),  # another URI
        (((SEARCH, WRITE),), 1),  # every resource gone: published once
    ],
    ids=["same-uri", "another-uri", "no-resources"],
)
def test_the_publish_resources_apart_mutant_splits_every_refresh_with_resources(
    second, publications
):
    """The INV-1 mutant ``publish_resources_apart`` publishes a refresh's tools, then its
    resources in a generation of their own; a refresh without resources is published
    once, as the standard rules do (mutation seed 101: its ``old.resources ==
    catalog.resources`` never held, every install giving its resources the new source
    generation, so ``or`` made ``and`` was equivalent: the comparison is gone)."""
    docs = ServerSpec("docs", versions=(((SEARCH, DOC_A),), second))
    state, _ = run(bound(docs), ListDone("docs"), ListChanged("docs"))
    broken = mutant("publish_resources_apart").apply(state, ListDone("docs"))
    standard = STANDARD.apply(state, ListDone("docs"))
    published = [o for o in broken.outputs if isinstance(o, Published)]
    assert len(published) == publications
    if publications == 1:
        assert broken == standard
    else:
        assert broken.state.registry.generation == standard.state.registry.generation + 1
        assert published[0].names == published[1].names  # the tools, then again with URIs
        assert broken.state.registry.catalog("mcp:docs") == standard.state.registry.catalog(
            "mcp:docs"
        )


def test_a_read_of_a_dropped_resource_is_unavailable_under_revalidate_and_read_under_frozen():
    """SPEC §11.20, §7: the binding policy decides a read of a URI the live catalog dropped;
    the read is a call with one result (INV-4), answered like a tool's."""
    events = [ListDone("docs"), Sample(), ListChanged("docs"), ListDone("docs")]
    _, outputs = run(bound(DOCS), *events, Call(0, "c1", READ_A))
    text = texts.RESOURCE_UNAVAILABLE.format(uri="file:///a", server="docs")
    assert outputs == [Result("c1", "unavailable", text)]
    frozen = bound(DOCS, policy="frozen")
    _, outputs = run(frozen, *events, Call(0, "c1", READ_A))
    assert outputs == [Sent("docs", "resources/read", "file:///a")]
    state, outputs = run(frozen, *events, Call(0, "c1", READ_A), CallResponded("c1"))
    assert outputs == [Result("c1", "ok", None)]
    assert state.calls[0].results == 1


def test_a_listing_ended_before_its_last_page_is_reported_by_inv_3_with_the_pages_read():
    """INV-3: a publication at a ``list_done`` that came after fewer pages than the
    listing has (forged: the standard rules allow no such ``list_done``) is reported with
    the count (issue 33: the check had no coverage)."""
    from test_explore_small import part

    from mcpbind.model import ListDone
    from mcpbind.model.explore import reachable
    from mcpbind.model.invariants import check_transition
    from mcpbind.model.rules import STANDARD, listings

    bound = part("catalogs").bound
    early = next(
        (state, i)
        for state in reachable(bound)
        for i, server in enumerate(state.servers)
        if server.refresh is not None
        and server.refresh.pages + 1 < len(listings(state, i)[server.refresh.version])
    )
    state, i = early
    event = ListDone(bound.servers[i].name)
    found = check_transition(state, event, STANDARD.apply(state, event), every=True)
    assert found == [("INV-3", "mcp:git.hub published after 1 page(s) of a longer listing")]


def test_a_running_call_of_step_0_keeps_its_snapshot_when_a_later_step_has_none():
    """SPEC §2.3 (INV-2): step snapshots no call uses are dropped (a state reduction), and
    one a running call uses is kept: at the last call of the catalogs part a second
    sample has no call, so the snapshots are rebuilt, and step 0 (the least step, seed
    83's ``>= 0`` made ``> 0``) must stay."""
    [part] = [p for p in standard_suite("frozen") if p.name == "catalogs"]
    events = [ListDone("git_hub"), Sample(), Call(0, "c1", "mcp__git_hub__search"), Sample()]
    assert replay(part.bound, events) == []
    state = STANDARD.initial(part.bound).state
    for event in events:
        state = STANDARD.step(state, event).state
    assert state.steps[0] is not None
    assert state.call("c1") is not None


def test_the_standard_bound_of_the_library_guide_has_two_steps_three_calls_and_both_servers():
    """``standard_bound()`` (docs/model.md's example): every scripted version, page and
    event with 2 steps and 3 calls, the two servers of the standard suite (seed 82: the
    default of ``steps`` made 1 survived)."""
    bound = standard_bound()
    assert (bound.max_steps, bound.max_calls, len(bound.servers)) == (2, 3, 2)
    assert bound.policy == "revalidate"
    assert standard_bound("frozen", servers=1, steps=1, calls=1).max_steps == 1


def test_inv_11_reads_only_the_dormant_servers_own_sends():
    """INV-11: a dormant server ``a`` and a started ``b``: a ``tools/list`` sent to ``b``
    while ``a`` sleeps is nothing sent to ``a`` (issue 33: the check's ``o.server ==
    spec.name`` made ``>`` counted ``b``'s sends as ``a``'s, since "b" sorts after)."""
    b = Bound(
        servers=(
            ServerSpec("a", versions=(((SEARCH,),),)),
            ServerSpec("b", versions=(((READ,),),)),
        ),
        builtins=(),
        policy="revalidate",
        max_steps=1,
        max_calls=1,
        lazy=("a",),
    )
    state, _ = run(b, ListDone("b"))
    assert state.servers[0].start == "dormant"
    t = step(state, RefreshRequested("b"))
    assert t.outputs == (Sent("b", "tools/list"),)
    assert check_transition(state, RefreshRequested("b"), t, every=True) == []


def test_inv_3_reports_a_listing_outcome_that_leaves_its_excluded_tools_unsaid():
    """INV-3 (SPEC §5.4): a forged outcome of a listing with a tool to leave out that
    names none is reported (issue 33: the outcome check's loop over the outputs made to
    run zero times survived the model-rule tests)."""
    research = ToolDef("research", excluded="task_required")
    spec = ServerSpec("fs", versions=(((SEARCH, research),),))
    b = bound(spec)
    state = initial(b).state
    t = step(state, ListDone("fs"))
    assert check_transition(state, ListDone("fs"), t, every=True) == []
    outcome = t.outputs[-1]
    assert isinstance(outcome, RefreshOutcome)
    forged = Transition(t.state, (*t.outputs[:-1], attrs.evolve(outcome, excluded=())))
    found = check_transition(state, ListDone("fs"), forged, every=True)
    assert ("INV-3", "fs left out ['research'] but reported []") in found


def test_a_reconfiguration_forgets_a_late_answer_owed_and_still_ends_the_calls_after_it():
    """INV-16: a call of the removed server that ended cancelled (its late answer may still
    come) can get none once the session is gone, and the server's call after it, in
    flight, still ends cancelled (issue 33: the done call's ``retire(late=False)`` made
    ``late=True`` or its test made ``not``, or its ``continue`` made ``break``, survived:
    no chosen test reached it)."""
    b, prefix = reconfigurable()
    first, second = Call(0, "c1", "mcp__b__search"), Call(0, "c2", "mcp__b__search")
    state, _ = run(b, *prefix, first, Cancel("c1"), second)
    assert state.call("c1").late
    assert state.call("c2").phase == "sent"
    state, outputs = run(b, *prefix, first, Cancel("c1"), second, Reconfigure())
    assert Result("c2", "cancelled", texts.RECONFIGURED_SENT.format(how="removed", server="b")) in (
        outputs
    )
    assert not state.call("c1").late
    assert CallResponded("c1") not in enabled(state)


def test_an_expired_session_forgets_a_late_answer_owed_on_it():
    """INV-14: a call that ended cancelled on a session the server then forgot can get no
    late answer on it (issue 33: the done call's ``retire(late=False)`` made ``late=True``
    or its test made ``not``: no chosen test reached it)."""
    b = bound(EXPIRING)
    events = (*TWO_IN_FLIGHT, Cancel("c2"))
    state, _ = run(b, *events)
    assert state.call("c2").late
    state, _ = run(b, *events, SessionExpired("c1"))
    assert not state.call("c2").late
    assert CallResponded("c2") not in enabled(state)


def test_ending_a_call_that_ended_counts_a_second_result_and_inv_4_sees_it():
    """INV-4: a rule that ends a call that ended already (a mutant's may; the standard
    rules never do) leaves its record done with one more result and nothing else owed, so
    the check reports the second result (issue 33: the retired record's branch of
    ``ended``, its ``results + 1`` and its cleared flags, was reached by no chosen test)."""
    b, prefix = installed()
    state, _ = run(b, *prefix, Call(0, "c1", "mcp__fs__search"), Cancel("c1"))
    record = state.call("c1")
    assert (record.step, record.phase, record.results, record.late) == (-1, "done", 1, True)
    again = STANDARD.ended(state, record, "ok", None)
    assert again.state.call("c1") == attrs.evolve(record, results=2, status="ok")
    assert again.outputs == (Result("c1", "ok", None),)
    found = check_transition(state, CallResponded("c1"), again, every=True)
    assert any(invariant == "INV-4" for invariant, _ in found)


def test_inv_16_reports_a_call_left_running_after_one_that_ended_on_the_removed_server():
    """INV-16: a forged reconfiguration that leaves the removed server's call in flight
    (no result, no cancellation) is reported, past a call of that server that had ended
    already (issue 33: the check's ``continue`` over an ended call made ``break``)."""
    b, prefix = reconfigurable()
    first, second = Call(0, "c1", "mcp__b__search"), Call(0, "c2", "mcp__b__search")
    before, _ = run(b, *prefix, first, Cancel("c1"), second)
    assert [(c.call_id, c.phase) for c in before.calls] == [("c1", "done"), ("c2", "sent")]
    t = step(before, Reconfigure())
    kept = tuple(o for o in t.outputs if getattr(o, "call_id", getattr(o, "detail", "")) != "c2")
    assert len(kept) == len(t.outputs) - 2  # its result and its cancellation
    found = check_transition(before, Reconfigure(), Transition(t.state, kept), every=True)
    assert ("INV-16", "c2 (sent) on removed b did not end cancelled") in found
