"""The fast paths of a tool's ``outputSchema`` (SPEC §5.3) and where they hand over to
jsonschema: which schemas :func:`plainly_valid` calls valid without it, which
:func:`compile_check` compiles (None: jsonschema decides), and the exact reason a schema
is refused. Each row is one schema; ``tests/test_hot_path.py`` holds the verdicts to
jsonschema's on generated ones."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from mcpbind.impl.catalog.structured import (
    OutputSchema,
    compile_check,
    output_schema,
    plainly_valid,
    schema_problem,
)

OBJ = {"type": "object"}

PLAIN = [
    # schema, plainly valid (False: jsonschema decides)
    (True, True),
    (False, True),
    ({}, True),
    ({"title": "t", "description": "d", "$comment": "c", "format": "f"}, True),
    ({"title": 3}, False),
    ({"readOnly": True, "writeOnly": False, "deprecated": True}, True),
    ({"readOnly": "yes"}, False),
    ({"default": {"any": ["thing"]}}, True),
    ({"examples": [1, "a"]}, True),
    ({"examples": "a"}, False),
    ({"type": "string"}, True),
    ({"type": ["string", "null"]}, True),
    ({"type": []}, False),
    ({"type": ["string", "string"]}, False),
    ({"type": "date"}, False),
    ({"type": 3}, False),
    ({"required": ["a", "b"]}, True),
    ({"required": ["a", "a"]}, False),
    ({"required": "a"}, False),
    ({"required": [1]}, False),
    ({"properties": {"a": {"type": "integer"}}}, True),
    ({"properties": {"a": {"type": "when"}}}, False),
    ({"properties": []}, False),
    ({"additionalProperties": False}, True),
    ({"additionalProperties": {"type": "nope"}}, False),
    ({"items": {"type": "number"}}, True),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, True),
    ({"anyOf": []}, False),
    ({"anyOf": {"type": "string"}}, False),
    ({"anyOf": [{"type": "nope"}]}, False),
    ({"pattern": "^a"}, False),  # a keyword it does not know
    (3, False),
    (None, False),
]


@pytest.mark.parametrize(("schema", "plain"), PLAIN, ids=[repr(r[0])[:40] for r in PLAIN])
def test_a_schema_is_called_plainly_valid_only_when_jsonschema_would_agree(
    schema: Any, plain: bool
) -> None:
    assert plainly_valid(schema) is plain
    if plain:
        jsonschema.Draft202012Validator.check_schema(schema)


HANDED_OVER = [
    3,
    {"pattern": "^a"},
    {"type": "date"},
    {"type": 7},
    {"properties": []},
    {"properties": {"a": {"pattern": "x"}}},
    {"additionalProperties": {"pattern": "x"}},
    {"additionalProperties": False, "patternProperties": {"^a": {}}},
    {"items": {"type": "string"}, "prefixItems": [{"type": "string"}]},
    {"items": {"pattern": "x"}},
    {"anyOf": [{"pattern": "x"}]},
]


@pytest.mark.parametrize("schema", HANDED_OVER, ids=[repr(s)[:40] for s in HANDED_OVER])
def test_a_schema_with_a_keyword_the_fast_check_does_not_know_is_left_to_jsonschema(
    schema: Any,
) -> None:
    assert compile_check(schema) is None


CHECKED = [
    # schema, an instance that conforms, one that does not
    ({"type": ["string", "null"]}, None, 3),
    ({"required": ["a"]}, {"a": 1}, {"b": 1}),
    ({"properties": {"a": {"type": "integer"}}}, {"a": 1, "b": "x"}, {"a": "x"}),
    ({"properties": {"a": True}, "additionalProperties": False}, {"a": 1}, {"b": 1}),
    ({"items": {"type": "number"}}, [1, 2.5], [1, "x"]),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, 3, 2.5),
    (
        {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}},
        {"a": "x"},
        {"a": 1},
    ),
    (False, None, None),
]


@pytest.mark.parametrize(("schema", "good", "bad"), CHECKED, ids=[repr(r[0])[:40] for r in CHECKED])
def test_a_compiled_check_agrees_with_jsonschema_on_both_sides(
    schema: Any, good: Any, bad: Any
) -> None:
    check = compile_check(schema)
    assert check is not None
    validator = jsonschema.Draft202012Validator(schema)
    if schema is not False:
        assert (check(good), validator.is_valid(good)) == (True, True)
    assert (check(bad), validator.is_valid(bad)) == (False, False)
    assert compile_check(True)(bad) is True  # type: ignore[misc] # True allows anything


def test_a_schema_naming_another_dialect_is_judged_by_that_dialects_rules() -> None:
    """Draft 4 counts 1.0 as no integer; 2020-12, the dialect of the compiled check, counts
    it as one. A schema that names draft 4 in ``$schema`` is left to jsonschema's draft 4
    validator, never compiled (issue 33: the compiled check is no longer kept from other
    dialects by a test of the validator's type, but by knowing no ``$schema``)."""
    draft_4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }
    checked = output_schema(draft_4)
    assert isinstance(checked, OutputSchema)
    assert checked.mismatch({"n": 1.0}) == "at $.n: 1.0 is not of type 'integer'"
    assert checked.mismatch({"n": 1}) is None
    latest = output_schema({**draft_4, "$schema": "https://json-schema.org/draft/2020-12/schema"})
    assert isinstance(latest, OutputSchema)
    assert latest.mismatch({"n": 1.0}) is None


PROBLEMS = [
    ([OBJ], "outputSchema is not a JSON object"),
    ("object", "outputSchema is not a JSON object"),
    ({"type": "array"}, "outputSchema has type 'array', not 'object'"),
    ({"properties": {}}, "outputSchema has type None, not 'object'"),
    ({"type": "object", "enum": {1, 2}}, "outputSchema is not JSON"),  # a set
    ({"type": "object", 1: "x"}, "outputSchema is not JSON"),  # keys that do not sort
    (OBJ, None),
    ({"type": "object", "properties": {"n": {"type": "integer"}}}, None),
]


@pytest.mark.parametrize(("schema", "problem"), PROBLEMS, ids=[repr(r[0])[:40] for r in PROBLEMS])
def test_an_output_schema_is_refused_with_the_rows_exact_reason(schema: Any, problem: Any) -> None:
    assert schema_problem(schema) == problem
