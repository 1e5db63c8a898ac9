"""How a call ends when it did not run to its answer (SPEC §8.5-§8.7, INV-4, INV-7, INV-8).

The router makes every result from an :class:`Ending`. A call whose route returned one
ends with it; a call its scope interrupted (a cancel, its deadline, its server lost, the
host closing) or whose route raised ends as :class:`CallEndings` reads from the
:class:`~.table.PendingCall`: who ended it, in which phase, whether ``tools/call`` had
left. Each ending also records the input that caused it (``call_failed``, or ``timeout``
when its deadline fired) before anything it causes (SPEC §14.1), once per call, and the
one cancellation a sent call owes its server (INV-7).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NamedTuple

from mcpbind.model import texts

from ..config.recorder import Recorder
from ..config.server import ServerConfig
from ..values import ContentItem
from ..wire.seam import (
    AuthorizationRefused,
    ConnectionLost,
    RequestFailed,
    ServerError,
    UrlElicitationRequired,
    UrlStep,
)
from .table import PendingCall

__all__ = ["CallEndings", "Ending", "failure_why", "url_text"]

logger = logging.getLogger("mcpbind.router")


class Ending(NamedTuple):
    """How a call ends: what the router turns into its one result."""

    status: texts.CallStatus
    output: str
    items: tuple[ContentItem, ...] = ()


def failure_why(error: Exception) -> str:
    """Why a call failed in transit, as ``TRANSPORT`` and the trace's ``call_failed`` say
    it: a request's own failure text, else the unexpected exception's type and message."""
    return str(error) if isinstance(error, RequestFailed) else f"{type(error).__name__}: {error}"


_URL_MESSAGE_LIMIT = 200
_URL_LIMIT = 2000


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _step(step: UrlStep) -> str:
    url = _one_line(step.url, _URL_LIMIT)
    message = _one_line(step.message, _URL_MESSAGE_LIMIT)
    return texts.URL_STEP.format(url=url, message=message) if message else url


def url_text(server: str | None, tool: str, steps: tuple[UrlStep, ...]) -> str:
    """SPEC §11.10: the text of a call the server answered ``-32042``: the URLs the user
    must open, each with the server's message, and what the user answered."""
    urls = " and ".join(_step(step) for step in steps)
    refused = next((s.answer for s in steps if s.answer not in (None, "accept")), None)
    if refused is not None:
        return texts.URL_DECLINED.format(server=server, tool=tool, urls=urls, action=refused)
    if all(s.answer == "accept" for s in steps):
        return texts.URL_ACCEPTED.format(server=server, tool=tool, urls=urls)
    return texts.URL_REQUIRED.format(server=server, tool=tool, urls=urls)


