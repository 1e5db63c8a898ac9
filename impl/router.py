"""Router: one call, from acceptance to its one terminal result (SPEC §8, INV-2, INV-4).

Theory of operation
-------------------
:meth:`Router.call` follows the model's call rules (``model/rules.py``: ``_on_call``,
``dispatch``, ``end_call``) in the order of SPEC §8.2:

1. a ``call_id`` used before is refused (:class:`DuplicateCallId`, no result);
2. the name is resolved in the step's own snapshot (INV-2), else ``unsupported``;
3. the arguments must be a JSON object, else ``error``; a builtin or extension tool now
   runs the handler its binding captured, ``tool_search`` ranks the step's tools;
4. a call that approval gates waits for its approver (INV-10), else ``denied``;

then, in :meth:`Router._dispatch` (the model's ``dispatch``):

5. under ``revalidate`` a tool its server no longer lists ends ``unavailable``; a call to
   a lazily started server first waits for the start to settle (INV-11), then 5 again;
6. a disconnected server fails the call at once (``NOT_CONNECTED``);
7. an exclusive call takes its step's lane (INV-9); then ``tools/call`` is sent.

Every check decides synchronously and returns an :class:`Ending` or None (go on); none
makes a result. The whole route runs inside the call's cancel scope (:mod:`.calls`):
``Host.cancel``, the tool timeout and a disconnect interrupt it (INV-7, LIVE-1, INV-8),
and :meth:`Router._ended_early` reads how. Exceptions become endings in one place,
:meth:`Router._translate`; the result is made in one place, :meth:`Router.end_call`,
exactly once per accepted call (INV-4). Only :class:`DuplicateCallId` escapes.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import anyio
import attrs

from mcpbind.model import texts

from .calls.approval import ApprovalGate
from .calls.encoding import OutputLimits, encode_result, wall_time_header
from .calls.progress import ProgressCounts, ProgressFeed
from .calls.table import CallTable, PendingCall
from .calls.tasks import TaskEnded, await_task
from .catalog.exposure import MAX_SEARCH_LIMIT, parse_search_arguments, search_output
from .catalog.planner import Planner, StepSnapshot
from .catalog.registry import Binding, ToolRegistry
from .config.host import HostConfig
from .config.recorder import Recorder
from .errors import DuplicateCallId
from .server.runtime import ServerRuntime
from .values import ContentItem, ToolResult
from .wire.seam import (
    HEADER_MISMATCH,
    Connection,
    ConnectionLost,
    RequestFailed,
    ServerError,
    TaskHandle,
)

__all__ = [
    "META_CALL_ID",
    "META_SESSION_ID",
    "META_STEP",
    "Ending",
    "Lanes",
    "Router",
    "RouterStatistics",
    "parse_arguments",
]

# SPEC §11.10: request metadata under our own prefix (MCP reserves prefixes whose second
# label is ``modelcontextprotocol`` or ``mcp``; ``dev.mcpbind/`` is not one of them).
META_SESSION_ID = "dev.mcpbind/session_id"
META_STEP = "dev.mcpbind/step"
META_CALL_ID = "dev.mcpbind/call_id"

logger = logging.getLogger("mcpbind.router")


class Ending(NamedTuple):
    """How a call ends: what :meth:`Router.end_call` turns into its result."""

    status: texts.CallStatus
    output: str
    items: tuple[ContentItem, ...] = ()


def parse_arguments(arguments: Any) -> dict[str, Any] | str:
    """A dict, or why the arguments are not a JSON object (SPEC §8.1)."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, str | bytes):
        text = arguments.decode() if isinstance(arguments, bytes) else arguments
        if not text.strip():
            return {}
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            return f"not valid JSON ({error.msg} at position {error.pos})"
        except ValueError as error:
            return f"not valid JSON ({error})"
        if isinstance(value, dict):
            return value
        return f"JSON {type(value).__name__} where an object is required"
    if arguments is None:
        return {}
    return f"{type(arguments).__name__} where an object is required"


