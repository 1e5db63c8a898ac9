"""McpCatalogAdapter: a server's listing, validated, filtered and named (SPEC §5, §6).

Two halves, following "decide, then act": :func:`read_listing` performs the I/O (every
page of ``tools/list`` under the caps of SPEC §5.2), and :func:`build_bindings` decides
synchronously what the listing means against one registry state. The runtime publishes
the result with no ``await`` in between, so no observer can see half of it (INV-3).
"""

from __future__ import annotations

import functools
import hashlib
import json
import marshal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol

import attrs

from mcpbind.model import texts
from mcpbind.model.naming import NameCollision, mcp_source
from mcpbind.model.values import Exclusion

from ..config.server import ServerConfig
from ..errors import CatalogRejected
from ..wire.sdk import find_invalid_x_mcp_header
from .registry import Binding, RegistryState, ToolSpec
from .structured import OutputSchema, output_schema, schema_problem

__all__ = [
    "MAX_CURSOR_BYTES",
    "MAX_PAGES",
    "MAX_TOOLS",
    "BuildBindings",
    "Decision",
    "ReadListing",
    "build_bindings",
    "first_invalid",
    "read_listing",
    "trace_tools",
]

MAX_PAGES = 100
MAX_TOOLS = 2048
MAX_CURSOR_BYTES = 64 * 1024
_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


ReadListing = Callable[
    [str, Callable[[str | None], Awaitable[Any]], Callable[[str | None], None]],
    Awaitable[list[Any]],
]
"""The shape of :func:`read_listing`: the seam a runtime reads listings through."""


@attrs.frozen
class Decision:
    """What a whole listing means against one registry state (SPEC §5.3-§5.5)."""

    bindings: tuple[Binding, ...]
    """The source's new catalog, in listing order."""
    excluded: tuple[Exclusion, ...] = ()
    """The valid tools left out (SPEC §5.4), in listing order."""


class BuildBindings(Protocol):
    """The shape of :func:`build_bindings`: the seam a runtime decides listings through."""

    def __call__(
        self,
        server: str,
        config: ServerConfig,
        tools: Sequence[Any],
        state: RegistryState,
        max_length: int,
        *,
        tasks: bool = True,
    ) -> Decision: ...


def _cap(server: str, cap: str) -> CatalogRejected:
    return CatalogRejected("cap", texts.REJECT_CAP.format(server=server, cap=cap), problem=cap)


def _bad_page(server: str, problem: str) -> CatalogRejected:
    reason = texts.REJECT_INVALID.format(server=server, tool="(page)", problem=problem)
    return CatalogRejected("invalid", reason, subject="(page)", problem=problem)


async def read_listing(
    server: str,
    list_page: Callable[[str | None], Awaitable[Any]],
    on_request: Callable[[str | None], None] = lambda cursor: None,
) -> list[Any]:
    """Every tool entry of every page, raw. ``on_request`` sees each cursor before it is
    sent (the recorder's ``tools/list`` messages). Raises CatalogRejected on a cap or a
    malformed page; ConnectionLost/RequestFailed pass through."""
    tools: list[Any] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        on_request(cursor)
        page = await list_page(cursor)
        if not isinstance(page, Mapping) or not isinstance(page.get("tools"), list):
            raise _bad_page(server, "the page has no list of tools")
        tools.extend(page["tools"])
        if len(tools) > MAX_TOOLS:
            raise _cap(server, f"more than {MAX_TOOLS} tools")
        cursor = page.get("nextCursor")
        if cursor is None:
            return tools
        if not isinstance(cursor, str):
            raise _bad_page(server, "nextCursor is not a string")
        if len(cursor.encode("utf-8", "surrogatepass")) > MAX_CURSOR_BYTES:
            raise _cap(server, f"a cursor longer than {MAX_CURSOR_BYTES} bytes")
        if cursor in seen:
            raise _cap(server, "a repeated cursor")
        seen.add(cursor)
    raise _cap(server, f"more than {MAX_PAGES} pages")


