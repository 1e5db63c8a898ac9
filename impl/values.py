"""Values the runtime hands to its callers: results, refresh outcomes, step snapshots."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

import attrs

from mcpbind.model import texts
from mcpbind.model.values import Exclusion

from .exposure import Exposer, Exposure
from .registry import Binding, RegistryState, ToolSpec

__all__ = [
    "ContentItem",
    "ElicitationAnswer",
    "ElicitationRequest",
    "HostStatistics",
    "ImageItem",
    "Phase",
    "Progress",
    "RefreshOutcome",
    "ServerStatistics",
    "ServerStatus",
    "StepSnapshot",
    "TaskHandle",
    "TaskPoll",
    "TaskState",
    "ToolResult",
]


@attrs.frozen
class ImageItem:
    """An image a server returned, passed to an image-capable model beside the text
    (SPEC §8.8). ``data`` is the base64 text exactly as the server sent it."""

    mime_type: str
    data: str = attrs.field(repr=lambda data: f"<{len(data)} base64 characters>")


ContentItem: TypeAlias = ImageItem
"""What a result may carry beside its text (today: images)."""


@attrs.frozen
class ToolResult:
    """The one terminal result of a call (INV-4). ``output`` is what the model sees;
    ``items`` are the images passed with it (only with ``HostConfig(image_capable=True)``;
    ``output`` names each one by its 1-based position)."""

    call_id: str
    status: texts.CallStatus
    output: str
    items: tuple[ContentItem, ...] = ()


def _frozen(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


def _frozen_or_none(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else _frozen(value)


@attrs.frozen
class ElicitationRequest:
    """A server asks the user for input while one of its calls runs (SPEC §11.10)."""

    server: str
    message: str
    requested_schema: Mapping[str, Any] = attrs.field(converter=_frozen)
    """The JSON Schema of the answer: an object of primitive properties (none: a
    plain confirmation). Empty for a URL request."""
    mode: Literal["form", "url"] = "form"
    """``url``: the server asks the user to open ``url`` (an out-of-band step such as a
    sign-in or a payment); only with ``HostConfig(elicitation_url=True)`` (SPEC §11.10).
    Show the URL and let the user open it; ``accept`` means they agreed to, and carries
    no content."""
    url: str | None = None
    elicitation_id: str | None = None
    """The server's opaque id of a URL request (2025-11-25 connections)."""


@attrs.frozen
class Progress:
    """One progress notification of a call in flight (SPEC §8.10)."""

    call_id: str
    server: str
    progress: float
    total: float | None = None
    """What ``progress`` counts up to, when the server knows it."""
    message: str | None = None


@attrs.frozen
class ElicitationAnswer:
    """The user's answer: ``accept`` with ``content`` matching the requested schema,
    ``decline`` or ``cancel`` (no content)."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] | None = attrs.field(default=None, converter=_frozen_or_none)


@attrs.frozen
class RefreshOutcome:
    """How one refresh ended (SPEC §5.6)."""

    server: str
    status: texts.OutcomeStatus
    generation: int
    kind: texts.RejectKind | None = None
    reason: str | None = None
    excluded: tuple[Exclusion, ...] = ()
    """``installed`` and ``unchanged``: the valid tools left out of the catalog, each with
    its kind and text (SPEC §5.4), in listing order."""


def _exposure_of(snapshot: StepSnapshot) -> Exposure:
    return Exposer(None, None).expose(snapshot.state)


@attrs.frozen(eq=False)
class StepSnapshot:
    """One sampling step: its plan (``specs``) and its router (``binding``) are the one
    exposure computed from one registry state, which nothing changes afterwards (INV-2).
    Building one is O(1) amortised (the host caches the exposure, SPEC §11.9)."""

    step: int
    state: RegistryState
    exposure: Exposure = attrs.field(
        default=attrs.Factory(_exposure_of, takes_self=True), repr=False
    )
    """What the step shows; by default every tool of ``state``, unshortened."""

    @property
    def generation(self) -> int:
        return self.state.generation

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        """The tool specs shown to the model, sorted by name."""
        return self.exposure.specs

    @property
    def names(self) -> Mapping[str, Binding]:
        """The router's table: every name this step accepts."""
        return self.exposure.by_name

    @property
    def deferred(self) -> int:
        """MCP tools of the registry state this step does not show; ``tool_search`` finds
        them (SPEC §11.9). 0 when the step shows every tool."""
        return self.exposure.deferred

    def binding(self, name: str) -> Binding | None:
        """What ``name`` executes in this step, or None when the step has no such tool."""
        return self.exposure.by_name.get(name)

    def full_input_schema(self, name: str) -> Mapping[str, Any] | None:
        """The full input schema of ``name`` as its server listed it, even when the step
        shows a shortened one (SPEC §11.9); None when the step has no such tool."""
        binding = self.exposure.by_name.get(name)
        return None if binding is None else binding.spec.full_input_schema


@attrs.frozen
class HostStatistics:
    generation: int
    connected: Mapping[str, bool]
    calls_in_flight: int
    results: Mapping[str, int]
    """Terminal results so far, by status."""
    late_dropped: int
    """Answers that arrived after their call had ended (dropped, INV-4)."""
    progress: int = 0
    """Progress notifications received for pending calls (SPEC §8.10)."""
    late_progress: int = 0
    """Progress notifications that arrived after their call had ended (dropped)."""


@attrs.frozen
class ServerStatus:
    """One server as ``mcpbind catalog`` shows it."""

    name: str
    connected: bool
    tools: int
    """Tools of this server in the current registry state."""
    error: str | None
    """Why its last connection attempt or refresh failed, if it did."""
    excluded: tuple[Exclusion, ...] = ()
    """The tools its catalog leaves out, with why (SPEC §5.4)."""


Phase = Literal["connecting", "listed", "dormant", "starting", "running", "failed"]
"""Where a server's first start is (``mcpbind.impl.runtime``, SPEC §11.3, §11.12)."""


@attrs.frozen
class ServerStatistics:
    name: str
    phase: Phase
    connected: bool
    sessions: int
    """Connections made so far."""
    refreshing: bool
    """A refresh is in flight."""
    refresh_queued: bool
    waiting_for_start: int
    """Calls waiting for a lazy start to settle (INV-11)."""
    outcomes: Mapping[str, int]
    """Refresh outcomes so far, by status."""
    last_error: str | None
    stderr: tuple[str, ...] = ()
    """The last lines a stdio server wrote to its stderr (logged on
    ``mcpbind.server.<name>``)."""


TaskState = Literal["working", "input_required", "completed", "failed", "cancelled"]
"""The statuses of a task (SPEC §8.12); the last three are terminal."""


@attrs.frozen
class TaskHandle:
    """A ``tools/call`` the server answered with a task."""

    task_id: str
    poll_interval: float | None = None
    """Seconds the server asks the host to wait between polls (None: it names none)."""
    status: TaskState = "working"


@attrs.frozen
class TaskPoll:
    """What one poll of a task found. Input the task asked for has been answered
    through the elicitation policy before the poll returns (its status then says so)."""

    status: TaskState
    poll_interval: float | None = None
    result: Any = None
    """``completed``: the raw ``CallToolResult`` of the call."""
    message: str | None = None
    """``failed``/``cancelled``: the server's reason, when it gave one."""
