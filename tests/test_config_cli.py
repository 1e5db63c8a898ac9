"""Codex-compatible configuration and the catalog/call commands (issue 5)."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest
from cli_runner import mcpbind

from mcpbind.impl import ConfigError, ConfigWarning, HostConfig, ToolConfig
from mcpbind.impl.config.host import parse_toml

PYTHON = json.dumps(sys.executable)


def demo_server(name: str, **extra: str) -> str:
    lines = [
        f"[mcp_servers.{json.dumps(name)}]",
        f"command = {PYTHON}",
        f'args = ["-m", "mcpbind.demo.servers", {json.dumps(name)}]',
        *(f"{key} = {value}" for key, value in extra.items()),
    ]
    return "\n".join(lines) + "\n"


def parse(text: str, environ=None):
    return parse_toml(textwrap.dedent(text), path="conf.toml", environ=environ or {})


def test_a_codex_config_with_stdio_and_http_servers_loads():
    loaded = parse(
        """
        model = "gpt-5"            # other tables and keys of Codex are ignored
        [profiles.fast]
        model = "x"
        [mcp_servers.fs]
        command = "npx"
        args = ["-y", "server-fs"]
        env = { ROOT = "/tmp" }
        cwd = "/tmp"
        enabled_tools = ["read"]
        disabled_tools = ["write"]
        startup_timeout_sec = 5
        tool_timeout_sec = 60.5
        supports_parallel_tool_calls = true
        required = true
        [mcp_servers.web]
        url = "https://example.invalid/mcp"
        bearer_token_env_var = "WEB_TOKEN"
        http_headers = { "X-Team" = "core" }
        enabled = false
        [mcpbind]
        max_name_length = 48
        binding_policy = "frozen"
        output_limit = 2000
        """,
        environ={"WEB_TOKEN": "s3cret"},
    )
    config = loaded.config
    assert loaded.warnings == ()
    fs, web = config.servers["fs"], config.servers["web"]
    assert fs.target.command == "npx"
    assert fs.target.args == ("-y", "server-fs")
    assert fs.enabled_tools == frozenset({"read"})
    assert (fs.startup_timeout_sec, fs.tool_timeout_sec) == (5.0, 60.5)
    assert fs.required
    assert fs.supports_parallel_tool_calls
    assert web.target == "https://example.invalid/mcp"
    assert web.headers == {"X-Team": "core", "Authorization": "Bearer s3cret"}
    assert not web.enabled
    assert (config.max_name_length, config.binding_policy, config.output_limit) == (
        48,
        "frozen",
        2000,
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[mcp_servers.fs]\ncommand = "x"\ntool_timout_sec = 3\n',
            "conf.toml: [mcp_servers.fs] key 'tool_timout_sec': unknown key; "
            "did you mean 'tool_timeout_sec'?",
        ),
        (
            "[mcpbind]\nmax_name_lenght = 3\n",
            "conf.toml: [mcpbind] key 'max_name_lenght': unknown key; "
            "did you mean 'max_name_length'?",
        ),
        (
            '[mcp_servers.fs]\ncommand = "x"\nurl = "http://h/mcp"\n',
            "conf.toml: [mcp_servers.fs]: has both 'command' and 'url'",
        ),
        ("[mcp_servers.fs]\nenabled = true\n", "needs 'command' (stdio) or 'url'"),
        (
            '[mcp_servers.fs]\ncommand = "x"\ntool_timeout_sec = -1\n',
            "[mcp_servers.fs] key 'tool_timeout_sec': must be >= 0",
        ),
        (
            '[mcp_servers.fs]\ncommand = "x"\nstartup_timeout_sec = "30"\n',
            "key 'startup_timeout_sec': must be a number, got str",
        ),
        (
            '[mcp_servers.fs]\ncommand = "x"\nargs = "a b"\n',
            "key 'args': must be a list of strings",
        ),
        ('[mcp_servers.fs]\ncommand = "x"\nrequired = "yes"\n', "must be true or false"),
        ('[mcp_servers.fs]\nurl = "ftp://h"\n', "key 'url': must start with http:// or https://"),
        ('[mcp_servers.fs]\ncommand = "x"\nhttp_headers = {}\n', "applies to 'url' servers only"),
        ('[mcpbind]\nbinding_policy = "loose"\n', "must be 'frozen' or 'revalidate'"),
        ("[mcpbind]\nmax_name_length = 10\n", "max_name_length must be an integer >= 24"),
        ("this is = = not toml", "conf.toml: not valid TOML"),
    ],
)
def test_bad_configuration_is_a_config_error_naming_file_table_and_key(text, message):
    with pytest.raises(ConfigError) as caught:
        parse(text)
    assert message in str(caught.value)


def test_a_codex_key_mcpbind_does_not_act_on_is_accepted_with_a_warning(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[mcp_servers.fs]\ncommand = "x"\nenv_vars = ["HOME"]\n')
    with pytest.warns(ConfigWarning, match="'env_vars' is a Codex setting"):
        config = HostConfig.from_toml(path)
    assert "fs" in config.servers


def test_per_tool_settings_and_the_default_approval_mode_are_read(tmp_path):
    loaded = parse(
        """
        [mcp_servers.fs]
        command = "x"
        default_tools_approval_mode = "writes"
        [mcp_servers.fs.tools.read]
        approval_mode = "approve"
        output_token_limit = 100
        """
    )
    fs = loaded.config.servers["fs"]
    assert fs.default_tools_approval_mode == "writes"
    assert fs.tools["read"] == ToolConfig(approval_mode="approve", output_token_limit=100)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('approval_mode = "sometimes"', "key 'approval_mode': must be one of auto"),
        ("output_byte_limit = 0", "key 'output_byte_limit': must be an integer >= 1"),
        ("aproval_mode = 'auto'", "did you mean 'approval_mode'"),
    ],
)
def test_a_bad_per_tool_setting_names_the_tool_table_and_key(line, message):
    text = f'[mcp_servers.fs]\ncommand = "x"\n[mcp_servers.fs.tools.read]\n{line}\n'
    with pytest.raises(ConfigError, match=r"\[mcp_servers\.fs\.tools\.read\]") as caught:
        parse(text)
    assert message in str(caught.value)


def test_secrets_never_appear_in_errors_or_reprs():
    secret = "hunter2-secret-value"
    text = f"""
        [mcp_servers.fs]
        command = "x"
        env = {{ API_KEY = "{secret}" }}
        [mcp_servers.web]
        url = "http://h/mcp"
        http_headers = {{ "X-Key" = "{secret}" }}
        bearer_token_env_var = "TOKEN"
        """
    config = parse(text, environ={"TOKEN": secret}).config
    assert secret not in repr(config)
    assert secret not in config.servers["fs"].describe()
    with pytest.raises(ConfigError) as caught:
        parse(text + "\n        bogus = 1\n", environ={"TOKEN": secret})
    assert secret not in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        parse('[mcp_servers.fs]\ncommand = "x"\nenv = { K = 12345 }\n')
    assert "12345" not in str(caught.value)
    assert "env.K" in str(caught.value)


@pytest.mark.slow
def test_catalog_without_a_config_uses_the_embedded_demo(tmp_path):
    done = mcpbind("catalog", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    names = {t["name"]: t for t in report["tools"]}
    assert {s["name"] for s in report["servers"]} == {"git.hub", "git_hub", "notes"}
    assert names["mcp__git_hub__search"]["server"] == "git.hub"  # first in config order
    renamed = [
        n for n, t in names.items() if t["server"] == "git_hub" and t["remote_name"] == "search"
    ]
    assert renamed[0].startswith("mcp__git_hub__search_")
    assert names["mcp__git_hub__create_issue"]["remote_name"] == "create-issue"
    assert names["mcp__git_hub__search"]["parallel"] is True
    assert names["mcp__git_hub__build"]["parallel"] is False
    assert set(names["mcp__notes__add"]) == {
        "name",
        "server",
        "remote_name",
        "description",
        "input_schema",
        "parallel",
    }
    assert report["generation"] == 3


@pytest.mark.slow
def test_catalog_reads_mcpbind_toml_from_the_working_directory_and_applies_filters(tmp_path):
    (tmp_path / "mcpbind.toml").write_text(
        demo_server("notes", enabled_tools='["add", "list"]', disabled_tools='["list"]')
    )
    done = mcpbind("catalog", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [t["name"] for t in json.loads(done.stdout)["tools"]] == ["mcp__notes__add"]
    human = mcpbind("catalog", cwd=tmp_path)
    assert "catalog from ./mcpbind.toml: generation 1" in human.stdout
    assert "mcp__notes__add" in human.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "arguments", "status", "code"),
    [
        ("mcp__notes__add", '{"text": "hi"}', "ok", 0),
        ("mcp__git_hub__deploy", "", "error", 1),
        ("mcp__nope__nope", "", "unsupported", 1),
    ],
)
def test_call_routes_one_call_and_exits_by_status(tmp_path, name, arguments, status, code):
    config = tmp_path / "c.toml"
    config.write_text(demo_server("notes") + demo_server("git.hub"))
    args = ["call", name, *([arguments] if arguments else []), "--config", str(config), "--json"]
    done = mcpbind(*args, "--call-id", "x-1")
    assert done.returncode == code, done.stderr
    report = json.loads(done.stdout)
    assert (report["call_id"], report["status"]) == ("x-1", status)


@pytest.mark.slow
def test_call_timeout_from_the_config(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(demo_server("git.hub", tool_timeout_sec="0.5"))
    done = mcpbind("call", "mcp__git_hub__build", '{"seconds": 5}', "--config", str(config))
    assert done.returncode == 1
    assert "cli-1: timed_out" in done.stdout


def test_config_errors_exit_2_naming_the_file(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text('[mcp_servers.fs]\ncommand = "x"\nenabeld = true\n')
    for command in (["catalog"], ["call", "mcp__fs__x"]):
        done = mcpbind(*command, "--config", str(config))
        assert done.returncode == 2
        assert (
            f"{config}: [mcp_servers.fs] key 'enabeld': unknown key; did you mean 'enabled'?"
            in done.stderr
        )
    missing = mcpbind("catalog", "--config", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2
    assert "cannot read" in missing.stderr


@pytest.mark.slow
def test_an_unreachable_server_is_reported_without_its_secrets(tmp_path):
    secret = "tok-0123456789-secret"
    config = tmp_path / "c.toml"
    config.write_text(
        demo_server("notes")
        + '[mcp_servers.web]\nurl = "http://127.0.0.1:9/mcp"\nbearer_token_env_var = "T"\n'
        + 'http_headers = { "X-Key" = "'
        + secret
        + '" }\nstartup_timeout_sec = 3\n'
    )
    env = {**os.environ, "T": secret}
    done = mcpbind("catalog", "--config", str(config), "--json", env=env)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    web = next(s for s in report["servers"] if s["name"] == "web")
    assert web["status"] == "unavailable"
    assert web["error"]
    assert secret not in done.stdout + done.stderr


def test_help_lists_every_command():
    done = mcpbind("--help")
    for command in ("catalog", "call", "explore", "check", "fuzz"):
        assert command in done.stdout
