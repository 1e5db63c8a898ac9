"""A pytest plugin for scripts/mutation (``-p mutation_contexts``): each test's lines are
recorded under its node id (sitecustomize.py started the coverage), and the processes it
starts inherit that id; the outcome and seconds of every test are written as JSON to
``MCPBIND_MUTATION_RESULTS``. Lines run outside any test (imports, collection) keep the
empty context."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import coverage
import pytest

_results: dict[str, dict[str, Any]] = {}


def _switch(context: str) -> None:
    current = coverage.Coverage.current()
    if current is not None:
        current.switch_context(context)
    os.environ["MCPBIND_MUTATION_CONTEXT"] = context


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _switch(item.nodeid)
    start = time.monotonic()
    _results[item.nodeid] = {"passed": True, "seconds": 0.0}
    try:
        yield
    finally:
        _results[item.nodeid]["seconds"] = time.monotonic() - start
        _switch("")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.failed and report.nodeid in _results:
        _results[report.nodeid]["passed"] = False


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = os.environ.get("MCPBIND_MUTATION_RESULTS")
    if path:
        with open(path, "w", encoding="utf-8") as file:
            json.dump(_results, file)
