"""Writing traces in the format ``mcpbind-trace/1`` (SPEC §14).

A :class:`TraceRecorder` is a :class:`~mcpbind.impl.config.recorder.Recorder`: passed to
``Host.open(..., recorder=...)`` it writes one JSON object per line to a text stream, a
header built from the host's configuration first, then every input the host met and
every output it produced, in order, and ``{"kind": "end"}`` when :meth:`end` is called.
``mcpbind trace check`` (:mod:`mcpbind.model.trace`) decides whether such a file conforms.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from mcpbind.model.trace import FORMAT, SIGNALS
from mcpbind.model.values import EventKind

from .config.contributors import kinds
from .config.host import HostConfig
from .config.server import ServerConfig
from .values import RefreshOutcome, ToolResult
from .wire.connector import CLIENT_INFO

__all__ = ["TraceRecorder", "server_options", "trace_header"]

_ENCODE = json.JSONEncoder(ensure_ascii=False, sort_keys=False).encode
"""What ``json.dumps(record, ensure_ascii=False)`` does, with its encoder made once (a
record is written for every input and output of a run)."""


def trace_header(config: HostConfig) -> dict[str, Any]:
    """The header of a trace of a host with ``config`` (SPEC §14.1)."""
    extensions = {
        contributor.id: [tool.name for tool in contributor.tools()]
        for contributor in kinds(config.contributors).tools
    }
    approver = config.approver is not None
    options = {  # a disabled server is not started: not one of the trace's servers
        name: server_options(server, has_approver=approver)
        for name, server in config.servers.items()
        if server.enabled
    }
    return {
        "kind": "header",
        "format": FORMAT,
        "policy": config.binding_policy,
        "servers": list(options),
        "server_options": options,
        "builtins": [tool.name for tool in config.builtins],
        "extensions": extensions,
        "max_name_length": config.max_name_length,
        "host": {"name": CLIENT_INFO.name, "version": CLIENT_INFO.version},
    }


def server_options(server: ServerConfig, *, has_approver: bool) -> dict[str, Any]:
    """What refinement's bound needs of one server (SPEC §14.1, §14.5): in the header, and
    in a ``reconfigure`` record for the servers it adds or changes (§11.17)."""
    gated = has_approver or server.default_tools_approval_mode is not None
    gated = gated or any(t.approval_mode is not None for t in server.tools.values())
    enabled = server.enabled_tools
    return {
        "parallel": server.supports_parallel_tool_calls,
        "tool_timeout_sec": server.tool_timeout_sec,
        "idle_timeout": server.idle_timeout,
        "tool_max_sec": server.tool_max_sec,
        "enabled_tools": None if enabled is None else sorted(enabled),
        "disabled_tools": sorted(server.disabled_tools),
        "approval": gated,
        # pragma below: ``startup`` is one of two values (its validator), "eager" sorting
        # first, so ``>=`` (a survivor of issue 33) or ``>`` says the same as ``==``
        "lazy": server.startup == "lazy_when_cached",  # pragma: no mutate
    }


class TraceRecorder:
    """Writes each report as one line of ``out``; the header at once.

    ``clock`` (``time.time``): each record also carries ``at``, when it was written, so
    that the trace merges with the wire-side traces of taps (SPEC §14.6)."""

    def __init__(
        self, out: TextIO, header: Mapping[str, Any], *, clock: Callable[[], float] | None = None
    ) -> None:
        self._out = out
        self._ended = False
        self._clock = clock
        self._write(dict(header))

    def _write(self, record: Mapping[str, Any]) -> None:
        if self._ended:
            return
        if self._clock is not None and record.get("kind") not in ("header", "end"):
            record = {**record, "at": self._clock()}
        self._out.write(_ENCODE(record) + "\n")
        # Each record reaches the file as it is written (SPEC §14.3): a run that is
        # killed leaves a trace that ends early, every record before that intact.
        self._out.flush()

    def end(self) -> None:
        """The last line, ``{"kind": "end"}``; nothing is written after it."""
        self._write({"kind": "end"})
        self._ended = True

    # --- outputs (SPEC §3.2) ----------------------------------------------------------

    def published(self, generation: int, source: str, names: tuple[str, ...]) -> None:
        self._write(
            {"kind": "published", "generation": generation, "source": source, "names": names}
        )

    def refresh_outcome(self, outcome: RefreshOutcome) -> None:
        record: dict[str, Any] = {
            "kind": "refresh_outcome",
            "server": outcome.server,
            "status": outcome.status,
            "generation": outcome.generation,
        }
        if outcome.kind is not None:
            record["reject"] = outcome.kind
            record["reason"] = outcome.reason
        if outcome.excluded:
            record["excluded"] = [e.tool for e in outcome.excluded]
        self._write(record)

    def result(self, result: ToolResult) -> None:
        self._write(
            {
                "kind": "result",
                "call_id": result.call_id,
                "status": result.status,
                "text": result.output,
            }
        )

    def sent(self, server: str, method: str, detail: str, call_id: str | None = None) -> None:
        record: dict[str, Any] = {"kind": "sent", "server": server, "method": method}
        if method in SIGNALS:
            record["call_id"] = detail  # a cancellation's detail is its call
        else:
            if call_id is not None:
                record["call_id"] = call_id
            if detail:
                record["detail"] = detail  # a tools/call's raw tool; "cursor"
        self._write(record)

    def refused(self, call_id: str, text: str) -> None:
        self._write({"kind": "refused", "call_id": call_id, "text": text})

    def late_dropped(self, call_id: str) -> None:
        self._write({"kind": "late_dropped", "call_id": call_id})

    # --- inputs (SPEC §3.1) -----------------------------------------------------------

    def event(self, kind: EventKind, fields: Mapping[str, Any]) -> None:
        self._write({"kind": kind, **fields})
