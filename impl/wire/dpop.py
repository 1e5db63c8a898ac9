"""DPoP (RFC 9449, MCP SEP-1932): sender-constrained tokens for the SDK's OAuth flow
(SPEC §11.15).

Theory of operation
-------------------
:class:`Dpop` stands between one of the SDK's OAuth providers and the network: it drives
the provider's ``httpx2`` auth flow and looks at every request the flow sends and every
response it gets back, so the SDK's flow itself is unchanged.

* **Offered?** The authorization server's metadata response (RFC 8414 or OpenID
  discovery) is read as it passes: ``dpop_signing_alg_values_supported`` (which the
  SDK's metadata model drops) is noted per issuer, and kept in the stored metadata.
* **Token requests** (a form ``POST`` with ``grant_type``: code, refresh, client
  credentials, JWT bearer) get a ``DPoP`` proof header when the server is configured for
  DPoP and the authorization server offers an algorithm mcpbind signs with, or when the
  token being refreshed is bound already. The key pair is made once, stored with the
  tokens (``Credentials.dpop_key``) before the first proof leaves, and reused, so a
  stored or refreshed token stays bound to its key. ``dpop_required`` and no offer: the
  token request is not sent, the flow fails.
* **Token responses** with ``token_type`` ``DPoP`` are recorded as bound
  (:attr:`.Storage.issued_type`) and handed to the SDK as ``Bearer`` (its token model
  knows no other type).
* **Requests to the MCP server** carrying a bound token are sent with
  ``Authorization: DPoP <token>`` and a fresh proof (its own ``jti``; ``ath``, the
  token's hash).
* **Nonces.** A ``DPoP-Nonce`` header on any response is remembered for that origin and
  put in the next proof sent there. A ``use_dpop_nonce`` challenge — the authorization
  server's 400, the MCP server's 401 ``WWW-Authenticate: DPoP error="use_dpop_nonce"`` —
  is answered by sending the same request once more with a new proof carrying the
  nonce; the SDK sees only the second answer.

Proofs are signed with PyJWT over ``cryptography`` (both installed with the SDK); the
private key never leaves the store and the proofs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from mcp.client.auth import OAuthFlowError

from ..config.oauth import DPOP_ALGORITHMS
from .oauth_storage import Storage

__all__ = ["DPOP_METADATA", "Dpop", "new_key", "proof"]

DPOP_METADATA = "dpop_signing_alg_values_supported"
_METADATA_PATHS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
_FORM = "application/x-www-form-urlencoded"


def _generate(alg: str) -> Any:
    if alg == "ES256":
        return ec.generate_private_key(ec.SECP256R1())
    if alg == "ES384":
        return ec.generate_private_key(ec.SECP384R1())
    if alg == "EdDSA":
        return ed25519.Ed25519PrivateKey.generate()
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def new_key(alg: str) -> dict[str, Any]:
    """A new key pair for ``alg`` as it is stored: ``{"alg", "jwk"}`` (private JWK)."""
    algorithm: Any = jwt.get_algorithm_by_name(alg)
    return {"alg": alg, "jwk": algorithm.to_jwk(_generate(alg), as_dict=True)}


_PRIVATE_PARTS = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth"})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _htu(url: str) -> str:
    """RFC 9449 §4.2: the target URI without query and fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def proof(
    key: Mapping[str, Any],
    method: str,
    url: str,
    *,
    access_token: str | None = None,
    nonce: str | None = None,
) -> str:
    """A DPoP proof JWT (RFC 9449 §4.2) for ``method url``, signed with the stored
    ``key``; ``ath`` when it goes with ``access_token``, ``nonce`` when one was given."""
    alg = str(key["alg"])
    algorithm: Any = jwt.get_algorithm_by_name(alg)
    private = algorithm.from_jwk(dict(key["jwk"]))
    public = {k: v for k, v in dict(key["jwk"]).items() if k not in _PRIVATE_PARTS}
    claims: dict[str, Any] = {
        "jti": secrets.token_urlsafe(24),
        "htm": method.upper(),
        "htu": _htu(url),
        "iat": int(time.time()),
    }
    if access_token is not None:
        claims["ath"] = _b64(hashlib.sha256(access_token.encode("ascii")).digest())
    if nonce is not None:
        claims["nonce"] = nonce
    return jwt.encode(claims, private, algorithm=alg, headers={"typ": "dpop+jwt", "jwk": public})


