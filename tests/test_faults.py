"""Faults on real processes (issue 6, SPEC §11.7): each ends in the documented status,
within its timeout, with INV-3/INV-4/INV-8 holding."""

from __future__ import annotations

import os
import pathlib
import signal
import sys

import anyio
import anyio.abc
import pytest
from mcp import StdioServerParameters
from testservers.inproc import fs_server
from testservers.processes import free_port, start_http_server, stop

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.model import texts

HERE = pathlib.Path(__file__).parent / "testservers"
pytestmark = pytest.mark.slow


def lowlevel(state: pathlib.Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=[str(HERE / "stdio_lowlevel.py"), str(state)]
    )


def config(**servers: ServerConfig) -> HostConfig:
    return HostConfig(servers=servers, reconnect_initial_sec=0.05, reconnect_max_sec=0.2)


async def wait_for(predicate, seconds: float = 15.0) -> None:
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.02)


def kill(state: pathlib.Path) -> None:
    os.kill(int((state / "pid").read_text()), signal.SIGKILL)


async def test_sigkill_mid_listing_rejects_the_refresh_and_keeps_the_catalog(tmp_path):
    """INV-3, INV-8: the refresh in flight ends rejected; the catalog stays whole."""
    async with Host.open(config(ll=ServerConfig(target=lowlevel(tmp_path)))) as host:
        before = host.sample()
        (tmp_path / "hang-list").touch()
        outcomes = []

        async def refresh() -> None:
            outcomes.append(await host.refresh("ll"))

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(refresh)
            await anyio.sleep(0.3)
            kill(tmp_path)
        (outcome,) = outcomes
        assert (outcome.status, outcome.kind) == ("rejected", "disconnected")
        assert host.sample().generation == before.generation
        assert set(host.sample().names) == set(before.names)
        (tmp_path / "hang-list").unlink()
        await wait_for(lambda: host.statistics().connected["ll"])
        result = await host.call(host.sample(), "c1", "mcp__ll__echo", {"text": "back"})
        assert result.status == "ok"


async def test_a_server_that_never_answers_times_out_and_the_host_stays_responsive(tmp_path):
    """LIVE-1: the hanging call ends timed_out at its deadline; meanwhile other servers
    answer and steps can be sampled."""
    servers = {
        "ll": ServerConfig(target=lowlevel(tmp_path), tool_timeout_sec=1.0),
        "fs": ServerConfig(target=fs_server()),
    }
    async with Host.open(config(**servers)) as host:
        snap = host.sample()
        results = {}

        async def hang() -> None:
            results["hang"] = await host.call(snap, "h", "mcp__ll__hang", {})

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(hang)
            await anyio.sleep(0.1)
            started = anyio.current_time()
            other = await host.call(host.sample(), "o", "mcp__fs__read", {"path": "x"})
            assert other.status == "ok"
            assert anyio.current_time() - started < 0.5
        assert results["hang"].status == "timed_out"
        assert results["hang"].output == texts.TIMED_OUT.format(seconds="1 second")


async def test_an_optional_server_that_fails_to_start_joins_later_with_backoff(tmp_path):
    (tmp_path / "fail-starts").write_text("2")
    async with Host.open(config(ll=ServerConfig(target=lowlevel(tmp_path)))) as host:
        assert host.statistics().connected["ll"] is False
        assert host.server_status()[0].error
        await wait_for(lambda: host.sample().binding("mcp__ll__echo") is not None)
        assert host.statistics().connected["ll"] is True
        assert host.server_status()[0].error is None


async def test_an_http_server_stopped_and_restarted_mid_session_is_reconnected(tmp_path):
    """INV-8 over streamable HTTP: calls fail while it is down; after the restart the host
    reconnects and refreshes."""
    port = free_port()
    conf = config(h=ServerConfig(target=f"http://127.0.0.1:{port}/mcp"))
    first = await start_http_server(tmp_path, port)
    second: anyio.abc.Process | None = None
    try:
        async with Host.open(
            HostConfig(servers=conf.servers, reconnect_initial_sec=0.1, reconnect_max_sec=0.3)
        ) as host:
            await wait_for(lambda: host.sample().binding("mcp__h__echo") is not None)
            ok = await host.call(host.sample(), "c1", "mcp__h__echo", {"text": "one"})
            assert ok.status == "ok"
            await stop(first)
            down = await host.call(host.sample(), "c2", "mcp__h__echo", {"text": "two"})
            assert down.status == "failed"
            second = await start_http_server(tmp_path, port)
            await wait_for(lambda: host.statistics().connected["h"], seconds=30)
            again = await host.call(host.sample(), "c3", "mcp__h__echo", {"text": "three"})
            assert again.status == "ok", again.output
    finally:
        await stop(first)
        await stop(second)


def test_load_under_faults_ends_every_call_once_in_the_status_its_fault_implies():
    """INV-4, LIVE-1 under load: 800 calls over 4 servers (one a stdio process killed
    now and then); no trio task or child process is left afterwards."""
    from benchmarks.load import run_load

    report = run_load(800, seed=7)
    assert report.wrong == []
    assert sum(report.statuses.values()) == 800
    assert report.kills >= 1
    assert report.tasks_left == 0
    assert report.children_left == 0
