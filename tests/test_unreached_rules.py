"""Rules no test reached (mutation testing, issue 33), each pinned by what it does: a
turn-item contributor that raises or returns None is skipped and the next one still
runs (SPEC §11.11, INV-4); an x-mcp-header map is learned for every tool of a page
after an entry that is no tool (§11.2); a server with no capabilities runs no tasks
(§5.4); a tool hidden from the model is traced hidden (§14.1); a stderr pipe read after
it was finished is at its end; reloading the credentials of a server OAuth does not
apply to finds none (§11.18)."""

from __future__ import annotations

import logging
import types as pytypes
from typing import Any

import pytest
from mcp import StdioServerParameters

from mcpbind.impl import HostConfig, ServerConfig, ToolResult
from mcpbind.impl.catalog.listing import trace_tools
from mcpbind.impl.contributors import run_turn_items
from mcpbind.impl.wire.oauth import Authorizer
from mcpbind.impl.wire.sdk import HEADER_MAPS, teach_header_maps
from mcpbind.impl.wire.stderr import StderrPipe
from mcpbind.impl.wire.tasks import runs_tasks


class Raises:
    id = "raises"

    async def on_result(self, result: ToolResult) -> ToolResult | None:
        raise RuntimeError("notes are down")


class Passes:
    id = "passes"

    async def on_result(self, result: ToolResult) -> ToolResult | None:
        return None  # leaves the result as it is


class Signs:
    id = "signs"

    async def on_result(self, result: ToolResult) -> ToolResult | None:
        return ToolResult(result.call_id, result.status, result.output + "\n(signed)")


async def test_a_turn_item_contributor_that_raises_is_skipped_and_the_next_one_still_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpbind.contributors")
    result = await run_turn_items([Raises(), Signs()], ToolResult("c1", "ok", "done"))
    assert result == ToolResult("c1", "ok", "done\n(signed)")
    assert [r.getMessage() for r in caplog.records] == [
        "turn-item contributor 'raises' failed on call 'c1': RuntimeError: notes are down"
    ]


async def test_a_turn_item_contributor_that_returns_none_leaves_the_result_to_the_next_one() -> (
    None
):
    result = await run_turn_items([Passes(), Signs()], ToolResult("c1", "ok", "done"))
    assert result == ToolResult("c1", "ok", "done\n(signed)")


def test_every_tool_of_a_page_after_an_entry_that_is_no_tool_gets_its_header_map() -> None:
    session = pytypes.SimpleNamespace(**{HEADER_MAPS: {}})
    schema = {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "R"}}}
    page = {"tools": [7, {"name": 8}, {"name": "locate", "inputSchema": schema}]}
    teach_header_maps(session, page)
    assert getattr(session, HEADER_MAPS) == {"locate": {("region",): "R"}}


@pytest.mark.parametrize("modern", [True, False])
def test_a_server_that_declares_no_capabilities_runs_no_tasks(modern: bool) -> None:
    assert runs_tasks(None, modern) is False


def test_a_tool_hidden_from_the_model_is_traced_hidden() -> None:
    config = ServerConfig(target=StdioServerParameters(command="s"))
    tools = [
        {"name": "seen", "inputSchema": {"type": "object"}},
        {
            "name": "app_only",
            "inputSchema": {"type": "object"},
            "_meta": {"ui": {"visibility": ["app"]}},
        },
    ]
    entries = trace_tools("s", config, tools, tasks=False)
    assert [(e["name"], e.get("hidden")) for e in entries] == [("seen", None), ("app_only", True)]


async def test_a_stderr_pipe_read_after_it_was_finished_is_at_its_end() -> None:
    lines: list[str] = []
    pipe = StderrPipe(lines.append)
    pipe.writer.write("first\nlast, cut")
    pipe.writer.flush()
    pipe.finish()  # the session is over: its reader may still be woken once
    await pipe.read()
    assert lines == ["first", "last, cut"]


@pytest.mark.parametrize(
    "config",
    [
        ServerConfig(target=StdioServerParameters(command="s")),
        ServerConfig(target="http://127.0.0.1:9/mcp", oauth=None),
        ServerConfig(target="http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer t"}),
    ],
    ids=["stdio", "http-without-oauth", "http-with-a-bearer-header"],
)
async def test_reloading_credentials_where_oauth_does_not_apply_finds_none(
    config: ServerConfig, tmp_path: Any
) -> None:
    host = HostConfig(
        servers={"s": config}, oauth_store="file", oauth_credentials_path=tmp_path / "c.json"
    )
    assert await Authorizer.for_host(host).reload("s", config) is False