def _json(response: httpx2.Response) -> Any:
    try:
        return json.loads(response.content)
    except ValueError:
        return None


def _token_request(request: httpx2.Request) -> bool:
    if request.method != "POST" or _FORM not in request.headers.get("content-type", ""):
        return False
    try:
        fields = dict(parse_qsl(request.content.decode("latin-1")))
    except httpx2.RequestNotRead:
        return False
    return "grant_type" in fields


def _presented(request: httpx2.Request) -> str | None:
    """The access token the request carries (``Bearer`` as the SDK puts it, or ``DPoP``
    as a first try put it)."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    ours, kept = scheme.lower() in ("bearer", "dpop"), token.strip()
    # 'or' for 'and' returns another scheme's word or an empty token: the caller's
    # ``Storage.bound`` refuses either (only the stored access token is bound).
    return kept if ours and kept else None  # pragma: no mutate - equivalent, see above


class Dpop:
    """DPoP for one server's provider (module docstring)."""

    def __init__(self, storage: Storage, *, wanted: bool, required: bool) -> None:
        self.storage = storage
        self.wanted = wanted or required
        self.required = required
        self.offered: dict[str, list[str]] = {}
        """Per issuer: its ``dpop_signing_alg_values_supported``, as its metadata said."""
        self.nonces: dict[tuple[bool, str], str] = {}
        """Per origin, apart for its token endpoint and its resources (an authorization
        server and a resource server may share one): the last ``DPoP-Nonce`` sent."""
        self.issuer: str | None = None
        """The issuer of the metadata the flow last read."""

    # --- what is offered -------------------------------------------------------------

    def _note_metadata(self, response: httpx2.Response) -> None:
        path = urlsplit(str(response.request.url)).path
        if response.status_code != 200 or not any(p in path for p in _METADATA_PATHS):
            return
        document = _json(response)
        if not isinstance(document, dict) or not isinstance(document.get("issuer"), str):
            return
        algs = document.get(DPOP_METADATA)
        self.issuer = document["issuer"].rstrip("/")
        self.offered[self.issuer] = (
            [a for a in algs if isinstance(a, str)] if isinstance(algs, list) else []
        )

    def offered_algorithms(self) -> Sequence[str]:
        """What the authorization server in use offers: as its metadata said in this
        process, else as stored with the tokens."""
        if self.issuer is not None and self.issuer in self.offered:
            return self.offered[self.issuer]
        record = self.storage.record
        stored = None if record is None or record.metadata is None else record.metadata
        algs = None if stored is None else stored.get(DPOP_METADATA)
        return [a for a in algs if isinstance(a, str)] if isinstance(algs, list) else []

    def metadata_extra(self, issuer: str) -> dict[str, Any]:
        """What to keep with the stored metadata of ``issuer`` besides the SDK's fields."""
        algs = self.offered.get(issuer.rstrip("/"))
        return {} if not algs else {DPOP_METADATA: list(algs)}

    async def _key_for_token_request(self) -> Mapping[str, Any] | None:
        """The key to sign a token request's proof with, made and stored on first use;
        None: no DPoP for this request."""
        record = await self.storage.current()
        tokens = record.tokens
        bound = tokens is not None and str(tokens.get("token_type", "")).lower() == "dpop"
        if record.dpop_key is not None and bound:
            return record.dpop_key  # a bound refresh token is refreshed with its key
        if not self.wanted:
            return None
        offered = self.offered_algorithms()
        usable = [alg for alg in DPOP_ALGORITHMS if alg in offered]
        if not usable:
            if self.required:
                where = self.issuer or "the authorization server"
                raise OAuthFlowError(  # the SDK's flow error: its text is said as it is
                    f"{where} does not offer DPoP with an algorithm mcpbind signs with "
                    f"({', '.join(DPOP_ALGORITHMS)}) and dpop_required is set"
                )
            return None
        if record.dpop_key is not None and record.dpop_key.get("alg") in usable:
            return record.dpop_key
        key = new_key(usable[0])
        await self.storage.set_dpop_key(key)
        return key

    # --- the flow --------------------------------------------------------------------

    def _sign(
        self, request: httpx2.Request, key: Mapping[str, Any], token: str | None = None
    ) -> None:
        url = str(request.url)
        nonce = self.nonces.get((token is None, _origin(url)))
        request.headers["DPoP"] = proof(key, request.method, url, access_token=token, nonce=nonce)
        if token is not None:
            request.headers["Authorization"] = f"DPoP {token}"

    async def _observe(self, response: httpx2.Response, token_request: bool) -> None:
        path = urlsplit(str(response.request.url)).path
        # What is parsed here: a token answer, a metadata document. Nothing here reads
        # another answer's body (an error's is read by the SDK's flow where it parses it,
        # by httpx2 before the flow's next request, by HttpStatus within its limits).
        if token_request or any(p in path for p in _METADATA_PATHS):
            await response.aread()
        nonce = response.headers.get("dpop-nonce")
        if nonce:
            self.nonces[(token_request, _origin(str(response.request.url)))] = nonce
        self._note_metadata(response)

    @staticmethod
    def _nonce_asked(response: httpx2.Response, token_request: bool) -> bool:
        if not response.headers.get("dpop-nonce"):
            return False
        if token_request:
            body = _json(response)
            return (
                response.status_code == 400
                and isinstance(body, dict)
                and body.get("error") == "use_dpop_nonce"
            )
        challenge = response.headers.get("www-authenticate", "")
        return response.status_code == 401 and "use_dpop_nonce" in challenge

    def _token_answer(self, response: httpx2.Response, signed: bool) -> httpx2.Response:
        """A token response as the SDK can read it, its ``token_type`` noted."""
        body = _json(response)
        if response.status_code != 200 or not isinstance(body, dict):
            return response
        kind = body.get("token_type")
        if not isinstance(kind, str) or kind.lower() != "dpop":
            self.storage.issued_type = "Bearer" if signed else None
            return response
        self.storage.issued_type = "DPoP"
        headers = [
            (name, value)
            for name, value in response.headers.items()
            if name.lower() not in ("content-length", "content-encoding", "transfer-encoding")
        ]
        content = json.dumps({**body, "token_type": "Bearer"}).encode()
        return httpx2.Response(
            response.status_code, headers=headers, content=content, request=response.request
        )

    async def drive(
        self, inner: AsyncGenerator[httpx2.Request, httpx2.Response], request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The provider's flow ``inner`` for ``request``, with DPoP (module docstring)."""
        try:
            outgoing = await inner.__anext__()
            while True:
                key: Mapping[str, Any] | None = None
                token = None
                token_request = outgoing is not request and _token_request(outgoing)
                if token_request:
                    key = await self._key_for_token_request()
                elif outgoing is request:
                    token = _presented(outgoing)
                    if token is not None and self.storage.bound(token):
                        key = (await self.storage.current()).dpop_key
                if key is not None:
                    self._sign(outgoing, key, token)
                response = yield outgoing
                await self._observe(response, token_request)
                if key is not None and self._nonce_asked(response, token_request):
                    self._sign(outgoing, key, token)  # the same request, the new nonce
                    response = yield outgoing
                    await self._observe(response, token_request)
                if token_request:
                    response = self._token_answer(response, key is not None)
                outgoing = await inner.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await inner.aclose()
