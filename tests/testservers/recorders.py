"""A recorder for the tests: what the host reported, in order (SPEC §3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcpbind.impl import NullRecorder


class Inputs(NullRecorder):
    """The inputs the host records (SPEC §3.1, their kinds) and the methods it sends."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def event(self, kind: Any, fields: Mapping[str, Any]) -> None:
        self.seen.append(kind)

    def sent(self, server: str, method: str, detail: str, call_id: str | None = None) -> None:
        self.seen.append(method)
