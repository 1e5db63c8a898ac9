"""SPEC §11.20: resources the model can use, against a real MCP server of ours that
publishes resources and templates and changes them; on trio and asyncio."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer
from testservers.inproc import fs_server
from testservers.resources import LOGO, PAGES, PIXEL, README, SLOW, docs_server

from mcpbind.impl import (
    BuiltinTool,
    ConfigError,
    ContributorRejected,
    Host,
    HostConfig,
    ServerConfig,
)
from mcpbind.impl.catalog.registry import Binding, Resources, ToolRegistry
from mcpbind.impl.catalog.resources import list_output, read_binding
from mcpbind.impl.seams import PRODUCTION, Seams
from mcpbind.impl.trace import TraceRecorder, trace_header
from mcpbind.impl.wire.connector import McpConnector
from mcpbind.model import texts
from mcpbind.model.refine import NotRefinable, refine
from mcpbind.model.trace import check_trace, parse_trace
from mcpbind.properties.impl_mutants import RESOURCE_MUTANTS, ImplMutant

RESOURCE_TOOLS = {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}


def body(output: str) -> object:
    """The JSON after the wall-time header."""
    header, _, rest = output.partition("\n")
    assert header.startswith("Wall time: ")
    return json.loads(rest)


async def wait_for_generation(host: Host, generation: int) -> None:
    with anyio.fail_after(5):
        while host.sample().generation < generation:
            await anyio.sleep(0.01)


async def test_the_resource_tools_show_only_for_servers_listing_resources_and_turn_off():
    docs = docs_server()
    async with Host.open(HostConfig(servers={"fs": ServerConfig(target=fs_server())})) as host:
        assert not RESOURCE_TOOLS & {s.name for s in host.sample().specs}
    servers = {"docs": ServerConfig(target=docs.server)}
    async with Host.open(HostConfig(servers=servers)) as host:
        step = host.sample()
        assert {s.name for s in step.specs} >= RESOURCE_TOOLS
        read = step.binding("read_mcp_resource")
        assert read is not None
        assert read.spec.input_schema["required"] == ["server", "uri"]
    async with Host.open(HostConfig(servers=servers, resource_tools=False)) as host:
        step = host.sample()
        assert not RESOURCE_TOOLS & {s.name for s in step.specs}
        result = await host.call(step, "c1", "list_mcp_resources", {})
        assert result.status == "unsupported"


async def test_the_lists_answer_from_the_step_and_a_read_is_encoded_as_a_tool_result():
    docs = docs_server()
    config = HostConfig(servers={"docs": ServerConfig(target=docs.server)})
    async with Host.open(config) as host:
        step = host.sample()
        listed = await host.call(step, "c1", "list_mcp_resources", {})
        assert listed.status == "ok"
        entries = body(listed.output)["resources"]  # type: ignore[index]
        assert [(e["server"], e["uri"]) for e in entries] == [
            ("docs", README),
            ("docs", LOGO),
            ("docs", SLOW),
        ]
        templates = await host.call(step, "c2", "list_mcp_resource_templates", {"server": "docs"})
        page = body(templates.output)
        assert page == {
            "server": "docs",
            "resourceTemplates": [{"server": "docs", "uriTemplate": PAGES, "name": "page"}],
        }
        read = await host.call(step, "c3", "read_mcp_resource", {"server": "docs", "uri": README})
        assert read.status == "ok"
        assert read.output.endswith("\nread me first")
        logo = await host.call(step, "c4", "read_mcp_resource", {"server": "docs", "uri": LOGO})
        assert logo.output.endswith(f"[image omitted: image/png, {len(PIXEL)} base64 characters]")
        assert docs.reads == [README, LOGO]  # the lists sent nothing
        nobody = await host.call(step, "c5", "read_mcp_resource", {"server": "x", "uri": README})
        assert (nobody.status, nobody.output) == (
            "error",
            texts.RESOURCE_NO_SERVER.format(server="x"),
        )
        cursor = await host.call(step, "c6", "list_mcp_resources", {"cursor": "100"})
        assert cursor.status == "error"
        assert "cursor can only be used when a server is specified" in cursor.output


async def test_an_image_resource_reaches_an_image_capable_model_as_an_item():
    docs = docs_server()
    config = HostConfig(servers={"docs": ServerConfig(target=docs.server)}, image_capable=True)
    async with Host.open(config) as host:
        step = host.sample()
        logo = await host.call(step, "c1", "read_mcp_resource", {"server": "docs", "uri": LOGO})
        assert logo.status == "ok"
        assert [(item.mime_type, item.data) for item in logo.items] == [("image/png", PIXEL)]


async def test_a_resource_change_is_one_publication_and_an_earlier_step_lists_what_it_saw():
    """INV-1 (one generation for the resource refresh) and INV-2 (the earlier step keeps
    its list), the change heard on ``subscriptions/listen``'s ``resourcesListChanged``."""
    await resource_change()


