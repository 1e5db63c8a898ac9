"""Resources the model can use: three builtin tools over the step's catalogs (SPEC §11.20).

Theory of operation. A server's resources and resource templates are part of its catalog
(:class:`.registry.Resources`): the refresh that lists its tools lists them too, and one
publication installs both, under one generation (INV-1). A step captures them with the
rest of its registry state (INV-2), so:

- ``list_mcp_resources`` and ``list_mcp_resource_templates`` answer from the step's own
  registry state, not from the live servers: nothing is sent, and what the model reads is
  what the step saw (paged here, ``cursor`` an offset this module made);
- ``read_mcp_resource`` of a URI the step listed is a call: a :class:`.registry.Binding`
  made for that one read (``resource=True``, the URI as its remote name) goes the way of
  any MCP call (approval, the binding policy, the connection, the lane, the timeout, one
  result). Under ``revalidate`` a URI the live catalog no longer lists ends
  ``unavailable`` with nothing sent; under ``frozen`` it is read as captured. A URI the
  step never listed (made from a template, or named by a ``resource_link``) is read as
  given: there is nothing to revalidate.

The tools are shown while a catalog of the step's registry state lists a resource or a
resource template, unless the host turned them off (``resource_tools = false``).
Argument shapes are Codex's (``codex-rs/core/src/tools/handlers/mcp_resource.rs``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Any, Literal

from mcpbind.model import texts
from mcpbind.model.naming import BUILTIN, is_mcp_source, mcp_source, source_owner

from ..config.server import RESOURCE_TOOL_NAMES
from ..errors import CatalogRejected
from .registry import Binding, RegistryState, Resources, ToolSpec
from .schemas import compact_json

__all__ = [
    "LIST_RESOURCES",
    "LIST_TEMPLATES",
    "PAGE_SIZE",
    "READ_RESOURCE",
    "RESOURCE_TOOLS",
    "list_output",
    "lists_resources",
    "read_binding",
    "read_resources",
    "resource_tool_bindings",
    "trace_resources",
]

RESOURCE_TOOLS = RESOURCE_TOOL_NAMES
LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE = RESOURCE_TOOLS
PAGE_SIZE = 100
"""Entries per answer of the two list tools; ``nextCursor`` gives the next page."""

_SERVER = {"type": "string", "description": texts.RESOURCE_SERVER_ARGUMENT}
_CURSOR = {"type": "string", "description": texts.RESOURCE_CURSOR_ARGUMENT}
_LIST_SCHEMA: Mapping[str, Any] = MappingProxyType(
    {
        "type": "object",
        "properties": {"server": _SERVER, "cursor": _CURSOR},
        "additionalProperties": False,
    }
)
_READ_SCHEMA: Mapping[str, Any] = MappingProxyType(
    {
        "type": "object",
        "properties": {
            "server": _SERVER,
            "uri": {"type": "string", "description": texts.RESOURCE_URI_ARGUMENT},
        },
        "required": ["server", "uri"],
        "additionalProperties": False,
    }
)
_READ_ONLY: Mapping[str, Any] = MappingProxyType({"readOnlyHint": True})
_SPECS = {
    LIST_RESOURCES: ToolSpec(LIST_RESOURCES, texts.LIST_RESOURCES_DESCRIPTION, _LIST_SCHEMA),
    LIST_TEMPLATES: ToolSpec(LIST_TEMPLATES, texts.LIST_TEMPLATES_DESCRIPTION, _LIST_SCHEMA),
    READ_RESOURCE: ToolSpec(
        READ_RESOURCE, texts.READ_RESOURCE_DESCRIPTION, _READ_SCHEMA, _READ_ONLY
    ),
}


def resource_tool_bindings() -> tuple[Binding, ...]:
    """The three builtin tools, made once per host (an exposure shows these objects)."""
    return tuple(
        Binding(name, BUILTIN, None, name, _SPECS[name], 0, read_only=True)
        for name in RESOURCE_TOOLS
    )


def lists_resources(state: RegistryState) -> bool:
    """A catalog of ``state`` lists a resource or a resource template (SPEC §11.20): a
    server that declares the capability and lists nothing (``MCPServer`` always declares
    it) does not bring the tools."""
    return any(c.resources.resources or c.resources.templates for c in state.catalogs.values())


def _servers(state: RegistryState) -> list[str]:
    """The servers of ``state`` that declare resources, sorted."""
    return sorted(
        source_owner(source)
        for source, catalog in state.catalogs.items()
        if is_mcp_source(source) and catalog.resources.declared
    )


def _text(value: Any) -> str | None:
    """An optional string argument: absent, empty or blank reads as absent (Codex's)."""
    return value.strip() or None if isinstance(value, str) else None


def list_output(
    state: RegistryState, tool: str, arguments: Mapping[str, Any]
) -> tuple[Literal["ok", "error"], str]:
    """``(status, body)`` of ``list_mcp_resources`` or ``list_mcp_resource_templates``,
    answered from ``state``, the step's registry state (INV-2)."""
    key = "resources" if tool == LIST_RESOURCES else "resourceTemplates"
    for name in ("server", "cursor"):
        if name in arguments and not isinstance(arguments[name], str):
            return "error", texts.RESOURCE_BAD_ARGUMENTS.format(
                name=tool, problem=f"{name} must be a string"
            )
    server, cursor = _text(arguments.get("server")), _text(arguments.get("cursor"))
    if server is None:
        if cursor is not None:
            problem = "cursor can only be used when a server is specified"
            return "error", texts.RESOURCE_BAD_ARGUMENTS.format(name=tool, problem=problem)
        servers = _servers(state)
    else:
        catalog = state.catalogs.get(mcp_source(server))
        if catalog is None or not catalog.resources.declared:
            return "error", texts.RESOURCE_NO_SERVER.format(server=server)
        servers = [server]
    entries: list[dict[str, Any]] = []
    for name in servers:
        resources = state.catalog(mcp_source(name)).resources
        listed = resources.resources if tool == LIST_RESOURCES else resources.templates
        entries.extend({"server": name, **entry} for entry in listed)
    start = 0
    if cursor is not None:
        if not cursor.isdigit() or int(cursor) > len(entries):
            problem = f"unknown cursor {cursor!r}: give one this tool returned"
            return "error", texts.RESOURCE_BAD_ARGUMENTS.format(name=tool, problem=problem)
        start = int(cursor)
    page: dict[str, Any] = {}
    if server is not None:
        page["server"] = server
    page[key] = entries[start : start + PAGE_SIZE]
    if server is not None and start + PAGE_SIZE < len(entries):
        page["nextCursor"] = str(start + PAGE_SIZE)
    return "ok", compact_json(page)


def read_binding(state: RegistryState, arguments: Mapping[str, Any]) -> Binding | str:
    """What ``read_mcp_resource`` reads in a step of ``state``: a binding made for this
    read (``resource=True``, the URI its remote name), or the text of an ``error``."""
    server, uri = arguments.get("server"), arguments.get("uri")
    for name, value in (("server", server), ("uri", uri)):
        if not isinstance(value, str) or not value.strip():
            problem = f"{name} must be a non-empty string"
            return texts.RESOURCE_BAD_ARGUMENTS.format(name=READ_RESOURCE, problem=problem)
    assert isinstance(server, str)
    assert isinstance(uri, str)
    server, uri = server.strip(), uri.strip()
    source = mcp_source(server)
    catalog = state.catalogs.get(source)
    if catalog is None or not catalog.resources.declared:
        return texts.RESOURCE_NO_SERVER.format(server=server)
    spec = _SPECS[READ_RESOURCE]
    how: Literal["listed", "unlisted"] = "listed" if uri in catalog.resources.uris else "unlisted"
    return Binding(
        READ_RESOURCE, source, server, uri, spec, catalog.generation, read_only=True, resource=how
    )


MAX_PAGES = 100
MAX_ENTRIES = 10_000
"""Caps on one server's resource lists, each (SPEC §5.2's, for resources)."""


async def _read_all(
    server: str, list_page: Callable[[str | None], Awaitable[Any]], key: str, field: str
) -> tuple[Mapping[str, Any], ...]:
    """Every entry of every page of one list; raises CatalogRejected on a cap or a
    malformed page or entry (the refresh is then rejected, the catalog kept: INV-3)."""
    entries: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await list_page(cursor)
        listed = page.get(key) if isinstance(page, Mapping) else None
        if not isinstance(listed, list):
            raise _invalid(server, f"the {key} page has no list of {key}")
        for entry in listed:
            if not isinstance(entry, Mapping) or not isinstance(entry.get(field), str):
                raise _invalid(server, f"an entry of {key} has no string {field}")
            entries.append(entry)
        if len(entries) > MAX_ENTRIES:
            cap = f"more than {MAX_ENTRIES} {key}"
            raise CatalogRejected(
                "cap", texts.REJECT_CAP.format(server=server, cap=cap), problem=cap
            )
        cursor = page.get("nextCursor")
        if cursor is None:
            return tuple(entries)
        if not isinstance(cursor, str) or cursor in seen:
            raise _invalid(server, f"the {key} pages repeat a cursor or give one not a string")
        seen.add(cursor)
    raise _cap(server, f"more than {MAX_PAGES} pages of {key}")


def _cap(server: str, cap: str) -> CatalogRejected:
    return CatalogRejected("cap", texts.REJECT_CAP.format(server=server, cap=cap), problem=cap)


def _invalid(server: str, problem: str) -> CatalogRejected:
    reason = texts.REJECT_INVALID.format(server=server, tool="(resources)", problem=problem)
    return CatalogRejected("invalid", reason, subject="(resources)", problem=problem)


async def read_resources(server: str, list_page: Callable[..., Awaitable[Any]]) -> Resources:
    """A server's resources and resource templates, every page of each (SPEC §11.20):
    ``list_page(cursor, templates=...)`` is the connection's ``list_resources``."""
    resources = await _read_all(server, list_page, "resources", "uri")
    templates = await _read_all(
        server, lambda cursor: list_page(cursor, templates=True), "resourceTemplates", "uriTemplate"
    )
    return Resources(True, resources, templates)


def trace_resources(resources: Resources) -> list[dict[str, Any]]:
    """The resources of a listing as the trace's ``list_done`` shows them (SPEC §14.1):
    each a catalog entry of the model (``resource``), named by its URI (a template by
    ``template:`` and its URI template), ``spec`` a digest of the rest."""
    entries = []
    for prefix, field, listed in (
        ("", "uri", resources.resources),
        ("template:", "uriTemplate", resources.templates),
    ):
        for entry in listed:
            digest = hashlib.sha256(compact_json(entry).encode("utf-8", "surrogatepass"))
            entries.append(
                {"name": prefix + entry[field], "resource": True, "spec": digest.hexdigest()[:16]}
            )
    return entries
