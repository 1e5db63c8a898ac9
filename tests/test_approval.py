"""Approval of tool calls (SPEC §11.8) against real in-process MCP servers."""

from __future__ import annotations

import itertools
import json
import logging
import os
import pathlib
import re
import subprocess
import sys
import textwrap
import tomllib

import anyio
import attrs
import mcp_types as types
import pytest
import trio.testing
from cli_runner import mcpbind
from mcp.server.mcpserver import MCPServer

from mcpbind.impl import (
    APPROVAL_MODES,
    ApprovalRequest,
    BuiltinTool,
    ConfigError,
    DuplicateCallId,
    Host,
    HostConfig,
    ServerConfig,
    ToolConfig,
    requires_approval,
)
from mcpbind.impl.config.toml_edit import (
    ApprovalNotSaved,
    approve_always_text,
    save_approve_always,
)
from mcpbind.model import texts

SPEC = (pathlib.Path(__file__).resolve().parent.parent / "SPEC.md").read_text(encoding="utf-8")
HINTS = ("readOnlyHint", "destructiveHint", "openWorldHint")


# --- the table -----------------------------------------------------------------------


def spec_table() -> dict[tuple[str, str, str], dict[str, bool]]:
    section = SPEC[SPEC.index("### 11.8 Approval") :]
    section = section[: section.index("\n## ")]
    header = "| readOnlyHint | destructiveHint | openWorldHint | auto | prompt | writes | approve |"
    lines = section[section.index(header) :].splitlines()[2:]
    table = {}
    for line in itertools.takewhile(lambda row: row.startswith("|"), lines):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        modes = dict(zip(("auto", "prompt", "writes", "approve"), cells[3:], strict=True))
        assert set(modes.values()) <= {"ask", "—"}, line
        table[(cells[0], cells[1], cells[2])] = {m: v == "ask" for m, v in modes.items()}
    return table


def annotations_of(row: tuple[str, str, str]) -> dict[str, bool]:
    return {
        hint: value == "true" for hint, value in zip(HINTS, row, strict=True) if value != "absent"
    }


def test_the_spec_table_covers_every_annotation_combination_once():
    rows = spec_table()
    assert set(rows) == set(itertools.product(("absent", "true", "false"), repeat=3))


@pytest.mark.parametrize("mode", APPROVAL_MODES)
@pytest.mark.parametrize("row", sorted(itertools.product(("absent", "true", "false"), repeat=3)))
def test_requires_approval_follows_the_spec_table_for_every_mode_and_annotation(mode, row):
    expected = spec_table()[row][mode]
    assert requires_approval(mode, annotations_of(row)) is expected


def test_the_table_rules_read_as_design_says():
    """Spot checks written independently of the SPEC table."""
    assert requires_approval("auto", None)  # MCP defaults: destructive, open world
    assert not requires_approval("auto", {"readOnlyHint": True})
    assert requires_approval("auto", {"readOnlyHint": True, "destructiveHint": True})
    assert not requires_approval("auto", {"destructiveHint": False, "openWorldHint": False})
    assert requires_approval("auto", {"destructiveHint": False})  # open world by default
    assert requires_approval("auto", {"readOnlyHint": None, "destructiveHint": None})  # null
    assert requires_approval("writes", {"destructiveHint": False, "openWorldHint": False})
    assert requires_approval("prompt", {"readOnlyHint": True})
    assert not requires_approval("approve", {"destructiveHint": True})


# --- a server whose tools carry annotations --------------------------------------------


@attrs.define
class Seen:
    """What the server ran; an empty list means nothing reached it."""

    ran: list[str] = attrs.field(factory=list)


def annotated_server(seen: Seen) -> MCPServer:
    server = MCPServer("annotated")

    @server.tool(annotations=types.ToolAnnotations(readOnlyHint=True))
    def look(path: str = "") -> str:
        seen.ran.append("look")
        return f"looked at {path}"

    @server.tool(annotations=types.ToolAnnotations(destructiveHint=True))
    def erase(path: str = "") -> str:
        seen.ran.append("erase")
        return f"erased {path}"

    @server.tool()
    def note(text: str = "") -> str:
        seen.ran.append("note")
        return f"noted {text}"

    @server.tool(annotations=types.ToolAnnotations(destructiveHint=False, openWorldHint=False))
    def local() -> str:
        seen.ran.append("local")
        return "local"

    _ = (look, erase, note, local)
    return server


