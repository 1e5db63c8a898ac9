"""What ``catalog`` and ``login`` print (issue: output that misleads): columns that stay
aligned with long names, descriptions wrapped and indented under their row, and a login
on an unreachable server that does not advise ``required = false``."""

from __future__ import annotations

from cli_runner import mcpbind

from mcpbind.cli.catalog import _print_catalog


def report(tools: list[dict[str, object]]) -> dict[str, object]:
    server = {
        "name": "a-server-with-a-rather-long-name",
        "status": "connected",
        "auth": "unsupported",
        "tools": len(tools),
        "error": None,
        "stderr": [],
        "excluded": [],
        "hears_list_changed": True,
        "unlisted_enabled_tools": [],
    }
    return {"generation": 1, "deferred": 0, "servers": [server], "tools": tools}


def tool(name: str, description: str) -> dict[str, object]:
    return {
        "name": name,
        "server": "a-server-with-a-rather-long-name",
        "remote_name": name.rsplit("__", 1)[-1],
        "description": description,
        "input_schema": {},
        "parallel": False,
    }


def test_catalog_columns_stay_aligned_and_descriptions_stay_under_their_row(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    long_name = "mcp__a_server_with_a_rather_long_name__" + "x" * 40
    tools = [
        tool("mcp__s__short", "First line.\nSecond line, at column 0 in the server's text."),
        tool(long_name, "word " * 40),
    ]
    _print_catalog(report(tools), "a test")
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line.startswith("  mcp__")]
    assert len(rows) == 2
    assert len({row.index("exclusive") for row in rows}) == 1  # the lane column lines up
    header = next(line for line in out if "tool (what the model calls)" in line)
    assert header.index("lane") == rows[0].index("exclusive")
    server_row = next(line for line in out if line.startswith("  a-server"))
    assert server_row.split()[1] == "connected"
    below = out[out.index(rows[0]) + 1 : out.index(rows[1])]
    assert below == [
        "      First line.",
        "      Second line, at column 0 in the server's text.",
    ]
    wrapped = out[out.index(rows[1]) + 1 :]
    assert len(wrapped) > 1
    assert all(line.startswith("      word") and len(line) <= 80 for line in wrapped)
    assert all(line == line.rstrip() for line in out)


def test_login_on_an_unreachable_server_names_it_without_the_required_advice(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(
        '[mcp_servers.web]\nurl = "http://127.0.0.1:9/mcp"\nstartup_timeout_sec = 10\n',
        encoding="utf-8",
    )
    done = mcpbind("login", "web", "--config", str(config), "--no-browser")
    assert done.returncode == 1
    assert done.stderr.startswith("mcpbind login: could not reach 'web': "), done.stderr
    assert "required" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_catalog_on_a_terminal_names_the_servers_still_starting_while_it_waits(tmp_path):
    import json
    import sys

    from wire import SERVER

    config = tmp_path / "config.toml"
    config.write_text(
        "[mcp_servers.notes]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["-m", "mcpbind.demo.servers", "notes"]\n'
        "[mcp_servers.slow]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER), str(tmp_path / 'state')])}\n"
        "startup_timeout_sec = 4\n"
        'env = { MCPBIND_TEST_SLOW_START = "300" }\n',  # never answers in time
        encoding="utf-8",
    )
    from test_cli_progress import on_a_terminal

    code, drawn = on_a_terminal("catalog", "--config", str(config))
    assert code == 1  # slow never started
    assert "Traceback" not in drawn
    notices = [line for line in drawn.splitlines() if "still starting" in line]
    assert notices, drawn
    assert all(line.startswith("mcpbind: still starting: ") for line in notices)
    assert "slow" in notices[-1]


def test_catalog_names_an_enabled_tool_the_server_does_not_list(tmp_path):
    import json
    import sys

    config = tmp_path / "config.toml"
    config.write_text(
        "[mcp_servers.notes]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["-m", "mcpbind.demo.servers", "notes"]\n'
        'enabled_tools = ["add", "lsit"]\n',
        encoding="utf-8",
    )
    human = mcpbind("catalog", "--config", str(config))
    assert human.returncode == 0, human.stderr
    assert "  notes: enabled_tools names 'lsit', which it does not list" in human.stdout
    report = json.loads(mcpbind("catalog", "--config", str(config), "--json").stdout)
    assert report["servers"][0]["unlisted_enabled_tools"] == ["lsit"]
    assert [t["remote_name"] for t in report["tools"] if t["server"] == "notes"] == ["add"]


async def test_a_url_with_a_wrong_path_is_named_as_such_not_just_not_found(tmp_path):
    import pytest
    from testservers.processes import free_port, start_http_server, stop, wait_listening

    from mcpbind.impl import Host, HostConfig, ServerConfig, ServerStartupError

    port = free_port()
    process = await start_http_server(tmp_path, port)
    try:
        await wait_listening(port)
        url = f"http://127.0.0.1:{port}/wrong"
        config = HostConfig(servers={"web": ServerConfig(target=url, required=True)})
        with pytest.raises(ServerStartupError) as caught:
            async with Host.open(config):
                pytest.fail("the host must not open")
        assert caught.value.why == (
            f"the server answered HTTP 404 Not Found: nothing serves MCP at {url}; check the "
            "URL's path (MCP servers often serve it at /mcp)"
        )
    finally:
        await stop(process)


def test_catalog_into_a_pipe_waits_without_a_word(tmp_path):
    import json
    import sys

    from wire import SERVER

    config = tmp_path / "config.toml"
    config.write_text(
        "[mcp_servers.slow]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER), str(tmp_path / 'state')])}\n"
        "startup_timeout_sec = 3\n"
        'env = { MCPBIND_TEST_SLOW_START = "300" }\n',
        encoding="utf-8",
    )
    done = mcpbind("catalog", "--config", str(config))
    assert done.returncode == 1
    assert done.stderr == ""
