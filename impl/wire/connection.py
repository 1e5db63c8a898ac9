"""The SDK adapter: a :class:`~.seam.Connection` over an entered ``mcp.Client``.

Facts of ``mcp`` 2.3 this module handles (SPEC §11.2, §11.10, §11.16):

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
* the SDK has no client for tasks (SPEC §8.12): :mod:`.tasks` speaks both eras.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.subscriptions import ListenNotSupportedError, ResourcesListChanged, SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp_types import methods
from pydantic import TypeAdapter, ValidationError

from ..values import ElicitationRequest
from .http import HttpStatus
from .sdk import send_unvalidated, teach_header_maps
from .seam import (
    URL_ELICITATION_REQUIRED,
    AuthorizationRefused,
    Connection,
    ConnectionLost,
    Elicit,
    OnStream,
    OnWireProgress,
    RequestFailed,
    ServerError,
    SessionExpired,
    TaskHandle,
    TaskPoll,
    UrlElicitationRequired,
)
from .tasks import RELATED_TASK, TASK_TTL_MS, TaskWire, runs_tasks, task_handle
from .url_elicitation import ask_url_steps, url_steps

__all__ = [
    "PLAIN_CALL_REVISION",
    "McpConnection",
    "answer_elicitation",
    "complete_by_default",
    "plainly_complete",
    "relisten_delay",
]

logger = logging.getLogger("mcpbind.connection")
_RAW: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
_INPUT_ROUNDS = 10
"""Resends of one call for input requests before giving up (the SDK's own default)."""
_SDK_PREFIX = re.compile(r"^MCP error (-?\d+): ")
"""The TypeScript SDK puts ``MCP error <code>: `` before the message it sends."""


def _map_error(error: MCPError, http: HttpStatus | None = None) -> Exception:
    if error.code == types.CONNECTION_CLOSED:
        return ConnectionLost(error.message or "connection closed")
    message = error.message or ""
    if http is not None and http.expired:  # SPEC §8.13: refused unrun, the session is gone
        # Its text is never shown: a refused call is sent once more or ends with
        # EXPIRED_AGAIN, another request's refusal becomes a ConnectionLost that INV-8's
        # fixed texts replace (issue 33: ``or`` made ``and`` passed 132 tests of sessions).
        said = message or "the server no longer knows the session"  # pragma: no mutate
        return SessionExpired(said)
    wanted = None if http is None else http.wanted()
    if wanted is not None:  # SPEC §11.15: a step-up no one here can give
        return AuthorizationRefused(wanted)
    named = None if http is None else http.named(message)
    if named is not None:
        return RequestFailed(named)
    prefix = _SDK_PREFIX.match(message)
    if prefix is not None and int(prefix.group(1)) == error.code:
        message = message[prefix.end() :]  # the code is said once, by us
    steps = url_steps(error) if error.code == URL_ELICITATION_REQUIRED else ()
    if steps:
        return UrlElicitationRequired(message, steps)
    return ServerError(error.code, message)


class _NotPlain(Exception):
    """A value that is not plain JSON (see :func:`_plain_copy`)."""


def _plain_copy(value: Any) -> Any:
    """A copy of ``value`` when it is plain JSON (``dict`` with ``str`` keys, ``list``,
    ``str``, ``int``, finite ``float``, ``bool``, None), as pydantic's JSON dump would make
    it; raises :class:`_NotPlain` for anything else, which the dump may change (a tuple, a
    NaN, a date)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        raise _NotPlain
    if kind is dict:
        copy = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            copy[key] = _plain_copy(item)
        return copy
    if kind is list:
        return [_plain_copy(item) for item in value]
    raise _NotPlain


def call_params(
    name: str, arguments: Mapping[str, Any], meta: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The params of a plain ``tools/call`` as ``CallToolRequest.model_dump(by_alias=True,
    mode="json", exclude_none=True)`` makes them, without building the request: every
    call pays for that build otherwise (its result is the same, tested against the SDK's
    in ``tests/test_hot_path.py``). None when a value is not plain JSON, or a
    ``_meta`` value is None (the dump drops it): then the request is built."""
    if type(name) is not str:
        return None
    params: dict[str, Any] = {}
    try:
        if meta is not None:
            wire_meta = {}
            for key, item in meta.items():
                if item is None:
                    return None
                wire_meta[key] = _plain_copy(item)
            params["_meta"] = wire_meta
        params["name"] = name
        params["arguments"] = _plain_copy(dict(arguments))
    except _NotPlain:
        return None
    return params


def _call_request_params(
    name: str,
    arguments: Mapping[str, Any],
    meta: Mapping[str, Any] | None,
    task: types.TaskMetadata | None = None,
) -> types.CallToolRequestParams:
    """The params of a ``tools/call`` as the SDK's model, for a request it builds."""
    # RequestParamsMeta is an open TypedDict: any string key round-trips.
    wire_meta = None if meta is None else cast("types.RequestParamsMeta", dict(meta))
    return types.CallToolRequestParams(
        name=name, arguments=dict(arguments), _meta=wire_meta, task=task
    )


def complete_by_default(raw: Any) -> Any:
    """A 2026-07-28 result as the spec reads it: an absent ``resultType`` is
    ``complete`` (basic/index "ResultType": clients MUST treat an absent ``resultType``
    as ``"complete"``), and a negative ``ttlMs`` is 0, as the SDK floors it (SPEC §8.8)."""
    if not isinstance(raw, dict):
        return raw
    found: dict[str, Any] = raw
    if "resultType" not in found:
        found = {**found, "resultType": "complete"}
    ttl = found.get("ttlMs")
    if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl < 0:
        found = {**found, "ttlMs": 0}
    return found


@functools.cache
def _surface(method: str, version: str) -> TypeAdapter[Any] | None:
    """The validator of the revision's result type for ``method``, from the SDK's own table
    (``methods.SERVER_RESULTS``); None for a method or revision it does not know."""
    found: Any = methods.SERVER_RESULTS.get((method, version))  # a model or a union of them
    return None if found is None else TypeAdapter(found)


PLAIN_CALL_REVISION = "2026-07-28"
"""The revision whose ``CallToolResult`` :func:`plainly_complete` was written against."""


def plainly_complete(result: Any) -> bool:
    """Whether ``result`` is a ``tools/call`` result that the 2026-07-28 revision's result
    type surely accepts, told without pydantic: a ``dict`` whose ``content`` is a list of
    text blocks (each a ``dict`` with ``type`` ``"text"``, a ``str`` ``text``, and neither
    ``annotations`` nor ``_meta``), whose ``isError`` is absent, None or a bool, whose
    ``resultType`` is a ``str``, and whose ``_meta`` is absent, None or a ``dict`` with
    ``str`` keys (the SDK's servers put their ``serverInfo`` there on every answer; the
    model takes any value under any key). ``structuredContent`` may be any value and
    other keys are ignored, as the model takes and ignores them. False says nothing: the
    full check decides (tested against it in ``tests/test_hot_path.py``)."""
    if type(result) is not dict:
        return False
    meta = result.get("_meta")
    if meta is not None and (type(meta) is not dict or not all(type(k) is str for k in meta)):
        return False
    content = result.get("content")
    if type(content) is not list:
        return False
    for block in content:
        if (
            type(block) is not dict
            or block.get("type") != "text"
            or type(block.get("text")) is not str
            or "annotations" in block
            or "_meta" in block
        ):
            return False
    is_error = result.get("isError")
    return (is_error is None or type(is_error) is bool) and type(result.get("resultType")) is str


def _validated(method: str, version: str | None, raw: Any) -> Any:
    """``raw`` read by :func:`complete_by_default`, then checked against the revision's
    result type for ``method`` as the SDK's ``validate_server_result`` checks it; a result
    that fails is a malformed reply, as the SDK's check would have said. That function
    also dumps what it validated and drops the dump: here only the check is made. The
    usual answer to a call, text blocks and structured content, is told valid by
    :func:`plainly_complete` without building the model."""
    found = complete_by_default(raw)
    if method == "tools/call" and version == PLAIN_CALL_REVISION and plainly_complete(found):
        return found
    surface = _surface(method, version or "")
    if surface is None:
        return found  # a method or revision the SDK does not know: nothing to check against
    try:
        surface.validate_python(found, by_name=False)
    except ValidationError as error:
        raise RequestFailed(
            f"malformed reply: {error.error_count()} validation error(s)"
        ) from error
    return found


async def answer_elicitation(
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


class McpConnection(Connection):
    """A :class:`~.seam.Connection` over an entered ``mcp.Client``."""

    def __init__(
        self,
        client: Client,
        on_elicit: Elicit | None = None,
        http: HttpStatus | None = None,
        server: str = "",
        *,
        url_elicitation: bool,
    ) -> None:
        self._client = client
        self._server = server
        self._lost = anyio.Event()
        self._on_elicit = on_elicit
        self._url_elicitation = url_elicitation
        """The host's handler takes URL requests (``HostConfig(elicitation_url=True)``)."""
        self._http = http
        self._resources_version = object()
        """SPEC §11.20: new at the session's start and at each change of its resources
        heard (:meth:`resources_version`)."""
        self._tasks = TaskWire(
            self._raw_request,
            self._modern(),
            lambda params: answer_elicitation(server, on_elicit, params),
        )

    async def wait_lost(self) -> None:
        await self._lost.wait()

    async def _request(
        self,
        request: Any,
        on_progress: OnWireProgress | None = None,
        *,
        refusable: bool = False,
    ) -> Any:
        """One request the SDK knows, its raw result validated for the session's revision.

        On 2026-07-28 sessions the result is validated here, not by the SDK, whose check
        requires ``resultType``: the spec says an absent one means ``complete`` (SPEC
        §8.8). The request goes out as ``send_request`` sends it, headers, progress and
        the courtesy cancellation included."""
        session = self._client.session
        if not self._modern():
            return await self._guarded(
                lambda: session.send_request(request, _RAW, progress_callback=on_progress),
                refusable=refusable,
            )
        data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        return await self._request_dumped(
            data["method"], data.get("params") or {}, on_progress, refusable=refusable
        )

    async def _request_dumped(
        self,
        method: str,
        params: dict[str, Any],
        on_progress: OnWireProgress | None = None,
        *,
        refusable: bool = False,
    ) -> Any:
        """:meth:`_request` on a 2026-07-28 session, the request already dumped."""
        session = self._client.session
        raw = await self._guarded(
            lambda: send_unvalidated(
                session, method, params, on_progress=on_progress, cancel_on_abandon=True
            ),
            refusable=refusable,
        )
        return _validated(method, session.protocol_version, raw)

    async def _raw_request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        on_progress: OnWireProgress | None = None,
        name: str | None = None,
        refusable: bool = False,
    ) -> Any:
        """A request the SDK does not know (:func:`.sdk.send_unvalidated`); ``name`` goes
        into ``Mcp-Name`` on 2026-07-28 sessions."""
        session = self._client.session
        named = name if self._modern() else None
        return await self._guarded(
            lambda: send_unvalidated(session, method, params, on_progress=on_progress, name=named),
            refusable=refusable,
        )

    async def _guarded(self, send: Callable[[], Awaitable[Any]], *, refusable: bool) -> Any:
        """One request, its failures mapped: ConnectionLost, ServerError, RequestFailed.

        A request the server refused because it no longer knows the session is
        :class:`~.seam.SessionExpired` when ``refusable`` (a call: the runtime replaces the
        session and may send it once more, INV-14); any other request loses the session
        (INV-8), and the reconnect starts a new one."""
        if self._lost.is_set():
            raise ConnectionLost("connection closed")
        try:
            return await send()
        except MCPError as error:
            mapped = _map_error(error, self._http)
            if isinstance(mapped, SessionExpired) and not refusable:
                mapped = ConnectionLost(str(mapped))
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
        if self._http is not None:  # the Mcp-Param-* headers are HTTP's only (SPEC §11.2)
            teach_header_maps(self._client.session, page)
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
        modern = self._modern()
        # SPEC §8.12: a 2025-11-25 tool that requires a task is called as one (a tool for
        # which a task is optional is called plainly: one round trip, the same result).
        as_task = task_support == "required" and not modern and self.runs_tasks()
        dumped = call_params(name, arguments, meta) if modern else None
        params = None
        if dumped is None:
            task = types.TaskMetadata(ttl=TASK_TTL_MS) if as_task else None
            params = _call_request_params(name, arguments, meta, task)
        if self._lost.is_set():
            raise ConnectionLost("connection closed")
        on_sent()  # the SDK writes the request before its first suspension point
        try:
            if params is None:
                assert dumped is not None
                raw = await self._request_dumped("tools/call", dumped, on_progress, refusable=True)
            elif as_task:
                wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
                raw = await self._raw_request(
                    "tools/call", wire, on_progress=on_progress, refusable=True
                )
            else:
                request = types.CallToolRequest(params=params)
                raw = await self._request(request, on_progress, refusable=True)
            rounds = 0
            while isinstance(raw, dict) and raw.get("resultType") == "input_required":
                rounds += 1
                if rounds > _INPUT_ROUNDS:
                    raise RequestFailed(
                        f"the server asked for input more than {_INPUT_ROUNDS} times"
                    )
                if params is None:  # the plain call needs its request after all
                    params = _call_request_params(name, arguments, meta)
                params = await self._with_input(params, raw)
                request = types.CallToolRequest(params=params)
                raw = await self._request(request, on_progress, refusable=True)
        except UrlElicitationRequired as needed:  # SPEC §11.10: the user is asked, once
            asking = self._on_elicit if self._url_elicitation else None
            raise await ask_url_steps(self._server, asking, needed) from needed
        return task_handle(raw, modern) or raw

    # --- tasks (SPEC §8.12): the wire protocol is :mod:`.tasks` ---------------------------

    def _modern(self) -> bool:
        """A 2026-07-28 (discover-era) session, where tasks are the extension."""
        version = self._client.session.protocol_version
        return version is not None and version > "2025-11-25"

    def runs_tasks(self) -> bool:
        return runs_tasks(self._client.session.server_capabilities, self._modern())

    # --- resources (SPEC §11.20) -------------------------------------------------------

    def declares_resources(self) -> bool:
        capabilities = self._client.session.server_capabilities
        return capabilities is not None and capabilities.resources is not None

    def resources_version(self) -> object:
        return self._resources_version

    def heard_resources_change(self) -> None:
        """A ``notifications/resources/list_changed`` (or its listen-stream event) came,
        or a stream ended and what it would have carried is lost (SPEC §11.20)."""
        self._resources_version = object()

    async def list_resources(self, cursor: str | None, *, templates: bool = False) -> Any:
        params = types.PaginatedRequestParams(cursor=cursor)
        if templates:
            return await self._request(types.ListResourceTemplatesRequest(params=params))
        return await self._request(types.ListResourcesRequest(params=params))

    async def read_resource(
        self, uri: str, *, on_sent: Callable[[], None], on_late: Callable[[], None]
    ) -> Any:
        # The SDK drops an answer to a cancelled request itself: ``on_late`` never runs.
        request = types.ReadResourceRequest(params=types.ReadResourceRequestParams(uri=uri))
        if self._lost.is_set():
            raise ConnectionLost("connection closed")
        on_sent()  # the SDK writes the request before its first suspension point
        return await self._request(request)

    async def poll_task(self, task: TaskHandle) -> TaskPoll:
        return await self._tasks.poll(task)

    async def cancel_task(self, task: TaskHandle, *, on_late: Callable[[], None]) -> None:
        await self._tasks.cancel(task, on_late=on_late)

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
            responses[key] = await answer_elicitation(self._server, self._on_elicit, request.params)
        if not responses:
            await anyio.sleep(0.05)  # state only: the server is not ready yet; ask again soon
        return params.model_copy(
            update={"input_responses": responses or None, "request_state": needed.request_state}
        )

    async def listen(self, on_list_changed: Callable[[], None], on_stream: OnStream) -> None:
        """Deliver ``list_changed`` from ``subscriptions/listen`` streams (2026-07-28), and
        listen again each time the server ends one gracefully (SPEC §5.1, LIVE-3): the SDK
        neither re-listens nor replays. ``on_stream`` hears each end (``ended``) and each
        new stream acknowledged after one (``relistened``: what was announced meanwhile is
        lost, so the host refreshes), and ``unheard`` when the server will not deliver
        ``list_changed``. Consecutive ends wait :func:`relisten_delay` before the next."""
        ended = 0
        while True:
            try:
                resources = self.declares_resources()  # SPEC §11.20: its changes too
                async with self._client.listen(
                    tools_list_changed=True, resources_list_changed=resources
                ) as subscription:
                    if not subscription.honored.tools_list_changed:
                        on_stream("unheard")  # acknowledged, without the notification asked
                        return
                    if ended:
                        self.heard_resources_change()  # lost meanwhile, if anything
                        on_stream("relistened")
                    async for event in subscription:
                        ended = 0  # a stream that delivers is a healthy one
                        if isinstance(event, ResourcesListChanged):
                            self.heard_resources_change()
                        on_list_changed()
            except ListenNotSupportedError:
                return  # handshake era: notifications come through the message handler
            except MCPError as error:
                if error.code == types.CONNECTION_CLOSED:
                    self._lost.set()
                else:  # the server does not serve subscriptions/listen: no notifications
                    on_stream("unheard")
                return
            except (SubscriptionLost, anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._lost.set()  # an abrupt drop: the session is gone
                return
            ended += 1
            on_stream("ended")
            await anyio.sleep(relisten_delay(ended))


RELISTEN_FIRST = 0.0
"""The first listen after a graceful end goes at once (a server that ended a slow
client's backlog wants it back at once)."""
RELISTEN_MAX = 30.0


def relisten_delay(ends: int) -> float:
    """The wait before listening again after ``ends`` graceful ends in a row with no
    notification between them: none after the first, then 0.5 s doubling up to 30 s, so
    that a server that keeps ending its streams (it is draining) is not asked in a loop."""
    if ends <= 1:
        return RELISTEN_FIRST
    return min(0.5 * 2.0 ** (ends - 2), RELISTEN_MAX)
