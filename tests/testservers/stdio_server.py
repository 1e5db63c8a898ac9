"""A stdio MCP server for the tests: ``python stdio_server.py STATE_DIR``.

With ``MCPBIND_TEST_HTTP_PORT`` set it serves streamable HTTP on 127.0.0.1 instead; with
``MCPBIND_TEST_HTTP_LEGACY`` too it answers ``server/discover`` with "Method not found", so
a client falls back to the ``initialize`` handshake and a session id (the handshake era);
``MCPBIND_TEST_HTTP_LOG`` names a file that gets one line per request (``POST <method>``,
``GET``, ``DELETE``); ``MCPBIND_TEST_HTTP_STATUS`` answers with an HTTP status instead
(``http_era.py``).

Writes its pid to STATE_DIR/pid; its tools are ``common.make_server``'s (with
``MCPBIND_TEST_EXCLUDABLE``, its excludable ones too; ``MCPBIND_TEST_HIDDEN_HEADERS=N``
hides the ``x-mcp-header`` annotations from its first N listings, -1 from all;
``MCPBIND_TEST_ONLY_TOOLS=echo,slow`` lists only those tools; with
``MCPBIND_TEST_TASKS_CAPABILITY`` a handshake-era session is told the server runs
``tools/call`` as tasks, ``tasks.requests.tools.call``, which it does not: for a test whose
task calls the HTTP wrapper refuses before they reach it).
"""

from __future__ import annotations

import os
import pathlib
import sys
import time

import anyio
import mcp_types as types
from common import make_server

state = pathlib.Path(sys.argv[1])
state.mkdir(parents=True, exist_ok=True)
(state / "pid").write_text(str(os.getpid()))
server = make_server(
    state,
    excludable=bool(os.environ.get("MCPBIND_TEST_EXCLUDABLE")),
    hidden_headers=int(os.environ.get("MCPBIND_TEST_HIDDEN_HEADERS", "0")),
)
if os.environ.get("MCPBIND_TEST_TASKS_CAPABILITY"):
    declared = server._lowlevel_server.get_capabilities
    tasks = types.ServerTasksCapability(
        requests=types.ServerTasksRequestsCapability(
            tools=types.TasksToolsCapability(call=types.TasksCallCapability())
        )
    )
    server._lowlevel_server.get_capabilities = (  # type: ignore[method-assign] # a test server's claim
        lambda *args, **kwargs: declared(*args, **kwargs).model_copy(update={"tasks": tasks})
    )
if os.environ.get("MCPBIND_TEST_ONLY_TOOLS"):
    kept = set(os.environ["MCPBIND_TEST_ONLY_TOOLS"].split(","))
    for listed in anyio.run(server.list_tools):
        if listed.name not in kept:
            server.remove_tool(listed.name)


if __name__ == "__main__":
    if os.environ.get("MCPBIND_TEST_GARBAGE"):
        print("this is not JSON-RPC", flush=True)
    banner = os.environ.get("MCPBIND_TEST_BANNER")
    if banner:
        print(banner, file=sys.stderr, flush=True)
    if os.environ.get("MCPBIND_TEST_EXIT_AT_START"):
        print("fatal: the test asked this server to exit at start", file=sys.stderr, flush=True)
        sys.exit(3)
    if os.environ.get("MCPBIND_TEST_SLOW_START"):  # never answers `initialize` in time
        time.sleep(float(os.environ["MCPBIND_TEST_SLOW_START"]))
    port = os.environ.get("MCPBIND_TEST_HTTP_PORT")
    if port and (
        os.environ.get("MCPBIND_TEST_HTTP_LEGACY")
        or os.environ.get("MCPBIND_TEST_HTTP_LOG")
        or os.environ.get("MCPBIND_TEST_HTTP_STATUS")
    ):
        from http_era import serve_logged

        anyio.run(serve_logged, server, int(port))
    elif port:  # streamable HTTP on loopback instead of stdio
        anyio.run(lambda: server.run_streamable_http_async(host="127.0.0.1", port=int(port)))
    else:
        server.run()
