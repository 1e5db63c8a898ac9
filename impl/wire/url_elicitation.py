"""A server that needs the user at a URL first: the ``-32042`` answer (SPEC §11.10).

MCP 2025-11-25 (client/elicitation, "URL Elicitation Required Error"): when a request
cannot be processed until an elicitation is completed, the server MAY answer it with the
JSON-RPC error ``-32042``, whose ``data.elicitations`` lists the URL-mode elicitations
"that are required to complete before the original can be retried". The host hands each
URL to its elicitation policy (the handler, when it takes URLs) and ends the call with a
text that names the URLs; it does not send the request again by itself.
"""

from __future__ import annotations

import attrs
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError

from ..values import ElicitationRequest
from .seam import Elicit, UrlElicitationRequired, UrlStep

__all__ = ["ask_url_steps", "url_steps"]


def url_steps(error: MCPError) -> tuple[UrlStep, ...]:
    """The URL-mode elicitations a ``-32042`` error carries (``data.elicitations``, read
    with the SDK's own ``UrlElicitationRequiredError.from_error``); none when its data
    holds none or is malformed: then it is a plain JSON-RPC error (SPEC §11.10)."""
    try:
        found = UrlElicitationRequiredError.from_error(error.error).elicitations
    except (ValueError, TypeError, AttributeError):  # pydantic's ValidationError is a ValueError
        return ()
    return tuple(UrlStep(e.url, e.message, e.elicitation_id) for e in found)


async def ask_url_steps(
    server: str, on_elicit: Elicit | None, needed: UrlElicitationRequired
) -> UrlElicitationRequired:
    """SPEC §11.10: each URL of a ``-32042`` answer goes to the host's elicitation
    policy as a URL-mode request, in order, until one is not accepted (the request needs
    them all); ``on_elicit`` None (the host takes no URL requests) asks nobody. The
    request is not sent again: an ``accept`` is the user's consent to open the page, not
    the end of what they do there."""
    steps: list[UrlStep] = []
    for step in needed.steps:
        if on_elicit is None or any(s.answer != "accept" for s in steps):
            steps.append(step)  # not asked
            continue
        request = ElicitationRequest(
            server, step.message, {}, mode="url", url=step.url, elicitation_id=step.elicitation_id
        )
        answer = await on_elicit(request)
        steps.append(attrs.evolve(step, answer=answer.action))
    return UrlElicitationRequired(needed.message, tuple(steps))
