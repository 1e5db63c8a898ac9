"""Streamable HTTP for a server session (SPEC §11.2): the transport mcpbind builds for
the SDK's client, its read timeout, and the names of the HTTP failures it saw.

The SDK turns a non-2xx answer without a JSON-RPC body into the error "Server returned
an error response"; an event hook on mcpbind's HTTP client keeps the status and the
server's own text, so that a connection refused with 401 (or 403 ``insufficient_scope``)
says that the server requires authorization and any other status — a plain 403
included — is named with what the server said.
"""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import attrs

from mcpbind.model import texts

from ..config.server import ServerConfig
from ..errors import AuthorizationError, CredentialsRequired, HttpStatusError, describe
from .seam import StreamEvent

__all__ = [
    "HTTP_READ_MARGIN",
    "HTTP_READ_TIMEOUT",
    "HTTP_STAND_IN",
    "SESSION_HEADER",
    "SESSION_REFUSED",
    "HttpStatus",
    "body_text",
    "expired_session",
    "failed_at_connect",
    "http_read_timeout",
    "http_transport",
    "is_refusal",
]

HTTP_STAND_IN = "Server returned an error response"
"""The error the SDK's HTTP transport makes of a non-2xx answer without a JSON-RPC body."""
HTTP_READ_TIMEOUT = 300.0
"""The SDK's own read timeout for MCP over HTTP: how long a response may be silent."""
HTTP_READ_MARGIN = 30.0
"""Added to a tool's timeout, so that the tool timeout, not the transport, ends a call."""


def http_read_timeout(config: ServerConfig) -> float | None:
    """SPEC §11.2: the read timeout of a server's HTTP transport follows its tool timeout.

    A tool timeout of 0 (no limit) means no read timeout either; a longer one raises it
    above the SDK's default. Never below the default, which long-lived streams rely on."""
    if config.tool_timeout_sec == 0:
        return None
    return max(HTTP_READ_TIMEOUT, config.tool_timeout_sec + HTTP_READ_MARGIN)


BODY_BYTES = 64 * 1024
"""The largest failed answer whose text is read (by its ``Content-Length``)."""
BODY_SECONDS = 5.0
"""How long reading a failed answer's text may take before it is left unsaid."""
TEXT_LIMIT = 200
"""Characters of a failed answer's text that a message quotes."""
REDACTED = "[redacted]"
_SECRET_HEADERS = ("authorization", "proxy-authorization", "cookie")
_MARKUP = re.compile(r"(?is)<(script|style)\b.*?</\1\s*>|<[^>]*>")


def is_refusal(response: Any) -> bool:
    """The server asks for authorization: 401, or 403 with an ``insufficient_scope``
    challenge (OAuth's step-up, SPEC §11.15). Any other 403 is the server's refusal,
    said with its own text."""
    if response.status_code == 401:
        return True
    if response.status_code != 403:
        return False
    return "insufficient_scope" in response.headers.get("www-authenticate", "")


