"""``server_status()`` tells the truth while a server is down (SPEC §11.18, issue 27).

Real servers, killed or stopped while the host is idle (nothing sent): a stdio server's
process, a 2026-07-28 streamable-HTTP server, a handshake-era one. Each is reported with
what it is doing (``state``), why (``error``) and the attempts that failed since its
last session, then comes back through ``Host.reconnect`` without waiting out the backoff.
The backoff is an hour here, so nothing reconnects behind the test's back.
"""

from __future__ import annotations

import os
import pathlib
import signal
import sys

import anyio
import httpx2
import pytest
from mcp import StdioServerParameters
from testservers.processes import SERVER, free_port, start_http_server, stop, wait_listening

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.server.health import server_state
from mcpbind.impl.wire.http import SESSION_HEADER, HttpStatus
from mcpbind.model import texts

HOUR = 3600.0


def patient(server: ServerConfig) -> HostConfig:
    return HostConfig(servers={"s": server}, reconnect_initial_sec=HOUR, reconnect_max_sec=HOUR)


async def wait_state(host: Host, state: str) -> None:
    with anyio.fail_after(30):
        while host.server_status()[0].state != state:
            await anyio.sleep(0.05)


async def test_a_stdio_server_killed_while_idle_is_reconnecting_says_why_and_counts_attempts(
    tmp_path: pathlib.Path,
) -> None:
    down = tmp_path / "down"
    script = (
        f'if [ -e "{down}" ]; then echo "kept down by the test" >&2; exit 3; fi; '
        f'exec "{sys.executable}" "{SERVER}" "{tmp_path}"'
    )
    target = StdioServerParameters(command="sh", args=["-c", script])
    async with Host.open(patient(ServerConfig(target=target, required=True))) as host:
        [up] = host.server_status()
        assert (up.state, up.connected, up.error, up.attempts) == ("connected", True, None, 0)
        down.touch()
        os.kill(int((tmp_path / "pid").read_text()), signal.SIGKILL)
        await wait_state(host, "reconnecting")
        [lost] = host.server_status()
        assert not lost.connected
        assert lost.error == texts.SESSION_ENDED.format(server="s")
        assert lost.attempts == 0
        assert lost.tools == up.tools  # INV-8: the catalog stays
        await host.reconnect("s")  # the process exits at start: the attempt fails
        [failed] = host.server_status()
        assert (failed.state, failed.connected, failed.attempts) == ("reconnecting", False, 1)
        assert failed.error not in (None, lost.error)
        await host.reconnect("s")
        assert host.server_status()[0].attempts == 2
        down.unlink()
        await host.reconnect("s")
        [back] = host.server_status()
        assert (back.state, back.connected, back.error, back.attempts) == (
            "connected",
            True,
            None,
            0,
        )
        result = await host.call(host.sample(), "c1", "mcp__s__echo", {"text": "back"})
        assert result.status == "ok", result.output
        assert "back" in result.output


async def test_an_http_server_stopped_while_idle_is_reconnecting_and_says_why(
    tmp_path: pathlib.Path,
) -> None:
    port = free_port()
    process = await start_http_server(tmp_path, port)
    try:
        await wait_listening(port)
        server = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True)
        async with Host.open(patient(server)) as host:
            assert host.server_status()[0].state == "connected"
            await stop(process)
            await wait_state(host, "reconnecting")
            [lost] = host.server_status()
            assert (lost.connected, lost.error, lost.attempts) == (
                False,
                texts.SESSION_ENDED.format(server="s"),
                0,
            )
            await host.reconnect("s")
            [failed] = host.server_status()
            assert (failed.state, failed.attempts) == ("reconnecting", 1)
            # The connection failure as the backend's socket layer says it (trio names the
            # address, asyncio does not).
            assert failed.error not in (None, lost.error)
            process = await start_http_server(tmp_path, port)
            await wait_listening(port)
            await host.reconnect("s")
            [back] = host.server_status()
            assert (back.state, back.error, back.attempts) == ("connected", None, 0)
            result = await host.call(host.sample(), "c1", "mcp__s__echo", {"text": "back"})
            assert result.status == "ok", result.output
    finally:
        await stop(process)


