"""``python -m benchmarks.peers [--quick] [--json PATH] [--venv-dir DIR] [--dry-run]``.

Issue 7's optional peers extra: each peer's per-call and catalog-build overhead over its
OWN raw ``mcp`` calls, next to mcpbind's overhead over its raw calls, measured in the same
run. Each asyncio peer is installed into its own virtualenv (they may pin another ``mcp``
than ours), keyed by the pinned version and reused, and its runner (``*_peer.py``) runs
there as a subprocess, over stdio, printing one JSON object. A peer that cannot be
installed or fails is reported with the reason. docs/benchmarks.md describes the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
from importlib.metadata import version
from typing import Any

import attrs
import trio

from ..suite import call_overhead, peer_session_group, refresh_ratio, stdio_target

HERE = pathlib.Path(__file__).parent
DEFAULT_VENV_DIR = (
    pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache"))
    / "mcpbind-bench-peers"
)


@attrs.frozen
class Peer:
    name: str
    requirement: str  # pip requirement, pinned: the venv is keyed by it
    venv_name: str
    runner: str
    distributions: tuple[str, ...]  # whose versions the runner reports
    extra: tuple[str, ...] = ()  # further pinned requirements, installed with it


PEERS = (
    Peer(
        "fastmcp",
        "fastmcp==4.2.3",
        "fastmcp-4.2.3",
        "fastmcp_peer.py",
        ("fastmcp", "mcp"),
    ),
    Peer(
        "pydantic-ai",
        "pydantic-ai-slim[mcp]==2.68.0",
        "pydantic-ai-slim-2.68.0",
        "pydantic_ai_peer.py",
        ("pydantic-ai-slim", "mcp"),
    ),
    Peer(
        "openai-agents",
        "openai-agents==0.24.0",
        "openai-agents-0.24.0",
        "openai_agents_peer.py",
        ("openai-agents", "mcp"),
    ),
)


TRACE_PEERS = (
    # Only traced (benchmarks/peers/traces.py), no overhead runner. The core package and,
    # pinned, the two requirements of its "all" extra that its MCP tools need (mcp and
    # tenacity), without the extra's thirty-odd integration packages.
    Peer(
        "agent-framework",
        "agent-framework-core==1.26.0",
        "agent-framework-core-1.26.0",
        "agent_framework_traces.py",
        ("agent-framework-core", "mcp"),
        ("mcp==2.3.0", "tenacity==9.2.1"),
    ),
    Peer(
        "langchain-mcp-adapters",
        "langchain-mcp-adapters==0.3.2",
        "langchain-mcp-adapters-0.3.2",
        "langchain_traces.py",
        ("langchain-mcp-adapters", "mcp"),
    ),
    Peer(
        "google-adk",
        "google-adk[mcp]==2.13.0",
        "google-adk-2.13.0",
        "google_adk_traces.py",
        ("google-adk", "mcp"),
    ),
)


def venv_python(venv: pathlib.Path) -> pathlib.Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / "python"


def ensure_venv(peer: Peer, venv_dir: pathlib.Path, progress: Any) -> pathlib.Path:
    """The peer's venv, created and installed on first use; raises ``RuntimeError`` with
    the reason when it cannot be made."""
    venv = venv_dir / peer.venv_name
    ready = venv / ".mcpbind-ready"
    if ready.exists():
        return venv
    progress(f"installing {peer.requirement} into {venv}")
    venv_dir.mkdir(parents=True, exist_ok=True)
    for command in (
        [sys.executable, "-m", "venv", str(venv)],
        [str(venv_python(venv)), "-m", "pip", "install", "-q", peer.requirement, *peer.extra],
    ):
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command[-2:])}: {_tail(done.stderr)}")
    ready.write_text(peer.requirement + "\n", encoding="utf-8")
    return venv


def _tail(text: str, lines: int = 3) -> str:
    return " | ".join(text.strip().splitlines()[-lines:]) or "(no output)"


def run_peer(peer: Peer, venv_dir: pathlib.Path, size: str, progress: Any) -> dict[str, Any]:
    try:
        venv = ensure_venv(peer, venv_dir, progress)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        return {"error": f"not installed: {error}"}
    progress(f"peer: {peer.name} (own venv, stdio)")
    command = [str(venv_python(venv)), str(HERE / peer.runner), "--size", size]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    except subprocess.TimeoutExpired:
        return {"error": "runner timed out"}
    except OSError as error:
        return {"error": f"runner did not start: {error}"}
    if done.returncode != 0:
        return {"error": f"runner failed (exit {done.returncode}): {_tail(done.stderr)}"}
    try:
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {"error": f"runner printed no JSON: {_tail(done.stdout + done.stderr)}"}


def _with_diff(result: dict[str, Any]) -> dict[str, Any]:
    subject = result.get("mcpbind", result.get("peer"))
    result["diff_us"] = round(subject["median_us"] - result["baseline"]["median_us"], 2)
    return result


async def ours(size: str, tools: int, progress: Any) -> dict[str, Any]:
    """mcpbind and mcp's ``ClientSessionGroup``, over stdio like the peers' runners."""
    rounds, per_round = {"smoke": (2, 5), "quick": (10, 25), "full": (30, 50)}[size]
    catalog_rounds = {"smoke": 2, "quick": 5, "full": 15}[size]
    progress("mcpbind: call overhead (stdio)")
    call = await call_overhead(stdio_target(), rounds=rounds, per_round=per_round)
    progress(f"mcpbind: refresh of a {tools}-tool stdio server")
    catalog = await refresh_ratio(tools, rounds=catalog_rounds, stdio=True)
    progress("peer: mcp ClientSessionGroup (stdio)")
    group = await peer_session_group(rounds=rounds, per_round=per_round)
    mcp = {"mcp": version("mcp")}
    return {
        "mcpbind": {
            "versions": mcp,
            "call_overhead_ratio": _with_diff(call),
            "catalog_build_ratio": _with_diff(catalog),
        },
        "mcp.ClientSessionGroup": {"versions": mcp, "call_overhead_ratio": _with_diff(group)},
    }


def _cell(result: dict[str, Any] | None, unit: str) -> str:
    if result is None:
        return f"{'-':>22}"
    diff = result["diff_us"] / (1000 if unit == "ms" else 1)
    return f"{diff:>+10.1f}{unit} x{result['ratio']:<8.3f}"


def table(figures: dict[str, Any]) -> str:
    """One row per system: its overhead over its own raw mcp calls (median difference and
    ratio of medians), for a call and for a catalog build; the versions measured."""
    tools = figures["tools"]
    lines = [
        f"{'over its own raw mcp calls (stdio)':<24} {'call: diff, ratio':>22}   "
        f"{f'catalog of {tools}: diff, ratio':>24}   versions"
    ]
    for name, result in figures["peers"].items():
        if "error" in result:
            lines.append(f"{name:<24} {result['error']}")
            continue
        versions = ", ".join(f"{k} {v}" for k, v in result.get("versions", {}).items())
        lines.append(
            f"{name:<24} {_cell(result.get('call_overhead_ratio'), 'us')}   "
            f"{_cell(result.get('catalog_build_ratio'), 'ms'):>24}   {versions}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (16-tool catalog)")
    parser.add_argument("--json", metavar="PATH", help="write the figures as one JSON object")
    parser.add_argument(
        "--venv-dir",
        metavar="DIR",
        type=pathlib.Path,
        default=DEFAULT_VENV_DIR,
        help=f"where the peers' venvs live, one per pinned version (default {DEFAULT_VENV_DIR})",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the plan; install and run nothing"
    )
    parser.add_argument(
        "--only", action="append", metavar="PEER", help="run only these peers (repeatable)"
    )
    args = parser.parse_args()
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    peers = [p for p in PEERS if not args.only or p.name in args.only]
    if args.dry_run:
        for peer in peers:
            venv = args.venv_dir / peer.venv_name
            state = "reuse" if (venv / ".mcpbind-ready").exists() else "create"
            print(f"{peer.name}: {state} {venv} ({peer.requirement}); run {peer.runner}")
        return 0

    def progress(label: str) -> None:
        print(f"  … {label}", file=sys.stderr, flush=True)

    tools = 16 if size == "smoke" else 2048
    figures: dict[str, Any] = {"size": size, "tools": tools}
    figures["peers"] = trio.run(ours, size, tools, progress)
    for peer in peers:
        figures["peers"][peer.name] = run_peer(peer, args.venv_dir, size, progress)
    print(table(figures))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
