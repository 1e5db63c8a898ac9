"""Coverage for scripts/mutation, started as the interpreter starts (this folder is put on
PYTHONPATH only for the runs that measure which tests reach which lines).

With ``MCPBIND_MUTATION_COVERAGE`` set (a data file's path), every Python process started
with this PYTHONPATH (pytest, and the processes its tests start) measures the files that
match ``MCPBIND_MUTATION_INCLUDE`` and not ``MCPBIND_MUTATION_OMIT`` (patterns joined by
the path separator), each line recorded under the context ``MCPBIND_MUTATION_CONTEXT``
held when the process started;
``mutation_contexts`` (the pytest plugin) switches it per test in the pytest process.
"""

from __future__ import annotations

import os

if os.environ.get("MCPBIND_MUTATION_COVERAGE"):
    import coverage

    _measuring = coverage.Coverage(
        data_file=os.environ["MCPBIND_MUTATION_COVERAGE"],
        data_suffix=True,
        include=os.environ.get("MCPBIND_MUTATION_INCLUDE", "").split(os.pathsep),
        omit=os.environ.get("MCPBIND_MUTATION_OMIT", "").split(os.pathsep),
        context=os.environ.get("MCPBIND_MUTATION_CONTEXT", ""),
        config_file=False,
    )
    _measuring.set_option("run:sigterm", True)  # a test server stopped by SIGTERM saves too
    # A process that runs none of the checkout (a test's `python -c` server) would warn
    # on its stderr at exit, which tests read: tests/test_tap.py's exit status failed
    # under coverage alone, so it was never chosen.
    _measuring.set_option("run:disable_warnings", ["no-data-collected"])
    _measuring.start()
    import atexit

    def _save() -> None:
        _measuring.stop()
        _measuring.save()

    atexit.register(_save)
