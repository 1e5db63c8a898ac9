"""The values the host hands out (``mcpbind.impl.values``): what they show and keep,
one row per shape. An image's repr names its size, never its data; what a server or a
user gave as a mapping is kept as a frozen copy."""

from __future__ import annotations

from types import MappingProxyType

import attrs
import pytest

from mcpbind.impl import ImageItem
from mcpbind.impl.values import (
    ElicitationAnswer,
    ElicitationRequest,
    Progress,
    RefreshOutcome,
    ToolResult,
)


def test_an_images_repr_names_its_type_and_size_not_its_data():
    item = ImageItem("image/png", "QUJDRA==")
    assert repr(item) == "ImageItem(mime_type='image/png', data=<8 base64 characters>)"
    assert item == ImageItem("image/png", "QUJDRA==")


@pytest.mark.parametrize(
    ("value", "field", "given"),
    [
        (lambda m: ElicitationRequest("s", "why?", m), "requested_schema", {"type": "object"}),
        (lambda m: ElicitationAnswer("accept", m), "content", {"name": "x"}),
    ],
)
def test_a_mapping_given_is_kept_as_a_frozen_copy(value, field, given):
    source = dict(given)
    kept = getattr(value(source), field)
    assert isinstance(kept, MappingProxyType)
    assert kept == given
    source["more"] = 1  # the caller's dict changes afterwards: the value does not
    assert dict(kept) == given


def test_an_answer_without_content_keeps_none():
    assert ElicitationAnswer("decline").content is None
    assert ElicitationAnswer("cancel", None).content is None


@pytest.mark.parametrize(
    ("value", "fields"),
    [
        (ToolResult("c1", "ok", "out"), {"items": ()}),
        (Progress("c1", "s", 1.0), {"total": None, "message": None}),
        (
            ElicitationRequest("s", "m", {}),
            {"mode": "form", "url": None, "elicitation_id": None},
        ),
        (
            RefreshOutcome("s", "installed", 3),
            {"kind": None, "reason": None, "excluded": ()},
        ),
    ],
)
def test_each_values_defaults_and_it_is_frozen(value, fields):
    for name, default in fields.items():
        assert getattr(value, name) == default
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        value.call_id = "other"  # type: ignore[misc]
