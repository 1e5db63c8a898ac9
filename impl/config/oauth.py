"""How a streamable-HTTP server is authorized (SPEC §11.15): one value per server.

Plain values only (no SDK import): the machinery that acts on them is
:mod:`mcpbind.impl.wire.oauth`; where the tokens live, :mod:`mcpbind.impl.config.credentials`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Literal

import anyio
import attrs

from ..errors import ConfigError

__all__ = [
    "DPOP_ALGORITHMS",
    "GRANTS",
    "TOKEN_AUTH_METHODS",
    "AssertionFile",
    "AssertionValue",
    "Grant",
    "IdentityAssertion",
    "IdentityProvider",
    "OAuthConfig",
    "TokenAuthMethod",
]

Grant = Literal["authorization_code", "client_credentials", "identity_assertion", "jwt_bearer"]
GRANTS: tuple[Grant, ...] = (
    "authorization_code",
    "client_credentials",
    "identity_assertion",
    "jwt_bearer",
)
IdentityAssertion = Callable[[str, str], Awaitable[str]]
"""``(audience, resource) -> assertion``: an identity assertion grant (ID-JAG) from the
enterprise identity provider for the authorization server ``audience`` (SEP-990), or,
with ``grant = "jwt_bearer"``, the workload's JWT for that authorization server
(RFC 7523)."""
DPOP_ALGORITHMS = ("ES256", "EdDSA", "ES384", "PS256", "RS256")
"""The DPoP proof algorithms mcpbind signs with, in its order of preference: the first
one the authorization server lists in ``dpop_signing_alg_values_supported`` is used."""
TokenAuthMethod = Literal["none", "client_secret_basic", "client_secret_post"]
TOKEN_AUTH_METHODS: tuple[TokenAuthMethod, ...] = (
    "none",
    "client_secret_basic",
    "client_secret_post",
)


@attrs.frozen
class IdentityProvider:
    """The identity-assertion grant's first leg without code (SEP-990, from a
    configuration file): the enterprise identity provider's token endpoint exchanges the
    user's ID token for an ID-JAG for the authorization server (RFC 8693 token exchange).
    Secrets are never shown."""

    token_endpoint: str
    """The identity provider's token endpoint (``idp_token_endpoint``)."""
    client_id: str
    """This host's client at the identity provider (``idp_client_id``)."""
    id_token: str = attrs.field(repr=False)
    """The user's ID token from the identity provider (``id_token_env_var``)."""
    client_secret: str | None = attrs.field(default=None, repr=False)
    """The host's secret at the identity provider, for a confidential client."""