def _entry_problem(tool: Any) -> str | None:
    """Why a raw tool entry is not a named tool at all (SPEC §5.3), or None."""
    if not isinstance(tool, Mapping):
        return "the entry is not a JSON object"
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        return "name must be a non-empty string"
    return None


def _content_problem(tool: Mapping[str, Any]) -> str | None:
    """Why a named tool entry is invalid (SPEC §5.3), or None; its name listed twice is
    the listing's to see (:func:`first_invalid`)."""
    schema = tool.get("inputSchema")
    if not isinstance(schema, Mapping):
        return "inputSchema is not a JSON object"
    if "type" in schema and schema["type"] != "object":
        return f"inputSchema has type {schema['type']!r}, not 'object'"
    description = tool.get("description")
    if description is not None and not isinstance(description, str):
        return "description is not a string"
    annotations = tool.get("annotations")
    if annotations is not None:
        if not isinstance(annotations, Mapping):
            return "annotations is not a JSON object"
        for hint in _HINTS:
            if hint in annotations and not isinstance(annotations[hint], bool | None):
                return f"annotations.{hint} is not a boolean"
        title = annotations.get("title")
        if title is not None and not isinstance(title, str):
            return "annotations.title is not a string"
    if "outputSchema" in tool and tool["outputSchema"] is not None:
        problem = schema_problem(tool["outputSchema"])
        if problem is not None:
            return problem
    execution = tool.get("execution")
    if execution is not None:
        if not isinstance(execution, Mapping):
            return "execution is not a JSON object"
        support = execution.get("taskSupport")
        if support is not None and not isinstance(support, str):
            return "execution.taskSupport is not a string"
    meta = tool.get("_meta")
    if meta is not None and not isinstance(meta, Mapping):
        return "_meta is not a JSON object"
    visibility = _visibility(tool)
    if visibility is not None and not (
        isinstance(visibility, list) and all(isinstance(v, str) for v in visibility)
    ):
        return "_meta.ui.visibility is not a list of strings"
    return None


class _Facts:
    """What one raw tool entry says, whatever server lists it: its validity (SPEC §5.3),
    visibility, task support, and the :class:`ToolSpec` it makes. Decided once per
    distinct entry (:func:`_facts`): a refresh that lists a tool unchanged validates
    nothing again, compiles no schema again and builds no spec or binding again."""

    __slots__ = ("_binding", "_spec", "header_problem", "name", "problem", "read_only", "visible")

    def __init__(self, tool: Any) -> None:
        self.problem = _entry_problem(tool)
        """Its problem, the entry's (not an object, no name) before its content's."""
        self.name: str = "" if self.problem is not None else tool["name"]
        """Its raw name; "" when it has none."""
        self.read_only = False
        self.visible = False
        """Whether the model may see it (``_meta.ui.visibility``)."""
        self.header_problem: str | None = None
        """Its invalid ``x-mcp-header`` annotation, by the SDK's rule (SPEC §5.4)."""
        self._binding: Binding | None = None
        self._spec: ToolSpec | None = None
        if self.problem is None:
            self.problem = _content_problem(tool)
        if self.problem is not None:
            return
        annotations = tool.get("annotations")
        output = tool.get("outputSchema")
        self.read_only = bool(annotations and annotations.get("readOnlyHint") is True)
        self.visible = model_visible(tool)
        self.header_problem = find_invalid_x_mcp_header(tool["inputSchema"])
        self._spec = ToolSpec(
            name="",  # named by its first binding
            description=tool.get("description") or "",
            input_schema=MappingProxyType(dict(tool["inputSchema"])),
            annotations=None if annotations is None else MappingProxyType(dict(annotations)),
            output_schema=None if output is None else MappingProxyType(dict(output)),
            output_check=None if output is None else _checked_schema(output),
            task_support=_task_support(tool),
        )

    def _valid_spec(self) -> ToolSpec:
        assert self._spec is not None, "only a valid tool is asked"
        return self._spec

    @property
    def task_support(self) -> str | None:
        return self._valid_spec().task_support

    def binding(self, name: str, source: str, server: str) -> Binding:
        """Its binding under the public ``name``; the last one made is kept, so that a
        listing named as before binds nothing anew (and the registry compares the very
        same specs, INV-1)."""
        made = self._binding
        if made is not None and made.name == name and made.source == source:
            return made
        spec = self._valid_spec()
        if spec.name != name:
            spec = self._spec = attrs.evolve(spec, name=name)
        made = self._binding = Binding(name, source, server, self.name, spec, 0, self.read_only)
        return made


