"""The ``mcpbind`` command line (README "CLI reference")."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import check, explore, fuzz, tools

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpbind",
        description="A consistent tool layer over MCP servers, and the checks that prove it.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    tools.add_parsers(commands)
    explore.add_parser(commands)
    check.add_parser(commands)
    fuzz.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    result: int = args.handler(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
