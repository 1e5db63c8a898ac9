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
* a step-up (a 403 ``insufficient_scope`` to a request that carried a token) in a host
  with no one to ask and an authorization-code grant is not the SDK's to answer (it
  would forget the tokens and ask for a person): the 403 goes back to the request as it
  came, and the request fails with :class:`ScopeRequired`, naming the scope and the
  ``mcpbind login SERVER --scope`` that grants it (:meth:`LazyAuth.wanted`);
* a server that keeps refusing is not authorized forever: after
  :data:`MAX_AUTHORIZATIONS` refusals with no answer in between the connection fails with
  :class:`AuthorizationFailed`.

Tokens, client secrets and codes never leave the store and the SDK's requests: the
values here are shown by name only, and the errors name the server and what to do.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, Literal

import httpx2  # the SDK's HTTP client, loaded with mcp already

from mcpbind.model import texts

from ..config.credentials import MemoryTokenStore, TokenStore, open_store
from ..config.hooks import AuthorizationHandler
from ..config.host import HostConfig
from ..config.oauth import OAuthConfig
from ..config.server import ServerConfig
from ..errors import AuthorizationError, AuthorizationFailed, CredentialsRequired, ScopeRequired
from .http import is_refusal
from .oauth_storage import Storage

__all__ = ["MAX_AUTHORIZATIONS", "AuthStatus", "Authorizer", "LazyAuth", "has_authorization_header"]

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


_CHALLENGE_SCOPE = re.compile(r'(?i)\bscope\s*=\s*"([^"]*)"')


def step_up_scope(response: Any) -> str | None:
    """The scope a 403 ``insufficient_scope`` challenge names (RFC 6750 §3), or None
    when ``response`` is no such refusal."""
    if response.status_code != 403:
        return None
    challenge = response.headers.get("www-authenticate", "")
    if "insufficient_scope" not in challenge:
        return None
    found = _CHALLENGE_SCOPE.search(challenge)
    return " ".join(found.group(1).split()) if found is not None else ""


def has_authorization_header(headers: Mapping[str, str]) -> bool:
    return any(name.lower() == "authorization" for name in headers)


