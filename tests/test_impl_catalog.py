"""SPEC §5.2-§5.5 on raw listings: caps, validation, filters, naming (the adapter's pure half)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind.impl import CatalogRejected, ServerConfig, ToolRegistry
from mcpbind.impl.catalog.listing import MAX_PAGES, MAX_TOOLS, build_bindings, read_listing


def raw(name: Any, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}, **extra}


CONFIG = ServerConfig(target="http://127.0.0.1:1/mcp")


def bind(tools: list[Any], config: ServerConfig = CONFIG) -> list[str]:
    state = ToolRegistry().state
    return [b.name for b in build_bindings("s", config, tools, state, 64).bindings]


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("not an object", "the entry is not a JSON object"),
        (raw(""), "name must be a non-empty string"),
        (raw(7), "name must be a non-empty string"),
        ({"name": "x"}, "inputSchema is not a JSON object"),
        ({"name": "x", "inputSchema": [1]}, "inputSchema is not a JSON object"),
        (
            {"name": "x", "inputSchema": {"type": "array"}},
            "inputSchema has type 'array', not 'object'",
        ),
        (raw("x", description=3), "description is not a string"),
        (raw("x", execution=[]), "execution is not a JSON object"),
        (raw("x", execution={"taskSupport": 1}), "execution.taskSupport is not a string"),
        (raw("x", annotations=[]), "annotations is not a JSON object"),
        (
            raw("x", annotations={"readOnlyHint": "yes"}),
            "annotations.readOnlyHint is not a boolean",
        ),
        (raw("x", annotations={"title": 1}), "annotations.title is not a string"),
        (raw("x", _meta=[]), "_meta is not a JSON object"),
        (
            raw("x", _meta={"ui": {"visibility": "model"}}),
            "_meta.ui.visibility is not a list of strings",
        ),
    ],
)
def test_one_invalid_entry_rejects_the_listing_naming_the_problem(entry, problem):
    """INV-3: nothing is dropped silently."""
    with pytest.raises(CatalogRejected) as caught:
        bind([raw("good"), entry])
    assert caught.value.kind == "invalid"
    assert problem in caught.value.reason


def test_a_disabled_invalid_tool_still_rejects_the_listing():
    config = ServerConfig(target="http://127.0.0.1:1/mcp", disabled_tools=["bad"])
    with pytest.raises(CatalogRejected):
        bind([raw("good"), {"name": "bad", "inputSchema": 1}], config)


def test_names_are_sanitised_and_read_only_comes_from_the_annotation():
    state = ToolRegistry().state
    tools = [raw("read.file", annotations={"readOnlyHint": True}), raw("write-file")]
    bindings = build_bindings("my server", CONFIG, tools, state, 64).bindings
    assert [(b.name, b.remote_name, b.read_only) for b in bindings] == [
        ("mcp__my_server__read_file", "read.file", True),
        ("mcp__my_server__write_file", "write-file", False),
    ]


@pytest.mark.parametrize(
    ("valid", "invalid", "problem"),
    [
        (True, 1, "annotations.readOnlyHint is not a boolean"),
        (False, 0, "annotations.readOnlyHint is not a boolean"),
        (True, 1.0, "annotations.readOnlyHint is not a boolean"),
    ],
)
def test_a_tool_decided_valid_once_is_decided_again_when_a_value_changes_type(
    valid, invalid, problem
):
    """SPEC §5.3: ``True == 1`` in Python, yet a listing whose hint turned from ``true``
    to ``1`` is invalid: what a refresh remembers of the tools it saw never stands for
    an entry that differs from them in a type."""
    assert bind([raw("t", annotations={"readOnlyHint": valid})]) == ["mcp__s__t"]
    with pytest.raises(CatalogRejected) as caught:
        bind([raw("t", annotations={"readOnlyHint": invalid})])
    assert problem in caught.value.reason


def test_a_listing_of_other_than_plain_values_is_decided_as_a_plain_one():
    """A listing handed over by a seam may hold tuples and subclasses of the builtin
    types: it is decided by the same rules (a tuple is no list of strings)."""

    class Name(str):
        pass

    assert bind([raw(Name("t"), annotations={"readOnlyHint": True})]) == ["mcp__s__t"]
    with pytest.raises(CatalogRejected, match="visibility is not a list of strings"):
        bind([raw("t", _meta={"ui": {"visibility": ("model",)}})])
    assert bind([raw("t", _meta={"ui": {"visibility": ["model"]}})]) == ["mcp__s__t"]


def test_a_tool_listed_again_unchanged_under_its_name_changes_nothing():
    """INV-1: the second identical listing publishes nothing, and the registry keeps the
    tool's spec as it was published."""
    registry = ToolRegistry()
    tools = [raw("a", description="first"), raw("b")]
    first = registry.replace_source(
        "mcp:s", build_bindings("s", CONFIG, tools, registry.state, 64).bindings
    )
    assert first is not None
    again = [raw("a", description="first"), raw("b")]  # equal values, new objects
    assert (
        registry.replace_source(
            "mcp:s", build_bindings("s", CONFIG, again, registry.state, 64).bindings
        )
        is None
    )
    assert registry.state is first
    changed = [raw("a", description="second"), raw("b")]
    second = registry.replace_source(
        "mcp:s", build_bindings("s", CONFIG, changed, registry.state, 64).bindings
    )
    assert second is not None
    assert second.by_name["mcp__s__a"].spec.description == "second"


