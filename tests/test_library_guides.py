"""The library guides (docs/library/reconfiguration.md, SPEC §11.17; host-lifetime.md,
§11.18-§11.19): each runnable example, run as written, prints what its guide says."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

LIBRARY = pathlib.Path(__file__).resolve().parent.parent / "docs" / "library"


@pytest.mark.parametrize("page", ["reconfiguration.md", "host-lifetime.md"])
def test_a_library_guide_example_runs_and_prints_what_the_guide_says(page, tmp_path):
    text = (LIBRARY / page).read_text(encoding="utf-8")
    example = text.split("## A runnable example")[1].split("```python\n")[1].split("```")[0]
    printed = text.split("It prints:\n\n```text\n")[1].split("```")[0]
    script = tmp_path / "example.py"
    script.write_text(example, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == printed
