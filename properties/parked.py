"""What a scripted server parks (SPEC §12.1): each request the runtime makes waits here
until a rule of the machine releases it; and the JSON a server lists for a model tool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import attrs

from mcpbind.impl.wire.seam import OnWireProgress
from mcpbind.model.values import ToolDef

__all__ = ["CALL_ID", "DESCRIPTIONS", "PendingCall", "PendingList", "PendingPoll", "raw_tool"]

CALL_ID = "call_id"
"""The argument through which the machine tells parked calls apart."""

DESCRIPTIONS = {
    "search": "Search issues and pull requests by keyword",
    "read": "Read a file from the repository",
    "write": "Write a file to the repository",
    "admin": "Change the repository settings",
    "research": "Research a topic in the background",
}
"""What a scripted server lists as a tool's description, by raw name (none for others):
words for ``tool_search`` to find (SPEC §11.9). The same for every version, so a listing
changes only when its tools do."""


def raw_tool(tool: ToolDef) -> dict[str, Any]:
    """The JSON a server would list for a model tool."""
    entry: dict[str, Any] = {
        "name": tool.name,
        "inputSchema": {"type": "object"} if tool.valid else "not an object",
    }
    if tool.name in DESCRIPTIONS:
        entry["description"] = DESCRIPTIONS[tool.name]
    if tool.read_only:
        entry["annotations"] = {"readOnlyHint": True}
    if not tool.visible:
        entry["_meta"] = {"ui": {"visibility": ["app"]}}
    if tool.excluded == "task_required":
        entry["execution"] = {"taskSupport": "required"}
    elif tool.excluded is not None:
        raise ValueError(f"the scripted transport is not HTTP: it cannot list {tool.excluded}")
    return entry


@attrs.define(eq=False)
class _Parked:
    released: anyio.Event = attrs.field(factory=anyio.Event)
    value: Any = None
    error: BaseException | None = None

    def release(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value, self.error = value, error
        self.released.set()

    async def wait(self) -> Any:
        await self.released.wait()
        if self.error is not None:
            raise self.error
        return self.value


@attrs.define(eq=False)
class PendingList(_Parked):
    cursor: str | None = None
    version: int = 0
    page: int = 0


@attrs.define(eq=False)
class PendingPoll(_Parked):
    """A ``tasks/get`` of a call that runs as a task (SPEC §8.12), parked until the task
    ends (the machine never answers ``working``: it would change nothing)."""

    call_id: str = ""


@attrs.define(eq=False)
class PendingCall(_Parked):
    call_id: str = ""
    name: str = ""
    on_late: Callable[[], None] = lambda: None
    on_progress: OnWireProgress | None = None
    progressed: int = 0
