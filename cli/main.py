"""The ``mcpbind`` command line (docs/cli.md)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from .. import __version__
from . import check, explore, fuzz, login, tools, trace

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpbind",
        description="A consistent tool layer over MCP servers, and the checks that prove it.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    tools.add_parsers(commands)
    explore.add_parser(commands)
    check.add_parser(commands)
    fuzz.add_parser(commands)
    trace.add_parser(commands)
    login.add_parsers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    started = time.perf_counter()
    try:
        result: int = args.handler(args)
    except BaseException as error:
        if not _interrupted(error):
            raise
        # Ctrl-C: one line, no traceback. Hosts close gracefully on the way out (their
        # servers get their cancellations and are stopped), worker processes are ended.
        seconds = time.perf_counter() - started
        done = getattr(args, "interrupted", None)
        what = f"; {done()}" if callable(done) else ""
        print(f"mcpbind {args.command}: interrupted after {seconds:.1f} s{what}", file=sys.stderr)
        return INTERRUPTED
    return result


def _interrupted(error: BaseException) -> bool:
    """Ctrl-C, bare or as trio delivers it from inside task groups (wrapped in groups,
    possibly beside the cancellations it caused)."""
    if isinstance(error, KeyboardInterrupt):
        return True
    if isinstance(error, BaseExceptionGroup):
        interrupts, _ = error.split(KeyboardInterrupt)
        return interrupts is not None
    return False


INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT), as shells report it."""


if __name__ == "__main__":
    sys.exit(main())
