"""The OAuth test server (``testservers/oauth_server.py``) works, driven by the SDK's own
client-side OAuth (``mcp.client.auth.OAuthClientProvider``): discovery from a 401, dynamic
registration, an authorization code with PKCE, refresh after expiry, and a new login once
the refresh token stops working.

The server is a real process, so its tokens expire in wall-clock time: the expiry tests
sleep for real (a MockClock cannot move another process's clock). They run on trio only,
under pytest-trio: what is checked is the server, not mcpbind's backend independence.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import attrs
import httpx2
import mcp
import pytest
import trio
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl
from testservers.oauth_server import Served, revoke_refresh, serving

pytestmark = pytest.mark.trio

NOT_GRANTS = ("mcp", "token-request")
"""The log's events that are not a grant's outcome: requests to ``/mcp``, and each token
request as it arrives."""
REDIRECT = "http://127.0.0.1:9/callback"
"""Never served: the browser stand-in reads the code from the 302 and goes no further."""


@attrs.define(eq=False)
class MemoryStorage:
    """``TokenStorage`` in memory."""

    tokens: OAuthToken | None = None
    client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@attrs.define(eq=False)
class Browser:
    """A user who approves at once: GETs the authorization URL, takes the redirect's
    ``code`` and ``state`` without following it."""

    logins: int = 0
    codes: list[str] = attrs.field(factory=list)
    _location: str = ""

    async def redirect(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            response = await http.get(authorization_url)
        assert response.status_code == 302, response.text
        self._location = response.headers["location"]
        self.logins += 1

    async def callback(self) -> AuthorizationCodeResult:
        assert self._location.startswith(REDIRECT + "?"), self._location
        query = dict(parse_qsl(urlsplit(self._location).query))
        self.codes.append(query["code"])
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"))


@attrs.define(eq=False)
class OAuthUser:
    """One client's OAuth state across sessions: its provider, storage and browser."""

    provider: OAuthClientProvider
    storage: MemoryStorage
    browser: Browser


def oauth_user(served: Served) -> OAuthUser:
    storage = MemoryStorage()
    browser = Browser()
    metadata = OAuthClientMetadata(
        client_name="oauth-smoke",
        redirect_uris=[AnyUrl(REDIRECT)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    provider = OAuthClientProvider(
        served.url,
        metadata,
        storage,
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
    )
    return OAuthUser(provider, storage, browser)


@asynccontextmanager
async def session(served: Served, user: OAuthUser) -> AsyncIterator[mcp.Client]:
    async with (
        httpx2.AsyncClient(auth=user.provider) as http,
        mcp.Client(streamable_http_client(served.url, http_client=http)) as client,
    ):
        yield client


async def whoami(client: mcp.Client) -> Any:
    result = await client.call_tool("whoami", {})
    assert not result.is_error, result
    return result.structured_content


def of(served: Served, event: str) -> list[dict[str, Any]]:
    return [e for e in served.events() if e["event"] == event]


async def test_an_unauthenticated_request_is_told_where_the_resource_metadata_is(tmp_path):
    async with serving(tmp_path / "oauth.jsonl") as served:
        async with httpx2.AsyncClient() as http:
            response = await http.post(served.url, json={})
            challenge = response.headers["www-authenticate"]
            metadata_url = (
                f"http://127.0.0.1:{served.port}/.well-known/oauth-protected-resource/mcp"
            )
            metadata = (await http.get(metadata_url)).json()
        assert response.status_code == 401
        assert challenge.startswith("Bearer ")
        assert f'resource_metadata="{metadata_url}"' in challenge
        assert metadata["resource"] == served.url
        assert metadata["authorization_servers"] == [f"http://127.0.0.1:{served.port}"]
        assert metadata["scopes_supported"] == ["notes:read"]
        assert of(served, "mcp")[-1]["outcome"] == "invalid_token"


async def test_the_full_flow_registers_logs_in_once_and_whoami_names_the_client(tmp_path):
    async with serving(tmp_path / "oauth.jsonl") as served:
        user = oauth_user(served)
        async with session(served, user) as client:
            me = await whoami(client)
            added = await client.call_tool("add", {"text": "milk"})
        assert user.storage.client_info is not None
        client_id = user.storage.client_info.client_id
        assert me == {"client_id": client_id, "scopes": ["notes:read"]}
        assert added.content[0].text == "added: milk"
        assert user.browser.logins == 1
        assert [e["event"] for e in served.events() if e["event"] not in NOT_GRANTS] == [
            "register",
            "authorize",
            "token",
        ]
        (token,) = of(served, "token")
        assert token["client_id"] == client_id
        assert token["grant_type"] == "authorization_code"
        assert token["scopes"] == ["notes:read"]
        assert token["resource"] == served.url
        assert all(e["client_id"] == client_id for e in of(served, "mcp") if e["outcome"] == "ok")
        # Nothing secret is logged.
        text = served.log.read_text()
        assert user.storage.tokens is not None
        secrets = [
            user.storage.tokens.access_token,
            user.storage.tokens.refresh_token,
            user.storage.client_info.client_secret,
            *user.browser.codes,
        ]
        assert all(s and s not in text for s in secrets)


async def test_a_second_session_after_the_access_token_expired_refreshes_without_a_login(
    tmp_path,
):
    async with serving(tmp_path / "oauth.jsonl", token_seconds=1) as served:
        user = oauth_user(served)
        async with session(served, user) as client:
            first = await whoami(client)
        await trio.sleep(1.5)  # real time: the token expires in the server process
        async with session(served, user) as client:
            second = await whoami(client)
        assert first == second
        assert user.browser.logins == 1
        refreshes = of(served, "refresh")
        assert [e["outcome"] for e in refreshes] == ["ok"]
        assert refreshes[0]["client_id"] == first["client_id"]
        assert refreshes[0]["grant_type"] == "refresh_token"


async def test_after_the_refresh_tokens_are_revoked_a_refresh_fails_and_asks_for_a_login(
    tmp_path,
):
    async with serving(tmp_path / "oauth.jsonl", token_seconds=1) as served:
        user = oauth_user(served)
        async with session(served, user) as client:
            first = await whoami(client)
        assert await revoke_refresh(served.port) == 1
        await trio.sleep(1.5)  # real time: the token expires in the server process
        async with session(served, user) as client:
            second = await whoami(client)
        assert first == second  # the same registration, a new grant
        assert user.browser.logins == 2
        after = [e for e in served.events() if e["event"] not in {*NOT_GRANTS, "revoke-refresh"}]
        assert [(e["event"], e["outcome"]) for e in after] == [
            ("register", "ok"),
            ("authorize", "ok"),
            ("token", "ok"),
            ("refresh", "invalid_grant"),
            ("authorize", "ok"),
            ("token", "ok"),
        ]
