"""The rooms of the call path on their own, without a host (SPEC §11.1): a server's
runtime over a real in-process MCP server, and the call table."""

from __future__ import annotations

import asyncio
import sys
from typing import get_args

import anyio
import pytest
import trio.testing
from mcp import StdioServerParameters
from testservers.inproc import fs_server

from mcpbind.impl import (
    CatalogCache,
    DuplicateCallId,
    HostConfig,
    IllegalTransition,
    McpConnector,
    NullRecorder,
    ServerConfig,
    ServerStartupError,
    ToolRegistry,
)
from mcpbind.impl.calls.table import CALL_PHASES, CallPhase, CallTable
from mcpbind.impl.catalog.publisher import Publisher
from mcpbind.impl.server.context import RuntimeContext
from mcpbind.impl.server.phases import SERVER_PHASES, ServerPhase
from mcpbind.impl.server.runtime import ServerRuntime
from mcpbind.impl.server.startup import FirstStart, install_order


def context(calls: CallTable | None = None) -> RuntimeContext:
    return RuntimeContext(
        publisher=Publisher(ToolRegistry(), NullRecorder()),
        calls=calls or CallTable(),
        connector=McpConnector(),
        cache=CatalogCache(),
        recorder=NullRecorder(),
        config=HostConfig(),
    )


async def test_a_server_runtime_runs_without_a_host_and_reports_its_first_start():
    shared = context()
    runtime = ServerRuntime("fs", ServerConfig(target=fs_server()), shared)
    assert runtime.statistics().phase == "connecting"
    async with anyio.create_task_group() as nursery:
        error = await nursery.start(runtime.run)
        assert error is None
        stats = runtime.statistics()
        assert (stats.phase, stats.connected, stats.sessions) == ("running", True, 1)
        assert stats.outcomes == {"installed": 1}
        names = set(shared.publisher.state.by_name)
        assert "mcp__fs__read" in names
        run = runtime.request_refresh()
        await run.done.wait()
        assert run.outcome is not None
        assert run.outcome.status == "unchanged"
        assert runtime.statistics().outcomes == {"installed": 1, "unchanged": 1}
        nursery.cancel_scope.cancel()


async def test_a_required_server_that_cannot_start_reports_its_error_and_its_task_ends():
    exits = StdioServerParameters(command=sys.executable, args=["-c", "raise SystemExit(3)"])
    runtime = ServerRuntime("gone", ServerConfig(target=exits, required=True), context())
    with anyio.fail_after(60):
        async with anyio.create_task_group() as nursery:
            error = await nursery.start(runtime.run)
    # The nursery closed by itself: the runtime's task had nothing left to do.
    assert isinstance(error, ServerStartupError)
    assert error.server == "gone"
    assert runtime.statistics().phase == "failed"
    assert not runtime.connected


async def test_a_server_that_cannot_start_reports_its_last_twenty_stderr_lines():
    """SPEC §11.14: the last 20 lines, oldest first; the earlier ones are only logged."""
    code = "import sys\nfor n in range(1, 31): print(f'line {n}', file=sys.stderr)\nsys.exit(3)"
    exits = StdioServerParameters(command=sys.executable, args=["-c", code])
    runtime = ServerRuntime("noisy", ServerConfig(target=exits, required=True), context())
    with anyio.fail_after(60):
        async with anyio.create_task_group() as nursery:
            error = await nursery.start(runtime.run)
    assert isinstance(error, ServerStartupError)
    assert error.stderr == tuple(f"line {n}" for n in range(11, 31))
    assert runtime.statistics().stderr == error.stderr


async def test_an_optional_server_the_host_stops_waiting_for_reports_at_once():
    """SPEC §11.12 (the grace): a server still connecting is reported when the host stops
    waiting, joins later, and lets the servers after it install their first catalogs."""
    never = anyio.Event()

    class Hanging:
        def connect(self, *args: object, **kwargs: object) -> object:
            return self

        async def __aenter__(self) -> object:
            await never.wait()
            raise AssertionError("unreachable")

        async def __aexit__(self, *exc: object) -> None:
            return None

    shared = context()
    shared = RuntimeContext(
        publisher=shared.publisher,
        calls=shared.calls,
        connector=Hanging(),  # type: ignore[arg-type]
        cache=shared.cache,
        recorder=shared.recorder,
        config=shared.config,
    )
    runtime = ServerRuntime("slow", ServerConfig(target=fs_server()), shared)
    first, second = install_order(2)
    async with anyio.create_task_group() as nursery:

        async def stop_soon() -> None:
            await anyio.sleep(0.01)
            runtime.stop_waiting()

        nursery.start_soon(stop_soon)
        assert await nursery.start(runtime.run, first) is None
        assert runtime.statistics().phase == "connecting"
        assert second.before is first.decided
        assert first.decided.is_set()  # the next server need not wait for this one
        nursery.cancel_scope.cancel()


