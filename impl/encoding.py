"""Model-visible text of a tool result (SPEC §8.8).

A server's answer becomes one text: a ``Wall time`` header, an explicit line when the
server said ``isError``, then the body. The body is ``structuredContent`` as compact JSON
when present (the text blocks of such a result are its unstructured fallback), otherwise
the text blocks joined by newlines; other content blocks become a short note.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcpbind.model import texts

__all__ = ["ERROR_LINE", "encode_result", "wall_time_header"]

ERROR_LINE = "The tool reported an error (isError: true)."
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def wall_time_header(seconds: float) -> str:
    return f"Wall time: {seconds:.4f} seconds"


def _block(block: Any) -> str:
    if not isinstance(block, Mapping):
        return "[unreadable content block]"
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    if kind in ("image", "audio"):
        data = block.get("data")
        size = len(data) if isinstance(data, str) else 0
        return (
            f"[{kind} omitted: {block.get('mimeType', 'unknown type')}, {size} base64 characters]"
        )
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
    marker = f"\n[mcpbind: output truncated: {len(text)} characters, limit {limit}]"
    return text[: max(0, limit - len(marker))] + marker


def encode_result(
    raw: Any, seconds: float, *, server: str, tool: str, limit: int | None = None
) -> tuple[texts.CallStatus, str]:
    """``(status, model-visible text)`` for the raw JSON of a ``tools/call`` result."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("content", []), list):
        problem = "content is not a list" if isinstance(raw, Mapping) else "not a JSON object"
        return "failed", texts.MALFORMED_RESULT.format(server=server, tool=tool, problem=problem)
    is_error = raw.get("isError") is True
    structured = raw.get("structuredContent")
    if structured is not None:
        body = _COMPACT(structured)
    else:
        body = "\n".join(_block(b) for b in raw.get("content", []))
    lines = [wall_time_header(seconds)]
    if is_error:
        lines.append(ERROR_LINE)
    lines.append(body)
    return ("error" if is_error else "ok"), truncate("\n".join(lines), limit)
