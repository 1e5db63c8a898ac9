"""The order in which pytest-xdist hands out test modules (a pytest plugin: ``conftest.py``).

Under the README's ``-n 2 --dist loadfile`` a module runs whole on one worker, and a worker
takes the next module from the queue when it is almost out of work. pytest-xdist queues
the modules by their number of tests, most first; the modules with few but long tests
(the standard suite's exploration, the benchmark smoke run, the odometer, the fuzz runs)
then came last, and one worker ran them alone while the other had finished. Here the
queue hands out the heaviest module first (the longest-processing-time-first rule), by
the weights below; a module not listed weighs its number of tests times ``PER_TEST``.
Which worker runs what changes; which tests run, and how, does not.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

PER_TEST = 0.2
"""Seconds a test of a module not in ``WEIGHTS`` is taken to last (at the same load)."""

WEIGHTS: dict[str, float] = {
    "tests/test_properties_lockstep.py": 815,
    "tests/test_properties_odometer.py": 714,
    "tests/test_explorer.py": 468,
    "tests/test_model_mutants.py": 378,
    "tests/test_fuzz.py": 366,
    "tests/test_benchmarks_smoke.py": 252,
    "tests/test_properties_corpus.py": 104,
    "tests/test_protocol_revision.py": 250,
    "tests/test_oauth.py": 183,
    "tests/test_reconfigure.py": 155,
    "tests/test_tasks.py": 143,
    "tests/test_model_stub.py": 142,
    "tests/test_docs.py": 141,
    "tests/test_impl_stdio.py": 128,
    "tests/test_mutation_script.py": 100,
    "tests/test_tap.py": 95,
    "tests/test_cli_signals.py": 86,
    "tests/test_cli_errors.py": 86,
    "tests/test_guards.py": 82,
    "tests/test_config_cli.py": 81,
    "tests/test_tasks_everything.py": 80,
    "tests/test_faults.py": 73,
    "tests/test_hot_path.py": 70,
    "tests/test_cli_output.py": 67,
    "tests/test_progress.py": 64,
    "tests/test_library_guides.py": 63,
    "tests/test_tool_exclusion.py": 59,
    "tests/test_close.py": 59,
    "tests/test_server_status.py": 59,
    "tests/test_exposure.py": 56,
    "tests/test_peer_traces.py": 53,
    "tests/test_sessions.py": 49,
    "tests/test_approval.py": 47,
    "tests/test_security.py": 47,
    "tests/test_cli_checks.py": 33,
    "tests/test_layers.py": 30,
    "tests/test_everything_http.py": 29,
    "tests/test_oauth_server_smoke.py": 23,
    "tests/test_login_while_running.py": 22,
    "tests/test_fuzz_catalogs.py": 21,
    "tests/test_codex_env.py": 19,
    "tests/test_benchmarks_peers_smoke.py": 17,
    "tests/test_step_overlays.py": 16,
}
"""Seconds a module took on one worker of ``pytest -n 2`` (its tests' setup, call and
teardown summed), for the modules that take longest. Measured on 2026-12-05 with the rest
of the machine busy (load 8-14), so about three to four times an idle machine's; the
mutation script's is an estimate; ``test_protocol_revision.py`` and ``test_tool_exclusion.py``
scaled by their CPU time after sharing HTTP servers (x0.8, x0.5); ``test_model_mutants.py``
scaled by its CPU time after sharing its explorations with ``check --mutants`` (x0.87,
the test moved there), ``test_properties_corpus.py`` by its wall time without that test
(x0.41). Only their order against each other and ``PER_TEST`` matters.
"""


def weight(module: str, tests: int) -> float:
    return WEIGHTS.get(module, tests * PER_TEST)


class HeaviestFirst(OrderedDict[str, dict[str, bool]]):
    """pytest-xdist's queue of modules (``LoadScopeScheduling.workqueue``: module -> its
    test ids), which takes a module out with ``popitem(last=False)``: that now returns the
    heaviest one left. Anything else is the ordered dict it was."""

    def popitem(self, last: bool = True) -> tuple[str, dict[str, bool]]:
        if last:
            return super().popitem(last=True)
        module = max(self, key=lambda m: weight(m, len(self[m])))
        return module, self.pop(module)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    scheduler = LoadFileScheduling(config, log)
    if isinstance(getattr(scheduler, "workqueue", None), OrderedDict) and not scheduler.workqueue:
        scheduler.workqueue = HeaviestFirst()
    return scheduler
