"""The client-credentials grant (SPEC §11.15, RFC 6749 §4.4) of a machine with no person,
against the tests' own authorization and resource server (``testservers/oauth_server.py``,
loopback only) with a confidential client registered beforehand: the exact token request
each configuration sends (grant, scope, resource, where the client's secret goes, or the
``private_key_jwt`` assertion and what it claims), and that a call then runs with the
token. No registration, no authorization request, no refresh token."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from testservers.oauth_server import Served, serving

from mcpbind.impl import (
    AuthorizationFailed,
    Host,
    HostConfig,
    MemoryTokenStore,
    OAuthConfig,
    ServerConfig,
    ServerStartupError,
)

CLIENT = "robot"
SECRET = "s3cr3t:value/with+odd&chars"
"""A secret with characters the Basic header must URL-encode (RFC 6749 §2.3.1)."""


def key_pair(tmp_path: pathlib.Path, kind: str) -> tuple[str, pathlib.Path]:
    """A private key's PEM (the client's) and a file with its public half (the server's)."""
    private: Any = (
        ec.generate_private_key(ec.SECP256R1())
        if kind == "ec"
        else rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    public = tmp_path / f"machine-{kind}.pem"
    public.write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return pem, public


def config(served: Served, oauth: OAuthConfig) -> HostConfig:
    server = ServerConfig(target=served.url, required=True, oauth=oauth)
    return HostConfig(servers={"notes": server}, oauth_store=MemoryTokenStore())


async def whoami(host_config: HostConfig) -> str:
    async with Host.open(host_config) as host:
        result = await host.call(host.sample(), "c1", "mcp__notes__whoami", {})
    assert result.status == "ok", result.output
    return result.output


def of(served: Served, event: str) -> list[dict[str, Any]]:
    return [e for e in served.events() if e["event"] == event]


SECRET_ROWS = [
    # token_endpoint_auth_method -> where the secret goes
    (None, "basic"),
    ("client_secret_basic", "basic"),
    ("client_secret_post", "post"),
    ("none", "basic"),  # a secret is always sent: 'none' falls back to the header
]


@pytest.mark.trio
@pytest.mark.parametrize(
    ("method", "client_auth"), SECRET_ROWS, ids=[str(r[0]) for r in SECRET_ROWS]
)
async def test_a_machine_with_a_secret_gets_its_token_by_the_client_credentials_grant(
    tmp_path: pathlib.Path, method: Any, client_auth: str
) -> None:
    async with serving(tmp_path / "server.log", machine=CLIENT, machine_secret=SECRET) as served:
        issuer = f"http://127.0.0.1:{served.port}"
        oauth = OAuthConfig(
            grant="client_credentials",
            client_id=CLIENT,
            client_secret=SECRET,
            token_endpoint_auth_method=method,
            scopes=("notes:read", "notes:write"),
            issuer=issuer,
        )
        output = await whoami(config(served, oauth))
        assert output.endswith('{"client_id":"robot","scopes":["notes:read","notes:write"]}'), (
            output
        )
        [request] = of(served, "token-request")
        assert (request["grant_type"], request["client_auth"]) == (
            "client_credentials",
            client_auth,
        )
        assert (request["scopes"], request["resource"]) == (
            ["notes:read", "notes:write"],
            served.url,
        )
        [token] = of(served, "token")
        assert (token["client_id"], token["client_auth"], token["assertion"]) == (
            CLIENT,
            client_auth,
            None,
        )
        assert [
            e["event"] for e in served.events() if e["event"] in ("register", "authorize")
        ] == []


KEY_ROWS = [
    # key, signing_algorithm (None: the default), configured scopes -> the scopes asked
    ("ec", None, None, ["notes:read"]),  # the challenge's
    ("rsa", "RS256", ("notes:write",), ["notes:write", "notes:read"]),  # configured first
]


@pytest.mark.trio
@pytest.mark.parametrize(("kind", "algorithm", "scopes", "asked"), KEY_ROWS, ids=["ec", "rsa"])
async def test_a_machine_with_a_private_key_authenticates_with_a_signed_assertion(
    tmp_path: pathlib.Path, kind: str, algorithm: str | None, scopes: Any, asked: list[str]
) -> None:
    """``private_key_jwt`` (RFC 7523 §2.2): no secret anywhere; the assertion is signed
    with the configured algorithm (ES256 by default), names the client as its issuer and
    subject and the authorization server's issuer as its audience. Configured scopes are
    asked for first, then the challenge's (SPEC §11.15)."""
    pem, public = key_pair(tmp_path, kind)
    async with serving(tmp_path / "server.log", machine=CLIENT, machine_key=public) as served:
        issuer = f"http://127.0.0.1:{served.port}"
        chosen = {} if algorithm is None else {"signing_algorithm": algorithm}
        oauth = OAuthConfig(
            grant="client_credentials",
            client_id=CLIENT,
            private_key=pem,
            issuer=issuer,
            scopes=scopes,
            **chosen,
        )
        output = await whoami(config(served, oauth))
        granted = ",".join(f'"{s}"' for s in asked)
        assert output.endswith(f'{{"client_id":"robot","scopes":[{granted}]}}'), output
        [request] = of(served, "token-request")
        assert (request["grant_type"], request["client_auth"]) == (
            "client_credentials",
            "private_key_jwt",
        )
        assert (request["scopes"], request["resource"]) == (asked, served.url)
        algorithm = algorithm or "ES256"
        [token] = of(served, "token")
        assert token["assertion"] == {"alg": algorithm, "iss": CLIENT, "sub": CLIENT, "aud": issuer}


@pytest.mark.trio
async def test_a_machine_whose_secret_is_refused_fails_its_start_with_the_servers_error(
    tmp_path: pathlib.Path,
) -> None:
    async with serving(tmp_path / "server.log", machine=CLIENT, machine_secret=SECRET) as served:
        oauth = OAuthConfig(
            grant="client_credentials",
            client_id=CLIENT,
            client_secret="not-the-secret",
            issuer=f"http://127.0.0.1:{served.port}",
        )
        with pytest.raises(ServerStartupError) as caught:
            async with Host.open(config(served, oauth)):
                pass
        assert isinstance(caught.value.__cause__, AuthorizationFailed)
        assert "invalid_client" in str(caught.value)
        assert "not-the-secret" not in str(caught.value)
        assert [e["client_auth"] for e in of(served, "token-request")] == ["basic"]


@pytest.mark.trio
async def test_a_workloads_configured_scopes_are_asked_for_before_the_challenges(
    tmp_path: pathlib.Path,
) -> None:
    """The JWT-bearer grant (RFC 7523 §2.1) keeps the configured scopes too: its provider
    builds its own client metadata, which a challenge's scope would otherwise replace."""
    import time

    import jwt

    from mcpbind.impl.config.oauth import AssertionValue

    pem, public = key_pair(tmp_path, "ec")
    async with serving(tmp_path / "server.log", workload_key=public) as served:
        issuer = f"http://127.0.0.1:{served.port}"
        now = int(time.time())
        claims = {"iss": "https://ci.example", "sub": "workload", "aud": issuer}
        token = jwt.encode({**claims, "iat": now, "exp": now + 300}, pem, algorithm="ES256")
        oauth = OAuthConfig(
            grant="jwt_bearer",
            client_id="workload-client",
            issuer=issuer,
            assertion=AssertionValue(token),
            scopes=("notes:write",),
        )
        output = await whoami(config(served, oauth))
        assert output.endswith(
            '{"client_id":"workload-client","scopes":["notes:write","notes:read"]}'
        ), output
        [request] = of(served, "token-request")
        assert request["scopes"] == ["notes:write", "notes:read"]


@pytest.mark.trio
async def test_a_configured_resource_is_the_one_the_token_is_asked_for(
    tmp_path: pathlib.Path,
) -> None:
    """Codex's ``oauth_resource`` (RFC 8707) replaces the resource the SDK derives from
    the server's URL; this server takes it as its own (it ignores a trailing slash)."""
    async with serving(tmp_path / "server.log", machine=CLIENT, machine_secret=SECRET) as served:
        oauth = OAuthConfig(
            grant="client_credentials",
            client_id=CLIENT,
            client_secret=SECRET,
            issuer=f"http://127.0.0.1:{served.port}",
            resource=served.url + "/",
        )
        await whoami(config(served, oauth))
        [request] = of(served, "token-request")
        assert request["resource"] == served.url + "/"
