"""The runtime against real stdio subprocess servers (INV-7, INV-8, startup, reconnect)."""

from __future__ import annotations

import logging
import os
import pathlib
import signal
import sys

import anyio
import pytest
from mcp import StdioServerParameters
from testservers.processes import http_server

from mcpbind.impl import Host, HostConfig, ServerConfig, ServerStartupError
from mcpbind.model import texts

SERVER = pathlib.Path(__file__).parent / "testservers" / "stdio_server.py"

# Each test starts a real stdio server (about a second); the two that wait for a timeout
# or a retry are marked slow, so that mutation samples run the rest.


def stdio(state: pathlib.Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(SERVER), str(state)], env=env)


def host_config(state: pathlib.Path, **options) -> HostConfig:
    env = options.pop("env", {})
    return HostConfig(
        servers={"s": ServerConfig(target=stdio(state, **env), **options)},
        reconnect_initial_sec=0.05,
        reconnect_max_sec=0.2,
    )


async def wait_for(predicate, seconds: float = 10.0) -> None:
    with anyio.fail_after(seconds):
        while not predicate():
            await anyio.sleep(0.01)


async def test_stdio_call_round_trip(tmp_path):
    async with Host.open(host_config(tmp_path)) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__echo", {"text": "hello"})
    assert result.status == "ok"
    assert result.output.endswith('{"result":"hello"}')


async def test_cancel_sends_one_notification_and_the_server_cancels_its_handler(tmp_path):
    """INV-7 over JSON-RPC."""
    async with Host.open(host_config(tmp_path)) as host:
        snap = host.sample()
        results = []

        async def run() -> None:
            results.append(await host.call(snap, "c1", "mcp__s__slow", {"tag": "x1"}))

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(run)
            await anyio.sleep(0.3)
            host.cancel("c1")
        assert results[0].status == "cancelled"
        await wait_for((tmp_path / "cancelled").exists)
    assert (tmp_path / "cancelled").read_text().split() == ["x1"]


async def test_timeout_reaches_the_server(tmp_path):
    async with Host.open(host_config(tmp_path, tool_timeout_sec=0.3)) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__slow", {"tag": "t"})
        assert result.status == "timed_out"
        await wait_for((tmp_path / "cancelled").exists)


async def test_killed_server_fails_in_flight_calls_fast_keeps_the_catalog_and_reconnects(tmp_path):
    """INV-8: SIGKILL mid-call; then reconnect with backoff and refresh."""
    async with Host.open(host_config(tmp_path)) as host:
        snap = host.sample()
        generation = snap.generation
        results = []

        async def run() -> None:
            results.append(await host.call(snap, "c1", "mcp__s__slow", {"tag": "k"}))

        async with anyio.create_task_group() as nursery:
            nursery.start_soon(run)
            await anyio.sleep(0.3)
            os.kill(int((tmp_path / "pid").read_text()), signal.SIGKILL)
            with anyio.fail_after(5):
                while not results:
                    await anyio.sleep(0.01)
        assert results[0].status == "failed"
        assert results[0].output == texts.DISCONNECTED.format(server="s")
        assert host.sample().generation == generation  # the catalog is kept
        assert host.sample().binding("mcp__s__echo") is not None
        await wait_for(lambda: host.statistics().connected["s"])
        again = await host.call(host.sample(), "c2", "mcp__s__echo", {"text": "back"})
        assert again.status == "ok", again.output


async def test_calls_to_a_disconnected_server_fail_at_once_without_being_sent(tmp_path):
    config = host_config(tmp_path)
    config = HostConfig(servers=config.servers, reconnect_initial_sec=30, reconnect_max_sec=30)
    async with Host.open(config) as host:
        snap = host.sample()
        os.kill(int((tmp_path / "pid").read_text()), signal.SIGKILL)
        await wait_for(lambda: not host.statistics().connected["s"])
        result = await host.call(snap, "c1", "mcp__s__echo", {"text": "x"})
        assert result.status == "failed"
        assert result.output == texts.NOT_CONNECTED.format(server="s")
        outcome = await host.refresh("s")
        assert (outcome.status, outcome.kind) == ("rejected", "disconnected")


async def test_garbage_on_stdout_is_skipped(tmp_path):
    async with Host.open(host_config(tmp_path, env={"MCPBIND_TEST_GARBAGE": "1"})) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__echo", {"text": "ok"})
    assert result.status == "ok"


async def test_required_server_that_exits_at_startup_fails_open_with_one_clear_error(tmp_path):
    config = host_config(tmp_path, required=True, env={"MCPBIND_TEST_EXIT_AT_START": "1"})
    with pytest.raises(ServerStartupError, match="required server 's' could not be started"):
        async with Host.open(config):
            pytest.fail("the host must not open")


async def test_optional_server_that_exits_at_startup_starts_absent(tmp_path):
    config = host_config(tmp_path, env={"MCPBIND_TEST_EXIT_AT_START": "1"})
    async with Host.open(config) as host:
        assert host.statistics().connected == {"s": False}
        assert host.sample().specs == ()


