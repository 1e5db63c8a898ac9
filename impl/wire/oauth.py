"""OAuth for streamable-HTTP servers, through the SDK's own client auth (SPEC §11.15).

Theory of operation
-------------------
An :class:`Authorizer` belongs to one host. For each URL server with OAuth on (the
default, unless its headers already carry ``Authorization``) it makes one
``httpx2.Auth`` for the host's lifetime, reused by every reconnect:

* it passes requests through untouched until the server answers 401 (or 403
  ``insufficient_scope``) or credentials for the server are stored; from then on the
  SDK's provider (``mcp.client.auth``) does the work: protected-resource and
  authorization-server metadata discovery, dynamic client registration or a client ID
  metadata document or a pre-registered client, PKCE, the resource indicator, scopes and
  step-up, token refresh, the client-credentials grants;
* the provider's storage is the host's :class:`~.oauth_store.TokenStore`: tokens are
  kept with their absolute expiry and the authorization server's metadata, and put back
  into the provider when it starts, so that a stored token is refreshed, not sent
  expired (the SDK keeps neither across restarts);
* when a person must authorize (no token, or a refresh token that no longer works), the
  host's ``oauth_handler`` is asked (``mcpbind login`` passes one that opens a browser and
  receives the redirect on a loopback port). A host without one fails that connection
  with :class:`LoginRequired` at once: nothing waits for a browser;
* a server that keeps refusing is not authorized forever: after
  :data:`MAX_AUTHORIZATIONS` refusals with no answer in between the connection fails with
  :class:`AuthorizationFailed`.

Tokens, client secrets and codes never leave the store and the SDK's requests: the
values here are shown by name only, and the errors name the server and what to do.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, Literal

import attrs
import httpx2  # the SDK's HTTP client, loaded with mcp already

from mcpbind.model import texts

from ..config.credentials import Credentials, MemoryTokenStore, TokenStore, open_store, store_key
from ..config.hooks import AuthorizationHandler, AuthorizationRequest
from ..config.host import HostConfig
from ..config.oauth import OAuthConfig
from ..config.server import ServerConfig
from ..errors import AuthorizationError, AuthorizationFailed, CredentialsRequired, LoginRequired
from .sdk import RestoreAfterInitialize

__all__ = ["MAX_AUTHORIZATIONS", "AuthStatus", "Authorizer", "has_authorization_header"]

logger = logging.getLogger("mcpbind.oauth")

MAX_AUTHORIZATIONS = 3
"""Refusals (401, 403 ``insufficient_scope``) of one server, with no answer in between,
after which the host stops authorizing (MCP 2025-11-25 authorization: clients SHOULD
limit step-up retries)."""

AuthStatus = Literal["unsupported", "off", "bearer_token", "oauth", "not_logged_in", "none"]
"""What ``mcpbind catalog`` shows per server (SPEC §11.15): ``unsupported`` (not HTTP),
``off`` (OAuth turned off), ``bearer_token`` (an ``Authorization`` header is configured),
``oauth`` (credentials stored, or a client-credentials grant), ``not_logged_in`` (the
server asked for authorization and no one has logged in), ``none`` (it asked for none)."""


def has_authorization_header(headers: Mapping[str, str]) -> bool:
    return any(name.lower() == "authorization" for name in headers)


class _Storage:
    """The SDK's ``TokenStorage`` over one record of a :class:`TokenStore`."""

    def __init__(self, store: TokenStore, server: str, url: str) -> None:
        self.store = store
        self.server = server
        self.url = url
        self.key = store_key(server, url)
        self.record: Credentials | None = None
        self.loaded = False
        self.metadata_of: Callable[[], Mapping[str, Any] | None] = lambda: None

    async def current(self) -> Credentials:
        if not self.loaded:
            self.record = await self.store.load(self.key)
            self.loaded = True
        return self.record or Credentials(self.server, self.url)

    async def _save(self, record: Credentials) -> None:
        self.record = record
        await self.store.save(self.key, record)

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken  # noqa: PLC0415

        record = await self.current()
        return None if record.tokens is None else OAuthToken.model_validate(record.tokens)

    async def set_tokens(self, tokens: Any) -> None:
        record = await self.current()
        expires = tokens.expires_in
        await self._save(
            attrs.evolve(
                record,
                tokens=tokens.model_dump(mode="json", exclude_none=True),
                expires_at=None if expires is None else time.time() + float(expires),
                metadata=self.metadata_of() or record.metadata,
            )
        )

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull  # noqa: PLC0415

        record = await self.current()
        if record.client is None:
            return None
        return OAuthClientInformationFull.model_validate(record.client)

    async def set_client_info(self, client_info: Any) -> None:
        record = await self.current()
        client = client_info.model_dump(mode="json", exclude_none=True)
        await self._save(attrs.evolve(record, client=client))

    async def forget_tokens(self) -> None:
        """A refresh token that no longer works: the next authorization asks a person."""
        record = await self.current()
        if record.tokens is not None:
            await self._save(attrs.evolve(record, tokens=None, expires_at=None))


