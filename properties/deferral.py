"""What a deferring host must show and what its ``tool_search`` must answer (SPEC §11.9).

The lockstep machine's oracle for its ``deferral`` variant: written from the rules of
SPEC §11.9 over the model's own snapshot of a step, not by calling the runtime's
exposure (``impl/catalog/exposure.py``), so that the machine can hold the runtime to it.

* :func:`shown_names` — the names a step sampled from a registry state shows while the
  host defers (None: it shows every tool). The machine maps the model's snapshot through
  it with :func:`mcpbind.model.refine.deferring_view`, the one mapping trace refinement
  uses too.
* :func:`expected_search` — a ``tool_search`` call's status, its text after the wall-time
  line, and the identities it discovers: the argument checks, BM25 (the Lucene variant,
  k1 = 1.5, b = 0.75) over one document per MCP tool of the step's registry state (its
  public name, then its description), ties by name, the first ``limit``.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Set
from typing import Any

import attrs

from mcpbind.model import texts
from mcpbind.model.refine import TOOL_SEARCH
from mcpbind.model.texts import CallStatus
from mcpbind.model.values import Binding, Registry

from .parked import DESCRIPTIONS

__all__ = [
    "DEFER_THRESHOLD",
    "SEARCHES",
    "SearchAnswer",
    "expected_search",
    "search_words",
    "shown_names",
]

DEFER_THRESHOLD = 1
"""The ``defer_threshold`` of the machine's deferring host. Its bound has two host tools
(``shell``, the extension's ``admin``): more than the threshold, so a step defers as soon
as one MCP tool is installed, and before that it shows every tool (SPEC §11.9: more
tools than the threshold *and* at least one MCP tool). A step under the threshold is
every other variant's (the default of 100)."""

SEARCHES: tuple[Mapping[str, Any], ...] = (
    {"query": "search"},
    {"query": "read a file"},
    {"query": "writeFile"},
    {"query": "repository settings", "limit": 1},
    {"query": "git_hub", "limit": 2.0},
    {"query": "weather"},
    {"query": "the"},
    {"query": "  "},
    {"limit": 3},
    {"query": "read", "limit": 0},
    {"query": "read", "limit": "3"},
    {"query": "read", "limit": True},
)
"""The ``tool_search`` arguments the machine offers: words of the scripted tools' names
and descriptions (one camelCase, one limited to the best match, one matching every
tool), words no tool has, a stopword alone, and invalid arguments."""

_K1 = 1.5
_B = 0.75
_MAX_LIMIT = 50
_DEFAULT_LIMIT = 8


def shown_names(
    snapshot: Registry, threshold: int | None, discovered: Set[tuple[str, str]]
) -> frozenset[str] | None:
    """SPEC §11.9 *Deferral*: with ``threshold`` set, more tools than it in ``snapshot``
    (builtin, extension and MCP) and at least one MCP tool, the step shows every non-MCP
    tool, ``tool_search`` and each MCP tool whose identity ``(server, raw name)`` a search
    discovered; otherwise (None) every tool and no ``tool_search``."""
    bindings = [b for c in snapshot.catalogs for b in c.bindings]
    mcp = [b for b in bindings if b.server is not None]
    if threshold is None or not mcp or len(bindings) <= threshold:
        return None
    shown = {b.name for b in bindings if b.server is None} | {TOOL_SEARCH}
    shown |= {b.name for b in mcp if (b.server, b.remote_name) in discovered}
    return frozenset(shown)


@attrs.frozen
class SearchAnswer:
    """A ``tool_search`` call's result as SPEC §11.9 gives it."""

    status: CallStatus
    text: str
    """Of an ``ok`` result, what follows its wall-time line; else the whole text."""
    found: tuple[tuple[str, str], ...] = ()
    """The identities the search discovers, best first."""


def expected_search(
    snapshot: Registry,
    arguments: Mapping[str, Any],
    descriptions: Mapping[str, str] = DESCRIPTIONS,
) -> SearchAnswer:
    """A ``tool_search`` of a deferring step sampled from ``snapshot`` (SPEC §11.9, 1-3),
    each MCP tool described as ``descriptions`` says by its raw name (the scripted
    servers' own, by default; every input schema ``{"type": "object"}``)."""
    query = arguments.get("query")
    limit = arguments.get("limit", _DEFAULT_LIMIT)
    problem = None
    if not isinstance(query, str) or not query.strip():
        problem = "query must be a non-empty string"
    elif isinstance(limit, bool) or not (
        isinstance(limit, int) or (isinstance(limit, float) and limit.is_integer())
    ):
        problem = "limit must be an integer"
    elif not 1 <= int(limit) <= _MAX_LIMIT:
        problem = f"limit must be from 1 to {_MAX_LIMIT}, got {int(limit)}"
    if problem is not None:
        text = texts.SEARCH_BAD_ARGUMENTS.format(problem=problem, maximum=_MAX_LIMIT)
        return SearchAnswer("error", text)
    assert isinstance(query, str)
    mcp = sorted(
        (b for c in snapshot.catalogs for b in c.bindings if b.server is not None),
        key=lambda b: b.name,
    )
    found = _rank(mcp, query, descriptions)[: int(limit)]
    if not found:
        return SearchAnswer("ok", texts.SEARCH_NONE.format(query=query))
    tools = [
        {
            "name": b.name,
            "description": descriptions.get(b.remote_name, ""),
            "input_schema": {"type": "object"},
        }
        for b in found
    ]
    head = texts.SEARCH_FOUND.format(count=len(found), query=query)
    body = json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False)
    identities = tuple((b.server or "", b.remote_name) for b in found)
    return SearchAnswer("ok", f"{head}\n{body}", identities)


