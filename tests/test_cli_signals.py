"""The CLI when a host closes (SPEC §11.14): SIGINT and SIGTERM during ``mcpbind call`` end
the call ``cancelled``, its server is told, no child process is left, no traceback, exit
130 or 143; Ctrl-C elsewhere is one line; server stderr is kept out of the terminal
unless ``-v``. Through real subprocesses and real signals; the server's wire read through
the logging relay."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest
from cli_runner import mcpbind
from wire import RELAY, SERVER, assert_cancelled_before_eof, call_id_of, wire

pytestmark = pytest.mark.slow


def config(tmp_path: pathlib.Path, log: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "mcpbind.toml"
    args = [str(RELAY), str(log), sys.executable, str(SERVER), str(tmp_path)]
    path.write_text(
        "[mcp_servers.s]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps(args)}\n"
        "tool_timeout_sec = 120\n",
        encoding="utf-8",
    )
    return path


def start_call(tmp_path: pathlib.Path, *extra: str) -> tuple[subprocess.Popen[str], pathlib.Path]:
    log = tmp_path / "wire.log"
    command = [sys.executable, "-m", "mcpbind.cli", "call", "mcp__s__slow", '{"tag": "sig"}']
    command += ["--config", str(config(tmp_path, log)), *extra]
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until the call is on the wire
        if log.exists():
            try:
                call_id_of(wire(log), "slow")
            except AssertionError:
                pass
            else:
                return process, log
        time.sleep(0.05)
    process.kill()
    raise AssertionError("the call never reached the server")


def server_gone(tmp_path: pathlib.Path) -> bool:
    pid = int((tmp_path / "pid").read_text())
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_call_cancels_it_tells_the_server_and_leaves_no_child(
    tmp_path, signum, code
):
    process, log = start_call(tmp_path)
    process.send_signal(signum)
    out, err = process.communicate(timeout=60)
    assert process.returncode == code, err
    assert out.splitlines()[0] == "cli-1: cancelled"
    assert "Traceback" not in err, err
    entries = wire(log)
    assert_cancelled_before_eof(entries, call_id_of(entries, "slow"))
    assert (tmp_path / "cancelled").read_text().split() == ["sig"]
    assert server_gone(tmp_path)


def test_sigint_with_json_prints_the_cancelled_result_as_json(tmp_path):
    process, _ = start_call(tmp_path, "--json")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert json.loads(out)["status"] == "cancelled"
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "command",
    [["explore"], ["check", "--stages", "explore,odometer"], ["fuzz", "--minutes", "5"]],
    ids=["explore", "check", "fuzz"],
)
def test_ctrl_c_during_a_long_command_prints_one_line_and_no_traceback(command):
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpbind.cli", *command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(4)  # the workers are busy
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"mcpbind {command[0]}: interrupted after"), err


def test_ctrl_c_during_catalog_while_a_server_starts_stops_it_in_one_line(tmp_path):
    path = tmp_path / "mcpbind.toml"
    path.write_text(
        "[mcp_servers.s]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER), str(tmp_path)])}\n"
        "startup_timeout_sec = 120\n"
        'env = { MCPBIND_TEST_SLOW_START = "300" }\n',
        encoding="utf-8",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpbind.cli", "catalog", "--config", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("mcpbind catalog: interrupted after"), err
    assert server_gone(tmp_path)


def test_a_servers_stderr_stays_out_of_the_terminal_unless_verbose(tmp_path):
    path = tmp_path / "mcpbind.toml"
    path.write_text(
        "[mcp_servers.s]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER), str(tmp_path)])}\n"
        'env = { MCPBIND_TEST_BANNER = "a banner on stderr" }\n',
        encoding="utf-8",
    )
    quiet = mcpbind("catalog", "--config", str(path))
    assert quiet.returncode == 0, quiet.stderr
    assert "a banner on stderr" not in quiet.stderr + quiet.stdout
    loud = mcpbind("catalog", "--config", str(path), "-v")
    assert loud.returncode == 0, loud.stderr
    assert "[s] a banner on stderr" in loud.stderr


def test_a_server_that_fails_to_start_shows_its_last_stderr_lines(tmp_path):
    path = tmp_path / "mcpbind.toml"
    path.write_text(
        "[mcp_servers.s]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER), str(tmp_path)])}\n"
        "required = true\n"
        'env = { MCPBIND_TEST_EXIT_AT_START = "1" }\n',
        encoding="utf-8",
    )
    done = mcpbind("call", "mcp__s__echo", '{"text": "x"}', "--config", str(path))
    assert done.returncode == 1
    assert "required server 's' could not be started" in done.stderr
    assert "stderr of s" in done.stderr
    assert "fatal: the test asked this server to exit at start" in done.stderr


def test_a_killed_runs_trace_is_a_checkable_prefix_that_ends_early(tmp_path):
    # SPEC §14.3: each record reaches the file as it is written.
    trace = tmp_path / "run.ndjson"
    process, _ = start_call(tmp_path, "--trace", str(trace))
    process.kill()
    process.communicate(timeout=60)
    with contextlib.suppress(ProcessLookupError):  # orphaned by the kill: ours to end
        os.kill(int((tmp_path / "pid").read_text()), signal.SIGKILL)
    lines = trace.read_text(encoding="utf-8").splitlines()
    kinds = [json.loads(line)["kind"] for line in lines]
    assert kinds[0] == "header"
    assert "call" in kinds  # the call on the wire is in the file already
    assert "end" not in kinds
    done = mcpbind("trace", "check", str(trace))
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    assert done.stdout.strip() == (
        f'{trace}: ends early after line {len(lines)} (no {{"kind": "end"}}): '
        f"{len(lines)} records checked; the records so far break no invariant"
    )
    as_json = json.loads(mcpbind("trace", "check", str(trace), "--json").stdout)
    assert (as_json["ends_early"], as_json["conforms"]) == (True, False)