async def test_a_servers_prompt_list_change_is_neither_a_catalog_change_nor_a_fault(caplog):
    """The session's other notifications reach the handler that hears list changes
    (SPEC §11.20): one about prompts, which mcpbind does not offer, refreshes nothing and
    is not logged as a transport fault (a handshake-era session: the 2026-07-28 one hears
    list changes on ``subscriptions/listen``)."""
    server = MCPServer("prompts")

    @server.tool(description="Announce a change of the prompts, then answer")
    async def change(ctx: Context) -> str:
        await ctx.request_context.session.send_prompt_list_changed()
        return "changed"

    caplog.set_level(logging.DEBUG, logger="mcpbind.connection")
    config = HostConfig(servers={"prompts": ServerConfig(target=server)})
    async with Host.open(config, connector=McpConnector("legacy")) as host:
        step = host.sample()
        result = await host.call(step, "c1", "mcp__prompts__change", {})
        assert result.status == "ok"
        assert host.sample().generation == step.generation
    faults = [r.getMessage() for r in caplog.records if "transport fault" in r.getMessage()]
    assert faults == []


@pytest.mark.parametrize("mutant", RESOURCE_MUTANTS, ids=lambda m: m.name)
async def test_each_resource_mutant_fails_the_resource_change_scenario(mutant: ImplMutant):
    """SPEC §12.7: the runtime mutants of SPEC §11.20, killed over a real server."""
    with pytest.raises(AssertionError):
        await resource_change(mutant.seams)


async def resource_change(seams: Seams = PRODUCTION) -> None:
    docs = docs_server()
    config = HostConfig(servers={"docs": ServerConfig(target=docs.server)})
    async with Host.open(config, seams=seams) as host:
        before = host.sample()
        docs.add("docs://news", "fresh")
        await docs.announce()
        await wait_for_generation(host, before.generation + 1)
        after = host.sample()
        assert after.generation == before.generation + 1
        old = await host.call(before, "c1", "list_mcp_resources", {"server": "docs"})
        new = await host.call(after, "c2", "list_mcp_resources", {"server": "docs"})
        assert "docs://news" not in {e["uri"] for e in body(old.output)["resources"]}  # type: ignore[index]
        assert "docs://news" in {e["uri"] for e in body(new.output)["resources"]}  # type: ignore[index]
        outcome = await host.refresh("docs")  # nothing changed since: nothing published
        assert (outcome.status, outcome.generation) == ("unchanged", after.generation)


async def test_a_refresh_reads_the_resource_lists_again_only_when_a_change_of_them_was_heard():
    """SPEC §11.20: a change of the tools alone keeps the resources read before (no
    ``resources/list`` sent), and so does a refresh the host asks for; a change of the
    resources, or ``Host.refresh(server, resources=True)``, reads them again."""
    docs = docs_server()
    config = HostConfig(servers={"docs": ServerConfig(target=docs.server)})
    async with Host.open(config) as host:
        first = host.sample()
        assert docs.resource_lists == 1
        await docs.add_tool("more")
        await wait_for_generation(host, first.generation + 1)
        tools_changed = host.sample()
        assert tools_changed.binding("mcp__docs__more") is not None
        assert docs.resource_lists == 1
        listed = await host.call(tools_changed, "c1", "list_mcp_resources", {"server": "docs"})
        assert [e["uri"] for e in body(listed.output)["resources"]] == [README, LOGO, SLOW]  # type: ignore[index]
        docs.add("docs://news", "fresh")
        await docs.announce()
        await wait_for_generation(host, tools_changed.generation + 1)
        assert docs.resource_lists == 2
        assert (await host.refresh("docs")).status == "unchanged"
        assert docs.resource_lists == 2
        assert (await host.refresh("docs", resources=True)).status == "unchanged"
        assert docs.resource_lists == 3


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
async def test_a_read_of_a_resource_the_server_dropped_follows_the_binding_policy(policy: str):
    """SPEC §7 for resources: ``revalidate`` answers ``unavailable`` with nothing sent;
    ``frozen`` reads as captured (the server then answers as it does). The change comes
    as ``notifications/resources/list_changed`` on a handshake-era session."""
    docs = docs_server()
    config = HostConfig(servers={"docs": ServerConfig(target=docs.server)}, binding_policy=policy)
    async with Host.open(config, connector=McpConnector("legacy")) as host:
        before = host.sample()
        dropped = await host.call(before, "c1", "mcp__docs__drop", {"uri": README})
        assert dropped.status == "ok"
        await wait_for_generation(host, before.generation + 1)
        read = await host.call(before, "c2", "read_mcp_resource", {"server": "docs", "uri": README})
        if policy == "revalidate":
            text = texts.RESOURCE_UNAVAILABLE.format(uri=README, server="docs")
            assert (read.status, read.output) == ("unavailable", text)
            assert docs.reads == []
        else:
            assert read.status == "failed"  # the server no longer has it: its error
            assert f"no resource {README}" in read.output
            assert docs.reads == [README]


