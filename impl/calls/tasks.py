"""Calls that run as tasks (SPEC §8.12): polling a task to its end, cancelling it once.

Theory of operation
-------------------
A server may answer ``tools/call`` with a task handle instead of a result: the 2025-11-25
task augmentation (the host asked for a task, because the tool requires one) or the
2026-07-28 extension ``io.modelcontextprotocol/tasks`` (the server chose to). Either way
the :class:`~mcpbind.impl.wire.connection.Connection` turns the handle into a
:class:`TaskHandle` and each poll into a :class:`TaskPoll`, so that this driver knows no
era: it polls at the interval the server asks for until the task is terminal, and turns
a completed task into the raw result the call returns (INV-4 unchanged: the router makes
its one result), a failed or server-cancelled one into the ``failed`` ending of :func:`run_task`.

The call's cancel scope still bounds the whole: a cancel, a timeout or the host closing
interrupts the polling, and then exactly one ``tasks/cancel`` goes to the server, under a
shield and a grace deadline, before the cancellation goes on (INV-7: the one cancellation
signal of a task; a poll abandoned by it sends nothing). The model's phase ``task``
(``model/rules.py``) is this loop.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import anyio

from mcpbind.model import texts

from ..config.recorder import Recorder
from ..wire.seam import Connection, RequestFailed, TaskHandle
from .endings import Ending
from .table import PendingCall

__all__ = [
    "CANCEL_GRACE",
    "POLL_DEFAULT",
    "POLL_MAX",
    "await_task",
    "poll_delay",
    "run_task",
]

logger = logging.getLogger("mcpbind.tasks")


POLL_DEFAULT = 1.0
"""Seconds between polls when the server names no interval."""
POLL_MAX = 30.0
"""The longest wait between polls, whatever the server asks (an end is seen in time)."""
CANCEL_GRACE = 5.0
"""How long ``tasks/cancel`` may take once the call ended early (SPEC §8.12)."""


class _TaskEnded(Exception):
    """The task reached ``failed`` or ``cancelled`` at the server (SPEC §8.12)."""

    def __init__(self, status: Literal["failed", "cancelled"], message: str | None) -> None:
        super().__init__(status)  # the call's end is worded by run_task (texts.TASK_*)
        self.status = status
        self.message = message


def poll_delay(seconds: float | None) -> float:
    """The wait before the next poll: the interval the server asks for (each poll waits
    for its answer, so even 0 is no busy loop), at most :data:`POLL_MAX`."""
    if seconds is None or not math.isfinite(seconds):
        return POLL_DEFAULT
    return min(max(seconds, 0.0), POLL_MAX)


async def await_task(
    connection: Connection,
    task: TaskHandle,
    *,
    give_up: Callable[[BaseException], Awaitable[None]],
    on_alive: Callable[[], None] | None = None,
) -> Any:
    """Poll ``task`` until it is terminal: the raw result of a completed task; raises
    :class:`_TaskEnded` for a failed or cancelled one, and what the connection raises.

    ``on_alive`` runs after each poll that finds the task still working (it re-arms an
    idle timeout, SPEC §8.11). Cancelled, or a poll failed (the host gives the task up),
    it awaits ``give_up(error)`` once (which sends ``tasks/cancel``), shielded for at most
    :data:`CANCEL_GRACE` seconds, then the cancellation or failure goes on. A lost
    connection sends nothing (INV-8)."""
    delay = poll_delay(task.poll_interval)
    try:
        while True:
            await anyio.sleep(delay)
            poll = await connection.poll_task(task)
            if poll.status == "completed":
                return poll.result
            if poll.status in ("failed", "cancelled"):
                raise _TaskEnded(poll.status, poll.message)
            if on_alive is not None:
                on_alive()
            if poll.poll_interval is not None:
                delay = poll_delay(poll.poll_interval)
    except (anyio.get_cancelled_exc_class(), RequestFailed) as ending:
        with anyio.CancelScope(shield=True) as scope:
            scope.deadline = anyio.current_time() + CANCEL_GRACE
            try:
                await give_up(ending)
            except Exception as error:  # the call has ended: the cancel is best effort
                logger.debug("tasks/cancel of %s failed: %r", task.task_id, error)
        raise


async def run_task(
    call: PendingCall,
    connection: Connection,
    task: TaskHandle,
    *,
    give_up: Callable[[BaseException], Awaitable[None]],
    on_alive: Callable[[], None] | None,
    recorder: Recorder,
) -> Any:
    """SPEC §8.12: the server runs ``call`` as a task. It keeps its lane and deadline;
    ended early, ``give_up`` sends its one cancellation signal (``tasks/cancel``); a task
    the server ends ``failed`` or ``cancelled`` ends the call ``failed`` (an
    :class:`~.endings.Ending`); a completed one returns its raw result."""
    server, binding = call.server, call.binding
    assert server is not None
    assert binding is not None
    call.run_as_task()
    try:
        raw = await await_task(connection, task, give_up=give_up, on_alive=on_alive)
    except _TaskEnded as ended:
        fields = {"call_id": call.call_id, "status": ended.status}
        if ended.status == "cancelled":
            text = texts.TASK_CANCELLED.format(server=server, tool=binding.remote_name)
        else:
            why = fields["why"] = ended.message or texts.TASK_NO_MESSAGE
            text = texts.TASK_FAILED.format(tool=binding.remote_name, server=server, why=why)
        recorder.event("task_status", fields)
        return Ending("failed", text)
    is_error = isinstance(raw, Mapping) and raw.get("isError") is True
    done = {"call_id": call.call_id, "status": "completed", "is_error": is_error}
    recorder.event("task_status", done)
    return raw
