"""``mcpbind fuzz`` (SPEC §13.6): sharded, time-boxed, a shared example database."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time

import pytest
from cli_runner import mcpbind

pytestmark = pytest.mark.slow


def fuzz(*args: str) -> subprocess.CompletedProcess[str]:
    return mcpbind("fuzz", "--json", *args)


def test_fuzz_finds_a_planted_bug_and_shares_it_through_a_directory_database(tmp_path):
    db, out = tmp_path / "db", tmp_path / "failures"
    plant = ("--plant", "drop_notifications_during_a_refresh")
    first = fuzz(
        "--minutes", "0.3", "--workers", "2", "--db", str(db), "--failures", str(out), *plant
    )
    assert first.returncode == 1, first.stderr
    report = json.loads(first.stdout)
    assert report["failures"]
    assert all("replay_file" in f for f in report["failures"])
    assert any(db.iterdir()), "the failure was saved to the shared database"
    again = fuzz(
        "--minutes", "0.2", "--workers", "1", "--db", str(db), "--failures", str(out), *plant
    )
    assert again.returncode == 1
    assert json.loads(again.stdout)["failures"][0]["trace"]


def test_fuzz_without_a_bug_exits_zero(tmp_path):
    db, out = str(tmp_path / "db"), str(tmp_path / "failures")
    done = fuzz("--minutes", "0.1", "--workers", "1", "--db", db, "--failures", out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["examples"] > 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path):
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("no redis-server binary on this machine (.ci/run installs one with apt-get)")
    port = free_port()
    server = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(10)


def test_fuzz_shares_findings_through_redis(redis_url, tmp_path):
    import redis

    plant = ("--plant", "drop_notifications_during_a_refresh")
    done = fuzz(
        "--minutes", "0.3", "--workers", "2", "--db", redis_url, "--failures", str(tmp_path), *plant
    )
    assert done.returncode == 1, done.stderr
    assert redis.Redis.from_url(redis_url).dbsize() > 0
