"""Answers to server-initiated elicitation (SPEC §11.10).

A server may ask the user for input while one of its calls runs (``elicitation/create``
mid-call on handshake-era connections, an ``InputRequiredResult`` on 2026-07-28 ones).
The host's policy decides first, synchronously (:func:`decide`); only ``ask`` reaches
the user, through the host's handler (:func:`answer`), and while it is asked the tool
timeout of that server's calls in flight is paused.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..config.server import ElicitationPolicy
from ..values import ElicitationAnswer, ElicitationRequest
from .table import CallTable

__all__ = [
    "ACCEPT_EMPTY",
    "DECLINE",
    "answer",
    "answer_problem",
    "decide",
    "is_confirmation",
    "with_defaults",
]

logger = logging.getLogger("mcpbind.elicitation")

DECLINE = ElicitationAnswer("decline")
ACCEPT_EMPTY = ElicitationAnswer("accept", {})


def is_confirmation(schema: Mapping[str, Any]) -> bool:
    """A requested schema with no fields: the server only wants a yes."""
    properties = schema.get("properties")
    return not properties


def decide(
    policy: ElicitationPolicy, request: ElicitationRequest, *, url: bool
) -> ElicitationAnswer | None:
    """The policy's own answer, or None when the user must be asked. A URL request is
    declined unless the handler takes URLs (``url``, no default: the one caller always
    knows): it always needs a person."""
    if policy == "decline":
        return DECLINE
    if request.mode == "url":
        return None if policy == "ask" and url else DECLINE
    if policy == "never_ask":
        return ACCEPT_EMPTY if is_confirmation(request.requested_schema) else DECLINE
    return None


def _primitive(value: Any) -> bool:
    if isinstance(value, list):
        return all(isinstance(v, str) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def answer_problem(answer: Any, mode: str = "form") -> str | None:
    """Why a handler's answer cannot be sent to the server, or None when it can."""
    if not isinstance(answer, ElicitationAnswer):
        return f"expected an ElicitationAnswer, got {type(answer).__name__}"
    if answer.action not in ("accept", "decline", "cancel"):
        return f"unknown action {answer.action!r}"
    if mode == "url":
        return "an answer to a URL request carries no content" if answer.content else None
    if answer.action == "accept":
        content = answer.content
        if content is None:
            return "an accept needs content (an empty mapping for a confirmation)"
        bad = [k for k, v in content.items() if not isinstance(k, str) or not _primitive(v)]
        if bad:
            return f"content values must be strings, numbers, booleans or lists of strings: {bad}"
    return None


def with_defaults(given: ElicitationAnswer, schema: Mapping[str, Any]) -> ElicitationAnswer:
    """SPEC §11.10 (SEP-1034): an accepted form carries the requested schema's ``default``
    for each field the answer leaves out; an answer's own values always win."""
    properties = schema.get("properties")
    if given.action != "accept" or not isinstance(properties, Mapping) or not properties:
        return given
    content = dict(given.content or {})
    missing = {
        key: field["default"]
        for key, field in properties.items()
        if key not in content and isinstance(field, Mapping) and _has_default(field)
    }
    if not missing:
        return given
    return ElicitationAnswer("accept", {**content, **missing})


def _has_default(field: Mapping[str, Any]) -> bool:
    return "default" in field and _primitive(field["default"]) and field["default"] is not None


async def answer(
    request: ElicitationRequest,
    policy: ElicitationPolicy,
    handler: Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]] | None,
    calls: CallTable,
    *,
    url: bool = False,
) -> ElicitationAnswer:
    """The host's answer to ``request``.

    The policy answers first; only ``ask`` reaches the handler. While the handler runs,
    the tool timeout of every call of the asking server in flight is paused (the request
    need not say which call it belongs to), then resumed with the time it had left. A
    handler that raises or answers something unusable declines. ``url``: the handler
    takes URL requests."""
    decided = decide(policy, request, url=url)
    if decided is not None:
        return with_defaults(decided, request.requested_schema)
    assert handler is not None  # HostConfig refuses "ask" without one
    server = request.server
    paused = calls.pause(server)
    try:
        given = await handler(request)
    except Exception:
        logger.exception("elicitation handler failed for server %r; declined", server)
        return DECLINE
    finally:
        calls.resume(paused)
    problem = answer_problem(given, request.mode)
    if problem is not None:
        logger.error(
            "elicitation handler answer for server %r unusable (%s); declined", server, problem
        )
        return DECLINE
    return with_defaults(given, request.requested_schema)
