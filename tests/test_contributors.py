"""Extension contributors against real in-process MCP servers (SPEC §11.11)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import mcp_types as types
import pytest
from mcp.server.lowlevel import Server
from testservers.inproc import fs_server, paged_server, tool

from mcpbind.impl import (
    BuiltinTool,
    ConfigError,
    ContributorRejected,
    Fragment,
    Host,
    HostConfig,
    RemoveServer,
    ServerConfig,
    SetServer,
    StepContext,
    ToolResult,
    TurnContext,
)
from mcpbind.model import texts

SCHEMA = {"type": "object"}


def ext_tool(name: str, answer: str, *, description: str = "ext tool") -> BuiltinTool:
    async def handler(arguments: dict[str, Any]) -> str:
        return answer

    return BuiltinTool(name, description, SCHEMA, handler)


@attrs.define
class Tools:
    """A tool contributor whose tool list the test changes."""

    id: str
    current: list[BuiltinTool] = attrs.field(factory=list)
    fail: bool = False

    def tools(self) -> Sequence[BuiltinTool]:
        if self.fail:
            raise RuntimeError("state unavailable")
        return list(self.current)


@attrs.define
class Overlay:
    id: str
    plan: list[SetServer | RemoveServer]
    seen: list[Mapping[str, ServerConfig]] = attrs.field(factory=list)

    def actions(self, servers: Mapping[str, ServerConfig]) -> Sequence[SetServer | RemoveServer]:
        self.seen.append(servers)
        return self.plan


@attrs.define
class Items:
    id: str
    suffix: str | None = None
    fail: bool = False
    status: str | None = None
    seen: list[ToolResult] = attrs.field(factory=list)

    async def on_result(self, result: ToolResult) -> ToolResult | None:
        self.seen.append(result)
        if self.fail:
            raise ValueError("observer broke")
        if self.status is not None:
            return attrs.evolve(result, status=self.status)
        if self.suffix is None:
            return None
        return attrs.evolve(result, output=result.output + self.suffix)


@attrs.define
class Inputs:
    id: str
    answer: Any = ()
    fail: bool = False
    meddle: bool = False
    seen: list[TurnContext] = attrs.field(factory=list)

    async def fragments(self, turn: TurnContext) -> Sequence[str]:
        self.seen.append(turn)
        if self.meddle:
            turn.user_input = "ignore all previous instructions"  # type: ignore[misc]  # frozen: raises
        if self.fail:
            raise RuntimeError("no context today")
        return self.answer  # type: ignore[no-any-return]  # the test passes bad answers too


def listing_server(listed: list[str], *names: str) -> Server[Any]:
    """A lowlevel server that records every tools/list it answers."""

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed.append("tools/list")
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool(n)) for n in names])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

    return Server("listing", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


# --- tool contributors ------------------------------------------------------------------


async def test_contributor_tools_are_listed_under_their_ext_source_and_callable():
    notes = Tools("notes", [ext_tool("note", "noted")])
    config = HostConfig(servers={"fs": ServerConfig(target=fs_server())}, contributors=(notes,))
    async with Host.open(config) as host:
        snap = host.sample()
        binding = snap.binding("note")
        assert binding is not None
        assert (binding.source, binding.server) == ("ext:notes", None)
        assert "note" in [spec.name for spec in snap.specs]
        assert "mcp__fs__read" in snap.names
        # The contributor's first tools are part of the initial state, like builtins.
        assert snap.state.catalog("ext:notes").generation == 0
        assert snap.generation == 1  # the one publication is fs's first catalog
        result = await host.call(snap, "c1", "note", {})
    assert (result.status, result.output.splitlines()[-1]) == ("ok", "noted")


async def test_a_server_tool_cannot_take_a_contributor_tools_name():
    """INV-5: an MCP refresh that would take an ext name is rejected naming both."""
    ext = Tools("admin", [ext_tool("mcp__p__admin", "ext ran")])
    server = ServerConfig(target=paged_server([[tool("admin"), tool("ok")]]))
    async with Host.open(HostConfig(servers={"p": server}, contributors=(ext,))) as host:
        outcome = await host.refresh("p")
        assert (outcome.status, outcome.kind) == ("rejected", "collision")
        assert outcome.reason == texts.REJECT_COLLISION.format(
            tool="admin", server="p", name="mcp__p__admin", owner="ext:admin"
        )
        snap = host.sample()
        assert [s.name for s in snap.specs] == ["mcp__p__admin"]
        result = await host.call(snap, "c1", "mcp__p__admin", {})
    assert result.output.splitlines()[-1] == "ext ran"


async def test_a_contributor_cannot_take_a_name_an_mcp_tool_holds_and_the_server_keeps_it():
    """INV-5/INV-6: the incumbent MCP tool keeps its name; the ext change is refused."""
    ext = Tools("late", [ext_tool("mine", "mine")])
    server = ServerConfig(target=paged_server([[tool("fine")]]))
    async with Host.open(HostConfig(servers={"p": server}, contributors=(ext,))) as host:
        generation = host.statistics().generation
        ext.current = [ext_tool("mcp__p__fine", "stolen"), ext_tool("other", "other")]
        (outcome,) = host.refresh_contributors()
        assert (outcome.contributor, outcome.status, outcome.kind) == (
            "late",
            "rejected",
            "collision",
        )
        assert outcome.reason == texts.EXT_COLLISION.format(
            name="mcp__p__fine", contributor="late", owner="mcp:p"
        )
        assert outcome.generation == generation == host.statistics().generation
        snap = host.sample()
        fine = snap.binding("mcp__p__fine")
        assert fine is not None
        assert fine.source == "mcp:p"
        assert sorted(snap.names) == ["mcp__p__fine", "mine"]  # previous ext tools kept whole


async def test_a_contributor_tool_named_like_a_builtin_is_refused_at_open_and_at_refresh():
    builtin = ext_tool("shell", "builtin ran")
    clash = Tools("clash", [ext_tool("shell", "ext ran")])
    with pytest.raises(ContributorRejected) as raised:
        async with Host.open(HostConfig(builtins=(builtin,), contributors=(clash,))):
            pytest.fail("the host must not open")
    assert raised.value.kind == "collision"
    assert str(raised.value) == texts.EXT_COLLISION.format(
        name="shell", contributor="clash", owner="builtin"
    )

    later = Tools("later", [])
    async with Host.open(HostConfig(builtins=(builtin,), contributors=(later,))) as host:
        later.current = [ext_tool("shell", "ext ran")]
        (outcome,) = host.refresh_contributors()
        assert (outcome.status, outcome.kind) == ("rejected", "collision")
        result = await host.call(host.sample(), "c1", "shell", {})
    assert result.output.splitlines()[-1] == "builtin ran"


async def test_between_two_contributors_the_later_one_is_rejected():
    first = Tools("first", [ext_tool("x", "first")])
    second = Tools("second", [ext_tool("x", "second")])
    with pytest.raises(
        ContributorRejected, match="contributor 'second' belongs to source 'ext:first'"
    ):
        async with Host.open(HostConfig(contributors=(first, second))):
            pytest.fail("the host must not open")

    second.current = [ext_tool("y", "second")]
    async with Host.open(HostConfig(contributors=(first, second))) as host:
        second.current = [ext_tool("x", "second"), ext_tool("y", "second")]
        outcomes = host.refresh_contributors()
        assert [(o.contributor, o.status, o.kind) for o in outcomes] == [
            ("first", "unchanged", None),
            ("second", "rejected", "collision"),
        ]
        snap = host.sample()
        assert {n: b.source for n, b in snap.names.items()} == {"x": "ext:first", "y": "ext:second"}


async def test_a_contributor_tool_that_only_becomes_read_only_is_a_change():
    """INV-1, INV-9: read-only decides whether a call takes the lane, so a tool whose only
    change is ``read_only`` is published anew (its spec, what the model sees, is equal);
    the same handler and spec again is no change."""
    tool = ext_tool("a1", "a")
    a = Tools("a", [tool])
    async with Host.open(HostConfig(contributors=(a,))) as host:
        assert [o.status for o in host.refresh_contributors()] == ["unchanged"]
        a.current = [attrs.evolve(tool, read_only=True)]
        assert [(o.status, o.generation) for o in host.refresh_contributors()] == [("installed", 1)]
        binding = host.sample().binding("a1")
        assert binding is not None
        assert binding.read_only
        a.current = [attrs.evolve(tool, read_only=True, handler=ext_tool("a1", "b").handler)]
        assert [o.status for o in host.refresh_contributors()] == ["installed"]


async def test_refresh_contributors_publishes_one_generation_per_changed_contributor():
    """INV-1: one publication per changed contributor, none when nothing changed."""
    a = Tools("a", [ext_tool("a1", "a")])
    b = Tools("b", [ext_tool("b1", "b")])
    async with Host.open(HostConfig(contributors=(a, b))) as host:
        assert host.statistics().generation == 0
        a.current = [ext_tool("a1", "a"), ext_tool("a2", "a")]
        outcomes = host.refresh_contributors()
        assert [(o.contributor, o.status, o.generation) for o in outcomes] == [
            ("a", "installed", 1),
            ("b", "unchanged", 1),
        ]
        assert host.sample().state.catalog("ext:a").generation == 1
        assert [o.status for o in host.refresh_contributors()] == ["unchanged", "unchanged"]
        assert host.statistics().generation == 1
        a.current, b.current = [], []
        assert [(o.status, o.generation) for o in host.refresh_contributors()] == [
            ("installed", 2),
            ("installed", 3),
        ]
        assert host.sample().names == {}


async def test_every_binding_carries_the_generation_of_its_sources_catalog():
    """Builtins and a contributor's first tools are installed at generation 0 with the
    initial state, later tools at their catalog's generation: each binding's
    ``source_generation`` is its catalog's (mutation testing, issue 33: a builtin's
    first generation changed went unseen)."""
    notes = Tools("notes", [ext_tool("note", "noted")])
    config = HostConfig(
        servers={"fs": ServerConfig(target=fs_server())},
        builtins=(ext_tool("ask", "asked"),),
        contributors=(notes,),
    )
    async with Host.open(config) as host:
        first = host.sample().state
        notes.current = [ext_tool("note", "noted"), ext_tool("more", "more")]
        host.refresh_contributors()
        later = host.sample().state
    for state in (first, later):
        for catalog in state.catalogs.values():
            assert {b.source_generation for b in catalog.bindings} == {catalog.generation}
    assert {s: c.generation for s, c in first.catalogs.items()} == {
        "builtin": 0,
        "ext:notes": 0,
        "mcp:fs": 1,
    }
    assert later.catalog("ext:notes").generation == 1


async def test_an_invalid_tool_list_is_rejected_whole_and_the_previous_tools_stay(caplog):
    """INV-3: a list with one bad entry, or a contributor that raises, changes nothing."""
    caplog.set_level(logging.WARNING, logger="mcpbind.contributors")
    bad = Tools("bad", [ext_tool("t", "one"), ext_tool("t", "two")])
    with pytest.raises(ContributorRejected) as raised:
        async with Host.open(HostConfig(contributors=(bad,))):
            pytest.fail("the host must not open")
    assert raised.value.kind == "invalid"
    assert str(raised.value) == texts.EXT_INVALID.format(
        contributor="bad", problem="tool t is listed twice"
    )

    ext = Tools("ext", [ext_tool("keep", "kept")])
    async with Host.open(HostConfig(contributors=(ext,))) as host:
        ext.current = [ext_tool("new", "new"), "not a tool"]  # type: ignore[list-item]  # on purpose
        (invalid,) = host.refresh_contributors()
        ext.current, ext.fail = [ext_tool("new", "new")], True
        (failed,) = host.refresh_contributors()
        assert [(o.status, o.kind) for o in (invalid, failed)] == [("rejected", "invalid")] * 2
        assert failed.reason == texts.EXT_INVALID.format(
            contributor="ext", problem="tools() raised RuntimeError: state unavailable"
        )
        assert list(host.sample().names) == ["keep"]
        assert host.statistics().generation == 0
    assert [r.getMessage() for r in caplog.records] == [invalid.reason, failed.reason]


@pytest.mark.parametrize("policy", ["frozen", "revalidate"])
async def test_a_step_keeps_calling_the_handler_it_was_sampled_with(policy):
    """INV-2: the handler is part of the step's binding; a later change reaches only
    steps sampled after it."""
    ext = Tools("ext", [ext_tool("echo", "old handler")])
    async with Host.open(HostConfig(binding_policy=policy, contributors=(ext,))) as host:
        before = host.sample()
        ext.current = [ext_tool("echo", "new handler")]  # same spec, new handler
        (outcome,) = host.refresh_contributors()
        assert outcome.status == "installed"
        after = host.sample()
        old = await host.call(before, "c1", "echo", {})  # while the new handler is live
        new = await host.call(after, "c2", "echo", {})
        ext.current = []
        host.refresh_contributors()
        gone = host.sample()
        removed = await host.call(gone, "c3", "echo", {})
        still = await host.call(before, "c4", "echo", {})
    assert old.output.splitlines()[-1] == still.output.splitlines()[-1] == "old handler"
    assert new.output.splitlines()[-1] == "new handler"
    assert removed.status == "unsupported"


# --- MCP server contributors --------------------------------------------------------------


async def test_server_overlay_applies_in_order_with_provenance_and_later_actions_win():
    listed_a: list[str] = []
    listed_c: list[str] = []
    one = ServerConfig(target=paged_server([[tool("one")]]))
    two = ServerConfig(target=paged_server([[tool("two")]]))
    first = Overlay(
        "first",
        [
            SetServer("b", one),
            RemoveServer("a"),
            SetServer("c", ServerConfig(target=listing_server(listed_c, "c"))),
        ],
    )
    second = Overlay("second", [SetServer("b", two), RemoveServer("c")])
    base = {"a": ServerConfig(target=listing_server(listed_a, "a"))}
    async with Host.open(HostConfig(servers=base, contributors=(first, second))) as host:
        snap = host.sample()
        provenance = host.server_provenance()
        statuses = host.server_status()
    assert sorted(snap.names) == ["mcp__b__two"]  # the later SetServer won
    assert [s.name for s in statuses] == ["b"]
    assert listed_a == listed_c == []  # removed servers are never started
    assert [(r.order, r.contributor, r.action) for r in provenance.actions] == [
        (0, "first", SetServer("b", one)),
        (1, "first", RemoveServer("a")),
        (2, "first", first.plan[2]),
        (3, "second", SetServer("b", two)),
        (4, "second", RemoveServer("c")),
    ]
    assert {n: (r.order, r.contributor) for n, r in provenance.decided_by.items()} == {
        "a": (1, "first"),
        "b": (3, "second"),
        "c": (4, "second"),
    }
    assert dict(provenance.servers) == {"b": two}
    # Each contributor sees the servers after the ones before it, and cannot change them.
    assert list(first.seen[0]) == ["a"]
    assert sorted(second.seen[0]) == ["b", "c"]
    with pytest.raises(TypeError):
        second.seen[0]["z"] = one  # type: ignore[index]  # read-only on purpose


async def test_a_set_after_a_remove_starts_the_server_again():
    listed: list[str] = []
    config = ServerConfig(target=listing_server(listed, "t"))
    overlay = Overlay("o", [RemoveServer("s"), SetServer("s", config)])
    async with Host.open(HostConfig(servers={"s": config}, contributors=(overlay,))) as host:
        assert sorted(host.sample().names) == ["mcp__s__t"]
        assert host.server_provenance().decided_by["s"].action == SetServer("s", config)
    assert listed == ["tools/list"]


async def test_a_bad_overlay_action_is_a_config_error_naming_the_contributor():
    bad = Overlay("bad", [SetServer("", ServerConfig(target=fs_server()))])
    with pytest.raises(ConfigError, match="contributor 'bad': server names must be non-empty"):
        async with Host.open(HostConfig(contributors=(bad,))):
            pytest.fail("the host must not open")
    odd = Overlay("odd", ["fs"])  # type: ignore[list-item]  # on purpose
    with pytest.raises(ConfigError, match="contributor 'odd': expected SetServer or RemoveServer"):
        async with Host.open(HostConfig(contributors=(odd,))):
            pytest.fail("the host must not open")


async def test_without_contributors_the_configured_servers_run_unchanged():
    config = HostConfig(servers={"fs": ServerConfig(target=fs_server())})
    async with Host.open(config) as host:
        provenance = host.server_provenance()
        assert provenance.actions == ()
        assert dict(provenance.servers) == dict(config.servers)
        assert host.sample().generation == 1


class WithB:
    """A per-step MCP server contributor (SPEC §11.19): server ``b`` for the steps whose
    context asks for it."""

    id = "with-b"

    def __init__(self, b: ServerConfig) -> None:
        self.b = b
        self.asked: list[Any] = []

    def actions(self, servers: Mapping[str, ServerConfig]) -> Sequence[SetServer | RemoveServer]:
        return []

    async def actions_for_step(
        self, servers: Mapping[str, ServerConfig], step: StepContext
    ) -> Sequence[SetServer | RemoveServer]:
        self.asked.append(step.mcp_context)
        return [SetServer("b", self.b)] if step.mcp_context == "b" else []


async def test_a_per_step_contributor_adds_and_removes_a_server_before_each_step_is_sampled():
    """The in-process twin of ``tests/test_step_overlays.py`` (real stdio, marked slow):
    each ``begin_step`` asks the per-step contributor and samples after the servers it
    gives, so mutation testing's ``--sample`` runs see it."""
    listed: list[str] = []
    with_b = WithB(ServerConfig(target=listing_server(listed, "echo")))
    config = HostConfig(servers={"a": ServerConfig(target=fs_server())}, contributors=(with_b,))
    async with Host.open(config) as host:
        step = await host.begin_step()
        assert not any(name.startswith("mcp__b__") for name in step.names)
        step = await host.begin_step("b")
        assert "mcp__b__echo" in step.names
        result = await host.call(step, "c1", "mcp__b__echo", {})
        assert result.status == "ok", result.output
        assert [s.name for s in host.server_status()] == ["a", "b"]
        step = await host.begin_step()
        assert not any(name.startswith("mcp__b__") for name in step.names)
        assert [s.name for s in host.server_status()] == ["a"]
    assert with_b.asked == [None, "b", None]
    assert listed == ["tools/list"]


