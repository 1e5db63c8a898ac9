"""The SDK's private names, in this one module (SPEC §11.16), and the one private name of
the standard library mcpbind uses (json's C encoder, :func:`c_json_encoder`).

mcpbind runs on the official ``mcp`` SDK, pinned to the minor version it is tested with.
Where the SDK offers no public way to do what the MCP specification or mcpbind's
invariants require, mcpbind reaches into it here and nowhere else. Each use says the
behaviour relied on and the test that pins it; ``tests/test_sdk_private.py`` fails if a
name of :data:`PRIVATE_NAMES` appears in any other file of the project, and
``scripts/sdk-canary`` runs the pinning tests against the newest ``mcp`` 2.x, so that an
SDK upgrade is a measured decision.

The SDK's message texts mcpbind matches on are here too (:data:`HTTP_STAND_IN`,
:data:`AUTH_LOGGER`).
"""

from __future__ import annotations

import contextlib
import contextvars
import json.encoder
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import mcp.client.stdio as sdk_stdio
import mcp_types as types
from mcp import Client
from mcp.shared.inbound import (
    MCP_NAME_HEADER,
    encode_header_value,
    find_invalid_x_mcp_header,
    x_mcp_header_map,
)

from .seam import OnWireProgress

__all__ = [
    "AUTH_LOGGER",
    "HTTP_STAND_IN",
    "PRIVATE_NAMES",
    "ElicitationModesClient",
    "GrantRequest",
    "RestoreAfterInitialize",
    "c_json_encoder",
    "exit_status",
    "find_invalid_x_mcp_header",
    "send_unvalidated",
    "spawned_processes",
    "teach_header_maps",
]

logger = logging.getLogger("mcpbind.connection")

PRIVATE_NAMES = (
    "_x_mcp_header_maps",
    "_stamp",
    "_dispatcher",
    "send_raw_request",
    "_build_session",
    "_build_capabilities",
    "_initialize",
    "_perform_authorization",
    "_create_platform_compatible_process",
    "c_make_encoder",
)
"""Every name of the SDK (and of the standard library) that is not its public API and that
mcpbind uses."""

HTTP_STAND_IN = "Server returned an error response"
"""The error the SDK's HTTP transport makes of a non-2xx answer without a JSON-RPC body
(``mcp/client/streamable_http.py``); mcpbind names the status instead (SPEC §11.2).
Pinned by
``test_an_http_status_at_connect_is_named_and_a_refusal_says_authorization``."""

HEADER_MAPS = "_x_mcp_header_maps"
"""The name of the SDK session's private map of each tool's ``x-mcp-header`` arguments,
which :func:`teach_header_maps` fills: a test's stand-in session takes it from here, so
that no file but this one names it."""

AUTH_LOGGER = "mcp.client.auth.oauth2"
"""The logger on which the SDK's OAuth flow logs every failure with its traceback."""


def teach_header_maps(session: Any, page: Any) -> None:
    """SPEC §11.2: on 2026-07-28 HTTP a ``tools/call`` MUST mirror the arguments marked
    ``x-mcp-header`` into ``Mcp-Param-*`` headers. The SDK adds them to any ``tools/call``
    it sends, raw ones included, from a map per tool (the session's private
    ``_x_mcp_header_maps``) that only its own ``list_tools`` fills; mcpbind reads listings
    raw (INV-3), so it fills the map from each page of an HTTP connection (no other
    transport has headers), with the SDK's own helpers. A tool whose annotation is
    invalid gets no map (no headers).
    Pinned by ``test_x_mcp_header_parameters_reach_the_server_as_headers``."""
    maps = getattr(session, "_x_mcp_header_maps", None)  # HEADER_MAPS
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


def send_unvalidated(
    session: Any,
    method: str,
    params: dict[str, Any],
    *,
    on_progress: OnWireProgress | None = None,
    name: str | None = None,
    cancel_on_abandon: bool = False,
) -> Awaitable[Any]:
    """A request sent as the session sends every request: stamped by its private
    ``_stamp`` (protocol version, capabilities, ``Mcp-Method``, ``Mcp-Name`` and the
    ``Mcp-Param-*`` headers of a ``tools/call``), then handed to its private
    ``_dispatcher.send_raw_request``; its raw result comes back unvalidated.

    Two uses. A request the SDK does not know (SPEC §8.12) goes with
    ``cancel_on_abandon=False``, so that no courtesy ``notifications/cancelled`` follows
    should it be abandoned (INV-7: a task's one signal is ``tasks/cancel``); ``name`` goes
    into ``Mcp-Name`` (SEP-2663). Pinned by
    ``test_cancelling_a_task_sends_one_tasks_cancel_and_gives_one_cancelled_result``
    (the server's log: one ``tasks/cancel``, no ``notifications/cancelled``). And
    ``tools/list`` and ``tools/call`` on 2026-07-28 sessions go with
    ``cancel_on_abandon=True``, as the session's own ``send_request`` sends them, so
    that mcpbind validates the result itself: the SDK's validation requires
    ``resultType``, which the spec says a client MUST take as ``complete`` when absent
    (SPEC §8.8). Pinned by
    ``test_a_result_without_result_type_over_the_wire_is_complete`` and, for the
    cancellation, ``test_cancel_sends_one_notification_and_the_server_cancels_its_handler``."""
    data: dict[str, Any] = {"method": method, "params": params}
    options: dict[str, Any] = {}
    session._stamp(data, options)
    options["cancel_on_abandon"] = cancel_on_abandon
    if on_progress is not None:
        options["on_progress"] = on_progress
    if name is not None:
        options.setdefault("headers", {})[MCP_NAME_HEADER] = encode_header_value(name)
    result: Awaitable[Any] = session._dispatcher.send_raw_request(method, data["params"], options)
    return result


