"""Progress of the long commands (``check``, ``explore``, ``fuzz``) on stderr.

On a terminal, one line rewritten in place per stage; otherwise one line per finished
stage, so a log or a pipe gets plain text. ``--json`` prints none of it.
"""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    """A live progress display on stderr; one line per finished stage."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.finished: list[str] = []
        """Stages finished so far (the one-line summary after Ctrl-C)."""

    def start(self, label: str) -> float:
        if not self.quiet:
            end = "\r" if self.tty else "\n"
            print(f"  … {label}", end=end, file=sys.stderr, flush=True)
        return time.perf_counter()

    def done(self, label: str, started: float, verdict: str) -> None:
        self.finished.append(label)
        if not self.quiet:
            seconds = time.perf_counter() - started
            print(f"  {verdict:<4} {label} ({seconds:.1f} s)", file=sys.stderr, flush=True)
