"""A call's arguments (SPEC §8.1): a JSON object, or JSON text of one."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["parse_arguments"]

_SCALARS = (str, int, float, bool, type(None))


class _NotJson(Exception):
    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self.path: list[str] = []
        """Where, innermost first: each enclosing key or index adds its step on the way
        out, so that a value that is plain JSON (every call's) builds no path."""

    def at(self, where: str) -> str:
        return f"{self.what} at {where}{''.join(reversed(self.path))}, which JSON cannot carry"


def _plain(value: Any) -> Any:
    """``value`` as plain JSON values: any mapping with string keys becomes a dict, a list
    or tuple a list (what mcpbind hands out, e.g. a frozen schema, may go back in);
    anything else that JSON cannot carry raises :class:`_NotJson`."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotJson(f"{type(key).__name__} key {key!r}")
            try:
                out[key] = _plain(item)
            except _NotJson as error:
                error.path.append(f".{key}")
                raise
        return out
    if isinstance(value, list | tuple):
        items = []
        for index, item in enumerate(value):
            try:
                items.append(_plain(item))
            except _NotJson as error:
                error.path.append(f"[{index}]")
                raise
        return items
    raise _NotJson(type(value).__name__)


def parse_arguments(arguments: Any) -> dict[str, Any] | str:
    """A dict of plain JSON values, or why the arguments are not a JSON object
    (SPEC §8.1)."""
    if isinstance(arguments, Mapping):
        try:
            plain: dict[str, Any] = _plain(arguments)
        except _NotJson as error:
            return error.at("arguments")
        return plain
    if isinstance(arguments, str | bytes):
        try:
            text = arguments.decode() if isinstance(arguments, bytes) else arguments
            if not text.strip():
                return {}
            value = json.loads(text)
        except json.JSONDecodeError as error:
            return f"not valid JSON ({error.msg} at position {error.pos})"
        except ValueError as error:  # bytes that are not UTF-8
            return f"not valid JSON ({error})"
        if isinstance(value, dict):
            return value
        return f"JSON {type(value).__name__} where an object is required"
    if arguments is None:
        return {}
    return f"{type(arguments).__name__} where an object is required"
