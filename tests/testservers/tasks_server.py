"""An MCP server of the tests' own with the 2026-07-28 tasks extension (SEP-2663).

``io.modelcontextprotocol/tasks`` through the SDK's server extension hooks
(``mcp.server.extension``): declared in ``server/discover``; a ``tools/call`` of a task
tool whose request declares the extension is answered at once with a task handle
(``resultType: "task"``) and runs in the server's background task group; ``tasks/get``
reports it (the result inline once completed, the error once failed, the input requests
while it waits for input), ``tasks/update`` takes the answers, ``tasks/cancel`` stops it.
A request that does not declare the extension gets the tool's plain result.

Tools: ``research(topic, ambiguous=False, stages=3)`` (a task: with ``ambiguous`` it asks
which interpretation to research, by an elicitation form), ``doomed(why, detail=why)``
(a task that fails: ``why`` its ``statusMessage``, ``detail`` its error's message),
``long_operation(steps, seconds)`` (a plain call reporting progress per step),
``retire(name)`` (the server stops listing ``name`` and announces ``list_changed``: on
the listen streams, and to a handshake-era session as ``notifications/tools/list_changed``) and
``die(after)`` (the server process exits mid-call). The last two drive the peer trace
scenarios of ``benchmarks/peers/traces.py``. Served over HTTP it also has ``restart(after)``
(it answers, then ``after`` seconds later the process re-executes itself: the same
command on the same port, every session forgotten, as a restart while the host is idle;
the new process logs ``restarted`` before it listens), for the model stub's
``restarted_while_idle``.

``python tasks_server.py LOG`` serves it over stdio (with ``MCPBIND_TEST_HTTP_PORT``, over
streamable HTTP on 127.0.0.1 instead); LOG gets one line per ``tools/call``, ``tasks/*``
request and ``notifications/cancelled`` it receives (``METHOD [taskId]``), a ``tasks/*``
request over HTTP also the ``Mcp-Name`` header it carried. In-process, :func:`build`
takes the log file. Over stdio with ``MCPBIND_TEST_WIRE_LOG`` set, every byte the client
writes is also appended to that file: the raw JSON-RPC lines, for the tests of the wire's
shape (``test_wire_shapes.py``).
"""

from __future__ import annotations

import datetime
import io
import os
import pathlib
import sys
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field

TASKS = "io.modelcontextprotocol/tasks"
MODERN = frozenset(MODERN_PROTOCOL_VERSIONS)
TERMINAL = frozenset({"completed", "failed", "cancelled"})
TASK_TOOLS = frozenset({"research", "doomed"})
STAGE_SECONDS = 0.05
POLL_MS = 20
CLARIFY = "clarify-1"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


class TaskIdParams(types.RequestParams):
    task_id: str


class UpdateTaskParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any] = Field(default_factory=dict)


@dataclass
class _Task:
    task_id: str
    created: str
    status: str = "working"
    message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    answered: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    updated: str = ""

    def finish(self, status: str, message: str | None = None, **payload: Any) -> None:
        if self.status in TERMINAL:  # a terminal status never changes
            return
        self.status, self.message, self.updated = status, message, _now()
        self.input_requests = {}
        for key, value in payload.items():
            setattr(self, key, value)

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated or self.created,
            "ttlMs": 600_000,
            "pollIntervalMs": POLL_MS,
        }
        if self.message is not None:
            out["statusMessage"] = self.message
        if self.status == "completed":
            out["result"] = self.result
        elif self.status == "failed":
            out["error"] = self.error
        elif self.status == "input_required":
            out["inputRequests"] = self.input_requests
        return out


def _declares_tasks(ctx: ServerRequestContext[Any, Any]) -> bool:
    """This request declared the extension (2026-07-28 capabilities are per request)."""
    if ctx.protocol_version not in MODERN:
        return False
    capabilities = ctx.session.client_capabilities
    return bool(capabilities is not None and TASKS in (capabilities.extensions or {}))


