"""The layer contracts of SPEC §11.1 (import-linter, ``[tool.importlinter]`` in
pyproject.toml) hold, and each of them fails on a planted violation."""

from __future__ import annotations

import ast
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PARTS = ("model", "impl", "properties", "cli", "demo")
LINT = pathlib.Path(sys.executable).with_name("lint-imports")


def lint(top: pathlib.Path | None = None) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the source folders, or on a copy of them laid out under
    ``top``/mcpbind (found first on the path: the editable install's finder comes after)."""
    env = dict(os.environ)
    if top is not None:
        env["PYTHONPATH"] = str(top)
    return subprocess.run(
        [str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
        cwd=top or ROOT,
        env=env,
        timeout=120,
    )


def planted(tmp_path: pathlib.Path, part: str, module: str, code: str) -> pathlib.Path:
    """A copy of the package with ``code`` appended to ``part/module``; the other parts
    are the source folders themselves."""
    package = tmp_path / "mcpbind"
    package.mkdir()
    for name in PARTS:
        if name == part:
            shutil.copytree(
                ROOT / name, package / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            (package / name).symlink_to(ROOT / name)
    with (package / part / module).open("a", encoding="utf-8") as file:
        file.write("\n\n" + code + "\n")
    return tmp_path


def private_imports(folder: pathlib.Path, package: str) -> list[str]:
    """Each ``from <a module of package> import _name`` in the modules of ``folder``."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level == 0 and not (node.module or "").startswith(package):
                continue
            where = "." * node.level + (node.module or "")
            found += [f"{path.name}: {where} {a.name}" for a in node.names if a.name[0] == "_"]
    return found


def test_no_module_of_properties_imports_a_private_name_of_another():
    """The machines, their checks and their mutants meet through public names: the checks
    read a run through ``run_view.RunView``, not the lockstep machine's own run."""
    assert private_imports(ROOT / "properties", "mcpbind.properties") == []


def test_every_layer_contract_is_kept():
    done = lint()
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(CONTRACTS)} kept, 0 broken" in done.stdout


CONTRACTS = {
    "model": "model is sans-IO",
    "impl": "impl imports neither the property machines nor the CLI, nor trio",
    "wings": "impl's wings, each importing only the ones below it",
    "sdk": "only the wire wing talks to the SDK",
    "cycles": "no import cycle between the modules of impl",
    "properties-cycles": "no import cycle between the modules of properties",
    "no-cli": "properties and demo import no CLI",
}
TYPE_CHECKING = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    "


@pytest.mark.parametrize(
    ("part", "module", "code", "broken"),
    [
        pytest.param(
            "impl",
            "server/runtime.py",
            TYPE_CHECKING + "from ..host import Host",
            {"wings", "cycles"},
            id="type-checking-import-of-a-wing-above",
        ),
        pytest.param(
            "impl",
            "calls/table.py",
            "def _planted() -> None:\n    from .elicitation import answer",
            {"cycles"},
            id="function-level-cycle-inside-a-wing",
        ),
        pytest.param(
            "impl",
            "catalog/registry.py",
            TYPE_CHECKING + "from .planner import Planner",
            {"cycles"},
            id="type-checking-cycle-inside-a-wing",
        ),
        pytest.param(
            "impl",
            "errors.py",
            "from .values import ToolResult",
            {"wings"},
            id="errors-imports-values-beside-it",
        ),
        pytest.param(
            "impl",
            "trace.py",
            "def _planted() -> None:\n    from .router import Router",
            {"wings"},
            id="trace-imports-router-beside-it",
        ),
        pytest.param(
            "impl",
            "calls/encoding.py",
            "import mcp",
            {"sdk"},
            id="calls-imports-the-sdk",
        ),
        pytest.param(
            "impl",
            "catalog/listing.py",
            TYPE_CHECKING + "import mcp_types",
            {"sdk"},
            id="catalog-imports-the-sdk-types-when-type-checking",
        ),
        pytest.param(
            "impl",
            "config/server.py",
            "def _planted() -> None:\n    import httpx2",
            {"sdk"},
            id="config-imports-the-http-client",
        ),
        pytest.param(
            "model",
            "table.py",
            "import trio",
            {"model"},
            id="model-imports-trio",
        ),
        pytest.param(
            "model",
            "rules.py",
            "from mcpbind.impl import errors",
            {"model"},
            id="model-imports-impl",
        ),
        pytest.param(
            "impl",
            "host.py",
            "from mcpbind.properties import chooser",
            {"impl"},
            id="impl-imports-properties",
        ),
        pytest.param(
            "impl",
            "calls/table.py",
            "import trio",
            {"impl"},
            id="impl-imports-trio",
        ),
        pytest.param(
            "properties",
            "impl_invariants.py",
            TYPE_CHECKING + "from .lockstep import MachineFailure",
            {"properties-cycles"},
            id="type-checking-cycle-between-the-property-machines",
        ),
        pytest.param(
            "properties",
            "machines.py",
            "def _planted() -> None:\n    from mcpbind.cli.check import DEPTHS",
            {"no-cli"},
            id="properties-import-the-cli",
        ),
    ],
)
def test_a_planted_violation_breaks_its_contract(tmp_path, part, module, code, broken):
    done = lint(planted(tmp_path, part, module, code))
    assert done.returncode == 1, done.stdout + done.stderr
    kept = len(CONTRACTS) - len(broken)
    assert f"{kept} kept, {len(broken)} broken" in done.stdout, done.stdout
    report = done.stdout.split("Broken contracts", 1)[1]
    for key in broken:
        assert CONTRACTS[key] in report
