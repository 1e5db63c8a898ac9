"""A call's arguments as the host reads them (SPEC §8.1), one row per shape a caller may
pass: the plain JSON object sent, or the problem of the ``BAD_ARGUMENTS`` error."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from mcpbind.impl.calls.arguments import parse_arguments

ROWS = [
    ({"a": 1}, {"a": 1}),
    (MappingProxyType({"a": (1, {"b": None})}), {"a": [1, {"b": None}]}),
    ({"a": [True, 1.5, "x"]}, {"a": [True, 1.5, "x"]}),
    ('{"a": 1}', {"a": 1}),
    ('{"a": 1}\n', {"a": 1}),
    (b'{"a": 1}', {"a": 1}),
    ("", {}),
    ("  \n", {}),
    (b"", {}),
    (None, {}),
    ("[1, 2]", "JSON list where an object is required"),
    ('"x"', "JSON str where an object is required"),
    ("1e999", "JSON float where an object is required"),
    ("{bad", "not valid JSON (Expecting property name enclosed in double quotes at position 1)"),
    ('{"a": 1} 2', "not valid JSON (Extra data at position 9)"),
    (
        b"\xff",
        "not valid JSON ('utf-8' codec can't decode byte 0xff in position 0: invalid start byte)",
    ),
    (42, "int where an object is required"),
    (True, "bool where an object is required"),
    ([{"a": 1}], "list where an object is required"),
    (bytearray(b"{}"), "bytearray where an object is required"),
    ({"a": {1, 2}}, "set at arguments.a, which JSON cannot carry"),
    ({"a": [{"b": {1}}]}, "set at arguments.a[0].b, which JSON cannot carry"),
    ({"a": ("x", b"y")}, "bytes at arguments.a[1], which JSON cannot carry"),
    ({1: "x"}, "int key 1 at arguments, which JSON cannot carry"),
    ({"a": {(1,): "x"}}, "tuple key (1,) at arguments.a, which JSON cannot carry"),
    ({"a": object()}, "object at arguments.a, which JSON cannot carry"),
]


@pytest.mark.parametrize(("arguments", "read"), ROWS)
def test_the_arguments_read_as_a_plain_object_or_the_problem_with_them(arguments, read):
    assert parse_arguments(arguments) == read


def test_the_object_read_is_a_dict_whatever_mapping_was_given():
    given = {"a": [1, {"b": "c"}]}
    read = parse_arguments(given)
    assert read == given
    assert type(read) is dict
    assert type(parse_arguments(MappingProxyType(given))) is dict
