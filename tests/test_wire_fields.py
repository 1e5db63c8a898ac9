"""The fields mcpbind writes and reads on the wire, exactly, one module at a time: a
failed HTTP answer's text as a message quotes it (SPEC §11.2), a DPoP proof's claims and
header (RFC 9449 §4.2, SPEC §11.15), a ``-32042`` error's URL steps (SPEC §11.10), and a
stdio server that exits before its session opens (SPEC §11.14).

Mutation testing (issue 33) found each of these changeable with no test failing that a
sample run chooses: a secret of three characters redacted, a proof's ``jti`` made of
another number of random bytes, and the exit status of a stdio server lost, which only
tests marked ``slow`` (not run by ``scripts/mutation --sample``) noticed.
"""

from __future__ import annotations

import base64
import hashlib
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

import anyio
import httpx2
import jwt
import pytest
import trio
import trio.testing
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError

from mcpbind.impl import Host, HostConfig, MemoryTokenStore, ServerConfig, ServerStartupError
from mcpbind.impl.config.oauth import IdentityProvider
from mcpbind.impl.errors import AuthorizationFailed, CredentialsRequired
from mcpbind.impl.wire.dpop import DPOP_METADATA, Dpop, new_key, proof
from mcpbind.impl.wire.http import (
    BODY_BYTES,
    HTTP_STAND_IN,
    REDACTED,
    TEXT_LIMIT,
    HttpStatus,
    body_text,
    failed_at_connect,
    http_read_timeout,
)
from mcpbind.impl.wire.oauth_storage import Storage
from mcpbind.impl.wire.seam import UrlStep
from mcpbind.impl.wire.token_exchange import exchange_at
from mcpbind.impl.wire.url_elicitation import url_steps

# --- a failed answer's text (SPEC §11.2) ---------------------------------------------


@pytest.mark.parametrize(
    ("body", "content_type", "secrets", "expected"),
    [
        pytest.param(b"  no\n\tsuch   tool ", "text/plain", (), "no such tool", id="whitespace"),
        pytest.param(b"", "text/plain", (), None, id="empty"),
        pytest.param(b" \n ", "text/plain", (), None, id="blank"),
        pytest.param(
            b"<html><style>p{}</style><p>Gone &amp; away</p></html>",
            "text/html; charset=utf-8",
            (),
            "Gone & away",
            id="markup",
        ),
        pytest.param(b"  <b>x</b>", "text/plain", (), "x", id="markup without its type"),
        pytest.param(b"a<b", "text/plain", (), "a<b", id="a less-than sign in text"),
        pytest.param(b"bad key abcd here", "text/plain", ("abcd",), f"bad key {REDACTED} here"),
        pytest.param(b"bad key abc here", "text/plain", ("abc",), "bad key abc here", id="short"),
        pytest.param(
            b"token tok12345 refused",
            "text/plain",
            ("Bearer tok12345",),
            f"token {REDACTED} refused",
            id="a long word of a secret",
        ),
        pytest.param(
            b"token tok1234 refused",
            "text/plain",
            ("Bearer tok1234",),
            "token tok1234 refused",
            id="a short word of a secret",
        ),
        pytest.param(
            b"abcdefgh and abcd",
            "text/plain",
            ("abcd", "abcdefgh"),
            f"{REDACTED} and {REDACTED}",
            id="the longest secret first",
        ),
        pytest.param(b"a\x00b\x7fc", "text/plain", (), "a b c", id="unprintable"),
        pytest.param(b"\xff!", "text/plain", (), "\ufffd!", id="not utf-8"),
    ],
)
def test_a_failed_answers_text_is_one_clean_line_without_its_secrets(
    body, content_type, secrets, expected
):
    assert body_text(body, content_type, secrets) == expected


def test_a_failed_answers_text_is_cut_to_its_limit_with_an_ellipsis():
    exact = "x" * TEXT_LIMIT
    assert body_text(exact.encode(), "text/plain") == exact
    cut = body_text(exact.encode() + b"y", "text/plain")
    assert cut == "x" * (TEXT_LIMIT - 1) + "…"


@pytest.mark.parametrize(
    ("tool_timeout_sec", "read_timeout"),
    [(0.0, None), (10.0, 300.0), (270.0, 300.0), (300.0, 330.0), (600.0, 630.0)],
)
def test_the_http_read_timeout_is_the_sdks_300_s_or_the_tool_timeout_and_30_s(
    tool_timeout_sec, read_timeout
):
    """SPEC §11.2: none when ``tool_timeout_sec = 0``, otherwise the larger of the SDK's
    300 s and ``tool_timeout_sec`` + 30 s (the transport never cuts a call first)."""
    config = ServerConfig(target="http://127.0.0.1:1/mcp", tool_timeout_sec=tool_timeout_sec)
    assert http_read_timeout(config) == read_timeout


