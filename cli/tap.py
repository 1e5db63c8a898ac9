"""``mcpbind tap``: record the wire between any MCP host and one server (SPEC §14.6).

stdio: a host runs ``mcpbind tap --trace FILE -- COMMAND [ARGS...]`` instead of COMMAND;
the tap runs COMMAND, relays stdin, stdout, stderr and signals byte for byte, and exits
with COMMAND's status (128 + N for a child ended by signal N). HTTP: ``mcpbind tap
--trace FILE --http --listen 127.0.0.1:PORT --upstream URL`` serves on loopback until
SIGTERM (exit 0) or SIGINT (exit 130), printing its URL (``http://127.0.0.1:PORT``) on
stdout once it listens. Exit 2, one line on stderr: a usage error, a trace file that
cannot be written, a COMMAND that cannot be run, an address that cannot be had.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import anyio

from .. import __version__
from .main import INTERRUPTED, USAGE

if TYPE_CHECKING:
    from mcpbind.tap.stdio import WireLog

__all__ = ["port_of", "serve_until_stopped", "tap_main", "unwrap"]


def _usage(problem: str) -> int:
    print(f"mcpbind tap: {problem}", file=sys.stderr)
    return USAGE


def port_of(listen: str) -> int | None:
    host, _, port = listen.rpartition(":")
    if host != "127.0.0.1" or not port.isdigit() or int(port) > 65535:
        return None
    return int(port)


def tap_main(args: argparse.Namespace) -> int:
    from mcpbind.tap.stdio import TapFailed, WireLog  # noqa: PLC0415 - cli/main.py

    if args.http:
        if args.command:
            return _usage("--http takes no COMMAND: the server is --upstream URL")
        if args.listen is None or args.upstream is None:
            return _usage("--http needs --listen 127.0.0.1:PORT and --upstream URL")
        port = port_of(args.listen)
        if port is None:
            return _usage(f"--listen {args.listen!r}: expected 127.0.0.1:PORT (loopback only)")
    elif not args.command:
        return _usage("no server to run: mcpbind tap --trace FILE -- COMMAND [ARGS...]")
    elif args.listen is not None or args.upstream is not None:
        return _usage("--listen and --upstream go with --http")
    server = args.server or _default_name(args)
    path = pathlib.Path(args.trace.replace("{pid}", str(os.getpid())))
    try:
        out = path.open("w", encoding="utf-8")
    except OSError as error:
        return _usage(f"cannot write {path}: {error.strerror}")
    started = time.perf_counter()
    with out:
        log = WireLog(out, server, "http" if args.http else "stdio", __version__)
        try:
            if args.http:
                assert port is not None
                upstream = str(args.upstream)
                return anyio.run(_proxy, port, upstream, log, started, backend="trio")
            return anyio.run(_relay, args.command, log, backend="trio")
        except Exception as error:
            failure = unwrap(error)
            if isinstance(failure, TapFailed):
                log.end()
                return _usage(str(failure))
            if isinstance(failure, OSError):  # the trace file itself (a full disk)
                print(f"mcpbind tap: {failure}", file=sys.stderr)
                return 1
            raise


def unwrap(error: BaseException) -> BaseException:
    """The one exception inside task groups' wrappers."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def _default_name(args: argparse.Namespace) -> str:
    if args.http:
        from httpx2 import URL  # noqa: PLC0415 - heavy, and only for --http

        return URL(args.upstream).netloc.decode("ascii") or "server"
    return pathlib.Path(args.command[0]).name or "server"


async def _relay(command: list[str], log: WireLog) -> int:
    from mcpbind.tap.stdio import relay_stdio  # noqa: PLC0415

    return await relay_stdio(command, log)


async def _proxy(port: int, upstream: str, log: WireLog, started: float) -> int:
    from mcpbind.tap.http import serve_http  # noqa: PLC0415

    async def serve(task_status: Any) -> None:
        await serve_http(port, upstream, log, task_status=task_status)

    return await serve_until_stopped("mcpbind tap", serve, "", log.end, started)


async def serve_until_stopped(
    command: str,
    serve: Callable[..., Coroutine[Any, Any, None]],
    path: str,
    end: Callable[[], None],
    started: float,
) -> int:
    """Run a loopback server (``serve`` reports its port through ``task_status``), print
    its URL (``http://127.0.0.1:PORT`` + ``path``) once it listens, and stop at SIGTERM
    (0) or SIGINT (130, one line on stderr); ``end`` closes the trace either way."""
    stopped_by: list[int] = []
    async with anyio.create_task_group() as group:
        bound = await group.start(serve)
        print(f"http://127.0.0.1:{bound}{path}", flush=True)
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                stopped_by.append(signum)
                break
        group.cancel_scope.cancel()
    end()
    if stopped_by == [signal.SIGINT]:
        seconds = time.perf_counter() - started
        print(f"{command}: interrupted after {seconds:.1f} s", file=sys.stderr)
        return INTERRUPTED
    return 0
