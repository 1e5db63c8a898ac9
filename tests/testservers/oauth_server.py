"""An MCP server behind OAuth 2.1, built from the SDK's own server-side auth.

One process on one loopback port is both the authorization server and the resource
server: the SDK's routes (``/.well-known/oauth-authorization-server``, ``/register``,
``/authorize``, ``/token``, ``/revoke``, ``/.well-known/oauth-protected-resource/mcp``)
over :class:`NotesProvider`, an in-memory ``OAuthAuthorizationServerProvider``, and the
MCP endpoint ``/mcp``, which wants a bearer token with scope ``notes:read`` issued for it
(RFC 8707: the token's resource must be ``http://127.0.0.1:PORT/mcp``).

Theory of operation. A client registers (dynamic client registration), then GETs
``/authorize``: there is no login page, the provider approves at once and answers 302 to
``redirect_uri?code=...&state=...``. The code is bound to the client, its PKCE challenge,
redirect_uri, scopes and resource; it is good once, for five minutes. ``/token`` trades it
for an access token (``--token-seconds`` long) and a refresh token; a refresh rotates
both (the old pair stops working at once). ``POST /test/revoke-refresh`` (loopback only)
drops every refresh token, so a client whose access token has expired must log in again.

Two options add what the SDK's server side does not have (:func:`guarded`, in front of
it): ``--dpop`` (``on``: the metadata offers DPoP, RFC 9449; a token request with a
proof gets a token bound to the proof's key, ``token_type`` ``DPoP``, which ``/mcp`` then
takes only as ``Authorization: DPoP`` with a proof of the same key; ``nonce``: the same,
and both the token endpoint and ``/mcp`` want a nonce of their own in each proof, asked
for with ``use_dpop_nonce``). Each proof is checked: its signature with the ``jwk`` of
its header, ``typ``, ``htm``, ``htu``, ``iat``, ``ath`` on ``/mcp``, and its ``jti``
never seen before. And ``--workload-key PEM`` turns on the JWT-bearer grant (RFC 7523)
for public clients: an assertion signed by that key's private half, for this issuer,
unexpired, is traded for a token. ``--machine ID`` registers a confidential client for
the client-credentials grant (RFC 6749 §4.4), authenticated by ``--machine-secret`` (in
the ``Authorization: Basic`` header or the form, RFC 6749 §2.3.1) or, with
``--machine-key PEM``, by a ``private_key_jwt`` assertion signed by that public key's
private half (RFC 7523 §2.2: ``iss`` and ``sub`` the client, ``aud`` this issuer); its
token comes without a refresh token (RFC 6749 §4.4.3).

Tools: ``whoami`` (``{"client_id", "scopes"}`` of the token the call came with, from the
SDK's auth context), ``add(text)`` (``"added: TEXT"``) and ``publish(text)``
(``"published: TEXT"``), which also wants ``notes:write``: called with a token without it,
the answer is HTTP 403 with an ``insufficient_scope`` challenge naming
``notes:read notes:write`` (OAuth's step-up, RFC 6750 §3.1). After ``POST
/test/require-write`` (loopback only), ``tools/list`` wants ``notes:write`` too.

The log (``--log PATH``, JSON lines) gets one object per event, see :class:`EventLog`.
It never holds a token, a code, a client secret or a code verifier, and the process
prints none (uvicorn's access log is off: it would print ``/authorize`` query strings).

``python oauth_server.py --port PORT --log PATH [--token-seconds N]``; from a test,
:func:`serving` (or :func:`start` and :func:`wait_ready`).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import pathlib
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlsplit

import anyio
import attrs
import httpx2
import jwt
import uvicorn
from cryptography.hazmat.primitives import serialization
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

HERE = pathlib.Path(__file__)
SCOPES = ("notes:read", "notes:write")
"""The scopes the authorization server knows."""
REQUIRED_SCOPE = "notes:read"
"""The scope ``/mcp`` wants (it is also the default of a client that asks for none)."""
TOKEN_SECONDS = 3600
CODE_SECONDS = 300
LOOPBACK = frozenset({"127.0.0.1", "::1"})

Scope = dict[str, Any]


def url(port: int) -> str:
    """The MCP endpoint of the server on ``port`` (also the resource its tokens name)."""
    return f"http://127.0.0.1:{port}/mcp"


# --- the log --------------------------------------------------------------------------


@attrs.define(eq=False)
class EventLog:
    """Appends one JSON object per line to ``path``, flushed at once.

    Every object has ``event`` (``register``, ``authorize``, ``token``, ``refresh``,
    ``revoke``, ``revoke-refresh``, ``mcp``), ``outcome`` (``"ok"`` or the OAuth error
    code, e.g. ``invalid_grant``; for ``mcp``, ``invalid_token``/``insufficient_scope`` or
    ``http_<status>``), ``client_id``, ``grant_type`` (on ``token``/``refresh`` only),
    ``scopes`` (a list) and ``resource`` (the RFC 8707 indicator the grant is bound to),
    each ``null`` where it does not apply or is unknown, and ``time`` (Unix seconds).
    ``mcp`` adds ``http_method`` and ``status``; ``register`` adds ``auth_method``;
    ``revoke-refresh`` adds ``count``. ``token-request`` (every ``POST /token``, before
    it is answered) has the ``grant_type`` and ``resource`` the request sent and
    ``client_auth``, where its client's secret was (``basic``: the ``Authorization``
    header; ``post``: the form; ``none``: nowhere); ``dpop``
    (every proof checked) has ``where`` (``token`` or ``mcp``), ``outcome`` (``ok``,
    ``use_dpop_nonce``, or what was wrong with it) and ``nonce`` (the proof had one).
    ``token-request`` also has ``scopes``, the ``scope`` the form sent (a list, or
    ``null``), and ``client_auth`` is ``private_key_jwt`` for a client assertion. A
    ``token`` of the client-credentials grant adds ``client_auth``, and ``assertion``
    (``alg``, ``iss``, ``sub``, ``aud`` of a ``private_key_jwt``, else ``null``).
    """

    path: pathlib.Path | None

    def write(
        self,
        event: str,
        *,
        outcome: str = "ok",
        client_id: str | None = None,
        grant_type: str | None = None,
        scopes: Sequence[str] | None = None,
        resource: str | None = None,
        **extra: Any,
    ) -> None:
        if self.path is None:
            return
        record = {
            "event": event,
            "outcome": outcome,
            "client_id": client_id,
            "grant_type": grant_type,
            "scopes": None if scopes is None else list(scopes),
            "resource": resource,
            "time": round(time.time(), 3),
            **extra,
        }
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")


def events(log: pathlib.Path) -> list[dict[str, Any]]:
    """The objects the server has logged so far, oldest first."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]


