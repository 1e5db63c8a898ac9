"""Shared fixtures. The standard suite is explored once per session (it takes ~40 s)."""

from __future__ import annotations

import pytest

from mcpbind.cli.explore import Run, run_suite


@pytest.fixture(scope="session")
def standard_runs() -> list[Run]:
    """The standard suite, both policies, with effects tallied for the transition table."""
    return run_suite(effects=True)
