"""SPEC §14.2 (INV-3) and §11.12 in ``mcpbind trace check``: a lazily started server's
first catalog comes from the cache, published with no ``list_done`` before it; that one
publication is passed over, and a later one of the same server with no listing is still
flagged (mutation seed 103: the monitor's ``continue`` after the cached publication made
``break`` stopped checking there; no test wrote a lazy server's trace)."""

from __future__ import annotations

import json
from typing import Any

from trace_records import header

from mcpbind.model.trace import check_trace, parse_trace

HEADER = header(server_options={"s": {"lazy": True}})
CACHED = {"kind": "published", "generation": 1, "source": "mcp:s", "names": ["mcp__s__t"]}


def violations(*body: dict[str, Any]) -> list[tuple[str, int]]:
    records = parse_trace(json.dumps(r) for r in [HEADER, *body, {"kind": "end"}])
    return [(v.invariant, v.line) for v in check_trace(records) if v.invariant == "INV-3"]


def test_a_lazy_servers_cached_catalog_is_published_with_no_listing_before_it():
    assert violations(CACHED) == []


def test_a_second_publication_of_a_lazy_server_with_no_listing_is_flagged():
    again = {**CACHED, "generation": 2, "names": ["mcp__s__t", "mcp__s__u"]}
    assert violations(CACHED, again) == [("INV-3", 3)]


def test_a_server_that_is_not_lazy_needs_a_listing_before_its_first_publication():
    eager = {**HEADER, "server_options": {"s": {"lazy": False}}}
    records = parse_trace(json.dumps(r) for r in [eager, CACHED, {"kind": "end"}])
    assert ("INV-3", 2) in [(v.invariant, v.line) for v in check_trace(records)]
