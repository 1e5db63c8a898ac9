"""A 2025-11-25 MCP server that runs its tools as tasks, written on the wire without
the SDK's server, over stdio: ``python raw_tasks_2025.py``.

The SDK's server neither serves the 2025-11-25 tasks nor shows a handler the request's
params as they were written (its models read ``meta`` as well as ``_meta``). This one
answers ``tools/call`` of ``echo_params`` with a task handle, ``tasks/get`` with the task
completed, and ``tasks/result`` with one text block: the params of the ``tools/call`` it
got, as JSON, keys as written. Its tool ``stuck`` runs as a task that ``tasks/get`` says
is working until the client gives up, when ``tasks/cancel`` is refused with -32602: the
task ended meanwhile (what the 2025-11-25 spec says of a terminal task). Mutation testing
(issue 33) found that a task call's params dumped with Python names (``meta`` for
``_meta``) failed no test; so did a late task status traced as a call's late answer.

It answers ``initialize`` (tools, and ``tasks.requests.tools.call``), ``tools/list``,
those three requests and ``tasks/cancel``, anything else with JSON-RPC "Method not found"
(``server/discover`` included: the client falls back to the handshake); notifications
with nothing.
"""

from __future__ import annotations

import json
import sys
from typing import Any

VERSION = "2025-11-25"
WHEN = "2026-01-01T00:00:00Z"
TOOL = {
    "name": "echo_params",
    "description": "Runs only as a task; its result is the params of its tools/call",
    "inputSchema": {"type": "object"},
    "execution": {"taskSupport": "required"},
}
STUCK = {
    "name": "stuck",
    "description": "Runs only as a task, working until cancelled, which finds it ended",
    "inputSchema": {"type": "object"},
    "execution": {"taskSupport": "required"},
}


def task(status: str) -> dict[str, Any]:
    return {
        "taskId": "t-1",
        "status": status,
        "createdAt": WHEN,
        "lastUpdatedAt": WHEN,
        "ttl": 60_000,
        "pollInterval": 1,
    }


def answer(message: dict[str, Any], called: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The JSON-RPC answer to ``message``, or None for a notification."""
    if "id" not in message:
        return None
    method, params = message.get("method"), message.get("params") or {}
    result: dict[str, Any] | None = None
    if method == "initialize":
        capabilities = {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}}
        result = {
            "protocolVersion": VERSION,
            "capabilities": capabilities,
            "serverInfo": {"name": "raw-tasks-2025", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL, STUCK]}
    elif method == "tools/call" and params.get("name") in (TOOL["name"], STUCK["name"]):
        called.append(params)
        result = {"task": task("working")}
    elif method == "tasks/get" and called:
        result = task("working" if called[-1]["name"] == STUCK["name"] else "completed")
    elif method == "tasks/cancel" and called:
        error = {"code": -32602, "message": "task t-1 is already completed"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    elif method == "tasks/result" and called:
        text = json.dumps(called[-1], sort_keys=True)
        result = {"content": [{"type": "text", "text": text}]}
    if result is None:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def serve_stdio() -> None:
    called: list[dict[str, Any]] = []
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = answer(message, called) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    serve_stdio()