async def test_a_resource_link_in_a_tool_result_is_read_end_to_end():
    docs = docs_server()
    config = HostConfig(servers={"docs": ServerConfig(target=docs.server)})
    async with Host.open(config) as host:
        step = host.sample()
        linked = await host.call(step, "c1", "mcp__docs__link", {"uri": "docs://pages/intro"})
        assert "[resource link: a page of the docs <docs://pages/intro>]" in linked.output
        uri = linked.output.split("<", 1)[1].split(">", 1)[0]
        read = await host.call(step, "c2", "read_mcp_resource", {"server": "docs", "uri": uri})
        assert (read.status, read.output.rsplit("\n", 1)[1]) == ("ok", "the page intro")


async def test_a_read_in_flight_is_cancelled_at_the_server_and_ends_once():
    """A read is a call: ``Host.cancel`` ends it ``cancelled``, once, and the server is told
    (INV-4, INV-7)."""
    docs = docs_server()
    config = HostConfig(servers={"docs": ServerConfig(target=docs.server)})
    async with Host.open(config) as host:
        step = host.sample()
        results = []

        async def read() -> None:
            arguments = {"server": "docs", "uri": SLOW}
            results.append(await host.call(step, "c1", "read_mcp_resource", arguments))

        async with anyio.create_task_group() as group:
            group.start_soon(read)
            with anyio.fail_after(5):
                while SLOW not in docs.reads:
                    await anyio.sleep(0.01)
            host.cancel("c1")
        assert [(r.call_id, r.status) for r in results] == [("c1", "cancelled")]
        with anyio.fail_after(5):
            while SLOW not in docs.cancelled:
                await anyio.sleep(0.01)
        assert host.statistics().results == {"cancelled": 1}


async def test_reads_are_read_only_calls_that_take_no_lane_and_run_beside_one_another():
    """INV-9: ``read_mcp_resource`` is read-only, so a read of one server runs while another
    read of it is in flight (an exclusive call would wait for the first to end)."""
    docs = docs_server()
    config = HostConfig(servers={"docs": ServerConfig(target=docs.server)})
    async with Host.open(config) as host:
        step = host.sample()
        binding = step.binding("read_mcp_resource")
        assert binding is not None
        assert binding.read_only
        ended: list[str] = []

        async def read(call_id: str, uri: str) -> None:
            result = await host.call(
                step, call_id, "read_mcp_resource", {"server": "docs", "uri": uri}
            )
            ended.append(f"{call_id} {result.status}")

        async with anyio.create_task_group() as group:
            group.start_soon(read, "slow", SLOW)
            await anyio.wait_all_tasks_blocked()
            assert docs.reads == [SLOW]
            group.start_soon(read, "quick", README)
            await anyio.wait_all_tasks_blocked()
            assert (docs.reads, ended) == ([SLOW, README], ["quick ok"])
            docs.release.set()
        assert ended == ["quick ok", "slow ok"]


async def test_a_read_that_outlasts_the_tool_timeout_ends_timed_out_and_is_cancelled():
    """A read is a call: the server's ``tool_timeout_sec`` bounds it (LIVE-1, INV-7)."""
    docs = docs_server()
    server = ServerConfig(target=docs.server, tool_timeout_sec=0.2)
    async with Host.open(HostConfig(servers={"docs": server})) as host:
        step = host.sample()
        read = await host.call(step, "c1", "read_mcp_resource", {"server": "docs", "uri": SLOW})
        assert read.status == "timed_out"
        with anyio.fail_after(5):
            while SLOW not in docs.cancelled:
                await anyio.sleep(0.01)


