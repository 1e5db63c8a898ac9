"""Shared fixtures. The standard suite is explored once per session (it takes ~40 s).

Under pytest-xdist (the README's ``-n 2``) a session fixture is built once in each worker
that asks for it; ``--dist loadfile`` (pyproject.toml) runs a module on one worker, and
every test that asks for ``standard_runs`` is in ``test_explorer.py``.

Which plugin runs an async test, and on which backends, is ``backends.py``'s to say:
anyio's plugin, once on trio and once on asyncio (SPEC §11.13), unless the test is marked
``trio``: then pytest-trio, on trio alone (virtual time, trio-only fixtures).
"""

from __future__ import annotations

import pytest

from mcpbind.model.suite import Run, run_suite

pytest_plugins = ["backends", "scheduling"]


@pytest.fixture(scope="session")
def standard_runs() -> list[Run]:
    """The standard suite, both policies, with effects tallied for the transition table."""
    return run_suite(effects=True)