_FACTS_KEPT = 4 * MAX_TOOLS  # pragma: no mutate - a cache's size: speed only
"""Distinct tool entries whose facts are kept (least recently listed dropped first)."""


@functools.lru_cache(maxsize=_FACTS_KEPT)  # pragma: no mutate - speed only (docs/development.md)
def _kept_facts(key: bytes) -> _Facts:
    return _Facts(marshal.loads(key))


def _facts(tool: Any) -> _Facts:
    """The facts of ``tool``, cached by its ``marshal`` serialisation: equal bytes are
    equal values of the same exact types (``True``, ``1`` and ``1.0`` differ, as the
    checks of SPEC §5.3 tell them apart, where ``==`` does not). What ``marshal`` cannot
    write (an object, a subclass of a builtin type, nesting over its depth limit) is
    decided afresh, uncached."""
    try:
        key = marshal.dumps(tool)
    except ValueError:
        return _Facts(tool)
    return _kept_facts(key)


def _visibility(tool: Mapping[str, Any]) -> Any:
    meta = tool.get("_meta")
    if not isinstance(meta, Mapping):
        return None
    ui = meta.get("ui")
    return ui.get("visibility") if isinstance(ui, Mapping) else None


def model_visible(tool: Mapping[str, Any]) -> bool:
    """Absent metadata means visible; a visibility list without "model" hides it."""
    visibility = _visibility(tool)
    return visibility is None or "model" in visibility


def _task_support(tool: Mapping[str, Any]) -> str | None:
    execution = tool.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    return support if isinstance(support, str) else None


def exclusion(
    server: str, tool: Mapping[str, Any], over_http: bool, *, tasks: bool = True
) -> Exclusion | None:
    """Why a valid tool is left out of the catalog (SPEC §5.4), or None: it can only be
    called as a task and its server (``tasks`` False) runs none, or (on HTTP) its
    ``x-mcp-header`` annotation is invalid, checked by the SDK's own rule
    (``find_invalid_x_mcp_header``)."""
    name = tool["name"]
    if not tasks and _task_support(tool) == "required":
        reason = texts.excluded_text("task_required", server=server, tool=name)
        return Exclusion(name, "task_required", reason)
    if over_http:
        problem = find_invalid_x_mcp_header(tool["inputSchema"])
        if problem is not None:
            reason = texts.excluded_text("x_mcp_header", server=server, tool=name, problem=problem)
            return Exclusion(name, "x_mcp_header", reason)
    return None


def trace_tools(
    server: str, config: ServerConfig, tools: Sequence[Any], *, tasks: bool
) -> list[dict[str, Any]]:
    """A listing as a trace carries it (SPEC §14.1): per tool what the model's rules look
    at, decided exactly as :func:`build_bindings` decides it, and a digest of the rest.
    An invalid tool ends the list: it rejects the listing whatever follows."""
    entries: list[dict[str, Any]] = []
    invalid = first_invalid(tools)
    for tool in tools[: len(tools) if invalid is None else invalid[0]]:
        entry: dict[str, Any] = {"name": tool["name"], "spec": _digest(tool)}
        annotations = tool.get("annotations")
        if annotations and annotations.get("readOnlyHint") is True:
            entry["read_only"] = True
        if not model_visible(tool):
            entry["hidden"] = True
        found = exclusion(server, tool, config.over_http, tasks=tasks)
        if found is not None:
            entry["excluded"] = found.kind
            if found.kind == "x_mcp_header":
                entry["problem"] = find_invalid_x_mcp_header(tool["inputSchema"])
        entries.append(entry)
    if invalid is not None:
        _, shown, problem = invalid
        entries.append({"name": shown, "problem": problem})
    return entries