def body_text(body: bytes, content_type: str, secrets: Iterable[str] = ()) -> str | None:
    """SPEC §11.2: a failed answer's body as one short line: markup left out, every
    whitespace run one space, each of ``secrets`` (and each long word of one, such as
    the token of ``Bearer <token>``) replaced by ``[redacted]``, cut to
    :data:`TEXT_LIMIT` characters; None when nothing is left."""
    text = body.decode("utf-8", errors="replace")
    if "html" in content_type.lower() or text.lstrip().startswith("<"):
        text = html.unescape(_MARKUP.sub(" ", text))
    words = {secret for secret in secrets if len(secret) >= 4}
    words |= {part for secret in secrets for part in secret.split() if len(part) >= 8}
    for secret in sorted(words, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if not line:
        return None
    return line if len(line) <= TEXT_LIMIT else line[: TEXT_LIMIT - 1] + "…"


SESSION_HEADER = "mcp-session-id"


def expired_session(status: int, had_session: bool, said: str | None) -> bool:
    """SPEC §8.13: the server no longer knows the session a request was sent in. The
    transport (2025-11-25 basic/transports, "Session Management"): a server that
    terminated a session MUST answer requests with its id with HTTP 404, and a client
    that receives 404 for a request with a session id MUST start a new session. Some
    servers answer 400 instead (server-everything 2026.8.31 answers a request whose
    session it does not know with HTTP 400, ``application/json``, the JSON-RPC error
    ``-32000`` "Bad Request: No valid session ID provided"): a 400 counts only when its
    text says that the session is not valid, unknown, expired or not found
    (:data:`SESSION_REFUSED`), not merely when it names a session."""
    if not had_session:
        return False
    if status == 404:
        return True
    return status == 400 and said is not None and SESSION_REFUSED.search(said) is not None


SESSION_REFUSED = re.compile(
    r"(?i)\b(?:no valid|not a valid|invalid|unknown|expired)\s+session\b"
    r"|\bsession(?:\s+id)?\s+(?:not found|expired|unknown|is invalid|is not valid)\b"
)
"""The text of a 400 that refuses a request for its session (:func:`expired_session`)."""


@attrs.define
class HttpStatus:
    """What the HTTP transport saw of a server's failed answers (SPEC §11.2)."""

    failed: str | None = None
    """The last non-2xx status, as ``401 Unauthorized``."""
    refused: bool = False  # pragma: no mutate - read only through step_up, None before a refusal
    """The last failed answer asked for authorization (:func:`is_refusal`). Its default is
    never decisive: :meth:`wanted` asks ``step_up``, which names nothing before a failed
    answer has set this field."""
    said: str | None = None
    """The text of the last failed answer that was not a refusal (:func:`body_text`)."""
    url: str | None = None
    """The server's URL: only its answers count, not those of the authorization
    requests around them (metadata discovery, registration, tokens; SPEC §11.15)."""
    secrets: tuple[str, ...] = ()
    """Values that must not be quoted from an answer: the server's configured headers
    (its bearer token among them)."""
    expired: bool = False
    """The last failed answer said the server no longer knows the session
    (:func:`expired_session`, SPEC §8.13)."""
    on_idle: Callable[[StreamEvent], None] | None = None
    """Hears what the session's notification stream (its ``GET``) found while the host
    was idle (SPEC §11.18): ``unreachable``, ``expired``, then ``reachable`` once an
    answer came again."""
    step_up: Callable[[], AuthorizationError | None] | None = None
    """The step-up the server's last refusal asked for that the host could not give
    (:meth:`.oauth.LazyAuth.wanted`, SPEC §11.15): said instead of the status."""
    faulted: bool = False
    """``on_idle`` was told ``unreachable`` or ``expired`` and not ``reachable`` since."""

    def _idle(self, event: StreamEvent) -> None:
        self.faulted = event != "reachable"
        if self.on_idle is not None:
            self.on_idle(event)

    def on_unreachable(self, request: Any) -> None:
        """SPEC §11.18: a request could not even connect. The notification stream's
        ``GET`` of an open session is retried by the SDK while idle: when it finds
        nothing listening, the server is down (a refusal by a live server is a status,
        never a connection failure)."""
        if request.method == "GET" and SESSION_HEADER in request.headers:
            self._idle("unreachable")

    async def on_response(self, response: Any) -> None:
        if self.url is not None and str(response.request.url).rstrip("/") != self.url:
            return
        if response.status_code < 400 and self.faulted:
            self._idle("reachable")
        if response.status_code >= 400:
            refused = is_refusal(response)
            said = None if refused else await self._text(response)
            # All three at once, after the read: a concurrent request's failure never
            # pairs this status with another answer's text.
            self.failed = f"{response.status_code} {response.reason_phrase}".strip()
            self.refused, self.said = refused, said
            had_session = SESSION_HEADER in response.request.headers
            self.expired = expired_session(response.status_code, had_session, said)
            if self.expired and response.request.method == "GET":
                self._idle("expired")  # SPEC §11.18: the stream's session was refused

    async def _text(self, response: Any) -> str | None:
        """What the server said in a failed answer, read once (the transport reads the
        cached body after it), or None: too long, a stream, unreadable, too slow."""
        length = response.headers.get("content-length")
        content_type = response.headers.get("content-type", "")
        if content_type.lower().startswith("text/event-stream"):
            return None
        if length is not None and (not length.isdigit() or int(length) > BODY_BYTES):
            return None
        body = None
        try:
            with anyio.move_on_after(BODY_SECONDS):
                body = await response.aread()
        except Exception:  # any failure to read leaves the text unsaid, never the status
            return None
        if not isinstance(body, bytes | bytearray):
            return None
        sent = [response.request.headers.get(name, "") for name in _SECRET_HEADERS]
        return body_text(bytes(body[:BODY_BYTES]), content_type, (*self.secrets, *sent))

    def wanted(self) -> AuthorizationError | None:
        """The authorization the last failed answer asked for and the host could not
        give, or None."""
        if not self.refused or self.step_up is None:
            return None
        return self.step_up()

    def named(self, message: str) -> str | None:
        """The status behind the SDK's stand-in error ``message``, with the server's text
        when it gave one; None for any other message, or when no failed answer was seen."""
        if self.failed is None:
            return None
        # A wrong path: the SDK says only "Not Found" (its discovery's 404 taken for
        # "method not found") or its stand-in.
        wrong_path = self.failed.startswith("404") and not self.expired
        if wrong_path and message in (HTTP_STAND_IN, self.failed.partition(" ")[2]):
            return texts.HTTP_NOT_FOUND.format(url=self.url)
        if message != HTTP_STAND_IN:
            return None
        if self.said is None:
            return texts.HTTP_STATUS.format(status=self.failed)
        return texts.HTTP_STATUS_TEXT.format(status=self.failed, text=self.said)


@asynccontextmanager
async def failed_at_connect(server: str, http: HttpStatus | None) -> AsyncIterator[None]:
    """A connection that fails on an HTTP status says which, not the SDK's stand-in, with
    the server's text; on 401 (or 403 ``insufficient_scope``), that the server requires
    authorization."""
    try:
        yield
    except Exception as error:
        authorization = _authorization_error(error)
        if authorization is not None:  # SPEC §11.15: it says what to do already
            raise authorization from error
        if http is None or http.failed is None:
            raise
        if http.refused:
            text = texts.CREDENTIALS_REQUIRED.format(status=http.failed)
            raise CredentialsRequired(server, text) from error
        named = http.named(describe(error))
        if named is not None:
            raise HttpStatusError(named) from error
        raise


def _authorization_error(error: BaseException) -> AuthorizationError | None:
    """The authorization failure somewhere in ``error`` (the SDK's transport wraps what
    its requests raise in exception groups), or None."""
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, AuthorizationError):
            return current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                pending.append(linked)
    return None


