"""How a server's resource lists are read page by page (SPEC §11.20): every page of
resources, then of resource templates, followed by cursor; a malformed page or entry, a
repeated cursor, too many entries or pages reject the refresh with the exact text (the
catalog kept, INV-3). Each row scripts the pages the connection's ``list_resources``
answers, keyed by ``(cursor, templates)``."""

from __future__ import annotations

from typing import Any

import pytest

from mcpbind.impl.catalog.resources import MAX_ENTRIES, MAX_PAGES, read_resources
from mcpbind.impl.errors import CatalogRejected
from mcpbind.model import texts

R1 = {"uri": "file:///a", "name": "a"}
R2 = {"uri": "file:///b", "name": "b"}
T1 = {"uriTemplate": "file:///{x}", "name": "t"}
EMPTY_TEMPLATES = {(None, True): {"resourceTemplates": []}}


def pages(script: dict[tuple[str | None, bool], Any]) -> Any:
    async def list_page(cursor: str | None, *, templates: bool = False) -> Any:
        return script[(cursor, templates)]

    return list_page


def invalid(problem: str) -> tuple[str, str]:
    return "invalid", texts.REJECT_INVALID.format(server="s", tool="(resources)", problem=problem)


def cap(what: str) -> tuple[str, str]:
    return "cap", texts.REJECT_CAP.format(server="s", cap=what)


async def test_every_page_of_both_lists_is_read_in_order_by_its_cursor() -> None:
    script = {
        (None, False): {"resources": [R1], "nextCursor": "p2"},
        ("p2", False): {"resources": [R2]},
        (None, True): {"resourceTemplates": [T1], "nextCursor": "t2"},
        ("t2", True): {"resourceTemplates": []},
    }
    read = await read_resources("s", pages(script))
    assert (read.resources, read.templates) == ((R1, R2), (T1,))


REJECTED = [
    (
        "no list",
        {(None, False): {"resources": "a"}},
        invalid("the resources page has no list of resources"),
    ),
    ("no page", {(None, False): None}, invalid("the resources page has no list of resources")),
    (
        "entry not an object",
        {(None, False): {"resources": ["file:///a"]}},
        invalid("an entry of resources has no string uri"),
    ),
    (
        "uri not a string",
        {(None, False): {"resources": [{"uri": 7}]}},
        invalid("an entry of resources has no string uri"),
    ),
    (
        "template without uriTemplate",
        {(None, False): {"resources": []}, (None, True): {"resourceTemplates": [{"uri": "x"}]}},
        invalid("an entry of resourceTemplates has no string uriTemplate"),
    ),
    (
        "cursor repeated",
        {
            (None, False): {"resources": [R1], "nextCursor": "p"},
            ("p", False): {"resources": [R2], "nextCursor": "p"},
        },
        invalid("the resources pages repeat a cursor or give one not a string"),
    ),
    (
        "cursor not a string",
        {(None, False): {"resources": [R1], "nextCursor": 2}},
        invalid("the resources pages repeat a cursor or give one not a string"),
    ),
    (
        "too many entries",
        {(None, False): {"resources": [R1] * (MAX_ENTRIES + 1)}},
        cap(f"more than {MAX_ENTRIES} resources"),
    ),
]


@pytest.mark.parametrize(
    ("script", "rejected"), [r[1:] for r in REJECTED], ids=[r[0] for r in REJECTED]
)
async def test_a_malformed_or_oversized_resource_list_rejects_the_refresh_with_its_text(
    script: Any, rejected: tuple[str, str]
) -> None:
    with pytest.raises(CatalogRejected) as raised:
        await read_resources("s", pages({**EMPTY_TEMPLATES, **script}))
    assert (raised.value.kind, raised.value.reason) == rejected


async def test_exactly_the_most_entries_and_pages_are_taken_and_one_more_page_is_not() -> None:
    full = {(None, False): {"resources": [R1] * MAX_ENTRIES}, **EMPTY_TEMPLATES}
    read = await read_resources("s", pages(full))
    assert len(read.resources) == MAX_ENTRIES

    def chain(count: int) -> dict[tuple[str | None, bool], Any]:
        script: dict[tuple[str | None, bool], Any] = {**EMPTY_TEMPLATES}
        for n in range(count):
            cursor = None if n == 0 else f"c{n}"
            last = n == count - 1
            script[(cursor, False)] = {
                "resources": [R1],
                **({} if last else {"nextCursor": f"c{n + 1}"}),
            }
        return script

    assert len((await read_resources("s", pages(chain(MAX_PAGES)))).resources) == MAX_PAGES
    with pytest.raises(CatalogRejected) as raised:
        await read_resources("s", pages({**chain(MAX_PAGES + 1)}))
    assert (raised.value.kind, raised.value.reason) == cap(
        f"more than {MAX_PAGES} pages of resources"
    )