async def test_a_traced_read_refines_against_the_model_and_a_list_is_not_refinable():
    """SPEC §14.5: a read of a listed resource is written as the model's
    ``read_mcp_resource(<server>, <uri>)`` and the trace refines; a list tool is a host
    tool refinement does not cover: ``NotRefinable``, never a false violation."""
    for tool, arguments in (
        ("read_mcp_resource", {"server": "docs", "uri": README}),
        ("list_mcp_resources", {}),
    ):
        docs = docs_server()
        config = HostConfig(servers={"docs": ServerConfig(target=docs.server)})
        out = io.StringIO()
        recorder = TraceRecorder(out, trace_header(config))
        async with Host.open(config, recorder=recorder) as host:
            step = host.sample()
            assert (await host.call(step, "c1", tool, arguments)).status == "ok"
        recorder.end()
        trace = parse_trace(out.getvalue().splitlines())
        assert list(check_trace(trace)) == []
        if tool == "read_mcp_resource":
            calls = [r.get("name") for r in trace if r.kind == "call"]
            assert calls == [f"read_mcp_resource(docs, {README})"]
            assert refine(trace).violation is None
        else:
            with pytest.raises(NotRefinable, match="list_mcp_resources"):
                refine(trace)


class NamedContributor:
    """A tool contributor (SPEC §11.11) with one tool of a given name."""

    id = "ext1"

    def __init__(self, name: str) -> None:
        self.name = name

    def tools(self) -> list[BuiltinTool]:
        async def handler(arguments: dict[str, Any]) -> str:
            return "mine"

        return [BuiltinTool(self.name, "a tool of the extension", {"type": "object"}, handler)]


async def test_the_resource_tool_names_are_reserved_while_they_are_on():
    """SPEC §11.20 (INV-5): a builtin or an extension tool cannot take their names."""
    with pytest.raises(ConfigError, match="'read_mcp_resource' is reserved while resource_tools"):
        HostConfig(builtins=(NamedContributor("read_mcp_resource").tools()[0],))
    clash = NamedContributor("list_mcp_resources")
    with pytest.raises(ContributorRejected) as raised:
        async with Host.open(HostConfig(contributors=(clash,))):
            pytest.fail("the host must not open")
    problem = "the name list_mcp_resources is reserved while resource_tools is on"
    assert str(raised.value) == texts.EXT_INVALID.format(contributor="ext1", problem=problem)
    async with Host.open(HostConfig(contributors=(clash,), resource_tools=False)) as host:
        step = host.sample()
        assert (await host.call(step, "c1", "list_mcp_resources", {})).output.endswith("mine")


def _listed_state() -> Any:
    """A registry whose ``a`` lists 101 resources and a template, ``b`` two resources;
    no other server (``c``, ``x``) publishes resources."""
    registry = ToolRegistry()
    many = tuple({"uri": f"docs://{i:03}", "name": f"r{i}"} for i in range(101))
    template = ({"uriTemplate": "docs://{x}", "name": "t"},)
    registry.replace_source("mcp:a", (), Resources(True, many, template))
    registry.replace_source("mcp:b", (), Resources(True, ({"uri": "b://1"}, {"uri": "b://2"})))
    return registry.state


def _a(*indexes: int) -> list[dict[str, str]]:
    return [{"server": "a", "uri": f"docs://{i:03}", "name": f"r{i}"} for i in indexes]


B_ENTRIES = [{"server": "b", "uri": "b://1"}, {"server": "b", "uri": "b://2"}]


def bad(tool: str, problem: str) -> str:
    return texts.RESOURCE_BAD_ARGUMENTS.format(name=tool, problem=problem)


def unknown_cursor(cursor: str) -> str:
    return bad("list_mcp_resources", f"unknown cursor {cursor!r}: give one this tool returned")


