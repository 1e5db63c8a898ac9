"""Progress notifications of calls in flight (issue 17, SPEC §8.10): every tools/call
carries a progress token; each notification reaches ``HostConfig(on_progress=...)`` in
order while the call is pending; late ones are dropped and counted. Against
``common.make_server``'s ``steps`` tool, in-process, over stdio and over HTTP."""

from __future__ import annotations

import io
import json
import logging
import os
import pathlib
import pty
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from backends import TRANSPORTS_WITH_PROGRESS
from cli_runner import mcpbind
from mcp import StdioServerParameters
from testservers.common import make_server
from testservers.processes import SERVER, http_server

from mcpbind.cli.tools import ProgressLine
from mcpbind.impl import ConfigError, Host, HostConfig, Progress, ServerConfig
from mcpbind.impl.calls.progress import ProgressCounts, ProgressFeed
from mcpbind.impl.config.host import parse_toml
from mcpbind.model import texts

TRANSPORTS = TRANSPORTS_WITH_PROGRESS


@asynccontextmanager
async def progressing(transport: str, state: pathlib.Path, **settings: Any) -> AsyncIterator[Host]:
    if transport == "http":
        async with http_server(state, listening=True) as port:
            config = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True)
            async with Host.open(HostConfig(servers={"s": config}, **settings)) as host:
                yield host
        return
    if transport == "inproc":
        target: object = make_server(state)
    else:
        target = StdioServerParameters(command=sys.executable, args=[str(SERVER), str(state)])
    config = ServerConfig(target=target, required=True)  # type: ignore[arg-type]
    async with Host.open(HostConfig(servers={"s": config}, **settings)) as host:
        yield host


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_each_progress_notification_reaches_on_progress_once_in_order(transport, tmp_path):
    seen: list[Progress] = []
    async with progressing(transport, tmp_path, on_progress=seen.append) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__steps", {"count": 5})
        statistics = host.statistics()
    assert result.status == "ok", result.output
    assert [(p.call_id, p.server, p.progress, p.total, p.message) for p in seen] == [
        ("c1", "s", float(n), 5.0, f"step {n}") for n in range(1, 6)
    ]
    assert (statistics.progress, statistics.late_progress) == (5, 0)


async def test_an_async_callback_is_awaited_and_keeps_the_order(tmp_path):
    seen: list[float] = []

    async def slow(progress: Progress) -> None:
        await anyio.sleep(0.01 if progress.progress == 1 else 0)
        seen.append(progress.progress)

    async with progressing("inproc", tmp_path, on_progress=slow) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__steps", {"count": 4})
    assert result.status == "ok", result.output
    assert seen == [1.0, 2.0, 3.0, 4.0]


async def test_a_failing_callback_is_logged_and_changes_nothing(tmp_path, caplog):
    def broken(progress: Progress) -> None:
        raise RuntimeError("the host's bug")

    caplog.set_level(logging.ERROR, logger="mcpbind.progress")
    async with progressing("inproc", tmp_path, on_progress=broken) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__steps", {"count": 2})
    assert result.status == "ok", result.output
    assert result.output.endswith('{"result":"2 steps"}')
    failures = [r for r in caplog.records if "on_progress failed" in r.getMessage()]
    assert len(failures) == 2


async def test_progress_is_counted_without_a_callback(tmp_path):
    async with progressing("inproc", tmp_path) as host:
        await host.call(host.sample(), "c1", "mcp__s__steps", {"count": 3})
        assert host.statistics().progress == 3


async def test_progress_after_the_call_ended_is_dropped_and_counted():
    seen: list[Progress] = []
    counts = ProgressCounts()
    feed = ProgressFeed("c1", "s", seen.append, counts)
    await feed.receive(1, None, None)
    feed.close()
    await feed.receive(2, None, None)
    assert [p.progress for p in seen] == [1.0]
    assert (counts.delivered, counts.late) == (1, 1)