@asynccontextmanager
async def http_transport(
    url: str, config: ServerConfig, http: HttpStatus, auth: Any = None
) -> AsyncIterator[Any]:
    """Streamable HTTP with the server's headers (``http_headers``, the bearer token),
    the read timeout of :func:`http_read_timeout`, its failed answers seen, and ``auth``
    (an ``httpx2.Auth``: the server's OAuth, SPEC §11.15)."""
    import httpx2  # noqa: PLC0415 - the SDK's HTTP client, only for URL servers
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415

    timeout = httpx2.Timeout(30.0, read=http_read_timeout(config))
    hooks = {"response": [http.on_response]}
    transport = _watched_transport(http)
    async with (
        httpx2.AsyncClient(
            headers=dict(config.headers),
            timeout=timeout,
            event_hooks=hooks,
            auth=auth,
            transport=transport,
        ) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


def _watched_transport(http: HttpStatus) -> Any:
    """The SDK client's usual HTTP transport, its connection failures told to
    :meth:`HttpStatus.on_unreachable` (an event hook sees answers only)."""
    import httpx2  # noqa: PLC0415 - the SDK's HTTP client, only for URL servers

    class Watched(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self._inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            try:
                return await self._inner.handle_async_request(request)
            except httpx2.ConnectError:
                http.on_unreachable(request)
                raise

        async def aclose(self) -> None:
            await self._inner.aclose()

    return Watched()