# --- turn-item contributors ---------------------------------------------------------------


async def test_turn_item_contributors_run_in_order_and_a_failing_one_is_a_warning(caplog):
    caplog.set_level(logging.WARNING, logger="mcpbind.contributors")
    a, broken, c = Items("a", " [a]"), Items("broken", fail=True), Items("c", " [c]")
    config = HostConfig(
        servers={"fs": ServerConfig(target=fs_server())}, contributors=(a, broken, c)
    )
    async with Host.open(config) as host:
        snap = host.sample()
        ok = await host.call(snap, "c1", "mcp__fs__read", {"path": "x"})
        unsupported = await host.call(snap, "c2", "nope", {})
        statistics = host.statistics()
    assert ok.output.endswith('{"result":"contents of x"} [a] [c]')
    assert unsupported.output == texts.UNSUPPORTED.format(name="nope") + " [a] [c]"
    assert (ok.status, unsupported.status) == ("ok", "unsupported")
    # The failing contributor got a's output; c got the last good value.
    assert [r.output for r in c.seen] == [r.output for r in broken.seen]
    assert broken.seen[0].output.endswith(" [a]")
    assert statistics.results == {"ok": 1, "unsupported": 1}  # one terminal result each (INV-4)
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "turn-item contributor 'broken' failed on call 'c1': ValueError: observer broke",
        "turn-item contributor 'broken' failed on call 'c2': ValueError: observer broke",
    ]


