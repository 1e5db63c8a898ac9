"""Runtime objects compare by identity (STYLE: objects with mutable state are
``@attrs.define(eq=False)``), and so do the published values that stand for one moment
(a registry state, a step's snapshot and exposure, a checked output schema): two pending
calls, refresh runs or sessions with the same fields are never taken for one another by
``in``, ``remove`` or a dict key, and a generation's state is the one it is.

Every attrs class of ``impl/`` is found by walking the package; the imports below name
the modules that declare such classes, so that mutation testing runs this file for a
mutant of theirs (``scripts/mutation`` chooses test files by their imports)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import attrs
import pytest

import mcpbind.impl
from mcpbind.impl import contributors, reconfigure
from mcpbind.impl.calls import approval, lanes, progress, table
from mcpbind.impl.catalog import exposure, planner, publisher, registry, structured
from mcpbind.impl.config import catalog_cache
from mcpbind.impl.server import context, refreshes, startup

DECLARING = (
    approval,
    lanes,
    progress,
    table,
    exposure,
    planner,
    publisher,
    registry,
    structured,
    catalog_cache,
    contributors,
    reconfigure,
    context,
    refreshes,
    startup,
)

VALUE_RECORDS = {"mcpbind.impl.wire.http.HttpStatus"}
"""Mutable, and compared by value: what the HTTP transport last saw, a plain record."""

SNAPSHOTS = {
    "mcpbind.impl.catalog.registry.RegistryState",
    "mcpbind.impl.catalog.planner.StepSnapshot",
    "mcpbind.impl.catalog.exposure.Exposure",
    "mcpbind.impl.catalog.structured.OutputSchema",
}
"""Frozen, and compared by identity: each stands for one publication or one schema text."""


def attrs_classes() -> dict[str, type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(mcpbind.impl.__path__, "mcpbind.impl."):
        module = importlib.import_module(info.name)
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and cls.__module__ == module.__name__ and attrs.has(cls):
                found[f"{module.__name__}.{name}"] = cls
    return found


def frozen(cls: type) -> bool:
    return getattr(cls.__setattr__, "__name__", "") == "_frozen_setattrs"


def by_identity(cls: type) -> bool:
    return cls.__eq__ is object.__eq__ and cls.__hash__ is object.__hash__


RUNTIME_OBJECTS = [
    *["mcpbind.impl.calls.approval.ApprovalGate", "mcpbind.impl.calls.lanes.Lane"],
    *["mcpbind.impl.calls.lanes.Lanes", "mcpbind.impl.calls.progress.ProgressCounts"],
    *["mcpbind.impl.calls.progress.ProgressFeed", "mcpbind.impl.calls.table.CallTable"],
    *["mcpbind.impl.calls.table.PendingCall", "mcpbind.impl.catalog.exposure.Exposer"],
    *["mcpbind.impl.catalog.exposure.StateView", "mcpbind.impl.catalog.exposure._Index"],
    *["mcpbind.impl.catalog.planner.Planner", "mcpbind.impl.catalog.publisher.Publisher"],
    *[
        "mcpbind.impl.config.catalog_cache.CatalogCache",
        "mcpbind.impl.contributors.ToolContributors",
    ],
    *["mcpbind.impl.reconfigure._Counts", "mcpbind.impl.reconfigure._Retirement"],
    *["mcpbind.impl.server.context.Session", "mcpbind.impl.server.refreshes.RefreshRun"],
    *["mcpbind.impl.server.refreshes.Refreshes", "mcpbind.impl.server.startup.StartWaiters"],
    "mcpbind.impl.server.startup.Turn",
]
"""The runtime objects known when this was written, by name: the tests below run for each
of them whether or not the walk finds it, so a class whose ``@attrs.define`` is removed
fails its test (``KeyError``) rather than silently losing it (mutation testing, issue 33:
such a mutant made a chosen test id vanish). A class added since is found by the walk."""

CLASSES = attrs_classes()
MUTABLE = sorted({name for name, cls in CLASSES.items() if not frozen(cls)} | set(RUNTIME_OBJECTS))


def test_the_declaring_modules_are_every_module_with_a_class_compared_by_identity():
    declaring = {m.__name__ for m in DECLARING}
    assert {n.rsplit(".", 1)[0] for n, c in CLASSES.items() if by_identity(c)} == declaring


@pytest.mark.parametrize("name", [n for n in MUTABLE if n not in VALUE_RECORDS])
def test_a_runtime_object_is_equal_only_to_itself(name):
    assert by_identity(CLASSES[name])


@pytest.mark.parametrize("name", sorted(SNAPSHOTS))
def test_a_published_snapshot_is_equal_only_to_itself(name):
    assert frozen(CLASSES[name])
    assert by_identity(CLASSES[name])


def test_the_mutable_classes_are_the_runtime_objects_and_the_value_records():
    assert len(MUTABLE) >= 20  # the walk found the package's classes
    found = {name for name, cls in CLASSES.items() if not frozen(cls)}
    assert set(RUNTIME_OBJECTS) <= found, "each runtime object named is a mutable attrs class"
    assert set(MUTABLE) >= VALUE_RECORDS
    assert not by_identity(CLASSES["mcpbind.impl.wire.http.HttpStatus"])


def test_a_tool_spec_compares_and_shows_its_output_schema_not_its_validator():
    """Two listings of one tool are one spec (INV-1: a refresh that changes nothing
    publishes nothing) even when their validators were built apart (a schema cache
    evicted); the validator is not shown either (mutation testing, issue 33: the field's
    ``eq=False`` flipped survived)."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    checks = [structured.OutputSchema(schema, structured.compile_check(schema)) for _ in "ab"]
    a, b = (registry.ToolSpec("t", "d", {}, output_schema=schema, output_check=c) for c in checks)
    assert checks[0] != checks[1]
    assert a == b
    assert repr(a) == (
        "ToolSpec(name='t', description='d', input_schema={}, annotations=None, "
        "shortened_from=None, output_schema={'type': 'object', 'properties': "
        "{'n': {'type': 'integer'}}}, task_support=None)"
    )
