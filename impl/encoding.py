"""Model-visible text of a tool result (SPEC §8.8, §11.5).

A server's answer becomes one text: a ``Wall time`` header, an explicit line when the
server said ``isError``, then the body. The body is ``structuredContent`` as compact JSON
when present (the text blocks of such a result are its unstructured fallback), otherwise
the text blocks joined by newlines; other content blocks become a short note. For an
image-capable model an image block becomes a :class:`ImageItem` beside the text, and a
placeholder line in the text names it.

The text is then cut to the call's :class:`OutputLimit` (characters, or UTF-8 bytes)
with a marker that says how much was cut; items are not counted against the limit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from mcpbind.model import texts

from .server_config import ServerConfig
from .values import ContentItem, ImageItem

__all__ = [
    "APPROX_BYTES_PER_TOKEN",
    "ERROR_LINE",
    "OutputLimit",
    "OutputLimits",
    "encode_result",
    "truncate",
    "truncate_bytes",
    "wall_time_header",
]

ERROR_LINE = "The tool reported an error (isError: true)."
APPROX_BYTES_PER_TOKEN = 4
"""``output_token_limit`` is converted to bytes at this rate (SPEC §11.5; Codex's estimate)."""
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_NO_ITEMS: tuple[ContentItem, ...] = ()


@attrs.frozen
class OutputLimit:
    """How much model-visible text one call may produce. Shared, built once per tool."""

    unit: Literal["characters", "bytes"]
    size: int

    def apply(self, text: str) -> str:
        if self.unit == "bytes":
            return truncate_bytes(text, self.size)
        return truncate(text, self.size)


@attrs.frozen
class OutputLimits:
    """Each tool's limit, decided once for the servers a host runs (SPEC §11.5): a tool's
    ``output_byte_limit`` wins, then its ``output_token_limit`` (4 bytes a token), then
    the host's ``output_limit`` in characters."""

    default: OutputLimit | None
    by_tool: Mapping[str, Mapping[str, OutputLimit]]
    """server -> raw tool -> limit, for the tools that set their own."""

    @classmethod
    def build(cls, characters: int | None, servers: Mapping[str, ServerConfig]) -> OutputLimits:
        default = None if characters is None else OutputLimit("characters", characters)
        by_tool: dict[str, dict[str, OutputLimit]] = {}
        for name, server in servers.items():
            limits = {}
            for tool, settings in server.tools.items():
                if settings.output_byte_limit is not None:
                    limits[tool] = OutputLimit("bytes", settings.output_byte_limit)
                elif settings.output_token_limit is not None:
                    size = settings.output_token_limit * APPROX_BYTES_PER_TOKEN
                    limits[tool] = OutputLimit("bytes", size)
            if limits:
                by_tool[name] = limits
        return cls(default, by_tool)

    def of(self, server: str, tool: str) -> OutputLimit | None:
        """The limit of one tool; no allocation per call."""
        limits = self.by_tool.get(server)
        if limits is None:
            return self.default
        return limits.get(tool, self.default)


def wall_time_header(seconds: float) -> str:
    return f"Wall time: {seconds:.4f} seconds"


def _note(block: Mapping[str, Any], kind: str) -> str:
    data = block.get("data")
    size = len(data) if isinstance(data, str) else 0
    return f"[{kind} omitted: {block.get('mimeType', 'unknown type')}, {size} base64 characters]"


def _block(block: Any, items: list[ContentItem] | None) -> str:
    if not isinstance(block, Mapping):
        return "[unreadable content block]"
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    if kind == "image":
        data, mime_type = block.get("data"), block.get("mimeType")
        if items is not None and isinstance(data, str) and isinstance(mime_type, str):
            items.append(ImageItem(mime_type, data))
            return texts.IMAGE_ATTACHED.format(index=len(items), mime_type=mime_type)
        return _note(block, kind)
    if kind == "audio":
        return _note(block, kind)
    if kind == "resource_link":
        return f"[resource link: {block.get('uri', '?')}]"
    if kind == "resource":
        resource = block.get("resource")
        if isinstance(resource, Mapping) and isinstance(resource.get("text"), str):
            return str(resource["text"])
        uri = resource.get("uri", "?") if isinstance(resource, Mapping) else "?"
        return f"[resource omitted: {uri}]"
    return f"[{kind or 'unknown'} content omitted]"


def truncate(text: str, limit: int | None) -> str:
    """Cut ``text`` to ``limit`` characters with a marker saying how much was cut."""
    if limit is None or len(text) <= limit:
        return text
    marker = "\n" + texts.TRUNCATED_CHARACTERS.format(total=len(text), limit=limit)
    return text[: max(0, limit - len(marker))] + marker


def truncate_bytes(text: str, limit: int) -> str:
    """Cut ``text`` to at most ``limit`` UTF-8 bytes, marker included, on a character
    boundary (never half a multi-byte character)."""
    if len(text) * 4 <= limit:  # no character takes more than 4 bytes: nothing to cut
        return text
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    marker = "\n" + texts.TRUNCATED_BYTES.format(total=len(encoded), limit=limit)
    keep = max(0, limit - len(marker.encode()))
    # A cut inside a character leaves an incomplete sequence at the end only: drop it.
    return encoded[:keep].decode("utf-8", errors="ignore") + marker


def encode_result(
    raw: Any,
    seconds: float,
    *,
    server: str,
    tool: str,
    limit: OutputLimit | None = None,
    image_capable: bool = False,
) -> tuple[texts.CallStatus, str, tuple[ContentItem, ...]]:
    """``(status, model-visible text, items)`` for the raw JSON of a ``tools/call`` result.

    ``items`` holds the images passed beside the text (only when ``image_capable``)."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("content", []), list):
        problem = "content is not a list" if isinstance(raw, Mapping) else "not a JSON object"
        text = texts.MALFORMED_RESULT.format(server=server, tool=tool, problem=problem)
        return "failed", text, _NO_ITEMS
    is_error = raw.get("isError") is True
    structured = raw.get("structuredContent")
    items: list[ContentItem] | None = [] if image_capable else None
    if structured is not None:
        body = _COMPACT(structured)
    else:
        body = "\n".join(_block(b, items) for b in raw.get("content", []))
    lines = [wall_time_header(seconds)]
    if is_error:
        lines.append(ERROR_LINE)
    lines.append(body)
    text = "\n".join(lines)
    if limit is not None:
        text = limit.apply(text)
    return ("error" if is_error else "ok"), text, tuple(items) if items else _NO_ITEMS
