"""The SDK's OAuth providers, with what mcpbind adds (SPEC §11.15).

Imported the first time a server needs OAuth (:meth:`.oauth.Authorizer.auth`), so that a
host without one never loads the SDK's client auth. What is added to the SDK's
providers:

* restored after a restart (:class:`.sdk.RestoreAfterInitialize`): the token's absolute
  expiry and the authorization server's metadata, which the SDK keeps nowhere, so that a
  stored token is refreshed at the right endpoint before it is sent; a pre-registered
  client from the configuration;
* Codex's ``oauth_resource`` as the resource indicator (RFC 8707);
* configured scopes always requested, whatever a server's challenge adds;
* DPoP (RFC 9449) around any of them but the identity assertion grant's (:mod:`.dpop`);
* the JWT-bearer grant of a workload (RFC 7523, :class:`JwtBearerProvider`).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import httpx2
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, OAuthFlowError
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.auth.oauth2 import OAuthContext
from mcp.client.auth.utils import issuers_match
from mcp.shared.auth import (
    JWT_BEARER_GRANT_TYPE,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
)
from pydantic import AnyUrl, PrivateAttr

from ..config.hooks import AuthorizationHandler, AuthorizationRequest
from ..config.oauth import IdentityAssertion, OAuthConfig
from ..errors import AuthorizationError, LoginRequired
from .dpop import Dpop
from .oauth_storage import Storage
from .sdk import AUTH_LOGGER, GrantRequest, RestoreAfterInitialize
from .token_exchange import exchange_at

__all__ = ["CodeProvider", "JwtBearerProvider", "JwtProvider", "SecretProvider", "build_provider"]


class ResourceContext(OAuthContext):
    """The SDK's OAuth context with Codex's ``oauth_resource`` (RFC 8707)."""

    resource_override: str | None = None

    def get_resource_url(self) -> str:
        if self.resource_override is not None:
            return self.resource_override
        return str(super().get_resource_url())


class ConfiguredScopes(OAuthClientMetadata):
    """Client metadata whose configured scopes stay requested whatever a server's
    challenge adds: the SDK assigns ``scope`` on a step-up, and this keeps the configured
    words first."""

    _configured: str | None = PrivateAttr(default=None)

    def __init__(self, *, configured: str | None, **fields: Any) -> None:
        super().__init__(**fields)
        self._configured = configured

    def __setattr__(self, name: str, value: Any) -> None:
        configured = getattr(self, "_configured", None)
        if name == "scope" and configured:
            words = configured.split()
            value = " ".join([*words, *(w for w in (value or "").split() if w not in words)])
        super().__setattr__(name, value)


class _Restoring(RestoreAfterInitialize):
    """What mcpbind's providers add to the SDK's (module docstring)."""

    context: Any
    preset: OAuthClientInformationFull | None = None
    """A client registered beforehand, from the configuration (never stored)."""
    dpop: Dpop | None = None
    """DPoP around the SDK's flow: it signs nothing unless the server is configured for
    DPoP or the stored tokens are bound already."""

    def async_auth_flow(self, request: httpx2.Request) -> Any:
        flow = super().async_auth_flow(request)  # type: ignore[misc] # the SDK's provider's
        return flow if self.dpop is None else self.dpop.drive(flow, request)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # the SDK's provider, after this mixin
        fields = dataclasses.fields(OAuthContext)
        self.context = ResourceContext(
            **{field.name: getattr(self.context, field.name) for field in fields if field.init}
        )

    def restored(self) -> None:
        context = self.context
        if self.preset is not None and context.client_info is None:
            context.client_info = self.preset
        storage = context.storage
        if isinstance(storage, Storage) and storage.record is not None:
            record = storage.record
            if context.current_tokens is not None:
                context.token_expiry_time = record.expires_at
            if context.oauth_metadata is None and record.metadata is not None:
                context.oauth_metadata = OAuthMetadata.model_validate(record.metadata)


class CodeProvider(_Restoring, OAuthClientProvider):
    """The authorization-code grant (a person logs in), restored."""


class SecretProvider(_Restoring, ClientCredentialsOAuthProvider):
    """The client-credentials grant with a client secret, restored."""


class JwtProvider(_Restoring, PrivateKeyJWTOAuthProvider):
    """The client-credentials grant with a signed JWT (``private_key_jwt``), restored."""


class JwtBearerProvider(_Restoring, GrantRequest, OAuthClientProvider):
    """The JWT-bearer grant (RFC 7523 §2.1) of a workload with an identity of its own
    (workload identity federation, MCP SEP-1933): its JWT is the grant, sent by the
    public client ``client_id`` to the configured ``issuer`` alone. A token that expires
    is replaced by a new grant with the assertion read again (a file its platform
    rotates); a refused grant fails the flow, it is not retried with another grant."""

    def __init__(
        self,
        server_url: str,
        storage: Storage,
        *,
        client_id: str,
        client_secret: str | None,
        method: str,
        issuer: str,
        assertion: IdentityAssertion,
        scope: str | None,
    ) -> None:
        metadata = OAuthClientMetadata(
            redirect_uris=None,
            grant_types=[JWT_BEARER_GRANT_TYPE],
            token_endpoint_auth_method=method,  # type: ignore[arg-type] # one of the SDK's
            scope=scope,
        )
        super().__init__(server_url, metadata, storage)
        self.issuer = issuer
        self.assertion = assertion
        self.preset = OAuthClientInformationFull(
            redirect_uris=None,
            client_id=client_id,
            client_secret=client_secret,
            grant_types=[JWT_BEARER_GRANT_TYPE],
            token_endpoint_auth_method=method,
            scope=scope,
        )

    async def grant_request(self) -> httpx2.Request:
        context = self.context
        found = context.oauth_metadata
        if found is None or not issuers_match(str(found.issuer), self.issuer):
            context.oauth_metadata = None
            context.clear_tokens()
            named = "no authorization server" if found is None else str(found.issuer)
            raise OAuthFlowError(
                f"the workload's assertion goes to {self.issuer} alone; the server led to {named}"
            )
        resource = context.get_resource_url()
        try:
            assertion = await self.assertion(str(found.issuer), resource)
        except OSError as error:
            where = f" {error.filename}" if error.filename else ""
            raise OAuthFlowError(
                f"cannot read the workload's assertion{where}: {error.strerror or error}"
            ) from None
        assert context.client_info is not None
        data = {
            "grant_type": JWT_BEARER_GRANT_TYPE,
            "assertion": assertion,
            "client_id": context.client_info.client_id or "",
        }
        if context.should_include_resource_param(context.protocol_version):
            data["resource"] = resource  # RFC 8707
        if context.client_metadata.scope:
            data["scope"] = context.client_metadata.scope
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        data, headers = context.prepare_token_auth(data, headers)
        return httpx2.Request("POST", str(found.token_endpoint), data=data, headers=headers)


class _DropOwnErrors(logging.Filter):
    """The SDK logs every failed flow with its traceback; ours say what to do already."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, AuthorizationError)


