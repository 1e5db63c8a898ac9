"""Structured output (SPEC §8.8): a tool's ``outputSchema`` and the check of its answers.

The spec (server/tools, "Output Schema") says a server MUST answer a tool that declares an
``outputSchema`` with ``structuredContent`` conforming to it, and a client SHOULD
validate it. mcpbind checks each listed schema (:func:`schema_problem`, part of
the tool's validity, SPEC §5.3) and every successful answer against it
(:func:`OutputSchema.mismatch`), with ``jsonschema`` (JSON Schema 2020-12 unless the
schema names another dialect in ``$schema``). A ``$ref`` is resolved within the schema
only: the registry given to the validator holds nothing and retrieves nothing, so no
remote schema is ever fetched.

Every successful answer is checked, so the check of a conforming one is on the call's hot
path. A schema made only of the keywords :func:`compile_check` knows (what ``MCPServer``
writes for plain return types: ``type``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``anyOf`` and annotations) is compiled once into a
plain predicate that gives jsonschema's verdict without its machinery; any other schema
uses the validator's ``is_valid``. Only an answer that fails is walked again by
``iter_errors`` for the text that names its error (``tests/test_hot_path.py``
holds the predicate to jsonschema's verdict). Such a schema is also checked for validity
without jsonschema (:func:`plainly_valid`), so a catalog of them, as ``mcpbind catalog``
shows, never imports it: jsonschema loads when a schema or an answer first needs it.
"""

from __future__ import annotations

import functools
import json
import numbers
from collections.abc import Callable, Mapping
from typing import Any

import attrs

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, read so by mypy
if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = [
    "MAX_PROBLEM",
    "OutputSchema",
    "compile_check",
    "output_schema",
    "plainly_valid",
    "schema_problem",
]

MAX_PROBLEM = 300
"""A mismatch is described in at most this many characters (the instance can be huge)."""


def _validator(schema: Mapping[str, Any]) -> Validator:
    """jsonschema's validator of ``schema`` (imported here, when first needed: a catalog of
    plain schemas never loads it). Its registry holds no schema but the tool's own: a
    ``$ref`` elsewhere is unresolvable, never fetched."""
    from jsonschema import Draft202012Validator  # noqa: PLC0415
    from jsonschema.validators import validator_for  # noqa: PLC0415
    from referencing import Registry  # noqa: PLC0415

    dialect: type[Validator] = validator_for(schema, default=Draft202012Validator)
    return dialect(schema, registry=Registry())


Check = Callable[[Any], bool]
"""Whether an instance conforms to a (sub)schema."""

_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "readOnly",
        "writeOnly",
        "deprecated",
        # Without a format checker (none is given to the validator) ``format`` is an
        # annotation: jsonschema asserts nothing about it.
        "format",
    }
)
"""Keywords that never make an instance invalid."""


def _is_integer(instance: Any) -> bool:
    # jsonschema's draft 6+ type checker: 1.0 is an integer, True is not
    if isinstance(instance, bool):
        return False
    return isinstance(instance, int) or (isinstance(instance, float) and instance.is_integer())


def _is_number(instance: Any) -> bool:
    return not isinstance(instance, bool) and isinstance(instance, numbers.Number)


_TYPES: Mapping[str, Check] = {
    "object": lambda instance: isinstance(instance, dict),
    "array": lambda instance: isinstance(instance, list),
    "string": lambda instance: isinstance(instance, str),
    "boolean": lambda instance: isinstance(instance, bool),
    "null": lambda instance: instance is None,
    "integer": _is_integer,
    "number": _is_number,
}
"""The types of JSON Schema as jsonschema's 2020-12 type checker reads them."""


def _always(instance: Any) -> bool:
    return True


def _never(instance: Any) -> bool:
    return False


def compile_check(schema: Any) -> Check | None:
    """``schema`` (2020-12, already checked) as one predicate that agrees with jsonschema's
    ``is_valid``, or None when it uses a keyword this does not know (then jsonschema
    decides). Each keyword applies to the instances of its type only, as in jsonschema."""
    if schema is True:
        return _always
    if schema is False:
        return _never
    if not isinstance(schema, dict):
        return None
    checks: list[Check] = []
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        check = _keyword(keyword, value, schema)
        if check is None:
            return None
        checks.append(check)
    match checks:  # a pattern: no ``len(checks) == 1`` whose ``<= 1`` would mean the same
        case []:
            return _always
        case [check]:
            return check
    every = tuple(checks)

    def conforms(instance: Any) -> bool:
        for check in every:  # noqa: SIM110 - no generator: this runs on every answer
            if not check(instance):
                return False
        return True

    return conforms


