"""A server that no longer knows the host's session (HTTP 404): a new session replaces it
and the refused call is sent once more, never twice (SPEC §8.13, INV-14; issue 27)."""

from __future__ import annotations

import pytest
from testservers.processes import free_port, start_http_server, stop, wait_listening
from testservers.recorders import Inputs

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.wire.http import expired_session


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
    env = {"MCPBIND_TEST_HTTP_LEGACY": "1", "MCPBIND_TEST_HTTP_LOG": str(log)}
    port = free_port()
    process = await start_http_server(tmp_path, port, **env)
    try:
        await wait_listening(port)
        inputs = Inputs()
        server = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True)
        async with Host.open(HostConfig(servers={"s": server}), recorder=inputs) as host:
            step = host.sample()
            first = await host.call(step, "c1", "mcp__s__echo", {"text": "before"})
            assert first.status == "ok"
            await stop(process)
            process = await start_http_server(tmp_path, port, **env)
            await wait_listening(port)
            log.write_text("")
            again = await host.call(step, "c2", "mcp__s__echo", {"text": "after"})
            assert again.status == "ok", again.output
            assert "after" in again.output
            status = host.server_status()[0]
            assert (status.connected, status.error) == (True, None)
        assert "session_expired" in inputs.seen
        assert "disconnect" not in inputs.seen
        posts = [
            line.split()[1] for line in log.read_text().splitlines() if line.startswith("POST")
        ]
        assert posts.count("tools/call") == 2  # refused once, then sent once more: never twice more
        assert posts.index("initialize") < posts.index("tools/list") < len(posts) - 1
        assert posts[-1] == "tools/call"
    finally:
        await stop(process)


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