_QUIET = _DropOwnErrors()


def _quiet_sdk_log() -> None:
    """Keep our own errors out of the SDK's failure log (once per process)."""
    sdk_log = logging.getLogger(AUTH_LOGGER)
    if _QUIET not in sdk_log.filters:
        sdk_log.addFilter(_QUIET)


def build_provider(
    server: str,
    url: str,
    oauth: OAuthConfig,
    storage: Storage,
    *,
    handler: AuthorizationHandler | None,
    redirect_uri: str,
) -> Any:
    """The SDK's provider for ``server``'s grant, over ``storage`` (SPEC §11.15)."""
    _quiet_sdk_log()
    scope = " ".join(oauth.scopes) if oauth.scopes else None
    if oauth.grant == "identity_assertion":
        assert oauth.client_id is not None
        assert oauth.client_secret is not None
        assert oauth.issuer is not None
        id_jag = oauth.assertion
        if id_jag is None:  # a configuration file's identity provider (SEP-990)
            assert oauth.identity_provider is not None
            id_jag = exchange_at(server, oauth.identity_provider)
        method = oauth.token_endpoint_auth_method
        return IdentityAssertionOAuthProvider(  # its own flow: nothing of the others applies
            url,
            storage,
            oauth.client_id,
            oauth.client_secret,
            oauth.issuer,
            id_jag,
            scope=scope,
            token_endpoint_auth_method=(
                method if method == "client_secret_post" else "client_secret_basic"
            ),
        )
    if oauth.grant == "jwt_bearer":
        assert oauth.client_id is not None
        assert oauth.issuer is not None
        assert oauth.assertion is not None
        method = oauth.token_endpoint_auth_method or (
            "client_secret_basic" if oauth.client_secret else "none"
        )
        bearer = JwtBearerProvider(
            url,
            storage,
            client_id=oauth.client_id,
            client_secret=oauth.client_secret,
            method=method,
            issuer=oauth.issuer,
            assertion=oauth.assertion,
            scope=scope,
        )
        return _with_resource(bearer, oauth, storage)
    if oauth.grant == "client_credentials":
        assert oauth.client_id is not None
        if oauth.private_key is not None:
            assertion = SignedJWTParameters(
                issuer=oauth.client_id,
                subject=oauth.client_id,
                signing_key=oauth.private_key,
                signing_algorithm=oauth.signing_algorithm,
            ).create_assertion_provider()
            provider: Any = JwtProvider(
                url, storage, oauth.client_id, assertion, scope=scope, issuer=oauth.issuer
            )
        else:
            assert oauth.client_secret is not None
            method = oauth.token_endpoint_auth_method or "client_secret_basic"
            provider = SecretProvider(
                url,
                storage,
                oauth.client_id,
                oauth.client_secret,
                method if method != "none" else "client_secret_basic",
                scope=scope,
                issuer=oauth.issuer,
            )
        return _with_resource(provider, oauth, storage)
    pending: list[str] = []

    async def redirect(authorization_url: str) -> None:
        if handler is None:
            await storage.forget_tokens()
            raise LoginRequired(server)
        pending[:] = [authorization_url]

    async def callback() -> AuthorizationCodeResult:
        assert handler is not None
        assert pending
        request = AuthorizationRequest(server, pending.pop(), redirect_uri)
        answer = await handler(request)
        return AuthorizationCodeResult(code=answer.code, state=answer.state, iss=answer.iss)

    metadata = ConfiguredScopes(
        configured=scope,
        redirect_uris=[redirect_uri],
        client_name="mcpbind",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=scope,
        token_endpoint_auth_method=(
            None if oauth.client_id is not None else oauth.token_endpoint_auth_method
        ),
    )
    provider = CodeProvider(
        url,
        metadata,
        storage,
        redirect_handler=redirect,
        callback_handler=callback,
        client_metadata_url=oauth.client_metadata_url,
    )
    if oauth.client_id is not None:
        method = oauth.token_endpoint_auth_method or (
            "client_secret_basic" if oauth.client_secret else "none"
        )
        provider.preset = OAuthClientInformationFull(
            client_id=oauth.client_id,
            client_secret=oauth.client_secret,
            redirect_uris=[AnyUrl(redirect_uri)],
            token_endpoint_auth_method=method,
            grant_types=["authorization_code", "refresh_token"],
        )
    return _with_resource(provider, oauth, storage)


def _with_resource(provider: Any, oauth: OAuthConfig, storage: Storage) -> Any:
    """Codex's ``oauth_resource``: the token is asked for that resource (RFC 8707); the
    configured scopes kept first when a challenge assigns its own (the machine grants'
    providers build their client metadata themselves); and DPoP when configured (or when
    the stored tokens are bound already)."""
    metadata = provider.context.client_metadata
    if oauth.scopes and not isinstance(metadata, ConfiguredScopes):
        fields = metadata.model_dump(exclude_unset=True)
        provider.context.client_metadata = ConfiguredScopes(configured=metadata.scope, **fields)
    if oauth.resource is not None:
        provider.context.resource_override = oauth.resource
    provider.dpop = Dpop(storage, wanted=oauth.dpop, required=oauth.dpop_required)
    return provider
