"""The layer contracts of SPEC §11.1 (import-linter, ``[tool.importlinter]`` in
pyproject.toml) hold, and each of them fails on a planted violation."""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = pathlib.Path(sys.executable).parent


def run(
    command: list[str], cwd: pathlib.Path, path: pathlib.Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``command`` with the venv's tools first on PATH and ``path`` first on the module
    path (ahead of the editable install's finder)."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if path is not None:
        env["PYTHONPATH"] = str(path)
    return subprocess.run(
        command, capture_output=True, text=True, check=False, cwd=cwd, env=env, timeout=120
    )


def planted(tmp_path: pathlib.Path, part: str, module: str, code: str) -> pathlib.Path:
    """The package laid out under ``tmp_path``/mcpbind by ``scripts/farm`` (as
    ``scripts/lint-imports`` lays it out), with ``part`` copied and ``code`` appended to
    ``part/module``; the other parts are the source folders themselves."""
    farm = [sys.executable, str(ROOT / "scripts" / "farm"), str(tmp_path), "--copy", part]
    done = run(farm, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    with (tmp_path / "mcpbind" / part / module).open("a", encoding="utf-8") as file:
        file.write("\n\n" + code + "\n")
    return tmp_path


def lint(top: pathlib.Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the package laid out under ``top``."""
    command = [str(BIN / "lint-imports"), str(ROOT / "pyproject.toml"), "--no-cache"]
    return run(command, cwd=top, path=top)


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
    done = run([str(ROOT / "scripts" / "lint-imports"), "--no-cache"], cwd=ROOT)
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
    "tap": "the tap is a relay",
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
        pytest.param(
            "tap",
            "stdio.py",
            "def _planted() -> None:\n    from mcpbind.impl.wire.connector import CLIENT_INFO",
            {"tap"},
            id="the-tap-imports-the-runtime",
        ),
        pytest.param(
            "tap",
            "scenario.py",
            "def _planted() -> None:\n    import mcp",
            {"tap"},
            id="the-model-stub-imports-the-sdk",
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