def _keyword(keyword: str, value: Any, schema: Mapping[str, Any]) -> Check | None:
    """One keyword of ``schema`` as a predicate, or None when it is not one of these."""
    if keyword == "type":
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list) or not all(name in _TYPES for name in names):
            return None
        typed = [_TYPES[name] for name in names]
        match typed:  # a pattern: ``typed[0]`` of one item would be ``typed[-1]`` too
            case [only]:
                return only
        return lambda instance: any(is_type(instance) for is_type in typed)
    if keyword == "required":
        # Checked already (2020-12: a list of distinct strings), as every schema given
        # here is; a guard against other values could never fire (issue 33, a mutant of
        # it survived as equivalent).
        names = tuple(value)

        def required(instance: Any) -> bool:
            if isinstance(instance, dict):
                for name in names:
                    if name not in instance:
                        return False
            return True

        return required
    if keyword == "properties":
        if not isinstance(value, dict):
            return None
        subschemas = {}
        for name, subschema in value.items():
            check = compile_check(subschema)
            if check is None:
                return None
            if check is not _always:
                subschemas[name] = check
        by_name = tuple(subschemas.items())

        def properties(instance: Any) -> bool:
            if isinstance(instance, dict):
                for name, check in by_name:
                    if name in instance and not check(instance[name]):
                        return False
            return True

        return properties
    if keyword == "additionalProperties":
        if "patternProperties" in schema:
            return None
        extra = compile_check(value)
        if extra is None:
            return None
        listed = frozenset(schema.get("properties", {}))
        return lambda instance: (
            not isinstance(instance, dict)
            or all(extra(item) for name, item in instance.items() if name not in listed)
        )
    if keyword == "items":
        if "prefixItems" in schema:
            return None
        each = compile_check(value)
        if each is None:
            return None
        return lambda instance: not isinstance(instance, list) or all(map(each, instance))
    if keyword == "anyOf":  # checked already: a non-empty list, as ``required`` above
        alternatives = [compile_check(subschema) for subschema in value]
        if any(check is None for check in alternatives):
            return None
        found = [check for check in alternatives if check is not None]
        return lambda instance: any(check(instance) for check in found)
    return None


_SIMPLE_TYPES = frozenset(_TYPES)
_TEXT_KEYWORDS = frozenset({"title", "description", "$comment", "format"})
_FLAG_KEYWORDS = frozenset({"readOnly", "writeOnly", "deprecated"})


def plainly_valid(schema: Any) -> bool:
    """Whether ``schema`` is a valid 2020-12 JSON Schema by a check of its own, without
    jsonschema: True only for a schema made of the keywords :func:`compile_check` knows
    (what ``MCPServer`` writes for plain return types) and annotations, each with a value
    the 2020-12 meta-schema allows. False says nothing: jsonschema then decides. Held to
    ``check_schema`` by ``test_a_schema_called_plainly_valid_is_valid_to_jsonschema``."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for keyword, value in schema.items():
        if keyword in _TEXT_KEYWORDS:
            if not isinstance(value, str):
                return False
        elif keyword in _FLAG_KEYWORDS:
            if not isinstance(value, bool):
                return False
        elif keyword == "default":
            continue
        elif keyword == "examples":
            if not isinstance(value, list):
                return False
        elif keyword == "type":
            names = [value] if isinstance(value, str) else value
            if (
                not isinstance(names, list)
                or not names
                or not all(isinstance(name, str) and name in _SIMPLE_TYPES for name in names)
                # equal only when all are distinct, so at most 7: ``is not`` would mean the same
                or len(set(names)) != len(names)  # pragma: no mutate
            ):
                return False
        elif keyword == "required":
            if (
                not isinstance(value, list)
                or not all(isinstance(name, str) for name in value)
                or len(set(value)) != len(value)
            ):
                return False
        elif keyword == "properties":
            if not isinstance(value, dict) or not all(map(plainly_valid, value.values())):
                return False
        elif keyword in ("additionalProperties", "items"):
            if not plainly_valid(value):
                return False
        elif keyword == "anyOf":
            if not isinstance(value, list) or not value or not all(map(plainly_valid, value)):
                return False
        else:
            return False
    return True


@attrs.frozen(eq=False)
class OutputSchema:
    """A tool's checked ``outputSchema`` with its verdict on answers. One per distinct
    schema text (:func:`output_schema`), shared by every tool and listing that declares
    it; the validator, made when first needed, keeps no state between checks."""

    schema: Mapping[str, Any]
    _conforms: Check | None = attrs.field(repr=False)
    """The fast verdict (:func:`compile_check`); None: the validator's ``is_valid``."""
    _made: list[Validator] = attrs.field(factory=list, repr=False)
    """The validator, once made."""

    @property
    def _validator(self) -> Validator:
        if not self._made:
            self._made.append(_validator(self.schema))
        return self._made[0]

    def mismatch(self, structured: Any) -> str | None:
        """How an answer's ``structuredContent`` fails the schema (the most relevant
        error, with its JSON path), or None when it conforms."""
        if structured is None:
            return "structuredContent is missing"
        conforms = self._conforms
        if conforms is not None and conforms(structured):
            return None  # the hot path: no validator, no error objects, no text
        from jsonschema.exceptions import best_match  # noqa: PLC0415
        from referencing.exceptions import Unresolvable  # noqa: PLC0415

        try:
            if conforms is None and self._validator.is_valid(structured):
                return None
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


@functools.lru_cache(maxsize=4096)  # pragma: no mutate - speed only (docs/development.md)
def _compiled(text: str) -> OutputSchema | str:
    schema = json.loads(text)
    if "$schema" not in schema and plainly_valid(schema):
        return OutputSchema(schema, compile_check(schema))  # 2020-12: no jsonschema needed
    from jsonschema import SchemaError  # noqa: PLC0415

    validator = _validator(schema)
    try:
        validator.check_schema(schema)
    except SchemaError as error:
        return f"outputSchema is not a valid JSON Schema: at {error.json_path}: {error.message}"
    # No test of the validator's dialect: compile_check knows no ``$schema``, so it compiles
    # no schema that names a dialect, and one that names none is 2020-12, the dialect it
    # follows (issue 33: the test made ``is not`` survived, equivalent).
    fast = compile_check(schema)
    return OutputSchema(schema, fast, [validator])


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