@attrs.define
class Approver:
    """Answers from a script; records every request."""

    answers: list[str] = attrs.field(factory=list)
    default: str = "allow"
    requests: list[ApprovalRequest] = attrs.field(factory=list)

    async def __call__(self, request: ApprovalRequest) -> str:
        self.requests.append(request)
        await anyio.lowlevel.checkpoint()
        return self.answers.pop(0) if self.answers else self.default

    @property
    def asked(self) -> list[str]:
        return [r.tool for r in self.requests]


def host_config(seen: Seen, approver=None, **server: object) -> HostConfig:
    return HostConfig(
        servers={"a": ServerConfig(target=annotated_server(seen), **server)}, approver=approver
    )


# --- who is gated ------------------------------------------------------------------------


async def test_with_no_approver_and_no_mode_nothing_is_gated():
    seen = Seen()
    async with Host.open(host_config(seen)) as host:
        snap = host.sample()
        results = [
            await host.call(snap, f"c{i}", f"mcp__a__{tool}", {})
            for i, tool in enumerate(("erase", "note", "look"))
        ]
        assert host.approvals.statistics().asked == 0
    assert [r.status for r in results] == ["ok", "ok", "ok"]
    assert seen.ran == ["erase", "note", "look"]


async def test_an_approver_alone_gates_every_tool_as_auto_with_the_full_request():
    seen, approver = Seen(), Approver()
    async with Host.open(host_config(seen, approver)) as host:
        snap = host.sample()
        for i, tool in enumerate(("look", "local", "erase", "note")):
            result = await host.call(snap, f"c{i}", f"mcp__a__{tool}", {})
            assert result.status == "ok"
        erase = await host.call(snap, "c9", "mcp__a__erase", '{"path": "/tmp/x"}')
        assert erase.status == "ok"
    assert approver.asked == ["erase", "note", "erase"]
    request = approver.requests[2]
    assert (request.call_id, request.server, request.tool, request.name) == (
        "c9",
        "a",
        "erase",
        "mcp__a__erase",
    )
    assert request.arguments == {"path": "/tmp/x"}
    with pytest.raises(TypeError):
        request.arguments["path"] = "y"  # type: ignore[index]
    assert request.annotations["destructiveHint"] is True
    assert request.mode == "auto"
    assert approver.requests[1].annotations == {}
    assert seen.ran == ["look", "local", "erase", "note", "erase"]


async def test_the_tool_mode_wins_over_the_server_default():
    seen, approver = Seen(), Approver()
    config = host_config(
        seen,
        approver,
        default_tools_approval_mode="approve",
        tools={"look": ToolConfig(approval_mode="prompt")},
    )
    async with Host.open(config) as host:
        snap = host.sample()
        for i, tool in enumerate(("erase", "look")):
            assert (await host.call(snap, f"c{i}", f"mcp__a__{tool}")).status == "ok"
    assert approver.asked == ["look"]
    assert approver.requests[0].mode == "prompt"


async def test_tool_approval_modes_is_a_shorthand_for_each_tools_approval_mode():
    seen, approver = Seen(), Approver()
    config = host_config(
        seen,
        approver,
        default_tools_approval_mode="approve",
        tool_approval_modes={"look": "prompt"},
    )
    assert config.servers["a"].tools["look"] == ToolConfig(approval_mode="prompt")
    async with Host.open(config) as host:
        snap = host.sample()
        for i, tool in enumerate(("erase", "look")):
            assert (await host.call(snap, f"c{i}", f"mcp__a__{tool}")).status == "ok"
    assert approver.asked == ["look"]
    with pytest.raises(ConfigError, match="tool_approval_modes"):
        ServerConfig(target="http://h/mcp", tool_approval_modes={"look": "sometimes"})
    with pytest.raises(ConfigError, match="set it once"):
        ServerConfig(
            target="http://h/mcp",
            tools={"look": ToolConfig(approval_mode="approve")},
            tool_approval_modes={"look": "prompt"},
        )


