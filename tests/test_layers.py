"""The layer contracts of SPEC §11.1 (import-linter, ``[tool.importlinter]`` in
pyproject.toml) hold, and each of them fails on a planted violation."""

from __future__ import annotations

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


def test_every_layer_contract_is_kept():
    done = lint()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(
    ("part", "module", "code", "broken"),
    [
        pytest.param(
            "impl",
            "runtime.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .host import Host",
            "no import cycle between the modules of impl",
            id="type-checking-cycle",
        ),
        pytest.param(
            "impl",
            "calls.py",
            "def _planted() -> None:\n    from .router import Router",
            "no import cycle between the modules of impl",
            id="function-level-cycle",
        ),
        pytest.param(
            "model",
            "table.py",
            "import trio",
            "model is sans-IO",
            id="model-imports-trio",
        ),
        pytest.param(
            "model",
            "rules.py",
            "from mcpbind.impl import registry",
            "model is sans-IO",
            id="model-imports-impl",
        ),
        pytest.param(
            "impl",
            "host.py",
            "from mcpbind.properties import chooser",
            "impl imports neither the property machines nor the CLI",
            id="impl-imports-properties",
        ),
        pytest.param(
            "impl",
            "calls.py",
            "import trio",
            "impl imports neither the property machines nor the CLI, nor trio",
            id="impl-imports-trio",
        ),
    ],
)
def test_a_planted_violation_breaks_its_contract(tmp_path, part, module, code, broken):
    done = lint(planted(tmp_path, part, module, code))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 kept, 1 broken" in done.stdout
    assert f"{broken}" in done.stdout.split("Broken contracts", 1)[1]