class TasksExtension(Extension):
    identifier = TASKS

    def __init__(self, log: pathlib.Path | None) -> None:
        self.log = log
        self.tasks: dict[str, _Task] = {}
        self._groups: list[anyio.abc.TaskGroup] = []

    def note(self, line: str) -> None:
        if self.log is not None:
            with self.log.open("a", encoding="utf-8") as out:
                out.write(line + "\n")

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            self._groups.append(group)
            try:
                yield
            finally:
                self._groups.remove(group)
                group.cancel_scope.cancel()

    def settings(self) -> dict[str, Any]:
        return {}

    def methods(self) -> tuple[MethodBinding, ...]:
        return (
            MethodBinding("tasks/get", TaskIdParams, self._get, protocol_versions=MODERN),
            MethodBinding("tasks/update", UpdateTaskParams, self._update, protocol_versions=MODERN),
            MethodBinding("tasks/cancel", TaskIdParams, self._cancel, protocol_versions=MODERN),
        )

    async def intercept_tool_call(
        self,
        params: types.CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        self.note(f"tools/call {params.name}")
        if params.name not in TASK_TOOLS or not _declares_tasks(ctx) or not self._groups:
            return await call_next(ctx)
        task = _Task(uuid.uuid4().hex, _now(), message="started")
        self.tasks[task.task_id] = task  # retrievable before the handle is sent (SEP-2663)
        self._groups[-1].start_soon(self._run, task, params, ctx, call_next)
        return {"resultType": "task", **task.wire()}

    async def _run(
        self,
        task: _Task,
        params: types.CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> None:
        arguments = params.arguments or {}
        with task.scope:
            try:
                if params.name == "doomed":
                    await anyio.sleep(STAGE_SECONDS)
                    why = str(arguments.get("why", "it was doomed"))
                    detail = str(arguments.get("detail", why))
                    task.finish("failed", why, error={"code": -32603, "message": detail})
                    return
                result = await self._research(task, arguments)
            except Exception as error:  # the task fails; the server goes on
                task.finish("failed", str(error), error={"code": -32603, "message": str(error)})
                return
            task.finish("completed", "done", result=result)

    async def _research(self, task: _Task, arguments: dict[str, Any]) -> dict[str, Any]:
        topic = str(arguments.get("topic", "nothing"))
        stages = int(arguments.get("stages", 3))
        interpretation = "the obvious one"
        for stage in range(stages):
            task.message = f"stage {stage + 1} of {stages}"
            task.updated = _now()
            await anyio.sleep(STAGE_SECONDS)
            if stage == 0 and arguments.get("ambiguous"):
                interpretation = await self._ask(task, topic)
        text = f"Research report on {topic!r} ({interpretation}): {stages} stages done."
        return {
            "resultType": "complete",
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"result": text},
        }

    async def _ask(self, task: _Task, topic: str) -> str:
        schema = {
            "type": "object",
            "properties": {"interpretation": {"type": "string"}},
            "required": ["interpretation"],
        }
        request = {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": f"Which meaning of {topic!r} should I research?",
                "requestedSchema": schema,
            },
        }
        task.status, task.input_requests = "input_required", {CLARIFY: request}
        await task.answered.wait()
        task.status, task.input_requests = "working", {}
        answer = task.answers.get(CLARIFY) or {}
        if answer.get("action") == "accept":
            chosen = (answer.get("content") or {}).get("interpretation", "?")
            return f"interpretation: {chosen}"
        return f"no clarification ({answer.get('action', 'none')}): the obvious one"

    def note_header(self, ctx: ServerRequestContext[Any, Any], method: str) -> None:
        """Over HTTP, the ``Mcp-Name`` header a ``tasks/*`` request carried (SEP-2663: the
        task id, MUST)."""
        headers = getattr(ctx.request, "headers", None)
        if headers is not None:
            self.note(f"header {method} {headers.get('mcp-name')}")

    def _lookup(self, task_id: str) -> _Task:
        task = self.tasks.get(task_id)
        if task is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Task not found: {task_id}")
        return task

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> Any:
        self.note(f"tasks/get {params.task_id}")
        self.note_header(ctx, "tasks/get")
        return {"resultType": "complete", **self._lookup(params.task_id).wire()}

    async def _update(self, ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams) -> Any:
        self.note(f"tasks/update {params.task_id}")
        self.note_header(ctx, "tasks/update")
        task = self._lookup(params.task_id)
        for key, answer in params.input_responses.items():
            if key in task.input_requests:
                task.answers[key] = answer
        if task.answers.keys() >= task.input_requests.keys():
            task.answered.set()
        return {"resultType": "complete"}

    async def _cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> Any:
        self.note(f"tasks/cancel {params.task_id}")
        self.note_header(ctx, "tasks/cancel")
        task = self._lookup(params.task_id)
        if task.status not in TERMINAL:
            task.scope.cancel()
            task.finish("cancelled", "cancelled by the client")
        return {"resultType": "complete"}