class _LazyAuth(httpx2.Auth):
    """Passes requests through until the server asks for authorization (or credentials
    are stored), then hands every request to the SDK's provider."""

    requires_request_body = True
    requires_response_body = True

    def __init__(self, server: str, url: str, make: Callable[[], Any], storage: _Storage) -> None:
        self.server = server
        self.url = url.rstrip("/")
        self._make = make
        self._provider: Any = None
        self._storage = storage
        self._refusals = 0
        """Refusals of the server's own URL since its last answer (``MAX_AUTHORIZATIONS``)."""
        self.asked = False
        """The server asked for authorization (a 401 or 403 ``insufficient_scope``)."""
        self._status = "401 Unauthorized"

    def _is_mcp(self, response: Any) -> bool:
        return str(response.request.url).rstrip("/") == self.url

    def _refused(self, response: Any) -> bool:
        if response.status_code == 401:
            return True
        if response.status_code != 403:
            return False
        challenge = response.headers.get("www-authenticate", "")
        return "insufficient_scope" in challenge

    async def _engaged(self) -> bool:
        if self._provider is not None:
            return True
        record = await self._storage.current()
        return record.tokens is not None or record.client is not None

    def _failure(self, error: Exception) -> AuthorizationError:
        """Said once: no metadata and the default registration refused means the server
        has no OAuth to offer; anything else is the flow's own failure."""
        from mcp.client.auth import OAuthRegistrationError  # noqa: PLC0415

        context: Any = getattr(self._provider, "context", None)
        if (
            isinstance(error, OAuthRegistrationError)
            and context is not None
            and context.protected_resource_metadata is None
            and context.oauth_metadata is None
        ):
            text = texts.CREDENTIALS_REQUIRED_NO_OAUTH.format(
                server=self.server, status=self._status
            )
            return CredentialsRequired(self.server, text)
        return _failed(self.server, error)

    def _count(self, response: Any) -> None:
        """SPEC §11.15: a server that keeps refusing is not authorized forever."""
        if not self._is_mcp(response):
            return
        if self._refused(response):
            self.asked = True
            self._status = f"{response.status_code} {response.reason_phrase}".strip()
            self._refusals += 1
            if self._refusals > MAX_AUTHORIZATIONS:
                self._refusals = 0
                why = (
                    f"it refused {MAX_AUTHORIZATIONS + 1} times in a row (HTTP "
                    f"{response.status_code}), each after a new authorization"
                )
                raise AuthorizationFailed(self.server, why)
        elif response.status_code < 400:
            self._refusals = 0

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        first = None
        if not await self._engaged():
            first = yield request
            self._count(first)
            if not self._refused(first):
                return
        try:
            if self._provider is None:
                self._provider = self._make()
            flow = self._provider.async_auth_flow(request)
        except Exception as error:
            raise _failed(self.server, error) from error
        try:
            sent = await flow.__anext__()
            if first is not None and sent is request:  # its answer is in: no second send
                sent = await flow.asend(first)
            while True:
                response = yield sent
                self._count(response)
                sent = await flow.asend(response)
        except StopAsyncIteration:
            return
        except AuthorizationError:
            raise
        except Exception as error:  # the SDK's flow: said as ours, once
            raise self._failure(error) from error
        finally:
            await flow.aclose()

    def sync_auth_flow(self, request: Any) -> Any:  # pragma: no cover - async only
        raise RuntimeError("mcpbind's OAuth runs on an async client only")


def _failed(server: str, error: Exception) -> AuthorizationFailed:
    """An authorization flow's failure as :class:`AuthorizationFailed`: the SDK's
    ``OAuthFlowError`` texts are about metadata and endpoints, not secrets."""
    text = str(error).splitlines()[0] if str(error) else ""
    why = text if type(error).__name__.startswith("OAuth") else f"{type(error).__name__}: {text}"
    return AuthorizationFailed(server, why.rstrip(": "))


