"""Progress of the long commands (cli/progress.py): on a terminal, a live line (stage,
counts, rate, time) and one line per finished stage; plain lines when stderr is not a
terminal for ``check`` (``explore`` and ``fuzz``: none, their result says it); nothing with
``--json``."""

from __future__ import annotations

import fcntl
import json
import os
import pathlib
import pty
import re
import struct
import subprocess
import sys
import termios

from cli_runner import mcpbind

SMALL = ("explore", "--servers", "1", "--steps", "1", "--calls", "1", "--policy", "frozen")


def on_a_terminal(*args: str) -> tuple[int, str]:
    """Run with stderr on a pseudo-terminal of 160 columns; what it drew there."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpbind.cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=follower,
    )
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    return process.wait(timeout=600), drawn.decode("utf-8", "replace")


def test_explore_on_a_terminal_draws_parts_states_and_rate_then_one_line():
    code, drawn = on_a_terminal(*SMALL)
    assert code == 0
    assert "Traceback" not in drawn
    assert "10/10" in drawn  # the parts done, of all
    assert "states (" in drawn  # the states found so far and their rate
    assert "/s)" in drawn
    last = drawn.replace("\r", "\n").strip().splitlines()[-1]
    assert "ok   explore: 10 parts, " in last
    assert last.rstrip().endswith(" s)")


def test_explore_into_a_pipe_or_with_json_prints_no_progress():
    plain = mcpbind(*SMALL)
    assert plain.returncode == 0
    assert plain.stderr == ""  # its result on stdout says it all
    quiet = mcpbind(*SMALL, "--json")
    assert quiet.stderr == ""
    assert json.loads(quiet.stdout)["violations"] == []


def test_check_on_a_terminal_counts_the_jobs_of_its_stages_then_leaves_a_line_each(tmp_path):
    code, drawn = on_a_terminal(
        "check", "--stages", "replays", "--workers", "2", "--failures", str(tmp_path)
    )
    assert code == 0
    assert "Traceback" not in drawn
    assert "1 stage side by side" in drawn  # the live line: the stages, their jobs
    files = len(list((pathlib.Path(__file__).parent / "replays").glob("*.json")))
    assert f"{files}/{files}" in drawn  # one job per replay file
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn)
    lines = plain.replace("\r", "\n").strip().splitlines()
    finished = [line for line in lines if line.startswith("  ok   replay corpus: ")]
    assert len(finished) == 1
    assert finished[0].rstrip().endswith(" s)")
