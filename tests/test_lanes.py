"""The exclusive lane (SPEC §8.3, INV-9) on its own: who takes it when it frees."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

import anyio
import pytest
from testservers.inproc import Probe, fs_server

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.calls.lanes import Lane, Lanes
from mcpbind.model import texts


async def take_and_free(
    lanes: Lanes, lane: Lane, took: list[int], order: int, scope: anyio.CancelScope | None = None
) -> None:
    """Wait for step 1's lane as the call accepted ``order``-th, note it, free the lane."""
    with scope or anyio.CancelScope():
        await lanes.acquire(1, lane, order)
        took.append(order)
        lanes.release(1, lane)


def held_lane() -> tuple[Lanes, Lane, list[int], Callable[..., Awaitable[None]]]:
    """Step 1's lane, held; the orders of the waiters that took it after, in turn; and
    ``wait(order, scope=None)``, a waiter of that order."""
    lanes = Lanes()
    lane = lanes.get(1)
    assert lane.acquire_nowait()
    took: list[int] = []
    return lanes, lane, took, functools.partial(take_and_free, lanes, lane, took)


async def test_a_freed_lane_goes_to_the_oldest_accepted_waiter_not_the_first_to_arrive():
    lanes, lane, took, wait = held_lane()

    async with anyio.create_task_group() as nursery:
        for order in (7, 3, 5):  # they arrive in this order
            nursery.start_soon(wait, order)
            await anyio.wait_all_tasks_blocked()
        assert not lane.acquire_nowait()  # held, with three waiting
        lanes.release(1, lane)
    assert took == [3, 5, 7]
    assert not lane.locked()


async def test_a_waiter_cancelled_leaves_the_queue_and_the_next_oldest_takes_the_lane():
    lanes, lane, took, wait = held_lane()
    scope = anyio.CancelScope()

    async with anyio.create_task_group() as nursery:
        nursery.start_soon(wait, 1, scope)
        nursery.start_soon(wait, 2)
        await anyio.wait_all_tasks_blocked()
        scope.cancel()  # the oldest gives up before the lane frees
        await anyio.wait_all_tasks_blocked()
        lanes.release(1, lane)
    assert took == [2]
    assert not lane.locked()
    assert lanes.get(2) is lane  # free and unwaited: kept as the spare for the next step


async def test_a_waiter_cancelled_as_the_lane_is_handed_to_it_passes_the_lane_on():
    """A waiter cancelled in the same tick as the lane is handed to it never runs with
    it: it passes the lane to the next waiter, and the lane ends free, never held by
    nobody."""
    lanes, lane, took, wait = held_lane()
    scope = anyio.CancelScope()

    with anyio.fail_after(5):  # a lane lost with its waiter would hang the second
        async with anyio.create_task_group() as nursery:
            nursery.start_soon(wait, 1, scope)
            nursery.start_soon(wait, 2)
            await anyio.wait_all_tasks_blocked()
            scope.cancel()  # 1 is cancelled, and before it runs ...
            lanes.release(1, lane)  # ... the lane is handed to it
    assert took == [2]
    assert not lane.locked()


@pytest.mark.parametrize("how", ["removed", "replaced"])
async def test_a_call_waiting_for_its_lane_on_a_reconfigured_server_ends_unsent(how):
    """INV-16: of two exclusive calls of a server a reconfiguration removes or replaces,
    the one in flight is cancelled at the server and the one still waiting for the step's
    lane ends cancelled with nothing sent (SPEC §11.17)."""
    probe = Probe()
    servers = {"s": ServerConfig(target=fs_server(probe))}
    after = {} if how == "removed" else {"s": ServerConfig(target=fs_server(), tool_timeout_sec=9)}
    results = {}
    async with Host.open(HostConfig(servers=servers)) as host:
        step = host.sample()

        async def call(call_id: str) -> None:
            results[call_id] = await host.call(step, call_id, "mcp__s__slow", {"tag": call_id})

        async with anyio.create_task_group() as group:
            group.start_soon(call, "c1")
            await anyio.wait_all_tasks_blocked()  # c1 runs in the server, holding the lane
            group.start_soon(call, "c2")
            await anyio.wait_all_tasks_blocked()  # c2 waits for the lane
            await host.reconfigure(HostConfig(servers=after))
    names = {"how": how, "server": "s"}
    assert {c: (r.status, r.output) for c, r in results.items()} == {
        "c1": ("cancelled", texts.RECONFIGURED_SENT.format(**names)),
        "c2": ("cancelled", texts.RECONFIGURED_UNSENT.format(**names)),
    }
    assert probe.calls == ["slow:c1"]
    assert probe.cancelled == ["c1"]
