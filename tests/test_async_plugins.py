"""Which plugin runs an async test (``backends.py``): pytest-trio runs the tests marked
``trio``, on trio alone and in the virtual time of its clock fixtures; anyio's plugin runs
every other one, once on trio and once on asyncio; no test is run by both or by neither."""

from __future__ import annotations

import asyncio
import textwrap
import time

import pytest
import trio
import trio.testing

pytest_plugins = ["pytester"]


def running_library() -> str:
    """``trio`` or ``asyncio``, whichever runs the calling task."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        trio.lowlevel.current_task()  # RuntimeError outside trio too
        return "trio"
    return "asyncio"


@pytest.mark.trio
async def test_a_trio_marked_test_runs_on_trio_in_the_virtual_time_of_its_clock(
    autojump_clock: trio.testing.MockClock,
) -> None:
    assert running_library() == "trio"
    assert trio.lowlevel.current_clock() is autojump_clock
    wall, virtual = time.monotonic(), trio.current_time()
    await trio.sleep(3600)
    assert trio.current_time() - virtual == pytest.approx(3600)
    assert time.monotonic() - wall < 1  # an hour of virtual time, milliseconds of real


async def test_an_unmarked_async_test_runs_under_anyio_on_the_backend_of_its_id(
    anyio_backend: str,
) -> None:
    assert running_library() == anyio_backend


ROUTED = """
    import asyncio
    import pytest
    import trio

    async def test_both(anyio_backend):
        asyncio.get_running_loop() if anyio_backend == "asyncio" else trio.lowlevel.current_task()

    @pytest.mark.trio
    async def test_trio(autojump_clock):
        await trio.sleep(3600)
        assert trio.current_time() >= 3600

    class TestTrioClass:
        pytestmark = pytest.mark.trio

        async def test_in_class(self, mock_clock):
            assert trio.lowlevel.current_clock() is mock_clock

    def test_sync():
        pass
"""


@pytest.fixture
def routed(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\nanyio_mode = strict\nfilterwarnings = error\n")
    return pytester


def test_each_async_test_is_collected_once_per_backend_of_its_plugin(routed) -> None:
    routed.makepyfile(test_routed=textwrap.dedent(ROUTED))
    result = routed.runpytest("-p", "backends", "-v")
    result.assert_outcomes(passed=5)
    ran = sorted(line.split(" ")[0] for line in result.outlines if " PASSED" in line)
    assert ran == [
        "test_routed.py::TestTrioClass::test_in_class",
        "test_routed.py::test_both[asyncio]",
        "test_routed.py::test_both[trio]",
        "test_routed.py::test_sync",
        "test_routed.py::test_trio",
    ]


@pytest.mark.parametrize(
    ("source", "complaint"),
    [
        pytest.param(
            "@pytest.mark.trio\nasync def test_x(anyio_backend):\n    pass\n",
            "test_x[trio]: marked trio but asks for anyio_backend",
            id="both-plugins",
        ),
        pytest.param(
            "@pytest.mark.parametrize('anyio_backend', ['trio'])\n"
            "async def test_x(anyio_backend):\n    pass\n",
            "test_x[trio]: narrows anyio_backend; mark it trio to run on trio",
            id="one-backend",
        ),
    ],
)
def test_a_test_that_two_plugins_would_run_or_narrowed_to_one_backend_fails_collection(
    routed, source, complaint
) -> None:
    routed.makepyfile(test_wrong="import pytest\n\n" + source)
    result = routed.runpytest("-p", "backends")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0] == "ERROR: async tests routed wrongly:"
    assert f"  test_wrong.py::{complaint}" in result.stderr.lines


def test_in_anyio_auto_mode_a_trio_test_would_run_under_both_plugins(routed) -> None:
    """Why ``anyio_mode = "strict"``: in auto mode anyio takes every async test, so a
    ``trio`` test would be run once per anyio backend, each time by pytest-trio."""
    routed.makeini("[pytest]\nanyio_mode = auto\n")
    routed.makepyfile(test_routed=textwrap.dedent(ROUTED))
    result = routed.runpytest("-p", "backends")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "  test_routed.py::test_trio[asyncio]: marked trio but asks for anyio_backend" in (
        result.stderr.lines
    )
