"""A login completed while a host runs reaches it before its next step (SPEC §11.18,
issue 27), against the tests' own authorization and resource server
(``testservers/oauth_server.py``, loopback only), on trio and asyncio.

The host opens with no credentials and no person to ask: the server is down and its
status says a login is required. Then a login stores credentials in the same file, as
``mcpbind login notes`` does from another process (here: a second host with a handler
that approves, which is what ``mcpbind login`` runs). The running host's next
``begin_step`` reads the store again, connects the server with the stored token, and
the step it returns has the server's tools, which answer as the logged-in client.
"""

from __future__ import annotations

import pathlib
from typing import Any

import httpx2
import pytest
from testservers.oauth_server import Served, serving

from mcpbind.impl import (
    AuthorizationRequest,
    AuthorizationResponse,
    FileTokenStore,
    Host,
    HostConfig,
    ServerConfig,
    UnknownServer,
    response_from_redirect,
)

# Two hosts, two logins and a refused first attempt on one authorization server: the SDK
# leaves the async generators of response streams it stopped reading to be collected
# unexhausted, on trio (ResourceWarnings; as in test_oauth.py and tests/backends.py's
# TRANSPORTS_WITH_PROGRESS); seen once in a fresh-clone CI run.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

HOUR = 3600.0
WHOAMI = "mcp__notes__whoami"


@pytest.fixture
async def served(tmp_path: pathlib.Path) -> Any:
    async with serving(tmp_path / "server.log") as found:
        yield found


async def approve(request: AuthorizationRequest) -> AuthorizationResponse:
    """A browser stand-in: the test server approves a GET of its authorization URL."""
    async with httpx2.AsyncClient() as http:
        answer = await http.get(request.url, follow_redirects=False)
    assert answer.status_code == 302, answer.text
    return response_from_redirect(request.server, answer.headers["location"])


def config(served: Served, credentials: pathlib.Path, handler: Any = None) -> HostConfig:
    """An optional server (the host opens without it), retried only after an hour: only
    the login can bring it back during the test."""
    return HostConfig(
        servers={"notes": ServerConfig(target=served.url)},
        oauth_store=FileTokenStore(credentials),
        oauth_handler=handler,
        reconnect_initial_sec=HOUR,
        reconnect_max_sec=HOUR,
    )


async def log_in(served: Served, credentials: pathlib.Path) -> None:
    """What ``mcpbind login notes`` does: a host with a person to ask connects once."""
    async with Host.open(config(served, credentials, approve)) as login:
        assert login.server_status()[0].state == "connected"


async def test_a_login_completed_while_the_host_runs_connects_the_server_before_the_next_step(
    served: Served, tmp_path: pathlib.Path
) -> None:
    credentials = tmp_path / "credentials.json"
    async with Host.open(config(served, credentials)) as host:
        [before] = host.server_status()
        assert (before.state, before.connected) == ("login_required", False)
        assert "mcpbind login notes" in (before.error or "")
        step = await host.begin_step()  # nothing stored yet: still down, nothing waits
        assert WHOAMI not in step.names
        assert host.server_status()[0].state == "login_required"
        await log_in(served, credentials)
        step = await host.begin_step()
        [after] = host.server_status()
        assert (after.state, after.connected, after.error, after.attempts) == (
            "connected",
            True,
            None,
            0,
        )
        assert WHOAMI in step.names
        result = await host.call(step, "c1", WHOAMI, {})
    assert result.status == "ok", result.output
    assert "notes:read" in result.output


async def test_credentials_changed_connects_the_named_server_at_once(
    served: Served, tmp_path: pathlib.Path
) -> None:
    credentials = tmp_path / "credentials.json"
    async with Host.open(config(served, credentials)) as host:
        await host.credentials_changed("notes")  # nothing stored: the attempt is not made
        assert host.server_status()[0].state == "login_required"
        await log_in(served, credentials)
        await host.credentials_changed()  # every server waiting for a login
        assert host.server_status()[0].state == "connected"
        assert WHOAMI in host.sample().names
        with pytest.raises(UnknownServer):
            await host.credentials_changed("nope")
