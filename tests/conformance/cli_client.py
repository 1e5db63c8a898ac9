"""The conformance suite's client through the command line (``scripts/conformance``, its
CLI mode): what a person at a terminal does, with a ``config.toml``.

``python cli_client.py URL``: writes a configuration for the scenario server at URL (the
pre-registered client, or SEP-990's identity-assertion grant with the identity provider
the suite hands its client: ``[mcpbind.oauth.conformance]`` ``idp_*`` keys, the ID token
and the secrets in environment variables), then runs ``mcpbind catalog --json`` and
``mcpbind call`` for each tool. When a command ends saying "run `mcpbind login ...`"
(``LOGIN_REQUIRED``, or ``SCOPE_REQUIRED`` with its ``--scope``), it runs that login,
taking the browser's part (a GET of the URL ``mcpbind login --no-browser`` prints,
following the redirect to its loopback listener), and the command again: at most
:data:`LOGINS` logins in all. Exit 0 when every call ended ``ok``.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

import anyio
import httpx2
from client import CIMD_URL, IDENTITY_ASSERTION, arguments_for, issuer_of

LOGINS = 3
"""Logins one run may need: the first, a step-up, and one to spare."""
SERVER = "conformance"
RUN_LOGIN = re.compile(r"run `(mcpbind login [^`]*)`")


def config_text(url: str, scenario: str, context: Mapping[str, Any], issuer: str | None) -> str:
    """The ``config.toml`` a person would write for the scenario's server."""
    lines = [
        'mcp_oauth_credentials_store = "file"',
        f"[mcp_servers.{SERVER}]",
        f"url = {json.dumps(url)}",
        "required = true",
    ]
    own: list[str] = []
    if "client_id" in context:
        lines += [
            f"[mcp_servers.{SERVER}.oauth]",
            f"client_id = {json.dumps(context['client_id'])}",
        ]
        if "client_secret" in context:
            own.append('client_secret_env_var = "CONFORMANCE_CLIENT_SECRET"')
    else:
        own.append(f"client_metadata_url = {json.dumps(CIMD_URL)}")
    if scenario.startswith("auth/cross-app-access") or scenario in IDENTITY_ASSERTION:
        own += [
            'grant = "identity_assertion"',
            f"issuer = {json.dumps(issuer)}",
            f"idp_token_endpoint = {json.dumps(context['idp_token_endpoint'])}",
            f"idp_client_id = {json.dumps(context['idp_client_id'])}",
            'id_token_env_var = "CONFORMANCE_ID_TOKEN"',
        ]
    if own:
        lines += [f"[mcpbind.oauth.{SERVER}]", *own]
    return "\n".join(lines) + "\n"


class Terminal:
    """``mcpbind`` commands in one scratch home, as one person types them."""

    def __init__(self, home: pathlib.Path, config: pathlib.Path, env: dict[str, str]) -> None:
        self.config = config
        self.env = {**env, "MCPBIND_HOME": str(home)}
        self.env.pop("DISPLAY", None)
        self.logins = 0

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "mcpbind.cli", *args, "--config", str(self.config)]

    async def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``mcpbind ARGS``, logging in and again while it names a login to run."""
        while True:
            done = subprocess.run(
                self.command(*args), capture_output=True, text=True, env=self.env, check=False
            )
            print(f"$ mcpbind {shlex.join(args)}\n{done.stdout}{done.stderr}", flush=True)
            wanted = RUN_LOGIN.search(done.stdout + done.stderr)
            if done.returncode == 0 or wanted is None or self.logins >= LOGINS:
                return done
            await self.login(shlex.split(wanted.group(1))[1:])

    async def login(self, args: list[str]) -> None:
        """``mcpbind login ... --no-browser``, this process its browser."""
        self.logins += 1
        login = subprocess.Popen(
            self.command(*args, "--no-browser", "--timeout", "30"),
            stdout=subprocess.PIPE,
            text=True,
            env=self.env,
        )
        assert login.stdout is not None
        for line in login.stdout:
            if line.startswith(("http://", "https://")):
                async with httpx2.AsyncClient() as browser:
                    await browser.get(line.strip(), follow_redirects=True)
                break
        out, _ = login.communicate(timeout=60)
        print(f"$ mcpbind {shlex.join(args)}\n{out}", flush=True)


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    issuer = await issuer_of(url) if "idp_token_endpoint" in context else None
    env = dict(os.environ)
    for variable, key in (
        ("CONFORMANCE_CLIENT_SECRET", "client_secret"),
        ("CONFORMANCE_ID_TOKEN", "idp_id_token"),
    ):
        if key in context:
            env[variable] = context[key]
    with tempfile.TemporaryDirectory() as scratch:
        config = pathlib.Path(scratch) / "config.toml"
        config.write_text(config_text(url, scenario, context, issuer), encoding="utf-8")
        terminal = Terminal(pathlib.Path(scratch) / "home", config, env)
        listed = await terminal.run("catalog", "--json")
        if listed.returncode != 0:
            return 1
        failed = 0
        for tool in json.loads(listed.stdout)["tools"]:
            if tool["server"] != SERVER:
                continue
            arguments = json.dumps(arguments_for(tool["input_schema"]))
            called = await terminal.run("call", tool["name"], arguments)
            failed += called.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1], backend="trio"))
