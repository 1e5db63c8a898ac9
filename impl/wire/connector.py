"""The production :class:`~.seam.Connector`: sessions opened with the SDK's ``mcp.Client``
over stdio subprocesses, streamable HTTP or in-process servers (SPEC §11.2).

Each session gets: mcpbind's ``clientInfo``; no response cache (a refresh must read the
server, SDK-NOTES); the elicitation modes the host honours (:class:`.sdk.ElicitationModesClient`);
the tasks extension declared (:mod:`.tasks`); ``list_changed`` delivered from both eras; a
stdio server's stderr read line by line (:mod:`.stderr`); an HTTP server's failed statuses
named (:mod:`.http`) and its OAuth (:mod:`.oauth`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
    nullcontext,
)
from importlib import metadata
from typing import Any

import anyio
import mcp_types as types
from mcp import StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.client.stdio import stdio_client

from ..config.server import ServerConfig, StdioTarget
from ..errors import ConfigError, ServerExited, describe
from .connection import McpConnection, answer_elicitation
from .http import HttpStatus, failed_at_connect, http_transport
from .oauth import Authorizer
from .sdk import ElicitationModesClient, exit_status, spawned_processes
from .seam import Connection, Connector, Elicit, OnStderr, OnStream
from .stderr import StderrPipe, stdout_lines_to
from .tasks import TasksExtension

__all__ = ["CLIENT_INFO", "McpConnector"]

logger = logging.getLogger("mcpbind.connection")


_LIST_CHANGED = types.ToolListChangedNotification | types.ResourceListChangedNotification


def _heard_list_changed(
    message: Any, holder: list[McpConnection], on_list_changed: Callable[[], None]
) -> None:
    """SPEC §11.20: a change of the resources is a change of the catalog, and the next
    refresh reads them again (before the session is made, its first refresh reads them)."""
    if isinstance(message, types.ResourceListChangedNotification) and holder:
        holder[0].heard_resources_change()
    on_list_changed()


class McpConnector(Connector):
    """Opens sessions with ``mcp.Client``; the production :class:`Connector`.

    ``mode`` is the SDK's protocol negotiation: ``"auto"`` (default: discover, fall back
    to the initialize handshake) or ``"legacy"`` (force the handshake era)."""

    def __init__(self, mode: str = "auto", *, authorizer: Authorizer | None = None) -> None:
        self.mode = mode
        self.authorizer = authorizer
        """The host's OAuth (SPEC §11.15); None: no server is authorized."""

    def connect(
        self,
        server: str,
        config: ServerConfig,
        on_list_changed: Callable[[], None],
        *,
        on_elicit: Elicit | None = None,
        on_stderr: OnStderr | None = None,
        url_elicitation: bool,
        on_stream: OnStream | None = None,
    ) -> AbstractAsyncContextManager[Connection]:
        return self._connect(
            server,
            config,
            on_list_changed,
            on_elicit,
            on_stderr,
            url_elicitation=url_elicitation,
            on_stream=on_stream or (lambda event: None),
        )

    @asynccontextmanager
    async def _connect(
        self,
        server: str,
        config: ServerConfig,
        on_list_changed: Callable[[], None],
        on_elicit: Elicit | None,
        on_stderr: OnStderr | None,
        *,
        url_elicitation: bool,
        on_stream: OnStream,
    ) -> AsyncIterator[Connection]:
        if config.unusable is not None:  # SPEC §11.4: this server alone fails to start
            raise ConfigError(config.unusable)
        holder: list[McpConnection] = []

        async def on_elicitation(
            context: ClientRequestContext, params: types.ElicitRequestParams
        ) -> types.ElicitResult:
            return await answer_elicitation(server, on_elicit, params)

        async def on_message(message: Any) -> None:
            # SPEC §11.20: a change of the resources is a change of the catalog
            if isinstance(message, _LIST_CHANGED):
                _heard_list_changed(message, holder, on_list_changed)
            elif isinstance(message, Exception) and holder:
                logger.debug("server %r transport fault: %r", server, message)

        target = config.target
        stderr: StderrPipe | None = None
        stdout_lines: AbstractContextManager[None] = nullcontext()
        http: HttpStatus | None = None
        if isinstance(target, str):
            auth = None if self.authorizer is None else self.authorizer.auth(server, config)
            http = HttpStatus(
                url=target.rstrip("/"),
                secrets=tuple(config.headers.values()),
                on_idle=on_stream,
                step_up=None if auth is None else auth.wanted,
            )
            target = http_transport(target, config, http, auth)
        elif isinstance(target, StdioTarget | StdioServerParameters):
            # The server's stderr goes to a pipe of ours, line by line to ``on_stderr``,
            # instead of into the user's terminal (SPEC §11.14).
            stderr = StderrPipe(on_stderr or (lambda line: None))
            target = stdio_client(_stdio_parameters(target), errlog=stderr.writer)
            stdout_lines = stdout_lines_to(on_stderr or (lambda line: None))
        client = ElicitationModesClient(
            target,
            url=url_elicitation,
            cache=None,
            message_handler=on_message,
            mode=self.mode,
            elicitation_callback=on_elicitation,
            client_info=CLIENT_INFO,
            extensions=[TasksExtension()],
        )
        spawned: AbstractContextManager[list[Any]] = (
            spawned_processes() if stderr is not None else nullcontext([])
        )
        try:
            with stdout_lines, spawned as processes, _exited_at_start(holder, processes):
                async with anyio.create_task_group() as pipes:
                    if stderr is not None:
                        pipes.start_soon(stderr.read)
                    try:
                        async with failed_at_connect(server, http), client:
                            if stderr is not None:
                                stderr.spawned()
                            connection = McpConnection(
                                client, on_elicit, http, server, url_elicitation=url_elicitation
                            )
                            holder.append(connection)
                            async with anyio.create_task_group() as group:
                                group.start_soon(connection.listen, on_list_changed, on_stream)
                                try:
                                    yield connection
                                finally:
                                    group.cancel_scope.cancel()
                    finally:
                        pipes.cancel_scope.cancel()
        finally:
            if stderr is not None:
                stderr.finish()  # the last lines, before a startup error is described


@contextmanager
def _exited_at_start(connected: list[Any], processes: list[Any]) -> Iterator[None]:
    """A stdio server that exited before its session opened fails with its exit status,
    not just the SDK's "Connection closed" (SPEC §11.14, issue 28)."""
    try:
        yield
    except Exception as error:
        status = None if connected else exit_status(processes)
        if status is None:
            raise
        raise ServerExited(describe(error), status) from error


def _stdio_parameters(target: StdioTarget | StdioServerParameters) -> StdioServerParameters:
    """The SDK's parameters for a stdio target (a ``config.toml`` server's, or given)."""
    if isinstance(target, StdioServerParameters):
        return target
    env = None if target.env is None else dict(target.env)
    return StdioServerParameters(
        command=target.command, args=list(target.args), env=env, cwd=target.cwd
    )


def _version() -> str:
    try:
        return metadata.version("mcpbind")
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return "0+unknown"


CLIENT_INFO = types.Implementation(name="mcpbind", version=_version())
"""How mcpbind names itself to servers (``clientInfo``), not as the SDK's default."""