class ElicitationModesClient(Client):
    """``mcp.Client`` advertising the elicitation modes mcpbind honours (SPEC §11.10):
    forms, and URLs only when the host's handler takes them (``url``). The SDK advertises
    URL mode whenever an elicitation callback is set; a host that would decline every URL
    request must not claim it. It overrides the client's private ``_build_session`` and
    wraps the session's private ``_build_capabilities``. Pinned by
    ``test_the_client_advertises_form_elicitation_only`` and
    ``test_url_elicitation_is_offered_only_when_the_handler_takes_urls``."""

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


class RestoreAfterInitialize:
    """A mixin for the SDK's OAuth providers: after the provider's private ``_initialize``
    has loaded the stored tokens and client (through the storage's public
    ``get_tokens``/``get_client_info``), :meth:`restored` puts back what the SDK does not
    keep across restarts (SPEC §11.15). Pinned by
    ``test_an_expired_token_is_refreshed_by_the_next_host_without_a_login``."""

    async def _initialize(self) -> None:
        await super()._initialize()  # type: ignore[misc] # the provider's, after this mixin
        self.restored()

    def restored(self) -> None:
        """Called once the provider has loaded what was stored."""


class GrantRequest:
    """A mixin for the SDK's ``OAuthClientProvider``: the grant its flow performs once the
    authorization server is known is the token request :meth:`grant_request` builds (the
    SDK's client-credentials providers override the private ``_perform_authorization``
    the same way). Pinned by
    ``test_a_workload_trades_its_jwt_for_a_token_with_the_jwt_bearer_grant``."""

    async def _perform_authorization(self) -> Any:
        return await self.grant_request()

    async def grant_request(self) -> Any:
        """The token request of this grant (an ``httpx2.Request``)."""
        raise NotImplementedError


# --- a stdio server's exit status ---------------------------------------------------------

_SPAWNED: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "mcpbind_spawned", default=None
)
_spawn = sdk_stdio._create_platform_compatible_process


async def spawn_noted(*args: Any, **kwargs: Any) -> Any:
    """The SDK's spawn of a stdio server, the process noted for :func:`spawned_processes`
    (pinned by ``test_a_server_that_exits_at_start_is_described_by_its_exit_status``)."""
    process = await _spawn(*args, **kwargs)
    noted = _SPAWNED.get()
    if noted is not None:
        noted.append(process)
    return process


# ``stdio_client`` keeps its process to itself; a server that exits before the session
# opens then fails as "Connection closed". Its exit status says more (issue 28).
sdk_stdio._create_platform_compatible_process = spawn_noted


@contextlib.contextmanager
def spawned_processes() -> Iterator[list[Any]]:
    """The processes ``stdio_client`` spawns in this context (pinned by
    ``test_a_server_that_exits_at_start_is_described_by_its_exit_status``)."""
    noted: list[Any] = []
    token = _SPAWNED.set(noted)
    try:
        yield noted
    finally:
        _SPAWNED.reset(token)


def exit_status(processes: list[Any]) -> int | None:
    """The exit status of the last process noted, once it has exited (negative: the
    signal that ended it); None while it runs or when none was spawned (pinned by
    ``test_a_server_ended_by_a_signal_at_start_says_which``)."""
    if not processes:
        return None
    # A connection's context notes the one spawn of its stdio_client (connector.py): the
    # first process noted is the last, and ``[-1]`` made ``[not 1]`` (``[0]``) the same.
    status = processes[-1].returncode  # pragma: no mutate - one process noted per context
    return status if isinstance(status, int) else None


# --- the standard library's C JSON encoder ------------------------------------------------


def c_json_encoder(default: Callable[[Any], Any]) -> Callable[[Any, int], Any] | None:
    """json's C encoder made once for compact text (``,`` and ``:``, non-ASCII kept, no
    circular-reference check, ``default`` for what JSON cannot hold): ``json.dumps`` makes
    a ``JSONEncoder`` and its C encoder anew on every call, which a call's result pays.
    Call it with ``(value, 0)`` and join the parts. None when the standard library has no
    ``json.encoder.c_make_encoder`` (a private name; None where the accelerator is not
    built): the caller then encodes with ``json.JSONEncoder``, to the same text. Pinned by
    ``test_the_c_json_encoder_is_still_in_the_standard_library``."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    encoder: Callable[[Any, int], Any] = make(
        None, default, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )
    return encoder
