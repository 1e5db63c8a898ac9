"""Exposure: the tools one step shows and routes (SPEC §11.9).

Theory of operation. A step's *exposure* is its plan and its router at once (INV-2): a
sorted tuple of specs and the name -> binding table built from the same bindings. It is
a function of two inputs that change rarely: the registry state the step samples, and
the MCP identities that ``tool_search`` has discovered in this host session. So the
:class:`Exposer` caches the exposure per (registry state, discovered version), and
``Host.sample()`` stays O(1) amortised.

- Per registry state (one :class:`StateView`, built once per publication): each MCP tool
  whose input schema's compact JSON is longer than ``schema_limit_bytes`` gets a
  shortened spec (:func:`.schemas.shorten_schema`; the full schema stays on
  ``ToolSpec.shortened_from``), and the state is *deferring* when it holds more
  model-visible tools (builtins and MCP) than ``defer_threshold`` and at least one MCP
  tool. Its BM25 index is built at the first search of that state.
- Per discovered version: a deferring state shows its builtins, ``tool_search`` and the
  discovered MCP tools only; every other MCP tool is not in the plan and so not in the
  router (a call to it is ``unsupported`` in that step). A state that does not defer
  shows every tool, and ``tool_search`` is not a tool of its steps.
- ``tool_search`` ranks the MCP tools of the step's own registry state and marks the
  matches discovered; the step it runs in is unchanged (INV-2), the next ``sample()``
  exposes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import attrs

from mcpbind.model import texts
from mcpbind.model.naming import BUILTIN, Identity

from ..config.server import TOOL_SEARCH
from .registry import Binding, RegistryState, ToolSpec
from .resources import lists_resources
from .schemas import compact_json, shorten_spec

__all__ = [
    "DEFAULT_SEARCH_LIMIT",
    "MAX_SEARCH_LIMIT",
    "Exposer",
    "Exposure",
    "StateView",
    "parse_search_arguments",
    "search_output",
    "search_words",
]

DEFAULT_SEARCH_LIMIT = 8
MAX_SEARCH_LIMIT = 50
SEARCH_SCHEMA: Mapping[str, Any] = MappingProxyType(
    {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SEARCH_LIMIT,
                "default": DEFAULT_SEARCH_LIMIT,
            },
        },
        "required": ["query"],
    }
)


# --- search -----------------------------------------------------------------------------

_PIECE = re.compile(r"[^\W_]+")  # runs of letters and digits: "_", "-", "." ... split
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def search_words(text: str) -> str:
    """``text`` with its identifiers split into words: every character that is not a letter
    or digit (``_`` included) separates, and so does a camelCase boundary
    (``mcp__git__createIssue`` -> ``mcp git create Issue``, ``HTTPServer`` -> ``HTTP
    Server``). bm25s then lowercases, keeps words of two or more characters and drops
    English stopwords."""
    return " ".join(_CAMEL.sub(" ", piece) for piece in _PIECE.findall(text))


def _tokenize(texts_: list[str]) -> list[list[str]]:
    import bm25s  # noqa: PLC0415 - numpy is loaded at the first search only

    tokens: list[list[str]] = bm25s.tokenize(
        [search_words(t) for t in texts_],
        lower=True,
        stopwords="en",
        return_ids=False,
        show_progress=False,
    )
    return tokens


@attrs.define(eq=False)
class _Index:
    """BM25 over the words of each MCP tool's public name and description."""

    bindings: tuple[Binding, ...]
    retriever: Any

    @classmethod
    def build(cls, bindings: tuple[Binding, ...]) -> _Index:
        import bm25s  # noqa: PLC0415 - numpy is loaded at the first search only

        corpus = _tokenize([f"{b.name}\n{b.spec.description}" for b in bindings])
        if not any(corpus):
            return cls(bindings, None)  # bm25s cannot index a corpus without any word
        retriever = bm25s.BM25()
        retriever.index(corpus, show_progress=False)
        return cls(bindings, retriever)

    def search(self, query: str, limit: int) -> list[Binding]:
        words = _tokenize([query])[0]
        if self.retriever is None or not words:
            return []
        scores = self.retriever.get_scores(words)
        hits = [i for i in range(len(self.bindings)) if scores[i] > 0]
        hits.sort(key=lambda i: (-float(scores[i]), self.bindings[i].name))
        return [self.bindings[i] for i in hits[:limit]]


# --- the exposure -----------------------------------------------------------------------


