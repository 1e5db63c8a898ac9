"""Every command's parser, and nothing else: ``mcpbind --help``, ``--version`` and a usage
error need no more than this module (no trio, no SDK, no model). A command's module, and
what it imports, loads when the command runs (:func:`_handler`).
"""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import Callable
from typing import Any

from .. import __version__
from .replays import STAGES

__all__ = [
    "LOGIN_TIMEOUT",
    "Command",
    "add_config_option",
    "add_trace",
    "add_verbose",
    "build_parser",
]

LOGIN_TIMEOUT = 300.0
"""How long ``login`` waits for the browser to come back (Codex waits 300 s too)."""


def build_parser(*, full: bool = True) -> argparse.ArgumentParser:
    """The parser of every command. ``full=False`` leaves out what only a command's own
    help shows and costs an import (``explore``'s invariant ids): for a run of another
    command, or ``mcpbind --help``."""
    parser = argparse.ArgumentParser(
        prog="mcpbind",
        description="A consistent tool layer over MCP servers, and the checks that prove it.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _catalog(commands)
    _call(commands)
    _explore(commands, full)
    _check(commands)
    _fuzz(commands)
    _trace(commands)
    _tap(commands)
    _model_stub(commands)
    _login(commands)
    return parser


class Command:
    """A command's function, imported with its module (and trio, the SDK or the model)
    only when the command runs: :meth:`load`, then call what it returns."""

    def __init__(self, module: str, name: str, *, reads_config: bool = False) -> None:
        self.module = module
        self.name = name
        self.reads_config = reads_config
        """It reads its config first thing: read before its module loads (a bad one
        answers at once, :func:`.config_file.config_or_exit`)."""

    def load(self) -> Callable[[argparse.Namespace], int]:
        found: Callable[[argparse.Namespace], int] = getattr(
            importlib.import_module(f"mcpbind.cli.{self.module}"), self.name
        )
        return found

    def __call__(self, args: argparse.Namespace) -> int:
        return self.load()(args)


def _handler(module: str, name: str, *, reads_config: bool = False) -> Command:
    return Command(module, name, reads_config=reads_config)


def _explore_description() -> str:
    from .explore import liveness_ids, safety_ids  # noqa: PLC0415 - the model: see build_parser

    return (
        "Breadth-first exploration of the abstract model (SPEC §10) over the standard "
        f"suite: every reachable state, {safety_ids()} checked on every state and "
        f"transition, {liveness_ids()} on every drain. Exit 0 iff no violation."
    )


def add_config_option(parser: Any) -> None:
    """``--config PATH``: where every command that opens a host reads its servers."""
    parser.add_argument(
        "--config", metavar="PATH", help="config file (default ./mcpbind.toml, else the demo)"
    )


def add_trace(parser: Any) -> None:
    parser.add_argument(
        "--trace",
        metavar="FILE",
        help="write the run's trace (format mcpbind-trace/1, SPEC §14) to FILE; check it "
        "with mcpbind trace check FILE",
    )


def add_verbose(parser: Any) -> None:
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show what the servers write to their stderr (default: kept out of the "
        "terminal; a server that fails to start shows its last lines)",
    )


def _catalog(commands: Any) -> None:
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
    add_trace(catalog)
    add_verbose(catalog)
    catalog.set_defaults(handler=_handler("catalog", "catalog_main", reads_config=True))


def _call(commands: Any) -> None:
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
    add_trace(call)
    add_verbose(call)
    call.set_defaults(handler=_handler("tools", "call_main"))


def _explore(commands: Any, full: bool) -> None:
    parser = commands.add_parser(
        "explore",
        help="explore every interleaving of the model on a bound and check every invariant",
        description=_explore_description() if full else "",
    )
    parser.add_argument("--servers", type=int, default=2, choices=(1, 2), help="scripted servers")
    parser.add_argument("--steps", type=int, default=None, help="steps to sample (default 2)")
    parser.add_argument(
        "--calls", type=int, default=None, help="calls (default: 1 in catalogs, 3 in calls)"
    )
    parser.add_argument(
        "--policy", choices=("frozen", "revalidate", "both"), default="both", help="binding policy"
    )
    parser.add_argument("--depth", type=int, default=None, help="stop at this many events")
    parser.add_argument(
        "--bound",
        choices=("standard", "nightly"),
        default="standard",
        help="the suite of parts: standard, or nightly (one more call in every part but "
        "catalogs; minutes)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--mutant", default=None, help="explore a deliberately broken model")
    parser.add_argument(
        "--list-mutants", action="store_true", help="print the mutants' names and exit"
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="print every violation found (default: the shortest trace of each invariant)",
    )
    parser.add_argument("--workers", type=int, default=None, help="processes (default: cores)")
    parser.set_defaults(handler=_handler("explore", "main"))


def _check(commands: Any) -> None:
    parser = commands.add_parser(
        "check",
        help="run every check: explorer, odometer, replay corpus, property machines",
        description=(
            "The main job (SPEC §12.8): the explorer on the standard suite, the exhaustive "
            "odometer against the runtime, the replay corpus, and the Hypothesis property "
            "machines. Exit 0 iff everything holds."
        ),
    )
    parser.add_argument(
        "--profile",
        choices=("ci", "nightly"),
        default=os.environ.get("MCPBIND_HYPOTHESIS_PROFILE", "ci")
        if os.environ.get("MCPBIND_HYPOTHESIS_PROFILE") in ("ci", "nightly")
        else "ci",
        help="budgets (default: ci, or MCPBIND_HYPOTHESIS_PROFILE)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--replay", metavar="FILE", help="run one replay file and stop")
    parser.add_argument(
        "--mutants", action="store_true", help="also run every mutant and report the kills"
    )
    parser.add_argument(
        "--stages",
        default="explore,odometer,replays,machines",
        help=f"comma-separated stages to run, of {', '.join(STAGES)} (default: all but "
        "mutants; add it or use --mutants)",
    )
    parser.add_argument(
        "--corpus",
        metavar="DIR",
        default=None,
        help="replay corpus directory (default: the corpus installed with mcpbind, "
        "tests/replays in a checkout)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes the stages share (default: cores; 1: one stage after the other)",
    )
    parser.add_argument(
        "--failures",
        default="mcpbind-failures",
        help="where failing traces are written as replay files (default ./mcpbind-failures)",
    )
    parser.set_defaults(handler=_handler("check", "main"))


def _fuzz(commands: Any) -> None:
    parser = commands.add_parser(
        "fuzz",
        help="the nightly job: run the property machines sharded over processes for a while",
        description=(
            "Runs the property machines in N worker processes for M minutes against a shared "
            "example database, writes every failure as a replay file, exits 1 on any failure."
        ),
    )
    parser.add_argument("--minutes", type=float, default=10.0, help="how long (default 10)")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument(
        "--db",
        default=".hypothesis/mcpbind-fuzz",
        help="example database: a directory or redis://HOST:PORT "
        "(default .hypothesis/mcpbind-fuzz)",
    )
    parser.add_argument(
        "--failures", default="mcpbind-failures", help="where replay files are written"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--plant", metavar="MUTANT", default=None, help=argparse.SUPPRESS
    )  # checking only: run against a deliberately broken runtime
    parser.set_defaults(handler=_handler("fuzz", "main"))


def _trace(commands: Any) -> None:
    trace = commands.add_parser(
        "trace",
        help="check a trace (mcpbind-trace/1) against the specification",
        description="Traces in the format mcpbind-trace/1 (SPEC §14).",
    )
    actions = trace.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check",
        help="decide whether a trace conforms: exit 0 if it does, 1 if not",
        description="Run the trace monitors of SPEC §14.2 over FILE; print each invariant "
        "it breaks, at its first offending line.",
    )
    check.add_argument("file", metavar="FILE", help="the trace, one JSON object per line")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.add_argument(
        "--strict",
        action="store_true",
        help="also refine FILE against the model (a host with mcpbind's names and texts); "
        "on a divergence, write FILE.replay.json",
    )
    check.set_defaults(handler=_handler("trace", "check_main"))
    merge = actions.add_parser(
        "merge",
        help="merge a host's trace with the wire-side traces of taps in front of its servers",
        description="Print one trace: HOST's records, and each WIRE's (written by mcpbind "
        "tap) in place of HOST's wire-side records of that server, in the order of their "
        "times (SPEC §14.6). HOST must carry times: a TraceRecorder with a clock.",
    )
    merge.add_argument("host", metavar="HOST", help="the host's trace")
    merge.add_argument("wires", metavar="WIRE", nargs="+", help="a tap's trace")
    merge.add_argument("-o", "--output", metavar="FILE", help="write to FILE, not stdout")
    merge.set_defaults(handler=_handler("trace", "merge_main"))


