"""What ``catalog``, ``call`` and ``login`` share: the config lookup (``--config PATH``, else
``./mcpbind.toml``, else the embedded demo), ``--trace``, ``-v`` and a startup failure's
report."""

from __future__ import annotations

import argparse
import contextlib
import logging
import pathlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

import attrs

from mcpbind.impl import ConfigError, HostConfig, ServerStartupError
from mcpbind.impl.config.host import load_toml, parse_toml
from mcpbind.impl.trace import TraceRecorder, trace_header

__all__ = [
    "USAGE",
    "add_config_option",
    "add_trace",
    "add_verbose",
    "config_or_exit",
    "every_tool",
    "load_config",
    "print_stderr",
    "startup_failed",
    "tracing",
    "verbose",
]

USAGE = 2


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


def config_or_exit(args: argparse.Namespace) -> tuple[HostConfig, str] | None:
    try:
        return load_config(args.config)
    except ConfigError as error:
        print(f"mcpbind: {error}", file=sys.stderr)
        return None


def every_tool(config: HostConfig, as_model: bool = False) -> HostConfig:
    """A person names tools directly: the CLI lists and calls every tool, also above
    ``defer_threshold`` (deferral is for a model's steps, SPEC §11.9), unless asked to
    act as a model would (``--as-model``)."""
    return config if as_model else attrs.evolve(config, defer_threshold=None)


@contextlib.contextmanager
def tracing(path: str | None, config: HostConfig) -> Iterator[TraceRecorder | None]:
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


def print_stderr(server: str, lines: Any, file: TextIO = sys.stdout) -> None:
    """A server's last stderr lines, when it failed (SPEC §11.14)."""
    if lines:
        print(f"  stderr of {server} (last {len(lines)} lines):", file=file)
        for line in lines:
            print(f"    {line}", file=file)


def startup_failed(error: ServerStartupError) -> int:
    print(f"mcpbind: {error}", file=sys.stderr)
    print_stderr(error.server, error.stderr, file=sys.stderr)
    return 1


def verbose(enabled: bool) -> None:
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
