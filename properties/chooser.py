"""One interface for the machines' decisions, three sources (SPEC §12.3).

* :class:`DrawChooser` — Hypothesis draws (the ``ci`` and ``nightly`` profiles);
* :class:`Odometer` — every choice sequence up to a depth, exhaustively (the idea of
  TigerBeetle's exhaustigen: the choice tree is walked like an odometer);
* :class:`ReplayChooser` — a replay file: the events of a trace, by name.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

try:
    from hypothesis.control import should_note as _should_note
except ImportError:  # not public API: every draw is then reported, as data.draw does

    def _should_note() -> bool:
        return True


__all__ = ["Chooser", "DrawChooser", "Odometer", "Probe", "ReplayChooser", "ReplayMismatch"]

T = TypeVar("T")


class Chooser(Protocol):
    def choose(self, options: Sequence[T], label: str) -> T:
        """One of ``options`` (never empty)."""

    def steps(self, most: int) -> int:
        """How many rules to run, at most ``most``."""


class DrawChooser:
    def __init__(self, data: Any) -> None:
        self._data = data
        # Neither ``should_note`` nor a data object's ``conjecture_data`` is documented
        # API (Hypothesis >= 6.100 has both): without them every draw goes through
        # ``data.draw``, the same examples, only slower.
        conjecture = getattr(data, "conjecture_data", None)
        self._fast = None if conjecture is None or _should_note() else conjecture.draw
        """Generating (not the reported or a verbose run): draw from the test case's data."""

    def choose(self, options: Sequence[T], label: str) -> T:
        return self._draw(_sampled(tuple(options)), label)  # type: ignore[no-any-return]

    def steps(self, most: int) -> int:
        return self._draw(_integers(most), "steps")  # type: ignore[no-any-return]

    def _draw(self, strategy: st.SearchStrategy[Any], label: str) -> Any:
        """Generating, a choice is drawn from the test case's data itself: the same spans
        and choices as ``data.draw`` (so the same examples) without its bookkeeping for
        reports (a check that the draw left the ``random`` module alone, the draw's
        printed label): a tenth of a machine's CPU. The run Hypothesis reports draws
        through ``data.draw``, which prints each choice with its label."""
        if self._fast is None:
            return self._data.draw(strategy, label=label)
        return self._fast(strategy)


@functools.lru_cache(maxsize=64)
def _integers(most: int) -> st.SearchStrategy[int]:
    return st.integers(0, most)


@functools.lru_cache(maxsize=4096)
def _sampled(options: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    """One strategy per set of options: the machines offer the same ones again and again,
    and a new strategy is built and validated at each draw otherwise (the draws do not
    change: a strategy's draws depend on its options alone)."""
    return st.sampled_from(options)


class Odometer:
    """Enumerates every choice sequence, one run at a time.

    ``choose`` follows the current prefix and extends it with 0 beyond it; after a run,
    :meth:`advance` moves to the next sequence (rightmost digit first) and returns False
    once every sequence has been run. With ``prefix`` (a shard, :func:`odometer_shards`),
    the first choices are fixed: it enumerates the sequences that begin with them, which
    the odometer without a prefix meets one after the other, in the same order."""

    def __init__(self, depth: int, prefix: Sequence[int] = ()) -> None:
        self.depth = depth
        self.prefix = tuple(prefix)
        self._digits: list[int] = list(self.prefix)
        self._bounds: list[int] = [digit + 1 for digit in self.prefix]
        self._position = 0
        self.runs = 0

    def choose(self, options: Sequence[T], label: str) -> T:
        position = self._position
        self._position += 1
        if position < len(self._digits):
            self._bounds[position] = len(options)
            return options[min(self._digits[position], len(options) - 1)]
        self._digits.append(0)
        self._bounds.append(len(options))
        return options[0]

    def steps(self, most: int) -> int:
        return min(self.depth, most)

    def advance(self) -> bool:
        self.runs += 1
        fixed = len(self.prefix)
        digits, bounds = self._digits[: self._position], self._bounds[: self._position]
        while len(digits) > fixed:
            digits[-1] += 1
            if digits[-1] < bounds[-1]:
                break
            digits.pop()
            bounds.pop()
        self._digits, self._bounds, self._position = digits, bounds, 0
        return len(digits) > fixed


class Probe:
    """Follows ``prefix``, then records how many options the next choice has (a short
    run: how a shard of the odometer is split further); None if the run ends before."""

    def __init__(self, prefix: Sequence[int]) -> None:
        self.prefix = tuple(prefix)
        self.options: int | None = None
        self._position = 0

    def choose(self, options: Sequence[T], label: str) -> T:
        position = self._position
        self._position += 1
        if position == len(self.prefix):
            self.options = len(options)
        return options[self.prefix[position] if position < len(self.prefix) else 0]

    def steps(self, most: int) -> int:
        return min(len(self.prefix) + 1, most)  # a step makes one choice or more


class ReplayMismatch(Exception):
    """A replay file names an event the machine does not allow at that point."""


class ReplayChooser:
    def __init__(self, events: Sequence[str]) -> None:
        self._events = list(events)
        self._position = 0

    def choose(self, options: Sequence[T], label: str) -> T:
        wanted = self._events[self._position]
        if label == "kind":  # the machine asks for the event's kind first
            wanted = wanted.split("(", 1)[0]
        else:
            self._position += 1
        for option in options:
            if str(option) == wanted:
                return option
        shown = ", ".join(str(o) for o in options)
        raise ReplayMismatch(
            f"step {self._position}: {wanted} is not allowed here; allowed: {shown}"
        )

    def steps(self, most: int) -> int:
        return len(self._events)
