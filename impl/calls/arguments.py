"""A call's arguments (SPEC §8.1): a JSON object, or JSON text of one."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["parse_arguments"]


def parse_arguments(arguments: Any) -> dict[str, Any] | str:
    """A dict, or why the arguments are not a JSON object (SPEC §8.1)."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
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
