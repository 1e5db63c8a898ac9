"""Fuzzed catalogs against the adapter and the registry (issue 6, SPEC §5, §6).

Adversarial listings: empty, unicode, 10 kB and ``__``/``mcp__`` names, names that collide
after sanitising, duplicates, huge and deeply nested schemas, non-object schemas, pages of
2,048 tools, broken cursors.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpbind.impl import CatalogRejected, ServerConfig, ToolRegistry
from mcpbind.impl.catalog.listing import MAX_TOOLS, build_bindings, read_listing
from mcpbind.impl.catalog.registry import Binding, ToolSpec
from mcpbind.model.naming import BUILTIN, mcp_source

VALID = re.compile(r"[A-Za-z0-9_]+")
CONFIG = ServerConfig(target="http://127.0.0.1:1/mcp")
FUZZ = settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)

tool_names = st.one_of(
    st.text(min_size=1, max_size=12),
    st.text(alphabet="ab_.-", min_size=1, max_size=6),
    st.sampled_from(["__", "mcp__", "mcp__x__y", "a__b", "b__c", "é", "日本", "a.b", "a_b"]),
    st.just("n" * 10_000),
)
nested = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=20,
)
schemas = st.builds(
    lambda props: {"type": "object", "properties": props},
    st.dictionaries(st.text(max_size=5), nested, max_size=4),
)


def raw(name: str, schema: Any = None) -> dict[str, Any]:
    return {"name": name, "inputSchema": schema if schema is not None else {"type": "object"}}


def names_of(tools: list[dict[str, Any]], registry: ToolRegistry | None = None, limit: int = 64):
    registry = registry or ToolRegistry()
    return {
        b.remote_name: b.name
        for b in build_bindings("srv.x", CONFIG, tools, registry.state, limit).bindings
    }


@FUZZ
@given(st.lists(tool_names, unique=True, max_size=25), st.sampled_from([24, 32, 64, 128]))
def test_names_are_safe_unique_within_the_limit_and_independent_of_order(names, limit):
    tools = [raw(n) for n in names]
    assigned = names_of(tools, limit=limit)
    assert set(assigned) == set(names)
    assert len(set(assigned.values())) == len(names)
    for public in assigned.values():
        assert VALID.fullmatch(public)
        assert len(public) <= limit
    shuffled = tools[:]
    random.Random(len(names)).shuffle(shuffled)
    assert names_of(shuffled, limit=limit) == assigned


@FUZZ
@given(
    st.lists(tool_names, unique=True, max_size=12), st.lists(tool_names, unique=True, max_size=12)
)
def test_incumbents_keep_their_names_whatever_the_next_listing(first, second):
    """INV-6 across two refreshes of one source."""
    registry = ToolRegistry()
    source = mcp_source("srv.x")
    tools = [raw(n) for n in first]
    registry.replace_source(
        source, build_bindings("srv.x", CONFIG, tools, registry.state, 64).bindings
    )
    before = {b.remote_name: b.name for b in registry.state.catalog(source).bindings}
    later = [raw(n) for n in second]
    registry.replace_source(
        source, build_bindings("srv.x", CONFIG, later, registry.state, 64).bindings
    )
    after = {b.remote_name: b.name for b in registry.state.catalog(source).bindings}
    for remote in set(before) & set(after):
        assert after[remote] == before[remote]
    assert len(set(after.values())) == len(after)


bad_entries = st.one_of(
    st.just(raw("")),
    st.sampled_from([[], "object", 3, None, True]).map(
        lambda schema: {"name": "x", "inputSchema": schema}
    ),
    st.just({"name": "x", "inputSchema": {"type": "string"}}),
    st.just({"inputSchema": {"type": "object"}}),
    st.just("not a tool"),
)


@FUZZ
@given(st.lists(tool_names, unique=True, max_size=10), bad_entries, st.integers(0, 10))
def test_a_rejected_listing_leaves_the_registry_exactly_as_it_was(names, bad, where):
    """INV-3: one bad entry rejects everything; nothing is published."""
    registry = ToolRegistry()
    source = mcp_source("srv.x")
    good = [raw(n) for n in names]
    registry.replace_source(
        source, build_bindings("srv.x", CONFIG, good, registry.state, 64).bindings
    )
    state = registry.state
    listing = [*good]
    listing.insert(min(where, len(listing)), bad)
    with pytest.raises(CatalogRejected):
        registry.replace_source(
            source, build_bindings("srv.x", CONFIG, listing, registry.state, 64).bindings
        )
    assert registry.state is state


@FUZZ
@given(st.lists(tool_names, min_size=1, max_size=8))
def test_duplicate_names_in_one_listing_are_rejected(names):
    with pytest.raises(CatalogRejected, match="the name is listed twice"):
        names_of([raw(n) for n in [*names, names[0]]])


@FUZZ
@given(st.lists(schemas, min_size=1, max_size=5))
def test_deeply_nested_schemas_are_kept_whole(tool_schemas):
    tools = [raw(f"t{i}", schema) for i, schema in enumerate(tool_schemas)]
    state = ToolRegistry().state
    bindings = build_bindings("s", CONFIG, tools, state, 64).bindings
    for binding, schema in zip(
        sorted(bindings, key=lambda b: int(b.remote_name[1:])), tool_schemas, strict=True
    ):
        assert dict(binding.spec.input_schema) == schema


@FUZZ
@given(st.lists(tool_names, unique=True, max_size=10))
def test_an_mcp_listing_never_takes_a_builtin_name(names):
    """INV-5: a collision with a non-MCP source rejects the refresh."""
    builtin = Binding(
        "mcp__srv_x__n", BUILTIN, None, "n", ToolSpec("mcp__srv_x__n", "", {}), 0, False
    )
    registry = ToolRegistry([builtin])
    unique = list({t["name"]: t for t in [raw(n) for n in [*names, "n"]]}.values())
    with pytest.raises(CatalogRejected) as caught:
        build_bindings("srv.x", CONFIG, unique, registry.state, 64)
    assert caught.value.kind == "collision"
    assert registry.state.by_name["mcp__srv_x__n"].source == BUILTIN


def test_a_page_of_2048_tools_installs_and_one_more_is_a_cap():
    tools = [raw(f"t{i}") for i in range(MAX_TOOLS)]
    assert len(names_of(tools)) == MAX_TOOLS

    async def pages(cursor: str | None) -> dict[str, Any]:
        if cursor is None:
            return {"tools": tools, "nextCursor": "more"}
        return {"tools": [raw("extra")]}

    with pytest.raises(CatalogRejected, match="more than 2048 tools"):
        trio.run(read_listing, "s", pages)


@given(st.one_of(st.integers(), st.lists(st.text()), st.dictionaries(st.text(), st.text())))
def test_a_cursor_that_is_not_a_string_rejects_the_listing(cursor):
    async def pages(current: str | None) -> dict[str, Any]:
        return {"tools": [], "nextCursor": cursor}

    with pytest.raises(CatalogRejected, match="nextCursor is not a string"):
        trio.run(read_listing, "s", pages)
