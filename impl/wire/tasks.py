"""Tasks on the wire (SPEC §8.12): the two eras of the protocol, read and written.

The SDK has no client for tasks. On 2025-11-25 connections a ``tools/call`` that the
server runs as a task carries ``task`` in its params and is answered with a
``CreateTaskResult``; ``tasks/get`` polls it, ``tasks/result`` blocks until it is
terminal (input requests arrive meanwhile as elicitation requests carrying the task's
id), ``tasks/cancel`` gives it up. On 2026-07-28 tasks are the extension
``io.modelcontextprotocol/tasks`` (SEP-2663): ``tools/call`` is answered with
``resultType: "task"``, ``tasks/get`` carries the result, the error or the input
requests inline, and input is answered with ``tasks/update``, each key once.

This module turns the handle into a :class:`~.seam.TaskHandle` and each poll into a
:class:`~.seam.TaskPoll`; the driver that polls a call's task to its end is
:mod:`mcpbind.impl.calls.tasks`. It sends through the connection's raw requests
(:func:`.sdk.send_unvalidated`), so that the SDK neither validates a task handle as a
``CallToolResult`` nor sends a courtesy ``notifications/cancelled`` for an abandoned poll.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, cast, get_args

import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import TypeAdapter, ValidationError

from .seam import RequestFailed, ServerError, TaskHandle, TaskPoll, TaskState

__all__ = [
    "RELATED_TASK",
    "TASKS_EXTENSION",
    "TASK_TTL_MS",
    "TaskWire",
    "TasksExtension",
    "runs_tasks",
    "task_handle",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The 2026-07-28 tasks extension (SEP-2663), declared on every request (SPEC §8.12)."""
RELATED_TASK = "io.modelcontextprotocol/related-task"
"""The ``_meta`` key tying a 2025-11-25 request or answer to its task."""
TASK_TTL_MS = 3_600_000
"""How long a 2025-11-25 task is asked to be kept (``task.ttl``): an hour."""
_TASK_STATES: frozenset[str] = frozenset(get_args(TaskState))

RawRequest = Callable[..., Awaitable[Any]]
"""The connection's raw request: ``(method, params, *, name=...)``, failures mapped."""
AnswerElicitation = Callable[[types.ElicitRequestParams], Awaitable[types.ElicitResult]]
"""The connection's answer to an elicitation, through the host's policy."""


def runs_tasks(capabilities: types.ServerCapabilities | None, modern: bool) -> bool:
    """The server runs ``tools/call`` as tasks: on 2025-11-25 it declares
    ``tasks.requests.tools.call``, on 2026-07-28 the tasks extension (SPEC §5.4)."""
    if capabilities is None:
        return False
    if modern:
        return TASKS_EXTENSION in (capabilities.extensions or {})
    requests = capabilities.tasks.requests if capabilities.tasks is not None else None
    tools = requests.tools if requests is not None else None
    return tools is not None and tools.call is not None


def task_handle(raw: Any, modern: bool) -> TaskHandle | None:
    """The task a ``tools/call`` was answered with, or None (a result)."""
    if not isinstance(raw, dict):
        return None
    if modern:
        if raw.get("resultType") != "task":
            return None
        found: Any = raw
        interval = raw.get("pollIntervalMs")
    else:
        found = raw.get("task")
        if not isinstance(found, dict) or "content" in raw:
            return None
        interval = found.get("pollInterval")
    task_id, status = found.get("taskId"), found.get("status")
    if not isinstance(task_id, str) or not task_id or status not in _TASK_STATES:
        raise RequestFailed("malformed task handle: taskId or status missing or invalid")
    return TaskHandle(task_id, seconds(interval), cast("TaskState", status))


def seconds(milliseconds: Any) -> float | None:
    """A poll interval the server gave in milliseconds, or None if it gave none."""
    if isinstance(milliseconds, bool) or not isinstance(milliseconds, int | float):
        return None
    return milliseconds / 1000 if milliseconds >= 0 else None


