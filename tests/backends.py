"""Which plugin runs an async test, and on which backend (a pytest plugin: ``conftest.py``).

By default anyio's pytest plugin, twice: on trio and on asyncio (mcpbind's runtime is the
same code on both, SPEC §11.13). A test marked ``@pytest.mark.trio`` is pytest-trio's, on
trio alone: the tests whose deadlines are minutes long, which run in virtual time with
pytest-trio's ``autojump_clock`` or ``mock_clock`` (asyncio has no mock clock, and the
timing rules they check are the same anyio code on both backends), and the tests that
drive a real trio-only fixture. Collection fails if an async test would be run by both
plugins or by neither, or if an anyio test is narrowed to one backend (``trio`` says that).
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import Any

import pytest

BACKENDS = ["trio", "asyncio"]
"""The backends of every async test that anyio's plugin runs."""


@pytest.fixture(params=BACKENDS)
def anyio_backend(request: Any) -> Any:
    """The backend of one async test run by anyio's plugin."""
    return request.param


def is_async_test(function: Any) -> bool:
    inner = function.hypothesis.inner_test if hasattr(function, "hypothesis") else function
    return inspect.iscoroutinefunction(inner)


def marked_trio(collector: pytest.Module | pytest.Class, function: Any) -> bool:
    own = getattr(function, "pytestmark", [])
    return collector.get_closest_marker("trio") is not None or any(m.name == "trio" for m in own)


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: Any
) -> Generator[None, Any, Any]:
    """Hand anyio's plugin (``anyio_mode = "strict"``) every async test not marked
    ``trio``, before it looks for its marker. In ``auto`` mode it would also take the
    ``trio`` ones, and each would run under both plugins, once per anyio backend."""
    is_test = collector.istestfunction(obj, name)
    if is_test and is_async_test(obj) and not marked_trio(collector, obj):
        pytest.mark.anyio(obj)
    return (yield)


def parametrized_names(item: pytest.Item) -> set[str]:
    names: set[str] = set()
    for mark in item.iter_markers("parametrize"):
        argnames = mark.kwargs.get("argnames", mark.args[0] if mark.args else ())
        if isinstance(argnames, str):
            argnames = argnames.split(",")
        names.update(n.strip() for n in argnames)
    return names


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each async test is run by exactly one plugin; anyio's on both backends."""
    wrong = []
    for item in items:
        if not isinstance(item, pytest.Function) or not is_async_test(item.obj):
            continue
        by_trio = item.get_closest_marker("trio") is not None
        by_anyio = "anyio_backend" in item.fixturenames
        if by_trio and by_anyio:
            wrong.append(f"{item.nodeid}: marked trio but asks for anyio_backend")
        elif not by_trio and not by_anyio:
            wrong.append(f"{item.nodeid}: run by no async plugin")
        elif by_anyio and "anyio_backend" in parametrized_names(item):
            wrong.append(f"{item.nodeid}: narrows anyio_backend; mark it trio to run on trio")
    if wrong:
        raise pytest.UsageError("async tests routed wrongly:\n  " + "\n  ".join(wrong))


# Over streamable HTTP a call answered with progress comes back as an SSE stream that the
# SDK stops reading at the result without closing it: on trio its async generators are
# collected unexhausted (4 ResourceWarnings per call from the raw mcp.Client alone,
# ``python -W always::ResourceWarning`` with ``Client.call_tool(progress_callback=...)``).
TRANSPORTS_WITH_PROGRESS = [
    "inproc",
    "stdio",
    pytest.param(
        "http",
        marks=pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    ),
]
"""In process, over stdio and over HTTP, for tests whose calls report progress."""
