"""DPoP (RFC 9449, SPEC §11.15) turned on after a login: the authorization server's offer
is read from the metadata stored with the tokens, since a refresh reads no metadata. A
host logs in with Bearer tokens at a server that offers DPoP; a later host, configured for
DPoP, refreshes the expired token with a proof of a key it makes and stores then, and
gets the token bound to it. Against ``testservers/oauth_server.py`` (``--dpop on``), whose
tokens expire in wall-clock time: the tests sleep for real, on trio alone. And a login
after the tokens were forgotten proves with the key stored at the first one."""

from __future__ import annotations

import pathlib
from typing import Any

import httpx2
import pytest
import trio
from testservers.oauth_server import Served, revoke_refresh, serving

from mcpbind.impl import (
    AuthorizationRequest,
    AuthorizationResponse,
    FileTokenStore,
    Host,
    HostConfig,
    LoginRequired,
    OAuthConfig,
    ServerConfig,
    ServerStartupError,
    response_from_redirect,
)
from mcpbind.impl.config.credentials import store_key
from mcpbind.impl.wire.dpop import DPOP_METADATA


async def approve(request: AuthorizationRequest) -> AuthorizationResponse:
    async with httpx2.AsyncClient() as http:
        answer = await http.get(request.url, follow_redirects=False)
    assert answer.status_code == 302, answer.text
    return response_from_redirect(request.server, answer.headers["location"])


async def whoami(served: Served, path: pathlib.Path, oauth: OAuthConfig, handler: Any) -> None:
    server = ServerConfig(target=served.url, required=True, oauth=oauth)
    config = HostConfig(
        servers={"notes": server}, oauth_store=FileTokenStore(path), oauth_handler=handler
    )
    async with Host.open(config) as host:
        result = await host.call(host.sample(), "c1", "mcp__notes__whoami", {})
    assert result.status == "ok", result.output


@pytest.mark.trio
async def test_dpop_turned_on_later_binds_the_refreshed_token_by_the_stored_offer(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "credentials.json"
    async with serving(tmp_path / "server.log", token_seconds=1, dpop="on") as served:
        await whoami(served, path, OAuthConfig(), approve)
        first = await FileTokenStore(path).load(store_key("notes", served.url))
        assert first is not None
        assert first.tokens is not None
        assert first.tokens["token_type"] == "Bearer"
        assert first.dpop_key is None
        assert first.metadata is not None
        assert first.metadata[DPOP_METADATA] == ["ES256", "ES384", "EdDSA", "RS256", "PS256"]
        await trio.sleep(1.5)
        await whoami(served, path, OAuthConfig(dpop=True), None)  # no person: a refresh
        second = await FileTokenStore(path).load(store_key("notes", served.url))
        events = served.events()
    assert [e["grant_type"] for e in events if e["event"] == "token-request"] == [
        "authorization_code",
        "refresh_token",
    ]
    checked = [(e["where"], e["outcome"]) for e in events if e["event"] == "dpop"]
    assert checked[0] == ("token", "ok")  # the refresh, proved
    assert set(checked[1:]) == {("mcp", "ok")}
    assert second is not None
    assert second.tokens is not None
    assert second.tokens["token_type"] == "DPoP"
    assert second.dpop_key is not None
    assert second.dpop_key["alg"] == "ES256"  # the first of mcpbind's that is offered


@pytest.mark.trio
async def test_a_new_login_after_the_tokens_were_forgotten_proves_with_the_stored_key(
    tmp_path: pathlib.Path,
) -> None:
    """The refresh token stopped working and a host with no person forgot the tokens;
    the DPoP key stays stored, and the next login's token request is signed with it, so
    the new token is bound to the same key (SPEC §11.15: made once, stored, reused)."""
    path = tmp_path / "credentials.json"
    oauth = OAuthConfig(dpop=True)
    async with serving(tmp_path / "server.log", token_seconds=1, dpop="on") as served:
        await whoami(served, path, oauth, approve)
        first = await FileTokenStore(path).load(store_key("notes", served.url))
        assert first is not None
        assert first.dpop_key is not None
        await revoke_refresh(served.port)
        await trio.sleep(1.5)
        with pytest.raises(ServerStartupError) as caught:
            await whoami(served, path, oauth, None)
        assert isinstance(caught.value.__cause__, LoginRequired)
        forgotten = await FileTokenStore(path).load(store_key("notes", served.url))
        assert forgotten is not None
        assert (forgotten.tokens, forgotten.dpop_key) == (None, first.dpop_key)
        await whoami(served, path, oauth, approve)
        again = await FileTokenStore(path).load(store_key("notes", served.url))
        events = served.events()
    assert again is not None
    assert again.tokens is not None
    assert again.tokens["token_type"] == "DPoP"
    assert again.dpop_key == first.dpop_key
    grants = [e["grant_type"] for e in events if e["event"] == "token-request"]
    assert grants == ["authorization_code", "refresh_token", "authorization_code"]
    checked = [(e["where"], e["outcome"]) for e in events if e["event"] == "dpop"]
    assert checked.count(("token", "ok")) == 3  # each token request proved
    assert all(outcome == "ok" for _, outcome in checked), checked
