"""Approval of tool calls: host policy before anything is sent (SPEC §11.8).

Theory of operation. Every MCP call, once its name and arguments are known good, passes
the host's :class:`ApprovalGate`. The gate first decides synchronously, from the
configuration and the tool's annotations alone, whether the call may go ahead: gating
inactive for the tool (no approver and no mode configured), a mode that does not ask for
these annotations, or an earlier "allow for this session"/"allow always". Only when it
must ask does the host await the approver, with the call registered as pending so that
``host.cancel`` reaches it. Whatever the approver does other than answering one of
:data:`APPROVAL_ANSWERS` (raising, answering something else) denies the call: gating
fails closed, it never runs a call silently. An "allow always" is remembered for the
session first, then written to the config file; a failed write keeps the session's
approval, is logged and shows in :meth:`ApprovalGate.statistics`.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import anyio
import attrs

from mcpbind.model import texts

from ..catalog.registry import Binding
from ..config.hooks import APPROVAL_ANSWERS, ApprovalRequest, Approver
from ..config.recorder import Recorder
from ..config.server import ApprovalMode, ServerConfig
from .endings import Ending
from .table import PendingCall

__all__ = ["ApprovalGate", "ApprovalStatistics", "effective_mode", "requires_approval"]

logger = logging.getLogger("mcpbind.approval")
_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _hint(annotations: Mapping[str, Any] | None, key: str) -> bool | None:
    """A boolean hint as stated by the server; None when absent (or null)."""
    if annotations is None:
        return None
    value = annotations.get(key)
    return value if isinstance(value, bool) else None


def requires_approval(mode: ApprovalMode, annotations: Mapping[str, Any] | None) -> bool:
    """Whether a call under ``mode`` to a tool with ``annotations`` must be asked about.

    Absent hints take the MCP defaults (``ToolAnnotations``, MCP 2025-06-18 schema):
    ``readOnlyHint`` false, ``destructiveHint`` true, ``openWorldHint`` true; per MCP,
    ``destructiveHint`` is meaningful only when ``readOnlyHint`` is false, so the default
    never outweighs a stated ``readOnlyHint: true``, while a stated
    ``destructiveHint: true`` always asks (contradictory hints resolve to asking)."""
    if mode == "approve":
        return False
    if mode == "prompt":
        return True
    read_only = _hint(annotations, "readOnlyHint") is True
    if mode == "writes":
        return not read_only
    destructive = _hint(annotations, "destructiveHint")
    if destructive is True:
        return True
    if read_only:
        return False
    open_world = _hint(annotations, "openWorldHint")
    return not (destructive is False and open_world is False)


def effective_mode(config: ServerConfig, tool: str, *, has_approver: bool) -> ApprovalMode | None:
    """The tool's mode, else the server's default, else ``auto`` when the host has an
    approver; None means gating is inactive for this tool."""
    tool_config = config.tools.get(tool)
    mode = tool_config.approval_mode if tool_config is not None else None
    if mode is None:
        mode = config.default_tools_approval_mode
    if mode is None and has_approver:
        mode = "auto"
    return mode


@attrs.frozen
class ApprovalStatistics:
    asked: int
    """Calls the approver was asked about."""
    answers: Mapping[str, int]
    """Valid answers the approver gave, by answer."""
    denied: int
    """Calls the gate denied (declined, cancelled, no approver, approver failed)."""
    remembered: int
    """(server, tool) pairs allowed for the rest of the session."""
    saved: int
    """"Allow always" answers written to the config file."""
    save_errors: tuple[str, ...]
    """Why an "allow always" could not be written (``APPROVAL_NOT_SAVED`` texts)."""


@attrs.define(eq=False)
class ApprovalGate:
    """One per host: the policy, the session's memory and the approver."""

    approver: Approver | None = None
    config_path: str | None = None
    """Where "allow always" is written; None: it holds for the session only."""
    _session: set[tuple[str, str]] = attrs.field(factory=set)
    _answers: Counter[str] = attrs.field(factory=Counter)
    _asked: int = 0
    _denied: int = 0
    _saved: int = 0
    _save_errors: list[str] = attrs.field(factory=list)
    _save_lock: anyio.Lock = attrs.field(factory=anyio.Lock)

    def statistics(self) -> ApprovalStatistics:
        return ApprovalStatistics(
            asked=self._asked,
            answers=dict(self._answers),
            denied=self._denied,
            remembered=len(self._session),
            saved=self._saved,
            save_errors=tuple(self._save_errors),
        )

    def decide(
        self,
        *,
        call_id: str,
        server: str,
        tool: str,
        name: str,
        arguments: Mapping[str, Any],
        annotations: Mapping[str, Any] | None,
        config: ServerConfig,
    ) -> ApprovalRequest | str | None:
        """Synchronously: None (go ahead), a denial text (``denied`` now), or the request
        to put to the approver with :meth:`ask`."""
        mode = effective_mode(config, tool, has_approver=self.approver is not None)
        if mode is None or not requires_approval(mode, annotations):
            return None
        if mode != "prompt" and (server, tool) in self._session:
            return None
        if self.approver is None:
            self._denied += 1
            return texts.DENIED_NO_APPROVER.format(name=name, server=server, tool=tool, mode=mode)
        return ApprovalRequest(
            call_id=call_id,
            server=server,
            tool=tool,
            name=name,
            arguments=MappingProxyType(dict(arguments)),
            annotations=_EMPTY if annotations is None else annotations,
            mode=mode,
        )

    async def admit(
        self,
        call: PendingCall,
        binding: Binding,
        *,
        name: str,
        arguments: dict[str, Any],
        config: ServerConfig,
        recorder: Recorder,
    ) -> Ending | None:
        """SPEC §11.8: the gate of one call; None when it may go on, else its ``denied``
        ending. While the approver is asked the call is pending with no deadline and
        attached to no server (SPEC §3.4)."""
        assert binding.server is not None
        verdict = self.decide(
            call_id=call.call_id,
            server=binding.server,
            tool=binding.remote_name,
            name=name,
            arguments=arguments,
            annotations=binding.spec.annotations,
            config=config,
        )
        if verdict is None:
            return None
        if isinstance(verdict, str):  # gated, and no approver to ask (SPEC §11.8)
            recorder.event("deny", {"call_id": call.call_id, "answer": "none"})
            return Ending("denied", verdict)
        call.await_approval()
        denial, answer = await self.ask(verdict)
        if denial is None:
            recorder.event("approve", {"call_id": call.call_id, "answer": answer})
            return None
        recorder.event("deny", {"call_id": call.call_id, "answer": answer})
        return Ending("denied", denial)

    async def ask(self, request: ApprovalRequest) -> tuple[str | None, str]:
        """Await the approver: None (allowed) or the denial text, with what the approver
        answered (``failed`` when it raised or answered nonsense). Cancellation of the
        caller passes through (the host ends the call ``cancelled``)."""
        assert self.approver is not None
        self._asked += 1
        where = {"name": request.name, "server": request.server, "tool": request.tool}
        try:
            answer: Any = await self.approver(request)
        except Exception as error:
            why = f"it raised {type(error).__name__}: {error}".rstrip(": ")
            return self._deny(texts.DENIED_APPROVER_FAILED.format(why=why, **where)), "failed"
        if not isinstance(answer, str) or answer not in APPROVAL_ANSWERS:
            why = f"it answered {answer!r}, not one of {', '.join(APPROVAL_ANSWERS)}"
            return self._deny(texts.DENIED_APPROVER_FAILED.format(why=why, **where)), "failed"
        self._answers[answer] += 1
        if answer == "decline":  # pragma: no mutate - no answer sorts after it: >= is ==
            return self._deny(texts.DENIED_DECLINED.format(**where)), answer
        if answer == "cancel":
            return self._deny(texts.DENIED_CANCELLED.format(**where)), answer
        if request.mode == "prompt" or answer == "allow":
            return None, answer  # prompt: "remember" answers are downgraded to once
        self._session.add((request.server, request.tool))
        if answer == "allow_always" and self.config_path is not None:
            with anyio.CancelScope(shield=True):  # a short local write; never half done
                await self._save(self.config_path, request.server, request.tool)
        return None, answer

    def _deny(self, text: str) -> str:
        self._denied += 1
        return text

    async def _save(self, path: str, server: str, tool: str) -> None:
        # tomlkit loads here, on the first "always": a host that is never told it does not
        from ..config.toml_edit import save_approve_always  # noqa: PLC0415

        async with self._save_lock:  # one read-modify-write of the file at a time
            try:
                await anyio.to_thread.run_sync(save_approve_always, path, server, tool)
            except Exception as error:
                why = str(error) if not isinstance(error, OSError) else error.strerror or ""
                message = texts.APPROVAL_NOT_SAVED.format(
                    tool=tool, server=server, path=path, why=why or type(error).__name__
                )
                self._save_errors.append(message)
                logger.warning("%s", message)
            else:
                self._saved += 1
