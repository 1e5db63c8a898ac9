"""Streamable HTTP for a server session (SPEC §11.2): the transport mcpbind builds for
the SDK's client, its read timeout, and the names of the HTTP failures it saw.

The SDK turns a non-2xx answer without a JSON-RPC body into the error "Server returned
an error response"; an event hook on mcpbind's HTTP client keeps the status, so that a
connection refused with 401 or 403 says that the server requires authorization and any
other status is named.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs

from mcpbind.model import texts

from ..config.server import ServerConfig
from ..errors import AuthorizationError, CredentialsRequired, HttpStatusError, describe

__all__ = [
    "HTTP_READ_MARGIN",
    "HTTP_READ_TIMEOUT",
    "HTTP_STAND_IN",
    "HttpStatus",
    "failed_at_connect",
    "http_read_timeout",
    "http_transport",
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


@attrs.define
class HttpStatus:
    """What the HTTP transport saw of a server's failed answers (SPEC §11.2)."""

    failed: str | None = None
    """The last non-2xx status, as ``401 Unauthorized``."""
    refused: bool = False
    """The last failed answer was 401 or 403: the server requires authorization."""
    url: str | None = None
    """The server's URL: only its answers count, not those of the authorization
    requests around them (metadata discovery, registration, tokens; SPEC §11.15)."""

    async def on_response(self, response: Any) -> None:
        if self.url is not None and str(response.request.url).rstrip("/") != self.url:
            return
        if response.status_code >= 400:
            self.failed = f"{response.status_code} {response.reason_phrase}".strip()
            self.refused = response.status_code in (401, 403)

    def named(self, message: str) -> str | None:
        """The status behind the SDK's stand-in error ``message``; None for any other
        message, or when no failed answer was seen."""
        if message != HTTP_STAND_IN or self.failed is None:
            return None
        return f"the server answered HTTP {self.failed}"


@asynccontextmanager
async def failed_at_connect(server: str, http: HttpStatus | None) -> AsyncIterator[None]:
    """A connection that fails on an HTTP status says which, not the SDK's stand-in; on
    401 or 403, that the server requires authorization."""
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
    async with (
        httpx2.AsyncClient(
            headers=dict(config.headers), timeout=timeout, event_hooks=hooks, auth=auth
        ) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams
