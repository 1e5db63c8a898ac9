"""MCP server overlays that depend on the step (SPEC §11.19, issue 27): a
``StepMcpServerContributor`` is asked at each ``Host.begin_step``; when the servers it
gives differ from those the host runs, the host reconfigures (SPEC §11.17) before it
samples. Real stdio servers (``testservers/stdio_server.py``), on trio and asyncio.
"""

from __future__ import annotations

import logging
import pathlib
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from mcp import StdioServerParameters
from testservers.processes import SERVER
from testservers.recorders import Inputs

from mcpbind.impl import (
    Host,
    HostConfig,
    RemoveServer,
    ServerConfig,
    SetServer,
    StepContext,
    StepMcpServerContributor,
)

pytestmark = pytest.mark.slow


def stdio(root: pathlib.Path, name: str) -> ServerConfig:
    target = StdioServerParameters(command=sys.executable, args=[str(SERVER), str(root / name)])
    return ServerConfig(target=target)


def pid(root: pathlib.Path, name: str) -> int:
    return int((root / name / "pid").read_text())


class WithB:
    """Adds server ``b`` for the steps whose context asks for it (``"b"``)."""

    id = "with-b"

    def __init__(self, b: ServerConfig) -> None:
        self.b = b
        self.asked: list[tuple[int, Any, tuple[str, ...]]] = []

    def actions(self, servers: Mapping[str, ServerConfig]) -> Sequence[SetServer | RemoveServer]:
        return []

    async def actions_for_step(
        self, servers: Mapping[str, ServerConfig], step: StepContext
    ) -> Sequence[SetServer | RemoveServer]:
        self.asked.append((step.step, step.mcp_context, tuple(servers)))
        return [SetServer("b", self.b)] if step.mcp_context == "b" else []


class DropX:
    """A contributor of the usual kind: removes ``x`` once, at open."""

    id = "drop-x"

    def __init__(self) -> None:
        self.calls = 0

    def actions(self, servers: Mapping[str, ServerConfig]) -> Sequence[SetServer | RemoveServer]:
        self.calls += 1
        return [RemoveServer("x")]


async def test_a_per_step_overlay_adds_and_removes_a_server_before_the_step_is_sampled(
    tmp_path: pathlib.Path,
) -> None:
    with_b, drop_x = WithB(stdio(tmp_path, "b")), DropX()
    assert isinstance(with_b, StepMcpServerContributor)
    assert not isinstance(drop_x, StepMcpServerContributor)
    inputs = Inputs()
    config = HostConfig(
        servers={"a": stdio(tmp_path, "a"), "x": stdio(tmp_path, "x")},
        contributors=(drop_x, with_b),
    )
    async with Host.open(config, recorder=inputs) as host:
        a = pid(tmp_path, "a")
        step = await host.begin_step()
        assert "mcp__a__echo" in step.names
        assert not any(name.startswith(("mcp__b__", "mcp__x__")) for name in step.names)
        assert "reconfigure" not in inputs.seen  # the servers did not change

        step = await host.begin_step("b")
        assert "mcp__b__echo" in step.names
        result = await host.call(step, "c1", "mcp__b__echo", {"text": "from b"})
        assert result.status == "ok", result.output
        assert [s.name for s in host.server_status()] == ["a", "b"]
        assert host.server_provenance().decided_by["b"].contributor == "with-b"
        assert host.server_provenance().decided_by["x"].contributor == "drop-x"  # replayed

        step = await host.begin_step("b")  # the same servers: nothing to do
        assert inputs.seen.count("reconfigure") == 1

        step = await host.begin_step()
        assert not any(name.startswith("mcp__b__") for name in step.names)
        assert [s.name for s in host.server_status()] == ["a"]
        assert inputs.seen.count("reconfigure") == 2
        assert pid(tmp_path, "a") == a  # the unchanged server kept its process
    assert drop_x.calls == 1  # a contributor of the usual kind runs at open only
    assert [(n, c) for n, c, _ in with_b.asked] == [(0, None), (1, "b"), (2, "b"), (3, None)]
    assert all(servers == ("a",) for _, _, servers in with_b.asked)  # x dropped before it


class Broken:
    id = "broken"

    def actions(self, servers: Mapping[str, ServerConfig]) -> Sequence[SetServer | RemoveServer]:
        return []

    async def actions_for_step(
        self, servers: Mapping[str, ServerConfig], step: StepContext
    ) -> Sequence[SetServer | RemoveServer]:
        if step.step == 0:
            raise RuntimeError("the plugin store is unreachable")
        return [SetServer("b", "not a ServerConfig")]  # type: ignore[arg-type]


async def test_a_per_step_contributor_that_fails_leaves_the_servers_as_they_are(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpbind.contributors")
    inputs = Inputs()
    config = HostConfig(servers={"a": stdio(tmp_path, "a")}, contributors=(Broken(),))
    async with Host.open(config, recorder=inputs) as host:
        for _ in range(2):
            step = await host.begin_step()
            assert "mcp__a__echo" in step.names
            assert [s.name for s in host.server_status()] == ["a"]
    assert "reconfigure" not in inputs.seen
    [raised, invalid] = [r.getMessage() for r in caplog.records]
    assert "contributor 'broken': actions_for_step failed at step 0" in raised
    assert "the plugin store is unreachable" in raised
    assert "expected a ServerConfig" in invalid
