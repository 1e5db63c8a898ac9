"""Per-tool exclusion (SPEC §5.4, INV-3): a valid tool the host cannot call, or that MCP
requires an HTTP client to leave out, is left out with a typed reason; the rest of its
listing installs in one publication. Against ``common.make_server(excludable=True)``,
in-process, over stdio and over streamable HTTP (2026-07-28). The test server declares no
tasks, so its ``research`` (``taskSupport: "required"``) is one nobody may call; a server
that runs tasks gets it called as a task (``tests/test_tasks_everything.py``)."""

from __future__ import annotations

import json
import logging
import pathlib
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager

import pytest
from cli_runner import mcpbind
from mcp import StdioServerParameters
from testservers.common import make_server
from testservers.processes import SERVER, http_server_process

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.model import texts
from mcpbind.model.values import Exclusion

# ``http-2025``: the handshake era (2025-11-25), where a tool still declares
# ``execution.taskSupport``; 2026-07-28 tools carry no ``execution`` (tasks became the
# server-directed ``io.modelcontextprotocol/tasks`` extension, SEP-2663). At close the
# SDK leaves that era's SSE generator to the garbage collector (see tests/test_close.py).
TRANSPORTS = [
    "inproc",
    "stdio",
    "http",
    pytest.param(
        "http-2025",
        marks=pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    ),
]
HEADER_PROBLEM = (
    "property 'where': x-mcp-header is only permitted on integer/string/boolean properties "
    "(got 'object')"
)
RESEARCH = Exclusion(
    "research", "task_required", texts.excluded_text("task_required", server="s", tool="research")
)
ROUTE = Exclusion(
    "route",
    "x_mcp_header",
    texts.excluded_text("x_mcp_header", server="s", tool="route", problem=HEADER_PROBLEM),
)


@pytest.fixture(scope="module")
def http_ports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], int]]:
    """The port of the HTTP test server that lists :data:`common.EXCLUDABLE` too, one per
    era (``http``, ``http-2025``), started when a test of the module first asks for it.
    Its tools never change and no test here reads its state directory or stops it; each
    test opens a host, so a session, of its own."""
    ports: dict[str, int] = {}
    with ExitStack() as servers:

        def port(transport: str) -> int:
            if transport not in ports:
                env = {"MCPBIND_TEST_EXCLUDABLE": "1"}
                if transport == "http-2025":
                    env["MCPBIND_TEST_HTTP_LEGACY"] = "1"
                state = tmp_path_factory.mktemp(transport)
                ports[transport] = servers.enter_context(http_server_process(state, **env))
            return ports[transport]

        yield port


@asynccontextmanager
async def excludable(
    transport: str, state: pathlib.Path, http_ports: Callable[[str], int]
) -> AsyncIterator[Host]:
    """A host over the test server that lists :data:`common.EXCLUDABLE` too."""
    if transport.startswith("http"):
        url = f"http://127.0.0.1:{http_ports(transport)}/mcp"
        config = ServerConfig(target=url, required=True)
        async with Host.open(HostConfig(servers={"s": config})) as host:
            yield host
        return
    if transport == "inproc":
        target: object = make_server(state, excludable=True)
    else:
        target = StdioServerParameters(
            command=sys.executable,
            args=[str(SERVER), str(state)],
            env={"MCPBIND_TEST_EXCLUDABLE": "1"},
        )
    config = ServerConfig(target=target, required=True)  # type: ignore[arg-type]
    async with Host.open(HostConfig(servers={"s": config})) as host:
        yield host


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_tool_that_must_run_as_a_task_is_left_out_and_the_rest_installs(
    transport, tmp_path, http_ports
):
    async with excludable(transport, tmp_path, http_ports) as host:
        names = set(host.sample().names)
        outcome = await host.refresh("s")
        (status,) = host.server_status()
    assert {"mcp__s__echo", "mcp__s__locate", "mcp__s__slow"} <= names
    assert outcome.status == "unchanged"
    assert status.excluded == outcome.excluded
    if transport != "http-2025":  # no execution on the wire: an ordinary tool
        assert "mcp__s__research" in names
        assert RESEARCH not in outcome.excluded
        return
    assert "mcp__s__research" not in names
    assert outcome.excluded[0] == RESEARCH
    assert status.tools == len([n for n in names if n.startswith("mcp__s__")])


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_invalid_x_mcp_header_leaves_its_tool_out_over_http_only(
    transport, tmp_path, http_ports
):
    """MCP 2026-07-28 (server/tools, x-mcp-header): an HTTP client MUST leave such a tool
    out; over stdio the annotation means nothing and the tool is installed."""
    async with excludable(transport, tmp_path, http_ports) as host:
        names = set(host.sample().names)
        outcome = await host.refresh("s")
        echoed = await host.call(host.sample(), "c1", "mcp__s__echo", {"text": "still here"})
    on_2025 = (RESEARCH,) if transport == "http-2025" else ()
    if transport.startswith("http"):
        assert "mcp__s__route" not in names
        assert outcome.excluded == (*on_2025, ROUTE)
    else:
        assert "mcp__s__route" in names
        assert outcome.excluded == ()
    assert echoed.status == "ok", echoed.output


async def test_each_left_out_tool_is_logged_once_not_on_every_refresh(tmp_path, caplog, http_ports):
    caplog.set_level(logging.WARNING, logger="mcpbind.runtime")
    async with excludable("http", tmp_path, http_ports) as host:
        await host.refresh("s")
        await host.refresh("s")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings.count(ROUTE.reason) == 1


async def test_a_filtered_tool_is_not_reported_as_left_out(http_ports):
    url = f"http://127.0.0.1:{http_ports('http')}/mcp"
    config = ServerConfig(target=url, disabled_tools=["route"])
    async with Host.open(HostConfig(servers={"s": config})) as host:
        outcome = await host.refresh("s")
    assert outcome.status == "unchanged"
    assert outcome.excluded == ()


def test_mcpbind_catalog_shows_the_left_out_tools_and_why(tmp_path, http_ports):
    """Two ``mcpbind`` processes, each on its own event loop: not a test per backend."""
    config = tmp_path / "mcpbind.toml"
    config.write_text(f'[mcp_servers.s]\nurl = "http://127.0.0.1:{http_ports("http")}/mcp"\n')
    done = mcpbind("catalog", "--config", str(config), "--json")
    human = mcpbind("catalog", "--config", str(config))
    assert done.returncode == 0, done.stderr
    (server,) = json.loads(done.stdout)["servers"]
    assert server["excluded"] == [{"tool": "route", "kind": "x_mcp_header", "reason": ROUTE.reason}]
    assert human.returncode == 0, human.stderr
    assert "left out (SPEC §5.4)" in human.stdout
    assert f"x_mcp_header: {ROUTE.reason}" in human.stdout
    assert "mcp__s__route" not in human.stdout
