"""Streamable HTTP for a test server, handshake era and logged (``stdio_server.py``).

An ASGI wrapper around the SDK's app: with ``MCPBIND_TEST_HTTP_LEGACY`` it answers
``server/discover`` with JSON-RPC "Method not found" (-32601), which makes a 2026-07-28
client fall back to ``initialize`` and a session id; with ``MCPBIND_TEST_HTTP_LOG`` it
appends ``POST <method>`` (or ``GET``, ``DELETE``) to that file for every request; with
``MCPBIND_TEST_HTTP_STATUS`` (e.g. 401) it answers every request with that status and a
plain-text body, as a server behind an authorization gateway does: the body is
``MCPBIND_TEST_HTTP_BODY`` (default ``no entry``) with ``MCPBIND_TEST_HTTP_TYPE`` as its
content type (default ``text/plain``), the ``WWW-Authenticate`` header
``MCPBIND_TEST_HTTP_CHALLENGE`` (a 401 gets ``Bearer realm="mcp"`` by default), and with
``MCPBIND_TEST_HTTP_STATUS_METHOD`` only the POSTs of that JSON-RPC method get it (the
server answers the others, so a session opens and one request fails), and with
``MCPBIND_TEST_HTTP_STATUS_TOOL`` too only the ``tools/call`` of that tool.
"""

from __future__ import annotations

import json
import os
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

Scope = dict[str, Any]


def _tool(body: bytes) -> str | None:
    """The tool a ``tools/call`` body calls, or None."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    params = message.get("params") if isinstance(message, dict) else None
    return params.get("name") if isinstance(params, dict) else None


def _methods(body: bytes) -> list[str]:
    try:
        message = json.loads(body)
    except ValueError:
        return []
    batch = message if isinstance(message, list) else [message]
    return [m.get("method", "response") for m in batch if isinstance(m, dict)]


def _refusal(status: int) -> Any:
    """Answers a request with ``status`` (``MCPBIND_TEST_HTTP_BODY``, ``_TYPE``, ``_CHALLENGE``)."""
    body = os.environ.get("MCPBIND_TEST_HTTP_BODY", "no entry").encode()
    content_type = os.environ.get("MCPBIND_TEST_HTTP_TYPE", "text/plain").encode()
    challenge = os.environ.get("MCPBIND_TEST_HTTP_CHALLENGE")
    if challenge is None and status == 401:
        challenge = 'Bearer realm="mcp"'

    async def refuse(send: Any) -> None:
        headers = [(b"content-type", content_type)]
        if challenge:
            headers.append((b"www-authenticate", challenge.encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return refuse


def wrapped(app: Any) -> Any:
    legacy = bool(os.environ.get("MCPBIND_TEST_HTTP_LEGACY"))
    log_path = os.environ.get("MCPBIND_TEST_HTTP_LOG")
    status = int(os.environ.get("MCPBIND_TEST_HTTP_STATUS") or 0)
    status_method = os.environ.get("MCPBIND_TEST_HTTP_STATUS_METHOD")
    status_tool = os.environ.get("MCPBIND_TEST_HTTP_STATUS_TOOL")
    refuse = _refusal(status)

    def log(line: str) -> None:
        if log_path:
            with open(log_path, "a", encoding="utf-8") as file:
                file.write(line + "\n")

    async def asgi(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        method = scope["method"]
        if status and not status_method:
            await refuse(send)
            return
        if method != "POST":
            log(method)
            await app(scope, receive, send)
            return
        chunks = []
        while True:
            event = await receive()
            chunks.append(event.get("body", b""))
            if not event.get("more_body"):
                break
        body = b"".join(chunks)
        methods = _methods(body)
        log("POST " + ",".join(methods))
        if status and methods == [status_method] and status_tool in (None, _tool(body)):
            await refuse(send)
            return
        if legacy and methods == ["server/discover"]:
            request_id = json.loads(body).get("id")
            error = {"code": -32601, "message": "Method not found"}
            payload = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": payload})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return asgi


async def serve_logged(server: MCPServer, port: int) -> None:
    app = wrapped(server.streamable_http_app(host="127.0.0.1"))
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    await uvicorn.Server(config).serve()
