"""What the runtime did, reported as it happens (SPEC §3.2 outputs).

Production hosts use :class:`NullRecorder`. The property machines pass a recorder that
replays each report through the abstract model (trace refinement).
"""

from __future__ import annotations

from typing import Protocol

from .values import RefreshOutcome, ToolResult

__all__ = ["NullRecorder", "Recorder"]


class Recorder(Protocol):
    def published(self, generation: int, source: str, names: tuple[str, ...]) -> None: ...

    def refresh_outcome(self, outcome: RefreshOutcome) -> None: ...

    def result(self, result: ToolResult) -> None: ...

    def sent(self, server: str, method: str, detail: str) -> None: ...

    def refused(self, call_id: str, text: str) -> None: ...

    def late_dropped(self, call_id: str) -> None: ...


class NullRecorder:
    """Records nothing."""

    def published(self, generation: int, source: str, names: tuple[str, ...]) -> None:
        pass

    def refresh_outcome(self, outcome: RefreshOutcome) -> None:
        pass

    def result(self, result: ToolResult) -> None:
        pass

    def sent(self, server: str, method: str, detail: str) -> None:
        pass

    def refused(self, call_id: str, text: str) -> None:
        pass

    def late_dropped(self, call_id: str) -> None:
        pass
