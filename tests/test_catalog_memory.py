"""What the catalog publishes and remembers across refreshes of one real (in-process)
server: a tool that leaves and comes back gets the name it held (SPEC §6.6), a name
kept while its holder stays listed (INV-6), a call routed by the raw name (§6.7)."""

from __future__ import annotations

import pytest
from testservers.inproc import paged_server, streams_server, tool

from mcpbind.impl import Binding, Host, HostConfig, ServerConfig, ToolRegistry
from mcpbind.impl.catalog.listing import build_bindings
from mcpbind.model.naming import hashed_name

NATURAL = "mcp__s__b_c"
"""``b.c`` and ``b_c`` both sanitise to this; ``b.c`` sorts first and gets it (§6.4)."""
HASHED = hashed_name("s", "b_c", 64)
"""The name ``b_c`` gets while ``b.c`` holds the natural one."""


def names(host: Host) -> dict[str, str]:
    """Public name → raw name of every tool the next step shows."""
    step = host.sample()
    return {s.name: step.binding(s.name).remote_name for s in step.specs}  # type: ignore[union-attr]


async def listed(host: Host, tools: list[str], *tools_now: str) -> dict[str, str]:
    tools[:] = tools_now
    outcome = await host.refresh("s")
    assert outcome.status in ("installed", "unchanged"), outcome
    return names(host)


async def test_a_tool_that_leaves_and_comes_back_gets_its_old_name_though_its_natural_one_is_free():
    """SPEC §6.6: ``b_c`` held the hashed name; back alone, with the natural name free, it
    is given the hashed name again, not the natural one a newcomer would get."""
    streams = streams_server("b.c", "b_c")
    config = HostConfig(servers={"s": ServerConfig(target=streams.server)})
    async with Host.open(config) as host:
        assert names(host) == {NATURAL: "b.c", HASHED: "b_c"}
        assert await listed(host, streams.tools) == {}
        assert await listed(host, streams.tools, "b_c") == {HASHED: "b_c"}
        step = host.sample()
        result = await host.call(step, "c1", HASHED, {})
        assert result.status == "ok"
        assert result.output.splitlines()[-1] == "b_c"  # the raw name was sent (§6.7)
        # b.c comes back too: each gets the name it held
        assert await listed(host, streams.tools, "b_c", "b.c") == {NATURAL: "b.c", HASHED: "b_c"}


async def test_a_name_is_remembered_across_several_refreshes_without_its_tool():
    streams = streams_server("b.c", "b_c")
    config = HostConfig(servers={"s": ServerConfig(target=streams.server)})
    async with Host.open(config) as host:
        assert await listed(host, streams.tools, "x") == {"mcp__s__x": "x"}
        assert await listed(host, streams.tools, "x", "y") == {"mcp__s__x": "x", "mcp__s__y": "y"}
        assert await listed(host, streams.tools, "b_c") == {HASHED: "b_c"}


async def test_the_holder_of_a_natural_name_keeps_it_when_a_newcomer_sorts_before_it():
    """INV-6: ``b_c`` holds the natural name; ``b.c``, listed later, sorts first but is the
    newcomer, and gets the hashed form; when ``b_c`` leaves, ``b.c`` keeps its name."""
    streams = streams_server("b_c")
    config = HostConfig(servers={"s": ServerConfig(target=streams.server)})
    async with Host.open(config) as host:
        assert names(host) == {NATURAL: "b_c"}
        newcomer = hashed_name("s", "b.c", 64)
        assert await listed(host, streams.tools, "b_c", "b.c") == {NATURAL: "b_c", newcomer: "b.c"}
        assert await listed(host, streams.tools, "b.c") == {newcomer: "b.c"}
        # b_c comes back: it remembered the natural name, which is free again
        assert await listed(host, streams.tools, "b.c", "b_c") == {NATURAL: "b_c", newcomer: "b.c"}


CONFIG = ServerConfig(target="http://127.0.0.1:1/mcp")


def bindings(registry: ToolRegistry, server: str, *tools: str) -> tuple[Binding, ...]:
    listing = [{"name": t, "inputSchema": {"type": "object"}} for t in tools]
    return build_bindings(server, CONFIG, listing, registry.state, 64).bindings


def test_several_catalogs_replaced_in_one_publication_remember_their_names_too():
    """``ToolRegistry.replace_sources`` (SPEC §11.17, INV-1): one generation for all, and
    each identity's name remembered (§6.6) as one source's replacement remembers it."""
    registry = ToolRegistry()
    state = registry.replace_sources(
        {"mcp:s": bindings(registry, "s", "b.c", "b_c"), "mcp:t": bindings(registry, "t", "x")}
    )
    assert state is not None
    assert state.generation == 1
    assert sorted(state.by_name) == sorted([NATURAL, HASHED, "mcp__t__x"])
    assert registry.replace_sources({"mcp:s": (), "mcp:t": ()}) is not None
    assert registry.replace_sources({"mcp:s": ()}) is None  # nothing changed: no publication
    assert registry.state.generation == 2
    assert [b.name for b in bindings(registry, "s", "b_c")] == [HASHED]


ECHO = tool("echo", description="Echo", inputSchema={"type": "object"})


@pytest.mark.parametrize(
    ("after", "status"),
    [
        ([ECHO, tool("b")], "unchanged"),
        ([tool("b"), ECHO], "unchanged"),  # the listing's order is no change
        ([{**ECHO, "description": "Echo it"}, tool("b")], "installed"),
        ([{**ECHO, "inputSchema": {"type": "object", "required": []}}, tool("b")], "installed"),
        ([{**ECHO, "annotations": {"readOnlyHint": True}}, tool("b")], "installed"),
        ([{**ECHO, "annotations": {"readOnlyHint": False}}, tool("b")], "installed"),
        ([{**ECHO, "outputSchema": {"type": "object"}}, tool("b")], "installed"),
        ([{**ECHO, "title": "The echo"}, tool("b")], "unchanged"),  # not shown to the model
        ([ECHO], "installed"),
        ([ECHO, tool("b"), tool("c")], "installed"),
        ([ECHO, tool("B")], "installed"),
    ],
)
async def test_a_refresh_publishes_a_new_generation_exactly_when_what_it_shows_changed(
    after, status
):
    """INV-1: a listing that changes nothing the model sees or the host routes by (names,
    specs, read-only) publishes nothing; any such change is one new generation."""
    listing = [ECHO, tool("b")]
    config = HostConfig(servers={"s": ServerConfig(target=paged_server([listing]))})
    async with Host.open(config) as host:
        before = host.sample()
        listing[:] = after
        outcome = await host.refresh("s")
        step = host.sample()
        assert outcome.status == status
        if status == "unchanged":
            assert outcome.generation == step.generation == before.generation
            assert step.specs == before.specs
        else:
            assert outcome.generation == step.generation == before.generation + 1
            assert sorted(s.name for s in step.specs) == sorted(
                f"mcp__s__{t['name']}" for t in after
            )