class Authorizer:
    """The OAuth of one host (module docstring): one store, one handler, one auth per
    server, kept for the host's lifetime."""

    def __init__(
        self,
        store: TokenStore | None = None,
        handler: AuthorizationHandler | None = None,
        *,
        callback_port: int | None = None,
        callback_url: str | None = None,
        redirect_uri: str | None = None,
    ) -> None:
        self.store = store if store is not None else MemoryTokenStore()
        self.handler = handler
        self.callback_port = callback_port
        self.callback_url = callback_url
        self.redirect_uri = redirect_uri
        """Fixed by ``mcpbind login`` to the address it listens on."""
        self._auths: dict[str, _LazyAuth] = {}
        self._storages: dict[str, _Storage] = {}

    @classmethod
    def for_host(cls, config: HostConfig) -> Authorizer:
        """The OAuth of a host built from ``config`` (SPEC §11.15)."""
        store = config.oauth_store
        if isinstance(store, str):
            store = open_store(store, config.oauth_credentials_path)
        return cls(
            store,
            config.oauth_handler,
            callback_port=config.oauth_callback_port,
            callback_url=config.oauth_callback_url,
        )

    def redirect_uri_for(self, oauth: OAuthConfig) -> str:
        """Where the authorization server sends the browser back: the login's listener,
        the configured ``callback_url``, or the loopback ``callback_port``."""
        if self.redirect_uri is not None:
            return self.redirect_uri
        url = oauth.callback_url or self.callback_url
        if url is not None:
            return url
        port = oauth.callback_port or self.callback_port
        return f"http://127.0.0.1:{port}/callback" if port else "http://127.0.0.1/callback"

    def storage(self, server: str, config: ServerConfig) -> _Storage:
        url = str(config.target)
        found = self._storages.get(server)
        if found is None or found.url != url:
            found = self._storages[server] = _Storage(self.store, server, url)
        return found

    def auth(self, server: str, config: ServerConfig) -> Any:
        """The ``httpx2.Auth`` for ``server``'s connections, or None when OAuth does not
        apply (not HTTP, turned off, an ``Authorization`` header configured)."""
        oauth = config.oauth
        if not config.over_http or oauth is None or has_authorization_header(config.headers):
            return None
        auth = self._auths.get(server)
        if auth is None or auth.url != str(config.target).rstrip("/"):
            storage = self.storage(server, config)
            auth = _LazyAuth(
                server,
                str(config.target),
                lambda: self._provider(server, str(config.target), oauth, storage),
                storage,
            )
            self._auths[server] = auth
        return auth

    async def status(self, server: str, config: ServerConfig) -> AuthStatus:
        """SPEC §11.15, as far as this host's connections have seen the server."""
        if not config.over_http:
            return "unsupported"
        if has_authorization_header(config.headers):
            return "bearer_token"
        if config.oauth is None:
            return "off"
        if config.oauth.grant != "authorization_code":
            return "oauth"
        record = await self.storage(server, config).current()
        if record.tokens is not None:
            return "oauth"
        auth = self._auths.get(server)
        return "not_logged_in" if auth is not None and auth.asked else "none"

    async def logout(self, server: str, config: ServerConfig) -> bool:
        """Forget ``server``'s credentials; False when none were stored."""
        storage = self.storage(server, config)
        storage.loaded, storage.record = True, None
        self._auths.pop(server, None)
        return await self.store.delete(storage.key)

    def _provider(self, server: str, url: str, oauth: OAuthConfig, storage: _Storage) -> Any:
        provider = _build_provider(self, server, url, oauth, storage)

        def metadata() -> Mapping[str, Any] | None:
            context = getattr(provider, "context", None)
            found = None if context is None else context.oauth_metadata
            return None if found is None else found.model_dump(mode="json", exclude_none=True)

        storage.metadata_of = metadata
        return provider


