"""``mcpbind login SERVER`` and ``mcpbind logout SERVER`` (SPEC §11.15).

``login`` listens on a loopback port, prints the authorization URL (and opens a browser
when one can be opened), receives the redirect there, and stores the tokens where the
host will find them (``mcp_oauth_credentials_store``). ``logout`` forgets them. The texts
follow Codex's ``codex mcp login``/``logout``.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import webbrowser
from typing import Any
from urllib.parse import urlsplit

import anyio
import attrs
import trio

from mcpbind.impl import (
    AuthorizationError,
    AuthorizationFailed,
    AuthorizationRequest,
    AuthorizationResponse,
    ConfigError,
    CredentialsError,
    Host,
    HostConfig,
    McpConnector,
    ServerStartupError,
    response_from_redirect,
)
from mcpbind.impl.wire.oauth import Authorizer
from mcpbind.model import texts

from .hosting import load_config
from .parsers import LOGIN_TIMEOUT

__all__ = ["LOGIN_TIMEOUT", "Callback", "login_main", "logout_main"]

USAGE = 2
DONE_PAGE = b"Authentication complete. You may close this window.\n"


@attrs.define(eq=False)
class Callback:
    """A one-request HTTP listener on 127.0.0.1: the redirect's target."""

    listener: Any
    port: int
    target: str | None = None
    """The request target the browser was sent to (``/callback?code=...``)."""

    @classmethod
    async def bind(cls, port: int) -> Callback:
        listeners = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
        bound = listeners.extra(anyio.abc.SocketAttribute.local_port)
        return cls(listeners, bound)

    async def receive(self) -> str:
        """The first request whose path is the callback's; answers it and returns its
        target. Anything else (a favicon) gets 404."""
        while True:
            async with await self._accept() as stream:
                head = await _read_head(stream)
                method, _, rest = head.partition(" ")
                target = rest.split(" ", 1)[0]
                if method == "GET" and urlsplit(target).path.rstrip("/").endswith("/callback"):
                    await stream.send(_page(200, DONE_PAGE))
                    return target
                await stream.send(_page(404, b"not here\n"))

    async def _accept(self) -> Any:
        accepted: list[Any] = []

        async def one(listener: Any) -> None:
            accepted.append(await listener.accept())
            group.cancel_scope.cancel()

        async with anyio.create_task_group() as group:
            for listener in self.listener.listeners:
                group.start_soon(one, listener)
        return accepted[0]

    async def aclose(self) -> None:
        await self.listener.aclose()


async def _read_head(stream: Any) -> str:
    data = b""
    while b"\r\n" not in data and len(data) < 65536:
        chunk = await stream.receive(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode("latin-1")


def _page(status: int, body: bytes) -> bytes:
    reason = {200: "OK", 404: "Not Found"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def _can_open_browser(disabled: bool) -> bool:
    if disabled or not sys.stdout.isatty():
        return False
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) or (
        sys.platform in ("darwin", "win32")
    )


async def _login(config: HostConfig, server: str, *, browser: bool, timeout: float) -> None:
    settings = config.servers[server]
    assert settings.oauth is not None
    port = settings.oauth.callback_port or config.oauth_callback_port or 0
    callback = await Callback.bind(port)
    redirect_uri = (
        settings.oauth.callback_url
        or config.oauth_callback_url
        or f"http://127.0.0.1:{callback.port}/callback"
    )

    async def handler(request: AuthorizationRequest) -> AuthorizationResponse:
        print(f"Authorize `{server}` by opening this URL in your browser:\n{request.url}\n")
        sys.stdout.flush()
        if browser and not webbrowser.open(request.url):
            print("(Browser launch failed; please copy the URL above manually.)", file=sys.stderr)
        with anyio.move_on_after(timeout) as waited:
            target = await callback.receive()
        if waited.cancelled_caught:
            why = f"no answer from the browser within {texts.seconds(timeout)}"
            raise AuthorizationFailed(server, why)
        return response_from_redirect(server, target)

    # A person may take longer than a server takes to start: the start waits for them.
    patience = max(settings.startup_timeout_sec, timeout + 30.0)
    only = attrs.evolve(settings, required=True, enabled=True, startup_timeout_sec=patience)
    login_config = attrs.evolve(
        config,
        servers={server: only},
        oauth_handler=handler,
        builtins=(),
        contributors=(),
    )
    authorizer: Authorizer = Authorizer.for_host(login_config)
    authorizer.redirect_uri = redirect_uri
    await authorizer.logout(server, only)  # a fresh registration for this redirect
    try:
        async with Host.open(login_config, connector=McpConnector(authorizer=authorizer)):
            pass
    finally:
        await callback.aclose()
    status = await authorizer.status(server, only)
    if status != "oauth":
        raise AuthorizationError(
            server, f"server {server!r} did not ask for authorization: nothing to log in to"
        )


async def _logout(config: HostConfig, server: str) -> bool:
    authorizer = Authorizer.for_host(config)
    return await authorizer.logout(server, config.servers[server])


def _server_or_exit(args: argparse.Namespace, verb: str) -> HostConfig | None:
    try:
        config, _ = load_config(args.config)
    except ConfigError as error:
        print(f"mcpbind: {error}", file=sys.stderr)
        return None
    settings = config.servers.get(args.server)
    if settings is None:
        print(f"mcpbind: No MCP server named '{args.server}' found.", file=sys.stderr)
        return None
    if not settings.over_http:
        print(
            f"mcpbind: OAuth {verb} is only supported for streamable HTTP servers.",
            file=sys.stderr,
        )
        return None
    if settings.oauth is None:
        print(
            f"mcpbind: server '{args.server}' has OAuth turned off "
            f"([mcpbind.oauth.{args.server}] enabled = false).",
            file=sys.stderr,
        )
        return None
    return config


def _with_scopes(config: HostConfig, server: str, scope: str | None) -> HostConfig:
    """``--scope``: asked for after the configured scopes (SPEC §11.15, step-up)."""
    settings = config.servers[server]
    if not scope or settings.oauth is None:
        return config
    scopes = list(settings.oauth.scopes or ())
    scopes += [word for word in scope.split() if word not in scopes]
    oauth = attrs.evolve(settings.oauth, scopes=scopes)
    servers = {**config.servers, server: attrs.evolve(settings, oauth=oauth)}
    return attrs.evolve(config, servers=servers)


def login_main(args: argparse.Namespace) -> int:
    config = _server_or_exit(args, "login")
    if config is None:
        return USAGE
    config = _with_scopes(config, args.server, args.scope)
    browser = _can_open_browser(args.no_browser)
    login = functools.partial(_login, browser=browser, timeout=args.timeout)
    try:
        trio.run(login, config, args.server)
    except ServerStartupError as error:
        # login starts the one server as if required: its "mark it required = false"
        # advice is not for the user's config.
        print(f"mcpbind login: could not reach {args.server!r}: {error.why}", file=sys.stderr)
        return 1
    except (AuthorizationError, CredentialsError) as error:
        print(f"mcpbind: {error}", file=sys.stderr)
        return 1
    print(f"Successfully logged in to MCP server '{args.server}'.")
    return 0


def logout_main(args: argparse.Namespace) -> int:
    config = _server_or_exit(args, "logout")
    if config is None:
        return USAGE
    try:
        removed = trio.run(_logout, config, args.server)
    except CredentialsError as error:
        print(f"mcpbind: {error}", file=sys.stderr)
        return 1
    if removed:
        print(f"Removed OAuth credentials for '{args.server}'.")
    else:
        print(f"No OAuth credentials stored for '{args.server}'.")
    return 0
