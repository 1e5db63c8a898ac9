"""Bad input to the CLI ends with one line on stderr and the documented exit status, never
a traceback (SPEC §15): each input driven through a real subprocess, as a user would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from cli_runner import mcpbind
from wire import SERVER

USAGE = 2
INTERRUPTED = 130
BROKEN_PIPE = 141


def assert_one_line(stderr: str, start: str) -> None:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(start), stderr


def test_check_replay_of_a_missing_file_is_a_usage_error(tmp_path):
    done = mcpbind("check", "--replay", str(tmp_path / "missing.json"))
    assert done.returncode == USAGE
    assert_one_line(done.stderr, "mcpbind check: cannot read")
    assert "No such file or directory" in done.stderr


def test_check_replay_of_a_file_without_events_is_a_usage_error(tmp_path):
    path = tmp_path / "replay.json"
    path.write_text('{"policy": "frozen"}', encoding="utf-8")
    done = mcpbind("check", "--replay", str(path))
    assert done.returncode == USAGE
    assert_one_line(done.stderr, f'mcpbind check: {path} is not a replay file: no "events"')


def test_check_replay_of_a_file_that_is_not_json_is_a_usage_error(tmp_path):
    path = tmp_path / "replay.json"
    path.write_text("events: none", encoding="utf-8")
    done = mcpbind("check", "--replay", str(path))
    assert done.returncode == USAGE
    assert_one_line(done.stderr, f"mcpbind check: {path} is not a replay file: not JSON")


def test_check_replay_whose_events_the_model_does_not_allow_is_a_usage_error(tmp_path):
    path = tmp_path / "replay.json"
    path.write_text('{"policy": "frozen", "events": ["bogus"]}', encoding="utf-8")
    done = mcpbind("check", "--replay", str(path))
    assert done.returncode == USAGE
    assert "Traceback" not in done.stderr
    # the stage's own progress line, then the error
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(f"mcpbind check: {path} does not replay: step 0: bogus is not allowed here")
    ), done.stderr


def test_check_with_an_unknown_stage_is_a_usage_error():
    done = mcpbind("check", "--stages", "foo")
    assert done.returncode == USAGE
    assert_one_line(done.stderr, "mcpbind check: unknown stage(s): foo (the stages: explore,")


@pytest.mark.parametrize("corpus", ["missing", "empty"])
def test_check_with_a_corpus_that_holds_no_replays_is_a_usage_error(tmp_path, corpus):
    (tmp_path / "empty").mkdir()
    done = mcpbind("check", "--stages", "replays", "--corpus", str(tmp_path / corpus))
    assert done.returncode == USAGE
    assert_one_line(done.stderr, f"mcpbind check: --corpus {tmp_path / corpus}: no ")


def test_call_with_an_empty_call_id_is_a_usage_error(tmp_path):
    done = mcpbind("call", "mcp__notes__list", "--call-id", "", cwd=tmp_path)
    assert done.returncode == USAGE
    assert_one_line(done.stderr, "mcpbind call: --call-id must not be empty")
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("arguments", "why"),
    [("{bad", "is not valid JSON"), ("[1, 2]", "is JSON list where an object is required")],
)
def test_call_with_malformed_arguments_fails_before_any_server_starts(tmp_path, arguments, why):
    config = tmp_path / "mcpbind.toml"
    config.write_text(
        "[mcp_servers.s]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER), str(tmp_path / 'state')])}\n",
        encoding="utf-8",
    )
    done = mcpbind("call", "mcp__s__echo", arguments, "--config", str(config))
    assert done.returncode == USAGE
    assert_one_line(done.stderr, f"mcpbind call: ARGS_JSON {why}")
    assert not (tmp_path / "state" / "pid").exists()  # the server never started


@pytest.mark.parametrize("workers", ["0", "-1"])
def test_explore_with_no_workers_is_a_usage_error(workers):
    done = mcpbind("explore", "--workers", workers)
    assert done.returncode == USAGE
    assert_one_line(done.stderr, f"mcpbind explore: --workers must be >= 1, got {workers}")


def closed_stdout(*args: str) -> tuple[int, str]:
    """Run with a stdout whose reader has already gone (``| head -0``)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpbind.cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdout.close()
    with process.stderr:
        err = process.stderr.read()
    return process.wait(timeout=120), err


SMALL = ("--servers", "1", "--steps", "1", "--calls", "1", "--policy", "frozen")


@pytest.mark.parametrize(
    "command",
    [
        ["explore", *SMALL],
        ["explore", *SMALL, "--mutant", "forget_cancel_notification"],
        ["call", "mcp__notes__list"],
        ["catalog", "--json"],
    ],
    ids=["explore", "explore-mutant", "call", "catalog"],
)
def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path, command):
    code, err = closed_stdout(*command)
    assert code == BROKEN_PIPE, err
    assert err == ""


def test_ctrl_c_while_the_cli_is_still_importing_prints_one_line():
    # -X importtime reports each module as its import ends: the signal lands while the
    # command's modules (trio, the SDK) are still loading, before the command has begun.
    process = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "mcpbind.cli", "catalog"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    seen: list[str] = []
    for line in process.stderr:
        seen.append(line)
        if line.split("|")[-1].strip() == "trio":
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == INTERRUPTED, err
    assert "mcpbind.impl.host" not in "".join(seen)  # still importing when signalled
    ours = [line for line in err.splitlines() if not line.startswith("import time:")]
    assert_one_line("\n".join(ours), "mcpbind catalog: interrupted after")
    assert out == ""


def test_a_non_json_line_on_a_servers_stdout_is_its_log_line_not_a_traceback(tmp_path):
    config = tmp_path / "mcpbind.toml"
    config.write_text(
        "[mcp_servers.s]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER), str(tmp_path)])}\n"
        'env = { MCPBIND_TEST_GARBAGE = "1" }\n',
        encoding="utf-8",
    )
    quiet = mcpbind("call", "mcp__s__echo", '{"text": "x"}', "--config", str(config))
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""
    loud = mcpbind("call", "mcp__s__echo", '{"text": "x"}', "--config", str(config), "-v")
    assert loud.returncode == 0, loud.stderr
    assert "Traceback" not in loud.stderr
    assert "[s] (stdout, not JSON-RPC, skipped) this is not JSON-RPC" in loud.stderr


@pytest.mark.parametrize(
    ("command", "after"),
    [(["explore"], 4.0), (["fuzz", "--minutes", "5", "--workers", "2"], 6.0)],
    ids=["explore", "fuzz"],
)
def test_ctrl_c_on_a_terminal_reaches_the_workers_too_and_prints_one_line(command, after):
    # A terminal sends SIGINT to the whole foreground process group: the worker processes
    # (some still importing) get it as well, and must leave the report to the parent.
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpbind.cli", *command],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    time.sleep(after)  # the workers have been started
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == INTERRUPTED, err
    assert_one_line(err, f"mcpbind {command[0]}: interrupted after")