@attrs.define(eq=False)
class Lanes:
    """The exclusive lane of each step (SPEC §8.3, INV-9): a FIFO ``anyio.Lock``, forgotten
    once nobody holds or waits for it."""

    _locks: dict[int, anyio.Lock] = attrs.field(factory=dict)

    def get(self, step: int) -> anyio.Lock:
        lane = self._locks.get(step)
        if lane is None:
            lane = self._locks[step] = anyio.Lock()
        return lane

    def release(self, step: int, lane: anyio.Lock) -> None:
        lane.release()  # hands the lane to the oldest waiter, if any
        if not lane.locked() and lane.statistics().tasks_waiting == 0:
            self._locks.pop(step, None)


@attrs.frozen
class RouterStatistics:
    results: Mapping[str, int]
    """Terminal results so far, by status."""
    late_dropped: int
    """Answers that arrived after their call had ended (dropped, INV-4)."""
    progress: int = 0
    late_progress: int = 0


def _failure_why(error: Exception) -> str:
    """Why a call failed in transit, as ``TRANSPORT`` and the trace's ``call_failed`` say
    it: a request's own failure text, else the unexpected exception's type and message."""
    return str(error) if isinstance(error, RequestFailed) else f"{type(error).__name__}: {error}"


class Router:
    """Routes the calls of one host; see the module docstring for the order of checks."""

    def __init__(
        self,
        *,
        config: HostConfig,
        servers: Mapping[str, ServerRuntime],
        calls: CallTable,
        lanes: Lanes,
        approvals: ApprovalGate,
        planner: Planner,
        registry: ToolRegistry,
        recorder: Recorder,
        session_id: str,
    ) -> None:
        self.config = config
        self.servers = servers
        self.calls = calls
        self.lanes = lanes
        self.approvals = approvals
        self.planner = planner
        self.registry = registry
        self.recorder = recorder
        self.session_id = session_id
        self._limits = OutputLimits.build(
            config.output_limit, {name: r.config for name, r in servers.items()}
        )
        self._results: Counter[str] = Counter()
        self._late_dropped = 0
        self._progress = ProgressCounts()

    def statistics(self) -> RouterStatistics:
        counts = self._progress
        return RouterStatistics(
            dict(self._results), self._late_dropped, counts.delivered, counts.late
        )

    # --- the call ------------------------------------------------------------------------

    async def call(self, step: StepSnapshot, call_id: str, name: str, arguments: Any) -> ToolResult:
        """Route one call of ``step`` and return its terminal result (SPEC §8.2)."""
        self.recorder.event("call", {"step": step.step, "call_id": call_id, "name": name})
        try:
            call = self.calls.open(call_id)  # 1. INV-4: a call_id is accepted once
        except DuplicateCallId as error:
            self.recorder.refused(call_id, str(error))
            raise
        ending: Ending | None = None
        try:
            with call.scope:
                ending = await self._route(call, step, name, arguments)
        except Exception as error:  # the one place where exceptions become endings
            ending = self._translate(call, error)
        finally:
            self.calls.close(call)
        if ending is None or call.ended_by == "disconnected":
            ending = self._ended_early(call)
        return self.end_call(call_id, ending)

    def end_call(self, call_id: str, ending: Ending) -> ToolResult:
        """The one terminal result of an accepted call (INV-4): counted and reported."""
        result = ToolResult(call_id, ending.status, ending.output, ending.items)
        self._results[ending.status] += 1
        self.recorder.result(result)
        return result

    def cancel(self, call_id: str) -> None:
        """End the pending call ``call_id`` as ``cancelled``; no effect once it ended."""
        self.calls.cancel(call_id)

    def late_answer(self, call_id: str, *, task: bool = False) -> None:
        """A connection reports an answer for a call that already ended (INV-4)."""
        self._late_dropped += 1
        self.recorder.event("task_status" if task else "call_responded", {"call_id": call_id})
        self.recorder.late_dropped(call_id)

    # --- the checks of SPEC §8.2, in the model's order -----------------------------------

    async def _route(
        self, call: PendingCall, step: StepSnapshot, name: str, arguments: Any
    ) -> Ending:
        binding = step.binding(name)  # 2. INV-2: the step's own snapshot
        if binding is None:
            return Ending("unsupported", texts.UNSUPPORTED.format(name=name))
        parsed = parse_arguments(arguments)  # 3. SPEC §8.1
        if isinstance(parsed, str):
            return Ending("error", texts.BAD_ARGUMENTS.format(name=name, problem=parsed))
        call.binding = binding
        if binding.server is None:
            if self.planner.is_search(binding):
                return self._tool_search(step, parsed)
            return await self._run_local(call, binding, parsed)
        runtime = self.servers[binding.server]
        denied = await self._approve(call, binding, name, parsed, runtime)  # 4. INV-10
        if denied is not None:
            return denied
        return await self._dispatch(
            call, step=step.step, binding=binding, name=name, arguments=parsed, runtime=runtime
        )

    async def _approve(
        self,
        call: PendingCall,
        binding: Binding,
        name: str,
        arguments: dict[str, Any],
        runtime: ServerRuntime,
    ) -> Ending | None:
        """SPEC §11.8: None when the call may go on. While the approver is asked the call is
        pending with no deadline and attached to no server (SPEC §3.4)."""
        verdict = self.approvals.decide(
            call_id=call.call_id,
            server=runtime.name,
            tool=binding.remote_name,
            name=name,
            arguments=arguments,
            annotations=binding.spec.annotations,
            config=runtime.config,
        )
        if verdict is None:
            return None
        if isinstance(verdict, str):  # gated, and no approver to ask (SPEC §11.8)
            self.recorder.event("deny", {"call_id": call.call_id, "answer": "none"})
            return Ending("denied", verdict)
        call.phase = "approval"
        denial, answer = await self.approvals.ask(verdict)
        if denial is None:
            self.recorder.event("approve", {"call_id": call.call_id, "answer": answer})
            return None
        self.recorder.event("deny", {"call_id": call.call_id, "answer": answer})
        return Ending("denied", denial)

    async def _dispatch(
        self,
        call: PendingCall,
        *,
        step: int,
        binding: Binding,
        name: str,
        arguments: dict[str, Any],
        runtime: ServerRuntime,
    ) -> Ending:
        """The model's ``dispatch``: an accepted (and approved) call of an MCP tool."""
        gone = self._revalidated(binding, name)  # 5. SPEC §7.3
        if gone is not None:
            return gone
        # SPEC §8.4: the tool timeout runs from here (after any approval; a wait for a lazy
        # start counts); the wall time runs from acceptance.
        settings = runtime.config
        cap = settings.tool_max_sec if settings.idle_timeout else 0.0
        self.calls.attach(call, runtime.name, settings.tool_timeout_sec, cap)
        if runtime.starting:
            # SPEC §11.12 (INV-11): a lazily started server is waited for, dormant or
            # connected, until its first refresh has ended; not failed fast, not sent to.
            call.phase = "starting"
            await runtime.wait_started(call.order)
            if runtime.connection is None:
                return Ending("failed", texts.NOT_CONNECTED.format(server=runtime.name))
            gone = self._revalidated(binding, name)  # against the live catalog now
            if gone is not None:
                return gone
        elif runtime.connection is None:  # 6. INV-8: fail fast, nothing sent
            return Ending("failed", texts.NOT_CONNECTED.format(server=runtime.name))
        call.phase = "dispatch"
        exclusive = not (binding.read_only or runtime.config.supports_parallel_tool_calls)
        raw = await self._send(  # 7. INV-9, then the wire
            call,
            step=step,
            binding=binding,
            name=name,
            arguments=arguments,
            runtime=runtime,
            exclusive=exclusive,
        )
        if isinstance(raw, Ending):  # the retry of SPEC §8.9 or the task of §8.12 ended it
            return raw
        status, output, items = encode_result(
            raw,
            anyio.current_time() - call.accepted,
            server=runtime.name,
            tool=binding.remote_name,
            limit=self._limits.of(runtime.name, binding.remote_name),
            image_capable=self.config.image_capable,
            output=binding.spec.output_check,
        )
        return Ending(status, output, items)

    def _revalidated(self, binding: Binding, name: str) -> Ending | None:
        """SPEC §7.3: under ``revalidate``, a tool its server no longer lists ends
        ``unavailable`` with nothing sent; None when the call may go on."""
        if self.config.binding_policy != "revalidate":
            return None
        live = self.registry.state.live_remotes.get(binding.source, frozenset())
        if binding.remote_name in live:
            return None
        text = texts.UNAVAILABLE.format(name=name, server=binding.server, tool=binding.remote_name)
        return Ending("unavailable", text)

    async def _send(
        self,
        call: PendingCall,
        *,
        step: int,
        binding: Binding,
        name: str,
        arguments: dict[str, Any],
        runtime: ServerRuntime,
        exclusive: bool,
    ) -> Any:
        """The lane (INV-9), then ``tools/call`` with the raw name; the raw result, or the
        Ending of a call its retry ended (SPEC §8.9). The lane is held across the retry."""
        lane = self.lanes.get(step) if exclusive else None
        if lane is not None:
            try:
                lane.acquire_nowait()  # uncontended: no extra trip through the scheduler
            except anyio.WouldBlock:
                await lane.acquire()
        try:
            retries = 0
            while True:
                try:
                    return await self._send_once(call, step, binding, arguments, runtime)
                except ServerError as error:
                    if error.code != HEADER_MISMATCH:
                        raise
                    if retries >= self.retries_after_rejection():
                        self.recorder.event("call_rejected", {"call_id": call.call_id})
                        text = texts.REJECTED_AGAIN.format(
                            server=runtime.name, tool=binding.remote_name
                        )
                        return Ending("failed", text)
                # SPEC §8.9 (INV-13): the server refused the call unrun. Its headers come
                # from the listing this host read; a refresh that starts now reads the
                # current one, and the call goes once more, still holding its lane.
                self.recorder.event("call_rejected", {"call_id": call.call_id})
                call.sent, call.phase = False, "retrying"
                retries += 1
                await self.retry_refresh(runtime)
                gone = self._revalidated(binding, name)
                if gone is not None:
                    return gone
                call.phase = "dispatch"
        finally:
            if lane is not None:
                self.lanes.release(step, lane)

    async def retry_refresh(self, runtime: ServerRuntime) -> None:
        """INV-13: wait for a refresh of ``runtime``'s server that starts after now (the
        one queued behind a refresh in flight), whatever its outcome."""
        await runtime.request_refresh().done.wait()

    def retries_after_rejection(self) -> int:
        """INV-13: a call rejected unrun is sent again once; a second rejection ends it."""
        return 1

    async def _send_once(
        self,
        call: PendingCall,
        step: int,
        binding: Binding,
        arguments: dict[str, Any],
        runtime: ServerRuntime,
    ) -> Any:
        """``tools/call`` with the raw name over the current session; the raw result."""
        connection = runtime.connection
        if connection is None:  # lost while this call waited for the lane or its retry
            raise ConnectionLost("not connected")
        server, tool, call_id = runtime.name, binding.remote_name, call.call_id

        def on_sent() -> None:
            call.sent = True
            self.recorder.sent(server, "tools/call", tool, call_id)

        idle = runtime.config.tool_timeout_sec if runtime.config.idle_timeout else 0.0
        rearm = (lambda: self.calls.rearm(call, idle)) if idle else None
        feed = ProgressFeed(call_id, server, self.config.on_progress, self._progress, rearm)
        try:
            raw = await connection.call_tool(
                tool,
                arguments,
                on_sent=on_sent,
                on_late=lambda: self.late_answer(call_id),
                meta={META_SESSION_ID: self.session_id, META_STEP: step, META_CALL_ID: call_id},
                on_progress=feed.receive,
                task_support=binding.spec.task_support,
            )
            if isinstance(raw, TaskHandle):
                self.recorder.event("task_created", {"call_id": call_id})
                raw = await self._run_task(call, connection, raw, rearm)
            else:
                is_error = isinstance(raw, Mapping) and raw.get("isError") is True
                self.recorder.event("call_responded", {"call_id": call_id, "is_error": is_error})
        except ConnectionLost:
            runtime.lost(connection)  # INV-8 at once, this call and every other one
            raise
        else:
            await feed.settle()
            return raw
        finally:
            feed.close()  # SPEC §8.10: progress after the answer is late

    async def _run_task(
        self,
        call: PendingCall,
        connection: Connection,
        task: TaskHandle,
        rearm: Callable[[], None] | None,
    ) -> Any:
        """SPEC §8.12: the server runs the call as a task. It keeps its lane and deadline;
        ended early, its one cancellation signal is ``tasks/cancel``; a task the server
        ends ``failed`` or ``cancelled`` ends the call ``failed``."""
        server = call.server
        assert server is not None
        binding = call.binding
        assert binding is not None
        call.task = True

        async def give_up(ending: BaseException) -> None:
            self._report_end(call, ending)  # the input first, then the signal it causes
            await self.give_up_task(call, connection, task)

        try:
            raw = await await_task(connection, task, give_up=give_up, on_alive=rearm)
        except TaskEnded as ended:
            fields = {"call_id": call.call_id, "status": ended.status}
            if ended.status == "cancelled":
                text = texts.TASK_CANCELLED.format(server=server, tool=binding.remote_name)
            else:
                why = fields["why"] = ended.message or texts.TASK_NO_MESSAGE
                text = texts.TASK_FAILED.format(tool=binding.remote_name, server=server, why=why)
            self.recorder.event("task_status", fields)
            return Ending("failed", text)
        is_error = isinstance(raw, Mapping) and raw.get("isError") is True
        done = {"call_id": call.call_id, "status": "completed", "is_error": is_error}
        self.recorder.event("task_status", done)
        return raw

    async def give_up_task(
        self, call: PendingCall, connection: Connection, task: TaskHandle
    ) -> None:
        """INV-7: a task the host gives up (cancel, timeout, close, a failed poll) gets
        exactly one ``tasks/cancel``, never ``notifications/cancelled`` (SPEC §8.12)."""
        assert call.server is not None
        self.recorder.sent(call.server, "tasks/cancel", call.call_id)
        call_id = call.call_id
        await connection.cancel_task(task, on_late=lambda: self.late_task_status(call_id))

    def late_task_status(self, call_id: str) -> None:
        """INV-4: the server says a task the host gave up had ended already: dropped."""
        self.late_answer(call_id, task=True)

    async def _run_local(
        self, call: PendingCall, binding: Binding, arguments: dict[str, Any]
    ) -> Ending:
        """A builtin or extension tool: the handler captured in the step's binding (INV-2)."""
        handler = binding.handler
        assert handler is not None, "a non-MCP binding carries its handler"
        call.phase = "local"
        call.started = anyio.current_time()
        output = await handler(arguments)
        return Ending("ok", f"{wall_time_header(anyio.current_time() - call.started)}\n{output}")

    def _tool_search(self, step: StepSnapshot, arguments: dict[str, Any]) -> Ending:
        """SPEC §11.9: rank the step's MCP tools, discover the matches for later steps."""
        started = anyio.current_time()
        parsed = parse_search_arguments(arguments)
        if isinstance(parsed, str):
            text = texts.SEARCH_BAD_ARGUMENTS.format(problem=parsed, maximum=MAX_SEARCH_LIMIT)
            return Ending("error", text)
        query, limit = parsed
        found = step.exposure.view.search(query, limit)
        self.planner.discover(found)
        header = wall_time_header(anyio.current_time() - started)
        return Ending("ok", f"{header}\n{search_output(query, found)}")

    # --- how a call that did not run to its answer ends ----------------------------------

    def _translate(self, call: PendingCall, error: Exception) -> Ending | None:
        """An exception as the call's ending; None: the call ended early (lost session)."""
        if call.phase == "local":  # the handler's own failure is the tool's error
            header = wall_time_header(anyio.current_time() - call.started)
            return Ending("error", f"{header}\n{error}")
        if isinstance(error, ConnectionLost):
            # The session is gone. The runtime ended the call when it learnt that (INV-8,
            # ``CallTable.fail_server``): ``_ended_early`` reads how, as for a cancel.
            return None
        binding = call.binding
        assert binding is not None, "only a resolved call can fail in transit"
        self._report_end(call, error)
        if isinstance(error, ServerError):  # SPEC §11.2: the server's answer, not the wire's
            text = texts.SERVER_ERROR.format(
                server=binding.server,
                tool=binding.remote_name,
                message=error.message,
                code=error.code,
            )
            return Ending("failed", text)
        if not isinstance(error, RequestFailed):
            logger.exception("call %r to server %r failed unexpectedly", call.call_id, call.server)
        why = _failure_why(error)
        text = texts.TRANSPORT.format(tool=binding.remote_name, server=binding.server, why=why)
        return Ending("failed", text)

    def _report_end(self, call: PendingCall, error: BaseException | None = None) -> None:
        """The input that ends ``call`` (SPEC §3.1: ``call_failed``, or ``timeout`` when
        its deadline fired), once, before anything it causes (SPEC §14.1)."""
        if call.end_reported or call.server is None:
            return
        fields: dict[str, Any] = {"call_id": call.call_id}
        if isinstance(error, ServerError):
            fields["why"], fields["code"] = error.message, error.code  # the server's text
        elif isinstance(error, Exception):
            fields["why"] = _failure_why(error)
        elif call.ended_by is None and call.scope.cancel_called:  # its deadline fired
            if call.sent and self.servers[call.server].config.idle_timeout:
                fields["cap"] = call.capped  # SPEC §8.11: which deadline it was
            call.end_reported = True
            self.recorder.event("timeout", fields)
            return
        else:
            return
        call.end_reported = True
        self.recorder.event("call_failed", fields)

    def _cancelled_at_server(self, call: PendingCall) -> None:
        """INV-7: the one signal of a sent call the host ended. The SDK sent it when the
        call's scope was cancelled (one ``notifications/cancelled`` over JSON-RPC, the
        handler itself in-process); a task's ``tasks/cancel`` was recorded as it went."""
        assert call.server is not None
        if not call.task:
            self.recorder.sent(call.server, "notifications/cancelled", call.call_id)

    def _ended_early(self, call: PendingCall) -> Ending:
        """A call its scope interrupted: cancelled, out of time, its server lost, or the
        host closed."""
        server = call.server
        if call.ended_by == "closed":  # INV-12
            if call.phase == "retrying":
                return Ending("cancelled", texts.CLOSED_RETRYING)
            if not call.sent:
                return Ending("cancelled", texts.CLOSED_UNSENT)
            self._cancelled_at_server(call)
            return Ending("cancelled", texts.CLOSED_SENT)
        if server is None:  # waiting for approval, or a local handler: only a cancel ends it
            return Ending("cancelled", texts.CANCELLED)
        settings = self.servers[server].config
        self._report_end(call)
        seconds = f"{settings.tool_timeout_sec:g}"
        if call.phase == "starting":
            if call.ended_by == "cancelled":
                return Ending("cancelled", texts.CANCELLED)
            if call.ended_by == "disconnected":
                return Ending("failed", texts.NOT_CONNECTED.format(server=server))
            return Ending(
                "timed_out", texts.TIMED_OUT_STARTING.format(seconds=seconds, server=server)
            )
        if call.ended_by == "disconnected":
            template = texts.DISCONNECTED if call.sent else texts.NOT_CONNECTED
            return Ending("failed", template.format(server=server))

        if call.sent:
            self._cancelled_at_server(call)
        if call.ended_by == "cancelled":
            return Ending("cancelled", texts.CANCELLED)
        if call.phase == "retrying":
            text = texts.TIMED_OUT_RETRYING.format(seconds=seconds, server=server)
            return Ending("timed_out", text)
        if call.sent and settings.idle_timeout:  # SPEC §8.11: which deadline fired
            if call.capped:
                text = texts.TIMED_OUT_CAP.format(seconds=f"{settings.tool_max_sec:g}")
            else:
                text = texts.TIMED_OUT_IDLE.format(seconds=seconds)
            return Ending("timed_out", text)
        template = texts.TIMED_OUT if call.sent else texts.TIMED_OUT_QUEUED
        return Ending("timed_out", template.format(seconds=seconds))
