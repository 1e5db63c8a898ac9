"""``@modelcontextprotocol/server-filesystem`` from npm, installed into ``.real-servers/``
with server-everything, by the same one ``npm install`` (``everything.py`` says why)."""

from __future__ import annotations

from pathlib import Path

from testservers.everything import FILESYSTEM, FILESYSTEM_ENTRY, NODE_BIN, install_all

__all__ = ["FILESYSTEM", "install"]

ENTRY = FILESYSTEM_ENTRY


def install() -> tuple[Path, Path]:
    """The Node binary and the server's entry point, installed if they are not."""
    install_all()
    return NODE_BIN, ENTRY
