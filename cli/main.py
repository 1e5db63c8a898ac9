"""The ``mcpbind`` command line (docs/cli.md; exit statuses: SPEC §15).

Nothing heavy is imported before :func:`main` has its handlers in place, and parsing
imports nothing heavy (:mod:`.parsers`): ``--help``, ``--version`` and a usage error
answer at once (issue 29), and only the command that runs loads its module (trio, the
SDK, the model). Ctrl-C at any moment, including the first seconds spent importing, ends
with one line and exit 130, and a reader that stops early (``mcpbind explore | head -2``)
ends the command quietly.
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import time
from collections.abc import Sequence

from . import parsers
from .parsers import Command

__all__ = ["BROKEN_PIPE", "INTERRUPTED", "USAGE", "build_parser", "main"]

USAGE = 2
"""A usage or configuration error (SPEC §15): one line on stderr, nothing started."""
INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT), as shells report it."""
BROKEN_PIPE = 141
"""stdout was closed before the output was written (128 + SIGPIPE, as a shell reports a
command that a pipe's reader stopped): nothing more is printed."""


def build_parser(*, full: bool = True) -> argparse.ArgumentParser:
    """Every command's parser (:func:`.parsers.build_parser`)."""
    return parsers.build_parser(full=full)


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    args: argparse.Namespace | None = None
    # Until the command begins, nothing needs closing: Ctrl-C ends the process at once.
    # (A KeyboardInterrupt raised while the SDK's types are built would reach us wrapped
    # in a pydantic SchemaError.)
    signal.signal(signal.SIGINT, functools.partial(_interrupted_early, started, argv))
    try:
        # The explorer's help names the model's invariants: only its parser loads the model.
        parser = build_parser(full=_command(argv) == "explore")
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return USAGE
        # The command's modules load now, still under the early handler.
        handler = args.handler
        if isinstance(handler, Command) and handler.reads_config:
            from .config_file import config_or_exit  # noqa: PLC0415 - see the docstring

            if config_or_exit(args) is None:
                return USAGE
        run = handler.load() if isinstance(handler, Command) else handler
        signal.signal(signal.SIGINT, signal.default_int_handler)
        result: int = run(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
    except BrokenPipeError:
        _stdout_closed()
        return BROKEN_PIPE
    except BaseException as error:
        if not _interrupted(error):
            raise
        # Ctrl-C: one line, no traceback. Hosts close gracefully on the way out (their
        # servers get their cancellations and are stopped), worker processes are ended.
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C: the line still
        seconds = time.perf_counter() - started
        command = args.command if args is not None else _command(argv)
        done = getattr(args, "interrupted", None)
        what = f"; {done()}" if callable(done) else ""
        name = f"mcpbind {command}" if command else "mcpbind"
        print(f"{name}: interrupted after {seconds:.1f} s{what}", file=sys.stderr)
        return INTERRUPTED
    return result


def _interrupted_early(started: float, argv: Sequence[str] | None, *_: object) -> None:
    command = _command(argv)
    name = f"mcpbind {command}" if command else "mcpbind"
    seconds = time.perf_counter() - started
    os.write(2, f"{name}: interrupted after {seconds:.1f} s\n".encode())
    os._exit(INTERRUPTED)


def _command(argv: Sequence[str] | None) -> str | None:
    """The command asked for, before the parser exists (Ctrl-C while importing)."""
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]
    return words[0] if words and words[0].replace("-", "").isalpha() else None


def _stdout_closed() -> None:
    """Whoever read our stdout has gone: point it at /dev/null so that the interpreter's
    last flush at exit does not complain about the pipe too."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout is not a file
        pass


def _interrupted(error: BaseException) -> bool:
    """Ctrl-C, bare or as trio delivers it from inside task groups (wrapped in groups,
    possibly beside the cancellations it caused)."""
    if isinstance(error, KeyboardInterrupt):
        return True
    if isinstance(error, BaseExceptionGroup):
        interrupts, _ = error.split(KeyboardInterrupt)
        return interrupts is not None
    return False


if __name__ == "__main__":
    sys.exit(main())