async def test_builtin_tools_are_not_gated():
    async def raises(request: ApprovalRequest) -> str:
        raise AssertionError("a builtin was sent for approval")

    async def clock(arguments: dict) -> str:
        return "noon"

    builtin = BuiltinTool("clock", "What time is it", {"type": "object"}, clock)
    config = HostConfig(builtins=(builtin,), approver=raises)
    async with Host.open(config) as host:
        result = await host.call(host.sample(), "c1", "clock", {})
    assert (result.status, result.output.splitlines()[-1]) == ("ok", "noon")


async def test_unsupported_names_and_bad_arguments_are_decided_before_approval():
    seen, approver = Seen(), Approver()
    async with Host.open(host_config(seen, approver)) as host:
        snap = host.sample()
        assert (await host.call(snap, "c1", "mcp__a__nope", {})).status == "unsupported"
        assert (await host.call(snap, "c2", "mcp__a__erase", "[1]")).status == "error"
    assert approver.requests == []


# --- answers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "template"),
    [("decline", texts.DENIED_DECLINED), ("cancel", texts.DENIED_CANCELLED)],
)
async def test_a_declined_or_cancelled_call_ends_denied_and_nothing_is_sent(answer, template):
    seen, approver = Seen(), Approver(default=answer)
    async with Host.open(host_config(seen, approver)) as host:
        snap = host.sample()
        result = await host.call(snap, "c1", "mcp__a__erase", {"path": "/"})
        again = await host.call(snap, "c2", "mcp__a__erase", {"path": "/"})
        stats = host.approvals.statistics()
        assert host.statistics().results == {"denied": 2}
    assert result.status == "denied"
    assert result.output == template.format(name="mcp__a__erase", server="a", tool="erase")
    assert again.status == "denied"  # a refusal is not remembered either way: asked again
    assert seen.ran == []
    assert (stats.asked, stats.denied, stats.answers) == (2, 2, {answer: 2})


async def test_allow_once_asks_again_and_allow_for_the_session_is_remembered_per_tool():
    seen = Seen()
    approver = Approver(answers=["allow", "allow_session"])
    async with Host.open(host_config(seen, approver)) as host:
        snap = host.sample()
        for i in range(4):
            assert (await host.call(snap, f"e{i}", "mcp__a__erase")).status == "ok"
        assert (await host.call(snap, "n1", "mcp__a__note")).status == "ok"
        assert host.approvals.statistics().remembered == 1
    assert approver.asked == ["erase", "erase", "note"]
    assert seen.ran == ["erase"] * 4 + ["note"]


async def test_prompt_asks_every_time_and_downgrades_remembered_answers_to_once(tmp_path):
    seen = Seen()
    approver = Approver(answers=["allow_session", "allow_always", "allow"])
    path = tmp_path / "config.toml"
    path.write_text('[mcp_servers.a]\ncommand = "x"\n')
    config = attrs.evolve(
        host_config(seen, approver, default_tools_approval_mode="prompt"),
        config_path=str(path),
    )
    async with Host.open(config) as host:
        snap = host.sample()
        for i in range(3):
            assert (await host.call(snap, f"c{i}", "mcp__a__look")).status == "ok"
        stats = host.approvals.statistics()
    assert approver.asked == ["look"] * 3  # even a read-only tool, even after "remember"
    assert (stats.remembered, stats.saved) == (0, 0)
    assert path.read_text() == '[mcp_servers.a]\ncommand = "x"\n'


# --- fail closed -------------------------------------------------------------------------


