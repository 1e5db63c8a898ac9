"""A server that no longer knows the host's session (HTTP 404): a new session replaces it
and the refused call is sent once more, never twice (SPEC §8.13, INV-14; issue 27)."""

from __future__ import annotations

import pathlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import attrs
import pytest
from testservers.processes import free_port, start_http_server, stop, wait_listening
from testservers.recorders import Inputs

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.wire.http import expired_session
from mcpbind.model import texts


@attrs.define(eq=False)
class RestartableServer:
    """The HTTP test server on one port, which a test may restart: the host's next request
    reaches a process that never saw its session."""

    state: pathlib.Path
    port: int
    env: dict[str, str]
    process: anyio.abc.Process | None = None

    @property
    def config(self) -> ServerConfig:
        return ServerConfig(target=f"http://127.0.0.1:{self.port}/mcp", required=True)

    async def restart(self, **changes: str) -> None:
        """Stop the server, start it again on its port with ``changes`` to its settings,
        and wait until it listens."""
        await stop(self.process)
        self.process = await start_http_server(self.state, self.port, **{**self.env, **changes})
        await wait_listening(self.port)


@asynccontextmanager
async def restartable_server(state: pathlib.Path, **env: str) -> AsyncIterator[RestartableServer]:
    """A listening handshake-era server (``MCPBIND_TEST_HTTP_LEGACY``) for the block, whichever
    process it runs in by then stopped at its end."""
    server = RestartableServer(state, free_port(), {"MCPBIND_TEST_HTTP_LEGACY": "1", **env})
    try:
        server.process = await start_http_server(state, server.port, **server.env)
        await wait_listening(server.port)
        yield server
    finally:
        await stop(server.process)


# The server restarted under the SDK's open response streams of the first session: the SDK
# leaves their async generators to be collected unexhausted (ResourceWarnings, as in
# tests/backends.py's TRANSPORTS_WITH_PROGRESS).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_restarted_handshake_era_server_gets_a_new_session_and_the_call_goes_once_more(
    tmp_path,
):
    """The transport spec: a 404 for a request with a session id MUST start a new session.
    The server, restarted on its port while the host was idle, refuses the next call; the
    host opens a new session, lists, and sends the call once more: it ends ``ok``."""
    log = tmp_path / "http.log"
    inputs = Inputs()
    async with (
        restartable_server(tmp_path, MCPBIND_TEST_HTTP_LOG=str(log)) as server,
        Host.open(HostConfig(servers={"s": server.config}), recorder=inputs) as host,
    ):
        step = host.sample()
        first = await host.call(step, "c1", "mcp__s__echo", {"text": "before"})
        assert first.status == "ok"
        await server.restart()
        log.write_text("")
        again = await host.call(step, "c2", "mcp__s__echo", {"text": "after"})
        assert again.status == "ok", again.output
        assert "after" in again.output
        status = host.server_status()[0]
        assert (status.connected, status.error) == (True, None)
    assert "session_expired" in inputs.seen
    assert "disconnect" not in inputs.seen
    posts = [line.split()[1] for line in log.read_text().splitlines() if line.startswith("POST")]
    assert posts.count("tools/call") == 2  # refused once, then sent once more: never twice more
    assert posts.index("initialize") < posts.index("tools/list") < len(posts) - 1
    assert posts[-1] == "tools/call"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # as above
