"""A Codex config works unchanged (SPEC §11.4): the environment variables a server's
``bearer_token_env_var`` and ``env_http_headers`` name are read as Codex reads them: not
at all for a disabled server; an unset ``env_http_headers`` variable leaves its header
out; an unset ``bearer_token_env_var`` fails that server alone, when it starts, naming the
variable."""

from __future__ import annotations

import json
import sys
import textwrap

from cli_runner import mcpbind

from mcpbind.impl.config.host import parse_toml

PYTHON = json.dumps(sys.executable)
WEB = '[mcp_servers.web]\nurl = "http://127.0.0.1:9/mcp"\nbearer_token_env_var = "NOPE_TOKEN"\n'
NOTES = f'[mcp_servers.notes]\ncommand = {PYTHON}\nargs = ["-m", "mcpbind.demo.servers", "notes"]\n'


def parse(text: str, environ: dict[str, str] | None = None):
    return parse_toml(textwrap.dedent(text), path="conf.toml", environ=environ or {})


def test_a_disabled_servers_variables_are_never_read():
    loaded = parse(
        "[mcp_servers.web]\n"
        'url = "http://127.0.0.1:9/mcp"\n'
        "enabled = false\n"
        'bearer_token_env_var = "NOPE_TOKEN"\n'
        'env_http_headers = { "X-Team" = "NOPE_TEAM" }\n'
    )
    web = loaded.config.servers["web"]
    assert not web.enabled
    assert web.unusable is None


def test_an_unset_or_blank_env_http_headers_variable_leaves_its_header_out():
    loaded = parse(
        "[mcp_servers.web]\n"
        'url = "http://127.0.0.1:9/mcp"\n'
        'env_http_headers = { "X-Team" = "NOPE_TEAM", "X-Blank" = "BLANK", "X-Set" = "SET" }\n',
        environ={"BLANK": "  ", "SET": "v"},
    )
    web = loaded.config.servers["web"]
    assert dict(web.headers) == {"X-Set": "v"}
    assert web.unusable is None


def test_an_unset_or_empty_bearer_token_variable_makes_that_server_unusable_not_the_file():
    for environ, state in (({}, "is not set"), ({"NOPE_TOKEN": ""}, "is empty")):
        web = parse(WEB, environ).config.servers["web"]
        assert web.unusable is not None
        assert f"environment variable 'NOPE_TOKEN' for MCP server 'web' {state}" in web.unusable
        assert "Authorization" not in web.headers
    ok = parse(WEB, {"NOPE_TOKEN": "t0k"}).config.servers["web"]
    assert ok.unusable is None
    assert ok.headers["Authorization"] == "Bearer t0k"


def test_the_other_servers_come_up_when_one_lacks_its_bearer_token(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(NOTES + WEB, encoding="utf-8")
    done = mcpbind("catalog", "--config", str(config), "--json")
    assert done.returncode == 1, done.stderr  # a server failed, the command did not
    assert "Traceback" not in done.stderr
    servers = {s["name"]: s for s in json.loads(done.stdout)["servers"]}
    assert servers["notes"]["status"] == "connected"
    assert servers["web"]["status"] == "unavailable"
    assert (
        "environment variable 'NOPE_TOKEN' for MCP server 'web' is not set"
        in (servers["web"]["error"])
    )


def test_a_required_server_without_its_bearer_token_fails_the_start_naming_the_variable(
    tmp_path,
):
    config = tmp_path / "config.toml"
    config.write_text(NOTES + WEB + "required = true\n", encoding="utf-8")
    done = mcpbind("call", "mcp__notes__list", "--config", str(config))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(
        "mcpbind: required server 'web' could not be started: environment variable "
        "'NOPE_TOKEN' for MCP server 'web' is not set"
    ), done.stderr