@pytest.mark.parametrize(
    ("tool", "arguments", "status", "body"),
    [
        ("list_mcp_resources", {}, "ok", {"resources": _a(*range(100))}),
        ("list_mcp_resources", {"server": "  "}, "ok", {"resources": _a(*range(100))}),
        (
            "list_mcp_resources",
            {"server": "a"},
            "ok",
            {"server": "a", "resources": _a(*range(100)), "nextCursor": "100"},
        ),
        (
            "list_mcp_resources",
            {"server": "a", "cursor": "1"},  # the last page, exactly full: no cursor
            "ok",
            {"server": "a", "resources": _a(*range(1, 101))},
        ),
        (
            "list_mcp_resources",
            {"server": " a ", "cursor": "100"},
            "ok",
            {"server": "a", "resources": _a(100)},
        ),
        (
            "list_mcp_resources",
            {"server": "a", "cursor": "101"},
            "ok",
            {"server": "a", "resources": []},
        ),
        (
            "list_mcp_resources",
            {"server": "a", "cursor": ""},
            "ok",
            {"server": "a", "resources": _a(*range(100)), "nextCursor": "100"},
        ),
        ("list_mcp_resources", {"server": "b"}, "ok", {"server": "b", "resources": B_ENTRIES}),
        (
            "list_mcp_resource_templates",
            {},
            "ok",
            {"resourceTemplates": [{"server": "a", "uriTemplate": "docs://{x}", "name": "t"}]},
        ),
        (
            "list_mcp_resource_templates",
            {"server": "b"},
            "ok",
            {"server": "b", "resourceTemplates": []},
        ),
        (
            "list_mcp_resources",
            {"server": "a", "cursor": "102"},
            "error",
            unknown_cursor("102"),
        ),
        (
            "list_mcp_resources",
            {"server": "a", "cursor": "-1"},
            "error",
            unknown_cursor("-1"),
        ),
        (
            "list_mcp_resources",
            {"cursor": "1"},
            "error",
            bad("list_mcp_resources", "cursor can only be used when a server is specified"),
        ),
        (
            "list_mcp_resources",
            {"server": 3},
            "error",
            bad("list_mcp_resources", "server must be a string"),
        ),
        (
            "list_mcp_resource_templates",
            {"server": "a", "cursor": 3},
            "error",
            bad("list_mcp_resource_templates", "cursor must be a string"),
        ),
        (
            "list_mcp_resources",
            {"server": "c"},
            "error",
            texts.RESOURCE_NO_SERVER.format(server="c"),
        ),
        (
            "list_mcp_resources",
            {"server": "x"},
            "error",
            texts.RESOURCE_NO_SERVER.format(server="x"),
        ),
    ],
)
def test_the_list_tools_answer_every_shape_of_arguments_from_the_steps_state(
    tool, arguments, status, body
):
    """SPEC §11.20: the servers that declare resources, sorted, a page of 100 entries
    (``nextCursor`` only when one server was named), each entry naming its server."""
    got_status, got = list_output(_listed_state(), tool, arguments)
    assert got_status == status
    assert (json.loads(got) if status == "ok" else got) == body


@pytest.mark.parametrize(
    ("arguments", "read"),
    [
        ({"server": "a", "uri": "docs://000"}, ("a", "docs://000", "listed")),
        ({"server": " a ", "uri": " docs://000 "}, ("a", "docs://000", "listed")),
        ({"server": "a", "uri": "docs://elsewhere"}, ("a", "docs://elsewhere", "unlisted")),
        ({"server": "b", "uri": "docs://000"}, ("b", "docs://000", "unlisted")),
        ({"uri": "docs://000"}, bad("read_mcp_resource", "server must be a non-empty string")),
        (
            {"server": " ", "uri": "docs://000"},
            bad("read_mcp_resource", "server must be a non-empty string"),
        ),
        ({"server": "a", "uri": 7}, bad("read_mcp_resource", "uri must be a non-empty string")),
        ({"server": "c", "uri": "x"}, texts.RESOURCE_NO_SERVER.format(server="c")),
    ],
)
def test_a_read_is_bound_to_its_server_and_uri_or_says_what_is_wrong(arguments, read):
    """SPEC §11.20: a read-only binding of the server's current generation, its remote name
    the URI, listed or not; or the text of the ``error``."""
    state = _listed_state()
    got = read_binding(state, arguments)
    if isinstance(read, str):
        assert got == read
        return
    assert isinstance(got, Binding)
    server, uri, how = read
    assert (got.name, got.source, got.server, got.remote_name, got.resource) == (
        "read_mcp_resource",
        f"mcp:{server}",
        server,
        uri,
        how,
    )
    assert got.read_only
    assert got.source_generation == state.catalog(f"mcp:{server}").generation


async def test_the_hosts_own_tools_are_read_only_and_a_servers_tool_is_not():
    """``tool_search`` and the three resource tools change nothing: their bindings say
    ``read_only``, which ``mcpbind catalog`` shows as ``parallel`` (a host may run them
    beside any call); a server's tool without ``readOnlyHint`` is not."""
    docs = docs_server()
    config = HostConfig(servers={"docs": ServerConfig(target=docs.server)}, defer_threshold=1)
    async with Host.open(config) as host:
        step = host.sample()
        shown = {s.name: step.binding(s.name) for s in step.specs}
        assert {n: b.read_only for n, b in shown.items() if b is not None} == {
            "tool_search": True,
            "list_mcp_resources": True,
            "list_mcp_resource_templates": True,
            "read_mcp_resource": True,
        }
        result = await host.call(step, "s1", "tool_search", {"query": "link"})
        assert result.status == "ok", result.output
        link = host.sample().binding("mcp__docs__link")
        assert link is not None
        assert not link.read_only
