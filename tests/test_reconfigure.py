"""Reconfiguring a running host (SPEC §11.17, INV-1, INV-15, INV-16), read off the wire of
real stdio servers: each runs behind the relay that logs every message
(``testservers/relay.py``), so a test sees which process got which message, in order."""

from __future__ import annotations

import os
import pathlib
import sys
from collections.abc import Mapping
from typing import Any

import anyio
import attrs
import pytest
from mcp import StdioServerParameters
from testservers.inproc import fs_server
from wire import RELAY, SERVER, assert_cancelled_before_eof, call_id_of, sent, wire

from mcpbind.impl import (
    ConfigError,
    Host,
    HostClosed,
    HostConfig,
    NullRecorder,
    ServerConfig,
    SetServer,
)
from mcpbind.impl.seams import PRODUCTION, Seams
from mcpbind.impl.values import RefreshOutcome
from mcpbind.model import texts
from mcpbind.properties.impl_mutants import RECONFIGURE_MUTANTS

pytestmark = pytest.mark.slow


def stdio(root: pathlib.Path, name: str, **env: str) -> ServerConfig:
    """Our stdio test server ``name`` (state in ``root/name``, wire in ``root/name.log``),
    behind the logging relay; ``env`` adds its settings (``MCPBIND_TEST_ONLY_TOOLS``)."""
    state, log = root / name, root / f"{name}.log"
    args = [str(RELAY), str(log), sys.executable, str(SERVER), str(state)]
    params = StdioServerParameters(command=sys.executable, args=args, env={**os.environ, **env})
    return ServerConfig(target=params)


def pid(root: pathlib.Path, name: str) -> int:
    return int((root / name / "pid").read_text())


def methods(root: pathlib.Path, name: str) -> list[str]:
    """The methods the host sent server ``name``, in order; ``EOF`` once its stdin closed."""
    return [
        "EOF" if message == "EOF" else message["method"]
        for direction, message in wire(root / f"{name}.log")
        if direction == "> " and (message == "EOF" or "method" in message)
    ]


def openings(root: pathlib.Path, name: str) -> int:
    """Sessions opened on server ``name``'s wire (``server/discover`` on 2026-07-28, else
    ``initialize``)."""
    return sum(m in ("server/discover", "initialize") for m in methods(root, name))


class Publications(NullRecorder):
    """What the host published, its refresh outcomes and its inputs, in order."""

    def __init__(self) -> None:
        self.log: list[tuple[int, str, tuple[str, ...]]] = []
        self.outcomes: list[RefreshOutcome] = []
        self.inputs: list[tuple[str, dict[str, Any]]] = []

    def published(self, generation: int, source: str, names: tuple[str, ...]) -> None:
        self.log.append((generation, source, names))

    def refresh_outcome(self, outcome: RefreshOutcome) -> None:
        self.outcomes.append(outcome)

    def event(self, kind: Any, fields: Mapping[str, Any]) -> None:
        self.inputs.append((kind, dict(fields)))
        if kind == "reconfigure":
            self.decided.set()

    @property
    def decided(self) -> anyio.Event:
        """Set once a reconfiguration was decided (its input recorded)."""
        if not hasattr(self, "_decided"):
            self._decided = anyio.Event()
        return self._decided


async def test_reconfigure_keeps_an_unchanged_servers_process_and_session(tmp_path):
    """An unchanged server is not touched: same process, one session opened on its wire,
    its tools stay; a removed one is closed; an added one's tools appear."""
    await keeps_the_unchanged_server(tmp_path)


