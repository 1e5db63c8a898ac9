"""The short cuts of a call's hot path give what the general path gives.

``compile_check`` turns the schemas ``MCPServer`` writes into plain predicates so that a
conforming answer (SPEC §8.8) costs no jsonschema machinery: each predicate is held to
``Draft202012Validator.is_valid`` on generated schemas and instances, and the mismatch
text of a failing answer to what jsonschema says. ``call_params`` writes a plain
``tools/call`` without building the SDK's request: it is held to that request's dump.
``plainly_complete`` tells the usual answer to a call valid without building the SDK's
model: it is held to that model, on answers each at most one change away from plain.
"""

from __future__ import annotations

import math
import typing
from typing import Any

import mcp_types as types
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import methods
from pydantic import TypeAdapter

from mcpbind.impl.catalog.structured import (
    OutputSchema,
    compile_check,
    output_schema,
    plainly_valid,
)
from mcpbind.impl.wire.connection import (
    PLAIN_CALL_REVISION,
    call_params,
    complete_by_default,
    plainly_complete,
)

TYPES = ["object", "array", "string", "integer", "number", "boolean", "null"]
KEYS = ["a", "b", "c"]

SCALARS = [None, True, False, 0, 1, -2, 0.0, 1.0, -2.0, 1.5, float("inf"), "", "ab"]
"""1.0 is an integer to jsonschema, True is not: every schema meets each of these."""
json_values = st.recursive(
    st.sampled_from(SCALARS),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner),
    max_leaves=8,
)

type_keyword = st.sampled_from(TYPES) | st.lists(
    st.sampled_from(TYPES), min_size=1, max_size=3, unique=True
)
annotations = st.fixed_dictionaries(
    {},
    optional={
        "title": st.just("T"),
        "description": st.just("d"),
        "default": json_values,
        "format": st.sampled_from(["date-time", "email", "uri"]),
    },
)
leaf_schemas = (
    st.booleans()
    | st.builds(lambda t, extra: {"type": t, **extra}, type_keyword, annotations)
    | annotations
    # keywords the fast check leaves to jsonschema
    | st.builds(lambda v: {"enum": v}, st.lists(json_values, min_size=1, max_size=2))
    | st.builds(lambda n: {"type": "string", "minLength": n}, st.integers(0, 2))
)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    objects = st.fixed_dictionaries(
        {},
        optional={
            "type": type_keyword,
            "properties": st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
            "required": st.lists(st.sampled_from(KEYS), max_size=2, unique=True),
            "additionalProperties": inner,
            "items": inner,
            "anyOf": st.lists(inner, min_size=1, max_size=3),
        },
    )
    return objects | st.builds(lambda a, b: {**a, **b}, objects, annotations)


schemas = st.recursive(leaf_schemas, _containers, max_leaves=6)


@settings(max_examples=400)
@given(schemas, st.lists(json_values, min_size=1, max_size=5))
def test_the_fast_check_agrees_with_jsonschema_wherever_it_applies(schema, instances):
    Draft202012Validator.check_schema(schema)
    check = compile_check(schema)
    validator = Draft202012Validator(schema)
    for instance in [*SCALARS, [], {}, *instances]:
        if check is not None:
            assert check(instance) == validator.is_valid(instance), (schema, instance)


@settings(max_examples=200)
@given(schemas, json_values)
def test_a_tool_schema_reports_a_mismatch_exactly_when_jsonschema_finds_one(schema, instance):
    wrapped = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    Draft202012Validator.check_schema(wrapped)
    checked = output_schema(wrapped)
    assert isinstance(checked, OutputSchema)
    answer = {"a": instance}
    conforms = Draft202012Validator(wrapped).is_valid(answer)
    assert (checked.mismatch(answer) is None) == conforms


