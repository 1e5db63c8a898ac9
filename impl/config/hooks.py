"""The hooks a host application plugs into a host, and the values they exchange with it:
the approver (SPEC §11.8), the elicitation handler (SPEC §11.10), the progress callback
(SPEC §8.10) and the OAuth handler (SPEC §11.15). Each is a plain callable; nothing here
runs anything."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Literal
from urllib.parse import parse_qs, urlsplit

import attrs

from ..errors import AuthorizationFailed
from ..values import ElicitationAnswer, ElicitationRequest, Progress
from .server import ApprovalMode

__all__ = [
    "APPROVAL_ANSWERS",
    "ApprovalAnswer",
    "ApprovalRequest",
    "Approver",
    "AuthorizationHandler",
    "AuthorizationRequest",
    "AuthorizationResponse",
    "ElicitationHandler",
    "OnProgress",
    "response_from_redirect",
]

# --- approval (SPEC §11.8) ------------------------------------------------------------

ApprovalAnswer = Literal["allow", "allow_session", "allow_always", "decline", "cancel"]
APPROVAL_ANSWERS: Final[tuple[ApprovalAnswer, ...]] = (
    "allow",
    "allow_session",
    "allow_always",
    "decline",
    "cancel",
)


@attrs.frozen
class ApprovalRequest:
    """What the approver is asked about: one call, before anything is sent."""

    call_id: str
    server: str
    tool: str
    """The raw tool name (what the server calls it)."""
    name: str
    """The public name (what the model called)."""
    arguments: Mapping[str, Any]
    """Read-only view of the call's arguments."""
    annotations: Mapping[str, Any]
    """The tool's annotations as the server listed them (empty when it listed none)."""
    mode: ApprovalMode
    """The approval mode that asked (never ``approve``)."""


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]


# --- elicitation (SPEC §11.10) and progress (SPEC §8.10) ------------------------------

ElicitationHandler = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]
"""Asks the user; see SPEC §11.10."""

OnProgress = Callable[[Progress], Awaitable[None] | None]
"""The host's progress callback: a plain function or a coroutine function."""


# --- OAuth (SPEC §11.15) ------------------------------------------------------------


@attrs.frozen
class AuthorizationRequest:
    """What a person must open: ``url`` at the authorization server, which sends the
    browser back to ``redirect_uri`` with the answer."""

    server: str
    url: str
    redirect_uri: str


@attrs.frozen
class AuthorizationResponse:
    """The authorization server's answer, from the redirect's query (RFC 6749 §4.1.2,
    RFC 9207 ``iss``). ``code`` is never shown."""

    code: str = attrs.field(repr=False)
    state: str | None = None
    iss: str | None = None


AuthorizationHandler = Callable[[AuthorizationRequest], Awaitable[AuthorizationResponse]]
"""Presents the authorization URL to a person and returns the redirect's answer."""


def response_from_redirect(server: str, location: str) -> AuthorizationResponse:
    """The answer in a redirect URL (``...?code=...&state=...``); raises
    :class:`AuthorizationFailed` for an ``error`` answer or one without a code."""
    query = parse_qs(urlsplit(location).query)

    def one(name: str) -> str | None:
        values = query.get(name)
        return values[0] if values else None

    error = one("error")
    if error is not None:
        described = one("error_description")
        why = f"the authorization server answered {error}" + (f": {described}" if described else "")
        raise AuthorizationFailed(server, why)
    code = one("code")
    if not code:
        raise AuthorizationFailed(server, "the redirect carried no authorization code")
    return AuthorizationResponse(code, one("state"), one("iss"))