def _scopes(value: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


@attrs.frozen
class AssertionFile:
    """An assertion read from a file at each token request (``assertion_file``): a
    workload identity token that its platform rotates in place (a Kubernetes projected
    service-account token, a CI job's OIDC token written to disk)."""

    path: str

    async def __call__(self, audience: str, resource: str) -> str:
        text = await anyio.Path(self.path).read_text(encoding="utf-8")
        return text.strip()


@attrs.frozen
class AssertionValue:
    """An assertion given once (``assertion_env_var``: read when the file is loaded);
    never shown."""

    value: str = attrs.field(repr=False)

    async def __call__(self, audience: str, resource: str) -> str:
        return self.value


@attrs.frozen
class OAuthConfig:
    """A server's OAuth 2.1 client settings (MCP 2025-11-25 basic/authorization).

    Every field may stay unset: the client is then registered dynamically (or by its
    metadata document), the scopes are those the server asks for, and a person logs in
    once with ``mcpbind login SERVER``. ``grant = "client_credentials"`` is for machines
    with no person (CI): a pre-registered ``client_id`` with ``client_secret`` or a
    ``private_key`` (``private_key_jwt``). ``grant = "jwt_bearer"`` is for workloads with
    an identity of their own (RFC 7523, workload identity federation): the ``assertion``
    (a JWT from the platform) is traded for a token at ``issuer`` by the public client
    ``client_id``."""

    scopes: tuple[str, ...] | None = attrs.field(default=None, converter=_scopes)
    """Codex ``scopes``: always requested; a server's challenge adds to them (step-up)."""
    resource: str | None = None
    """Codex ``oauth_resource``: the resource indicator (RFC 8707) to ask a token for,
    instead of the one derived from the server's URL and metadata."""
    client_id: str | None = None
    """Codex ``[mcp_servers.<name>.oauth] client_id``: a client registered beforehand."""
    client_secret: str | None = attrs.field(default=None, repr=False)
    """The pre-registered client's secret (a confidential client); never shown."""
    token_endpoint_auth_method: TokenAuthMethod | None = None
    """How the pre-registered client authenticates at the token endpoint; default
    ``client_secret_basic`` with a secret, ``none`` without."""
    client_metadata_url: str | None = None
    """An HTTPS URL of this client's metadata document, used as its ``client_id`` where
    the authorization server supports it (client ID metadata documents)."""
    grant: Grant = "authorization_code"
    private_key: str | None = attrs.field(default=None, repr=False)
    """With ``client_credentials``: a PEM private key signing a ``private_key_jwt``
    assertion instead of a secret; never shown."""
    signing_algorithm: str = "ES256"
    issuer: str | None = None
    """The authorization server the pre-registered client belongs to: tokens are asked
    only from that issuer."""
    callback_port: int | None = None
    """Codex ``oauth.callback_port``: the loopback port ``mcpbind login`` listens on."""
    callback_url: str | None = None
    """Codex ``oauth.callback_url``: the redirect URI registered for this client."""
    assertion: IdentityAssertion | None = attrs.field(default=None, repr=False, eq=False)
    """With ``identity_assertion`` (a library hook, SEP-990 enterprise-managed
    authorization): gets the ID-JAG from the host's identity provider; the token comes
    from the pre-registered ``client_id``/``client_secret`` at ``issuer``. With
    ``jwt_bearer``: gets the workload's JWT (:class:`AssertionFile`,
    :class:`AssertionValue`, or a hook of the host's own)."""
    dpop: bool = False
    """Sender-constrained tokens (DPoP, RFC 9449) when the authorization server offers
    them (``dpop_signing_alg_values_supported``): every token request and every request to
    the server carries a proof signed by a key kept with the tokens."""
    dpop_required: bool = False
    """DPoP or nothing: an authorization server that does not offer it is an
    authorization failure (implies ``dpop``)."""
    identity_provider: IdentityProvider | None = None
    """With ``identity_assertion`` and no ``assertion``: where mcpbind exchanges the
    user's ID token for the ID-JAG itself (RFC 8693), as a configuration file says."""

    def __attrs_post_init__(self) -> None:
        if self.grant not in GRANTS:
            raise ConfigError(f"oauth grant must be one of {', '.join(GRANTS)}, got {self.grant!r}")
        method = self.token_endpoint_auth_method
        if method is not None and method not in TOKEN_AUTH_METHODS:
            raise ConfigError(
                f"oauth token_endpoint_auth_method must be one of {', '.join(TOKEN_AUTH_METHODS)}"
            )
        if self.grant == "client_credentials":
            if self.client_id is None:
                raise ConfigError("oauth grant 'client_credentials' needs a client_id")
            if (self.client_secret is None) == (self.private_key is None):
                raise ConfigError(
                    "oauth grant 'client_credentials' needs exactly one of client_secret "
                    "and private_key"
                )
        if self.grant == "identity_assertion" and (
            None in (self.client_id, self.client_secret, self.issuer)
            or (self.assertion is None and self.identity_provider is None)
        ):
            raise ConfigError(
                "oauth grant 'identity_assertion' needs client_id, client_secret, issuer "
                "and an assertion provider (the library's assertion, or the identity "
                "provider's idp_token_endpoint, idp_client_id and id_token_env_var)"
            )
        if self.grant == "jwt_bearer" and None in (self.client_id, self.issuer, self.assertion):
            raise ConfigError(
                "oauth grant 'jwt_bearer' needs client_id, issuer and an assertion "
                "(assertion_file or assertion_env_var)"
            )
        if self.grant == "identity_assertion" and (self.dpop or self.dpop_required):
            raise ConfigError("oauth dpop does not apply to grant 'identity_assertion' (yet)")
        if self.client_secret is not None and self.client_id is None:
            raise ConfigError("an oauth client_secret needs its client_id")
        port = self.callback_port
        if port is not None and not (isinstance(port, int) and 0 < port < 65536):
            raise ConfigError(f"oauth callback_port must be 1..65535, got {port!r}")
