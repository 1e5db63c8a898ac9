"""Security (issue 6): secrets never reach logs, errors, CLI output or traces; no server
can shadow a builtin or another server's tool. The secrets include an OAuth client secret
(issue 19, SPEC §11.15); tokens and codes are checked in ``test_oauth.py``."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest
import trio

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.config.host import parse_toml

SECRET = "sk-live-7f3e9a1c0b2d-SECRET"
pytestmark = pytest.mark.slow


def config_text(port: int) -> str:
    python = json.dumps(sys.executable)
    return f"""
[mcp_servers.notes]
command = {python}
args = ["-m", "mcpbind.demo.servers", "notes"]
env = {{ NOTES_TOKEN = "{SECRET}" }}

[mcp_servers.web]
url = "http://127.0.0.1:{port}/mcp"
bearer_token_env_var = "WEB_TOKEN"
http_headers = {{ "X-Api-Key" = "{SECRET}" }}
env_http_headers = {{ "X-Other" = "OTHER_KEY" }}
startup_timeout_sec = 2

[mcp_servers.robot]
url = "http://127.0.0.1:{port}/robot"
startup_timeout_sec = 2
[mcp_servers.robot.oauth]
client_id = "robot"

[mcpbind.oauth.robot]
grant = "client_credentials"
client_secret_env_var = "ROBOT_SECRET"
issuer = "http://127.0.0.1:{port}"
"""


def test_secrets_never_reach_logs_errors_reprs_or_results(caplog, tmp_path):
    caplog.set_level(logging.DEBUG)
    environ = {"WEB_TOKEN": SECRET, "OTHER_KEY": SECRET, "ROBOT_SECRET": SECRET}
    config = parse_toml(config_text(9), path="c.toml", environ=environ).config
    seen: list[str] = [repr(config), *(s.describe() for s in config.servers.values())]

    async def main() -> None:
        async with Host.open(config) as host:
            snap = host.sample()
            seen.extend(repr(s) for s in host.server_status())
            seen.append(repr(snap.specs))
            for name in ("mcp__notes__add", "mcp__web__x", "mcp__notes__nope"):
                result = await host.call(snap, f"c-{name}", name, {"text": "hello"})
                seen.append(repr(result))
            seen.append(repr(await host.refresh("web")))
            seen.append(repr(host.statistics()))

    trio.run(main)
    seen.extend(record.getMessage() for record in caplog.records)
    seen.extend(str(record.exc_info) for record in caplog.records if record.exc_info)
    for text in seen:
        assert SECRET not in text


def test_secrets_never_reach_cli_output(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(config_text(9))
    env = {**os.environ, "WEB_TOKEN": SECRET, "OTHER_KEY": SECRET, "ROBOT_SECRET": SECRET}
    for args in (
        ["catalog", "--json"],
        ["catalog"],
        ["call", "mcp__notes__add", '{"text": "x"}', "--json"],
        ["call", "mcp__web__anything"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "mcpbind.cli", *args, "--config", str(path)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            env=env,
        )
        assert SECRET not in done.stdout + done.stderr, args
    broken = tmp_path / "broken.toml"
    broken.write_text(config_text(9) + "\nbogus = 1\n")
    done = subprocess.run(
        [sys.executable, "-m", "mcpbind.cli", "catalog", "--config", str(broken)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=env,
    )
    assert done.returncode == 2
    assert SECRET not in done.stdout + done.stderr


async def test_a_server_cannot_take_another_servers_tool():
    """INV-5/INV-6: a second server listing the same name gets a different one; the first
    keeps its binding."""
    from testservers.inproc import paged_server, tool

    first = ServerConfig(target=paged_server([[tool("run")]]))
    second = ServerConfig(target=paged_server([[tool("run")]]))
    async with Host.open(HostConfig(servers={"a.b": first, "a_b": second})) as host:
        snap = host.sample()
        owner = snap.binding("mcp__a_b__run")
        assert owner is not None
        assert owner.server == "a.b"
        await host.refresh("a_b")
        assert host.sample().binding("mcp__a_b__run").server == "a.b"