# --- a DPoP proof (RFC 9449 §4.2) ------------------------------------------------------


@pytest.mark.parametrize("alg", ["ES256", "ES384", "EdDSA", "RS256"])
def test_a_dpop_proof_has_exactly_the_claims_and_header_rfc_9449_names(alg):
    key = new_key(alg)
    token = proof(key, "post", "https://as.example/token?x=1#frag")
    header = jwt.get_unverified_header(token)
    assert header["typ"] == "dpop+jwt"
    assert header["alg"] == alg
    public = {k: v for k, v in key["jwk"].items() if k not in ("d", "p", "q", "dp", "dq", "qi")}
    assert header["jwk"] == public  # the public key alone
    verifier = jwt.get_algorithm_by_name(alg).from_jwk(header["jwk"])
    claims = jwt.decode(token, verifier, algorithms=[alg])
    assert sorted(claims) == ["htm", "htu", "iat", "jti"]
    assert (claims["htm"], claims["htu"]) == ("POST", "https://as.example/token")
    # 24 random bytes: 32 base64url characters, new for every proof
    assert len(claims["jti"]) == 32
    assert len(base64.urlsafe_b64decode(claims["jti"])) == 24
    assert proof(key, "POST", "https://as.example/token") != token


def test_a_dpop_proof_for_a_token_carries_its_hash_and_the_servers_nonce():
    key = new_key("ES256")
    token = proof(key, "GET", "https://rs.example/mcp", access_token="at-1", nonce="n-1")
    claims = jwt.decode(token, options={"verify_signature": False})
    digest = base64.urlsafe_b64encode(hashlib.sha256(b"at-1").digest()).rstrip(b"=").decode()
    assert sorted(claims) == ["ath", "htm", "htu", "iat", "jti", "nonce"]
    assert (claims["ath"], claims["nonce"], claims["htm"]) == (digest, "n-1", "GET")


async def test_a_form_post_whose_body_is_a_stream_is_sent_as_it_is_without_a_proof():
    """SPEC §11.15: a token request is a form ``POST`` whose body names a ``grant_type``;
    one whose body is a stream cannot be read before it is sent, so it is no token
    request and gets no proof, though the authorization server offers DPoP."""
    dpop = Dpop(
        Storage(MemoryTokenStore(), "s", "http://127.0.0.1:9/mcp"), wanted=True, required=False
    )
    issuer = "http://127.0.0.1:9"
    metadata = httpx2.Request("GET", f"{issuer}/.well-known/oauth-authorization-server")

    async def form() -> Any:
        yield b"grant_type=client_credentials"

    streamed = httpx2.Request(
        "POST",
        f"{issuer}/token",
        headers={"content-type": "application/x-www-form-urlencoded"},
        content=form(),
    )

    async def flow() -> Any:  # the SDK's flow: the metadata, then the form
        yield metadata
        yield streamed

    driven = dpop.drive(flow(), httpx2.Request("POST", "http://127.0.0.1:9/mcp"))
    assert await driven.__anext__() is metadata
    offer = {"issuer": issuer, DPOP_METADATA: ["ES256"]}
    sent = await driven.asend(httpx2.Response(200, json=offer, request=metadata))
    assert dpop.offered_algorithms() == ["ES256"]
    assert sent is streamed
    assert "DPoP" not in sent.headers
    await driven.aclose()


# --- -32042: the URL steps (SPEC §11.10) ------------------------------------------------


STEP = {"mode": "url", "message": "Sign in", "url": "https://x.example/a", "elicitationId": "e1"}


@pytest.mark.parametrize(
    ("code", "data", "expected"),
    [
        (-32042, {"elicitations": [STEP]}, (UrlStep("https://x.example/a", "Sign in", "e1"),)),
        (-32042, {"elicitations": []}, ()),
        (-32042, None, ()),
        (-32042, {"elicitations": [{"mode": "url", "message": "no url"}]}, ()),
        (-32042, {"elicitations": ["not an object"]}, ()),
        (-32042, {"elicitations": 7}, ()),
        (-32042, "not an object", ()),
        (-32000, {"elicitations": [STEP]}, ()),
    ],
)
def test_a_url_elicitation_errors_steps_are_read_or_none_when_malformed(code, data, expected):
    assert url_steps(MCPError(code, "needs a browser", data)) == expected