async def keeps_the_unchanged_server(tmp_path: pathlib.Path, seams: Seams = PRODUCTION) -> None:
    a, b = stdio(tmp_path, "a", MCPBIND_TEST_ONLY_TOOLS="echo"), stdio(tmp_path, "b")
    d = stdio(tmp_path, "d", MCPBIND_TEST_ONLY_TOOLS="echo,measure")
    async with Host.open(HostConfig(servers={"a": a, "b": b}), seams=seams) as host:
        before = pid(tmp_path, "a")
        report = await host.reconfigure(HostConfig(servers={"a": a, "d": d}))
        assert pid(tmp_path, "a") == before
        assert openings(tmp_path, "a") == 1
        assert (report.unchanged, report.removed, report.added) == (("a",), ("b",), ("d",))
        step = host.sample()
        assert {s.name for s in step.specs} == {"mcp__a__echo", "mcp__d__echo", "mcp__d__measure"}
        result = await host.call(step, "c1", "mcp__a__echo", {"text": "still here"})
        assert result.status == "ok", result.output
        assert "still here" in result.output
        assert [(s.name, s.connected, s.tools) for s in host.server_status()] == [
            ("a", True, 1),
            ("d", True, 2),
        ]
        assert openings(tmp_path, "a") == 1
        assert methods(tmp_path, "b")[-1] == "EOF"  # closed by the reconfiguration
        assert "EOF" not in methods(tmp_path, "a")
    assert openings(tmp_path, "a") == 1


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
async def test_a_removed_server_with_a_call_in_flight_gets_its_cancellation_before_its_stdin_closes(
    tmp_path, policy
):
    await cancels_before_the_removal(tmp_path, policy)


async def cancels_before_the_removal(
    tmp_path: pathlib.Path, policy: str = "revalidate", seams: Seams = PRODUCTION
) -> None:
    a, b = stdio(tmp_path, "a", MCPBIND_TEST_ONLY_TOOLS="echo"), stdio(tmp_path, "b")
    results = []
    config = HostConfig(servers={"a": a, "b": b}, binding_policy=policy)
    async with Host.open(config, seams=seams) as host:
        step = host.sample()

        async def call() -> None:
            results.append(await host.call(step, "c1", "mcp__b__slow", {"tag": "removed"}))

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await sent(tmp_path / "b.log", "slow")
            report = await host.reconfigure(HostConfig(servers={"a": a}))
        entries = wire(tmp_path / "b.log")
        assert_cancelled_before_eof(entries, call_id_of(entries, "slow"))
        text = texts.RECONFIGURED_SENT.format(how="removed", server="b")
        assert [(r.status, r.output) for r in results] == [("cancelled", text)]
        assert report.removed == ("b",)
        assert report.servers[-1].calls_ended == 1
        assert (tmp_path / "b" / "cancelled").read_text().split() == ["removed"]
        with pytest.raises(ProcessLookupError):
            os.kill(pid(tmp_path, "b"), 0)


async def test_a_changed_servers_catalog_is_replaced_in_one_publication(tmp_path):
    """INV-15: the old catalog stays until the replacement's first listing, which replaces
    it in one publication; the old process is closed before the new one starts."""
    old = stdio(tmp_path, "c", MCPBIND_TEST_ONLY_TOOLS="echo")
    new = stdio(tmp_path, "c", MCPBIND_TEST_ONLY_TOOLS="echo,measure")
    recorder = Publications()
    async with Host.open(HostConfig(servers={"c": old}), recorder=recorder) as host:
        first_pid = pid(tmp_path, "c")
        generation = host.sample().generation
        report = await host.reconfigure(HostConfig(servers={"c": new}))
        assert report.changed == ("c",)
        assert report.generation == generation  # nothing removed: no publication for it
        assert pid(tmp_path, "c") != first_pid
        step = host.sample()
        assert step.generation == generation + 1
        assert {s.name for s in step.specs} == {"mcp__c__echo", "mcp__c__measure"}
        assert recorder.log[-1] == (generation + 1, "mcp:c", ("mcp__c__echo", "mcp__c__measure"))
        assert [p for p in recorder.log if p[1] == "mcp:c" and not p[2]] == []
        result = await host.call(step, "c1", "mcp__c__measure", {"text": "two words"})
        assert result.status == "ok", result.output
    kinds = [kind for kind, _ in recorder.inputs]
    assert kinds.count("reconfigure") == 1
    fields = dict(recorder.inputs)["reconfigure"]
    assert {k: fields[k] for k in ("added", "removed", "changed")} == {
        "added": [],
        "removed": [],
        "changed": ["c"],
    }
    assert list(fields["server_options"]) == ["c"]  # what refinement needs of it
    log = methods(tmp_path, "c")
    assert openings(tmp_path, "c") == 2
    assert log.index("EOF") < len(log) - 1  # the old session closed, then the new one


