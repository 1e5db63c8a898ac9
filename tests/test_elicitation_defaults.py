"""SPEC §11.10 (SEP-1034): an accepted form carries the requested schema's ``default``
for each field the answer leaves out, one row per shape of answer and schema.

Only an ``accept`` is completed; a ``decline`` or ``cancel`` goes as it was given, and so
does an answer to a schema with no properties (mutation testing, issue 33: the guard's
``or`` made ``and`` turned a decline into an accept carrying the defaults, unseen)."""

from __future__ import annotations

from typing import Any

import pytest

from mcpbind.impl.calls.elicitation import with_defaults
from mcpbind.impl.values import ElicitationAnswer

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "anon"},
        "size": {"type": "integer", "default": 3},
        "tags": {"type": "array", "items": {"type": "string"}, "default": ["a"]},
        "plain": {"type": "string"},
    },
}

ACCEPT = ElicitationAnswer("accept", {})

# (id, the answer, the requested schema, what goes to the server; SAME: the answer itself)
SAME = object()
ROWS: list[tuple[str, ElicitationAnswer, Any, Any]] = [
    ("accept-empty", ACCEPT, SCHEMA, {"name": "anon", "size": 3, "tags": ["a"]}),
    (
        "accept-none",
        ElicitationAnswer("accept"),
        SCHEMA,
        {"name": "anon", "size": 3, "tags": ["a"]},
    ),
    (
        "accept-own-value-wins",
        ElicitationAnswer("accept", {"name": "Ada", "size": 0}),
        SCHEMA,
        {"name": "Ada", "size": 0, "tags": ["a"]},
    ),
    (
        "accept-all-given",
        ElicitationAnswer("accept", {"name": "Ada", "size": 1, "tags": []}),
        SCHEMA,
        SAME,
    ),
    ("decline", ElicitationAnswer("decline"), SCHEMA, SAME),
    ("cancel", ElicitationAnswer("cancel"), SCHEMA, SAME),
    ("no-properties", ACCEPT, {"type": "object"}, SAME),
    ("properties-empty", ACCEPT, {"type": "object", "properties": {}}, SAME),
    ("properties-not-a-map", ACCEPT, {"type": "object", "properties": ["name"]}, SAME),
    ("no-defaults", ACCEPT, {"properties": {"plain": {"type": "string"}}}, SAME),
    ("field-not-a-map", ACCEPT, {"properties": {"x": "string"}}, SAME),
    ("default-null", ACCEPT, {"properties": {"x": {"default": None}}}, SAME),
    ("default-an-object", ACCEPT, {"properties": {"x": {"default": {"a": 1}}}}, SAME),
    ("default-a-list-of-numbers", ACCEPT, {"properties": {"x": {"default": [1]}}}, SAME),
    ("default-false", ACCEPT, {"properties": {"x": {"default": False}}}, {"x": False}),
    ("default-zero", ACCEPT, {"properties": {"x": {"default": 0}}}, {"x": 0}),
    ("default-empty-text", ACCEPT, {"properties": {"x": {"default": ""}}}, {"x": ""}),
]


@pytest.mark.parametrize(
    ("given", "schema", "sent"),
    [pytest.param(given, schema, sent, id=name) for name, given, schema, sent in ROWS],
)
def test_an_accepted_form_is_completed_with_the_schemas_defaults_and_nothing_else(
    given, schema, sent
):
    answer = with_defaults(given, schema)
    if sent is SAME:
        assert answer is given
    else:
        assert answer == ElicitationAnswer("accept", sent)
