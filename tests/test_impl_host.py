"""The runtime against real in-process MCP servers (SPEC §5-§8, issue 3)."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from testservers.inproc import Probe, announce, fs_server, paged_server, tool

from mcpbind.impl import (
    BuiltinTool,
    DuplicateCallId,
    Host,
    HostClosed,
    HostConfig,
    ServerConfig,
    UnknownServer,
)
from mcpbind.impl.calls.encoding import ERROR_LINE
from mcpbind.model import texts


def config(*, policy="revalidate", **servers: ServerConfig) -> HostConfig:
    return HostConfig(servers=servers, binding_policy=policy)


async def test_facade_samples_a_step_and_routes_a_call_by_its_raw_name():
    async with Host.open(config(fs=ServerConfig(target=fs_server()))) as host:
        snap = host.sample()
        assert snap.generation == 1
        names = [spec.name for spec in snap.specs]
        assert names == sorted(names)
        assert "mcp__fs__read" in names
        binding = snap.binding("mcp__fs__read")
        assert binding is not None
        assert (binding.server, binding.remote_name) == ("fs", "read")
        result = await host.call(snap, "call-1", "mcp__fs__read", {"path": "x"})
        assert (result.call_id, result.status) == ("call-1", "ok")
        assert result.output.startswith("Wall time: ")
        assert result.output.endswith('{"result":"contents of x"}')


async def test_arguments_may_be_json_text_and_empty_text_means_an_empty_object():
    async with Host.open(config(fs=ServerConfig(target=fs_server()))) as host:
        snap = host.sample()
        ok = await host.call(snap, "c1", "mcp__fs__read", json.dumps({"path": "y"}))
        assert ok.status == "ok"
        assert "contents of y" in ok.output
        empty = await host.call(snap, "c2", "mcp__fs__stats", "")
        assert empty.status == "ok"
        assert empty.output.endswith('{"files":3,"bytes":42}')


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ("[1, 2]", "JSON list where an object is required"),
        (
            "{not json",
            "not valid JSON (Expecting property name enclosed in double quotes at position 1)",
        ),
        (42, "int where an object is required"),
        ({"path": {"a", "b"}}, "set at arguments.path, which JSON cannot carry"),
        ({"path": [b"x"]}, "bytes at arguments.path[0], which JSON cannot carry"),
        ({1: "x"}, "int key 1 at arguments, which JSON cannot carry"),
    ],
)
async def test_arguments_that_are_not_an_object_end_error_before_anything_is_sent(
    arguments, problem
):
    probe = Probe()
    async with Host.open(config(fs=ServerConfig(target=fs_server(probe)))) as host:
        result = await host.call(host.sample(), "c1", "mcp__fs__read", arguments)
    assert result.status == "error"
    assert result.output == texts.BAD_ARGUMENTS.format(name="mcp__fs__read", problem=problem)
    assert probe.calls == []


async def test_arguments_made_of_frozen_mappings_and_tuples_reach_the_server_as_json():
    """What mcpbind hands out (a frozen schema, tuples) may go back in as arguments."""
    server = MCPServer("echo")

    @server.tool(description="Echo a value")
    async def echo(value: dict[str, Any]) -> str:
        return json.dumps(value, sort_keys=True)

    async with Host.open(config(e=ServerConfig(target=server))) as host:
        step = host.sample()
        schema = step.full_input_schema("mcp__e__echo")
        assert schema is not None
        assert not isinstance(schema, dict)
        frozen = MappingProxyType({"schema": schema, "pair": (1, "two")})
        result = await host.call(step, "c1", "mcp__e__echo", {"value": frozen})
    assert result.status == "ok", result.output
    echoed = json.loads(json.loads(result.output.split("\n", 1)[1])["result"])
    assert echoed == {"pair": [1, "two"], "schema": json.loads(json.dumps(dict(schema)))}


async def test_server_is_error_becomes_an_explicit_error_result():
    async with Host.open(config(fs=ServerConfig(target=fs_server()))) as host:
        result = await host.call(host.sample(), "c1", "mcp__fs__fail", {})
    assert result.status == "error"
    assert ERROR_LINE in result.output
    assert "Error executing tool fail" in result.output


async def test_unknown_name_is_unsupported():
    async with Host.open(config(fs=ServerConfig(target=fs_server()))) as host:
        result = await host.call(host.sample(), "c1", "mcp__fs__nope", {})
    assert result.status == "unsupported"
    assert result.output == texts.UNSUPPORTED.format(name="mcp__fs__nope")


async def test_a_json_rpc_error_fails_only_that_call():
    server = paged_server([[tool("explode"), tool("fine")]])
    async with Host.open(config(p=ServerConfig(target=server))) as host:
        snap = host.sample()
        failed = await host.call(snap, "c1", "mcp__p__explode", {})
        fine = await host.call(snap, "c2", "mcp__p__fine", {})
    assert failed.status == "failed"
    assert failed.output.startswith("server 'p' answered the call of 'explode' with an error: ")
    assert "the server exploded" in failed.output
    assert fine.status == "ok"


async def test_reused_call_id_raises_a_typed_error_and_produces_no_second_result():
    async with Host.open(config(fs=ServerConfig(target=fs_server()))) as host:
        snap = host.sample()
        await host.call(snap, "c1", "mcp__fs__read", {"path": "a"})
        with pytest.raises(DuplicateCallId, match="call_id 'c1' was already used"):
            await host.call(snap, "c1", "mcp__fs__read", {"path": "a"})
        assert host.statistics().results == {"ok": 1}


async def test_cancel_ends_the_call_cancelled_and_the_server_sees_its_handler_cancelled():
    """INV-7 (in-process direct dispatch cancels the handler itself)."""
    probe = Probe()
    async with Host.open(config(fs=ServerConfig(target=fs_server(probe)))) as host:
        snap = host.sample()
        results = []

        async def run() -> None:
            results.append(await host.call(snap, "c1", "mcp__fs__slow", {"tag": "t1"}))

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(run)
            while probe.calls != ["slow:t1"]:
                await anyio.sleep(0.001)
            host.cancel("c1")
        assert results[0].status == "cancelled"
        assert results[0].output == texts.CANCELLED
        assert probe.cancelled == ["t1"]
        host.cancel("c1")  # no effect once it ended
        assert host.statistics().results == {"cancelled": 1}


async def test_timeout_ends_the_call_timed_out_and_cancels_it_at_the_server():
    probe = Probe()
    server = ServerConfig(target=fs_server(probe), tool_timeout_sec=0.2)
    async with Host.open(config(fs=server)) as host:
        result = await host.call(host.sample(), "c1", "mcp__fs__slow", {"tag": "late"})
    assert result.status == "timed_out"
    assert result.output == texts.TIMED_OUT.format(seconds="0.2 seconds")
    assert probe.cancelled == ["late"]


async def test_exclusive_calls_never_overlap_and_read_only_ones_do():
    """INV-9: the lane is per step; read-only tools take the parallel lane."""
    probe = Probe()
    async with Host.open(config(fs=ServerConfig(target=fs_server(probe)))) as host:
        snap = host.sample()
        async with anyio.create_task_group() as nursery:
            for i in range(5):
                nursery.start_soon(host.call, snap, f"w{i}", "mcp__fs__write", {"path": str(i)})
        assert probe.peak["write"] == 1
        async with anyio.create_task_group() as nursery:
            for i in range(5):
                nursery.start_soon(host.call, snap, f"r{i}", "mcp__fs__read", {"path": str(i)})
        assert probe.peak["read"] > 1


async def test_parallel_server_lets_exclusive_tools_overlap():
    probe = Probe()
    server = ServerConfig(target=fs_server(probe), supports_parallel_tool_calls=True)
    async with Host.open(config(fs=server)) as host:
        snap = host.sample()
        async with anyio.create_task_group() as nursery:
            for i in range(5):
                nursery.start_soon(host.call, snap, f"w{i}", "mcp__fs__write", {"path": str(i)})
    assert probe.peak["write"] > 1


async def test_three_hundred_concurrent_calls_each_get_exactly_one_result():
    """INV-4 under load."""
    async with Host.open(config(fs=ServerConfig(target=fs_server()))) as host:
        snap = host.sample()
        results = {}

        async def one(i: int) -> None:
            result = await host.call(snap, f"c{i}", "mcp__fs__read", {"path": str(i)})
            assert result.call_id not in results
            results[result.call_id] = result

        async with anyio.create_task_group() as nursery:
            for i in range(300):
                nursery.start_soon(one, i)
        assert len(results) == 300
        assert {r.status for r in results.values()} == {"ok"}
        assert host.statistics().calls_in_flight == 0


async def test_refresh_of_an_unchanged_server_publishes_nothing():
    """INV-1."""
    async with Host.open(config(fs=ServerConfig(target=fs_server()))) as host:
        outcome = await host.refresh("fs")
        assert (outcome.status, outcome.generation) == ("unchanged", 1)
        assert host.sample().generation == 1


async def test_list_changed_refreshes_the_server_and_a_sampled_step_is_unchanged():
    """LIVE-2 over subscriptions/listen; INV-2 for the step sampled before."""
    async with Host.open(config(fs=ServerConfig(target=fs_server()))) as host:
        before = host.sample()
        result = await host.call(before, "c1", "mcp__fs__grow", {"tool": "fresh"})
        assert result.status == "ok"
        with anyio.fail_after(5):
            while host.sample().binding("mcp__fs__fresh") is None:
                await anyio.sleep(0.01)
        after = host.sample()
        assert after.generation == before.generation + 1
        assert before.binding("mcp__fs__fresh") is None
        assert "mcp__fs__fresh" not in {s.name for s in before.specs}


async def test_a_sampled_step_survives_a_refresh_that_removes_its_tool_under_both_policies():
    """INV-2 with SPEC §7.2/§7.3: the name stays; revalidate refuses, frozen sends."""
    for policy, status in (("revalidate", "unavailable"), ("frozen", "error")):
        server = fs_server()
        async with Host.open(config(policy=policy, fs=ServerConfig(target=server))) as host:
            snap = host.sample()
            server.remove_tool("write")
            outcome = await host.refresh("fs")
            assert outcome.status == "installed"
            assert snap.binding("mcp__fs__write") is not None
            assert host.sample().binding("mcp__fs__write") is None
            result = await host.call(snap, "c1", "mcp__fs__write", {"path": "p"})
            assert result.status == status, policy
            if status == "unavailable":
                assert result.output == texts.UNAVAILABLE.format(
                    name="mcp__fs__write", server="fs", tool="write"
                )
            else:
                # the server no longer has it: it answers isError, the host routed as captured
                assert "Unknown tool" in result.output


async def test_a_paged_listing_installs_whole_and_a_failed_page_keeps_the_catalog():
    """INV-3."""
    pages = [[tool("a"), tool("b")], [tool("c")], [tool("d")]]
    async with Host.open(config(p=ServerConfig(target=paged_server(pages)))) as host:
        names = [s.name for s in host.sample().specs]
        assert names == ["mcp__p__a", "mcp__p__b", "mcp__p__c", "mcp__p__d"]
    async with Host.open(config(p=ServerConfig(target=paged_server(pages, fail_page=2)))) as host:
        outcome = await host.refresh("p")
        assert outcome.status == "rejected"
        assert outcome.kind == "list_failed"
        assert "page 2 is broken" in (outcome.reason or "")
        assert host.sample().specs == ()
        assert host.sample().generation == 0


@pytest.mark.parametrize(
    ("pages", "kind", "fragment"),
    [
        ([[tool("a"), tool("")]], "invalid", "tool '#1': name must be a non-empty string"),
        ([[tool("a")], [tool("a")]], "invalid", "tool 'a': the name is listed twice"),
        ([[tool("a")], [tool("b")]], "cap", "a repeated cursor"),
    ],
)
async def test_one_bad_entry_or_cap_rejects_the_whole_listing(pages, kind, fragment):
    cursors = (lambda i: "same-1") if kind == "cap" else (lambda i: f"page-{i}")
    server = paged_server(pages, cursors=cursors)
    if kind == "cap":
        pages.append([tool("c")])
    async with Host.open(config(p=ServerConfig(target=server))) as host:
        outcome = await host.refresh("p")
    assert outcome.status == "rejected"
    assert outcome.kind == kind
    assert fragment in (outcome.reason or "")


async def test_enabled_disabled_and_visibility_filters():
    pages = [
        [
            tool("keep"),
            tool("drop"),
            tool("ui_only", _meta={"ui": {"visibility": ["app"]}}),
            tool("both", _meta={"ui": {"visibility": ["app", "model"]}}),
            tool("other"),
        ]
    ]
    server = ServerConfig(
        target=paged_server(pages),
        enabled_tools=["keep", "drop", "ui_only", "both"],
        disabled_tools=["drop"],
    )
    async with Host.open(config(p=server)) as host:
        assert [s.name for s in host.sample().specs] == ["mcp__p__both", "mcp__p__keep"]


async def test_delimiter_ambiguity_and_sanitising_collisions_get_distinct_stable_names():
    """INV-5, INV-6: a__b/c and a/b__c; git.hub and git_hub."""
    a = ServerConfig(target=paged_server([[tool("b__c")]]))
    ab = ServerConfig(target=paged_server([[tool("c")]]))
    async with Host.open(HostConfig(servers={"a": a, "a__b": ab})) as host:
        names = {s.name for s in host.sample().specs}
        assert len(names) == 2
        assert "mcp__a__b__c" in names
        before = {b.identity: b.name for b in host.sample().names.values()}
        await host.refresh("a")
        await host.refresh("a__b")
        after = {b.identity: b.name for b in host.sample().names.values()}
        assert before == after


async def test_a_server_tool_cannot_shadow_a_builtin():
    """INV-5: the refresh is rejected naming both; the builtin keeps its name."""

    async def handler(arguments):
        return "builtin ran"

    builtin = BuiltinTool("mcp__p__admin", "host tool", {"type": "object"}, handler)
    server = ServerConfig(target=paged_server([[tool("admin"), tool("ok")]]))
    async with Host.open(HostConfig(servers={"p": server}, builtins=(builtin,))) as host:
        outcome = await host.refresh("p")
        assert outcome.status == "rejected"
        assert outcome.kind == "collision"
        assert "mcp__p__admin" in (outcome.reason or "")
        assert "'builtin'" in (outcome.reason or "")
        snap = host.sample()
        assert [s.name for s in snap.specs] == ["mcp__p__admin"]
        result = await host.call(snap, "c1", "mcp__p__admin", {})
        assert (result.status, result.output.splitlines()[-1]) == ("ok", "builtin ran")


async def test_misuse_gets_typed_errors():
    async with Host.open(config(fs=ServerConfig(target=fs_server()))) as host:
        with pytest.raises(
            UnknownServer, match="unknown server 'nope'; the configured servers are: fs"
        ):
            await host.refresh("nope")
        snap = host.sample()
    with pytest.raises(HostClosed):
        host.sample()
    with pytest.raises(HostClosed):
        await host.call(snap, "c9", "mcp__fs__read", {})


async def test_announce_outside_a_request_also_triggers_a_refresh():
    server = fs_server()
    async with Host.open(config(fs=ServerConfig(target=server))) as host:
        server.add_tool(lambda: "x", name="late", description="late tool")
        await announce(server)
        with anyio.fail_after(5):
            while host.sample().binding("mcp__fs__late") is None:
                await anyio.sleep(0.01)


async def test_a_queued_exclusive_call_can_be_cancelled_or_time_out_without_being_sent():
    """INV-7/INV-9: nothing reaches the server for a call that never left the lane."""
    probe = Probe()
    server = ServerConfig(target=fs_server(probe), tool_timeout_sec=0.5)
    async with Host.open(config(fs=server)) as host:
        snap = host.sample()
        results = {}

        async def run(call_id: str, tag: str) -> None:
            results[call_id] = await host.call(snap, call_id, "mcp__fs__slow", {"tag": tag})

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(run, "holder", "h")
            while probe.calls != ["slow:h"]:
                await anyio.sleep(0.001)
            nursery.start_soon(run, "queued1", "q1")
            nursery.start_soon(run, "queued2", "q2")
            await anyio.sleep(0.05)
            host.cancel("queued1")
        assert results["queued1"].status == "cancelled"
        assert results["queued2"].status == "timed_out"
        assert results["queued2"].output in (
            texts.TIMED_OUT_QUEUED.format(seconds="0.5 seconds"),
            texts.TIMED_OUT.format(seconds="0.5 seconds"),
        )
        assert "slow:q1" not in probe.calls
        assert results["holder"].status == "timed_out"
        assert probe.cancelled in (["h"], ["h", "q2"])


async def test_list_changed_notification_on_a_handshake_era_connection_refreshes():
    """LIVE-2 on the legacy protocol: notifications/tools/list_changed."""
    from mcpbind.impl import McpConnector

    conf = config(fs=ServerConfig(target=fs_server()))
    async with Host.open(conf, connector=McpConnector(mode="legacy")) as host:
        result = await host.call(host.sample(), "c1", "mcp__fs__grow_legacy", {"tool": "old"})
        assert result.status == "ok", result.output
        with anyio.fail_after(5):
            while host.sample().binding("mcp__fs__old") is None:
                await anyio.sleep(0.01)


def test_output_longer_than_the_limit_is_cut_to_exactly_the_limit_with_a_marker():
    from mcpbind.impl.calls.encoding import truncate

    text = "x" * 1000
    cut = truncate(text, 200)
    assert len(cut) == 200
    assert cut.endswith("[mcpbind: output truncated: 1000 characters, limit 200]")
    assert truncate("short", 200) == "short"


async def test_output_limit_applies_to_call_results():
    conf = HostConfig(servers={"fs": ServerConfig(target=fs_server())}, output_limit=100)
    async with Host.open(conf) as host:
        result = await host.call(host.sample(), "c1", "mcp__fs__read", {"path": "p" * 500})
    assert result.status == "ok"
    assert len(result.output) == 100
    assert result.output.endswith("characters, limit 100]")
