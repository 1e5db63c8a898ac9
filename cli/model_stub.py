"""``mcpbind model-stub``: a scripted model on loopback that drives an agent host through a
scenario and writes the host-side trace of what it saw (SPEC §14.7).

``mcpbind model-stub --scenario FILE --trace FILE [--listen 127.0.0.1:PORT]`` serves the
OpenAI Responses API and Chat Completions on loopback until SIGTERM (exit 0) or SIGINT
(exit 130), printing its base URL (``http://127.0.0.1:PORT/v1``) on stdout once it
listens. Exit 2, one line on stderr: a usage error, a scenario that is not one, a trace
file that cannot be written, an address that cannot be had.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
from typing import Any

import anyio

from .. import __version__
from .main import USAGE
from .tap import port_of, serve_until_stopped, unwrap

__all__ = ["model_stub_main"]


def _usage(problem: str) -> int:
    print(f"mcpbind model-stub: {problem}", file=sys.stderr)
    return USAGE


def model_stub_main(args: argparse.Namespace) -> int:
    from mcpbind.tap.model_http import HostLog  # noqa: PLC0415 - cli/main.py
    from mcpbind.tap.scenario import ModelStub, ScenarioError, load_scenario  # noqa: PLC0415
    from mcpbind.tap.stdio import TapFailed  # noqa: PLC0415

    port = port_of(args.listen)
    if port is None:
        return _usage(f"--listen {args.listen!r}: expected 127.0.0.1:PORT (loopback only)")
    try:
        scenario = load_scenario(pathlib.Path(args.scenario).read_text(encoding="utf-8"))
    except OSError as error:
        return _usage(f"cannot read {args.scenario}: {error.strerror}")
    except ScenarioError as error:
        return _usage(f"{args.scenario}: not a scenario: {error}")
    path = pathlib.Path(args.trace)
    try:
        out = path.open("w", encoding="utf-8")
    except OSError as error:
        return _usage(f"cannot write {args.trace}: {error.strerror}")
    started = time.perf_counter()
    with out:
        log = HostLog(out, ModelStub(scenario), __version__)
        try:
            return anyio.run(_serve, port, log, started, backend="trio")
        except Exception as error:
            failure = unwrap(error)
            if isinstance(failure, TapFailed):
                log.end()
                return _usage(str(failure))
            raise


async def _serve(port: int, log: object, started: float) -> int:
    from mcpbind.tap.model_http import HostLog, serve_model  # noqa: PLC0415

    assert isinstance(log, HostLog)

    async def serve(task_status: Any) -> None:
        await serve_model(port, log, task_status=task_status)

    return await serve_until_stopped("mcpbind model-stub", serve, "/v1", log.end, started)
