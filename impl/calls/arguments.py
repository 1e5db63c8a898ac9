"""A call's arguments (SPEC §8.1): a JSON object, or JSON text of one."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["parse_arguments"]

_SCALARS = (str, int, float, bool, type(None))


class _NotJson(Exception):
    def __init__(self, what: str, where: str) -> None:
        super().__init__(f"{what} at {where}, which JSON cannot carry")


def _plain(value: Any, where: str) -> Any:
    """``value`` as plain JSON values: any mapping with string keys becomes a dict, a list
    or tuple a list (what mcpbind hands out, e.g. a frozen schema, may go back in);
    anything else that JSON cannot carry raises :class:`_NotJson`."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotJson(f"{type(key).__name__} key {key!r}", where)
            out[key] = _plain(item, f"{where}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [_plain(item, f"{where}[{index}]") for index, item in enumerate(value)]
    raise _NotJson(type(value).__name__, where)


def parse_arguments(arguments: Any) -> dict[str, Any] | str:
    """A dict of plain JSON values, or why the arguments are not a JSON object
    (SPEC §8.1)."""
    if isinstance(arguments, Mapping):
        try:
            plain: dict[str, Any] = _plain(arguments, "arguments")
        except _NotJson as error:
            return str(error)
        return plain
    if isinstance(arguments, str | bytes):
        text = arguments.decode() if isinstance(arguments, bytes) else arguments
        if not text.strip():
            return {}
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            return f"not valid JSON ({error.msg} at position {error.pos})"
        except ValueError as error:
            return f"not valid JSON ({error})"
        if isinstance(value, dict):
            return value
        return f"JSON {type(value).__name__} where an object is required"
    if arguments is None:
        return {}
    return f"{type(arguments).__name__} where an object is required"
