"""The peers benchmark command keeps working without installing or running anything:
``--help`` and ``--dry-run`` only (no network, no timing)."""

from __future__ import annotations

import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.peers", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_peers_help_names_every_option():
    done = run("--help")
    assert done.returncode == 0, done.stderr
    for option in ("--quick", "--json", "--venv-dir", "--dry-run"):
        assert option in done.stdout


def test_peers_dry_run_plans_one_venv_per_pinned_peer_and_creates_nothing(tmp_path):
    venvs = tmp_path / "venvs"
    done = run("--dry-run", "--venv-dir", str(venvs))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["fastmcp", "pydantic-ai", "openai-agents"]
    assert all(" create " in line and "==" in line for line in lines)
    assert not venvs.exists()


def test_peers_dry_run_reuses_a_ready_venv(tmp_path):
    ready = tmp_path / "fastmcp-4.2.3" / ".mcpbind-ready"
    ready.parent.mkdir()
    ready.write_text("fastmcp==4.2.3\n")
    done = run("--dry-run", "--venv-dir", str(tmp_path), "--only", "fastmcp")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("fastmcp: reuse ")


def test_a_peer_that_cannot_be_installed_is_reported_with_the_reason(tmp_path):
    from benchmarks.peers.__main__ import PEERS, run_peer

    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    result = run_peer(PEERS[0], not_a_dir, "smoke", lambda label: None)
    assert set(result) == {"error"}
    assert result["error"].startswith("not installed: ")


def test_a_peer_whose_runner_cannot_start_is_reported_with_the_reason(tmp_path):
    from benchmarks.peers.__main__ import PEERS, run_peer

    peer = PEERS[0]
    (tmp_path / peer.venv_name).mkdir()
    (tmp_path / peer.venv_name / ".mcpbind-ready").write_text(peer.requirement)
    result = run_peer(peer, tmp_path, "smoke", lambda label: None)
    assert set(result) == {"error"}
    assert result["error"].startswith("runner did not start: ")


def test_the_table_shows_a_failed_peer_with_its_reason_and_a_measured_one_with_ratios():
    from benchmarks.peers.__main__ import table

    figure = {"ratio": 1.25, "diff_us": 250.0}
    figures = {
        "tools": 2048,
        "peers": {
            "mcpbind": {"call_overhead_ratio": figure, "catalog_build_ratio": figure},
            "fastmcp": {"error": "not installed: no network"},
        },
    }
    lines = table(figures).splitlines()
    assert "catalog of 2048" in lines[0]
    assert "x1.250" in lines[1]
    assert "+0.2ms" in lines[1]
    assert lines[2].split() == ["fastmcp", "not", "installed:", "no", "network"]
