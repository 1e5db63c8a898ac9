"""Progress of the long commands (``check``, ``explore``, ``fuzz``) on stderr.

On a terminal, a live line drawn by ``rich`` (imported only then: it costs the other
commands nothing): the stage, its counts, their rate, the time spent and, where the total
is known, the time left; each finished stage leaves one line. Otherwise (a pipe, a log)
one plain line when a stage starts and one when it ends. ``--json`` prints none of it.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """Stages one after the other, each with a count that goes up (examples, runs, parts)."""

    def __init__(self, quiet: bool, stream: TextIO | None = None, plain: bool = True) -> None:
        """``plain``: off a terminal, one line per stage (False: nothing off a terminal,
        for a command whose result says it all)."""
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        if not self.tty and not plain:
            self.quiet = True
        self.finished: list[str] = []
        """Stages finished so far (the one-line summary after Ctrl-C)."""
        self._live: Any = None
        self._task: Any = None
        self._began = 0.0
        self._unit = ""

    def start(self, label: str, total: float | None = None, unit: str = "") -> float:
        """A stage begins; ``total``: how many ``unit`` it will count, if known."""
        if self.quiet:
            return time.perf_counter()
        if self.tty:
            self._start_live(label, total, unit)
        else:
            print(f"  … {label}", file=self.stream, flush=True)
        return time.perf_counter()

    def begin(self, labels: list[str], total: float, unit: str = "") -> float:
        """Stages that run side by side begin together; ``total``: the ``unit`` they will
        count together. Each ends with :meth:`finish`; :meth:`close` ends the live line."""
        if self.quiet:
            return time.perf_counter()
        if self.tty:
            many = len(labels) != 1
            self._start_live(f"{len(labels)} stage{'s' if many else ''} side by side", total, unit)
        else:
            for label in labels:
                print(f"  … {label}", file=self.stream, flush=True)
        return time.perf_counter()

    def finish(self, label: str, seconds: float, verdict: str) -> None:
        """A stage of those begun together ended after ``seconds`` of work; the others
        go on (on a terminal, its line goes above the live one)."""
        self.finished.append(label)
        if self.quiet:
            return
        line = f"  {verdict:<4} {label} ({seconds:.1f} s)"
        if self._live is not None:
            self._live.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=self.stream, flush=True)

    def advance(self, amount: float = 1, detail: str = "") -> None:
        """The stage counted ``amount`` more (shown on a terminal only)."""
        if self._live is not None:
            self.set(self._live.tasks[0].completed + amount, detail)

    def rate(self, count: int, unit: str) -> str:
        """``count`` and its rate since the stage began: ``12,345 states (1,234/s)``."""
        elapsed = time.perf_counter() - self._began
        per_second = f" ({count / elapsed:,.0f}/s)" if elapsed > 0 else ""
        return f"{count:,} {unit}{per_second}"

    def total(self, total: float) -> None:
        """The stage's total, once known."""
        if self._live is not None:
            self._live.update(self._task, total=total)

    def set(self, completed: float, detail: str = "") -> None:
        """The stage has counted ``completed`` so far; ``detail``: more to show."""
        if self._live is not None:
            elapsed = time.perf_counter() - self._began
            rate = f"{completed / elapsed:,.1f}/s" if elapsed > 0 and self._unit else ""
            shown = " ".join(part for part in (detail, rate) if part)
            self._live.update(self._task, completed=completed, detail=shown)

    def done(self, label: str, started: float, verdict: str) -> None:
        self.finished.append(label)
        self._stop_live()
        if not self.quiet:
            seconds = time.perf_counter() - started
            print(f"  {verdict:<4} {label} ({seconds:.1f} s)", file=self.stream, flush=True)

    def close(self) -> None:
        """Take the live line off the terminal (Ctrl-C, an error)."""
        self._stop_live()

    def _start_live(self, label: str, total: float | None, unit: str) -> None:
        from rich.console import Console  # noqa: PLC0415 - on a terminal only
        from rich.progress import (  # noqa: PLC0415
            BarColumn,
            MofNCompleteColumn,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as Live  # noqa: PLC0415

        self._stop_live()
        columns: list[Any] = [SpinnerColumn(), TextColumn("{task.description}")]
        if total is not None:
            columns += [BarColumn(), MofNCompleteColumn(), TaskProgressColumn()]
        else:
            columns += [TextColumn("{task.completed:.0f} " + unit)]
        columns += [TextColumn("{task.fields[detail]}"), TimeElapsedColumn()]
        if total is not None:
            columns.append(TimeRemainingColumn())
        live = Live(*columns, console=Console(file=self.stream), transient=True)
        live.start()
        self._task = live.add_task(label, total=total, detail="")
        self._live = live
        self._began = time.perf_counter()
        self._unit = unit

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