@pytest.mark.slow
async def test_startup_timeout_applies_to_a_server_that_never_answers(tmp_path):
    hang = StdioServerParameters(command=sys.executable, args=["-c", "import time; time.sleep(60)"])
    config = HostConfig(
        servers={"h": ServerConfig(target=hang, required=True, startup_timeout_sec=0.5)}
    )
    with (
        anyio.fail_after(10),
        pytest.raises(ServerStartupError, match=r"startup_timeout_sec = 0\.5"),
    ):
        async with Host.open(config):
            pass


async def test_startup_timeout_applies_to_an_http_server_that_accepts_and_never_answers():
    """The deadline cancels the handshake itself (no transport fault comes with it): the
    server is still reported as not answering within its startup_timeout_sec."""

    async def hold(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await anyio.sleep_forever()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    target = f"http://127.0.0.1:{port}/mcp"
    config = HostConfig(
        servers={"h": ServerConfig(target=target, required=True, startup_timeout_sec=0.5)}
    )
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, hold)
        with (
            anyio.fail_after(10),
            pytest.raises(ServerStartupError, match=r"startup_timeout_sec = 0\.5"),
        ):
            async with Host.open(config):
                pass
        group.cancel_scope.cancel()


async def test_streamable_http_url_target(tmp_path):
    async with http_server(tmp_path) as port:
        config = HostConfig(
            servers={
                "h": ServerConfig(
                    target=f"http://127.0.0.1:{port}/mcp",
                    headers={"Authorization": "Bearer test-token"},
                )
            },
            reconnect_initial_sec=0.05,
            reconnect_max_sec=0.1,
        )
        async with Host.open(config) as host:
            await wait_for(lambda: host.sample().binding("mcp__h__echo") is not None)
            result = await host.call(host.sample(), "c1", "mcp__h__echo", {"text": "web"})
            assert result.status == "ok"
            assert result.output.endswith('{"result":"web"}')


async def test_a_servers_stderr_is_logged_under_its_name_and_kept_out_of_ours(tmp_path, caplog):
    """SPEC §11.14: stderr lines go to the ``mcpbind.server.<name>`` logger."""
    caplog.set_level(logging.INFO, logger="mcpbind.server")
    config = host_config(tmp_path, env={"MCPBIND_TEST_BANNER": "hello from the server"})
    async with Host.open(config) as host:
        with anyio.fail_after(10):
            while "hello from the server" not in host.servers["s"].statistics().stderr:
                await anyio.sleep(0.02)
    assert ("mcpbind.server.s", logging.INFO, "hello from the server") in caplog.record_tuples


async def test_a_required_server_that_fails_to_start_carries_its_last_stderr_lines(tmp_path):
    config = host_config(tmp_path, required=True, env={"MCPBIND_TEST_EXIT_AT_START": "1"})
    with anyio.fail_after(30), pytest.raises(ServerStartupError) as raised:
        async with Host.open(config):
            pass
    assert "fatal: the test asked this server to exit at start" in raised.value.stderr


@pytest.mark.slow
async def test_a_server_retried_after_failing_at_start_shows_its_stderr_once(tmp_path, caplog):
    """Issue 28: the kept lines are the latest attempt's, not one copy per retry; the log
    (``-v``) still has every attempt's."""
    caplog.set_level(logging.INFO, logger="mcpbind.server")
    fatal = "fatal: the test asked this server to exit at start"
    config = host_config(tmp_path, env={"MCPBIND_TEST_EXIT_AT_START": "1"})
    async with Host.open(config) as host:
        await wait_for(lambda: host.server_status()[0].attempts >= 3, seconds=60)
        await wait_for(lambda: fatal in host.servers["s"].statistics().stderr)
        assert host.servers["s"].statistics().stderr == (fatal,)
    logged = [r for r in caplog.record_tuples if r[2] == fatal]
    assert len(logged) >= 3


async def test_a_server_that_exits_at_start_is_described_by_its_exit_status(tmp_path):
    """Issue 28: not just the SDK's "Connection closed" (SPEC §11.14); an optional one
    says it in its status, a required one in its startup error."""
    config = host_config(tmp_path, env={"MCPBIND_TEST_EXIT_AT_START": "1"})
    async with Host.open(config) as host:
        await wait_for(lambda: host.server_status()[0].attempts >= 1, seconds=60)
        error = host.server_status()[0].error
    assert error == "Connection closed: the server's process exited with status 3 at start"
    required = host_config(tmp_path, required=True, env={"MCPBIND_TEST_EXIT_AT_START": "1"})
    with anyio.fail_after(30), pytest.raises(ServerStartupError) as raised:
        async with Host.open(required):
            pass
    assert "the server's process exited with status 3 at start" in str(raised.value)


async def test_a_server_ended_by_a_signal_at_start_says_which(tmp_path):
    killed = StdioServerParameters(
        command=sys.executable, args=["-c", "import os, signal; os.kill(os.getpid(), 9)"]
    )
    config = HostConfig(servers={"k": ServerConfig(target=killed, required=True)})
    with anyio.fail_after(30), pytest.raises(ServerStartupError) as raised:
        async with Host.open(config):
            pass
    assert "the server's process was ended by signal 9 at start" in str(raised.value)
