"""The config lookup of ``catalog``, ``call`` and ``login``: ``--config PATH``, else
``./mcpbind.toml``, else the embedded demo. Light on purpose (no trio, no SDK): ``catalog``
reads its config before its own module loads, so a config error answers at once
(issue 29)."""

from __future__ import annotations

import argparse
import pathlib
import sys

from mcpbind.impl.config.host import HostConfig, load_toml, parse_toml
from mcpbind.impl.errors import ConfigError

__all__ = ["config_or_exit", "load_config"]


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
    """The command's config, read once per run (its warnings printed once); None after
    printing why it is bad."""
    found: tuple[HostConfig, str] | None = getattr(args, "loaded_config", None)
    if found is not None:
        return found
    try:
        found = load_config(args.config)
    except ConfigError as error:
        print(f"mcpbind: {error}", file=sys.stderr)
        return None
    args.loaded_config = found
    return found
