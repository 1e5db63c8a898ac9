"""Values every wing of the runtime hands on, and the host's callers see: a call's one
result, a refresh outcome, what a server asks the user, progress."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

import attrs

from mcpbind.model import texts
from mcpbind.model.values import Exclusion

__all__ = [
    "ContentItem",
    "ElicitationAnswer",
    "ElicitationRequest",
    "ImageItem",
    "Progress",
    "RefreshOutcome",
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