async def test_a_configured_mode_without_an_approver_denies_what_it_would_ask_about():
    seen = Seen()
    config = host_config(
        seen,
        default_tools_approval_mode="writes",
        tools={"erase": ToolConfig(approval_mode="approve")},
    )
    async with Host.open(config) as host:
        snap = host.sample()
        note = await host.call(snap, "c1", "mcp__a__note", {"text": "hi"})
        look = await host.call(snap, "c2", "mcp__a__look")
        erase = await host.call(snap, "c3", "mcp__a__erase")
    assert note.status == "denied"
    assert note.output == texts.DENIED_NO_APPROVER.format(
        name="mcp__a__note", server="a", tool="note", mode="writes"
    )
    assert "--yes" in note.output
    assert (look.status, erase.status) == ("ok", "ok")
    assert seen.ran == ["look", "erase"]


async def test_each_call_denied_for_want_of_an_approver_counts_once_in_the_statistics():
    config = host_config(Seen(), default_tools_approval_mode="writes")
    async with Host.open(config) as host:
        snap = host.sample()
        for i in range(2):
            assert (await host.call(snap, f"c{i}", "mcp__a__note", {"text": "hi"})).status == (
                "denied"
            )
        assert (await host.call(snap, "c2", "mcp__a__look")).status == "ok"
        stats = host.approvals.statistics()
    assert (stats.asked, stats.denied, stats.answers) == (0, 2, {})


async def raising_approver(request: ApprovalRequest) -> str:
    raise RuntimeError("the approval UI is gone")


async def nonsense_approver(request: ApprovalRequest) -> str:
    return "yes please"


@pytest.mark.parametrize(
    ("approver", "why"),
    [
        (raising_approver, "it raised RuntimeError: the approval UI is gone"),
        (
            nonsense_approver,
            "it answered 'yes please', not one of allow, allow_session, allow_always, "
            "decline, cancel",
        ),
    ],
)
async def test_an_approver_that_fails_denies_the_call_and_sends_nothing(approver, why):
    seen = Seen()
    async with Host.open(host_config(seen, approver)) as host:
        result = await host.call(host.sample(), "c1", "mcp__a__erase")
    assert result.status == "denied"
    assert result.output == texts.DENIED_APPROVER_FAILED.format(
        name="mcp__a__erase", server="a", tool="erase", why=why
    )
    assert seen.ran == []


# --- waiting -----------------------------------------------------------------------------


@attrs.define
class Gate:
    """An approver that waits until the test answers."""

    asked: anyio.Event = attrs.field(factory=anyio.Event)
    answer: str = "allow"
    go: anyio.Event = attrs.field(factory=anyio.Event)
    cancelled: bool = False

    async def __call__(self, request: ApprovalRequest) -> str:
        self.asked.set()
        try:
            await self.go.wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled = True
            raise
        return self.answer


@pytest.mark.trio
async def test_waiting_for_approval_counts_in_wall_time_but_not_against_the_tool_timeout(
    mock_clock: trio.testing.MockClock,
):
    seen, gate = Seen(), Gate()
    config = host_config(seen, gate, tool_timeout_sec=5)
    async with Host.open(config) as host:
        results = []

        async def run() -> None:
            results.append(await host.call(host.sample(), "c1", "mcp__a__erase", {"path": "p"}))

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(run)
            await gate.asked.wait()
            assert host.statistics().calls_in_flight == 1
            mock_clock.jump(1000)  # the user takes their time, far beyond tool_timeout_sec
            gate.go.set()
    result = results[0]
    assert result.status == "ok"
    seconds = float(re.match(r"Wall time: ([0-9.]+) seconds", result.output).group(1))
    assert seconds >= 1000
    assert seen.ran == ["erase"]


