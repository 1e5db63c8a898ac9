"""server-everything over streamable HTTP, restarted on its port while a host is idle:
``python everything_restart.py BACKEND NODE ENTRY`` prints one JSON object of what it saw.

server-everything listens on every interface (``app.listen(PORT)``): this script is run
inside a private network namespace that has only loopback (``unshare --net``, see
``tests/test_everything_http.py``), and it reaches the server on 127.0.0.1 only.

What it does: start the server, open a host on ``http://127.0.0.1:PORT/mcp``, call
``echo``, stop the server and start it again on the same port while the host sends
nothing, ask the new server directly what it answers to a request in a session it never
made (status, body), then call ``echo`` again in the same step, and report: both
results, the host's inputs and messages from the restart on, and the server's status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import anyio
import anyio.abc
import httpx2
from processes import free_port, stop, wait_listening  # this script's folder is on sys.path
from recorders import Inputs

from mcpbind.impl import Host, HostConfig, ServerConfig

ECHO = "mcp__everything__echo"


async def start(node: str, entry: str, port: int) -> anyio.abc.Process:
    process = await anyio.open_process(
        [node, entry, "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    await wait_listening(port)
    return process


async def unknown_session_answer(url: str) -> dict[str, Any]:
    """What the server answers to a request in a session it does not know."""
    headers = {
        "mcp-session-id": "00000000-0000-0000-0000-000000000000",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with httpx2.AsyncClient() as http:
        answer = await http.post(url, json=request, headers=headers)
    return {
        "status": answer.status_code,
        "content_type": answer.headers.get("content-type", ""),
        "body": answer.json(),
    }


async def main(node: str, entry: str) -> dict[str, Any]:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    process = await start(node, entry, port)
    seen = Inputs()
    report: dict[str, Any] = {}
    try:
        server = ServerConfig(target=url, required=True)
        async with Host.open(HostConfig(servers={"everything": server}), recorder=seen) as host:
            step = host.sample()
            first = await host.call(step, "c1", ECHO, {"message": "before"})
            report["first"] = [first.status, first.output]
            await stop(process)
            process = await start(node, entry, port)
            report["unknown_session"] = await unknown_session_answer(url)
            mark = len(seen.seen)
            again = await host.call(step, "c2", ECHO, {"message": "after"})
            report["again"] = [again.status, again.output]
            report["after_restart"] = seen.seen[mark:]
            [status] = host.server_status()
            report["status"] = [status.state, status.connected, status.error]
    finally:
        await stop(process)
    return report


if __name__ == "__main__":
    backend, node, entry = sys.argv[1:4]
    print(json.dumps(anyio.run(main, node, entry, backend=backend)))