def test_a_mismatch_still_names_the_path_and_the_error_jsonschema_gives():
    checked = output_schema(
        {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
    )
    assert isinstance(checked, OutputSchema)
    assert checked.mismatch({"count": "three"}) == "at $.count: 'three' is not of type 'integer'"
    assert checked.mismatch({}) == "at $: 'count' is a required property"
    assert checked.mismatch({"count": 3}) is None


def _output_schemas() -> list[dict[str, Any]]:
    server = MCPServer("schemas")

    @server.tool()
    def text() -> str:
        return ""

    @server.tool()
    def number(x: int) -> float:
        return 0.0

    @server.tool()
    def listing() -> list[str]:
        return []

    @server.tool()
    def mapping() -> dict[str, int]:
        return {}

    @server.tool()
    def optional() -> int | None:
        return None

    tools = trio.run(server.list_tools)
    return [tool.output_schema for tool in tools if tool.output_schema is not None]


@pytest.mark.parametrize("schema", _output_schemas(), ids=lambda schema: schema["title"])
def test_the_schemas_mcpserver_writes_for_plain_return_types_take_the_fast_check(schema):
    """Checked and compiled without jsonschema: a catalog of them never imports it."""
    assert compile_check(schema) is not None
    assert plainly_valid(schema)


KEYWORDS = [
    *["type", "required", "properties", "additionalProperties", "items", "anyOf"],
    *["title", "description", "$comment", "format", "readOnly", "writeOnly", "deprecated"],
    *["default", "examples", "enum", "minLength", "$schema"],
]
loose_values = (
    json_values
    | st.sampled_from([*TYPES, "bogus"])
    | st.lists(st.sampled_from([*TYPES, "bogus"]), max_size=3)
    | st.lists(st.sampled_from(KEYS), max_size=3)
)
loose_schemas = st.recursive(
    st.booleans() | loose_values,
    lambda inner: st.dictionaries(
        st.sampled_from(KEYWORDS),
        inner | st.dictionaries(st.sampled_from(KEYS), inner, max_size=2) | st.lists(inner),
        max_size=4,
    ),
    max_leaves=8,
)


@settings(max_examples=1000)
@given(loose_schemas)
def test_a_schema_called_plainly_valid_is_valid_to_jsonschema(schema):
    """SPEC §5.3: the check of its own never lets through a schema jsonschema refuses."""
    if plainly_valid(schema):
        Draft202012Validator.check_schema(schema)


@settings(max_examples=300)
@given(schemas)
def test_a_valid_schema_of_the_keywords_the_fast_check_knows_is_called_plainly_valid(schema):
    if compile_check(schema) is not None:
        assert plainly_valid(schema)


def _sdk_params(name: Any, arguments: Any, meta: Any) -> Any:
    params = types.CallToolRequestParams(name=name, arguments=dict(arguments), _meta=meta)
    request = types.CallToolRequest(params=params)
    return request.model_dump(by_alias=True, mode="json", exclude_none=True)["params"]


odd_values = st.sampled_from([float("nan"), float("-inf"), (1, 2), b"x", {1: "a"}, None])
argument_values = st.recursive(
    json_values | odd_values,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(KEYS), inner),
    max_leaves=6,
)
metas = st.none() | st.dictionaries(
    st.sampled_from(["dev.mcpbind/step", "dev.mcpbind/call_id", "other"]),
    st.none() | st.integers(0, 9) | st.text("ab", max_size=2),
)


@settings(max_examples=300)
@given(st.dictionaries(st.text("ab", max_size=2), argument_values, max_size=3), metas)
def test_a_plain_call_is_written_as_the_sdk_would_write_it(arguments, meta):
    written = call_params("echo", arguments, meta)
    try:
        expected = _sdk_params("echo", arguments, meta)
    except Exception:  # the SDK refuses it: so must the short cut, and leave it to the SDK
        assert written is None
        return
    if written is not None:
        assert _same_json(written, expected)


def _same_json(left: Any, right: Any) -> bool:
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        return math.isnan(right)
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(_same_json(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_same_json, left, right))
    return bool(left == right)


