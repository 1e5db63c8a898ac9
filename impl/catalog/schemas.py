"""Input schemas too long to show whole (SPEC §11.9): their size, and the shortened
schema a step shows instead, the full one kept for the call."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import attrs

from mcpbind.model import texts

from .registry import ToolSpec

__all__ = ["compact_json", "schema_bytes", "shorten_schema", "shorten_spec"]


def _as_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


compact_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_as_json).encode

# --- schema shortening ------------------------------------------------------------------

# Keywords that only annotate (they never reject a value).
_ANNOTATIONS = frozenset({"description", "title", "examples", "$comment"})
# Keywords whose value is a map of subschemas, a list of them, or one subschema.
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_ONE = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
# What a top-level property keeps at level 2 besides its skeletal children.
_SHALLOW = ("type", "enum", "const", "format")


def schema_bytes(schema: Mapping[str, Any]) -> int:
    """Length in bytes of the compact UTF-8 JSON of ``schema`` (what the limit measures)."""
    return len(compact_json(schema).encode("utf-8", "surrogatepass"))


def _without_annotations(schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return schema  # a boolean subschema, kept as it is
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {name: _without_annotations(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_without_annotations(sub) for sub in value]
        elif key in _SCHEMA_ONE:
            out[key] = (
                [_without_annotations(sub) for sub in value]
                if isinstance(value, list)
                else _without_annotations(value)
            )
        else:
            out[key] = value
    return out


def _skeleton(schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return schema
    return {"type": schema["type"]} if "type" in schema else {}


def _shallow(schema: Any) -> Any:
    """A top-level property at level 2: its own type, enum, const, format and required; its
    ``items``, ``properties``, ``anyOf`` and ``allOf`` children reduced to their types."""
    if not isinstance(schema, Mapping):
        return schema
    out = {key: schema[key] for key in _SHALLOW if key in schema}
    items = schema.get("items")
    if isinstance(items, Mapping):
        out["items"] = _skeleton(items)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {name: _skeleton(sub) for name, sub in properties.items()}
    for key in ("anyOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            out[key] = [_skeleton(sub) for sub in branches]
    required = schema.get("required")
    if isinstance(required, list):
        out["required"] = list(required)
    return out


def _object(properties: dict[str, Any] | None, schema: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object"}
    if properties is not None:
        out["properties"] = properties
    required = schema.get("required")
    if isinstance(required, list):
        out["required"] = list(required)
    return out


def _levels(schema: Mapping[str, Any]) -> Iterable[dict[str, Any]]:
    properties = schema.get("properties")
    named = properties if isinstance(properties, Mapping) else None
    stripped = _without_annotations(schema)
    yield {"type": "object", **{k: v for k, v in stripped.items() if k != "type"}}
    yield _object(None if named is None else {n: _shallow(s) for n, s in named.items()}, schema)
    yield _object(None if named is None else {key: {} for key in named}, schema)


def shorten_schema(schema: Mapping[str, Any], limit: int) -> Mapping[str, Any] | None:
    """A shortened view of ``schema`` when its compact JSON is longer than ``limit`` bytes,
    else None (SPEC §11.9). The first of these that fits is returned, else the last:

    1. every annotation keyword (``description``, ``title``, ``examples``, ``$comment``)
       removed at every depth;
    2. ``{"type": "object", "properties": ..., "required": ...}`` where each top-level
       property keeps its ``type``, ``enum``, ``const``, ``format`` and ``required``, and
       its ``items``, ``properties``, ``anyOf`` and ``allOf`` children only their ``type``;
    3. the top-level property names (each ``{}``) and ``required``;
    4. ``{"type": "object"}``.

    Each level only removes constraints, so every value the full schema accepts, the
    shortened one accepts too; the server still checks the full schema."""
    try:
        if schema_bytes(schema) <= limit:
            return None
        for candidate in _levels(schema):
            if schema_bytes(candidate) <= limit:
                return MappingProxyType(candidate)
    except RecursionError:  # nested deeper than Python recurses: nothing of it is kept
        pass
    return MappingProxyType({"type": "object"})


def shorten_spec(spec: ToolSpec, limit: int | None) -> ToolSpec:
    """``spec`` itself when its schema fits ``limit``, else a spec showing the shortened
    schema, with the note ``SCHEMA_SHORTENED`` ending its description and the full
    schema kept on ``shortened_from``."""
    if limit is None:
        return spec
    short = shorten_schema(spec.input_schema, limit)
    if short is None:
        return spec
    try:
        full: int | str = schema_bytes(spec.input_schema)
    except RecursionError:
        full = f"more than {limit}"
    note = texts.SCHEMA_SHORTENED.format(full=full, shown=schema_bytes(short))
    description = f"{spec.description}\n\n{note}" if spec.description else note
    return attrs.evolve(
        spec, description=description, input_schema=short, shortened_from=spec.input_schema
    )