async def test_notifications_that_arrive_together_are_delivered_by_increasing_progress():
    """The SDK runs each callback in its own task; trio may start them in either order."""
    seen: list[float] = []
    feed = ProgressFeed("c1", "s", lambda p: seen.append(p.progress), ProgressCounts())
    async with anyio.create_task_group() as group:
        for value in (3, 1, 2):  # as if the scheduler had reversed a batch
            group.start_soon(feed.receive, value, None, None)
    assert seen == [1.0, 2.0, 3.0]


def _config(tmp_path: pathlib.Path) -> pathlib.Path:
    config = tmp_path / "mcpbind.toml"
    config.write_text(
        "[mcp_servers.s]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SERVER))}, {json.dumps(str(tmp_path / 'state'))}]\n"
    )
    return config


CALL_STEPS = (sys.executable, "-m", "mcpbind.cli", "call", "mcp__s__steps", '{"count": 3}')


def test_mcpbind_call_shows_a_progress_line_on_a_terminal(tmp_path):
    config = _config(tmp_path)
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [*CALL_STEPS, "--config", str(config), "--json"],
            stdout=subprocess.PIPE,
            stderr=follower,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=120,
            check=False,
        )
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    assert done.returncode == 0, shown
    assert json.loads(done.stdout)["status"] == "ok"
    text = shown.decode()
    assert "[s] progress 1/3 step 1" in text
    assert "[s] progress 3/3 step 3" in text
    assert text.rstrip("\r\n").endswith("step 3")


def test_mcpbind_call_off_a_terminal_prints_no_progress(tmp_path):
    done = mcpbind(
        "call", "mcp__s__steps", '{"count": 3}', "--config", str(_config(tmp_path)), "--json"
    )
    assert done.returncode == 0, done.stderr
    assert "progress" not in done.stderr
    assert set(json.loads(done.stdout)) == {"call_id", "status", "output"}


def test_the_progress_line_is_rewritten_in_place_and_ended_once():
    stream = io.StringIO()
    line = ProgressLine(stream)
    line(Progress("c1", "s", 1, None, None))
    line(Progress("c1", "s", 2, 4, "half"))
    line.end()
    line.end()
    assert stream.getvalue() == ("\r\x1b[K[s] progress 1\r\x1b[K[s] progress 2/4 half\n")


# --- SPEC §8.11: an idle timeout that progress re-arms, capped ---------------------------


async def idle_call(tmp_path: pathlib.Path, transport: str, **arguments: Any) -> Any:
    settings = {"idle_timeout": True, "tool_timeout_sec": 0.6, "tool_max_sec": 1.5}
    if transport == "inproc":
        config = ServerConfig(target=make_server(tmp_path), **settings)
    else:
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER), str(tmp_path)])
        config = ServerConfig(target=params, **settings)
    async with Host.open(HostConfig(servers={"s": config})) as host:
        return await host.call(host.sample(), "c1", "mcp__s__steps", arguments)


@pytest.mark.parametrize("transport", ["inproc", "stdio"])
async def test_progress_faster_than_the_idle_timeout_keeps_a_long_call_alive(transport, tmp_path):
    """Four steps 0.25 s apart: 1 s in all, longer than the 0.6 s idle timeout."""
    result = await idle_call(tmp_path, transport, count=4, pause=0.25)
    assert result.status == "ok", result.output
    assert result.output.endswith('{"result":"4 steps"}')


@pytest.mark.parametrize("transport", ["inproc", "stdio"])
async def test_progress_slower_than_the_idle_timeout_times_the_call_out(transport, tmp_path):
    result = await idle_call(tmp_path, transport, count=3, pause=1.0)
    assert result.status == "timed_out"
    assert result.output == texts.TIMED_OUT_IDLE.format(seconds="0.6 seconds")