@attrs.define(eq=False)
class StateView:
    """One registry state as the host shows it: built once per publication."""

    state: RegistryState
    by_name: Mapping[str, Binding]
    """Every binding, shortened where its schema is over the limit."""
    specs: tuple[ToolSpec, ...]
    mcp: tuple[Binding, ...]
    """The MCP bindings, sorted by name: what ``tool_search`` ranks."""
    deferring: bool
    index: _Index | None = None

    @classmethod
    def build(
        cls,
        state: RegistryState,
        threshold: int | None,
        limit: int | None,
        resource_tools: tuple[Binding, ...] = (),
    ) -> StateView:
        shortened: dict[str, Binding] = {}
        for binding in state.by_name.values():
            if binding.server is not None:
                spec = shorten_spec(binding.spec, limit)
                if spec is not binding.spec:
                    shortened[binding.name] = attrs.evolve(binding, spec=spec)
        by_name = state.by_name
        specs = state.specs
        if resource_tools and lists_resources(state):
            # SPEC §11.20: the resource tools, while a catalog of the state lists a resource
            shortened.update((b.name, b) for b in resource_tools)
        if shortened:
            by_name = MappingProxyType({**state.by_name, **shortened})
            specs = tuple(by_name[name].spec for name in sorted(by_name))
        mcp = tuple(by_name[s.name] for s in specs if by_name[s.name].server is not None)
        deferring = threshold is not None and bool(mcp) and len(by_name) > threshold
        return cls(state, by_name, specs, mcp, deferring)

    def search(self, query: str, limit: int) -> list[Binding]:
        """The MCP tools of this state that best match ``query``: BM25 score, highest
        first, ties by name; tools no query word matches are left out."""
        if self.index is None:
            self.index = _Index.build(self.mcp)
        return self.index.search(query, limit)


@attrs.frozen(eq=False)
class Exposure:
    """A step's plan (``specs``) and router (``by_name``), built from the same bindings."""

    specs: tuple[ToolSpec, ...]
    by_name: Mapping[str, Binding]
    view: StateView
    deferred: int
    """MCP tools of the registry state this step does not show (``tool_search`` finds
    them)."""


def _search_binding() -> Binding:
    spec = ToolSpec(TOOL_SEARCH, texts.TOOL_SEARCH_DESCRIPTION, SEARCH_SCHEMA)
    return Binding(TOOL_SEARCH, BUILTIN, None, TOOL_SEARCH, spec, 0, read_only=True)


@attrs.define(eq=False)
class Exposer:
    """The host's exposure policy and the identities ``tool_search`` discovered."""

    threshold: int | None
    limit: int | None
    resource_tools: tuple[Binding, ...] = ()
    """The three resource tools (SPEC §11.20); empty when the host turned them off."""
    search_binding: Binding = attrs.field(factory=_search_binding)
    _discovered: frozenset[Identity] = frozenset()
    _version: int = 0
    _view: StateView | None = None
    _cached: Exposure | None = None
    _cached_version: int = -1  # pragma: no mutate - read only beside ``_cached``, set with it

    @property
    def discovered(self) -> frozenset[Identity]:
        return self._discovered

    def expose(self, state: RegistryState) -> Exposure:
        """The exposure of a step sampled now from ``state`` (cached: O(1) amortised)."""
        cached = self._cached
        if (
            cached is not None
            and cached.view.state is state
            and self._cached_version == self._version
        ):
            return cached
        view = self._view
        if view is None or view.state is not state:
            view = self._view = StateView.build(
                state, self.threshold, self.limit, self.resource_tools
            )
        if not view.deferring:
            exposure = Exposure(view.specs, view.by_name, view, 0)
        else:
            shown = [b for b in view.by_name.values() if b.server is None]
            shown.append(self.search_binding)
            found = [b for b in view.mcp if b.identity in self._discovered]
            shown.extend(found)
            shown.sort(key=lambda b: b.name)
            exposure = Exposure(
                tuple(b.spec for b in shown),
                MappingProxyType({b.name: b for b in shown}),
                view,
                len(view.mcp) - len(found),
            )
        self._cached, self._cached_version = exposure, self._version
        return exposure

    def discover(self, bindings: Iterable[Binding]) -> None:
        """Show these MCP tools in every step sampled from now on."""
        new = self._discovered | {b.identity for b in bindings}
        if new != self._discovered:
            self._discovered = new
            self._version += 1


def parse_search_arguments(arguments: Mapping[str, Any]) -> tuple[str, int] | str:
    """``(query, limit)`` from ``tool_search``'s arguments, or what is wrong with them."""
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        return "query must be a non-empty string"
    limit = arguments.get("limit", DEFAULT_SEARCH_LIMIT)
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)
    if isinstance(limit, bool) or not isinstance(limit, int):
        return "limit must be an integer"
    if not 1 <= limit <= MAX_SEARCH_LIMIT:
        return f"limit must be from 1 to {MAX_SEARCH_LIMIT}, got {limit}"
    return query, limit


def search_output(query: str, found: list[Binding]) -> str:
    """The model-visible body of a ``tool_search`` result (after the wall-time header)."""
    if not found:
        return texts.SEARCH_NONE.format(query=query)
    tools = [
        {
            "name": b.name,
            "description": b.spec.description,
            "input_schema": b.spec.input_schema,
        }
        for b in found
    ]
    head = texts.SEARCH_FOUND.format(count=len(found), query=query)
    return f"{head}\n{compact_json({'tools': tools})}"