async def test_removals_are_one_publication_with_one_generation(tmp_path):
    """INV-1, INV-15: a reconfiguration that removes two non-empty catalogs moves G by one."""
    await removes_in_one_publication(tmp_path)


async def removes_in_one_publication(tmp_path: pathlib.Path, seams: Seams = PRODUCTION) -> None:
    servers = {n: stdio(tmp_path, n, MCPBIND_TEST_ONLY_TOOLS="echo") for n in ("a", "b", "c")}
    recorder = Publications()
    config = HostConfig(servers=servers)
    async with Host.open(config, recorder=recorder, seams=seams) as host:
        generation = host.sample().generation
        report = await host.reconfigure(HostConfig(servers={"b": servers["b"]}))
        assert recorder.log[-2:] == [(generation + 1, "mcp:a", ()), (generation + 1, "mcp:c", ())]
        assert host.sample().generation == generation + 1
        assert report.generation == generation + 1
        assert [s.name for s in host.server_status()] == ["b"]
        with pytest.raises(KeyError):
            await host.refresh("a")


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
async def test_an_earlier_steps_call_of_a_removed_servers_tool_ends_unavailable_unsent(
    tmp_path, policy
):
    a, b = stdio(tmp_path, "a", MCPBIND_TEST_ONLY_TOOLS="echo"), stdio(tmp_path, "b")
    config = HostConfig(servers={"a": a, "b": b}, binding_policy=policy)
    async with Host.open(config) as host:
        step = host.sample()  # before the reconfiguration: it still shows b's tools
        await host.reconfigure(HostConfig(servers={"a": a}))
        result = await host.call(step, "c1", "mcp__b__echo", {"text": "too late"})
        text = texts.REMOVED.format(name="mcp__b__echo", server="b")
        assert (result.status, result.output) == ("unavailable", text)
        assert "tools/call" not in methods(tmp_path, "b")
        kept = await host.call(step, "c2", "mcp__a__echo", {"text": "kept"})
        assert kept.status == "ok", kept.output


async def test_reconfigure_after_close_raises_host_closed_and_concurrent_ones_take_turns(
    tmp_path,
):
    a, b = stdio(tmp_path, "a", MCPBIND_TEST_ONLY_TOOLS="echo"), stdio(tmp_path, "b")
    reports = []
    async with Host.open(HostConfig(servers={"a": a})) as host:

        async def reconfigure(servers: dict[str, ServerConfig]) -> None:
            reports.append(await host.reconfigure(HostConfig(servers=servers)))

        async with anyio.create_task_group() as group:
            group.start_soon(reconfigure, {"a": a, "b": b})
            await anyio.wait_all_tasks_blocked()
            group.start_soon(reconfigure, {"b": b})
        assert [(r.added, r.removed, r.unchanged) for r in reports] == [
            (("b",), (), ("a",)),
            ((), ("a",), ("b",)),
        ]
        assert [s.name for s in host.server_status()] == ["b"]
    with pytest.raises(HostClosed):
        await host.reconfigure(HostConfig(servers={"a": a}))


async def test_a_call_to_a_changed_server_waits_for_its_replacement_and_goes_to_it(tmp_path):
    """INV-11 for a replacement (``frozen`` binds names, not sessions): a call of a step
    sampled before the change waits for the new server's first listing, then is sent on
    the new session; the old process never sees it."""
    old = stdio(tmp_path, "c", MCPBIND_TEST_ONLY_TOOLS="echo")
    new = stdio(tmp_path, "c", MCPBIND_TEST_ONLY_TOOLS="echo,measure")
    recorder = Publications()
    config = HostConfig(servers={"c": old}, binding_policy="frozen")
    async with Host.open(config, recorder=recorder) as host:
        step = host.sample()
        results = []

        async def call() -> None:
            await recorder.decided.wait()
            results.append(await host.call(step, "c1", "mcp__c__echo", {"text": "to the new"}))

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await host.reconfigure(HostConfig(servers={"c": new}, binding_policy="frozen"))
        assert results[0].status == "ok", results[0].output
    log = methods(tmp_path, "c")
    eof = log.index("EOF")
    assert "tools/call" not in log[:eof]  # the old server never saw it
    assert "tools/call" in log[eof:]


