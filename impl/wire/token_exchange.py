"""The identity-assertion grant's first leg, from a configuration file (SPEC §11.15).

SEP-990 (enterprise-managed authorization): the host exchanges the user's ID token at its
identity provider for an ID-JAG, an identity assertion for one authorization server (RFC
8693 token exchange, ``requested_token_type`` ``urn:ietf:params:oauth:token-type:id-jag``);
the SDK's ``IdentityAssertionOAuthProvider`` then presents it at the authorization server
(RFC 7523's JWT-bearer grant). A library host can give that first leg as a hook
(``OAuthConfig.assertion``); a configuration file names the identity provider instead
(:class:`~..config.oauth.IdentityProvider`), and this module makes the hook.
"""

from __future__ import annotations

import contextlib
from typing import Any

import httpx2  # the SDK's HTTP client, loaded with mcp already

from ..config.oauth import IdentityAssertion, IdentityProvider
from ..errors import AuthorizationFailed

__all__ = ["ID_JAG", "exchange_at"]

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"


def exchange_at(server: str, provider: IdentityProvider) -> IdentityAssertion:
    """``(audience, resource) -> ID-JAG`` from ``provider``'s token endpoint; a refusal is
    :class:`AuthorizationFailed` naming the endpoint's error code (never a token)."""

    async def assertion(audience: str, resource: str) -> str:
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "subject_token": provider.id_token,
            "subject_token_type": ID_TOKEN,
            "audience": audience,
            "resource": resource,
            "client_id": provider.client_id,
        }
        if provider.client_secret is not None:
            form["client_secret"] = provider.client_secret
        async with httpx2.AsyncClient() as http:
            answer = await http.post(provider.token_endpoint, data=form)
        found: Any = None
        with contextlib.suppress(ValueError):
            found = answer.json()
        if answer.status_code != 200 or not isinstance(found, dict):
            code = found.get("error") if isinstance(found, dict) else None
            said = f": {code}" if isinstance(code, str) else ""
            why = (
                f"the identity provider's token exchange at {provider.token_endpoint} "
                f"answered HTTP {answer.status_code}{said}"
            )
            raise AuthorizationFailed(server, why)
        token = found.get("access_token")
        if not isinstance(token, str) or not token:
            why = f"the identity provider at {provider.token_endpoint} issued no ID-JAG"
            raise AuthorizationFailed(server, why)
        return token

    return assertion
