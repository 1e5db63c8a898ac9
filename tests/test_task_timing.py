"""When a host polls a task: the server's interval rules it (SPEC §8.12), in trio's
virtual time (``MockClock``), read from the wire of either era as a server writes it.

Mutation testing (issue 33) found that a connection ignoring the server's
``pollIntervalMs`` failed no test: :func:`poll_delay` was pinned, what reaches it from
the wire was not. Each row here is a task handle and the answers to its polls as a
server writes them, and the virtual times at which the host's ``tasks/get`` went out.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from mcpbind.impl.calls.tasks import await_task
from mcpbind.impl.wire.seam import RequestFailed, TaskHandle, TaskPoll
from mcpbind.impl.wire.tasks import TaskWire, task_handle

KEY = {True: "pollIntervalMs", False: "pollInterval"}
ABSENT = object()


def interval(modern: bool, value: Any) -> dict[str, Any]:
    return {} if value is ABSENT else {KEY[modern]: value}


def handle(modern: bool, value: Any) -> TaskHandle:
    """The task handle a server answers ``tools/call`` with, read as the host reads it."""
    task = {"taskId": "t-1", "status": "working", **interval(modern, value)}
    raw = {"resultType": "task", **task} if modern else {"task": task}
    found = task_handle(raw, modern)
    assert found is not None
    return found


class PolledServer:
    """A connection's task requests, answered as the server of a row would; records the
    virtual time of each ``tasks/get``."""

    def __init__(self, modern: bool, intervals: list[Any]) -> None:
        self.modern = modern
        self.working = list(intervals)
        self.polled_at: list[float] = []
        self.wire = TaskWire(self.request, modern, self.no_input)

    async def no_input(self, params: Any) -> Any:
        raise AssertionError("no input was asked for")

    async def request(self, method: str, params: dict[str, Any], *, name: str) -> Any:
        if method == "tasks/result":
            return {"content": [{"type": "text", "text": "done"}]}
        assert method == "tasks/get"
        self.polled_at.append(trio.current_time())
        if self.working:
            return {
                "taskId": "t-1",
                "status": "working",
                **interval(self.modern, self.working.pop(0)),
            }
        done = {"taskId": "t-1", "status": "completed"}
        if self.modern:
            done["result"] = {"content": [{"type": "text", "text": "done"}]}
        return done

    async def poll_task(self, task: TaskHandle) -> TaskPoll:
        return await self.wire.poll(task)


async def never_given_up(error: BaseException) -> None:
    raise AssertionError(f"the task was given up: {error!r}")


# (id, era is 2026-07-28, the handle's interval, each working poll's, times of tasks/get)
ROWS: list[tuple[str, bool, Any, list[Any], list[float]]] = [
    ("the-servers-interval", True, 2000, [2000, 2000], [2.0, 4.0, 6.0]),
    ("a-fraction-of-a-millisecond", True, 1500.5, [ABSENT], [1.5005, 3.001]),
    ("a-poll-changes-the-interval", True, 500, [3000, 3000], [0.5, 3.5, 6.5]),
    ("a-poll-without-one-keeps-the-last", True, 2000, [ABSENT, ABSENT], [2.0, 4.0, 6.0]),
    ("zero-polls-again-at-once", True, 0, [0, 0], [0.0, 0.0, 0.0]),
    ("absent-waits-the-default-second", True, ABSENT, [ABSENT, ABSENT], [1.0, 2.0, 3.0]),
    ("longer-than-the-cap-waits-thirty-seconds", True, 120_000, [120_000], [30.0, 60.0]),
    ("exactly-the-cap", True, 30_000, [30_000], [30.0, 60.0]),
    ("negative-is-no-interval", True, -5, [ABSENT], [1.0, 2.0]),
    ("not-a-number-is-no-interval", True, "2000", [True], [1.0, 2.0]),
    ("a-poll-with-zero-after-a-long-one", True, 10_000, [0, ABSENT], [10.0, 10.0, 10.0]),
    ("2025-the-servers-interval", False, 2000, [2000, 2000], [2.0, 4.0, 6.0]),
    ("2025-a-poll-changes-the-interval", False, 500, [3000], [0.5, 3.5]),
    ("2025-absent-waits-the-default-second", False, ABSENT, [ABSENT], [1.0, 2.0]),
    ("2025-longer-than-the-cap", False, 60_000, [ABSENT], [30.0, 60.0]),
]


@pytest.mark.trio
@pytest.mark.parametrize(
    ("modern", "first", "later", "times"),
    [pytest.param(m, first, later, times, id=name) for name, m, first, later, times in ROWS],
)
async def test_the_host_polls_a_task_at_the_interval_its_server_asks_for_within_the_cap(
    autojump_clock: trio.testing.MockClock, modern, first, later, times
):
    server = PolledServer(modern, later)
    start = trio.current_time()
    result = await await_task(server, handle(modern, first), give_up=never_given_up)
    assert result == {"content": [{"type": "text", "text": "done"}]}
    assert [at - start for at in server.polled_at] == pytest.approx(times)


@pytest.mark.trio
async def test_a_2026_server_names_its_interval_only_as_poll_interval_ms(
    autojump_clock: trio.testing.MockClock,
):
    """The other era's key is not read: the default second applies."""
    server = PolledServer(True, [])
    raw = {"resultType": "task", "taskId": "t-1", "status": "working", "pollInterval": 5000}
    task = task_handle(raw, True)
    assert task is not None
    start = trio.current_time()
    await await_task(server, task, give_up=never_given_up)
    assert [at - start for at in server.polled_at] == pytest.approx([1.0])


class FailingPoll:
    """A connection whose first ``tasks/get`` fails: the host gives the task up."""

    async def poll_task(self, task: TaskHandle) -> TaskPoll:
        raise RequestFailed("the poll failed")


@pytest.mark.trio
async def test_a_tasks_cancel_that_gets_no_answer_is_waited_for_five_seconds(
    autojump_clock: trio.testing.MockClock,
):
    """SPEC §8.12: ``tasks/cancel`` is sent under a shield within ``CANCEL_GRACE`` (5 s);
    a server that never answers it holds the call's end that long, no longer."""
    given_up: list[float] = []

    async def unanswered(error: BaseException) -> None:
        given_up.append(trio.current_time())
        await trio.sleep_forever()

    with pytest.raises(RequestFailed):
        await await_task(FailingPoll(), handle(True, 2000), give_up=unanswered)
    assert trio.current_time() - given_up[0] == pytest.approx(5.0)
