"""``mcpbind catalog`` and ``mcpbind call``: what a model would see, and what a call returns.

Configuration lookup: ``--config PATH``, else ``./mcpbind.toml``, else the embedded demo.
Exit status: 0 (``catalog``: every server up; ``call``: ``ok``), 1 (a server failed; a call
ended in any other status), 2 (usage or configuration error), 130 or 143 (``call`` stopped
by SIGINT or SIGTERM: the call ends ``cancelled``, its cancellation delivered, no child
process left).

``call`` approves calls (SPEC §11.8) by asking on the terminal: stdin a terminal, the
question on stderr. ``--yes`` answers "allow" without asking; with neither, the host has no
approver, and a call that needs approval ends ``denied``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import logging
import pathlib
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

import attrs
import trio

from mcpbind.impl import (
    ApprovalAnswer,
    ApprovalRequest,
    Approver,
    ConfigError,
    DuplicateCallId,
    Host,
    HostConfig,
    McpConnector,
    Progress,
    ServerStartupError,
)
from mcpbind.impl.config.host import load_toml, parse_toml
from mcpbind.impl.trace import TraceRecorder, trace_header
from mcpbind.impl.wire.oauth import Authorizer
from mcpbind.model import texts

__all__ = ["ProgressLine", "add_config_option", "add_parsers", "load_config", "terminal_approver"]

USAGE = 2
AUTH_SHOWN = {
    "unsupported": "Unsupported",
    "off": "Off",
    "bearer_token": "Bearer token",
    "oauth": "OAuth",
    "not_logged_in": "Not logged in",
    "none": "None",
}
"""How ``catalog`` shows each server's auth status (Codex's ``mcp list`` words)."""


def load_config(option: str | None) -> tuple[HostConfig, str]:
    """The config and where it came from; ConfigError on a bad one."""
    if option is not None:
        loaded, source = load_toml(option), option
    elif pathlib.Path("mcpbind.toml").is_file():
        loaded, source = load_toml("mcpbind.toml"), "./mcpbind.toml"
    else:
        from mcpbind.demo import demo_toml  # noqa: PLC0415 - only without a config

        loaded, source = parse_toml(demo_toml(), path="<embedded demo>"), "the embedded demo"
    for message in loaded.warnings:
        print(f"mcpbind: warning: {message}", file=sys.stderr)
    return loaded.config, source


def _config_or_exit(args: argparse.Namespace) -> tuple[HostConfig, str] | None:
    try:
        return load_config(args.config)
    except ConfigError as error:
        print(f"mcpbind: {error}", file=sys.stderr)
        return None


def _every_tool(config: HostConfig, as_model: bool = False) -> HostConfig:
    """A person names tools directly: the CLI lists and calls every tool, also above
    ``defer_threshold`` (deferral is for a model's steps, SPEC §11.9), unless asked to
    act as a model would (``--as-model``)."""
    return config if as_model else attrs.evolve(config, defer_threshold=None)


@contextlib.contextmanager
def _tracing(path: str | None, config: HostConfig) -> Iterator[TraceRecorder | None]:
    """``--trace FILE``: the run's trace (SPEC §14), ended however the run ends."""
    if path is None:
        yield None
        return
    with open(path, "w", encoding="utf-8") as out:
        recorder = TraceRecorder(out, trace_header(config))
        try:
            yield recorder
        finally:
            recorder.end()


async def _catalog(
    config: HostConfig, as_model: bool = False, recorder: TraceRecorder | None = None
) -> dict[str, Any]:
    authorizer = Authorizer.for_host(config)
    connector = McpConnector(authorizer=authorizer)
    opened = Host.open(_every_tool(config, as_model), recorder=recorder, connector=connector)
    async with opened as host:
        snap = host.sample()
        statuses = host.server_status()
        stderr = {name: runtime.statistics().stderr for name, runtime in host.servers.items()}
    auth = {s.name: await authorizer.status(s.name, config.servers[s.name]) for s in statuses}
    parallel = {name: s.supports_parallel_tool_calls for name, s in config.servers.items()}
    return {
        "generation": snap.generation,
        "deferred": snap.deferred,
        "servers": [
            {
                "name": s.name,
                "status": "connected" if s.connected else "unavailable",
                "auth": auth[s.name],
                "tools": s.tools,
                "error": s.error,
                "stderr": list(stderr.get(s.name, ())) if not s.connected else [],
                "excluded": [
                    {"tool": e.tool, "kind": e.kind, "reason": e.reason} for e in s.excluded
                ],
                "hears_list_changed": s.hears_list_changed,
            }
            for s in statuses
        ],
        "tools": [
            {
                "name": spec.name,
                "server": binding.server,
                "remote_name": binding.remote_name,
                "description": spec.description,
                "input_schema": dict(spec.input_schema),
                "parallel": binding.read_only or parallel.get(binding.server or "", False),
            }
            for spec in snap.specs
            for binding in [snap.names[spec.name]]
        ],
    }


def _print_stderr(server: str, lines: Any, file: TextIO = sys.stdout) -> None:
    """A server's last stderr lines, when it failed (SPEC §11.14)."""
    if lines:
        print(f"  stderr of {server} (last {len(lines)} lines):", file=file)
        for line in lines:
            print(f"    {line}", file=file)


def _startup_failed(error: ServerStartupError) -> int:
    print(f"mcpbind: {error}", file=sys.stderr)
    _print_stderr(error.server, error.stderr, file=sys.stderr)
    return 1


def _verbose(enabled: bool) -> None:
    """``-v``: every server's stderr on ours, each line after the server's name."""
    if not enabled:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_ServerLineFormatter())
    logger = logging.getLogger("mcpbind.server")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)


