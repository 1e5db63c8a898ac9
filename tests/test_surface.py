"""The top-level package (issue 26): ``import mcpbind`` gives the host, its configuration,
its result, every error and ``__version__``, and stays cheap to import."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from cli_runner import mcpbind as run_mcpbind

import mcpbind
import mcpbind.impl

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("trio", "hypothesis", "mcp", "mcp_types", "anyio", "mcpbind.impl")


def python(code: str, *flags: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, *flags, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_mcpbind_loads_neither_the_sdk_nor_trio_nor_hypothesis():
    code = f"import sys, mcpbind; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    assert python(code) == "[]"


def test_importing_the_model_does_not_load_the_names_of_the_top_level():
    """Python runs mcpbind/__init__ before mcpbind.model: it must not load the runtime."""
    code = f"import sys, mcpbind.model; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    assert python(code) == "[]"


def test_importing_the_runtime_package_loads_none_of_its_modules_nor_the_sdk():
    """``mcpbind.impl`` names its exports for mypy only (its ``TYPE_CHECKING`` is False at
    run time) and loads each on first use: importing the package alone loads neither the
    SDK, trio nor anyio, nor the host (issue 33: ``TYPE_CHECKING`` made true survived)."""
    heavy = (*HEAVY[:-1], "mcpbind.impl.host", "mcpbind.impl.calls.approval")
    code = f"import sys, mcpbind.impl; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    assert python(code) == "[]"


def test_the_host_loads_without_the_models_rules_invariants_or_explorer():
    """The runtime uses the model's values and naming only (issue 29: start-up)."""
    unused = ("mcpbind.model.rules", "mcpbind.model.invariants", "mcpbind.model.explore")
    code = (
        f"import sys, mcpbind.impl.host; print(sorted(m for m in {unused!r} if m in sys.modules))"
    )
    assert python(code) == "[]"


def test_the_catalog_command_loads_the_trace_writer_only_when_a_trace_is_written():
    """Issue 29 (``mcpbind catalog`` against the raw SDK): the trace's writer and the
    model's trace module load with ``--trace`` or a reconfiguration, not at start-up."""
    unused = ("mcpbind.impl.trace", "mcpbind.model.trace")
    code = (
        "import sys, mcpbind.cli.catalog, mcpbind.impl.host, mcpbind.impl.reconfigure; "
        f"print(sorted(m for m in {unused!r} if m in sys.modules))"
    )
    assert python(code) == "[]"


def test_the_models_names_load_on_first_use_and_explore_stays_the_function():
    """A name of ``mcpbind.model`` loads its module when asked for; ``explore`` is the
    explorer function even after something imported the module of the same name."""
    code = (
        "import mcpbind.model.explore, mcpbind.model as m; "
        "print(m.explore.__name__, callable(m.explore), m.step.__name__, m.Call.__name__)"
    )
    assert python(code) == "explore True step Call"


@pytest.mark.parametrize(
    "argv",
    # (``explore``'s own parser reads the model's invariant ids for its help: not here)
    [["--help"], ["--version"], ["catalog", "--help"], ["call"], ["catalog", "--bogus"]],
    ids=["help", "version", "catalog-help", "call-without-name", "usage-error"],
)
def test_the_help_the_version_and_a_usage_error_load_neither_the_sdk_nor_trio_nor_the_model(
    argv,
):
    """Issue 29: what only parses the command line must not wait for the runtime's
    imports; a command loads its module when it runs."""
    heavy = (*HEAVY, "mcpbind.model")
    code = (
        "import contextlib, io, sys\n"
        "from mcpbind.cli.main import main\n"
        "out, err = io.StringIO(), io.StringIO()\n"
        "with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    assert python(code) == "[]"


def test_the_top_level_names_are_the_runtimes_own():
    for name in set(mcpbind.__all__) - {"__version__"}:
        assert getattr(mcpbind, name) is getattr(mcpbind.impl, name), name


def test_every_error_the_runtime_exports_is_at_the_top_level():
    errors = {
        name
        for name in mcpbind.impl.__all__
        if isinstance(value := getattr(mcpbind.impl, name), type)
        and issubclass(value, mcpbind.impl.McpBindError)
    }
    others = {"Host", "HostConfig", "ServerConfig", "ToolResult", "__version__"}
    assert set(mcpbind.__all__) == errors | others


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Hosst'"):
        _ = mcpbind.Hosst  # type: ignore[attr-defined] # a misspelt name, on purpose
    assert {"Host", "__version__"} <= set(dir(mcpbind))


def test_the_version_is_the_installed_distributions():
    assert mcpbind.__version__ == importlib.metadata.version("mcpbind")


def test_a_source_tree_that_is_not_installed_reports_the_version_in_pyproject(tmp_path):
    """``-S``: no site-packages, so no distribution metadata and no editable install; the
    package is the source folders laid out by ``scripts/farm``."""
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "farm"), str(tmp_path)],
        capture_output=True,
        check=True,
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    code = "import mcpbind; print(mcpbind.__file__); print(mcpbind.__version__)"
    where, version = python(code, "-S", env=env).splitlines()
    assert Path(where).parent == tmp_path / "mcpbind"
    with (ROOT / "pyproject.toml").open("rb") as file:
        assert version == tomllib.load(file)["project"]["version"]


def test_mcpbind_version_prints_the_version():
    done = run_mcpbind("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"mcpbind {mcpbind.__version__}\n"
