"""What ``catalog``, ``call`` and ``login`` share: the config lookup (``--config PATH``, else
``./mcpbind.toml``, else the embedded demo), ``--trace``, ``-v`` and a startup failure's
report."""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TextIO

import attrs
import trio

from mcpbind.impl import (
    HostConfig,
    NullRecorder,
    Recorder,
    ServerStartupError,
    ToolResult,
)
from mcpbind.impl.config.recorder import records
from mcpbind.impl.values import RefreshOutcome
from mcpbind.model.values import EventKind

from .config_file import config_or_exit, load_config

if TYPE_CHECKING:
    from mcpbind.impl.trace import TraceRecorder

__all__ = [
    "USAGE",
    "StartWatch",
    "config_or_exit",
    "every_tool",
    "load_config",
    "print_stderr",
    "startup_failed",
    "tracing",
    "verbose",
]

USAGE = 2


def every_tool(config: HostConfig, as_model: bool = False) -> HostConfig:
    """A person names tools directly: the CLI lists and calls every tool, also above
    ``defer_threshold`` (deferral is for a model's steps, SPEC §11.9), unless asked to
    act as a model would (``--as-model``)."""
    return config if as_model else attrs.evolve(config, defer_threshold=None)


@contextlib.contextmanager
def tracing(path: str | None, config: HostConfig) -> Iterator[TraceRecorder | None]:
    """``--trace FILE``: the run's trace (SPEC §14), ended however the run ends; each
    record with its time, so that it merges with the traces of taps (§14.6)."""
    if path is None:
        yield None
        return
    # the trace's writer (and the model's trace module) load only when a trace is written
    from mcpbind.impl.trace import TraceRecorder, trace_header  # noqa: PLC0415

    with open(path, "w", encoding="utf-8") as out:
        recorder = TraceRecorder(out, trace_header(config), clock=time.time)
        try:
            yield recorder
        finally:
            recorder.end()


def print_stderr(server: str, lines: Any, file: TextIO = sys.stdout) -> None:
    """A server's last stderr lines, when it failed (SPEC §11.14)."""
    if lines:
        print(f"  stderr of {server} (last {len(lines)} lines):", file=file)
        for line in lines:
            print(f"    {line}", file=file)


def startup_failed(error: ServerStartupError) -> int:
    print(f"mcpbind: {error}", file=sys.stderr)
    print_stderr(error.server, error.stderr, file=sys.stderr)
    return 1


def verbose(enabled: bool) -> None:
    """``-v``: every server's stderr on ours, each line after the server's name."""
    if not enabled:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_ServerLineFormatter())
    logger = logging.getLogger("mcpbind.server")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


class _ServerLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"[{record.name.removeprefix('mcpbind.server.')}] {record.getMessage()}"


class StartWatch(NullRecorder):
    """A recorder in front of the run's own (``--trace``, or none) that learns which
    servers have had their first listing; :meth:`announce` names the others while the host
    opens, so that a slow start is not a silent one."""

    def __init__(self, inner: Recorder | None, config: HostConfig) -> None:
        self.inner: Recorder = inner if inner is not None else NullRecorder()
        self.keeps = records(self.inner)
        """What it watches (outcomes, failures) is reported whether or not it keeps."""
        self.waiting = [name for name, server in config.servers.items() if server.enabled]
        self.scope = trio.CancelScope()
        """Cancelled once the host is open: nothing more to announce."""

    async def announce(self, after: float = 1.0, every: float = 5.0) -> None:
        """After ``after`` seconds, then every ``every``: the servers still starting."""
        if not sys.stderr.isatty():
            return  # a script waits as long as it takes; a person is told
        with self.scope:
            await trio.sleep(after)
            while self.waiting:
                names = ", ".join(self.waiting)
                print(f"mcpbind: still starting: {names}", file=sys.stderr, flush=True)
                await trio.sleep(every)

    def _settled(self, server: object) -> None:
        if server in self.waiting:
            self.waiting.remove(server)

    def published(self, generation: int, source: str, names: tuple[str, ...]) -> None:
        self.inner.published(generation, source, names)

    def refresh_outcome(self, outcome: RefreshOutcome) -> None:
        self._settled(outcome.server)
        self.inner.refresh_outcome(outcome)

    def result(self, result: ToolResult) -> None:
        self.inner.result(result)

    def sent(self, server: str, method: str, detail: str, call_id: str | None = None) -> None:
        self.inner.sent(server, method, detail, call_id)

    def refused(self, call_id: str, text: str) -> None:
        self.inner.refused(call_id, text)

    def late_dropped(self, call_id: str) -> None:
        self.inner.late_dropped(call_id)

    def event(self, kind: EventKind, fields: Mapping[str, Any]) -> None:
        if kind in ("list_failed", "disconnect"):
            self._settled(fields.get("server"))
        self.inner.event(kind, fields)
