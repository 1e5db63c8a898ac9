"""A stdio server's stderr: a pipe of ours instead of the user's terminal, read line by
line into a callback (SPEC §11.14)."""

from __future__ import annotations

import os

import anyio

from .seam import OnStderr

__all__ = ["StderrPipe"]


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
                return True
            lines = (self._partial + data).split(b"\n")
            self._partial = lines.pop()
            for line in lines:
                self._on_line(line.decode("utf-8", "replace").rstrip("\r"))

    def finish(self) -> None:
        """The session is over: take what is left, then close the pipe."""
        self.spawned()
        self._read_some()
        os.close(self._read)