class TaskWire:
    """The task requests of one connection, in its era (``modern``: 2026-07-28)."""

    def __init__(self, request: RawRequest, modern: bool, answer: AnswerElicitation) -> None:
        self._request = request
        self._modern_era = modern
        self._answer = answer
        self._answered: dict[str, set[str]] = {}
        """Per task: the keys of input requests answered (SEP-2663 repeats them)."""

    def _modern(self) -> bool:
        return self._modern_era

    async def _task_request(self, method: str, task: TaskHandle, **extra: Any) -> Any:
        return await self._request(method, {"taskId": task.task_id, **extra}, name=task.task_id)

    async def poll(self, task: TaskHandle) -> TaskPoll:
        raw = await self._task_request("tasks/get", task)
        if not isinstance(raw, dict) or raw.get("status") not in _TASK_STATES:
            raise RequestFailed("malformed tasks/get answer: no valid status")
        status: TaskState = raw["status"]
        message = raw.get("statusMessage") if isinstance(raw.get("statusMessage"), str) else None
        interval = seconds(raw.get("pollIntervalMs" if self._modern() else "pollInterval"))
        if status in ("completed", "failed", "cancelled"):
            self._answered.pop(task.task_id, None)  # the task asks for nothing more
        if status == "cancelled":
            return TaskPoll("cancelled", interval, message=message)
        if self._modern():
            return await self._modern_poll(task, raw, status, interval, message)
        if status == "working":
            return TaskPoll("working", interval)
        # 2025-11-25: a task that needs input, or has ended, is read with tasks/result,
        # which blocks until it is terminal; its input requests arrive meanwhile as
        # elicitation requests carrying the task's id, answered by the elicitation policy.
        try:
            payload = await self._task_request("tasks/result", task)
        except ServerError as error:
            return TaskPoll("failed", interval, message=error.message)
        if not isinstance(payload, dict):
            raise RequestFailed("malformed tasks/result answer: not a JSON object")
        return TaskPoll("completed", interval, result=payload)

    async def _modern_poll(
        self,
        task: TaskHandle,
        raw: dict[str, Any],
        status: TaskState,
        interval: float | None,
        message: str | None,
    ) -> TaskPoll:
        """SEP-2663: the result or error comes inline; input requests are answered
        with ``tasks/update``, each key once."""
        if status == "completed":
            result = raw.get("result")
            if not isinstance(result, dict):
                raise RequestFailed("malformed tasks/get answer: a completed task without result")
            return TaskPoll("completed", interval, result=result)
        if status == "failed":
            error = raw.get("error")
            why = error.get("message") if isinstance(error, dict) else None
            return TaskPoll("failed", interval, message=why if isinstance(why, str) else message)
        if status == "input_required":
            await self._answer_task_input(task, raw.get("inputRequests"))
        return TaskPoll(status, interval)

    async def _answer_task_input(self, task: TaskHandle, requests: Any) -> None:
        if not isinstance(requests, dict):
            raise RequestFailed("malformed tasks/get answer: input_required without inputRequests")
        answered = self._answered.setdefault(task.task_id, set())
        responses: dict[str, Any] = {}
        for key, entry in requests.items():
            if key in answered:
                continue  # the same request again, as every poll repeats it (SEP-2663)
            if not isinstance(entry, dict) or not isinstance(entry.get("method"), str):
                # SPEC §8.12: the SDK's ``roots/list`` model defaults its ``method``, so
                # without this an entry naming none would be read as that request
                raise RequestFailed("malformed input request: it names no method")
            try:
                request = _INPUT_REQUEST.validate_python(entry)
            except ValidationError as error:
                raise RequestFailed(
                    f"malformed input request: {error.error_count()} validation error(s)"
                ) from error
            if not isinstance(request, types.ElicitRequest):
                raise RequestFailed(
                    f"the server asked for {request.method}, which mcpbind does not provide"
                )
            answer = await self._answer(request.params)
            responses[key] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
        if responses:
            await self._task_request("tasks/update", task, inputResponses=responses)
            answered.update(responses)

    async def cancel(self, task: TaskHandle, *, on_late: Callable[[], None]) -> None:
        self._answered.pop(task.task_id, None)
        try:
            await self._task_request("tasks/cancel", task)
        except ServerError as error:
            # 2025-11-25: a task already terminal MUST be refused with -32602; its
            # outcome came too late for the call, which has ended (INV-4).
            if error.code == types.INVALID_PARAMS and not self._modern():
                on_late()
                return
            raise


_INPUT_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)


class _CreatedTask(types.Result):
    """The ``resultType: "task"`` answer to ``tools/call`` (SEP-2663), as a claim model."""

    result_type: Literal["task"] = "task"
    task_id: str


async def _not_resolved(created: _CreatedTask, context: ClaimContext) -> types.CallToolResult:
    raise RuntimeError("mcpbind polls tasks itself (impl/calls/tasks.py)")


class TasksExtension(ClientExtension):
    """Declares ``io.modelcontextprotocol/tasks`` on every 2026-07-28 request: the SDK
    advertises a claim-bearing extension only where its claim is active, so never on a
    2025-11-25 session. The claim itself is not used: calls go out raw and the task
    handle comes back as a dict (SPEC §8.12)."""

    identifier = TASKS_EXTENSION

    def claims(self) -> tuple[ResultClaim[Any], ...]:
        return (ResultClaim(result_type="task", model=_CreatedTask, resolve=_not_resolved),)
