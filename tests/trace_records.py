"""Hand-written trace records (SPEC §14.1) the trace tests share."""

from __future__ import annotations

from typing import Any


def header(**changes: Any) -> dict[str, Any]:
    """A host's header for one server ``s``, as another host might write it; ``changes``
    replace or add fields (``server_options``, ``host``)."""
    return {
        "kind": "header",
        "format": "mcpbind-trace/1",
        "policy": "revalidate",
        "servers": ["s"],
        "builtins": [],
        "extensions": {},
        "max_name_length": 64,
        "host": {"name": "other", "version": "1"},
        **changes,
    }