def _rank(tools: list[Binding], query: str, descriptions: Mapping[str, str]) -> list[Binding]:
    """BM25, Lucene variant: a tool no query word occurs in scores 0 and is left out."""
    documents = [
        Counter(search_words(f"{b.name}\n{descriptions.get(b.remote_name, '')}")) for b in tools
    ]
    if not documents:
        return []
    lengths = [sum(d.values()) for d in documents]
    average = sum(lengths) / len(lengths)
    if average == 0:
        return []
    frequency = Counter(word for d in documents for word in d)
    count = len(documents)
    scores = []
    for document, length in zip(documents, lengths, strict=True):
        score = 0.0
        for word in search_words(query):  # a repeated query word counts each time
            tf = document.get(word, 0)
            if tf:
                df = frequency[word]
                idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
                score += idf * tf / (tf + _K1 * (1 - _B + _B * length / average))
        scores.append(score)
    hits = [i for i, s in enumerate(scores) if s > 0]
    hits.sort(key=lambda i: (-scores[i], tools[i].name))
    return [tools[i] for i in hits]


def search_words(text: str) -> list[str]:
    """SPEC §11.9 tokenizing: runs of letters and digits, split at camelCase boundaries,
    lowercased; words of two or more characters that are not English stopwords."""
    from bm25s.stopwords import STOPWORDS_EN  # noqa: PLC0415 - the list §11.9 names

    words: list[str] = []
    for piece in re.findall(r"[^\W_]+", text):
        start = 0
        for i in range(1, len(piece)):
            before, here = piece[i - 1], piece[i]
            after = piece[i + 1] if i + 1 < len(piece) else ""
            lower_then_capital = (before.islower() or before.isdigit()) and here.isupper()
            acronym_end = before.isupper() and here.isupper() and after.islower()
            if lower_then_capital or acronym_end:
                words.append(piece[start:i])
                start = i
        words.append(piece[start:])
    stop = set(STOPWORDS_EN)
    lowered = (w.lower() for w in words)
    return [w for w in lowered if len(w) >= 2 and w not in stop]
