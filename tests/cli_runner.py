"""Run the ``mcpbind`` command in a real subprocess, as a user would."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def mcpbind(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
    stdin: int | None = subprocess.DEVNULL,
) -> subprocess.CompletedProcess[str]:
    """``stdin`` is not a terminal by default, as in a script: ``mcpbind call`` then never
    stops to ask for approval, even when pytest itself runs on a terminal."""
    return subprocess.run(
        [sys.executable, "-m", "mcpbind.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        cwd=cwd,
        env=env,
        stdin=stdin,
    )