async def test_cancel_while_waiting_for_approval_ends_cancelled_and_sends_nothing():
    seen, gate = Seen(), Gate()
    async with Host.open(host_config(seen, gate)) as host:
        snap = host.sample()
        results = []

        async def run() -> None:
            results.append(await host.call(snap, "c1", "mcp__a__erase"))

        with anyio.fail_after(10):  # a cancel that does not reach the wait fails, not hangs
            async with anyio.create_task_group() as nursery:
                nursery.start_soon(run)
                await gate.asked.wait()
                with pytest.raises(DuplicateCallId):  # INV-4: the waiting call holds its id
                    await host.call(snap, "c1", "mcp__a__look")
                host.cancel("c1")
        with pytest.raises(DuplicateCallId):
            await host.call(snap, "c1", "mcp__a__look")
        assert host.statistics().results == {"cancelled": 1}
    assert (results[0].status, results[0].output) == ("cancelled", texts.CANCELLED)
    assert gate.cancelled
    assert seen.ran == []


# --- the lane after approval -------------------------------------------------------------


@attrs.define
class PerCall:
    """An approver that allows each call once the test opens that call's gate."""

    asked: dict[str, anyio.Event] = attrs.field(factory=dict)
    go: dict[str, anyio.Event] = attrs.field(factory=dict)

    def gate(self, call_id: str) -> None:
        self.asked[call_id], self.go[call_id] = anyio.Event(), anyio.Event()

    async def __call__(self, request: ApprovalRequest) -> str:
        self.asked[request.call_id].set()
        await self.go[request.call_id].wait()
        return "allow"


@pytest.mark.trio
async def test_exclusive_calls_approved_out_of_order_take_the_lane_in_acceptance_order():
    """SPEC §8.3 (INV-9): when the lane frees, the oldest *accepted* waiting call takes
    it, not the first approved; the model's ``hand_off`` does the same. The lockstep
    fuzzing found a runtime that served the lane in approval order."""
    started: list[str] = []
    hold = anyio.Event()
    server = MCPServer("lane")

    @server.tool()
    async def work(tag: str) -> str:  # neither read-only nor parallel: exclusive
        started.append(tag)
        if tag == "c4":
            await hold.wait()
        return tag

    _ = work
    approver = PerCall()
    config = HostConfig(servers={"s": ServerConfig(target=server)}, approver=approver)
    async with Host.open(config) as host:
        snap = host.sample()
        results: dict[str, str] = {}

        async def run(call_id: str) -> None:
            result = await host.call(snap, call_id, "mcp__s__work", {"tag": call_id})
            results[call_id] = result.status

        with anyio.fail_after(30):
            async with anyio.create_task_group() as nursery:
                for call_id in ("c1", "c2", "c3", "c4"):  # accepted in this order
                    approver.gate(call_id)
                    nursery.start_soon(run, call_id)
                    await approver.asked[call_id].wait()
                for call_id in ("c4", "c3", "c2", "c1"):  # approved in the reverse order
                    approver.go[call_id].set()
                    await trio.testing.wait_all_tasks_blocked()  # at the lane, or sent
                assert started == ["c4"]  # c4 holds the lane; c3, c2, c1 queued behind it
                hold.set()
    assert started == ["c4", "c1", "c2", "c3"]
    assert results == dict.fromkeys(("c1", "c2", "c3", "c4"), "ok")


# --- allow always ------------------------------------------------------------------------

CONFIG = """\
# my agent's servers
model = "gpt-5"   # Codex keys stay

[mcp_servers.a]   # the annotated one
command = "python"
args = ["-m", "server"]  # how it starts
default_tools_approval_mode = "auto"

[mcp_servers."b.c"]
command = "other"
"""


def from_file(path: pathlib.Path, seen: Seen, approver) -> HostConfig:
    """The file's settings with server ``a`` running in-process."""
    config = HostConfig.from_toml(path, approver=approver)
    server = attrs.evolve(config.servers["a"], target=annotated_server(seen))
    return attrs.evolve(config, servers={"a": server})


