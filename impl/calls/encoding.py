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

from ..catalog.structured import OutputSchema
from ..config.server import ServerConfig
from ..values import ContentItem, ImageItem
from ..wire.sdk import c_json_encoder

__all__ = [
    "APPROX_BYTES_PER_TOKEN",
    "ERROR_LINE",
    "OutputLimit",
    "OutputLimits",
    "encode_read",
    "encode_result",
    "truncate",
    "truncate_bytes",
    "wall_time_header",
]

ERROR_LINE = "The tool reported an error (isError: true)."
APPROX_BYTES_PER_TOKEN = 4
"""``output_token_limit`` is converted to bytes at this rate (SPEC §11.5; Codex's estimate)."""
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _unencodable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The C encoder ``_COMPACT`` makes anew on every call, made once: without the markers of
# a circular-reference check it keeps no state between calls (structured content is
# parsed JSON, never circular). None without the C accelerator: ``_COMPACT`` then.
_COMPACT_PARTS = c_json_encoder(_unencodable)


def compact_json(value: Any) -> str:
    """``value`` as compact JSON text, non-ASCII characters kept."""
    if _COMPACT_PARTS is None:
        return _COMPACT(value)
    return "".join(_COMPACT_PARTS(value, 0))


_NO_ITEMS: tuple[ContentItem, ...] = ()
_NO_CONTENT: list[Any] = []
"""An absent ``content`` reads as this list, which nothing changes."""


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
        default = OutputLimit("characters", characters) if characters else None  # 0: none
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


def _given(value: Any) -> str | None:
    """A field the server gave as a non-empty string; anything else reads as absent, so
    that no Python repr of a malformed field reaches the model (SPEC §8.8)."""
    return value if isinstance(value, str) and value else None


def _note(block: Mapping[str, Any], kind: str) -> str:
    data = block.get("data")
    size = len(data) if isinstance(data, str) else 0
    mime_type = _given(block.get("mimeType")) or "unknown type"
    return f"[{kind} omitted: {mime_type}, {size} base64 characters]"


def _resource_link(block: Mapping[str, Any]) -> str:
    """``[resource link: name "title" <uri> (mimeType): description]``, each part that the
    server gave; the model needs the name and description to decide whether to read it."""

    def given(key: str) -> str | None:
        return _given(block.get(key))

    parts = [part for part in (given("name"),) if part]
    title = given("title")
    if title is not None and title != given("name"):
        parts.append(json.dumps(title, ensure_ascii=False))
    parts.append(f"<{given('uri') or '?'}>")
    mime_type = given("mimeType")
    if mime_type is not None:
        parts.append(f"({mime_type})")
    text = " ".join(parts)
    description = given("description")
    return f"[resource link: {text}: {description}]" if description else f"[resource link: {text}]"


_MEDIA = frozenset({"image", "audio"})


