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
* cancelling the cancel scope around a request sends exactly one
  ``notifications/cancelled`` over JSON-RPC and cancels the handler directly in-process;
* a dead session raises ``MCPError(CONNECTION_CLOSED)`` on every request;
* ``list_changed`` arrives on a ``subscriptions/listen`` stream on 2026-07-28
  connections and as ``notifications/tools/list_changed`` on handshake-era ones;
* a server asks the user for input (elicitation) with an ``elicitation/create`` request
  mid-call on handshake-era connections (answered by the client's
  ``elicitation_callback``), and on 2026-07-28 connections by answering ``tools/call``
  with an ``InputRequiredResult``, which the raw request returns as is: this module
  answers its requests and resends the call (SPEC §11.10);
* the SDK has no client for tasks (SPEC §8.12): a task-augmented ``tools/call``
  (2025-11-25) and every ``tasks/*`` request go out through the session's own stamp and
  dispatcher, so that the SDK neither validates a task handle as a ``CallToolResult``
  nor sends a courtesy ``notifications/cancelled`` for an abandoned poll; on 2026-07-28
  the extension ``io.modelcontextprotocol/tasks`` is declared on every request through
  ``Client(extensions=...)``.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from importlib import metadata
from typing import Any, Literal, Protocol, cast, get_args

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.stdio import stdio_client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import (
    MCP_NAME_HEADER,
    encode_header_value,
    find_invalid_x_mcp_header,
    x_mcp_header_map,
)
from pydantic import TypeAdapter, ValidationError

from .http import HttpStatus, failed_at_connect, http_transport
from .oauth import Authorizer
from .server_config import ServerConfig
from .values import ElicitationAnswer, ElicitationRequest, TaskHandle, TaskPoll, TaskState

__all__ = [
    "HEADER_MISMATCH",
    "Connection",
    "ConnectionLost",
    "Connector",
    "Elicit",
    "McpConnection",
    "McpConnector",
    "OnStderr",
    "OnWireProgress",
    "RequestFailed",
    "ServerError",
]

logger = logging.getLogger("mcpbind.connection")
_RAW: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
_INPUT_ROUNDS = 10
"""Resends of one call for input requests before giving up (the SDK's own default)."""
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The 2026-07-28 tasks extension (SEP-2663), declared on every request (SPEC §8.12)."""
RELATED_TASK = "io.modelcontextprotocol/related-task"
"""The ``_meta`` key tying a 2025-11-25 request or answer to its task."""
TASK_TTL_MS = 3_600_000
"""How long a 2025-11-25 task is asked to be kept (``task.ttl``): an hour."""
_TASK_STATES: frozenset[str] = frozenset(get_args(TaskState))

Elicit = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]
"""The host's answer to a server's elicitation (a form, or a URL to open)."""
OnWireProgress = ProgressFnT
"""Receives each progress notification of one request: ``(progress, total, message)``."""
OnStderr = Callable[[str], None]
"""Receives each line a stdio server writes to its stderr."""


class ConnectionLost(Exception):
    """The session with the server is gone (process died, stream closed, HTTP session lost)."""


class RequestFailed(Exception):
    """One request failed (an error response, a malformed reply); the session lives on."""


HEADER_MISMATCH = -32020
"""The JSON-RPC code a 2026-07-28 server answers a ``tools/call`` with when its
``Mcp-Param-*`` headers do not match the arguments: it refused the call unrun (SPEC §8.9)."""


class ServerError(RequestFailed):
    """The server answered a request with a JSON-RPC error: its own code and message.

    Distinct from a failure of the transport (an HTTP status the SDK turned into an
    error, a malformed reply), which is a plain :class:`RequestFailed`."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message


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
        :class:`~mcpbind.impl.tasks.TaskHandle` of a call the server runs as a task.

        ``on_sent`` is called when the request leaves for the server. Cancelling the
        caller's scope after that cancels the request at the server (INV-7); if the
        server answers anyway, a connection that sees it calls ``on_late`` (INV-4).
        ``meta`` is sent as the request's ``_meta`` (SPEC §11.10). With ``on_progress``
        the request carries a progress token, and each progress notification for it is
        awaited as ``on_progress(progress, total, message)`` (SPEC §8.10).
        ``task_support`` is the tool's ``execution.taskSupport`` as listed: ``required``
        asks a 2025-11-25 server that runs tasks for one (SPEC §8.12).
        Raises ConnectionLost/RequestFailed."""

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
        url_elicitation: bool = False,
    ) -> AbstractAsyncContextManager[Connection]:
        """Open a session; ``on_list_changed`` is called (synchronously) on every
        ``list_changed`` the server announces while it is open; ``on_elicit`` answers
        the server's elicitation requests (None: decline them all); ``on_stderr`` gets
        each line a stdio server writes to its stderr (None: they are dropped);
        ``url_elicitation``: the client offers URL-mode elicitation besides forms.

        Leaving the context normally closes the session as the SDK does, after what it
        was handed (SPEC §11.14); leaving it cancelled tears it down."""


_SDK_PREFIX = re.compile(r"^MCP error (-?\d+): ")
"""The TypeScript SDK puts ``MCP error <code>: `` before the message it sends."""


def _teach_header_maps(session: Any, page: Any) -> None:
    """SPEC §11.2: on 2026-07-28 HTTP a ``tools/call`` MUST mirror the arguments marked
    ``x-mcp-header`` into ``Mcp-Param-*`` headers. The SDK adds them to any ``tools/call``
    it sends, raw ones included, from a map per tool that only its own ``list_tools``
    fills; mcpbind reads listings raw (INV-3), so it fills the map from each page, with
    the SDK's own helpers. A tool whose annotation is invalid gets no map (no headers).
    Pinned by ``test_x_mcp_header_parameters_reach_the_server_as_headers``."""
    maps = getattr(session, "_x_mcp_header_maps", None)
    if not isinstance(maps, dict):
        logger.warning("this mcp SDK keeps no x-mcp-header map: Mcp-Param-* headers not sent")
        return
    tools = page.get("tools") if isinstance(page, Mapping) else None
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, Mapping) or not isinstance(name := tool.get("name"), str):
            continue
        schema = tool.get("inputSchema")
        if find_invalid_x_mcp_header(schema) is None:
            maps[name] = x_mcp_header_map(schema)
        else:
            maps.pop(name, None)


def _map_error(error: MCPError, http: HttpStatus | None = None) -> Exception:
    if error.code == types.CONNECTION_CLOSED:
        return ConnectionLost(error.message or "connection closed")
    message = error.message or ""
    named = None if http is None else http.named(message)
    if named is not None:
        return RequestFailed(named)
    prefix = _SDK_PREFIX.match(message)
    if prefix is not None and int(prefix.group(1)) == error.code:
        message = message[prefix.end() :]  # the code is said once, by us
    return ServerError(error.code, message)


async def _answer_elicitation(
    server: str, on_elicit: Elicit | None, params: types.ElicitRequestParams
) -> types.ElicitResult:
    """A form or URL elicitation goes to the host's policy (SPEC §11.10)."""
    if on_elicit is None:
        return types.ElicitResult(action="decline")
    if isinstance(params, types.ElicitRequestURLParams):
        request = ElicitationRequest(
            server,
            params.message,
            {},
            mode="url",
            url=params.url,
            elicitation_id=params.elicitation_id,
        )
    else:
        request = ElicitationRequest(server, params.message, params.requested_schema)
    answer = await on_elicit(request)
    content = None
    if answer.action == "accept" and answer.content is not None and request.mode == "form":
        content = dict(answer.content)
    related = (params.meta or {}).get(RELATED_TASK)
    # 2025-11-25: the answer to a task's input request carries the task's id back.
    meta = None if related is None else {RELATED_TASK: related}
    return types.ElicitResult(action=answer.action, content=content, _meta=meta)


class McpConnection:
    """A :class:`Connection` over an entered ``mcp.Client``."""

    def __init__(
        self,
        client: Client,
        on_elicit: Elicit | None = None,
        http: HttpStatus | None = None,
        server: str = "",
    ) -> None:
        self._client = client
        self._server = server
        self._lost = anyio.Event()
        self._on_elicit = on_elicit
        self._http = http
        self._answered: dict[str, set[str]] = {}
        """Per task: the keys of input requests answered (SEP-2663 repeats them)."""

    async def wait_lost(self) -> None:
        await self._lost.wait()

    async def _request(self, request: Any, on_progress: OnWireProgress | None = None) -> Any:
        session = self._client.session
        return await self._guarded(
            lambda: session.send_request(request, _RAW, progress_callback=on_progress)
        )

    async def _raw_request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        on_progress: OnWireProgress | None = None,
        name: str | None = None,
    ) -> Any:
        """A request the SDK does not know (SPEC §8.12): stamped as the session stamps
        every request (protocol version, capabilities, headers), sent with no courtesy
        ``notifications/cancelled`` should it be abandoned (INV-7: a task's one signal is
        ``tasks/cancel``), its raw result unvalidated. ``name`` goes into ``Mcp-Name``.
        Two private names of the SDK (``_stamp``, ``_dispatcher``), pinned by
        ``test_cancelling_a_task_sends_one_tasks_cancel_and_gives_one_cancelled_result``
        (the server's log: one ``tasks/cancel``, no ``notifications/cancelled``)."""
        session: Any = self._client.session
        data: dict[str, Any] = {"method": method, "params": params}
        options: dict[str, Any] = {}
        session._stamp(data, options)
        options["cancel_on_abandon"] = False
        if on_progress is not None:
            options["on_progress"] = on_progress
        if name is not None and self._modern():
            options.setdefault("headers", {})[MCP_NAME_HEADER] = encode_header_value(name)
        dispatcher = session._dispatcher
        return await self._guarded(
            lambda: dispatcher.send_raw_request(method, data["params"], options)
        )

    async def _guarded(self, send: Callable[[], Awaitable[Any]]) -> Any:
        """One request, its failures mapped: ConnectionLost, ServerError, RequestFailed."""
        if self._lost.is_set():
            raise ConnectionLost("connection closed")
        try:
            return await send()
        except MCPError as error:
            mapped = _map_error(error, self._http)
            if isinstance(mapped, ConnectionLost):
                self._lost.set()
            raise mapped from error
        except ValidationError as error:
            raise RequestFailed(
                f"malformed reply: {error.error_count()} validation error(s)"
            ) from error
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as error:
            self._lost.set()
            raise ConnectionLost("connection closed") from error

    async def list_tools(self, cursor: str | None) -> Any:
        params = types.PaginatedRequestParams(cursor=cursor)
        page = await self._request(types.ListToolsRequest(params=params))
        _teach_header_maps(self._client.session, page)
        return page

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
        # The SDK drops an answer to a cancelled request itself: ``on_late`` never runs.
        # RequestParamsMeta is an open TypedDict: any string key round-trips.
        wire_meta = None if meta is None else cast("types.RequestParamsMeta", dict(meta))
        # SPEC §8.12: a 2025-11-25 tool that requires a task is called as one (a tool for
        # which a task is optional is called plainly: one round trip, the same result).
        as_task = task_support == "required" and not self._modern() and self.runs_tasks()
        task = types.TaskMetadata(ttl=TASK_TTL_MS) if as_task else None
        params = types.CallToolRequestParams(
            name=name, arguments=dict(arguments), _meta=wire_meta, task=task
        )
        if self._lost.is_set():
            raise ConnectionLost("connection closed")
        on_sent()  # the SDK writes the request before its first suspension point
        if as_task:
            wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
            raw = await self._raw_request("tools/call", wire, on_progress=on_progress)
        else:
            raw = await self._request(types.CallToolRequest(params=params), on_progress)
        rounds = 0
        while isinstance(raw, dict) and raw.get("resultType") == "input_required":
            rounds += 1
            if rounds > _INPUT_ROUNDS:
                raise RequestFailed(f"the server asked for input more than {_INPUT_ROUNDS} times")
            params = await self._with_input(params, raw)
            raw = await self._request(types.CallToolRequest(params=params), on_progress)
        return self._task_handle(raw) or raw

    # --- tasks (SPEC §8.12) ----------------------------------------------------------------

    def _modern(self) -> bool:
        """A 2026-07-28 (discover-era) session, where tasks are the extension."""
        version = self._client.session.protocol_version
        return version is not None and version > "2025-11-25"

    def runs_tasks(self) -> bool:
        capabilities = self._client.session.server_capabilities
        if capabilities is None:
            return False
        if self._modern():
            return TASKS_EXTENSION in (capabilities.extensions or {})
        requests = capabilities.tasks.requests if capabilities.tasks is not None else None
        tools = requests.tools if requests is not None else None
        return tools is not None and tools.call is not None

    def _task_handle(self, raw: Any) -> TaskHandle | None:
        """The task a ``tools/call`` was answered with, or None (a result)."""
        if not isinstance(raw, dict):
            return None
        if self._modern():
            if raw.get("resultType") != "task":
                return None
            found: Any = raw
            interval = raw.get("pollIntervalMs")
        else:
            found = raw.get("task")
            if not isinstance(found, dict) or "content" in raw:
                return None
            interval = found.get("pollInterval")
        task_id, status = found.get("taskId"), found.get("status")
        if not isinstance(task_id, str) or not task_id or status not in _TASK_STATES:
            raise RequestFailed("malformed task handle: taskId or status missing or invalid")
        return TaskHandle(task_id, _seconds(interval), cast("TaskState", status))

    async def _task_request(self, method: str, task: TaskHandle, **extra: Any) -> Any:
        return await self._raw_request(method, {"taskId": task.task_id, **extra}, name=task.task_id)

    async def poll_task(self, task: TaskHandle) -> TaskPoll:
        raw = await self._task_request("tasks/get", task)
        if not isinstance(raw, dict) or raw.get("status") not in _TASK_STATES:
            raise RequestFailed("malformed tasks/get answer: no valid status")
        status: TaskState = raw["status"]
        message = raw.get("statusMessage") if isinstance(raw.get("statusMessage"), str) else None
        interval = _seconds(raw.get("pollIntervalMs" if self._modern() else "pollInterval"))
        if status in ("completed", "failed", "cancelled"):
            self._answered.pop(task.task_id, None)  # the task asks for nothing more
        if status == "cancelled":
            return TaskPoll("cancelled", interval, message=message)
        if self._modern():
            return await self._modern_poll(task, raw, status, interval, message)
        if status == "working":
            return TaskPoll("working", interval)
        # 2025-11-25: a task that needs input, or has ended, is read with tasks/result,
        # which blocks until it is terminal; its input requests arrive meanwhile as
        # elicitation requests carrying the task's id, answered by the elicitation policy.
        try:
            payload = await self._task_request("tasks/result", task)
        except ServerError as error:
            return TaskPoll("failed", interval, message=error.message)
        if not isinstance(payload, dict):
            raise RequestFailed("malformed tasks/result answer: not a JSON object")
        return TaskPoll("completed", interval, result=payload)

    async def _modern_poll(
        self,
        task: TaskHandle,
        raw: dict[str, Any],
        status: TaskState,
        interval: float | None,
        message: str | None,
    ) -> TaskPoll:
        """SEP-2663: the result or error comes inline; input requests are answered
        with ``tasks/update``, each key once."""
        if status == "completed":
            result = raw.get("result")
            if not isinstance(result, dict):
                raise RequestFailed("malformed tasks/get answer: a completed task without result")
            return TaskPoll("completed", interval, result=result)
        if status == "failed":
            error = raw.get("error")
            why = error.get("message") if isinstance(error, dict) else None
            return TaskPoll("failed", interval, message=why if isinstance(why, str) else message)
        if status == "input_required":
            await self._answer_task_input(task, raw.get("inputRequests"))
        return TaskPoll(status, interval)

    async def _answer_task_input(self, task: TaskHandle, requests: Any) -> None:
        if not isinstance(requests, dict):
            raise RequestFailed("malformed tasks/get answer: input_required without inputRequests")
        answered = self._answered.setdefault(task.task_id, set())
        responses: dict[str, Any] = {}
        for key, entry in requests.items():
            if key in answered:
                continue  # the same request again, as every poll repeats it (SEP-2663)
            try:
                request = _INPUT_REQUEST.validate_python(entry)
            except ValidationError as error:
                raise RequestFailed(
                    f"malformed input request: {error.error_count()} validation error(s)"
                ) from error
            if not isinstance(request, types.ElicitRequest):
                raise RequestFailed(
                    f"the server asked for {request.method}, which mcpbind does not provide"
                )
            answer = await _answer_elicitation(self._server, self._on_elicit, request.params)
            responses[key] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
        if responses:
            await self._task_request("tasks/update", task, inputResponses=responses)
            answered.update(responses)

    async def cancel_task(self, task: TaskHandle, *, on_late: Callable[[], None]) -> None:
        self._answered.pop(task.task_id, None)
        try:
            await self._task_request("tasks/cancel", task)
        except ServerError as error:
            # 2025-11-25: a task already terminal MUST be refused with -32602; its
            # outcome came too late for the call, which has ended (INV-4).
            if error.code == types.INVALID_PARAMS and not self._modern():
                on_late()
                return
            raise

    async def _with_input(
        self, params: types.CallToolRequestParams, raw: dict[str, Any]
    ) -> types.CallToolRequestParams:
        """The call resent with answers to an ``InputRequiredResult`` (2026-07-28)."""
        try:
            needed = types.InputRequiredResult.model_validate(raw)
        except ValidationError as error:
            raise RequestFailed(
                f"malformed input request: {error.error_count()} validation error(s)"
            ) from error
        responses: dict[str, types.InputResponse] = {}
        for key, request in (needed.input_requests or {}).items():
            if not isinstance(request, types.ElicitRequest):
                raise RequestFailed(
                    f"the server asked for {request.method}, which mcpbind does not provide"
                )
            responses[key] = await _answer_elicitation(
                self._server, self._on_elicit, request.params
            )
        if not responses:
            await anyio.sleep(0.05)  # state only: the server is not ready yet; ask again soon
        return params.model_copy(
            update={"input_responses": responses or None, "request_state": needed.request_state}
        )

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
        except (SubscriptionLost, anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._lost.set()  # an abrupt drop: the session is gone


def _seconds(milliseconds: Any) -> float | None:
    """A poll interval the server gave in milliseconds, or None if it gave none."""
    if isinstance(milliseconds, bool) or not isinstance(milliseconds, int | float):
        return None
    return milliseconds / 1000 if milliseconds >= 0 else None


_INPUT_REQUEST: TypeAdapter[types.InputRequest] = TypeAdapter(types.InputRequest)


class _CreatedTask(types.Result):
    """The ``resultType: "task"`` answer to ``tools/call`` (SEP-2663), as a claim model."""

    result_type: Literal["task"] = "task"
    task_id: str


async def _not_resolved(created: _CreatedTask, context: ClaimContext) -> types.CallToolResult:
    raise RuntimeError("mcpbind polls tasks itself (impl/tasks.py)")


class _TasksExtension(ClientExtension):
    """Declares ``io.modelcontextprotocol/tasks`` on every 2026-07-28 request: the SDK
    advertises a claim-bearing extension only where its claim is active, so never on a
    2025-11-25 session. The claim itself is not used: calls go out raw and the task
    handle comes back as a dict (SPEC §8.12)."""

    identifier = TASKS_EXTENSION

    def claims(self) -> tuple[ResultClaim[Any], ...]:
        return (ResultClaim(result_type="task", model=_CreatedTask, resolve=_not_resolved),)


class _ElicitationModesClient(Client):
    """``mcp.Client`` advertising the elicitation modes mcpbind honours (SPEC §11.10):
    forms, and URLs only when the host's handler takes them (``url``). The SDK advertises
    URL mode whenever an elicitation callback is set; a host that would decline every URL
    request must not claim it. Two private names of the SDK (``_build_session``,
    ``_build_capabilities``), pinned by ``test_the_client_advertises_form_elicitation_only``
    and ``test_url_elicitation_is_offered_and_reaches_the_handler_when_it_takes_urls``."""

    def __init__(self, *args: Any, url: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._url_elicitation = url

    async def _build_session(self, exit_stack: Any) -> Any:
        session = await super()._build_session(exit_stack)
        built = session._build_capabilities
        url = types.UrlElicitationCapability() if self._url_elicitation else None

        def honoured(version: str) -> types.ClientCapabilities:
            capabilities: types.ClientCapabilities = built(version)
            if capabilities.elicitation is None:
                return capabilities
            modes = types.ElicitationCapability(form=types.FormElicitationCapability(), url=url)
            return capabilities.model_copy(update={"elicitation": modes})

        session._build_capabilities = honoured  # type: ignore[method-assign] # the seam above
        return session


class McpConnector:
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
        url_elicitation: bool = False,
    ) -> AbstractAsyncContextManager[Connection]:
        return self._connect(
            server, config, on_list_changed, on_elicit, on_stderr, url_elicitation=url_elicitation
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
    ) -> AsyncIterator[Connection]:
        holder: list[McpConnection] = []

        async def on_elicitation(
            context: ClientRequestContext, params: types.ElicitRequestParams
        ) -> types.ElicitResult:
            return await _answer_elicitation(server, on_elicit, params)

        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                on_list_changed()
            elif isinstance(message, Exception) and holder:
                logger.debug("server %r transport fault: %r", server, message)

        target = config.target
        stderr: _StderrPipe | None = None
        http: HttpStatus | None = None
        if isinstance(target, str):
            http = HttpStatus(url=target.rstrip("/"))
            auth = None if self.authorizer is None else self.authorizer.auth(server, config)
            target = http_transport(target, config, http, auth)
        elif isinstance(target, StdioServerParameters):
            # The server's stderr goes to a pipe of ours, line by line to ``on_stderr``,
            # instead of into the user's terminal (SPEC §11.14).
            stderr = _StderrPipe(on_stderr or (lambda line: None))
            target = stdio_client(target, errlog=stderr.writer)
        client = _ElicitationModesClient(
            target,
            url=url_elicitation,
            cache=None,
            message_handler=on_message,
            mode=self.mode,
            elicitation_callback=on_elicitation,
            client_info=CLIENT_INFO,
            extensions=[_TasksExtension()],
        )
        try:
            async with anyio.create_task_group() as pipes:
                if stderr is not None:
                    pipes.start_soon(stderr.read)
                try:
                    async with failed_at_connect(http), client:
                        if stderr is not None:
                            stderr.spawned()
                        connection = McpConnection(client, on_elicit, http, server)
                        holder.append(connection)
                        async with anyio.create_task_group() as group:
                            group.start_soon(connection.listen, on_list_changed)
                            try:
                                yield connection
                            finally:
                                group.cancel_scope.cancel()
                finally:
                    pipes.cancel_scope.cancel()
        finally:
            if stderr is not None:
                stderr.finish()  # the last lines, before a startup error is described


class _StderrPipe:
    """A stdio server's stderr: a pipe whose lines go to a callback."""

    def __init__(self, on_line: OnStderr) -> None:
        read, write = os.pipe()
        os.set_blocking(read, False)
        self._read = read
        self.writer = os.fdopen(write, "w")
        """The write end, the child's stderr; ours is closed once the child has it."""
        self._on_line = on_line
        self._partial = b""

    def spawned(self) -> None:
        """The child holds the write end now: ours closes, so its exit ends the stream."""
        if not self.writer.closed:
            self.writer.close()

    async def read(self) -> None:
        while not self._read_some():
            await anyio.wait_readable(self._read)

    def _read_some(self) -> bool:
        """Read what is there; True at the end of the stream."""
        while True:
            try:
                data = os.read(self._read, 65536)
            except BlockingIOError:
                return False
            except OSError:
                return True
            if not data:
                if self._partial:
                    self._on_line(self._partial.decode("utf-8", "replace"))
                    self._partial = b""
                return True
            lines = (self._partial + data).split(b"\n")
            self._partial = lines.pop()
            for line in lines:
                self._on_line(line.decode("utf-8", "replace").rstrip("\r"))

    def finish(self) -> None:
        """The session is over: take what is left, then close the pipe."""
        self.spawned()
        self._read_some()
        os.close(self._read)


def _version() -> str:
    try:
        return metadata.version("mcpbind")
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return "0+unknown"


CLIENT_INFO = types.Implementation(name="mcpbind", version=_version())
"""How mcpbind names itself to servers (``clientInfo``), not as the SDK's default."""
