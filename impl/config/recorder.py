"""What the runtime did, reported as it happens (SPEC §3.2 outputs), and what happened to
it (SPEC §3.1 inputs, through :meth:`Recorder.event`).

Production hosts use :class:`NullRecorder`. The property machines pass a recorder that
replays each report through the abstract model (trace refinement); a
:class:`~mcpbind.impl.trace.TraceRecorder` writes both to a trace file (SPEC §14).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from mcpbind.model.values import EventKind

from ..values import RefreshOutcome, ToolResult

__all__ = ["NullRecorder", "Recorder", "records"]


class Recorder(Protocol):
    def published(self, generation: int, source: str, names: tuple[str, ...]) -> None: ...

    def refresh_outcome(self, outcome: RefreshOutcome) -> None: ...

    def result(self, result: ToolResult) -> None: ...

    def sent(self, server: str, method: str, detail: str, call_id: str | None = None) -> None:
        """``call_id``: the call a ``tools/call`` is for (a cancellation's detail is it)."""

    def refused(self, call_id: str, text: str) -> None: ...

    def late_dropped(self, call_id: str) -> None: ...

    def event(self, kind: EventKind, fields: Mapping[str, Any]) -> None:
        """An input of SPEC §3.1 (``call``, ``cancel``, ``disconnect``, ...) as the host met
        it, with the fields the trace format gives it (SPEC §14.1)."""


class NullRecorder:
    """Records nothing."""

    def published(self, generation: int, source: str, names: tuple[str, ...]) -> None:
        pass

    def refresh_outcome(self, outcome: RefreshOutcome) -> None:
        pass

    def result(self, result: ToolResult) -> None:
        pass

    def sent(self, server: str, method: str, detail: str, call_id: str | None = None) -> None:
        pass

    def refused(self, call_id: str, text: str) -> None:
        pass

    def late_dropped(self, call_id: str) -> None:
        pass

    def event(self, kind: EventKind, fields: Mapping[str, Any]) -> None:
        pass


def records(recorder: Recorder) -> bool:
    """Whether ``recorder`` may keep what it is told: a plain :class:`NullRecorder` drops
    everything, and so does a recorder whose ``keeps`` attribute is False (one in front of
    another that keeps nothing, and that needs none of the events this gates); any other
    may keep it. The one test by which a hot path skips making the fields of its events
    (a call's, a step's, a listing's): callers ask it when they are given the recorder,
    and report those events only when it is True."""
    return type(recorder) is not NullRecorder and bool(getattr(recorder, "keeps", True))
