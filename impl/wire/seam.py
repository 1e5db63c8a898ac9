"""The seam between the runtime and one MCP server session (SPEC §11).

The runtime talks to a server only through :class:`Connection`, opened by a
:class:`Connector`. :class:`~mcpbind.impl.wire.client.McpConnector` is the production
implementation over the official SDK; the property machines substitute a scripted
connector behind the same interface, so the code under test is the production runtime.
This module is the interface alone: it imports nothing of the SDK.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, Protocol

import attrs

from ..config.server import ServerConfig
from ..errors import AuthorizationError, RemoteError
from ..values import ElicitationAnswer, ElicitationRequest

__all__ = [
    "HEADER_MISMATCH",
    "URL_ELICITATION_REQUIRED",
    "AuthorizationRefused",
    "Connection",
    "ConnectionLost",
    "Connector",
    "Elicit",
    "OnStderr",
    "OnStream",
    "OnWireProgress",
    "RequestFailed",
    "ServerError",
    "SessionExpired",
    "StreamEvent",
    "TaskHandle",
    "TaskPoll",
    "TaskState",
    "UrlAnswer",
    "UrlElicitationRequired",
    "UrlStep",
]

Elicit = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]
"""The host's answer to a server's elicitation (a form, or a URL to open)."""


class OnWireProgress(Protocol):
    """Receives each progress notification of one request: ``(progress, total, message)``."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


OnStderr = Callable[[str], None]
"""Receives each line a stdio server writes to its stderr."""

StreamEvent = Literal["ended", "relistened", "unheard", "unreachable", "expired", "reachable"]
"""What became of a session's ``list_changed`` stream (2026-07-28 ``subscriptions/listen``,
SPEC §5.1): ``ended`` — the server ended it gracefully, the connection listens again;
``relistened`` — a new stream was acknowledged after an end (what it missed must be
read again); ``unheard`` — the server will deliver no ``list_changed`` on this session
(its acknowledged filter leaves it out, or it does not serve ``subscriptions/listen``).
A handshake-era HTTP session's notification stream (its ``GET``) says what it found
while idle (SPEC §11.18): ``unreachable`` — it could not reconnect, nothing listens at
the server's address; ``expired`` — the server refused its session id (§8.13);
``reachable`` — an answer came again after one of those."""
OnStream = Callable[[StreamEvent], None]
"""Receives each :data:`StreamEvent` of a session, synchronously."""


class ConnectionLost(RemoteError):
    """The session with the server is gone (process died, stream closed, HTTP session lost)."""


class RequestFailed(RemoteError):
    """One request failed (an error response, a malformed reply); the session lives on."""


class AuthorizationRefused(RequestFailed):
    """The server refused one request for want of an authorization the host could not
    give there (a step-up with no one to ask, SPEC §11.15); ``error`` says what to do
    (:class:`~..errors.ScopeRequired`). The session lives on."""

    def __init__(self, error: AuthorizationError) -> None:
        super().__init__(str(error))
        self.error = error


HEADER_MISMATCH = -32020
"""The JSON-RPC code a 2026-07-28 server answers a ``tools/call`` with when its
``Mcp-Param-*`` headers do not match the arguments: it refused the call unrun (SPEC §8.9)."""


class SessionExpired(RequestFailed):
    """The server refused the request unrun: it no longer knows the session (HTTP 404 for
    a request with a session id, SPEC §8.13). Only ``call_tool`` raises it; the session is
    to be replaced, and the call may be sent once more on the new one (INV-14)."""