def build(log: pathlib.Path | None = None) -> MCPServer:
    extension = TasksExtension(log)
    server = MCPServer(
        "tasks-server",
        version="1.0",
        extensions=[extension],
        lifespan=lambda _app: extension.running(),
        log_level="WARNING",
    )

    async def on_cancelled(ctx: Any, params: types.CancelledNotificationParams) -> None:
        extension.note(f"notifications/cancelled {params.request_id}")

    server._lowlevel_server.add_notification_handler(  # the tests' own log of what arrives
        "notifications/cancelled", types.CancelledNotificationParams, on_cancelled
    )

    @server.tool()
    async def research(topic: str, ambiguous: bool = False, stages: int = 3) -> str:
        """Research a topic in stages (runs as a task)."""
        return f"Research report on {topic!r}: {stages} stages done (no task)."

    @server.tool()
    async def doomed(why: str = "it was doomed", detail: str | None = None) -> str:
        """A task that fails."""
        raise MCPError(code=-32603, message=detail or why)

    @server.tool()
    async def long_operation(ctx: Context, steps: int = 4, seconds: float = 0.2) -> str:
        """Report progress once per step."""
        for step in range(steps):
            await anyio.sleep(seconds / steps)
            await ctx.report_progress(step + 1, steps, f"step {step + 1}")
        return f"long operation done in {steps} steps"

    @server.tool()
    async def retire(ctx: Context, name: str) -> str:
        """Stop listing a tool, and announce that the list changed."""
        server.remove_tool(name)
        extension.note(f"list_changed {name}")
        await ctx.notify_tools_changed()  # the 2026-07-28 listen streams
        if ctx.protocol_version not in MODERN:  # a handshake-era session: on the connection
            await ctx.request_context.session.send_tool_list_changed()
        return f"{name} retired"

    @server.tool()
    async def die(after: float = 0.2) -> str:
        """Exit the server process in the middle of the call."""
        await anyio.sleep(after)
        extension.note("died")
        os._exit(1)

    if os.environ.get("MCPBIND_TEST_HTTP_PORT"):

        @server.tool()
        async def restart(after: float = 0.2) -> str:
            """Answer, then start again on the same port ``after`` seconds later."""
            extension.note("restart")
            # A thread, not a task: the answer goes out while it waits, and the exec
            # replaces the whole process whatever its event loop is doing.
            threading.Timer(after, _reexec).start()
            return f"restarting in {after} s"

    return server


def _reexec() -> None:
    """The same command again in this process: the listening socket (not inheritable)
    closes, the new server binds the port anew and knows no session."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.environ["MCPBIND_TEST_RESTARTED"] = "1"  # the new process logs ``restarted``
    os.execv(sys.executable, [sys.executable, *sys.argv])


class _Tee(io.RawIOBase):
    """Standard input, each chunk read also appended to a file."""

    def __init__(self, source: Any, copy: Any) -> None:
        self.source, self.copy = source, copy

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self.source.readinto(buffer)
        if count:
            self.copy.write(bytes(buffer[:count]))
            self.copy.flush()
        return int(count or 0)


if __name__ == "__main__":
    served = build(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else None)
    if os.environ.get("MCPBIND_TEST_RESTARTED") and len(sys.argv) > 1:
        with open(sys.argv[1], "a", encoding="utf-8") as restarted:
            restarted.write("restarted\n")
    wire_log = os.environ.get("MCPBIND_TEST_WIRE_LOG")
    if wire_log:
        tee = _Tee(sys.stdin.buffer.raw, open(wire_log, "ab"))  # noqa: SIM115 # the process's life
        sys.stdin = io.TextIOWrapper(io.BufferedReader(tee), encoding="utf-8")
    port = os.environ.get("MCPBIND_TEST_HTTP_PORT")
    if port:
        anyio.run(lambda: served.run_streamable_http_async(host="127.0.0.1", port=int(port)))
    else:
        served.run()
