"""Calls that run as tasks (issue 17, SPEC §8.12), against a server of the tests' own that
implements the 2026-07-28 tasks extension (``testservers/tasks_server.py``, SEP-2663), in
process and over stdio; ``test_tasks_everything.py`` runs the same checks against the
handshake-era tasks of ``@modelcontextprotocol/server-everything``.

What is checked is what a host and the server observe: the call's one result, the
elicitation policy's answer reaching the task, and the server's own log of what reached
it (one ``tasks/cancel``, never ``notifications/cancelled``, for a task the host ends).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest
from backends import TRANSPORTS_WITH_PROGRESS
from mcp import StdioServerParameters
from testservers.processes import free_port, stop, wait_listening
from testservers.tasks_server import build

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.calls.tasks import POLL_DEFAULT, POLL_MAX, poll_delay
from mcpbind.impl.values import ElicitationAnswer, ElicitationRequest
from mcpbind.model import texts

SERVER = pathlib.Path(__file__).parent / "testservers" / "tasks_server.py"
TRANSPORTS = TRANSPORTS_WITH_PROGRESS


@asynccontextmanager
async def serving_http(log: pathlib.Path) -> AsyncIterator[str]:
    """The tasks server over streamable HTTP on loopback; yields its URL once it listens."""
    port = free_port()
    process = await anyio.open_process(
        [sys.executable, str(SERVER), str(log)],
        env={**os.environ, "MCPBIND_TEST_HTTP_PORT": str(port)},
        stdin=subprocess.DEVNULL,
    )
    try:
        await wait_listening(port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        await stop(process)


@asynccontextmanager
async def tasks_host(transport: str, log: pathlib.Path, **settings: Any) -> AsyncIterator[Host]:
    log.write_text("")
    server = settings.pop("server", {})
    async with AsyncExitStack() as stack:
        if transport == "inproc":
            target: Any = build(log)
        elif transport == "http":
            target = await stack.enter_async_context(serving_http(log))
        else:
            target = StdioServerParameters(command=sys.executable, args=[str(SERVER), str(log)])
        config = ServerConfig(target=target, required=True, **server)
        async with Host.open(HostConfig(servers={"s": config}, **settings)) as host:
            yield host


def received(log: pathlib.Path) -> list[str]:
    """What reached the server: ``tools/call NAME``, ``tasks/* ID``, cancellations (the
    ``Mcp-Name`` headers of HTTP requests aside)."""
    return [line for line in log.read_text().splitlines() if not line.startswith("header ")]


def cancellations(log: pathlib.Path) -> list[str]:
    """The request cancellations the server got, but those of subscription streams (the
    host closing its ``subscriptions/listen``, SPEC §11.14)."""
    return [
        line
        for line in received(log)
        if line.startswith("notifications/cancelled") and "listen" not in line
    ]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_call_the_server_runs_as_a_task_ends_ok_with_its_report(transport, tmp_path):
    log = tmp_path / "log"
    async with tasks_host(transport, log) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__research", {"topic": "apple"})
    assert result.status == "ok", result.output
    assert "Research report on 'apple' (the obvious one): 3 stages done." in result.output
    lines = [line for line in received(log) if not line.startswith("notifications/")]
    assert lines[0] == "tools/call research"
    task_id = lines[1].split()[1]
    assert len(lines) > 1
    assert all(line == f"tasks/get {task_id}" for line in lines[1:])
    assert not cancellations(log)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_task_that_asks_for_input_gets_the_elicitation_policys_answer(transport, tmp_path):
    asked: list[ElicitationRequest] = []

    async def handler(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer("accept", {"interpretation": "the fruit"})

    log = tmp_path / "log"
    async with tasks_host(transport, log, elicitation="ask", elicitation_handler=handler) as host:
        arguments = {"topic": "apple", "ambiguous": True}
        result = await host.call(host.sample(), "c1", "mcp__s__research", arguments)
    assert result.status == "ok", result.output
    assert "(interpretation: the fruit)" in result.output
    assert [(r.server, r.message) for r in asked] == [
        ("s", "Which meaning of 'apple' should I research?")
    ]
    updates = [line for line in received(log) if line.startswith("tasks/update")]
    assert len(updates) == 1  # each input request is answered once, though polls repeat it


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_task_asking_for_input_under_the_decline_policy_gets_a_decline(transport, tmp_path):
    async with tasks_host(transport, tmp_path / "log") as host:  # elicitation = "decline"
        arguments = {"topic": "apple", "ambiguous": True}
        result = await host.call(host.sample(), "c1", "mcp__s__research", arguments)
    assert result.status == "ok", result.output
    assert "(no clarification (decline): the obvious one)" in result.output


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_cancelling_a_task_sends_one_tasks_cancel_and_gives_one_cancelled_result(
    transport, tmp_path
):
    log = tmp_path / "log"
    async with tasks_host(transport, log) as host:
        step = host.sample()
        results = []

        async def call() -> None:
            arguments = {"topic": "slow", "stages": 1000}
            results.append(await host.call(step, "c1", "mcp__s__research", arguments))

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            with anyio.fail_after(10):
                while not any(line.startswith("tasks/get") for line in received(log)):
                    await anyio.sleep(0.01)
            host.cancel("c1")
        statistics = host.statistics()
    assert [(r.status, r.output) for r in results] == [("cancelled", texts.CANCELLED)]
    assert statistics.results == {"cancelled": 1}
    lines = received(log)
    task_id = lines[1].split()[1]
    assert [line for line in lines if line.startswith("tasks/cancel")] == [
        f"tasks/cancel {task_id}"
    ]
    assert not cancellations(log)  # INV-7: never notifications/cancelled for a task


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_task_that_times_out_is_cancelled_with_tasks_cancel(transport, tmp_path):
    log = tmp_path / "log"
    server = {"tool_timeout_sec": 0.5}
    async with tasks_host(transport, log, server=server) as host:
        arguments = {"topic": "slow", "stages": 1000}
        result = await host.call(host.sample(), "c1", "mcp__s__research", arguments)
    assert (result.status, result.output) == (
        "timed_out",
        texts.TIMED_OUT.format(seconds="0.5 seconds"),
    )
    assert sum(line.startswith("tasks/cancel") for line in received(log)) == 1
    assert not cancellations(log)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_closing_the_host_cancels_a_running_task_with_tasks_cancel(transport, tmp_path):
    log = tmp_path / "log"
    results = []
    # The callers' task group outlives the host: the call is pending when it closes.
    async with anyio.create_task_group() as group, tasks_host(transport, log) as host:
        step = host.sample()

        async def call() -> None:
            arguments = {"topic": "slow", "stages": 1000}
            results.append(await host.call(step, "c1", "mcp__s__research", arguments))

        group.start_soon(call)
        with anyio.fail_after(10):
            while not any(line.startswith("tasks/get") for line in received(log)):
                await anyio.sleep(0.01)
    assert [(r.status, r.output) for r in results] == [("cancelled", texts.CLOSED_SENT)]
    assert sum(line.startswith("tasks/cancel") for line in received(log)) == 1
    assert not cancellations(log)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_task_the_server_fails_ends_failed_with_its_reason(transport, tmp_path):
    async with tasks_host(transport, tmp_path / "log") as host:
        result = await host.call(host.sample(), "c1", "mcp__s__doomed", {"why": "bad luck"})
    text = texts.TASK_FAILED.format(tool="doomed", server="s", why="bad luck")
    assert (result.status, result.output) == ("failed", text)


async def test_a_failed_task_ends_with_its_errors_message_not_its_status_message(tmp_path):
    """SEP-2663: a failed task's ``tasks/get`` carries the error inline; its message says
    why the task failed, ``statusMessage`` only what the task was doing (mutation testing,
    issue 33: a host reading only ``statusMessage`` failed no test, as the two agreed)."""
    arguments = {"why": "stage 2 of 3", "detail": "the archive is gone"}
    async with tasks_host("inproc", tmp_path / "log") as host:
        result = await host.call(host.sample(), "c1", "mcp__s__doomed", arguments)
    text = texts.TASK_FAILED.format(tool="doomed", server="s", why="the archive is gone")
    assert (result.status, result.output) == ("failed", text)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_plain_tool_next_to_task_tools_reports_progress_per_step(transport, tmp_path):
    seen = []
    async with tasks_host(transport, tmp_path / "log", on_progress=seen.append) as host:
        arguments = {"steps": 4, "seconds": 0.2}
        result = await host.call(host.sample(), "c1", "mcp__s__long_operation", arguments)
    assert result.status == "ok", result.output
    assert [(p.progress, p.total) for p in seen] == [(1, 4), (2, 4), (3, 4), (4, 4)]


async def test_over_http_each_tasks_request_names_its_task_in_mcp_name(tmp_path):
    """SEP-2663: over streamable HTTP a client MUST set ``Mcp-Name`` to the task id on
    ``tasks/get``, ``tasks/update`` and ``tasks/cancel``."""
    log = tmp_path / "log"
    async with tasks_host("http", log) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__research", {"topic": "x"})
    assert result.status == "ok", result.output
    lines = log.read_text().splitlines()
    task_id = next(line.split()[1] for line in lines if line.startswith("tasks/get"))
    headers = [line for line in lines if line.startswith("header ")]
    assert headers
    assert set(headers) == {f"header tasks/get {task_id}"}


def test_the_poll_interval_is_the_servers_within_bounds():
    assert poll_delay(None) == POLL_DEFAULT
    assert poll_delay(0.02) == 0.02
    assert poll_delay(-1) == 0.0
    assert poll_delay(10_000) == POLL_MAX
    assert poll_delay(float("nan")) == POLL_DEFAULT