# --- the authorization server ---------------------------------------------------------


@attrs.frozen
class _Issued:
    access: AccessToken
    deadline: float
    """Unix time, to the fraction: ``AccessToken.expires_at`` is whole seconds."""


def _same_resource(a: str | None, b: str) -> bool:
    if a is None:
        return False
    try:
        return str(AnyHttpUrl(a)).removesuffix("/") == str(AnyHttpUrl(b)).removesuffix("/")
    except ValidationError:
        return False


@attrs.define(eq=False)
class NotesProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """An in-memory ``OAuthAuthorizationServerProvider`` that approves every request.

    It subclasses the protocol to inherit ``exchange_identity_assertion`` (SEP-990,
    refused as ``unsupported_grant_type``), a protocol member with a default body.

    Successful grants are logged here; a request the SDK's handlers refuse before they
    reach the provider (a wrong PKCE verifier, an unknown refresh token) is logged by
    :func:`logged` from the response.
    """

    log: EventLog
    resource: str
    token_seconds: int = TOKEN_SECONDS
    _clients: dict[str, OAuthClientInformationFull] = attrs.field(factory=dict)
    _codes: dict[str, AuthorizationCode] = attrs.field(factory=dict)
    _access: dict[str, _Issued] = attrs.field(factory=dict)
    _refresh: dict[str, RefreshToken] = attrs.field(factory=dict)
    _pairs: dict[str, str] = attrs.field(factory=dict)
    """Refresh token -> the access token issued with it, so one revocation ends both."""
    list_wants_write: bool = False
    """``tools/list`` wants ``notes:write`` too (``POST /test/require-write``)."""

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self._clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self._clients[client_info.client_id] = client_info
        self.log.write(
            "register",
            client_id=client_info.client_id,
            scopes=None if client_info.scope is None else client_info.scope.split(),
            auth_method=client_info.token_endpoint_auth_method,
        )

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        # RFC 8707 §2: this server issues tokens for its one resource and no other.
        if params.resource is not None and not _same_resource(params.resource, self.resource):
            raise AuthorizeError(
                "invalid_target", f"this server only issues tokens for {self.resource}"
            )
        scopes = params.scopes
        if scopes is None:
            scopes = client.scope.split() if client.scope else [REQUIRED_SCOPE]
        code = secrets.token_urlsafe(32)
        self._codes[code] = AuthorizationCode(
            code=code,
            scopes=scopes,
            expires_at=time.time() + CODE_SECONDS,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.log.write(
            "authorize", client_id=client.client_id, scopes=scopes, resource=params.resource
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self._codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        # Single use: two exchanges of one code race here, and only one finds it.
        if self._codes.pop(authorization_code.code, None) is None:
            raise TokenError("invalid_grant", "authorization code was already used")
        self.log.write(
            "token",
            client_id=client.client_id,
            grant_type="authorization_code",
            scopes=authorization_code.scopes,
            resource=authorization_code.resource,
        )
        return self.issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        token = self._refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        if self._refresh.pop(refresh_token.token, None) is None:
            raise TokenError("invalid_grant", "refresh token was already used")
        self._access.pop(self._pairs.pop(refresh_token.token, ""), None)
        self.log.write(
            "refresh",
            client_id=client.client_id,
            grant_type="refresh_token",
            scopes=scopes,
            resource=refresh_token.resource,
        )
        return self.issue(client.client_id, scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        issued = self._access.get(token)
        if issued is None:
            return None
        if time.time() >= issued.deadline:
            del self._access[token]
            return None
        return issued.access

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        if isinstance(token, RefreshToken):
            self._refresh.pop(token.token, None)
            self._access.pop(self._pairs.pop(token.token, ""), None)
        else:
            self._access.pop(token.token, None)
            for refresh, access in list(self._pairs.items()):
                if access == token.token:
                    del self._pairs[refresh]
                    self._refresh.pop(refresh, None)
        self.log.write(
            "revoke", client_id=token.client_id, scopes=token.scopes, resource=token.resource
        )

    def revoke_refresh_tokens(self) -> int:
        """Make every refresh token issued so far invalid (access tokens live on until they
        expire); returns how many there were."""
        count = len(self._refresh)
        self._refresh.clear()
        self._pairs.clear()
        self.log.write("revoke-refresh", count=count)
        return count

    def issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        now = time.time()
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        deadline = now + self.token_seconds
        self._access[access] = _Issued(
            AccessToken(
                token=access,
                client_id=client_id,
                scopes=scopes,
                expires_at=int(deadline),
                resource=resource,
            ),
            deadline,
        )
        self._refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        self._pairs[refresh] = access
        return OAuthToken(
            access_token=access,
            expires_in=self.token_seconds,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )


# --- the server -----------------------------------------------------------------------


def build(
    port: int, log: pathlib.Path | None, *, token_seconds: int = TOKEN_SECONDS
) -> tuple[MCPServer, NotesProvider]:
    """The server for ``http://127.0.0.1:PORT`` and its provider (the ASGI app is
    :func:`app`'s)."""
    issuer = f"http://127.0.0.1:{port}"
    provider = NotesProvider(EventLog(log), url(port), token_seconds)
    auth = AuthSettings(
        # Strings, not AnyHttpUrl(...): that adds a trailing slash to a path-less issuer
        # before AuthSettings (which keeps an empty path) sees it.
        issuer_url=issuer,  # type: ignore[arg-type]  # pydantic validates the string
        resource_server_url=url(port),  # type: ignore[arg-type]
        # Unset, it warns and accepts a token issued for any resource (2.3 default).
        validate_token_resource=True,
        required_scopes=[REQUIRED_SCOPE],
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=list(SCOPES), default_scopes=[REQUIRED_SCOPE]
        ),
        revocation_options=RevocationOptions(enabled=True),
    )
    server = MCPServer("oauth-test", auth=auth, auth_server_provider=provider, log_level="WARNING")

    @server.tool(description="The client and scopes of the access token this call came with")
    def whoami() -> dict[str, Any]:
        token = get_access_token()
        if token is None:  # unreachable behind RequireAuthMiddleware; said plainly if not
            return {"client_id": None, "scopes": []}
        return {"client_id": token.client_id, "scopes": token.scopes}

    @server.tool(description="Add a note")
    def add(text: str) -> str:
        return f"added: {text}"

    @server.tool(description="Publish a note (wants notes:write)")
    def publish(text: str) -> str:
        return f"published: {text}"

    # The ignore: the SDK leaves custom_route's decorator unannotated.
    @server.custom_route("/test/require-write", methods=["POST"])  # type: ignore[untyped-decorator]
    async def require_write(request: Request) -> Response:
        if request.client is None or request.client.host not in LOOPBACK:
            return JSONResponse({"error": "loopback only"}, status_code=403)
        provider.list_wants_write = True
        return JSONResponse({"list_wants_write": True})

    @server.custom_route("/test/revoke-refresh", methods=["POST"])  # type: ignore[untyped-decorator]
    async def revoke_refresh(request: Request) -> Response:
        if request.client is None or request.client.host not in LOOPBACK:
            return JSONResponse({"error": "loopback only"}, status_code=403)
        return JSONResponse({"revoked": provider.revoke_refresh_tokens()})

    return server, provider


def _error_code(body: bytes) -> str | None:
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return None
    return error if isinstance(error, str) else None


def _challenge_error(headers: Sequence[tuple[bytes, bytes]]) -> str | None:
    for name, value in headers:
        if name.lower() == b"www-authenticate":
            for part in value.decode("latin-1").split(","):
                word = part.strip().removeprefix("Bearer ").removeprefix("DPoP ")
                key, _, quoted = word.partition("=")
                if key == "error":
                    return quoted.strip('"')
    return None


def logged(inner: Any, log: EventLog) -> Any:
    """``inner`` with an ``mcp`` event per request to ``/mcp`` and a failure event per
    refused ``/register``, ``/authorize`` or ``/token`` request (successes are the
    provider's to log). Reads ``client_id`` and ``grant_type`` from a form body, nothing
    else of it."""

    async def asgi(scope: Scope, receive: Any, send: Any) -> None:
        path = scope.get("path")
        if scope["type"] != "http" or path not in ("/mcp", "/register", "/authorize", "/token"):
            await inner(scope, receive, send)
            return
        fields = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        replay = receive
        if scope["method"] == "POST" and path in ("/authorize", "/token"):
            body = await _body(receive)
            fields.update(parse_qsl(body.decode("latin-1")))
            replay = _replaying(body, receive)

        status = 0
        location = ""
        answer = bytearray()

        async def watch(message: Any) -> None:
            nonlocal status, location
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = message.get("headers", [])
                location = next(
                    (v.decode("latin-1") for k, v in headers if k.lower() == b"location"), ""
                )
                if path == "/mcp":
                    user = scope.get("user")
                    token = user.access_token if isinstance(user, AuthenticatedUser) else None
                    outcome = (
                        "ok" if status < 400 else _challenge_error(headers) or f"http_{status}"
                    )
                    log.write(
                        "mcp",
                        outcome=outcome,
                        client_id=None if token is None else token.client_id,
                        scopes=None if token is None else token.scopes,
                        resource=None if token is None else token.resource,
                        http_method=scope["method"],
                        status=status,
                    )
            elif message["type"] == "http.response.body" and path != "/mcp":
                answer.extend(message.get("body", b""))
            await send(message)

        await inner(scope, replay, watch)
        if path == "/mcp":
            return
        client_id = fields.get("client_id")
        if path == "/authorize":
            refused = dict(parse_qsl(urlsplit(location).query)).get("error")
            if status == 302 and refused is None:
                return
            log.write(
                "authorize",
                outcome=refused or _error_code(bytes(answer)) or f"http_{status}",
                client_id=client_id,
            )
        elif status >= 400:
            grant_type = fields.get("grant_type") if path == "/token" else None
            event = {"/register": "register", "/token": "token"}[path]
            if grant_type == "refresh_token":
                event = "refresh"
            log.write(
                event,
                outcome=_error_code(bytes(answer)) or f"http_{status}",
                client_id=client_id,
                grant_type=grant_type,
            )

    return asgi


# --- DPoP and the JWT-bearer grant ----------------------------------------------------

AS_NONCE = "as-nonce-1"
RS_NONCE = "rs-nonce-1"
DPOP_ALGS = ("ES256", "ES384", "EdDSA", "RS256", "PS256")
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLIENT_CREDENTIALS = "client_credentials"
CLIENT_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_THUMBPRINT_MEMBERS = {
    "EC": ("crv", "kty", "x", "y"),
    "RSA": ("e", "kty", "n"),
    "OKP": ("crv", "kty", "x"),
}


def thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638: the JWK's SHA-256 thumbprint, base64url."""
    members = {k: jwk[k] for k in _THUMBPRINT_MEMBERS[jwk["kty"]]}
    digest = hashlib.sha256(json.dumps(members, sort_keys=True, separators=(",", ":")).encode())
    return base64.urlsafe_b64encode(digest.digest()).decode().rstrip("=")


@attrs.define(eq=False)
class Guard:
    """What :func:`guarded` keeps: the mode, the ``jti`` seen, the bindings."""

    provider: NotesProvider
    issuer: str
    dpop: str = "off"
    workload_key: Any = None
    """The public key a workload's assertion must be signed with (None: no such grant)."""
    machine: Machine | None = None
    """The confidential client of the client-credentials grant (None: no such grant)."""
    seen: set[str] = attrs.field(factory=set)
    bound: dict[str, str] = attrs.field(factory=dict)
    """Access or refresh token -> the thumbprint of the key it is bound to."""

    def check(
        self, header: str | None, method: str, url: str, *, token: str | None, nonce: str | None
    ) -> tuple[str, str | None, bool]:
        """``(outcome, thumbprint, had_nonce)`` of the proof ``header`` (RFC 9449 §4.3)."""
        if not header or "," in header:
            return "missing or several proofs", None, False
        try:
            head = jwt.get_unverified_header(header)
            if head.get("typ") != "dpop+jwt" or head.get("alg") not in DPOP_ALGS:
                return "bad typ or alg", None, False
            jwk = head.get("jwk")
            if not isinstance(jwk, dict) or "d" in jwk:
                return "bad jwk", None, False
            key = jwt.PyJWK(jwk, algorithm=head["alg"]).key
            claims = jwt.decode(header, key, algorithms=[head["alg"]])
        except (jwt.PyJWTError, KeyError, ValueError, TypeError):
            return "bad signature", None, False
        had_nonce = "nonce" in claims
        if not isinstance(claims.get("jti"), str) or claims["jti"] in self.seen:
            return "jti missing or seen before", None, had_nonce
        self.seen.add(claims["jti"])
        if claims.get("htm") != method or claims.get("htu") != url:
            return "htm or htu wrong", None, had_nonce
        if not isinstance(claims.get("iat"), int) or abs(time.time() - claims["iat"]) > 60:
            return "iat wrong", None, had_nonce
        if token is not None:
            ath = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest())
            if claims.get("ath") != ath.decode().rstrip("="):
                return "ath wrong", None, had_nonce
        if nonce is not None and claims.get("nonce") != nonce:
            return "use_dpop_nonce", None, had_nonce
        return "ok", thumbprint(jwk), had_nonce

    def workload_grant(self, fields: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """The JWT-bearer grant (RFC 7523 §2.1, §3): the answer's status and body."""
        if self.workload_key is None:
            return 400, {"error": "unsupported_grant_type"}
        try:
            claims = jwt.decode(
                fields.get("assertion", ""),
                self.workload_key,
                algorithms=["ES256", "RS256"],
                audience=[self.issuer, self.issuer + "/"],
                options={"require": ["exp", "sub", "aud"]},
            )
        except jwt.PyJWTError as error:
            return 400, {"error": "invalid_grant", "error_description": type(error).__name__}
        client_id = fields.get("client_id") or str(claims["sub"])
        scopes = fields["scope"].split() if fields.get("scope") else [REQUIRED_SCOPE]
        resource = fields.get("resource")
        self.provider.log.write(
            "token", client_id=client_id, grant_type=JWT_BEARER, scopes=scopes, resource=resource
        )
        issued = self.provider.issue(client_id, scopes, resource)
        return 200, issued.model_dump(mode="json", exclude_none=True)

    def machine_grant(
        self, fields: dict[str, str], authorization: str | None
    ) -> tuple[int, dict[str, Any]]:
        """The client-credentials grant (RFC 6749 §4.4): the answer's status and body."""
        machine = self.machine
        assert machine is not None
        client_id, how, assertion = machine.authenticate(fields, authorization, self.issuer)
        if client_id is None:
            return 401, {"error": "invalid_client", "error_description": how}
        scopes = fields["scope"].split() if fields.get("scope") else [REQUIRED_SCOPE]
        if not set(scopes) <= set(SCOPES):
            return 400, {"error": "invalid_scope"}
        resource = fields.get("resource")
        if resource is not None and not _same_resource(resource, self.provider.resource):
            return 400, {"error": "invalid_target"}
        self.provider.log.write(
            "token",
            client_id=client_id,
            grant_type=CLIENT_CREDENTIALS,
            scopes=scopes,
            resource=resource,
            client_auth=how,
            assertion=assertion,
        )
        issued = self.provider.issue(client_id, scopes, resource)
        return 200, issued.model_dump(mode="json", exclude_none=True, exclude={"refresh_token"})


@attrs.frozen
class Machine:
    """A confidential client registered beforehand: its id, and its secret or the public
    key its ``private_key_jwt`` assertions are signed with."""

    client_id: str
    secret: str | None = attrs.field(default=None, repr=False)
    key: Any = None

    def authenticate(
        self, fields: dict[str, str], authorization: str | None, issuer: str
    ) -> tuple[str | None, str, dict[str, Any] | None]:
        """``(client_id or None, how or what was wrong, the assertion's header and
        claims)`` of a token request (RFC 6749 §2.3.1, RFC 7523 §2.2, §3)."""
        scheme, _, credentials = (authorization or "").partition(" ")
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(credentials, validate=True).decode()
            except ValueError:
                return None, "a malformed Basic header", None
            client_id, _, secret = (unquote_plus(part) for part in pair.partition(":"))
            if self.secret is not None and (client_id, secret) == (self.client_id, self.secret):
                return client_id, "basic", None
            return None, "wrong client or secret", None
        if "client_secret" in fields:
            pair = (fields.get("client_id"), fields["client_secret"])
            if self.secret is not None and pair == (self.client_id, self.secret):
                return self.client_id, "post", None
            return None, "wrong client or secret", None
        if fields.get("client_assertion_type") == CLIENT_ASSERTION and self.key is not None:
            token = fields.get("client_assertion", "")
            try:
                header = jwt.get_unverified_header(token)
                claims = jwt.decode(
                    token,
                    self.key,
                    algorithms=["ES256", "RS256"],
                    audience=issuer,
                    options={"require": ["exp", "iss", "sub", "aud", "jti"]},
                )
            except jwt.PyJWTError as error:
                return None, type(error).__name__, None
            if claims["iss"] != self.client_id or claims["sub"] != self.client_id:
                return None, "iss and sub are not the client", None
            seen = {"alg": header.get("alg"), **{k: claims[k] for k in ("iss", "sub", "aud")}}
            return self.client_id, "private_key_jwt", seen
        return None, "no client authentication", None


async def _body(receive: Any) -> bytes:
    """The whole body of an ASGI request."""
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Any) -> Any:
    """A ``receive`` that gives ``body`` (already read) again, then what ``receive``
    gives: for the app behind a middleware that read the request."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Any:
        return pending.pop() if pending else await receive()

    return replay


async def _answer(
    send: Any, status: int, body: dict[str, Any], headers: Sequence[tuple[str, str]] = ()
) -> None:
    content = json.dumps(body).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(content)).encode())]
    raw += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": content})


async def _captured(inner: Any, scope: Scope, receive: Any) -> tuple[int, list[Any], bytes]:
    """``inner``'s whole answer to the request."""
    start: dict[str, Any] = {}
    chunks: list[bytes] = []

    async def keep(message: Any) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await inner(scope, receive, keep)
    return start["status"], list(start.get("headers", [])), b"".join(chunks)


async def _send_json(send: Any, status: int, headers: list[Any], body: dict[str, Any]) -> None:
    content = json.dumps(body).encode()
    kept = [(k, v) for k, v in headers if k.lower() != b"content-length"]
    kept.append((b"content-length", str(len(content)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": kept})
    await send({"type": "http.response.body", "body": content})


def _header(scope: Scope, name: bytes) -> str | None:
    found = [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == name]
    return ", ".join(found) if found else None


async def _token(inner: Any, guard: Guard, scope: Scope, receive: Any, send: Any) -> None:
    """``POST /token`` behind :func:`guarded`."""
    log = guard.provider.log
    body = await _body(receive)
    fields = dict(parse_qsl(body.decode("latin-1")))
    grant = fields.get("grant_type")
    scheme = (_header(scope, b"authorization") or "").partition(" ")[0].lower()
    client_auth = "basic" if scheme == "basic" else "post" if "client_secret" in fields else "none"
    if "client_assertion" in fields:
        client_auth = "private_key_jwt"
    log.write(
        "token-request",
        grant_type=grant,
        scopes=fields["scope"].split() if "scope" in fields else None,
        resource=fields.get("resource"),
        client_auth=client_auth,
    )
    replay = _replaying(body, receive)
    proof = _header(scope, b"dpop")
    jkt = None
    if proof is not None and guard.dpop != "off":
        nonce = AS_NONCE if guard.dpop == "nonce" else None
        outcome, jkt, had = guard.check(
            proof, "POST", f"{guard.issuer}/token", token=None, nonce=nonce
        )
        log.write("dpop", outcome=outcome, where="token", nonce=had)
        if outcome == "use_dpop_nonce":
            error = {"error": "use_dpop_nonce", "error_description": "a nonce, please"}
            await _answer(send, 400, error, [("DPoP-Nonce", AS_NONCE)])
            return
        if outcome != "ok":
            await _answer(send, 400, {"error": "invalid_dpop_proof", "error_description": outcome})
            return
    refresh = fields.get("refresh_token")
    if grant == "refresh_token" and refresh in guard.bound and guard.bound[refresh] != jkt:
        error = {"error": "invalid_dpop_proof", "error_description": "not the bound key"}
        await _answer(send, 400, error)
        return
    if grant == JWT_BEARER:
        status, answer = guard.workload_grant(fields)
        headers: list[Any] = [(b"content-type", b"application/json")]
    elif grant == CLIENT_CREDENTIALS and guard.machine is not None:
        status, answer = guard.machine_grant(fields, _header(scope, b"authorization"))
        headers = [(b"content-type", b"application/json")]
    else:
        status, headers, raw = await _captured(inner, scope, replay)
        answer = json.loads(raw) if raw else {}
    if status == 200 and jkt is not None:
        answer["token_type"] = "DPoP"
        for kind in ("access_token", "refresh_token"):
            if kind in answer:
                guard.bound[answer[kind]] = jkt
    await _send_json(send, status, headers, answer)


async def _mcp(guard: Guard, scope: Scope, send: Any) -> Scope | None:
    """A request to ``/mcp`` behind :func:`guarded`: the scope to pass on (a DPoP token
    shown to the SDK as ``Bearer``), or None when it was answered here."""
    scheme, _, token = (_header(scope, b"authorization") or "").partition(" ")
    if scheme.lower() != "dpop":
        if token not in guard.bound:
            return scope
        challenge = 'DPoP error="invalid_token", error_description="a DPoP-bound token"'
        await _answer(send, 401, {"error": "invalid_token"}, [("WWW-Authenticate", challenge)])
        return None
    outcome, jkt, had = guard.check(
        _header(scope, b"dpop"),
        scope["method"],
        f"{guard.issuer}/mcp",
        token=token,
        nonce=RS_NONCE if guard.dpop == "nonce" else None,
    )
    if outcome == "ok" and guard.bound.get(token) != jkt:
        outcome = "not the bound key"
    guard.provider.log.write("dpop", outcome=outcome, where="mcp", nonce=had)
    if outcome == "use_dpop_nonce":
        challenge = 'DPoP error="use_dpop_nonce", error_description="a nonce"'
        headers = [("WWW-Authenticate", challenge), ("DPoP-Nonce", RS_NONCE)]
        await _answer(send, 401, {"error": "use_dpop_nonce"}, headers)
        return None
    if outcome != "ok":
        challenge = f'DPoP error="invalid_dpop_proof", error_description="{outcome}"'
        await _answer(send, 401, {"error": "invalid_dpop_proof"}, [("WWW-Authenticate", challenge)])
        return None
    kept = [(k, v) for k, v in scope["headers"] if k.lower() not in (b"authorization", b"dpop")]
    kept.append((b"authorization", f"Bearer {token}".encode("latin-1")))
    return {**scope, "headers": kept}


def guarded(inner: Any, guard: Guard) -> Any:
    """``inner`` with DPoP and the JWT-bearer grant in front (module docstring)."""

    async def asgi(scope: Scope, receive: Any, send: Any) -> None:
        path = scope.get("path")
        if scope["type"] != "http":
            await inner(scope, receive, send)
        elif path == "/.well-known/oauth-authorization-server" and (
            guard.dpop != "off" or guard.machine is not None
        ):
            status, headers, body = await _captured(inner, scope, receive)
            document = json.loads(body)
            if guard.dpop != "off":
                document["dpop_signing_alg_values_supported"] = list(DPOP_ALGS)
            if guard.machine is not None:
                document["grant_types_supported"].append(CLIENT_CREDENTIALS)
                if guard.machine.key is not None:
                    document["token_endpoint_auth_methods_supported"].append("private_key_jwt")
            await _send_json(send, status, headers, document)
        elif path == "/token" and scope["method"] == "POST":
            await _token(inner, guard, scope, receive, send)
        elif path == "/mcp" and guard.dpop != "off":
            passed = await _mcp(guard, scope, send)
            if passed is not None:
                await inner(passed, receive, send)
        else:
            await inner(scope, receive, send)

    return asgi


WRITE_SCOPE = "notes:write"
"""The scope ``publish`` wants besides ``notes:read``."""


def step_up(inner: Any, provider: NotesProvider, port: int) -> Any:
    """``inner`` with ``publish`` refused by HTTP 403 ``insufficient_scope`` for a token
    without :data:`WRITE_SCOPE` (before the MCP handler sees the call)."""
    challenge = (
        f'Bearer error="insufficient_scope", scope="{REQUIRED_SCOPE} {WRITE_SCOPE}", '
        f'resource_metadata="http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"'
    )

    async def asgi(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") != "/mcp" or scope["method"] != "POST":
            await inner(scope, receive, send)
            return
        body = await _body(receive)
        replay = _replaying(body, receive)

        try:
            request = json.loads(body)
        except ValueError:
            request = None
        headers = dict(scope.get("headers", []))
        bearer = headers.get(b"authorization", b"").decode("latin-1").removeprefix("Bearer ")
        token = await provider.load_access_token(bearer) if bearer else None
        method = request.get("method") if isinstance(request, dict) else None
        wants_write = (
            method == "tools/call" and (request.get("params") or {}).get("name") == "publish"
        ) or (method == "tools/list" and provider.list_wants_write)
        if wants_write and token is not None and WRITE_SCOPE not in token.scopes:
            answer = json.dumps(
                {"error": "insufficient_scope", "error_description": "publish wants notes:write"}
            ).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(answer)).encode()),
                        (b"www-authenticate", challenge.encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": answer})
            return
        await inner(scope, replay, send)

    return asgi


def app(
    port: int,
    log: pathlib.Path | None,
    *,
    token_seconds: int = TOKEN_SECONDS,
    dpop: str = "off",
    workload_key: pathlib.Path | None = None,
    machine: str | None = None,
    machine_secret: str | None = None,
    machine_key: pathlib.Path | None = None,
) -> Any:
    """The logged ASGI app of the server on ``port``: the MCP server behind the step-up
    check, behind DPoP, the JWT-bearer and the client-credentials grants."""
    server, provider = build(port, log, token_seconds=token_seconds)
    key = None
    if workload_key is not None:
        key = serialization.load_pem_public_key(workload_key.read_bytes())
    client = None
    if machine is not None:
        public = None
        if machine_key is not None:
            public = serialization.load_pem_public_key(machine_key.read_bytes())
        client = Machine(machine, machine_secret, public)
    guard = Guard(provider, f"http://127.0.0.1:{port}", dpop, key, client)
    served = step_up(server.streamable_http_app(host="127.0.0.1"), provider, port)
    return logged(guarded(served, guard), provider.log)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", type=pathlib.Path, required=True)
    parser.add_argument("--token-seconds", type=int, default=TOKEN_SECONDS)
    parser.add_argument("--dpop", choices=("off", "on", "nonce"), default="off")
    parser.add_argument("--workload-key", type=pathlib.Path, default=None)
    parser.add_argument("--machine", default=None)
    parser.add_argument("--machine-secret", default=None)
    parser.add_argument("--machine-key", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)
    served = app(
        args.port,
        args.log,
        token_seconds=args.token_seconds,
        dpop=args.dpop,
        workload_key=args.workload_key,
        machine=args.machine,
        machine_secret=args.machine_secret,
        machine_key=args.machine_key,
    )
    config = uvicorn.Config(
        served, host="127.0.0.1", port=args.port, log_level="warning", access_log=False
    )
    anyio.run(uvicorn.Server(config).serve)


# --- for the tests --------------------------------------------------------------------


def command(
    port: int, log: pathlib.Path, *, token_seconds: int = TOKEN_SECONDS, **more: Any
) -> list[str]:
    """The command line that serves on ``port``; ``more``: ``dpop``, ``workload_key``,
    ``machine``, ``machine_secret``, ``machine_key``."""
    line = [
        sys.executable,
        str(HERE),
        "--port",
        str(port),
        "--log",
        str(log),
        "--token-seconds",
        str(token_seconds),
    ]
    for name, value in more.items():
        if value is not None:
            line += [f"--{name.replace('_', '-')}", str(value)]
    return line


def start(
    port: int, log: pathlib.Path, *, token_seconds: int = TOKEN_SECONDS, **more: Any
) -> subprocess.Popen[bytes]:
    """The server as a child process on ``port`` (not yet listening: see
    :func:`wait_ready`). Its stdout and stderr are the caller's."""
    return subprocess.Popen(
        command(port, log, token_seconds=token_seconds, **more), stdin=subprocess.DEVNULL
    )


async def wait_ready(port: int, timeout: float = 60) -> None:
    """Until the server on ``port`` accepts connections."""
    from testservers.processes import wait_listening

    await wait_listening(port, timeout)


async def require_write(port: int) -> None:
    """``POST /test/require-write``: from now on ``tools/list`` wants ``notes:write``."""
    async with httpx2.AsyncClient() as http:
        response = await http.post(f"http://127.0.0.1:{port}/test/require-write")
    response.raise_for_status()


async def revoke_refresh(port: int) -> int:
    """``POST /test/revoke-refresh``; how many refresh tokens it revoked."""
    async with httpx2.AsyncClient() as http:
        response = await http.post(f"http://127.0.0.1:{port}/test/revoke-refresh")
    response.raise_for_status()
    return int(response.json()["revoked"])


@attrs.frozen
class Served:
    """A running server: its port, MCP URL and log."""

    port: int
    url: str
    log: pathlib.Path

    def events(self) -> list[dict[str, Any]]:
        return events(self.log)


@asynccontextmanager
async def serving(
    log: pathlib.Path, *, token_seconds: int = TOKEN_SECONDS, **more: Any
) -> AsyncIterator[Served]:
    """The server on a free loopback port for the block, once it listens; killed after.
    ``more``: ``dpop`` (``"on"``, ``"nonce"``), ``workload_key`` (a PEM file),
    ``machine`` (a client id) with ``machine_secret`` or ``machine_key`` (a PEM file)."""
    from testservers.processes import free_port

    port = free_port()
    process = start(port, log, token_seconds=token_seconds, **more)
    try:
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                # A server that dies at start would otherwise cost wait_ready's minute.
                while process.poll() is None:
                    await anyio.sleep(0.05)
                raise RuntimeError(f"oauth_server.py exited with {process.returncode} at start")

            group.start_soon(watch)
            await wait_ready(port)
            group.cancel_scope.cancel()
        yield Served(port, url(port), log)
    finally:
        process.kill()
        process.wait()


if __name__ == "__main__":
    main()
