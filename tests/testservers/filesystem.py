"""``@modelcontextprotocol/server-filesystem`` from npm, installed into ``.real-servers/``
beside server-everything, under the same lock (``everything.py`` says why)."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

from testservers.everything import LOCK, NODE, NODE_BIN, ROOT

FILESYSTEM = "@modelcontextprotocol/server-filesystem@2026.8.31"
ENTRY = ROOT / "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"


def install() -> tuple[Path, Path]:
    """The Node binary and the server's entry point, installed if they are not."""
    with LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (ENTRY.exists() and NODE_BIN.exists()):
            npm = shutil.which("npm")
            assert npm is not None, "npm is needed to install server-filesystem from the registry"
            ROOT.mkdir(exist_ok=True)
            options = ["--prefix", str(ROOT), "--no-audit", "--no-fund", "--no-save", "--silent"]
            subprocess.run([npm, "install", *options, FILESYSTEM, NODE], check=True, timeout=600)
    return NODE_BIN, ENTRY
