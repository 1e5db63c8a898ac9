"""``mcpbind call``: route one call and print its terminal result.

Exit status: 0 (``ok``), 1 (a server failed; the call ended in any other status), 2
(usage or configuration error: a bad config, an empty ``--call-id``, ARGS_JSON that is not
a JSON object, each found before any server starts), 130 or 143 (stopped by SIGINT or
SIGTERM: the call ends ``cancelled``, its cancellation delivered, no child process left).

``call`` approves calls (SPEC §11.8) by asking on the terminal: stdin a terminal, the
question on stderr. ``--yes`` answers "allow" without asking; with neither, the host has no
approver, and a call that needs approval ends ``denied``.
"""

from __future__ import annotations

import argparse
import functools
import json
import signal
import sys
from collections.abc import Callable
from typing import Any, TextIO

import attrs
import trio

from mcpbind.impl import (
    ApprovalAnswer,
    ApprovalRequest,
    Approver,
    DuplicateCallId,
    Host,
    HostConfig,
    Progress,
    ServerStartupError,
)
from mcpbind.impl.calls.arguments import parse_arguments
from mcpbind.impl.trace import TraceRecorder

from .hosting import (
    USAGE,
    StartWatch,
    config_or_exit,
    every_tool,
    startup_failed,
    tracing,
    verbose,
)

__all__ = ["ProgressLine", "call_main", "terminal_approver"]


CHOICES: dict[str, ApprovalAnswer] = {
    "y": "allow",
    "s": "allow_session",
    "a": "allow_always",
    "n": "decline",
    "c": "cancel",
}


def _question(request: ApprovalRequest) -> str:
    arguments = json.dumps(dict(request.arguments), ensure_ascii=False)
    return (
        f"mcpbind: approve {request.name}: tool {request.tool!r} of server "
        f"{request.server!r} (approval mode {request.mode!r})?\n"
        f"  arguments: {arguments}\n"
        "  y = allow, s = allow for this session, a = allow always, n = decline, c = cancel\n"
    )


def terminal_approver(stdin: TextIO, stderr: TextIO) -> Approver:
    """Asks on ``stderr`` and reads the answer from ``stdin`` (a line: y, s, a, n or c;
    anything else asks again; end of input cancels)."""

    def read(question: str) -> ApprovalAnswer:
        stderr.write(question)
        while True:
            stderr.write("choice [y/s/a/n/c]: ")
            stderr.flush()
            line = stdin.readline()
            if not line:
                stderr.write("\n")
                return "cancel"
            choice = CHOICES.get(line.strip().lower()[:1])
            if choice is not None:
                return choice

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        return await trio.to_thread.run_sync(read, _question(request), abandon_on_cancel=True)

    return approve


async def _always_allow(request: ApprovalRequest) -> ApprovalAnswer:
    return "allow"


def _approver(yes: bool, isatty: Callable[[], bool]) -> Approver | None:
    if yes:
        return _always_allow
    if isatty():
        return terminal_approver(sys.stdin, sys.stderr)
    return None


@attrs.define
class _Interrupt:
    """SIGINT or SIGTERM while ``call`` runs (SPEC §11.14): the first ends the call
    ``cancelled`` (its cancellation delivered as the host closes) or, before the call
    started, stops the start; a second one stops waiting for the close."""

    signum: int | None = None
    calling: bool = False

    async def watch(
        self, signals: Any, host: list[Host], call_id: str, startup: trio.CancelScope
    ) -> None:
        async for signum in signals:
            if self.signum is None:
                self.signum = signum
                if self.calling and host:
                    host[0].cancel(call_id)
                    continue
            startup.cancel()


async def _call(
    config: HostConfig,
    name: str,
    arguments: str,
    call_id: str,
    *,
    as_model: bool = False,
    recorder: TraceRecorder | None = None,
) -> tuple[dict[str, Any] | None, int | None]:
    """The call's report (None when it never ran) and the signal that stopped it, if any."""
    interrupt = _Interrupt()
    opened: list[Host] = []
    result = None
    failed: ServerStartupError | None = None
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            with trio.CancelScope() as startup:
                nursery.start_soon(interrupt.watch, signals, opened, call_id, startup)
                watch = StartWatch(recorder, config)
                nursery.start_soon(watch.announce)
                try:
                    async with Host.open(every_tool(config, as_model), recorder=watch) as host:
                        watch.scope.cancel()
                        opened.append(host)
                        step = host.sample()
                        if interrupt.signum is None:
                            interrupt.calling = True
                            result = await host.call(step, call_id, name, arguments)
                except ServerStartupError as error:
                    failed = error  # raised below, outside the nursery
            nursery.cancel_scope.cancel()
    if failed is not None:
        raise failed
    if result is None:
        return None, interrupt.signum
    report: dict[str, Any] = {
        "call_id": result.call_id,
        "status": result.status,
        "output": result.output,
    }
    if result.items:  # only with image_capable = true (SPEC §8.8)
        report["items"] = [
            {"type": "image", "mime_type": i.mime_type, "data": i.data} for i in result.items
        ]
    return report, interrupt.signum


@attrs.define
class ProgressLine:
    """``mcpbind call`` on a terminal: one line on stderr, rewritten per notification
    (SPEC §8.10), and ended before the result is printed."""

    stream: TextIO
    shown: bool = False

    def __call__(self, progress: Progress) -> None:
        amount = f"{progress.progress:g}"
        if progress.total is not None:
            amount += f"/{progress.total:g}"
        message = f" {progress.message}" if progress.message else ""
        self.stream.write(f"\r\x1b[K[{progress.server}] progress {amount}{message}")
        self.stream.flush()
        self.shown = True

    def end(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
            self.shown = False


def call_main(args: argparse.Namespace) -> int:
    problem = _usage_problem(args)
    if problem is not None:  # SPEC §15: before any server starts
        print(f"mcpbind call: {problem}", file=sys.stderr)
        return USAGE
    found = config_or_exit(args)
    if found is None:
        return USAGE
    config, _ = found
    approver = _approver(args.yes, sys.stdin.isatty)
    if approver is not None:
        config = attrs.evolve(config, approver=approver)
    line = ProgressLine(sys.stderr) if sys.stderr.isatty() else None
    if line is not None and config.on_progress is None:
        config = attrs.evolve(config, on_progress=line)
    verbose(args.verbose)
    try:
        with tracing(args.trace, config) as recorder:
            call = functools.partial(
                _call, config, args.name, args.arguments, args.call_id, as_model=args.as_model
            )
            report, signum = trio.run(functools.partial(call, recorder=recorder))
    except ServerStartupError as error:
        return startup_failed(error)
    except DuplicateCallId as error:  # pragma: no cover - one call per process
        print(f"mcpbind: {error}", file=sys.stderr)
        return USAGE
    finally:
        if line is not None:
            line.end()
    if report is None:
        name = signal.Signals(signum).name if signum is not None else "a signal"
        print(f"mcpbind call: stopped by {name} before the call was sent", file=sys.stderr)
        return 128 + (signum or signal.SIGINT)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['call_id']}: {report['status']}")
        print(report["output"])
    if signum is not None:
        return 128 + signum  # 130 after SIGINT, 143 after SIGTERM
    return 0 if report["status"] == "ok" else 1


def _usage_problem(args: argparse.Namespace) -> str | None:
    if not args.call_id.strip():
        return "--call-id must not be empty"
    arguments = parse_arguments(args.arguments)
    if isinstance(arguments, str):
        return f'ARGS_JSON is {arguments}; pass a JSON object, e.g. \'{{"text": "hi"}}\''
    return None
