"""A stdio server's stderr: a pipe of ours instead of the user's terminal, read line by
line into a callback (SPEC §11.14). And a line on its stdout that is not JSON-RPC (a
banner): the SDK skips it but logs it with a traceback on ``mcp.client.stdio``; it goes
to the same callback instead, as one line (SPEC §11.14)."""

from __future__ import annotations

import contextvars
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

import anyio

from .seam import OnStderr

__all__ = ["StderrPipe", "stdout_lines_to"]

_NOT_JSON_RPC = "Failed to parse JSONRPC message"
"""How the SDK's stdio client logs a stdout line it cannot parse (SDK-NOTES)."""
_ON_STDOUT_LINE: contextvars.ContextVar[OnStderr | None] = contextvars.ContextVar(
    "mcpbind_on_stdout_line", default=None
)
"""The callback of the server whose session this task (and the SDK's reader task that it
starts, which inherits the context) belongs to."""


class _StdoutLineFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        on_line = _ON_STDOUT_LINE.get()
        if on_line is None or not str(record.msg).startswith(_NOT_JSON_RPC):
            return True  # not about one of our servers' stdout
        error = record.exc_info[1] if record.exc_info else None
        errors = getattr(error, "errors", None)  # pydantic's ValidationError
        details = errors() if callable(errors) else []
        line = details[0].get("input") if details else None
        shown = line if isinstance(line, str) else str(error)
        on_line(f"(stdout, not JSON-RPC, skipped) {shown}")
        return False


logging.getLogger("mcp.client.stdio").addFilter(_StdoutLineFilter())


@contextmanager
def stdout_lines_to(on_line: OnStderr) -> Iterator[None]:
    """In this block (and the tasks started in it), the stdout lines the SDK cannot
    parse go to ``on_line``, not to the SDK's log."""
    token = _ON_STDOUT_LINE.set(on_line)
    try:
        yield
    finally:
        try:
            _ON_STDOUT_LINE.reset(token)
        except ValueError:  # pragma: no cover - left in another context than entered
            _ON_STDOUT_LINE.set(None)


class StderrPipe:
    """A stdio server's stderr: a pipe whose lines go to a callback."""

    def __init__(self, on_line: OnStderr) -> None:
        read, write = os.pipe()
        os.set_blocking(read, False)
        self._read = read
        self.writer = os.fdopen(write, "w")
        """The write end, the child's stderr; ours is closed once the child has it."""
        self._on_line = on_line
        self._partial = b""

    def spawned(self) -> None:
        """The child holds the write end now: ours closes, so its exit ends the stream."""
        if not self.writer.closed:
            self.writer.close()

    async def read(self) -> None:
        while not self._read_some():
            await anyio.wait_readable(self._read)

    def _read_some(self) -> bool:
        """Read what is there; True at the end of the stream."""
        while True:
            try:
                data = os.read(self._read, 65536)
            except BlockingIOError:
                return False
            except OSError:
                return True
            if not data:
                if self._partial:
                    self._on_line(self._partial.decode("utf-8", "replace"))
                    self._partial = b""
                # False here would cost read() one more read, which meets the end again
                return True  # pragma: no mutate
            lines = (self._partial + data).split(b"\n")
            self._partial = lines.pop()
            for line in lines:
                self._on_line(line.decode("utf-8", "replace").rstrip("\r"))

    def finish(self) -> None:
        """The session is over: take what is left, then close the pipe."""
        self.spawned()
        self._read_some()
        os.close(self._read)