class CallEndings:
    """The endings of one host's calls; ``settings(server)`` is that server's config."""

    def __init__(self, recorder: Recorder, settings: Callable[[str], ServerConfig]) -> None:
        self.recorder = recorder
        self.settings = settings

    def translate(self, call: PendingCall, error: Exception, header: str) -> Ending | None:
        """An exception as the call's ending; None: the call ended early (lost session).
        ``header`` is the wall-time line of a handler that failed."""
        if call.phase == "local":  # the handler's own failure is the tool's error
            return Ending("error", f"{header}\n{error}")
        if isinstance(error, ConnectionLost):
            # The session is gone. The runtime ended the call when it learnt that (INV-8,
            # ``CallTable.fail_server``): ``ended_early`` reads how, as for a cancel.
            return None
        binding = call.binding
        assert binding is not None, "only a resolved call can fail in transit"
        self.report_end(call, error)
        if isinstance(error, UrlElicitationRequired):  # SPEC §11.10
            return Ending("failed", url_text(binding.server, binding.remote_name, error.steps))
        if isinstance(error, ServerError):  # SPEC §11.2: the server's answer, not the wire's
            text = texts.SERVER_ERROR.format(
                server=binding.server,
                tool=binding.remote_name,
                message=error.message,
                code=error.code,
            )
            return Ending("failed", text)
        if isinstance(error, AuthorizationRefused):  # SPEC §11.15: it says what to do
            return Ending("failed", str(error.error))
        if not isinstance(error, RequestFailed):
            logger.exception("call %r to server %r failed unexpectedly", call.call_id, call.server)
        why = failure_why(error)
        text = texts.TRANSPORT.format(tool=binding.remote_name, server=binding.server, why=why)
        return Ending("failed", text)

    def report_end(self, call: PendingCall, error: BaseException | None = None) -> None:
        """The input that ends ``call`` (SPEC §3.1: ``call_failed``, or ``timeout`` when
        its deadline fired), once, before anything it causes (SPEC §14.1)."""
        if call.server is None:
            return
        fields: dict[str, Any] = {"call_id": call.call_id}
        if isinstance(error, ServerError):
            fields["why"], fields["code"] = error.message, error.code  # the server's text
        elif isinstance(error, Exception):
            fields["why"] = failure_why(error)
        elif call.ended_by is None and call.scope.cancel_called:  # its deadline fired
            if not call.report_end():
                return
            if call.sent and self.settings(call.server).idle_timeout:
                fields["cap"] = call.capped  # SPEC §8.11: which deadline it was
            self.recorder.event("timeout", fields)
            return
        else:
            return
        if call.report_end():
            self.recorder.event("call_failed", fields)

    def cancelled_at_server(self, call: PendingCall) -> None:
        """INV-7: the one signal of a sent call the host ended. The SDK sent it when the
        call's scope was cancelled (one ``notifications/cancelled`` over JSON-RPC, the
        handler itself in-process); a task's ``tasks/cancel`` was recorded as it went."""
        assert call.server is not None
        if not call.task:
            self.recorder.sent(call.server, "notifications/cancelled", call.call_id)

    def ended_early(self, call: PendingCall) -> Ending:
        """A call its scope interrupted: cancelled, out of time, its server lost, the host
        closed, or a reconfiguration removed or replaced its server."""
        server = call.server
        how = call.ended_by
        if how in {"removed", "replaced"}:  # SPEC §11.17 (INV-16): as at close
            binding = call.binding
            assert binding is not None
            names = {"how": how, "server": binding.server}
            if call.phase == "retrying":
                return Ending("cancelled", texts.RECONFIGURED_RETRYING.format(**names))
            if not call.sent:
                return Ending("cancelled", texts.RECONFIGURED_UNSENT.format(**names))
            self.cancelled_at_server(call)
            return Ending("cancelled", texts.RECONFIGURED_SENT.format(**names))
        if call.ended_by == "closed":  # INV-12
            if call.phase == "retrying":
                closed = texts.CLOSED_EXPIRED if call.expired else texts.CLOSED_RETRYING
                return Ending("cancelled", closed)
            if not call.sent:
                return Ending("cancelled", texts.CLOSED_UNSENT)
            self.cancelled_at_server(call)
            return Ending("cancelled", texts.CLOSED_SENT)
        if server is None:  # waiting for approval, or a local handler: only a cancel ends it
            return Ending("cancelled", texts.CANCELLED)
        settings = self.settings(server)
        self.report_end(call)
        seconds = texts.seconds(settings.tool_timeout_sec)
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
            self.cancelled_at_server(call)
        if call.ended_by == "cancelled":
            return Ending("cancelled", texts.CANCELLED)
        if call.phase == "retrying":
            late = texts.TIMED_OUT_EXPIRED if call.expired else texts.TIMED_OUT_RETRYING
            text = late.format(seconds=seconds, server=server)
            return Ending("timed_out", text)
        if call.sent and settings.idle_timeout:  # SPEC §8.11: which deadline fired
            if call.capped:
                text = texts.TIMED_OUT_CAP.format(seconds=texts.seconds(settings.tool_max_sec))
            else:
                text = texts.TIMED_OUT_IDLE.format(seconds=seconds)
            return Ending("timed_out", text)
        template = texts.TIMED_OUT if call.sent else texts.TIMED_OUT_QUEUED
        return Ending("timed_out", template.format(seconds=seconds))
