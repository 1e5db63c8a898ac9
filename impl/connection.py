"""The seam between the runtime and one MCP server session (SPEC §11).

The runtime talks to a server only through :class:`Connection`, opened by a
:class:`Connector`. :class:`McpConnector` is the production implementation over the
official SDK's ``mcp.Client`` (stdio subprocesses, streamable HTTP, in-process servers);
the property machines substitute a scripted connector behind the same interface, so the
code under test is the production runtime.

Facts of ``mcp`` 2.3 this module handles (``../shared/SDK-NOTES.md``):

* listings are read with the raw ``tools/list`` request and parsed here, because
  ``Client.list_tools`` caches and silently drops tools with invalid header metadata;
* calls are sent with the raw ``tools/call`` request: ``Client.call_tool`` may send an
  extra ``tools/list`` and raise on output-schema mismatches;
* cancelling the trio scope around a request sends exactly one
  ``notifications/cancelled`` over JSON-RPC and cancels the handler directly in-process;
* a dead session raises ``MCPError(CONNECTION_CLOSED)`` on every request;
* ``list_changed`` arrives on a ``subscriptions/listen`` stream on 2026-07-28
  connections and as ``notifications/tools/list_changed`` on handshake-era ones.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

import mcp_types as types
import trio
from mcp import Client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter, ValidationError

from .config import ServerConfig

__all__ = [
    "Connection",
    "ConnectionLost",
    "Connector",
    "McpConnection",
    "McpConnector",
    "RequestFailed",
]

logger = logging.getLogger("mcpbind.connection")
_RAW: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


class ConnectionLost(Exception):
    """The session with the server is gone (process died, stream closed, HTTP session lost)."""


class RequestFailed(Exception):
    """One request failed (an error response, a malformed reply); the session lives on."""


class Connection(Protocol):
    """One live session with one server."""

    async def list_tools(self, cursor: str | None) -> Any:
        """The raw JSON of one ``tools/list`` page. Raises ConnectionLost/RequestFailed."""

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        on_sent: Callable[[], None],
        on_late: Callable[[], None],
    ) -> Any:
        """The raw JSON of a ``tools/call`` result for the raw tool ``name``.

        ``on_sent`` is called when the request leaves for the server. Cancelling the
        caller's scope after that cancels the request at the server (INV-7); if the
        server answers anyway, a connection that sees it calls ``on_late`` (INV-4).
        Raises ConnectionLost/RequestFailed."""

    async def wait_lost(self) -> None:
        """Return once the session is known to be gone (may never return)."""


class Connector(Protocol):
    def connect(
        self, server: str, config: ServerConfig, on_list_changed: Callable[[], None]
    ) -> AbstractAsyncContextManager[Connection]:
        """Open a session; ``on_list_changed`` is called (synchronously) on every
        ``list_changed`` the server announces while it is open."""


def _map_error(error: MCPError) -> Exception:
    if error.code == types.CONNECTION_CLOSED:
        return ConnectionLost(error.message or "connection closed")
    return RequestFailed(f"{error.message} (code {error.code})")


class McpConnection:
    """A :class:`Connection` over an entered ``mcp.Client``."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self._lost = trio.Event()

    def mark_lost(self) -> None:
        self._lost.set()

    async def wait_lost(self) -> None:
        await self._lost.wait()

    async def _request(self, request: Any) -> Any:
        if self._lost.is_set():
            raise ConnectionLost("connection closed")
        try:
            return await self._client.session.send_request(request, _RAW)
        except MCPError as error:
            mapped = _map_error(error)
            if isinstance(mapped, ConnectionLost):
                self._lost.set()
            raise mapped from error
        except ValidationError as error:
            raise RequestFailed(
                f"malformed reply: {error.error_count()} validation error(s)"
            ) from error
        except (trio.BrokenResourceError, trio.ClosedResourceError) as error:
            self._lost.set()
            raise ConnectionLost("connection closed") from error

    async def list_tools(self, cursor: str | None) -> Any:
        params = types.PaginatedRequestParams(cursor=cursor)
        return await self._request(types.ListToolsRequest(params=params))

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        on_sent: Callable[[], None],
        on_late: Callable[[], None],
    ) -> Any:
        # The SDK drops an answer to a cancelled request itself: ``on_late`` never runs.
        params = types.CallToolRequestParams(name=name, arguments=dict(arguments))
        request = types.CallToolRequest(params=params)
        if self._lost.is_set():
            raise ConnectionLost("connection closed")
        on_sent()  # the SDK writes the request before its first suspension point
        return await self._request(request)

    async def listen(self, on_list_changed: Callable[[], None]) -> None:
        """Deliver ``list_changed`` from a ``subscriptions/listen`` stream (2026-07-28)."""
        try:
            async with self._client.listen(tools_list_changed=True) as subscription:
                async for _ in subscription:
                    on_list_changed()
        except ListenNotSupportedError:
            return  # handshake era: notifications come through the message handler
        except MCPError as error:
            if error.code == types.CONNECTION_CLOSED:
                self._lost.set()
            # otherwise the server does not serve subscriptions/listen: no notifications
        except (SubscriptionLost, trio.BrokenResourceError, trio.ClosedResourceError):
            self._lost.set()  # an abrupt drop: the session is gone


class McpConnector:
    """Opens sessions with ``mcp.Client``; the production :class:`Connector`.

    ``mode`` is the SDK's protocol negotiation: ``"auto"`` (default: discover, fall back
    to the initialize handshake) or ``"legacy"`` (force the handshake era)."""

    def __init__(self, mode: str = "auto") -> None:
        self.mode = mode

    def connect(
        self, server: str, config: ServerConfig, on_list_changed: Callable[[], None]
    ) -> AbstractAsyncContextManager[Connection]:
        return self._connect(server, config, on_list_changed)

    @asynccontextmanager
    async def _connect(
        self, server: str, config: ServerConfig, on_list_changed: Callable[[], None]
    ) -> AsyncIterator[Connection]:
        holder: list[McpConnection] = []

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                on_list_changed()
            elif isinstance(message, Exception) and holder:
                logger.debug("server %r transport fault: %r", server, message)

        target = config.target
        if isinstance(target, str) and config.headers:
            target = _http_transport(target, config.headers)
        client = Client(target, cache=None, message_handler=on_message, mode=self.mode)
        async with client:
            connection = McpConnection(client)
            holder.append(connection)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(connection.listen, on_list_changed)
                try:
                    yield connection
                finally:
                    nursery.cancel_scope.cancel()


@asynccontextmanager
async def _http_transport(url: str, headers: Mapping[str, str]) -> AsyncIterator[Any]:
    """Streamable HTTP with extra headers (``http_headers``, the bearer token)."""
    import httpx2  # noqa: PLC0415 - the SDK's HTTP client, only for URL servers
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415

    timeout = httpx2.Timeout(30.0, read=300.0)  # the SDK's own defaults for MCP
    async with (
        httpx2.AsyncClient(headers=dict(headers), timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def lifted(scope: trio.CancelScope) -> None:
    """Lift a startup deadline once connected (SDK-NOTES: the deadline must enclose the
    client's whole lifetime, so it is set on an outer scope and lifted here)."""
    scope.deadline = math.inf