async def test_the_call_table_accepts_a_call_id_once_and_fails_only_the_lost_servers_calls():
    table = CallTable()
    a, b, waiting = table.open("a"), table.open("b"), table.open("approving")
    with pytest.raises(DuplicateCallId):
        table.open("a")
    table.attach(a, "s1", 300)
    table.attach(b, "s2", 0)
    assert table.statistics().attached == {"s1": 1, "s2": 1}
    assert (a.order, b.order, waiting.order) == (1, 2, 3)
    table.fail_server("s1")  # INV-8: every call attached to s1, and no other
    assert (a.ended_by, b.ended_by, waiting.ended_by) == ("disconnected", None, None)
    assert a.scope.cancel_called
    assert not b.scope.cancel_called
    assert not waiting.scope.cancel_called  # waiting for approval: attached to no server
    table.cancel("b")
    assert b.ended_by == "cancelled"
    for call in (a, b, waiting):
        table.close(call)
    assert len(table) == 0
    table.cancel("a")  # ended: no effect
    with pytest.raises(DuplicateCallId):
        table.open("b")  # ended calls keep their ids (INV-4)
    assert table.statistics().accepted == 3


@pytest.mark.trio
async def test_pausing_a_server_stops_its_calls_deadlines_and_resuming_gives_back_the_rest(
    autojump_clock: trio.testing.MockClock,
):
    """SPEC §11.10: the tool timeout waits while the server asks the user for input."""
    table = CallTable()
    call = table.open("c")
    table.attach(call, "s", 10)
    await anyio.sleep(4)
    paused = table.pause("s")
    assert call.scope.deadline == float("inf")
    await anyio.sleep(100)
    table.resume(paused)
    assert call.scope.deadline == pytest.approx(anyio.current_time() + 6)


@pytest.mark.trio
async def test_a_calls_acceptance_and_arrival_are_read_from_the_runs_own_clock(
    autojump_clock: trio.testing.MockClock,
):
    """SPEC §8.4: the wall time runs from acceptance, the tool timeout from the call's
    arrival at its server, both on the event loop's clock (what ``anyio.current_time()``
    reads), looked up once per table."""
    table = CallTable()
    await anyio.sleep(7)
    call = table.open("c")
    assert call.accepted == anyio.current_time()
    await anyio.sleep(3)
    table.attach(call, "s", 10)
    assert call.started == anyio.current_time() == pytest.approx(call.accepted + 3)
    assert call.scope.deadline == call.started + 10
    assert table.clock == autojump_clock.current_time


async def test_a_call_table_reads_the_running_event_loops_own_clock(anyio_backend_name):
    table = CallTable()
    table.open("c")
    if anyio_backend_name == "trio":
        assert table.clock == trio.lowlevel.current_clock().current_time
    else:
        assert table.clock == asyncio.get_running_loop().time


async def test_a_calls_cancel_scope_is_the_running_loops_own(anyio_backend_name):
    """On trio a call's scope is ``trio.CancelScope`` itself, not anyio's wrapper of one;
    cancelled from outside or by its deadline, it interrupts the call all the same."""
    table = CallTable()
    cancelled, timed_out = table.open("c"), table.open("t")
    expected = trio.CancelScope if anyio_backend_name == "trio" else type(anyio.CancelScope())
    assert type(cancelled.scope) is expected
    with cancelled.scope:
        table.cancel("c")
        await anyio.sleep(1)
    table.attach(timed_out, "s", 1e-9)  # due as soon as the loop looks
    with timed_out.scope:
        await anyio.sleep(1)
    assert (cancelled.ended_by, timed_out.ended_by) == ("cancelled", None)
    assert cancelled.scope.cancel_called
    assert timed_out.scope.cancel_called


async def test_a_pending_call_moves_only_along_its_phase_table():
    """SPEC §11.1: a pending call's phase changes through its verbs, along CALL_PHASES;
    a move the table does not hold raises IllegalTransition and changes nothing."""
    table = CallTable()
    call = table.open("c1")
    assert call.phase == "checking"
    call.await_approval()
    call.wait_start()
    call.dispatch()
    call.mark_sent()
    call.retry()
    assert (call.phase, call.sent) == ("retrying", False)
    call.dispatch()
    with pytest.raises(IllegalTransition, match="'dispatch' to 'approval'"):
        call.await_approval()
    assert call.phase == "dispatch"
    local = table.open("c2")
    local.run_local()
    with pytest.raises(IllegalTransition, match="'local' to 'dispatch'"):
        local.dispatch()


def test_the_phase_tables_name_every_phase_and_only_phases():
    """SPEC §11.1: each phase is a key of its table and every target is a phase."""
    for table, literal in ((CALL_PHASES, CallPhase), (SERVER_PHASES, ServerPhase)):
        phases = set(get_args(literal))
        assert set(table) == phases
        assert all(targets <= phases for targets in table.values())


async def test_a_server_phase_moves_only_along_its_table():
    """SPEC §11.1: a server's first start changes its phase only along SERVER_PHASES."""
    start = FirstStart("s")
    start.enter("dormant")
    with pytest.raises(IllegalTransition, match="'dormant' to 'listed'"):
        start.enter("listed")
    assert start.pending
    start.wake()
    assert start.phase == "starting"
    start.settle()
    assert start.phase == "running"
    with pytest.raises(IllegalTransition, match="'running' to 'connecting'"):
        start.enter("connecting")