class ServerError(RequestFailed):
    """The server answered a request with a JSON-RPC error: its own code and message.

    Distinct from a failure of the transport (an HTTP status the SDK turned into an
    error, a malformed reply), which is a plain :class:`RequestFailed`."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message


URL_ELICITATION_REQUIRED = -32042
"""The JSON-RPC code of a server that cannot process a request until the user has
completed one or more URL-mode elicitations (MCP 2025-11-25 client/elicitation)."""

UrlAnswer = Literal["accept", "decline", "cancel"]


@attrs.frozen
class UrlStep:
    """One page the server needs the user to open before it can run a request."""

    url: str
    message: str
    elicitation_id: str | None = None
    answer: UrlAnswer | None = None
    """The user's answer through the host's handler; None: nobody was asked (the host
    takes no URL requests, or an earlier step was not accepted)."""


class UrlElicitationRequired(ServerError):
    """The server answered ``-32042`` with the URL-mode elicitations the user must
    complete before the request can be retried (SPEC §11.10); the request did not run."""

    def __init__(self, message: str, steps: tuple[UrlStep, ...]) -> None:
        super().__init__(URL_ELICITATION_REQUIRED, message)
        self.steps = steps


TaskState = Literal["working", "input_required", "completed", "failed", "cancelled"]
"""The statuses of a task (SPEC §8.12); the last three are terminal."""


@attrs.frozen
class TaskHandle:
    """A ``tools/call`` the server answered with a task."""

    task_id: str
    poll_interval: float | None = None
    """Seconds the server asks the host to wait between polls (None: it names none)."""
    status: TaskState = "working"


@attrs.frozen
class TaskPoll:
    """What one poll of a task found. Input the task asked for has been answered
    through the elicitation policy before the poll returns (its status then says so)."""

    status: TaskState
    poll_interval: float | None = None
    result: Any = None
    """``completed``: the raw ``CallToolResult`` of the call."""
    message: str | None = None
    """``failed``/``cancelled``: the server's reason, when it gave one."""


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
        meta: Mapping[str, Any] | None = None,
        on_progress: OnWireProgress | None = None,
        task_support: str | None = None,
    ) -> Any:
        """The raw JSON of a ``tools/call`` result for the raw tool ``name``, or the
        :class:`TaskHandle` of a call the server runs as a task.

        ``on_sent`` is called when the request leaves for the server. Cancelling the
        caller's scope after that cancels the request at the server (INV-7); if the
        server answers anyway, a connection that sees it calls ``on_late`` (INV-4).
        ``meta`` is sent as the request's ``_meta`` (SPEC §11.10). With ``on_progress``
        the request carries a progress token, and each progress notification for it is
        awaited as ``on_progress(progress, total, message)`` (SPEC §8.10).
        ``task_support`` is the tool's ``execution.taskSupport`` as listed: ``required``
        asks a 2025-11-25 server that runs tasks for one (SPEC §8.12).
        Raises ConnectionLost/RequestFailed; :class:`UrlElicitationRequired` when the
        server answered ``-32042``, its steps answered through the host's elicitation
        handler when it takes URLs (SPEC §11.10)."""

    async def poll_task(self, task: TaskHandle) -> TaskPoll:
        """One poll of ``task`` (SPEC §8.12): its status now, with the call's raw result
        once ``completed``. Input the task asks for is answered through the elicitation
        policy before this returns. Raises ConnectionLost/RequestFailed."""

    async def cancel_task(self, task: TaskHandle, *, on_late: Callable[[], None]) -> None:
        """Send ``tasks/cancel`` for ``task`` (INV-7); ``on_late`` if the server says the
        task had ended already (INV-4). Raises ConnectionLost/RequestFailed."""

    def runs_tasks(self) -> bool:
        """The server runs ``tools/call`` as tasks: on 2025-11-25 it declares
        ``tasks.requests.tools.call``, on 2026-07-28 the tasks extension (SPEC §5.4)."""

    def declares_resources(self) -> bool:
        """The server declares the ``resources`` capability (SPEC §11.20)."""

    def resources_version(self) -> object:
        """A new object at this session's start and at each change of its resources it
        hears (compared by identity, so no two sessions share one): a refresh reads the
        resource lists again only when this is not the one it last read them under (SPEC
        §11.20)."""

    async def list_resources(self, cursor: str | None, *, templates: bool = False) -> Any:
        """The raw JSON of one ``resources/list`` page (``resources/templates/list`` with
        ``templates``). Raises ConnectionLost/RequestFailed."""

    async def read_resource(
        self, uri: str, *, on_sent: Callable[[], None], on_late: Callable[[], None]
    ) -> Any:
        """The raw JSON of a ``resources/read`` result for ``uri`` (SPEC §11.20); the
        callbacks as :meth:`call_tool`'s: cancelling the caller's scope after ``on_sent``
        cancels the request at the server (INV-7). Raises ConnectionLost/RequestFailed."""

    async def wait_lost(self) -> None:
        """Return once the session is known to be gone (may never return)."""


class Connector(Protocol):
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
        """Open a session; ``on_list_changed`` is called (synchronously) on every
        ``list_changed`` the server announces while it is open; ``on_elicit`` answers
        the server's elicitation requests (None: decline them all); ``on_stderr`` gets
        each line a stdio server writes to its stderr (None: they are dropped);
        ``url_elicitation``: the client offers URL-mode elicitation besides forms;
        ``on_stream`` is told what becomes of the ``list_changed`` stream (ended,
        listened to again, unheard).

        Leaving the context normally closes the session as the SDK does, after what it
        was handed (SPEC §11.14); leaving it cancelled tears it down."""
