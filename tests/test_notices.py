"""What a server runtime decides for each thing its server tells it besides answers
(SPEC §5.1, §5.7, §11.18; LIVE-2, LIVE-3): a ``list_changed``, and each event of the
session's notification stream, in every state that changes the decision (connected or
not, the host closing, a fault already said). One row each: the inputs recorded, the
refreshes asked for, and what the server's status then says. ``ServerNotices`` is the
part of ``ServerRuntime`` that decides; here it reads a stand-in of the runtime's fields."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from mcpbind.impl.server.notices import ServerNotices
from mcpbind.model import texts

UNREACHABLE = texts.STREAM_UNREACHABLE.format(server="s")
EXPIRED = texts.STREAM_EXPIRED.format(server="s")


class Runtime(ServerNotices):
    def __init__(self, *, connected: bool, closing: bool, fault: Any, error: Any) -> None:
        self.name = "s"
        self.recorded: list[str] = []
        self.refreshes = 0
        recorder = SimpleNamespace(event=lambda kind, fields: self.recorded.append(kind))
        self._context = SimpleNamespace(recorder=recorder)  # type: ignore[assignment]
        self._session = object() if connected else None  # type: ignore[assignment]
        self._closing = closing
        self._hears = True
        self.stream_fault = fault
        self.last_error = error

    def request_refresh(self) -> Any:
        self.refreshes += 1


def after(event: str, **state: Any) -> tuple[list[str], int, Any, Any, bool]:
    fields = {"connected": True, "closing": False, "fault": None, "error": None, **state}
    runtime = Runtime(**fields)
    if event == "list_changed":
        runtime.on_list_changed()
    else:
        runtime.on_stream(event)  # type: ignore[arg-type]
    return (
        runtime.recorded,
        runtime.refreshes,
        runtime.stream_fault,
        runtime.last_error,
        runtime.hears_list_changed,
    )


@pytest.mark.parametrize(
    ("event", "state", "outcome"),
    [
        ("list_changed", {}, (["list_changed"], 1, None, None, True)),
        ("list_changed", {"connected": False}, ([], 0, None, None, True)),
        ("list_changed", {"closing": True}, ([], 0, None, None, True)),
        ("ended", {}, (["stream_ended"], 0, None, None, True)),
        ("ended", {"connected": False}, ([], 0, None, None, True)),
        ("ended", {"closing": True}, ([], 0, None, None, True)),
        ("relistened", {}, (["relisten"], 1, None, None, True)),
        ("relistened", {"connected": False}, ([], 0, None, None, True)),
        ("relistened", {"closing": True}, ([], 0, None, None, True)),
        ("unheard", {}, ([], 0, None, None, False)),
        ("unheard", {"connected": False}, ([], 0, None, None, False)),
        ("unreachable", {}, ([], 0, "unreachable", UNREACHABLE, True)),
        ("expired", {}, ([], 0, "expired", EXPIRED, True)),
        ("expired", {"fault": "unreachable", "error": "x"}, ([], 0, "expired", EXPIRED, True)),
        ("unreachable", {"connected": False, "error": "x"}, ([], 0, None, "x", True)),
        ("unreachable", {"closing": True}, ([], 0, None, None, True)),
        ("reachable", {"fault": "unreachable", "error": "x"}, ([], 0, None, None, True)),
        ("reachable", {"error": "an attempt failed"}, ([], 0, None, "an attempt failed", True)),
        (
            "reachable",
            {"connected": False, "fault": "expired", "error": "x"},
            ([], 0, "expired", "x", True),
        ),
    ],
)
def test_each_notice_is_decided_at_once_from_the_runtimes_state(event, state, outcome):
    assert after(event, **state) == outcome
