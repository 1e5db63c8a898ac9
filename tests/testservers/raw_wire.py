"""A 2026-07-28 MCP server written on the wire, without the SDK's server: ``python
raw_wire.py`` serves stdio; with ``MCPBIND_TEST_HTTP_PORT`` it serves streamable HTTP on
127.0.0.1 instead (one JSON answer per POST, no session, no SSE).

The SDK's server always adds ``resultType`` to a 2026-07-28 result; this one leaves it out
of the results it answers for its tools, as a server written for an earlier revision
does (the spec: a client MUST take an absent ``resultType`` as ``complete``), and as the
conformance suite's ``sep-2322-client-request-state`` server does. It answers:

* ``server/discover`` (with ``resultType``: the probe is the SDK's to read) with the
  tools capability;
* ``tools/list``: the tools ``plain`` and ``confirm``, without ``resultType`` (with the
  ``ttlMs`` and ``cacheScope`` that 2026-07-28 listings carry);
* ``tools/call`` of ``plain``: a text block ``plain-ok``, without ``resultType``;
* ``tools/call`` of ``confirm``: first ``resultType: "input_required"`` with one form
  elicitation and ``requestState``; then, resent with the answer, a text block naming the
  answer and the state it got back, without ``resultType``;
* anything else with JSON-RPC "Method not found"; notifications with nothing.

With ``MCPBIND_TEST_RAW_ODD_INPUTS`` set, it also lists the tools of :data:`ODD_INPUTS`,
whose input requests a client cannot answer as they are: ``nagging`` asks for the same
confirmation whatever it is answered, forever; ``sampling`` asks for
``sampling/createMessage``; ``malformed`` sends ``inputRequests`` that are no mapping;
``patient`` first sends no input request at all, only its ``requestState`` (the server is
not ready yet), then answers ``patient-ok`` when that state comes back.

With ``MCPBIND_TEST_RAW_PYTHON_NAMES`` set, ``tools/list`` spells its two caching fields
with the SDK's Python names (``ttl_ms``, ``cache_scope``), which the wire's schema does
not know: a malformed listing the SDK's models would read if asked to read by name.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

VERSION = "2026-07-28"
STATE = "opaque-state-1"
TOOLS = [
    {
        "name": "plain",
        "description": "Answers without resultType",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "confirm",
        "description": "Asks for a confirmation, then answers without resultType",
        "inputSchema": {"type": "object"},
    },
]
CONFIRM = {
    "method": "elicitation/create",
    "params": {
        "message": "Please confirm",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    },
}

SAMPLING = {
    "method": "sampling/createMessage",
    "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 10,
    },
}
ODD_INPUTS: dict[str, dict[str, Any]] = {
    "nagging": {"inputRequests": {"confirm": CONFIRM}},
    "sampling": {"inputRequests": {"sample": SAMPLING}},
    "malformed": {"inputRequests": 7},
    "patient": {"inputRequests": {}},
}
"""Each odd tool's ``input_required`` result, besides its ``resultType`` and state."""


def tools() -> list[dict[str, Any]]:
    if not os.environ.get("MCPBIND_TEST_RAW_ODD_INPUTS"):
        return TOOLS
    odd = [{"name": name, "inputSchema": {"type": "object"}} for name in ODD_INPUTS]
    return [*TOOLS, *odd]


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON-RPC answer to ``message``, or None for a notification."""
    if "id" not in message:
        return None
    method, params = message.get("method"), message.get("params") or {}
    result: dict[str, Any] | None = None
    if method == "server/discover":
        result = {
            "resultType": "complete",
            "supportedVersions": [VERSION],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw-wire", "version": "1.0.0"},
        }
    elif method == "tools/list":  # the caching fields 2026-07-28 requires, as the suite's
        if os.environ.get("MCPBIND_TEST_RAW_PYTHON_NAMES"):
            result = {"tools": tools(), "ttl_ms": 0, "cache_scope": "private"}
        else:
            result = {"tools": tools(), "ttlMs": 0, "cacheScope": "private"}
    elif method == "tools/call" and params.get("name") == "plain":
        result = text("plain-ok")
    elif method == "tools/call" and params.get("name") == "confirm":
        responses = params.get("inputResponses")
        if not responses:
            result = {
                "resultType": "input_required",
                "inputRequests": {"confirm": CONFIRM},
                "requestState": STATE,
            }
        else:
            got = json.dumps(responses.get("confirm"), sort_keys=True)
            result = text(f"confirmed {got} with state {params.get('requestState')}")
    elif method == "tools/call" and params.get("name") in ODD_INPUTS:
        name = params["name"]
        if name == "patient" and params.get("requestState") == STATE:
            result = text("patient-ok")
        else:
            odd = ODD_INPUTS[name]
            result = {"resultType": "input_required", **odd, "requestState": STATE}
    if result is None:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def serve_stdio() -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = answer(message) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Streamable HTTP, 2026-07-28: every request its own POST, answered in JSON."""
    if scope["type"] != "http":
        return
    if scope["method"] != "POST":
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    chunks = []
    while True:
        event = await receive()
        chunks.append(event.get("body", b""))
        if not event.get("more_body"):
            break
    try:
        message = json.loads(b"".join(chunks))
    except ValueError:
        message = None
    reply = answer(message) if isinstance(message, dict) else None
    if reply is None:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(reply).encode()})


if __name__ == "__main__":
    port = os.environ.get("MCPBIND_TEST_HTTP_PORT")
    if port:
        import uvicorn

        uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning")
    else:
        serve_stdio()
