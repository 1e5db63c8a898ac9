"""Checks that cannot mislead (SPEC §10.3, §15): ``explore --mutant`` shows one shortest
trace per invariant (``--all``: every violation); the replay corpus ships in the wheel and
``check`` replays it outside a checkout."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import zipfile

import pytest
from cli_runner import mcpbind

from mcpbind.cli.explore import shortest_per_invariant

CORPUS = pathlib.Path(__file__).parent / "replays"
ROOT = pathlib.Path(__file__).parent.parent


def test_shortest_per_invariant_keeps_the_shortest_trace_of_each_invariant_in_order():
    found = [
        {"invariant": "INV-7", "trace": ["a", "b", "c"]},
        {"invariant": "INV-12", "trace": ["a", "b"]},
        {"invariant": "INV-7", "trace": ["x", "y"]},
        {"invariant": "INV-7", "trace": ["p", "q"]},
    ]
    assert shortest_per_invariant(found) == [found[2], found[1]]


@pytest.mark.slow
def test_explore_of_a_mutant_prints_one_shortest_trace_per_invariant_and_all_on_request():
    args = ("explore", "--mutant", "forget_cancel_notification", "--policy", "frozen")
    report = json.loads(mcpbind(*args, "--json").stdout)
    invariants = {v["invariant"] for v in report["violations"]}
    assert len(report["violations"]) > len(invariants)  # the JSON keeps every violation
    shortest = {}
    for v in report["violations"]:
        shortest[v["invariant"]] = min(shortest.get(v["invariant"], 10**9), len(v["trace"]))
    human = mcpbind(*args)
    assert human.returncode == 1
    headers = [line for line in human.stdout.splitlines() if " violated (" in line]
    assert sorted(h.split()[0] for h in headers) == sorted(invariants)
    for invariant, length in shortest.items():
        block = human.stdout.split(f"{invariant} violated (", 1)[1]
        assert f"shortest trace ({length} events)" in block.split("\n\n", 1)[0]
    assert f"--all shows the other {len(report['violations']) - len(invariants)}" in human.stdout
    every = mcpbind(*args, "--all")
    assert every.stdout.count(" violated (") == len(report["violations"])


@pytest.mark.slow
def test_the_wheel_ships_the_replay_corpus_and_check_outside_a_checkout_replays_it(tmp_path):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("mcpbind-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            pathlib.PurePosixPath(n).name
            for n in archive.namelist()
            if n.startswith("mcpbind/replays/")
        }
        archive.extractall(tmp_path / "site")
    assert shipped == {p.name for p in CORPUS.glob("*.json")}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [sys.executable, "-c", "from mcpbind.cli.replays import bundled_corpus as b; print(b())"],
        capture_output=True,
        text=True,
        check=False,
        cwd=elsewhere,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"},
    )
    assert where.returncode == 0, where.stderr
    assert pathlib.Path(where.stdout.strip()) == tmp_path / "site" / "mcpbind" / "replays"


@pytest.mark.slow
def test_strict_check_of_a_trace_whose_server_never_started_cannot_refine(tmp_path):
    from wire import SERVER

    config = tmp_path / "config.toml"
    config.write_text(
        "[mcp_servers.notes]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["-m", "mcpbind.demo.servers", "notes"]\n'
        "[mcp_servers.dead]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER), str(tmp_path / 'state')])}\n"
        'env = { MCPBIND_TEST_EXIT_AT_START = "1" }\n',
        encoding="utf-8",
    )
    trace = tmp_path / "run.ndjson"
    ran = mcpbind("catalog", "--config", str(config), "--trace", str(trace))
    assert ran.returncode == 1  # dead did not start
    assert mcpbind("trace", "check", str(trace)).returncode == 0  # the monitors: conforms
    strict = mcpbind("trace", "check", "--strict", str(trace))
    assert strict.returncode == 2
    assert strict.stderr.strip() == (
        f"mcpbind trace check: {trace}: cannot refine: line 1: server 'dead' never started "
        "(no record names it), which refinement does not cover"
    )
    assert not (tmp_path / "run.ndjson.replay.json").exists()