async def test_a_replacement_that_cannot_start_removes_the_old_catalog_in_one_publication(
    tmp_path,
):
    """INV-15: the old catalog stays while the replacement starts; when it fails, the old
    catalog is removed in one publication and the outcome says why, with that generation."""
    old = stdio(tmp_path, "c", MCPBIND_TEST_ONLY_TOOLS="echo")
    broken = stdio(tmp_path, "c", MCPBIND_TEST_EXIT_AT_START="1")
    recorder = Publications()
    async with Host.open(HostConfig(servers={"c": old}), recorder=recorder) as host:
        generation = host.sample().generation
        report = await host.reconfigure(HostConfig(servers={"c": broken}))
        (change,) = report.servers
        assert (change.name, change.change, change.connected, change.tools) == (
            "c",
            "changed",
            False,
            0,
        )
        assert change.error is not None
        assert recorder.log[-1] == (generation + 1, "mcp:c", ())
        outcome = recorder.outcomes[-1]
        assert (outcome.status, outcome.kind, outcome.generation) == (
            "rejected",
            "disconnected",
            generation + 1,
        )
        assert outcome.reason is not None
        assert texts.REPLACED_CATALOG_REMOVED in outcome.reason  # not "stays installed"
        assert host.sample().specs == ()
        assert [(s.name, s.connected) for s in host.server_status()] == [("c", False)]


KILLED_BY = {
    "reconfigure_in_two_generations": removes_in_one_publication,
    "restart_unchanged_server": keeps_the_unchanged_server,
    "drop_cancellation_on_removal": cancels_before_the_removal,
}
"""SPEC §12.7: the scenario above that kills each runtime mutant of a reconfiguration."""


@pytest.mark.parametrize("mutant", RECONFIGURE_MUTANTS, ids=lambda m: m.name)
async def test_each_reconfiguration_mutant_fails_its_real_server_scenario(tmp_path, mutant):
    assert set(KILLED_BY) == {m.name for m in RECONFIGURE_MUTANTS}
    with pytest.raises(AssertionError):
        await KILLED_BY[mutant.name](tmp_path, seams=mutant.seams)


@attrs.frozen
class Overlay:
    """An MCP server contributor: adds ``extra`` to whatever servers it is given, or, once
    ``broken`` is set, answers with an invalid action."""

    id: str
    extra: ServerConfig
    broken: list[bool]

    def actions(self, servers: Mapping[str, ServerConfig]) -> list[Any]:
        return ["not an action"] if self.broken[0] else [SetServer("extra", self.extra)]


async def test_reconfigure_reruns_the_server_contributors_and_an_invalid_one_changes_nothing():
    """SPEC §11.11, §11.17: the host's MCP server contributors run on the new servers; a
    contributor whose actions are invalid makes ``reconfigure`` raise ConfigError, and the
    host runs what it ran."""
    broken = [False]
    overlay = Overlay("overlay", ServerConfig(target=fs_server(name="extra")), broken)
    first = ServerConfig(target=fs_server())
    config = HostConfig(servers={"fs": first}, contributors=(overlay,))
    async with Host.open(config) as host:
        assert [s.name for s in host.server_status()] == ["fs", "extra"]
        second = ServerConfig(target=fs_server(name="fs2"))
        report = await host.reconfigure(HostConfig(servers={"fs2": second}))
        assert (report.added, report.removed, report.unchanged) == (("fs2",), ("fs",), ("extra",))
        broken[0] = True
        generation = host.sample().generation
        with pytest.raises(ConfigError, match="overlay"):
            await host.reconfigure(HostConfig(servers={"fs": first}))
        assert [s.name for s in host.server_status()] == ["fs2", "extra"]
        assert host.sample().generation == generation
        assert host.server_provenance().servers.keys() == {"fs2", "extra"}
