"""Structured output (SPEC §8.8): a tool's ``outputSchema`` and the check of its answers.

The spec (server/tools, "Output Schema") says a server MUST answer a tool that declares an
``outputSchema`` with ``structuredContent`` conforming to it, and a client SHOULD
validate it. mcpbind checks each listed schema (:func:`schema_problem`, part of
the tool's validity, SPEC §5.3) and every successful answer against it
(:func:`OutputSchema.mismatch`), with ``jsonschema`` (JSON Schema 2020-12 unless the
schema names another dialect in ``$schema``). A ``$ref`` is resolved within the schema
only: the registry given to the validator holds nothing and retrieves nothing, so no
remote schema is ever fetched.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import attrs
from jsonschema import Draft202012Validator, SchemaError
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing import Registry
from referencing.exceptions import Unresolvable

__all__ = ["MAX_PROBLEM", "OutputSchema", "output_schema", "schema_problem"]

MAX_PROBLEM = 300
"""A mismatch is described in at most this many characters (the instance can be huge)."""
_NOTHING: Registry[Any] = Registry()
"""No schema but the tool's own: a ``$ref`` elsewhere is unresolvable, never fetched."""


def _dialect(schema: Mapping[str, Any]) -> type[Validator]:
    found: type[Validator] = validator_for(schema, default=Draft202012Validator)
    return found


@attrs.frozen(eq=False)
class OutputSchema:
    """A tool's checked ``outputSchema`` with its validator. One per distinct schema text
    (:func:`output_schema`), shared by every tool and listing that declares it; the
    validator keeps no state between checks."""

    schema: Mapping[str, Any]
    _validator: Validator = attrs.field(repr=False)

    def mismatch(self, structured: Any) -> str | None:
        """How an answer's ``structuredContent`` fails the schema (the most relevant
        error, with its JSON path), or None when it conforms."""
        if structured is None:
            return "structuredContent is missing"
        try:
            error = best_match(self._validator.iter_errors(structured))
        except Unresolvable as unresolved:
            return (
                f"the schema's $ref {unresolved.ref!r} cannot be resolved "
                "(mcpbind resolves references within the schema only and fetches nothing)"
            )
        if error is None:
            return None
        problem = f"at {error.json_path}: {error.message}"
        return problem if len(problem) <= MAX_PROBLEM else problem[: MAX_PROBLEM - 1] + "…"


@functools.lru_cache(maxsize=4096)
def _compiled(text: str) -> OutputSchema | str:
    schema = json.loads(text)
    dialect = _dialect(schema)
    try:
        dialect.check_schema(schema)
    except SchemaError as error:
        return f"outputSchema is not a valid JSON Schema: at {error.json_path}: {error.message}"
    return OutputSchema(schema, dialect(schema, registry=_NOTHING))


def output_schema(schema: Any) -> OutputSchema | str:
    """``schema`` checked and compiled, or why it cannot be a tool's ``outputSchema``: the
    spec requires a JSON object of type ``object``; it must also be a valid JSON Schema.
    Cached by the schema's text, so that a listing of 2,048 tools, read again on every
    refresh, checks and compiles each distinct schema once."""
    if not isinstance(schema, Mapping):
        return "outputSchema is not a JSON object"
    if schema.get("type") != "object":
        return f"outputSchema has type {schema.get('type')!r}, not 'object'"
    try:
        text = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return "outputSchema is not JSON"
    return _compiled(text)


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` cannot be a tool's ``outputSchema`` (SPEC §5.3), or None."""
    found = output_schema(schema)
    return found if isinstance(found, str) else None