def _build_provider(
    authorizer: Authorizer, server: str, url: str, oauth: OAuthConfig, storage: _Storage
) -> Any:
    from mcp.client.auth import AuthorizationCodeResult  # noqa: PLC0415
    from mcp.shared.auth import OAuthClientInformationFull  # noqa: PLC0415
    from pydantic import AnyUrl  # noqa: PLC0415

    classes = _classes()
    scope = " ".join(oauth.scopes) if oauth.scopes else None
    if oauth.grant == "identity_assertion":
        assert oauth.client_id is not None
        assert oauth.client_secret is not None
        assert oauth.issuer is not None
        assert oauth.assertion is not None
        method = oauth.token_endpoint_auth_method
        return classes["identity"](  # its own flow: nothing of the others applies
            url,
            storage,
            oauth.client_id,
            oauth.client_secret,
            oauth.issuer,
            oauth.assertion,
            scope=scope,
            token_endpoint_auth_method=(
                method if method == "client_secret_post" else "client_secret_basic"
            ),
        )
    if oauth.grant == "client_credentials":
        assert oauth.client_id is not None
        if oauth.private_key is not None:
            from mcp.client.auth.extensions.client_credentials import (  # noqa: PLC0415
                SignedJWTParameters,
            )

            assertion = SignedJWTParameters(
                issuer=oauth.client_id,
                subject=oauth.client_id,
                signing_key=oauth.private_key,
                signing_algorithm=oauth.signing_algorithm,
            ).create_assertion_provider()
            provider = classes["jwt"](
                url, storage, oauth.client_id, assertion, scope=scope, issuer=oauth.issuer
            )
        else:
            assert oauth.client_secret is not None
            method = oauth.token_endpoint_auth_method or "client_secret_basic"
            provider = classes["secret"](
                url,
                storage,
                oauth.client_id,
                oauth.client_secret,
                method if method != "none" else "client_secret_basic",
                scope=scope,
                issuer=oauth.issuer,
            )
        return _with_resource(provider, oauth)
    redirect_uri = authorizer.redirect_uri_for(oauth)
    pending: list[str] = []

    async def redirect(authorization_url: str) -> None:
        if authorizer.handler is None:
            await storage.forget_tokens()
            raise LoginRequired(server)
        pending[:] = [authorization_url]

    async def callback() -> Any:
        assert authorizer.handler is not None
        assert pending
        request = AuthorizationRequest(server, pending.pop(), redirect_uri)
        answer = await authorizer.handler(request)
        return AuthorizationCodeResult(code=answer.code, state=answer.state, iss=answer.iss)

    metadata = classes["metadata"](
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
    provider = classes["code"](
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
    return _with_resource(provider, oauth)


def _with_resource(provider: Any, oauth: OAuthConfig) -> Any:
    """Codex's ``oauth_resource``: the token is asked for that resource (RFC 8707)."""
    if oauth.resource is not None:
        provider.context.resource_override = oauth.resource
    return provider


_CLASSES: dict[str, Any] = {}


def _classes() -> dict[str, Any]:
    """The SDK's providers with what mcpbind adds, made on first use (the SDK's client
    auth is imported only when a server needs it)."""
    if _CLASSES:
        return _CLASSES
    from mcp.client.auth import OAuthClientProvider  # noqa: PLC0415
    from mcp.client.auth.extensions.client_credentials import (  # noqa: PLC0415
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
    )
    from mcp.client.auth.extensions.identity_assertion import (  # noqa: PLC0415
        IdentityAssertionOAuthProvider,
    )
    from mcp.client.auth.oauth2 import OAuthContext  # noqa: PLC0415
    from mcp.shared.auth import OAuthClientMetadata, OAuthMetadata  # noqa: PLC0415
    from pydantic import PrivateAttr  # noqa: PLC0415

    class _Restored(RestoreAfterInitialize):
        """Puts back what the SDK does not keep across restarts: the token's expiry and
        the authorization server's metadata (so a stored token is refreshed, at the
        right endpoint, before it is sent); a pre-registered client."""

        context: Any
        preset: Any = None

        def restored(self) -> None:
            storage = self.context.storage
            if self.preset is not None and self.context.client_info is None:
                self.context.client_info = self.preset  # from the config: not stored
            if isinstance(storage, _Storage) and storage.record is not None:
                record = storage.record
                if self.context.current_tokens is not None:
                    self.context.token_expiry_time = record.expires_at
                if self.context.oauth_metadata is None and record.metadata is not None:
                    self.context.oauth_metadata = OAuthMetadata.model_validate(record.metadata)

    class _Context(OAuthContext):
        resource_override: str | None = None

        def get_resource_url(self) -> str:
            if self.resource_override is not None:
                return self.resource_override
            return str(super().get_resource_url())

    class _Metadata(OAuthClientMetadata):
        """Configured scopes stay requested whatever the server's challenge adds."""

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

    def contextual(base: type) -> type:
        class Provider(_Restored, base):  # type: ignore[misc]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                fields = {name: getattr(self.context, name) for name in _context_fields()}
                self.context = _Context(**fields)

        Provider.__name__ = f"mcpbind{base.__name__}"
        return Provider

    def _context_fields() -> list[str]:
        import dataclasses  # noqa: PLC0415

        return [f.name for f in dataclasses.fields(OAuthContext) if f.init]

    _CLASSES.update(
        code=contextual(OAuthClientProvider),
        secret=contextual(ClientCredentialsOAuthProvider),
        jwt=contextual(PrivateKeyJWTOAuthProvider),
        identity=IdentityAssertionOAuthProvider,
        metadata=_Metadata,
    )
    return _CLASSES


class _DropOwnErrors(logging.Filter):
    """The SDK logs every failed flow with its traceback; ours say what to do already."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, AuthorizationError)


logging.getLogger("mcp.client.auth.oauth2").addFilter(_DropOwnErrors())