def pages_of(*pages: dict[str, Any]):
    async def list_page(cursor: str | None) -> dict[str, Any]:
        index = 0 if cursor is None else int(cursor)
        return pages[index]

    return list_page


def page(tools: list[Any], next_cursor: Any = None) -> dict[str, Any]:
    result: dict[str, Any] = {"tools": tools}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def test_listing_follows_cursors_and_reports_each_request():
    sent: list[str | None] = []
    tools = await read_listing(
        "s", pages_of(page([raw("a")], "1"), page([raw("b")], "2"), page([raw("c")])), sent.append
    )
    assert [t["name"] for t in tools] == ["a", "b", "c"]
    assert sent == [None, "1", "2"]


async def test_an_empty_string_cursor_is_a_cursor():
    async def list_page(cursor: str | None) -> dict[str, Any]:
        return page([raw("a")], "") if cursor is None else page([raw("b")])

    tools = await read_listing("s", list_page)
    assert [t["name"] for t in tools] == ["a", "b"]


@pytest.mark.parametrize(
    ("pages", "cap"),
    [
        ([page([raw(f"t{i}") for i in range(MAX_TOOLS + 1)])], f"more than {MAX_TOOLS} tools"),
        ([page([], "0")], "a repeated cursor"),
        ([page([], "x" * (64 * 1024 + 1))], "a cursor longer than 65536 bytes"),
    ],
)
async def test_caps_reject_the_listing_naming_the_cap(pages, cap):
    with pytest.raises(CatalogRejected) as caught:
        await read_listing("s", pages_of(*pages))
    assert caught.value.kind == "cap"
    assert cap in caught.value.reason


async def test_more_than_the_page_cap_is_rejected():
    async def endless(cursor: str | None) -> dict[str, Any]:
        return page([], str(0 if cursor is None else int(cursor) + 1))

    with pytest.raises(CatalogRejected, match=f"more than {MAX_PAGES} pages"):
        await read_listing("s", endless)


@pytest.mark.parametrize("bad", [None, [], {"tools": "x"}, {"tools": [], "nextCursor": 3}])
async def test_a_malformed_page_is_invalid(bad):
    async def list_page(cursor: str | None) -> Any:
        return bad

    with pytest.raises(CatalogRejected) as caught:
        await read_listing("s", list_page)
    assert caught.value.kind == "invalid"


async def test_listing_is_cancellable():
    async def stuck(cursor: str | None) -> Any:
        await anyio.sleep_forever()

    with anyio.move_on_after(0.01) as scope:
        await read_listing("s", stuck)
    assert scope.cancelled_caught


BAD_HEADER = {"type": "object", "properties": {"o": {"type": "object", "x-mcp-header": "O"}}}


@pytest.mark.parametrize(
    ("target", "tasks", "left_out"),
    [
        ("http://127.0.0.1:1/mcp", False, ["task", "header"]),
        (object(), False, ["task"]),
        ("http://127.0.0.1:1/mcp", True, ["header"]),
        (object(), True, []),
    ],
    ids=["http", "not-http", "http-runs-tasks", "not-http-runs-tasks"],
)
def test_tools_to_leave_out_are_decided_per_tool_and_by_transport(target, tasks, left_out):
    """SPEC §5.4: taskSupport "required" on a server that runs no tasks (any transport;
    one that runs tasks calls it as a task, §8.12); an invalid x-mcp-header on an HTTP
    connection only; "optional" and "forbidden" are ordinary tools."""
    tools = [
        raw("plain"),
        raw("task", execution={"taskSupport": "required"}),
        raw("maybe", execution={"taskSupport": "optional"}),
        {"name": "header", "inputSchema": BAD_HEADER},
    ]
    config = ServerConfig(target=target)
    decision = build_bindings("s", config, tools, ToolRegistry().state, 64, tasks=tasks)
    assert [e.tool for e in decision.excluded] == left_out
    kinds = {"task": "task_required", "header": "x_mcp_header"}
    assert [e.kind for e in decision.excluded] == [kinds[t] for t in left_out]
    supports = {b.remote_name: b.spec.task_support for b in decision.bindings}
    assert supports.get("task", "required") == "required"
    assert supports.get("maybe") == "optional"
    installed = {b.remote_name for b in decision.bindings}
    assert installed == {"plain", "maybe", "task", "header"} - set(left_out)