# --- a stdio server that exits at start (SPEC §11.14) -----------------------------------


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("import sys; sys.exit(3)", "the server's process exited with status 3 at start"),
        (
            "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
            "the server's process was ended by signal 9 at start",
        ),
    ],
)
async def test_a_stdio_server_that_exits_at_start_is_named_by_its_exit_status(code, said):
    """Issue 28, without the tests' server (its tests are ``slow``): a process that ends
    before its session opens is described by how it ended, not the SDK's "Connection
    closed" alone."""
    target = StdioServerParameters(command=sys.executable, args=["-S", "-c", code])
    config = HostConfig(servers={"k": ServerConfig(target=target, required=True)})
    with anyio.fail_after(30), pytest.raises(ServerStartupError) as raised:
        async with Host.open(config):
            pass
    assert said in str(raised.value)


# --- the identity provider's token exchange (SEP-990, RFC 8693; SPEC §11.15) ------------


class _Endpoint(ThreadingHTTPServer):
    """A token endpoint on 127.0.0.1: records each form, answers with ``answer``."""

    forms: list[dict[str, str]]
    answer: tuple[int, bytes] = (500, b"")


class _IdentityProvider(BaseHTTPRequestHandler):
    server: _Endpoint

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        form = dict(parse_qsl(self.rfile.read(length).decode()))
        self.server.forms.append(form)
        status, body = self.server.answer
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def identity_provider() -> Iterator[_Endpoint]:
    server = _Endpoint(("127.0.0.1", 0), _IdentityProvider)
    server.forms = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _provider(server: _Endpoint, secret: str | None) -> IdentityProvider:
    endpoint = f"http://127.0.0.1:{server.server_address[1]}/token"
    return IdentityProvider(endpoint, "host-client", id_token="the.id.token", client_secret=secret)


@pytest.mark.parametrize("secret", [None, "idp-secret"])
async def test_the_token_exchange_sends_rfc_8693s_fields_and_returns_the_id_jag(
    identity_provider, secret
):
    identity_provider.answer = (200, b'{"access_token": "the.id-jag", "token_type": "N_A"}')
    exchange = exchange_at("crm", _provider(identity_provider, secret))
    assert await exchange("https://as.example", "https://crm.example/mcp") == "the.id-jag"
    expected = {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "subject_token": "the.id.token",
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "audience": "https://as.example",
        "resource": "https://crm.example/mcp",
        "client_id": "host-client",
    }
    if secret is not None:
        expected["client_secret"] = secret
    assert identity_provider.forms == [expected]


@pytest.mark.parametrize(
    ("status", "body", "why"),
    [
        (400, b'{"error": "invalid_grant"}', "answered HTTP 400: invalid_grant"),
        (400, b'{"error": 7}', "answered HTTP 400"),
        (500, b"<html>down</html>", "answered HTTP 500"),
        (200, b"not json", "answered HTTP 200"),
        (200, b"[]", "answered HTTP 200"),
        (200, b'{"token_type": "N_A"}', "issued no ID-JAG"),
        (200, b'{"access_token": ""}', "issued no ID-JAG"),
        (200, b'{"access_token": 5}', "issued no ID-JAG"),
    ],
)
async def test_a_refused_or_empty_token_exchange_fails_naming_the_endpoint_and_code(
    identity_provider, status, body, why
):
    identity_provider.answer = (status, body)
    provider = _provider(identity_provider, "idp-secret")
    with pytest.raises(AuthorizationFailed) as caught:
        await exchange_at("crm", provider)("https://as.example", "https://crm.example/mcp")
    endpoint = provider.token_endpoint
    if "issued" in why:
        assert caught.value.why == f"the identity provider at {endpoint} {why}"
    else:
        said = f"the identity provider's token exchange at {endpoint} {why}"
        assert caught.value.why == said
    assert "the.id.token" not in str(caught.value)
    assert "idp-secret" not in str(caught.value)


# --- which failed answers' text is read (SPEC §11.2) ------------------------------------


