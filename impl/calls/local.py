"""Calls the host runs itself: builtin and extension tools (SPEC §11.11) and
``tool_search`` (SPEC §11.9). Nothing is sent to a server."""

from __future__ import annotations

from typing import Any

import anyio

from mcpbind.model import texts

from ..catalog.exposure import MAX_SEARCH_LIMIT, parse_search_arguments, search_output
from ..catalog.planner import Planner, StepSnapshot
from ..catalog.registry import Binding, RegistryState
from ..catalog.resources import list_output
from .encoding import wall_time_header
from .endings import Ending
from .table import PendingCall

__all__ = ["list_resources", "run_local", "tool_search"]


async def run_local(call: PendingCall, binding: Binding, arguments: dict[str, Any]) -> Ending:
    """A builtin or extension tool: the handler captured in the step's binding (INV-2).
    What the handler raises is the router's to translate (the tool's ``error``)."""
    handler = binding.handler
    assert handler is not None, "a non-MCP binding carries its handler"
    call.run_local()
    output = await handler(arguments)
    return Ending("ok", f"{wall_time_header(anyio.current_time() - call.started)}\n{output}")


def tool_search(planner: Planner, step: StepSnapshot, arguments: dict[str, Any]) -> Ending:
    """SPEC §11.9: rank the step's MCP tools, discover the matches for later steps."""
    started = anyio.current_time()
    parsed = parse_search_arguments(arguments)
    if isinstance(parsed, str):
        text = texts.SEARCH_BAD_ARGUMENTS.format(problem=parsed, maximum=MAX_SEARCH_LIMIT)
        return Ending("error", text)
    query, limit = parsed
    found = step.exposure.view.search(query, limit)
    planner.discover(found)
    header = wall_time_header(anyio.current_time() - started)
    return Ending("ok", f"{header}\n{search_output(query, found)}")


def list_resources(state: RegistryState, tool: str, arguments: dict[str, Any]) -> Ending:
    """SPEC §11.20: ``list_mcp_resources`` or ``list_mcp_resource_templates``, answered from
    ``state``, the step's own registry state (INV-2): nothing is sent."""
    started = anyio.current_time()
    status, body = list_output(state, tool, arguments)
    if status == "error":
        return Ending("error", body)
    return Ending("ok", f"{wall_time_header(anyio.current_time() - started)}\n{body}")