def first_invalid(tools: Sequence[Any]) -> tuple[int, str, str] | None:
    """The first invalid tool of a listing (SPEC §5.3): its index, how a text names it (its
    name, else ``#<index>``) and its problem; None when every tool is valid."""
    return _first_invalid([_facts(tool) for tool in tools])


def _first_invalid(facts: Sequence[_Facts]) -> tuple[int, str, str] | None:
    names: set[str] = set()
    for index, fact in enumerate(facts):
        name = fact.name
        if not name:  # no name: the entry's own problem
            return index, f"#{index}", fact.problem or ""
        if name in names:
            return index, name, "the name is listed twice"
        if fact.problem is not None:
            return index, name, fact.problem
        names.add(name)
    return None


_DIGEST_ENCODE = json.JSONEncoder(sort_keys=True, default=str, ensure_ascii=False).encode
"""``json.dumps(kept, sort_keys=True, default=str, ensure_ascii=False)``, its encoder made
once (every tool of every listing is digested)."""


def _digest(tool: Mapping[str, Any]) -> str:
    """What :class:`ToolSpec` keeps of a tool, and so what makes a refresh a change."""
    kept = [
        tool.get("description") or "",
        tool.get("inputSchema"),
        tool.get("annotations"),
        tool.get("outputSchema"),
        _task_support(tool),
    ]
    text = _DIGEST_ENCODE(kept)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def build_bindings(
    server: str,
    config: ServerConfig,
    tools: Sequence[Any],
    state: RegistryState,
    max_length: int,
    *,
    tasks: bool = True,
) -> Decision:
    """Validate, filter, leave out and name a whole listing against ``state`` (SPEC
    §5.3-§5.5); ``tasks``: the server runs calls as tasks (SPEC §5.4, §8.12).

    Raises CatalogRejected (``invalid`` or ``collision``); touches nothing."""
    facts = [_facts(tool) for tool in tools]
    invalid = _first_invalid(facts)
    if invalid is not None:
        _, shown, problem = invalid
        raise CatalogRejected(
            "invalid", texts.REJECT_INVALID.format(server=server, tool=shown, problem=problem)
        )
    enabled, disabled = config.enabled_tools, config.disabled_tools
    kept = [
        fact
        for fact in facts
        if (enabled is None or fact.name in enabled) and fact.name not in disabled and fact.visible
    ]
    excluded: list[Exclusion] = []
    over_http = config.over_http
    if over_http or not tasks:
        for fact in kept:
            if not tasks and fact.task_support == "required":
                reason = texts.excluded_text("task_required", server=server, tool=fact.name)
                excluded.append(Exclusion(fact.name, "task_required", reason))
            elif over_http and (header := fact.header_problem) is not None:
                reason = texts.excluded_text(
                    "x_mcp_header", server=server, tool=fact.name, problem=header
                )
                excluded.append(Exclusion(fact.name, "x_mcp_header", reason))
        if excluded:
            left_out = {e.tool for e in excluded}
            kept = [fact for fact in kept if fact.name not in left_out]
    assignment = state.name_tools(server, (fact.name for fact in kept), max_length)
    if isinstance(assignment, NameCollision):
        raise CatalogRejected(
            "collision",
            texts.REJECT_COLLISION.format(
                tool=assignment.identity[1],
                server=server,
                name=assignment.name,
                owner=assignment.owner,
            ),
        )
    source = mcp_source(server)
    bindings = tuple(fact.binding(assignment[(server, fact.name)], source, server) for fact in kept)
    return Decision(bindings, tuple(excluded))


def _checked_schema(schema: Any) -> OutputSchema:
    """The compiled schema of a tool :func:`_problem` accepted (a cache hit)."""
    found = output_schema(schema)
    assert isinstance(found, OutputSchema), found
    return found