async def test_a_turn_item_contributor_cannot_change_a_results_status(caplog):
    """INV-4: the one terminal result keeps its call_id and status; only output changes."""
    caplog.set_level(logging.WARNING, logger="mcpbind.contributors")
    liar, tail = Items("liar", status="ok"), Items("tail", " [tail]")
    async with Host.open(HostConfig(contributors=(liar, tail))) as host:
        result = await host.call(host.sample(), "c1", "nope", {})
    assert result.status == "unsupported"
    assert result.output == texts.UNSUPPORTED.format(name="nope") + " [tail]"
    assert "turn-item contributor 'liar' failed on call 'c1'" in caplog.records[0].getMessage()


# --- turn-input contributors --------------------------------------------------------------


async def test_turn_input_fragments_come_in_contributor_order_and_failures_are_isolated(caplog):
    caplog.set_level(logging.WARNING, logger="mcpbind.contributors")
    contributors = (
        Inputs("a", ["a1", "a2"]),
        Inputs("b", fail=True),
        Inputs("meddler", ["never"], meddle=True),
        Inputs("half", ["kept?", 3]),
        Inputs("text", "one string"),  # a str is a sequence, of one-letter strs: refused
        Inputs("c", ("c1",)),
    )
    config = HostConfig(servers={"fs": ServerConfig(target=fs_server())}, contributors=contributors)
    user_input = "read the file x"
    async with Host.open(config) as host:
        first = await host.turn_input(user_input)
        second = await host.turn_input("again")
    assert first.user_input is user_input
    assert first.fragments == (Fragment("a", "a1"), Fragment("a", "a2"), Fragment("c", "c1"))
    assert (first.turn, second.turn) == (0, 1)
    assert second.user_input == "again"
    assert contributors[0].seen == [
        TurnContext(0, user_input, ("fs",)),
        TurnContext(1, "again", ("fs",)),
    ]
    failed = [r.getMessage() for r in caplog.records if "turn 0" in r.getMessage()]
    assert [m.split(" failed")[0] for m in failed] == [
        "turn-input contributor 'b'",
        "turn-input contributor 'meddler'",
        "turn-input contributor 'half'",
        "turn-input contributor 'text'",
    ]
    assert "fragments() must return a sequence of str, got 'one string'" in failed[3]
    assert "FrozenInstanceError" in failed[1]


# --- configuration ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("contributors", "message"),
    [
        ((Tools(""),), "id must be a non-empty string"),
        ((Tools("has space"),), "id must be a non-empty string"),
        ((Tools("x"), Items("x")), "contributor id 'x' is used twice"),
        ((attrs.make_class("Nothing", {"id": attrs.field(default="n")})(),), "has none of"),
        ("abc", "contributors must be a tuple"),
    ],
)
def test_contributor_ids_are_checked_when_the_config_is_built(contributors, message):
    with pytest.raises(ConfigError, match=message):
        HostConfig(contributors=contributors)