class _ServerLineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"[{record.name.removeprefix('mcpbind.server.')}] {record.getMessage()}"


def catalog_main(args: argparse.Namespace) -> int:
    found = _config_or_exit(args)
    if found is None:
        return USAGE
    config, source = found
    _verbose(args.verbose)
    try:
        with _tracing(args.trace, config) as recorder:
            report = trio.run(_catalog, config, args.as_model, recorder)
    except ServerStartupError as error:
        return _startup_failed(error)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_catalog(report, source)
    return 0 if all(s["status"] == "connected" for s in report["servers"]) else 1


def _print_catalog(report: dict[str, Any], source: str) -> None:
    deferred = report["deferred"]
    more = f"; {deferred} MCP tool(s) deferred until tool_search finds them" if deferred else ""
    print(f"catalog from {source}: generation {report['generation']}{more}")
    print()
    print(f"  {'server':<16} {'status':<12} {'auth':<14} {'tools':>5}  error")
    for s in report["servers"]:
        auth = AUTH_SHOWN[s["auth"]]
        row = f"  {s['name']:<16} {s['status']:<12} {auth:<14} {s['tools']:>5}"
        print(f"{row}  {s['error'] or ''}")
    for s in report["servers"]:
        _print_stderr(s["name"], s["stderr"])
    for s in report["servers"]:
        if not s["hears_list_changed"]:
            print(f"  {s['name']}: {texts.UNHEARD}")
    left_out = [(s["name"], e) for s in report["servers"] for e in s["excluded"]]
    if left_out:
        print()
        print(f"  {'left out (SPEC §5.4)':<28} {'server':<16} why")
        for server, e in left_out:
            print(f"  {e['tool']:<28} {server:<16} {e['kind']}: {e['reason']}")
    print()
    print(f"  {'tool (what the model calls)':<44} {'server':<10} {'remote name':<14} lane")
    for t in report["tools"]:
        lane = "parallel" if t["parallel"] else "exclusive"
        print(f"  {t['name']:<44} {t['server'] or 'builtin':<10} {t['remote_name']:<14} {lane}")
        if t["description"]:
            print(f"      {t['description']}")


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
                try:
                    async with Host.open(_every_tool(config, as_model), recorder=recorder) as host:
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
    found = _config_or_exit(args)
    if found is None:
        return USAGE
    config, _ = found
    approver = _approver(args.yes, sys.stdin.isatty)
    if approver is not None:
        config = attrs.evolve(config, approver=approver)
    line = ProgressLine(sys.stderr) if sys.stderr.isatty() else None
    if line is not None and config.on_progress is None:
        config = attrs.evolve(config, on_progress=line)
    _verbose(args.verbose)
    try:
        with _tracing(args.trace, config) as recorder:
            call = functools.partial(
                _call, config, args.name, args.arguments, args.call_id, as_model=args.as_model
            )
            report, signum = trio.run(functools.partial(call, recorder=recorder))
    except ServerStartupError as error:
        return _startup_failed(error)
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


def add_parsers(commands: Any) -> None:
    catalog = commands.add_parser(
        "catalog",
        help="start the servers, refresh, and print what a model would be shown",
        description="Start every enabled server, run its first refresh, print the step snapshot.",
    )
    add_config_option(catalog)
    catalog.add_argument("--json", action="store_true", help="print one JSON object")
    catalog.add_argument(
        "--as-model",
        action="store_true",
        help="show the step exactly as a model sees it: above defer_threshold, MCP tools "
        "are deferred behind tool_search (default: every tool)",
    )
    _add_trace(catalog)
    _add_verbose(catalog)
    catalog.set_defaults(handler=catalog_main)

    call = commands.add_parser(
        "call",
        help="route one call and print its terminal result",
        description="Start the servers, sample a step, route one call, print its result.",
    )
    call.add_argument("name", metavar="NAME", help="the public tool name, e.g. mcp__notes__add")
    call.add_argument(
        "arguments", metavar="ARGS_JSON", nargs="?", default="", help="a JSON object (default {})"
    )
    add_config_option(call)
    call.add_argument("--call-id", default="cli-1", help="the call_id (default cli-1)")
    call.add_argument(
        "--yes",
        action="store_true",
        help="approve the call without asking (default: ask on a terminal, else deny "
        "a call that needs approval)",
    )
    call.add_argument("--json", action="store_true", help="print one JSON object")
    call.add_argument(
        "--as-model",
        action="store_true",
        help="route the call in a step as a model sees it (tool_search is callable above "
        "defer_threshold; deferred tools are unsupported)",
    )
    _add_trace(call)
    _add_verbose(call)
    call.set_defaults(handler=call_main)


def add_config_option(parser: Any) -> None:
    """``--config PATH``: where every command that opens a host reads its servers."""
    parser.add_argument(
        "--config", metavar="PATH", help="config file (default ./mcpbind.toml, else the demo)"
    )


def _add_trace(parser: Any) -> None:
    parser.add_argument(
        "--trace",
        metavar="FILE",
        help="write the run's trace (format mcpbind-trace/1, SPEC §14) to FILE; check it "
        "with mcpbind trace check FILE",
    )


def _add_verbose(parser: Any) -> None:
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show what the servers write to their stderr (default: kept out of the "
        "terminal; a server that fails to start shows its last lines)",
    )