def _tap(commands: Any) -> None:
    tap = commands.add_parser(
        "tap",
        help="relay one server's wire unchanged and record it as a wire-side trace",
        description="Put mcpbind tap in front of an MCP server in any host's configuration: "
        "it forwards every byte unchanged and writes what crossed the wire (listings, "
        "list_changed, calls and their answers, cancellations, task requests, the "
        "session's end) to FILE as mcpbind-trace/1 records marked wire-side (SPEC §14.6). "
        "stdio: mcpbind tap --trace FILE -- COMMAND [ARGS...]; streamable HTTP: mcpbind "
        "tap --trace FILE --http --listen 127.0.0.1:PORT --upstream URL.",
    )
    tap.add_argument(
        "--trace",
        required=True,
        metavar="FILE",
        help="the wire-side trace to write; {pid} in FILE is replaced by the tap's process id, "
        "so that a host that starts the server again gets a file per session",
    )
    tap.add_argument(
        "--server",
        metavar="NAME",
        help="the server's name in the records: the host's name for it, so that the trace "
        "merges with the host's (default: COMMAND's file name, or the upstream's host:port)",
    )
    tap.add_argument(
        "--http", action="store_true", help="a streamable-HTTP reverse proxy instead of stdio"
    )
    tap.add_argument(
        "--listen",
        metavar="127.0.0.1:PORT",
        help="with --http: where to listen (loopback only; PORT 0 picks a free port)",
    )
    tap.add_argument("--upstream", metavar="URL", help="with --http: the server's MCP endpoint")
    tap.add_argument(
        "command",
        nargs="*",
        metavar="-- COMMAND [ARGS...]",
        help="stdio: the server's command, after --",
    )
    tap.set_defaults(handler=_handler("tap", "tap_main"))