# The server stopped under the SDK's open response streams of the session: the SDK leaves
# their async generators to be collected unexhausted (as in tests/test_sessions.py).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_handshake_era_http_server_stopped_while_idle_is_unreachable_then_reconnecting(
    tmp_path: pathlib.Path,
) -> None:
    """Its session is held by an id, not a connection: the transport finds the server gone
    only when the notification stream's ``GET`` cannot reconnect. The status says so at
    once; the next call finds the server gone and the server is reconnecting."""
    port = free_port()
    env = {"MCPBIND_TEST_HTTP_LEGACY": "1"}
    process = await start_http_server(tmp_path, port, **env)
    try:
        await wait_listening(port)
        server = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True)
        async with Host.open(patient(server)) as host:
            step = host.sample()
            assert host.server_status()[0].state == "connected"
            await stop(process)
            await wait_state(host, "unreachable")
            [idle] = host.server_status()
            assert (idle.connected, idle.error) == (
                True,
                texts.STREAM_UNREACHABLE.format(server="s"),
            )
            result = await host.call(step, "c1", "mcp__s__echo", {"text": "anyone?"})
            assert result.status == "failed", result.output
            [lost] = host.server_status()
            assert (lost.state, lost.connected) == ("reconnecting", False)
            process = await start_http_server(tmp_path, port, **env)
            await wait_listening(port)
            await host.reconnect("s")
            [back] = host.server_status()
            assert (back.state, back.error, back.attempts) == ("connected", None, 0)
    finally:
        await stop(process)


def response(method: str, status: int, *, session: bool = True) -> httpx2.Response:
    headers = {SESSION_HEADER: "abc"} if session else {}
    request = httpx2.Request(method, "http://127.0.0.1:1/mcp", headers=headers)
    return httpx2.Response(status, request=request)


async def test_the_notification_streams_refusals_and_failures_are_told_and_nothing_else() -> None:
    told: list[str] = []
    http = HttpStatus(url="http://127.0.0.1:1/mcp", on_idle=told.append)
    await http.on_response(response("POST", 404))  # a request's own refusal: §8.13's
    http.on_unreachable(response("POST", 200).request)
    http.on_unreachable(response("GET", 200, session=False).request)  # no session yet
    await http.on_response(response("GET", 405))  # no notification stream offered
    assert told == []
    await http.on_response(response("GET", 404))
    await http.on_response(response("GET", 200))
    http.on_unreachable(response("GET", 200).request)
    await http.on_response(response("POST", 200))
    assert told == ["expired", "reachable", "unreachable", "reachable"]


async def test_an_optional_server_that_never_started_counts_its_one_failed_attempt() -> None:
    """``attempts`` counts the failures since the last session, and a server with none
    yet counts from 0: its first attempt failed, it says 1."""
    target = StdioServerParameters(command="sh", args=["-c", "echo no such server >&2; exit 3"])
    async with Host.open(patient(ServerConfig(target=target))) as host:
        await wait_state(host, "reconnecting")
        [status] = host.server_status()
    assert (status.connected, status.attempts) == (False, 1)


async def test_only_a_successful_answer_clears_a_fault_and_only_a_fault_is_cleared() -> None:
    """``reachable`` is told once, for the first answer under 400 after a fault: not for
    the answers of a healthy session, not for a failed answer while the fault lasts."""
    told: list[str] = []
    http = HttpStatus(url="http://127.0.0.1:1/mcp", on_idle=told.append)
    await http.on_response(response("POST", 200))
    await http.on_response(response("GET", 200))
    assert told == []
    http.on_unreachable(response("GET", 200).request)
    await http.on_response(response("POST", 500))
    await http.on_response(response("POST", 401))
    assert told == ["unreachable"]
    await http.on_response(response("POST", 200))
    await http.on_response(response("POST", 202))
    assert told == ["unreachable", "reachable"]


def test_the_state_word_follows_the_runtime_fields() -> None:
    def state(**fields: object) -> str:
        base: dict[str, object] = {
            "phase": "running",
            "connected": False,
            "closing": False,
            "login_required": False,
            "stream_fault": None,
        }
        return server_state(**{**base, **fields})  # type: ignore[arg-type]

    assert state(connected=True) == "connected"
    assert state(connected=True, stream_fault="expired") == "unreachable"
    assert state() == "reconnecting"
    assert state(login_required=True) == "login_required"
    assert state(phase="connecting") == "starting"
    assert state(phase="dormant") == "dormant"
    assert state(phase="failed") == "failed"
    assert state(closing=True, connected=True) == "closed"


async def test_a_stdio_servers_stdout_line_that_is_not_json_rpc_is_logged_as_its_own(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SPEC §11.14: a line a stdio server writes to its stdout that is not JSON-RPC is
    skipped and told as one of that server's lines, not as the SDK's parse error; the
    session goes on. (``impl/wire/stderr.py``'s filter; only the command line's tests, in
    a child process, ran it before.)"""
    env = {**os.environ, "MCPBIND_TEST_GARBAGE": "1"}
    target = StdioServerParameters(
        command=sys.executable, args=[str(SERVER), str(tmp_path)], env=env
    )
    with caplog.at_level("INFO"):
        async with Host.open(HostConfig(servers={"s": ServerConfig(target=target)})) as host:
            result = await host.call(host.sample(), "c1", "mcp__s__echo", {"text": "x"})
    assert result.status == "ok", result.output
    told = [(r.name, r.getMessage()) for r in caplog.records if "not JSON-RPC" in r.getMessage()]
    assert told == [("mcpbind.server.s", "(stdout, not JSON-RPC, skipped) this is not JSON-RPC")]