async def test_allow_always_is_saved_to_the_config_file_keeping_its_comments(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    seen, approver = Seen(), Approver(answers=["allow_always"])
    config = from_file(path, seen, approver)
    assert config.config_path == str(path)
    async with Host.open(config) as host:
        snap = host.sample()
        assert (await host.call(snap, "c1", "mcp__a__erase")).status == "ok"
        assert (await host.call(snap, "c2", "mcp__a__erase")).status == "ok"
        stats = host.approvals.statistics()
    assert approver.asked == ["erase"]
    assert (stats.saved, stats.save_errors) == (1, ())
    assert path.read_text() == CONFIG.replace(
        '\n[mcp_servers."b.c"]',
        '\n[mcp_servers.a.tools.erase]\napproval_mode = "approve"\n\n[mcp_servers."b.c"]',
    )

    async def never(request: ApprovalRequest) -> str:
        raise AssertionError("asked again after allow always")

    async with Host.open(from_file(path, seen, never)) as host:  # a new session
        assert (await host.call(host.sample(), "c1", "mcp__a__erase")).status == "ok"
    assert seen.ran == ["erase"] * 3


async def test_allow_always_without_a_config_file_holds_for_the_session():
    seen, approver = Seen(), Approver(answers=["allow_always"])
    async with Host.open(host_config(seen, approver)) as host:
        snap = host.sample()
        for i in range(2):
            assert (await host.call(snap, f"c{i}", "mcp__a__erase")).status == "ok"
        stats = host.approvals.statistics()
    assert approver.asked == ["erase"]
    assert (stats.remembered, stats.saved, stats.save_errors) == (1, 0, ())


async def test_a_failed_save_keeps_the_session_approval_and_is_reported(tmp_path, caplog):
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    seen, approver = Seen(), Approver(answers=["allow_always"])
    config = from_file(path, seen, approver)
    path.write_text("# the user rewrote the file meanwhile\n")
    with caplog.at_level(logging.WARNING, logger="mcpbind.approval"):
        async with Host.open(config) as host:
            snap = host.sample()
            for i in range(2):
                assert (await host.call(snap, f"c{i}", "mcp__a__erase")).status == "ok"
            stats = host.approvals.statistics()
    message = texts.APPROVAL_NOT_SAVED.format(
        tool="erase", server="a", path=path, why="the file no longer defines [mcp_servers.a]"
    )
    assert stats.save_errors == (message,)
    assert stats.saved == 0
    assert approver.asked == ["erase"]
    assert message in caplog.messages
    assert path.read_text() == "# the user rewrote the file meanwhile\n"


@pytest.mark.parametrize(
    ("text", "server", "tool", "expected"),
    [
        (  # a tool table that exists keeps its other keys and comments
            '[mcp_servers.a]\ncommand = "x"\n[mcp_servers.a.tools.t]\n'
            'approval_mode = "prompt"  # why\noutput_token_limit = 9\n',
            "a",
            "t",
            '[mcp_servers.a]\ncommand = "x"\n[mcp_servers.a.tools.t]\n'
            'approval_mode = "approve"  # why\noutput_token_limit = 9\n',
        ),
        (  # servers written with dotted keys: the table is appended
            '[mcp_servers]\na.command = "x"  # dotted\n',
            "a",
            "t.1",
            '[mcp_servers]\na.command = "x"  # dotted\n\n'
            '[mcp_servers.a.tools."t.1"]\napproval_mode = "approve"\n',
        ),
        (  # dotted servers beside a top-level key of the server's name: the structured
            # edit writes [a.tools.t], which is no TOML here (mutation testing, issue 33:
            # the failed strategy's continue made break gave up before appending)
            'a = 1\n[mcp_servers]\na.command = "x"\n',
            "a",
            "t",
            'a = 1\n[mcp_servers]\na.command = "x"\n\n'
            '[mcp_servers.a.tools.t]\napproval_mode = "approve"\n',
        ),
        (  # inline tables stay inline
            'mcp_servers = { a = { command = "x" } }\n',
            "a",
            "t",
            'mcp_servers = { a = { command = "x", tools = {t = {approval_mode = "approve"}}} }\n',
        ),
        (  # CRLF line ends are kept
            '[mcp_servers."é"]\r\ncommand = "x"\r\n',
            "é",
            "t",
            None,
        ),
    ],
)
def test_the_toml_edit_adds_exactly_one_key_whatever_the_layout(text, server, tool, expected):
    edited = approve_always_text(text, server, tool)
    if expected is not None:
        assert edited == expected
    else:
        assert edited.startswith(text)
    assert tomllib.loads(edited)["mcp_servers"][server]["tools"][tool] == {
        "approval_mode": "approve",
        **({"output_token_limit": 9} if "output_token_limit" in text else {}),
    }


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[mcp_servers.b]\ncommand = 'x'\n", "no longer defines [mcp_servers.a]"),
        ("[mcp_servers.a\n", "no longer valid TOML"),
        ("[mcp_servers.a]\ncommand = 'x'\ntools = 3\n", "is not a table"),
    ],
)
def test_the_toml_edit_refuses_a_file_it_cannot_edit_exactly(text, why):
    with pytest.raises(ApprovalNotSaved, match=re.escape(why)):
        approve_always_text(text, "a", "t")