def _model_stub(commands: Any) -> None:
    stub = commands.add_parser(
        "model-stub",
        help="a scripted model on loopback that drives an agent host and traces its side",
        description="Give an agent host this as its model provider (OpenAI Responses API or "
        "Chat Completions on loopback): it answers each sampling request with the next step "
        "of SCENARIO (tool calls, several at once, or a final message) and writes what it saw "
        "to FILE as host-side mcpbind-trace/1 records: each step's tools, each call it asked "
        "for, each call's output (SPEC §14.7). Merged with the traces of taps in front of the "
        "host's servers (mcpbind trace merge), every monitor of trace check runs. Prints its "
        "base URL (http://127.0.0.1:PORT/v1) once it listens; stops on SIGTERM.",
    )
    stub.add_argument(
        "--scenario", required=True, metavar="FILE", help="the scenario, a TOML file of [[steps]]"
    )
    stub.add_argument("--trace", required=True, metavar="FILE", help="the host-side trace to write")
    stub.add_argument(
        "--listen",
        metavar="127.0.0.1:PORT",
        default="127.0.0.1:0",
        help="where to listen (loopback only; PORT 0, the default, picks a free port)",
    )
    stub.set_defaults(handler=_handler("model_stub", "model_stub_main"))


def _login(commands: Any) -> None:
    login = commands.add_parser(
        "login",
        help="authorize mcpbind for an MCP server that requires OAuth",
        description="Open the server's authorization page (or print its URL), receive the "
        "redirect on a loopback port, and store the tokens (SPEC §11.15).",
    )
    login.add_argument("server", metavar="SERVER", help="the server's name in the config")
    add_config_option(login)
    login.add_argument(
        "--no-browser", action="store_true", help="print the URL only; do not open a browser"
    )
    login.add_argument(
        "--timeout",
        type=float,
        default=LOGIN_TIMEOUT,
        help=f"seconds to wait for the browser (default {LOGIN_TIMEOUT:g})",
    )
    login.add_argument(
        "--scope",
        default=None,
        metavar="SCOPES",
        help='scopes to ask for besides the configured ones, space-separated, e.g. "a b" '
        "(what a refused call names: step-up)",
    )
    login.set_defaults(handler=_handler("login", "login_main"))
    logout = commands.add_parser(
        "logout",
        help="forget the OAuth credentials stored for an MCP server",
        description="Delete the server's stored tokens and client registration (SPEC §11.15).",
    )
    logout.add_argument("server", metavar="SERVER", help="the server's name in the config")
    add_config_option(logout)
    logout.set_defaults(handler=_handler("login", "logout_main"))