def without_media(value: Any) -> Any:
    """``value`` with the base64 of every image or audio in it replaced by a note of its
    size (SPEC §8.8): a server that mirrors its content blocks into
    ``structuredContent`` (server-filesystem's ``read_media_file``) must not put the bytes
    of a picture into the model's text. Also an embedded resource's ``blob``.

    Copies only what changes: an answer with no media in it (the usual one) comes back as
    it is, a mapping that is not a ``dict`` as a ``dict``."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value  # the leaves, first: most of any answer
    if kind is dict or isinstance(value, Mapping):
        media = value.get("type") in _MEDIA and isinstance(value.get("data"), str)
        copy = None if kind is dict else dict(value)
        for key, item in value.items():
            if (media and key == "data") or (key == "blob" and isinstance(item, str)):
                new = f"[{len(item)} base64 characters omitted]"
            else:
                new = without_media(item)
            if new is not item:
                if copy is None:
                    copy = dict(value)
                copy[key] = new
        return value if copy is None else copy
    if kind is list or isinstance(value, list):
        changed = None
        for index, item in enumerate(value):
            new = without_media(item)
            if new is not item:
                if changed is None:
                    changed = list(value)
                changed[index] = new
        return value if changed is None else changed
    return value


def _serialises(block: Any, structured: Any) -> bool:
    """A text block that is only the unstructured fallback of ``structuredContent``: its
    JSON, or — for a structured object of one key, as ``MCPServer`` wraps a plain return
    value in ``{"result": value}`` — that one value (as text or as JSON)."""
    if not (type(block) is dict or isinstance(block, Mapping)) or block.get("type") != "text":
        return False
    text = block.get("text")
    if not isinstance(text, str):
        return False
    candidates = [structured]
    if (type(structured) is dict or isinstance(structured, Mapping)) and len(structured) == 1:
        candidates.extend(structured.values())
    if text in candidates:
        return True
    try:
        parsed = json.loads(text)
    except ValueError:
        return False
    return any(parsed == candidate for candidate in candidates)


def _lists_each_item(content: Any, structured: Any) -> bool:
    """SPEC §8.8: ``MCPServer`` answers a returned list as ``{"result": [...]}`` and one
    text block per item: when the content is exactly those blocks, in order, it is only
    the fallback of the structured content."""
    if not (type(structured) is dict or isinstance(structured, Mapping)) or len(structured) != 1:
        return False
    (value,) = structured.values()
    if not isinstance(value, list) or not value or not isinstance(content, list):
        return False
    if len(content) != len(value):
        return False
    return all(_serialises(block, {"": item}) for block, item in zip(content, value, strict=True))


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
        return _resource_link(block)
    if kind == "resource":
        resource = block.get("resource")
        if isinstance(resource, Mapping) and isinstance(resource.get("text"), str):
            return str(resource["text"])
        uri = _given(resource.get("uri")) if isinstance(resource, Mapping) else None
        return f"[resource omitted: {uri or '?'}]"
    return f"[{_given(kind) or 'unknown'} content omitted]"


def encode_read(raw: Any) -> Any:
    """A ``resources/read`` result as the content of a tool result (SPEC §11.20), so that
    one set of rules encodes both (§8.8): each text content a text block, each blob an
    image block when its type is an image (an item for an image-capable model, else a
    note), any other blob a note of its type and size. Malformed: returned as it is, and
    :func:`encode_result` says what is wrong with it."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("contents"), list):
        return {"content": None} if isinstance(raw, Mapping) else raw
    blocks: list[Any] = []
    for entry in raw["contents"]:
        if not isinstance(entry, Mapping):
            blocks.append(None)  # an unreadable block, said so
        elif isinstance(entry.get("text"), str):
            blocks.append({"type": "text", "text": entry["text"]})
        else:
            mime_type = _given(entry.get("mimeType"))
            blob = {"data": entry.get("blob"), "mimeType": mime_type}
            if mime_type is not None and mime_type.startswith("image/"):
                blocks.append({"type": "image", **blob})
            else:
                note = _note(blob, "blob").replace("]", f" of {_given(entry.get('uri')) or '?'}]")
                blocks.append({"type": "text", "text": note})
    return {"content": blocks}


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
    output: OutputSchema | None = None,
) -> tuple[texts.CallStatus, str, tuple[ContentItem, ...]]:
    """``(status, model-visible text, items)`` for the raw JSON of a ``tools/call`` result.

    ``items`` holds the images passed beside the text (only when ``image_capable``).
    ``output``: the tool's output schema; an answer that is not ``isError`` and whose
    ``structuredContent`` does not conform ends ``error`` (SPEC §8.8)."""
    is_mapping = type(raw) is dict or isinstance(raw, Mapping)
    content = raw.get("content", _NO_CONTENT) if is_mapping else None
    if not isinstance(content, list):
        problem = "content is not a list" if is_mapping else "not a JSON object"
        text = texts.MALFORMED_RESULT.format(server=server, tool=tool, problem=problem)
        return "failed", text, _NO_ITEMS
    result_type = raw.get("resultType", "complete")  # absent: complete (2026-07-28 §Result)
    if result_type != "complete":
        text = texts.UNKNOWN_RESULT_TYPE.format(server=server, tool=tool, result_type=result_type)
        return "failed", text, _NO_ITEMS
    is_error = raw.get("isError") is True
    structured = raw.get("structuredContent")
    if output is not None and not is_error:
        mismatch = output.mismatch(structured)
        if mismatch is not None:
            text = texts.STRUCTURED_MISMATCH.format(server=server, tool=tool, problem=mismatch)
            return "error", text, _NO_ITEMS
    items: list[ContentItem] | None = [] if image_capable else None
    if structured is not None:
        # The structured content, and every block that is not merely its JSON: other text,
        # every image (as an item or a note), resource links.
        parts = [compact_json(without_media(structured))]
        if content and not _lists_each_item(content, structured):
            parts.extend(_block(b, items) for b in content if not _serialises(b, structured))
        body = "\n".join(parts)
    else:
        body = "\n".join([_block(b, items) for b in content])
    header = wall_time_header(seconds)
    text = f"{header}\n{ERROR_LINE}\n{body}" if is_error else f"{header}\n{body}"
    if limit is not None:
        text = limit.apply(text)
    return ("error" if is_error else "ok"), text, tuple(items) if items else _NO_ITEMS
