"""Level one of a shortened schema (SPEC §11.9), one row per kind of keyword: what it
keeps and what it strips, exactly.

Annotations (``description``, ``title``, ``examples``, ``$comment``) go at every depth of
*subschemas*, and only there: a keyword whose value is a map, a list or one subschema is
walked; every other keyword's value (``enum``, ``const``, ``default``, ``required``,
``type``, lists among them) is data, kept whole even when an object in it has keys named
like annotations. Mutation testing (issue 33) found ``schemas.py``'s list branch taking
any list for a list of subschemas unnoticed: each row here pins the whole level-one
schema, so a keyword walked that should not be (or the reverse) fails its row."""

from __future__ import annotations

from typing import Any

import pytest

from mcpbind.impl.catalog.schemas import schema_bytes, shorten_schema

NOTE = {"title": "T", "description": "d", "examples": ["e"], "$comment": "c"}
"""Every annotation keyword, with a value."""
DATA = {"title": "kept", "description": "kept: data, not a note"}
"""An object given as a value: its keys are not annotations."""
ONE_SUBSCHEMA_MORE = (
    "additionalItems",
    "additionalProperties",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
"""The other keywords whose value is one subschema."""


# (id, one property's schema, what level one keeps of it)
ROWS: list[tuple[str, Any, Any]] = [
    ("annotations", {"type": "string", **NOTE}, {"type": "string"}),
    ("boolean-subschema", True, True),
    ("enum-of-objects", {"enum": [DATA, 1]}, {"enum": [DATA, 1]}),
    ("const-list", {"const": [DATA]}, {"const": [DATA]}),
    ("default-list", {"type": "array", "default": [DATA]}, {"type": "array", "default": [DATA]}),
    (
        "required-list",
        {"type": "object", "required": ["title"]},
        {"type": "object", "required": ["title"]},
    ),
    ("type-list", {"type": ["string", "null"], **NOTE}, {"type": ["string", "null"]}),
    (
        "properties-map",
        {"properties": {"title": {"type": "string", **NOTE}}, **NOTE},
        {"properties": {"title": {"type": "string"}}},
    ),
    (
        "defs-map",
        {"$defs": {"a": {"type": "integer", **NOTE}}, "definitions": {"b": {**NOTE}}},
        {"$defs": {"a": {"type": "integer"}}, "definitions": {"b": {}}},
    ),
    (
        "pattern-and-dependent-maps",
        {
            "patternProperties": {"^x": {**NOTE}},
            "dependentSchemas": {"y": {**NOTE, "type": "object"}},
        },
        {"patternProperties": {"^x": {}}, "dependentSchemas": {"y": {"type": "object"}}},
    ),
    ("properties-not-a-map", {"properties": [DATA]}, {"properties": [DATA]}),
    (
        "schema-lists",
        {
            "allOf": [{**NOTE, "type": "object"}],
            "anyOf": [{**NOTE}, True],
            "oneOf": [{"const": DATA, **NOTE}],
            "prefixItems": [{**NOTE, "type": "string"}],
        },
        {
            "allOf": [{"type": "object"}],
            "anyOf": [{}, True],
            "oneOf": [{"const": DATA}],
            "prefixItems": [{"type": "string"}],
        },
    ),
    ("schema-list-not-a-list", {"allOf": DATA}, {"allOf": DATA}),
    (
        "one-subschema",
        {key: {**NOTE, "type": "string"} for key in ("items", "contains", "not", "if", "then")},
        {key: {"type": "string"} for key in ("items", "contains", "not", "if", "then")},
    ),
    (
        "one-subschema-more",
        {key: {**NOTE} for key in ONE_SUBSCHEMA_MORE},
        {key: {} for key in ONE_SUBSCHEMA_MORE},
    ),
    (
        "items-as-a-list",  # draft-07's tuple form: each one a subschema
        {"items": [{**NOTE, "type": "string"}, False]},
        {"items": [{"type": "string"}, False]},
    ),
    ("nested", {"items": {"items": {"items": {**NOTE}}}}, {"items": {"items": {"items": {}}}}),
]


@pytest.mark.parametrize(
    ("given", "kept"), [pytest.param(given, kept, id=name) for name, given, kept in ROWS]
)
def test_level_one_strips_annotations_of_subschemas_and_keeps_every_value(given, kept):
    schema = {"type": "object", "description": "x" * 400, "properties": {"p": given}}
    level_one = {"type": "object", "properties": {"p": kept}}
    assert shorten_schema(schema, schema_bytes(level_one)) == level_one
