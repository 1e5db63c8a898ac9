"""What a tool's raw answer becomes when it is not the shape a result must have (SPEC
§8.8), and a resource read's answer as the content of a tool result (§11.20): one row
per shape, each with the exact status and text. Pure: the encoding is the same whatever
the transport."""

from __future__ import annotations

from typing import Any

import pytest

from mcpbind.impl.calls.encoding import encode_read, encode_result
from mcpbind.model import texts


def malformed(problem: str) -> tuple[str, str]:
    return "failed", texts.MALFORMED_RESULT.format(server="s", tool="t", problem=problem)


SHAPES = [
    ([], malformed("not a JSON object")),
    ("done", malformed("not a JSON object")),
    (None, malformed("not a JSON object")),
    ({}, ("ok", "Wall time: 1.0000 seconds\n")),  # content absent: none
    ({"content": "done"}, malformed("content is not a list")),
    ({"content": None}, malformed("content is not a list")),
    ({"content": []}, ("ok", "Wall time: 1.0000 seconds\n")),
    ({"content": [7]}, ("ok", "Wall time: 1.0000 seconds\n[unreadable content block]")),
    (
        {"content": [{"type": "text", "text": "x"}], "isError": True},
        ("error", "Wall time: 1.0000 seconds\nThe tool reported an error (isError: true).\nx"),
    ),
    (
        {"content": [{"type": "text", "text": "x"}], "isError": "yes"},  # only true is true
        ("ok", "Wall time: 1.0000 seconds\nx"),
    ),
]


@pytest.mark.parametrize(("raw", "ending"), SHAPES, ids=[repr(r[0])[:30] for r in SHAPES])
def test_a_result_of_the_wrong_shape_ends_the_call_with_the_rows_text(
    raw: Any, ending: tuple[str, str]
) -> None:
    status, text, items = encode_result(raw, 1.0, server="s", tool="t")
    assert (status, text, items) == (*ending, ())


READS = [
    ("done", "done"),  # not an object: left for encode_result to say so
    ({}, {"content": None}),
    ({"contents": "x"}, {"content": None}),
    ({"contents": []}, {"content": []}),
    ({"contents": [7]}, {"content": [None]}),
    (
        {"contents": [{"uri": "file:///a", "text": "hi"}]},
        {"content": [{"type": "text", "text": "hi"}]},
    ),
    (
        {"contents": [{"uri": "file:///p.png", "blob": "AAAA", "mimeType": "image/png"}]},
        {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]},
    ),
]


@pytest.mark.parametrize(("raw", "read"), READS, ids=[repr(r[0])[:30] for r in READS])
def test_a_resource_read_becomes_the_content_of_a_tool_result(raw: Any, read: Any) -> None:
    assert encode_read(raw) == read


def test_a_read_blob_that_is_no_image_is_a_note_naming_its_type_and_uri() -> None:
    raw = {"contents": [{"uri": "file:///a.bin", "blob": "AAAA", "mimeType": "application/x"}]}
    [block] = encode_read(raw)["content"]
    assert block["type"] == "text"
    assert block["text"].endswith(" of file:///a.bin]")
    assert "application/x" in block["text"]
    status, text, _ = encode_result(encode_read({"contents": [7]}), 1.0, server="s", tool="t")
    assert (status, text) == ("ok", "Wall time: 1.0000 seconds\n[unreadable content block]")