def test_the_calls_the_router_makes_take_the_short_cut():
    meta = {"dev.mcpbind/session_id": "s1", "dev.mcpbind/step": 3, "dev.mcpbind/call_id": "c1"}
    arguments = {"text": "x", "n": 1.5, "tags": ["a", None], "deep": {"k": True}}
    written = call_params("echo", arguments, meta)
    assert written == _sdk_params("echo", arguments, meta)
    assert written is not None
    assert written["arguments"] is not arguments


odd_values = st.none() | st.booleans() | st.integers(0, 2) | st.text("tx", max_size=2) | st.just({})
plain_results = st.fixed_dictionaries(
    {
        "content": st.lists(
            st.fixed_dictionaries({"type": st.just("text"), "text": st.text("ab", max_size=2)}),
            max_size=3,
        ),
        "resultType": st.sampled_from(["complete", "input_required", ""]),
    },
    optional={
        "structuredContent": argument_values,
        "isError": st.booleans() | st.none(),
        "_meta": st.none()
        | st.dictionaries(
            st.sampled_from(["io.modelcontextprotocol/serverInfo", "k"]), argument_values
        ),
        "is_error": odd_values,
    },
)
"""Results :func:`plainly_complete` calls plain, each changed below in at most one place."""


CALL_RESULT: TypeAdapter[Any] = TypeAdapter(
    next(
        kind
        for kind in typing.get_args(methods.SERVER_RESULTS[("tools/call", PLAIN_CALL_REVISION)])
        if kind.__name__ == "CallToolResult"
    )
)
"""The revision's ``CallToolResult``: what the SDK's ``validate_server_result`` holds an
answer to a call to is the union of it and ``InputRequiredResult``, which takes more."""


@st.composite
def call_results(draw: st.DrawFn) -> Any:
    result = draw(plain_results)
    blocks = result["content"]
    where = draw(
        st.sampled_from(["nothing", "result", "content", "block", "type", "text"])
        | st.sampled_from(["annotations", "block _meta", "other"])
        | st.sampled_from(["isError", "resultType", "_meta", "meta key"])
    )
    if where == "result":
        return draw(odd_values | st.lists(odd_values, max_size=1))
    in_block = where in ("block", "type", "text", "annotations", "block _meta", "other")
    if where == "content" or (in_block and not blocks):
        result["content"] = draw(odd_values)
    elif where == "block":
        blocks[draw(st.integers(0, len(blocks) - 1))] = draw(odd_values)
    elif where in ("type", "text"):
        index = draw(st.integers(0, len(blocks) - 1))
        blocks[index] = {**blocks[index], where: draw(odd_values | st.just("image"))}
    elif where in ("annotations", "block _meta", "other"):
        index = draw(st.integers(0, len(blocks) - 1))
        value = draw(odd_values | st.just({"priority": "high"}) | st.just({"audience": 1}))
        blocks[index] = {**blocks[index], where.removeprefix("block "): value}
    elif where == "meta key":
        result["_meta"] = {1: "x"}
    elif where != "nothing":
        result[where] = draw(odd_values)
    return result


@settings(max_examples=500)
@given(call_results())
def test_a_call_result_called_plainly_complete_is_valid_to_the_sdks_model(result):
    """The short cut of ``_validated`` only ever says yes where the revision's
    ``CallToolResult`` does (and so the union the SDK checks against)."""
    if plainly_complete(result):
        CALL_RESULT.validate_python(result, by_name=False)


async def test_the_answer_mcpserver_gives_a_call_takes_the_short_cut():
    server = MCPServer("hot")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    async with Client(server) as client:
        assert client.session.protocol_version == PLAIN_CALL_REVISION
        raw = await client.session.send_request(
            types.CallToolRequest(
                params=types.CallToolRequestParams(name="echo", arguments={"text": "x"})
            ),
            TypeAdapter(dict[str, Any]),
        )
    assert plainly_complete(complete_by_default(raw))
