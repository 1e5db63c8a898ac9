"""Shared fixtures. The standard suite is explored once per session (it takes ~40 s).

Under pytest-xdist (the README's ``-n 2``, ``--dist loadgroup`` from pyproject.toml) a
session fixture is built once per worker that needs it, so the tests that use the
standard suite are put in one group: one worker explores it, once.

Which plugin runs an async test, and on which backends, is ``backends.py``'s to say:
anyio's plugin, once on trio and once on asyncio (SPEC §11.13), unless the test is marked
``trio``: then pytest-trio, on trio alone (virtual time, trio-only fixtures).
"""

from __future__ import annotations

import pytest

from mcpbind.model.suite import Run, run_suite

pytest_plugins = ["backends"]


STANDARD_SUITE_GROUP = pytest.mark.xdist_group("standard-suite")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "standard_runs" in getattr(item, "fixturenames", ()):
            item.add_marker(STANDARD_SUITE_GROUP)


@pytest.fixture(scope="session")
def standard_runs() -> list[Run]:
    """The standard suite, both policies, with effects tallied for the transition table."""
    return run_suite(effects=True)