async def test_a_handshake_era_task_call_refused_for_its_session_is_sent_once_more_on_a_new_one(
    tmp_path,
):
    """A 2025-11-25 tool that requires a task is called as one (``task`` in its params,
    SPEC §8.12); a server that no longer knows the session refuses it like any call
    (HTTP 404), so the host opens a new session, lists, and sends it once more (INV-14),
    never losing the connection over it. This server refuses every ``tools/call``: the
    second refusal ends the call ``failed`` with ``EXPIRED_AGAIN`` after exactly two."""
    log = tmp_path / "http.log"
    env = {
        "MCPBIND_TEST_HTTP_LEGACY": "1",
        "MCPBIND_TEST_HTTP_LOG": str(log),
        "MCPBIND_TEST_HTTP_STATUS": "404",
        "MCPBIND_TEST_HTTP_STATUS_METHOD": "tools/call",
        "MCPBIND_TEST_HTTP_BODY": "Session not found",
        "MCPBIND_TEST_EXCLUDABLE": "1",
        "MCPBIND_TEST_TASKS_CAPABILITY": "1",
    }
    port = free_port()
    process = await start_http_server(tmp_path, port, **env)
    try:
        await wait_listening(port)
        inputs = Inputs()
        server = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True)
        async with Host.open(HostConfig(servers={"s": server}), recorder=inputs) as host:
            step = host.sample()
            result = await host.call(step, "c1", "mcp__s__research", {"topic": "tides"})
            status = host.server_status()[0]
        assert status.error is None
        assert result.status == "failed"
        assert result.output == (
            "server 's' refused the call of 'research' again when it was sent once more"
            " (HTTP 404: the server did not know the session); the tool did not run"
        )
        assert inputs.seen.count("session_expired") == 2
        assert "disconnect" not in inputs.seen
    finally:
        await stop(process)
    posts = [line.split()[1] for line in log.read_text().splitlines() if line.startswith("POST")]
    calls = [n for n, method in enumerate(posts) if method == "tools/call"]
    assert len(calls) == 2  # refused, then sent once more: never a third time
    between = posts[calls[0] + 1 : calls[1]]
    assert between.index("initialize") < between.index("tools/list")  # on a new session


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # as above
async def test_a_session_refused_under_one_call_fails_the_servers_other_call_in_flight(tmp_path):
    """INV-14: when the server no longer knows the session, every other call of that
    server already sent ends ``failed`` with ``DISCONNECTED`` (its outcome is unknown:
    the new session cannot answer it), while the refused call goes on to its resend.
    Here ``slow`` is out when the server refuses ``echo`` (HTTP 404 for that tool only)."""
    log = tmp_path / "http.log"
    env = {
        "MCPBIND_TEST_HTTP_LEGACY": "1",
        "MCPBIND_TEST_HTTP_LOG": str(log),
        "MCPBIND_TEST_HTTP_STATUS": "404",
        "MCPBIND_TEST_HTTP_STATUS_METHOD": "tools/call",
        "MCPBIND_TEST_HTTP_STATUS_TOOL": "echo",
        "MCPBIND_TEST_HTTP_BODY": "Session not found",
    }
    port = free_port()
    process = await start_http_server(tmp_path, port, **env)
    results = {}
    try:
        await wait_listening(port)
        inputs = Inputs()
        server = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True)
        async with Host.open(HostConfig(servers={"s": server}), recorder=inputs) as host:
            steps = {"c1": host.sample(), "c2": host.sample()}  # two lanes (INV-9)

            async def call(call_id: str, tool: str, arguments: dict[str, object]) -> None:
                results[call_id] = await host.call(steps[call_id], call_id, tool, arguments)

            async with anyio.create_task_group() as calls:
                calls.start_soon(call, "c1", "mcp__s__slow", {"seconds": 30, "tag": "out"})
                with anyio.fail_after(30):
                    while "POST tools/call" not in log.read_text():
                        await anyio.sleep(0.05)
                calls.start_soon(call, "c2", "mcp__s__echo", {"text": "refused"})
    finally:
        await stop(process)
    assert results["c1"].status == "failed"
    assert results["c1"].output == (
        "server 's' disconnected while the call was in flight; its outcome is unknown"
    )
    assert results["c2"].output.startswith("server 's' refused the call of 'echo' again")
    assert "disconnect" not in inputs.seen


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # as above
async def test_a_listing_refused_for_a_forgotten_session_loses_it_and_the_server_reconnects(
    tmp_path,
):
    """Only a call is sent once more on a new session (INV-14): any other request the
    server refuses for its session loses the session (INV-8). A refresh of the restarted
    server is ``rejected`` as disconnected, the previous catalog kept; the reconnect opens
    a new session and lists again."""
    inputs = Inputs()
    async with (
        restartable_server(tmp_path) as server,
        Host.open(HostConfig(servers={"s": server.config}), recorder=inputs) as host,
    ):
        await server.restart()
        outcome = await host.refresh("s")
        with anyio.fail_after(30):  # until the new session's listing is decided
            while "list_done" not in inputs.seen[inputs.seen.index("refresh_requested") :]:
                await anyio.sleep(0.05)
        assert host.server_status()[0].connected
        assert host.server_status()[0].tools == 9  # the previous catalog, kept
    assert (outcome.status, outcome.kind) == ("rejected", "disconnected")
    assert outcome.reason == texts.REJECT_DISCONNECTED.format(server="s")
    assert "session_expired" not in inputs.seen
    after = inputs.seen[inputs.seen.index("refresh_requested") :]
    assert after[:5] == ["refresh_requested", "tools/list", "disconnect", "reconnect", "tools/list"]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # as above
async def test_a_new_session_that_cannot_open_disconnects_once_and_a_later_one_is_a_reconnect(
    tmp_path,
):
    """INV-14, INV-8: the restarted server forgets the session under a call, and refuses
    the new session's ``initialize``: the server is disconnected (one ``disconnect``, the
    call failed); when it answers again, the session that opens is a ``reconnect``, not
    the renewal (mutation testing, issue 33: notices.py's ``_renewing = False`` made
    ``True`` took it for the renewal and recorded no reconnect)."""
    inputs = Inputs()
    async with restartable_server(tmp_path) as server:
        config = HostConfig(servers={"s": server.config}, reconnect_initial_sec=0.05)
        async with Host.open(config, recorder=inputs) as host:
            step = host.sample()
            await server.restart(
                MCPBIND_TEST_HTTP_STATUS="500", MCPBIND_TEST_HTTP_STATUS_METHOD="initialize"
            )
            result = await host.call(step, "c1", "mcp__s__echo", {"text": "lost"})
            assert result.status != "ok"
            await server.restart()
            with anyio.fail_after(30):  # until the server is connected again
                while not host.server_status()[0].connected:
                    await anyio.sleep(0.05)
    assert "session_expired" in inputs.seen
    after = inputs.seen[inputs.seen.index("session_expired") :]
    assert after.count("disconnect") == 1
    assert "reconnect" in after[after.index("disconnect") :]


@pytest.mark.parametrize(
    ("status", "had_session", "said", "expired"),
    [
        (404, True, "Session not found", True),
        (404, True, None, True),
        (404, False, "Not Found", False),  # no session yet: a 404 is a missing method
        (400, True, "Bad Request: No valid session ID provided", True),
        (400, True, "invalid params", False),
        (400, False, "No valid session ID provided", False),
        (500, True, "session store down", False),
    ],
)
def test_only_a_404_or_a_400_naming_the_session_means_the_server_forgot_it(
    status, had_session, said, expired
):
    assert expired_session(status, had_session, said) is expired
