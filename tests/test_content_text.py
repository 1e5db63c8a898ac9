"""The model-visible text of every content block kind and shape (SPEC §8.8), pinned.

One row per shape a server may send: the block, whether the model is image-capable, and
the one line the model reads for it (after the ``Wall time`` header). Mutation testing
(issue 33) found a negated branch of the embedded ``resource`` block and a loosened field
check of ``resource_link`` that no test noticed; each row here says what the model reads,
exactly, so such a change fails a row.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from mcpbind.impl import ImageItem
from mcpbind.impl.calls.encoding import encode_result, without_media

DATA = "QUJDRA=="  # 8 base64 characters
HEADER = "Wall time: 0.2500 seconds\n"

LINK = {
    "type": "resource_link",
    "name": "notes",
    "title": "My notes",
    "uri": "file:///notes.txt",
    "mimeType": "text/plain",
    "description": "Today's notes",
}


def link(**fields: Any) -> dict[str, Any]:
    """A resource link with ``fields`` replaced, a field given as ``...`` left out."""
    block = {**LINK, **fields}
    return {key: value for key, value in block.items() if value is not ...}


def embedded(resource: Any = ...) -> dict[str, Any]:
    return {"type": "resource"} if resource is ... else {"type": "resource", "resource": resource}


# (id, block, image_capable, the line the model reads)
ROWS: list[tuple[str, Any, bool, str]] = [
    # text
    ("text", {"type": "text", "text": "hello"}, False, "hello"),
    ("text-empty", {"type": "text", "text": ""}, False, ""),
    ("text-multiline", {"type": "text", "text": "a\nb"}, False, "a\nb"),
    ("text-not-a-string", {"type": "text", "text": 5}, False, "[text content omitted]"),
    ("text-missing", {"type": "text"}, False, "[text content omitted]"),
    # image
    (
        "image-plain-model",
        {"type": "image", "data": DATA, "mimeType": "image/png"},
        False,
        "[image omitted: image/png, 8 base64 characters]",
    ),
    (
        "image-capable-model",
        {"type": "image", "data": DATA, "mimeType": "image/png"},
        True,
        "[image 1: image/png, attached to this result]",
    ),
    (
        "image-capable-without-mime-type",
        {"type": "image", "data": DATA},
        True,
        "[image omitted: unknown type, 8 base64 characters]",
    ),
    (
        "image-capable-data-not-a-string",
        {"type": "image", "data": 8, "mimeType": "image/png"},
        True,
        "[image omitted: image/png, 0 base64 characters]",
    ),
    (
        "image-capable-mime-type-not-a-string",
        {"type": "image", "data": DATA, "mimeType": 1},
        True,
        "[image omitted: unknown type, 8 base64 characters]",
    ),
    # audio: a note, image-capable or not
    (
        "audio-plain-model",
        {"type": "audio", "data": DATA, "mimeType": "audio/wav"},
        False,
        "[audio omitted: audio/wav, 8 base64 characters]",
    ),
    (
        "audio-capable-model",
        {"type": "audio", "data": DATA, "mimeType": "audio/wav"},
        True,
        "[audio omitted: audio/wav, 8 base64 characters]",
    ),
    (
        "audio-without-data-or-mime-type",
        {"type": "audio"},
        False,
        "[audio omitted: unknown type, 0 base64 characters]",
    ),
    # resource_link: every field present, absent, or of the wrong type
    (
        "link-every-field",
        link(),
        False,
        '[resource link: notes "My notes" <file:///notes.txt> (text/plain): Today\'s notes]',
    ),
    (
        "link-only-uri",
        {"type": "resource_link", "uri": "file:///a"},
        False,
        "[resource link: <file:///a>]",
    ),
    ("link-no-field", {"type": "resource_link"}, False, "[resource link: <?>]"),
    (
        "link-without-name",
        link(name=...),
        False,
        '[resource link: "My notes" <file:///notes.txt> (text/plain): Today\'s notes]',
    ),
    (
        "link-without-title",
        link(title=...),
        False,
        "[resource link: notes <file:///notes.txt> (text/plain): Today's notes]",
    ),
    (
        "link-title-same-as-name",
        link(title="notes"),
        False,
        "[resource link: notes <file:///notes.txt> (text/plain): Today's notes]",
    ),
    (
        "link-title-quoted-as-json-non-ascii-kept",
        link(title='Ünï "q"'),
        False,
        '[resource link: notes "Ünï \\"q\\"" <file:///notes.txt> (text/plain): Today\'s notes]',
    ),
    (
        "link-without-uri",
        link(uri=...),
        False,
        '[resource link: notes "My notes" <?> (text/plain): Today\'s notes]',
    ),
    (
        "link-without-mime-type",
        link(mimeType=...),
        False,
        '[resource link: notes "My notes" <file:///notes.txt>: Today\'s notes]',
    ),
    (
        "link-without-description",
        link(description=...),
        False,
        '[resource link: notes "My notes" <file:///notes.txt> (text/plain)]',
    ),
    (
        "link-empty-strings",
        link(name="", title="", uri="", mimeType="", description=""),
        False,
        "[resource link: <?>]",
    ),
    (
        "link-every-field-of-the-wrong-type",
        link(name=5, title=["t"], uri={"u": 1}, mimeType=1.5, description=True),
        False,
        "[resource link: <?>]",
    ),
    (
        "link-name-wrong-type",
        link(name=7),
        False,
        '[resource link: "My notes" <file:///notes.txt> (text/plain): Today\'s notes]',
    ),
    (
        "link-title-wrong-type",
        link(title=7),
        False,
        "[resource link: notes <file:///notes.txt> (text/plain): Today's notes]",
    ),
    (
        "link-uri-wrong-type",
        link(uri=7),
        False,
        '[resource link: notes "My notes" <?> (text/plain): Today\'s notes]',
    ),
    (
        "link-mime-type-wrong-type",
        link(mimeType=7),
        False,
        '[resource link: notes "My notes" <file:///notes.txt>: Today\'s notes]',
    ),
    (
        "link-description-wrong-type",
        link(description=7),
        False,
        '[resource link: notes "My notes" <file:///notes.txt> (text/plain)]',
    ),
    # embedded resource: text, blob, malformed
    (
        "resource-text",
        embedded({"uri": "file:///a.txt", "mimeType": "text/plain", "text": "the body"}),
        False,
        "the body",
    ),
    ("resource-empty-text", embedded({"uri": "file:///a.txt", "text": ""}), False, ""),
    (
        "resource-blob",
        embedded({"uri": "file:///a.bin", "mimeType": "application/zip", "blob": DATA}),
        False,
        "[resource omitted: file:///a.bin]",
    ),
    (
        "resource-blob-capable-model",
        embedded({"uri": "file:///a.png", "mimeType": "image/png", "blob": DATA}),
        True,
        "[resource omitted: file:///a.png]",
    ),
    (
        "resource-text-not-a-string",
        embedded({"uri": "u:1", "text": 3}),
        False,
        "[resource omitted: u:1]",
    ),
    ("resource-without-uri", embedded({"blob": DATA}), False, "[resource omitted: ?]"),
    (
        "resource-uri-not-a-string",
        embedded({"uri": 5, "blob": DATA}),
        False,
        "[resource omitted: ?]",
    ),
    ("resource-uri-empty", embedded({"uri": "", "blob": DATA}), False, "[resource omitted: ?]"),
    ("resource-not-an-object", embedded("file:///a.txt"), False, "[resource omitted: ?]"),
    ("resource-missing", embedded(), False, "[resource omitted: ?]"),
    # other kinds and shapes
    ("unknown-kind", {"type": "video", "url": "x"}, False, "[video content omitted]"),
    ("no-kind", {"text": "hi"}, False, "[unknown content omitted]"),
    ("empty-kind", {"type": ""}, False, "[unknown content omitted]"),
    ("kind-not-a-string", {"type": {"k": 1}}, False, "[unknown content omitted]"),
    (
        "audio-mime-type-empty",
        {"type": "audio", "data": DATA, "mimeType": ""},
        False,
        "[audio omitted: unknown type, 8 base64 characters]",
    ),
    ("not-an-object", "hello", False, "[unreadable content block]"),
    ("null", None, False, "[unreadable content block]"),
]


@pytest.mark.parametrize(
    ("block", "image_capable", "line"),
    [pytest.param(block, capable, line, id=name) for name, block, capable, line in ROWS],
)
def test_each_content_block_reads_to_the_model_as_exactly_one_line(block, image_capable, line):
    status, text, _ = encode_result(
        {"content": [block]}, 0.25, server="s", tool="t", image_capable=image_capable
    )
    assert (status, text) == ("ok", HEADER + line)


def test_an_image_capable_model_gets_each_image_as_an_item_numbered_in_order():
    content = [
        {"type": "image", "data": DATA, "mimeType": "image/png"},
        {"type": "audio", "data": DATA, "mimeType": "audio/wav"},
        {"type": "image", "data": "QQ==", "mimeType": "image/jpeg"},
    ]
    _, text, items = encode_result(
        {"content": content}, 0.25, server="s", tool="t", image_capable=True
    )
    assert text == HEADER + (
        "[image 1: image/png, attached to this result]\n"
        "[audio omitted: audio/wav, 8 base64 characters]\n"
        "[image 2: image/jpeg, attached to this result]"
    )
    assert items == (ImageItem("image/png", DATA), ImageItem("image/jpeg", "QQ=="))


def test_a_plain_model_gets_no_items_for_images():
    content = [{"type": "image", "data": DATA, "mimeType": "image/png"}]
    _, _, items = encode_result({"content": content}, 0.25, server="s", tool="t")
    assert items == ()


def test_blocks_beside_structured_content_read_as_their_lines_after_its_json():
    content = [
        {"type": "text", "text": '{"n":1}'},  # the structured content's fallback: dropped
        link(),
        embedded({"uri": "file:///a.txt", "text": "the body"}),
        embedded({"uri": "file:///a.bin", "blob": DATA}),
    ]
    raw = {"content": content, "structuredContent": {"n": 1}}
    _, text, _ = encode_result(raw, 0.25, server="s", tool="t")
    assert text == HEADER + (
        '{"n":1}\n'
        '[resource link: notes "My notes" <file:///notes.txt> (text/plain): Today\'s notes]\n'
        "the body\n"
        "[resource omitted: file:///a.bin]"
    )


def test_an_error_result_reads_with_the_error_line_before_its_blocks():
    raw = {"isError": True, "content": [{"type": "text", "text": "boom"}, embedded()]}
    status, text, _ = encode_result(raw, 0.25, server="s", tool="t")
    assert (status, text) == (
        "error",
        HEADER + "The tool reported an error (isError: true).\nboom\n[resource omitted: ?]",
    )


IMAGE = {"type": "image", "data": DATA, "mimeType": "image/png"}
OMITTED = "[8 base64 characters omitted]"

# (id, structuredContent, the JSON line the model reads for it)
STRUCTURED: list[tuple[str, Any, str]] = [
    (
        "leaves",
        {"s": "x", "i": 1, "f": 1.5, "b": True, "n": None},
        '{"s":"x","i":1,"f":1.5,"b":true,"n":null}',
    ),
    ("image-at-the-top", IMAGE, f'{{"type":"image","data":"{OMITTED}","mimeType":"image/png"}}'),
    (
        "image-nested",
        {"a": {"b": IMAGE}},
        f'{{"a":{{"b":{{"type":"image","data":"{OMITTED}","mimeType":"image/png"}}}}}}',
    ),
    (
        "audio-in-a-list",
        {"a": [1, {"type": "audio", "data": DATA}]},
        f'{{"a":[1,{{"type":"audio","data":"{OMITTED}"}}]}}',
    ),
    (
        "list-of-lists",
        {"a": [[IMAGE]]},
        f'{{"a":[[{{"type":"image","data":"{OMITTED}","mimeType":"image/png"}}]]}}',
    ),
    (
        "blob",
        {"resource": {"uri": "u", "blob": DATA}},
        f'{{"resource":{{"uri":"u","blob":"{OMITTED}"}}}}',
    ),
    ("blob-not-text", {"blob": 5}, '{"blob":5}'),
    ("data-not-media", {"type": "text", "data": DATA}, f'{{"type":"text","data":"{DATA}"}}'),
    (
        "media-data-not-text",
        {"type": "image", "data": [DATA]},
        f'{{"type":"image","data":["{DATA}"]}}',
    ),
    (
        "media-type-as-a-value",
        {"kind": "image", "data": DATA},
        f'{{"kind":"image","data":"{DATA}"}}',
    ),
]


@pytest.mark.parametrize(
    ("structured", "line"),
    [pytest.param(structured, line, id=name) for name, structured, line in STRUCTURED],
)
def test_media_anywhere_in_structured_content_reads_as_its_size(structured, line):
    """SPEC §8.8: the bytes of a picture, a sound or a blob never reach the model's text,
    however deep in ``structuredContent`` they are (mutation testing, issue 33: the
    leaves' early return widened to every value went unseen)."""
    _, text, _ = encode_result(
        {"content": [], "structuredContent": structured}, 0.25, server="s", tool="t"
    )
    assert text == HEADER + line


@pytest.mark.parametrize(
    "value",
    ["x", 1, 1.5, True, None, [1, "a", [None]], {"a": {"b": [1, {"c": "d"}]}}, {"type": "text"}],
)
def test_a_value_without_media_comes_back_as_it_is_not_a_copy(value):
    assert without_media(value) is value


def test_only_what_holds_media_is_copied_and_the_given_value_is_left_unchanged():
    kept = {"n": 1}
    value = {"kept": kept, "items": [IMAGE, kept]}
    out = without_media(value)
    assert out == {"kept": kept, "items": [{**IMAGE, "data": OMITTED}, kept]}
    assert out["kept"] is kept
    assert out["items"][1] is kept
    assert value == {"kept": kept, "items": [IMAGE, kept]}
    assert IMAGE["data"] == DATA


class Items(list[Any]):
    """A list of another type, as a library's own structured value may be."""


def test_a_mapping_or_list_of_another_type_is_read_as_a_plain_one():
    """``without_media`` walks any mapping and any list, not only ``dict`` and ``list``
    (mutation testing, issue 33: the list test narrowed to ``list`` itself survived)."""
    assert without_media(Items([IMAGE])) == [{**IMAGE, "data": OMITTED}]
    assert without_media(MappingProxyType({"a": IMAGE})) == {"a": {**IMAGE, "data": OMITTED}}
    plain = MappingProxyType({"a": 1})
    assert type(without_media(plain)) is dict


def test_a_text_block_of_another_mapping_type_is_still_known_as_the_structured_fallback():
    """The unstructured fallback of ``structuredContent`` is dropped whatever mapping type
    carries it (mutation testing, issue 33: the block test narrowed to ``dict`` survived)."""
    block = MappingProxyType({"type": "text", "text": '{"n":1}'})
    raw = {"content": [block], "structuredContent": {"n": 1}}
    _, text, _ = encode_result(raw, 0.25, server="s", tool="t")
    assert text == HEADER + '{"n":1}'


def test_a_one_key_structured_content_of_another_mapping_type_still_unwraps_its_fallback():
    """``{"result": value}`` (``MCPServer``'s wrap of a plain return value) carried by
    another mapping type: a text block that is the one value is still its fallback and
    dropped (mutation testing, issue 33: seed 83's ``or`` made ``and`` at the structured
    content's type test survived)."""
    block = {"type": "text", "text": "42"}
    raw = {"content": [block], "structuredContent": MappingProxyType({"result": "42"})}
    _, text, _ = encode_result(raw, 0.25, server="s", tool="t")
    assert text == HEADER + '{"result":"42"}'


def test_a_block_that_is_one_value_of_a_structured_object_of_two_keys_is_kept():
    """Only a structured object of ONE key (``MCPServer``'s ``{"result": value}``) is
    unwrapped: beside ``{"a": "x", "b": "y"}`` a text block ``x`` is no fallback of the
    whole and is kept (mutation seed 103: the unwrap test's ``and len(...) == 1`` made
    ``or`` unwrapped every object and dropped the block)."""
    raw = {"content": [{"type": "text", "text": "x"}], "structuredContent": {"a": "x", "b": "y"}}
    _, text, _ = encode_result(raw, 0.25, server="s", tool="t")
    assert text == HEADER + '{"a":"x","b":"y"}\nx'


def test_a_text_block_whose_text_is_no_string_is_kept_beside_structured_content():
    """A text block whose ``text`` is not a string is not the structured content's
    fallback: it reads as omitted after the JSON (mutation testing, issue 33: its
    ``return False`` made ``True`` dropped it)."""
    raw = {"content": [{"type": "text", "text": 7}], "structuredContent": {"n": 1}}
    _, text, _ = encode_result(raw, 0.25, server="s", tool="t")
    assert text == HEADER + '{"n":1}\n[text content omitted]'


def test_fewer_blocks_than_the_structured_list_are_kept_as_more_than_its_fallback():
    """``{"result": [1, 2]}`` beside one block: not one block per item, so the block
    that is no fallback of the whole is kept (mutation testing, issue 33: the length
    test's ``return False`` made ``True`` dropped it)."""
    raw = {"content": [{"type": "text", "text": "1"}], "structuredContent": {"result": [1, 2]}}
    _, text, _ = encode_result(raw, 0.25, server="s", tool="t")
    assert text == HEADER + '{"result":[1,2]}\n1'
