"""Test servers as subprocesses on loopback: the streamable-HTTP test server."""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio
import anyio.abc

SERVER = pathlib.Path(__file__).parent / "stdio_server.py"
RAW_WIRE = pathlib.Path(__file__).parent / "raw_wire.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def start_http_server(
    state: pathlib.Path, port: int, *, script: pathlib.Path = SERVER, **env: str
) -> anyio.abc.Process:
    """``script`` (default ``stdio_server.py``) serving streamable HTTP on
    127.0.0.1:``port``; ``env`` adds its settings (``MCPBIND_TEST_HTTP_LEGACY``,
    ``MCPBIND_TEST_HTTP_LOG``)."""
    return await anyio.open_process(
        [sys.executable, str(script), str(state)],
        env={**os.environ, "MCPBIND_TEST_HTTP_PORT": str(port), **env},
        stdin=subprocess.DEVNULL,
        stdout=None,
        stderr=None,
    )


async def wait_listening(port: int, timeout: float = 60) -> None:
    """Until something accepts connections on 127.0.0.1:``port``."""
    with anyio.fail_after(timeout):
        while True:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.1)
            else:
                await stream.aclose()
                return


async def stop(process: anyio.abc.Process | None) -> None:
    if process is not None and process.returncode is None:
        process.kill()
        await process.wait()


@asynccontextmanager
async def http_server(
    state: pathlib.Path, *, listening: bool = False, script: pathlib.Path = SERVER, **env: str
) -> AsyncIterator[int]:
    """An HTTP test server for the block; yields its port. ``listening``: wait until it
    accepts connections first (the host does not wait for an optional server);
    ``script``: which server (default ``stdio_server.py``)."""
    port = free_port()
    process = await start_http_server(state, port, script=script, **env)
    try:
        if listening:
            await wait_listening(port)
        yield port
    finally:
        await stop(process)


@contextmanager
def http_server_process(
    state: pathlib.Path, *, script: pathlib.Path = SERVER, timeout: float = 60, **env: str
) -> Iterator[int]:
    """:func:`http_server` for a whole module (a fixture's scope), listening before it
    yields its port. A plain process, not an event loop's: the tests on trio and those on
    asyncio share it. For the tests that read nothing from ``state`` and do not stop the
    server: a server per test costs a Python start and the SDK's imports, about a second
    of CPU."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(script), str(state)],
        env={**os.environ, "MCPBIND_TEST_HTTP_PORT": str(port), **env},
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{script.name} never listened on port {port}") from None
                time.sleep(0.1)
        yield port
    finally:
        process.kill()
        process.wait(10)