def test_a_save_whose_temporary_was_removed_fails_with_the_replace_error_and_keeps_the_file(
    tmp_path, monkeypatch
):
    """Someone else removes the temporary before it replaces the file (a cleaner of the
    folder): the save fails with the replace's own error, naming the config file, and the
    file is as it was (mutation testing, issue 33: the cleanup's ``missing_ok=True`` made
    ``False`` raised the cleanup's error instead, naming the temporary only)."""
    path = tmp_path / "c.toml"
    text = '[mcp_servers.a]\ncommand = "x"\n'
    path.write_text(text)
    chmod = os.chmod

    def chmod_then_lose(temporary: str, mode: int) -> None:
        chmod(temporary, mode)
        os.unlink(temporary)

    monkeypatch.setattr(os, "chmod", chmod_then_lose)
    with pytest.raises(FileNotFoundError) as raised:
        save_approve_always(str(path), "a", "t")
    assert raised.value.filename2 == str(path)
    assert path.read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.toml"]


def test_from_toml_records_the_config_path(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(textwrap.dedent('[mcp_servers.a]\ncommand = "x"\n'))
    assert HostConfig.from_toml(path).config_path == str(path)
    assert HostConfig().config_path is None


# --- the CLI -----------------------------------------------------------------------------

NOTES = f"""\
# the demo notes server, every call asked about
[mcp_servers.notes]   # keep this comment
command = {json.dumps(sys.executable)}
args = ["-m", "mcpbind.demo.servers", "notes"]
default_tools_approval_mode = "prompt"
"""


@pytest.mark.slow
def test_call_without_a_terminal_denies_a_gated_call_and_yes_approves_it(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(NOTES)
    args = ("call", "mcp__notes__add", '{"text": "hi"}', "--config", str(path), "--json")
    denied = mcpbind(*args)  # stdin: not a terminal
    assert denied.returncode == 1, denied.stderr
    report = json.loads(denied.stdout)
    assert report["status"] == "denied"
    assert report["output"] == texts.DENIED_NO_APPROVER.format(
        name="mcp__notes__add", server="notes", tool="add", mode="prompt"
    )
    approved = mcpbind(*args, "--yes")
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["status"] == "ok"
    assert path.read_text() == NOTES


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_call_on_a_terminal_asks_and_allow_always_rewrites_the_config(tmp_path):
    import pty

    path = tmp_path / "mcpbind.toml"  # found in the working directory
    path.write_text(NOTES.replace('"prompt"', '"auto"'))
    controller, terminal = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "mcpbind.cli", "call", "mcp__notes__add", '{"text": "hi"}'],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    ) as process:
        os.close(terminal)
        os.write(controller, b"maybe\na\n")  # an unknown answer is asked again
        out, err = process.communicate(timeout=120)
    os.close(controller)
    assert process.returncode == 0, err
    assert "cli-1: ok" in out
    assert "approve mcp__notes__add: tool 'add' of server 'notes'" in err
    assert 'arguments: {"text": "hi"}' in err
    assert err.count("choice [y/s/a/n/c]: ") == 2
    assert path.read_text() == NOTES.replace('"prompt"', '"auto"') + (
        '\n[mcp_servers.notes.tools.add]\napproval_mode = "approve"\n\n'
    )
