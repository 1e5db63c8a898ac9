"""Sending a routed call (SPEC §8.3, §8.9, §8.12, §8.13): the step's exclusive lane, then
``tools/call`` with the raw name; a call the server refused unrun sent once more (a
``-32020``, INV-13; a forgotten session, INV-14); a call the server runs as a task polled
to its end. A part of :class:`.router.Router`, whose hooks (the seams of the runtime
mutants, §12.7) are here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.lowlevel

from mcpbind.model import texts

from .calls.endings import CallEndings, Ending
from .calls.lanes import Lanes
from .calls.progress import ProgressCounts, ProgressFeed
from .calls.table import CallTable, PendingCall
from .calls.tasks import run_task
from .catalog.registry import Binding
from .config.host import HostConfig
from .config.recorder import Recorder
from .server.refreshes import RefreshRun
from .server.runtime import ServerRuntime
from .wire.seam import (
    HEADER_MISMATCH,
    Connection,
    ConnectionLost,
    ServerError,
    SessionExpired,
    TaskHandle,
)

__all__ = ["META_CALL_ID", "META_SESSION_ID", "META_STEP", "Sending"]

# SPEC §11.10: request metadata under our own prefix (MCP reserves prefixes whose second
# label is ``modelcontextprotocol`` or ``mcp``; ``dev.mcpbind/`` is not one of them).
META_SESSION_ID = "dev.mcpbind/session_id"
META_STEP = "dev.mcpbind/step"
META_CALL_ID = "dev.mcpbind/call_id"


class Sending:
    """How :class:`.router.Router` sends a call that passed its checks."""

    config: HostConfig
    calls: CallTable
    lanes: Lanes
    recorder: Recorder
    recording: bool
    session_id: str
    _endings: CallEndings
    _progress: ProgressCounts

    def _revalidated(self, binding: Binding, name: str) -> Ending | None:
        raise NotImplementedError  # the router's

    def late_answer(self, call_id: str, *, task: bool = False) -> None:
        raise NotImplementedError  # the router's

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
        # Uncontended, the lane is taken with no extra trip through the scheduler.
        if lane is not None and not lane.acquire_nowait():
            await self.lanes.acquire(step, lane, call.order)  # SPEC §8.3: acceptance order
        try:
            retries = 0
            while True:
                connection = runtime.connection
                if connection is None:  # lost while this call waited for the lane or its retry
                    raise ConnectionLost("not connected")
                try:
                    return await self._send_once(
                        call, step, binding, arguments, runtime=runtime, connection=connection
                    )
                except SessionExpired:
                    # SPEC §8.13 (INV-14): the server no longer knows the session and refused
                    # the call unrun. A new session replaces it at once; the call waits for
                    # its first listing and goes once more, still holding its lane.
                    if call.ended_by is not None:  # ended with the session another replaced
                        await anyio.lowlevel.checkpoint()  # its cancellation lands here
                        raise
                    self.recorder.event("session_expired", {"call_id": call.call_id})
                    renewed = self.renew_session(runtime, connection, call)
                    if retries >= self.retries_after_rejection():
                        text = texts.EXPIRED_AGAIN.format(
                            server=runtime.name, tool=binding.remote_name
                        )
                        return Ending("failed", text)
                    call.retry(expired=True)
                    retries += 1
                    await renewed.done.wait()
                    # The same decision may have ended the call (a reconfiguration, §11.17).
                    await anyio.lowlevel.checkpoint_if_cancelled()
                    gone = self._revalidated(binding, name)
                    if gone is not None:
                        return gone
                    call.dispatch()
                    continue
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
                call.retry()
                retries += 1
                await self.retry_refresh(runtime)
                # A reconfiguration that rejected that refresh ended the call too (§11.17):
                # woken by the refresh's end, it must not go out again.
                await anyio.lowlevel.checkpoint_if_cancelled()
                gone = self._revalidated(binding, name)
                if gone is not None:
                    return gone
                call.dispatch()
        finally:
            if lane is not None:
                self.lanes.release(step, lane)

    def renew_session(
        self, runtime: ServerRuntime, connection: Connection, call: PendingCall
    ) -> RefreshRun:
        """INV-14: replace ``connection``'s session (``ServerRuntime.renew``); the run of
        the new session's first listing, which the refused ``call`` waits for."""
        return runtime.renew(connection, call)

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
        *,
        runtime: ServerRuntime,
        connection: Connection,
    ) -> Any:
        """``tools/call`` with the raw name over ``connection``; the raw result."""
        if binding.resource is not None:  # SPEC §11.20: a read is a call, resources/read
            return await self._read_once(call, binding, runtime=runtime, connection=connection)
        server, tool, call_id = runtime.name, binding.remote_name, call.call_id
        recording = self.recording
        on_sent: Callable[[], None] = call.mark_sent
        if recording:

            def sent_and_recorded() -> None:
                call.mark_sent()
                self.recorder.sent(server, "tools/call", tool, call_id)

            on_sent = sent_and_recorded
        settings = runtime.config
        idle = settings.tool_timeout_sec if settings.idle_timeout else 0.0
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
            elif recording:
                is_error = isinstance(raw, Mapping) and raw.get("isError") is True
                self.recorder.event("call_responded", {"call_id": call_id, "is_error": is_error})
        except ConnectionLost:
            runtime.lost(connection)  # INV-8 at once, this call and every other one
            raise
        else:
            if feed.settles:
                await feed.settle()
            return raw
        finally:
            feed.close()  # SPEC §8.10: progress after the answer is late

    async def _read_once(
        self,
        call: PendingCall,
        binding: Binding,
        *,
        runtime: ServerRuntime,
        connection: Connection,
    ) -> Any:
        """``resources/read`` of the binding's URI over ``connection``; the raw result.
        Cancelled after it left, the SDK tells the server (INV-7), as for a tool."""
        server, uri, call_id = runtime.name, binding.remote_name, call.call_id
        recording = self.recording

        def on_sent() -> None:
            call.mark_sent()
            if recording:
                self.recorder.sent(server, "resources/read", uri, call_id)

        try:
            raw = await connection.read_resource(
                uri, on_sent=on_sent, on_late=lambda: self.late_answer(call_id)
            )
        except ConnectionLost:
            runtime.lost(connection)  # INV-8 at once, this call and every other one
            raise
        if recording:
            self.recorder.event("call_responded", {"call_id": call_id, "is_error": False})
        return raw

    async def _run_task(
        self,
        call: PendingCall,
        connection: Connection,
        task: TaskHandle,
        rearm: Callable[[], None] | None,
    ) -> Any:
        """SPEC §8.12: the server runs the call as a task (:func:`.calls.tasks.run_task`)."""

        async def give_up(ending: BaseException) -> None:
            self._endings.report_end(call, ending)  # the input first, then the signal
            await self.give_up_task(call, connection, task)

        return await run_task(
            call, connection, task, give_up=give_up, on_alive=rearm, recorder=self.recorder
        )

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