class LazyAuth(httpx2.Auth):
    """Passes requests through until the server asks for authorization (or credentials
    are stored), then hands every request to the SDK's provider."""

    requires_request_body = True
    requires_response_body = True

    def __init__(
        self,
        server: str,
        url: str,
        make: Callable[[], Any],
        storage: Storage,
        *,
        configured: tuple[str, ...] = (),
        step_up: bool = True,
    ) -> None:
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
        self._configured = configured
        self._step_up = step_up
        """The SDK may answer a step-up here: someone can be asked, or no one is needed."""
        self._wanted: AuthorizationError | None = None

    def wanted(self) -> AuthorizationError | None:
        """The step-up the last refusal asked for that this host could not give (SPEC
        §11.15): :class:`ScopeRequired` when no one can be asked, the authorization's
        failure when it was tried and failed; or None."""
        return self._wanted

    async def _scope_required(self, response: Any) -> ScopeRequired | None:
        """A step-up this host cannot answer, said with the scopes to log in with: those
        configured, those granted, then the challenge's (SEP-2350: their union)."""
        if self._step_up or not self._is_step_up(response):
            return None  # someone can be asked; or not a step-up (no token yet: a login)
        scope = step_up_scope(response) or ""
        record = await self._storage.current()
        granted = str((record.tokens or {}).get("scope") or "").split()
        scopes: list[str] = []
        for word in (*self._configured, *granted, *scope.split()):
            if word not in scopes:
                scopes.append(word)
        return ScopeRequired(self.server, scope or "(not named)", tuple(scopes))

    def _is_mcp(self, response: Any) -> bool:
        return str(response.request.url).rstrip("/") == self.url

    def _refused(self, response: Any) -> bool:
        return is_refusal(response)

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
        stepping = False
        """The SDK's flow is answering a step-up of ``request``."""
        try:
            sent = await flow.__anext__()
            # httpx2's Request has no __eq__: ``==`` would be ``is`` (an equivalent mutant)
            unchanged = sent is request  # pragma: no mutate
            if first is not None and unchanged:  # its answer is in: no second send
                sent = await flow.asend(first)
            while True:
                response = yield sent
                self._wanted = await self._scope_required(response)
                if self._wanted is not None:
                    return  # the 403 is the request's answer, no authorization (docstring)
                self._count(response)
                stepping = stepping or self._is_step_up(response)
                try:
                    sent = await flow.asend(response)
                except StopAsyncIteration:
                    raise
                except Exception as error:
                    if not stepping:
                        raise
                    # SPEC §11.15: a step-up that fails fails its request alone. The request
                    # never ran (it was refused); sent once more as it was, its refusal is
                    # its answer, said as this failure (:meth:`wanted`).
                    failure = error if isinstance(error, AuthorizationError) else None
                    self._wanted = failure or self._failure(error)
                    again = yield request
                    if not self._refused(again):
                        self._wanted = None
                    return
                if sent is request:  # pragma: no mutate - ``==`` is ``is`` here (above)
                    stepping = False  # authorized: the request goes again with its new token
        except StopAsyncIteration:
            return
        except AuthorizationError:
            raise
        except Exception as error:  # the SDK's flow: said as ours, once
            raise self._failure(error) from error
        finally:
            await flow.aclose()

    def _is_step_up(self, response: Any) -> bool:
        """A 403 ``insufficient_scope`` of the server to a request that carried a token."""
        return (
            step_up_scope(response) is not None
            and self._is_mcp(response)
            and "authorization" in response.request.headers
        )

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
        self._auths: dict[str, LazyAuth] = {}
        self._storages: dict[str, Storage] = {}

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

    def storage(self, server: str, config: ServerConfig) -> Storage:
        url = str(config.target)
        found = self._storages.get(server)
        if found is None or found.url != url:
            found = self._storages[server] = Storage(self.store, server, url)
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
            auth = LazyAuth(
                server,
                str(config.target),
                lambda: self._provider(server, str(config.target), oauth, storage),
                storage,
                configured=oauth.scopes or (),
                step_up=self.handler is not None or oauth.grant != "authorization_code",
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

    async def reload(self, server: str, config: ServerConfig) -> bool:
        """SPEC §11.18: read ``server``'s record from the store again (a login in another
        process, ``mcpbind login``, wrote it) and, when it holds tokens, make the server's
        next connection start from it: a new auth, whose provider loads the record. The
        current session, if any, keeps its auth. True when tokens are stored; False too
        when OAuth does not apply to the server."""
        if self.auth(server, config) is None:
            return False
        storage = self.storage(server, config)
        storage.loaded, storage.record = False, None
        record = await storage.current()
        if record.tokens is None:
            return False
        self._auths.pop(server, None)
        return True

    async def logout(self, server: str, config: ServerConfig) -> bool:
        """Forget ``server``'s credentials; False when none were stored."""
        storage = self.storage(server, config)
        storage.loaded, storage.record = True, None
        self._auths.pop(server, None)
        return await self.store.delete(storage.key)

    def _provider(self, server: str, url: str, oauth: OAuthConfig, storage: Storage) -> Any:
        # The SDK's client auth is imported only when a server needs it.
        from .oauth_providers import build_provider  # noqa: PLC0415

        redirect_uri = self.redirect_uri_for(oauth)
        provider = build_provider(
            server, url, oauth, storage, handler=self.handler, redirect_uri=redirect_uri
        )

        def metadata() -> Mapping[str, Any] | None:
            context = getattr(provider, "context", None)
            found = None if context is None else context.oauth_metadata
            if found is None:
                return None
            dumped: dict[str, Any] = found.model_dump(mode="json", exclude_none=True)
            dpop = getattr(provider, "dpop", None)
            if dpop is not None:  # what the SDK's model drops: DPoP's algorithms
                dumped.update(dpop.metadata_extra(str(found.issuer)))
            return dumped

        storage.metadata_of = metadata
        return provider