def _failed(body: bytes, headers: dict[str, str], sent: dict[str, str] | None = None) -> Any:
    request = httpx2.Request("POST", "http://127.0.0.1:1/mcp", headers=sent or {})
    return httpx2.Response(403, headers=headers, content=body, request=request)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        pytest.param(
            HTTP_STAND_IN, "the server answered HTTP 403 Forbidden: go away", id="the stand-in"
        ),
        pytest.param("Invalid params", None, id="a message sorting before it"),
        pytest.param("unknown tool: nope", None, id="a message sorting after it"),
    ],
)
async def test_only_the_sdks_stand_in_error_is_told_as_the_last_failed_status(
    message: str, expected: str | None
) -> None:
    """SPEC §11.2: once an answer failed, the SDK's stand-in error ("Server returned an
    error response") is told as that status and the server's text; any other message (a
    JSON-RPC error the server sent) stays the server's, whichever side of the stand-in
    it sorts on (mutation testing, issue 33: ``message != HTTP_STAND_IN`` made ``<`` told
    "unknown tool: nope" as HTTP 403)."""
    status = HttpStatus(url="http://127.0.0.1:1/mcp")
    await status.on_response(_failed(b"go away", {"content-type": "text/plain"}))
    assert status.named(message) == expected


async def test_a_connection_failure_says_the_authorization_error_behind_an_exception_seen_twice():
    """SPEC §11.15: the SDK's transport wraps what its requests raise in exception groups,
    where one exception may appear twice; the walk for the authorization failure skips
    the second sight and goes on (issue 33: its ``continue`` made ``break`` stopped there
    and raised the group, which says nothing of what to do)."""
    refused = CredentialsRequired("s", "server 's' requires credentials")
    other = OSError("connection reset")
    with pytest.raises(CredentialsRequired) as raised:
        async with failed_at_connect("s", None):
            raise ExceptionGroup("transport", [refused, other, other])
    assert raised.value is refused


class _Stalling(httpx2.AsyncByteStream):
    """A failed answer's body that arrives after ``delay`` seconds of the run's clock."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def __aiter__(self) -> Any:
        await trio.sleep(self.delay)
        yield b"too slow"


@pytest.mark.trio
@pytest.mark.parametrize(("delay", "expected"), [(4.99, "too slow"), (5.01, None)])
async def test_a_failed_answers_text_is_read_within_five_seconds(
    autojump_clock: trio.testing.MockClock, delay: float, expected: str | None
) -> None:
    """SPEC §11.2: the text of a failed answer is read within 5 s (``BODY_SECONDS``) and
    left unsaid after, under the run's virtual time (seed 82: the number changed
    survived)."""
    request = httpx2.Request("POST", "http://127.0.0.1:1/mcp")
    response = httpx2.Response(
        403, headers={"content-type": "text/plain"}, stream=_Stalling(delay), request=request
    )
    status = HttpStatus(url="http://127.0.0.1:1/mcp")
    assert await status._text(response) == expected


LONG = "x" * BODY_BYTES


@pytest.mark.parametrize(
    ("body", "headers", "sent", "expected"),
    [
        pytest.param(b"go away", {"content-type": "text/plain"}, None, "go away", id="plain"),
        pytest.param(
            b"data: x\n\n", {"content-type": "Text/Event-Stream"}, None, None, id="a stream"
        ),
        pytest.param(
            (LONG + "y").encode(),
            {"content-length": str(BODY_BYTES + 1)},
            None,
            None,
            id="past 64 KiB",
        ),
        pytest.param(
            LONG.encode(),
            {"content-length": str(BODY_BYTES)},
            None,
            "x" * (TEXT_LIMIT - 1) + "…",
            id="64 KiB",
        ),
        pytest.param(b"go away", {"content-length": "-7"}, None, None, id="a bad length"),
        pytest.param(b"go away", {"content-length": ""}, None, "go away", id="no length"),
        pytest.param(
            b"bad token tok-12345678 and key k3y-secret!",
            {"content-type": "text/plain"},
            {"authorization": "Bearer tok-12345678", "cookie": "k3y-secret!"},
            f"bad token {REDACTED} and key {REDACTED}",
            id="the request's secrets",
        ),
        pytest.param(
            b"header hdr-value-1 quoted",
            {"content-type": "text/plain"},
            None,
            f"header {REDACTED} quoted",
            id="the configured headers",
        ),
    ],
)
async def test_a_failed_answers_text_is_read_only_when_short_and_not_a_stream(
    body, headers, sent, expected
):
    status = HttpStatus(url="http://127.0.0.1:1/mcp", secrets=("hdr-value-1",))
    response = _failed(body, headers, sent)
    if headers.get("content-length") == "":  # chunked: no length said
        del response.headers["content-length"]
    elif "content-length" in headers:  # as the server said it, not as httpx counts
        response.headers["content-length"] = headers["content-length"]
    assert await status._text(response) == expected