@pytest.mark.parametrize("transport", ["inproc", "stdio"])
async def test_the_cap_ends_a_call_that_keeps_reporting_progress(transport, tmp_path):
    result = await idle_call(tmp_path, transport, count=1000, pause=0.2)
    assert result.status == "timed_out"
    assert result.output == texts.TIMED_OUT_CAP.format(seconds="1.5 seconds")


async def test_without_an_idle_timeout_progress_does_not_extend_the_deadline(tmp_path):
    config = ServerConfig(target=make_server(tmp_path), tool_timeout_sec=0.6)
    async with Host.open(HostConfig(servers={"s": config})) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__steps", {"count": 4, "pause": 0.25})
    assert result.status == "timed_out"
    assert result.output == texts.TIMED_OUT.format(seconds="0.6 seconds")


@pytest.mark.parametrize(
    "settings",
    [
        {"tool_timeout_sec": 0},
        {"tool_timeout_sec": 60, "tool_max_sec": 60},
        {"tool_timeout_sec": 60, "tool_max_sec": 0},
    ],
)
def test_an_idle_timeout_needs_a_timeout_below_its_cap(settings):
    with pytest.raises(ConfigError, match="idle timeout needs 0 < tool_timeout_sec < tool_max_sec"):
        ServerConfig(target="http://127.0.0.1:1/mcp", idle_timeout=True, **settings)


def test_the_idle_timeout_is_set_in_the_mcpbind_table_so_the_file_stays_a_codex_config(tmp_path):
    text = (
        '[mcp_servers.fs]\ncommand = "x"\ntool_timeout_sec = 60\n\n'
        "[mcpbind.idle_timeout]\nfs = 1800\n"
    )
    config = parse_toml(text, path="c.toml", environ={})
    fs = config.config.servers["fs"]
    assert (fs.idle_timeout, fs.tool_timeout_sec, fs.tool_max_sec) == (True, 60.0, 1800.0)
    with pytest.raises(ConfigError, match=r"c.toml: \[mcpbind.idle_timeout\] key 'fs'"):
        parse_toml(text.replace("1800", "30"), path="c.toml", environ={})
    with pytest.raises(ConfigError, match="names no server"):
        parse_toml(text.replace("fs = 1800", "git = 1800"), path="c.toml", environ={})


def test_notifications_still_waiting_when_the_call_ends_reach_a_plain_callback_in_order():
    """``ProgressFeed.close`` delivers what still waits, lowest progress first, to a plain
    callback (here the call ends from inside the callback, while the second notification
    waits behind the first; issue 33: the heap entry's field misread at close survived)."""
    import trio

    from mcpbind.impl.calls.progress import ProgressCounts, ProgressFeed

    seen: list[tuple[float, str | None]] = []

    def on_progress(progress) -> None:
        seen.append((progress.progress, progress.message))
        feed.close()  # the answer is in

    feed = ProgressFeed("c1", "s", on_progress, ProgressCounts())

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(feed.receive, 2.0, None, "second")
            nursery.start_soon(feed.receive, 1.0, None, "first")

    trio.run(main)
    assert seen == [(1.0, "first"), (2.0, "second")]
    assert (feed.counts.delivered, feed.counts.late) == (2, 0)


def test_a_call_settles_its_progress_only_when_a_callback_waits_for_it():
    """``ProgressFeed.settles``: whether the router lets the notifications the SDK read
    before the answer reach the feed (``settle``, one trip through the scheduler) before
    it closes it; only a callback waits for them, and without one the hot path makes no
    coroutine (mutation seed 102: ``is not None`` made ``is`` settled only when no one
    was waiting). The delivery itself depends on the order trio runs ready tasks in,
    which it chooses at random: not asserted here."""
    from mcpbind.impl.calls.progress import ProgressCounts, ProgressFeed

    assert not ProgressFeed("c0", "s", None, ProgressCounts()).settles
    assert ProgressFeed("c1", "s", lambda p: None, ProgressCounts()).settles
