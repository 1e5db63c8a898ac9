"""Codex, a host that is not mcpbind, driven through scenarios and checked from outside
(issue 30, SPEC §14.7).

``python -m benchmarks.peers.codex_traces [--out DIR]`` runs ``codex exec`` (the npm
package ``@openai/codex``, :data:`CODEX_VERSION`, which brings its native binary) with
``mcpbind model-stub`` as its model provider and the tests' logging server
(``tests/testservers/tasks_server.py``) behind ``mcpbind tap`` as its MCP server
``tasks``, once per scenario of ``benchmarks/peers/scenarios/``; merges the stub's
host-side trace with the tap's wire-side one (``mcpbind trace merge``), writes the merge
as ``codex-<scenario>.ndjson`` into ``benchmarks/peers/traces/`` and prints what each
violates (``mcpbind trace check``'s monitors). The scenarios of :data:`HTTP_SCENARIOS`
run the server over streamable HTTP on loopback instead, behind ``mcpbind tap --http``,
given to Codex by its ``url``. ``--enable FEATURE`` turns a Codex feature flag on (``codex
exec --enable``) and names the traces ``codex-FEATURE-<scenario>.ndjson``; ``--scenario``
picks the scenarios.

Codex is found as ``$MCPBIND_CODEX`` (the ``codex`` command), else installed with npm
into ``~/.cache/mcpbind/codex-<version>`` on first use (:func:`find_codex`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator

import anyio

from mcpbind.model.trace import merge_traces, parse_trace

from .traces import verdict

CODEX_VERSION = "0.171.0"
HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCENARIOS_DIR = HERE / "scenarios"
SCENARIOS = (
    "call_a_tool",
    "parallel_calls",
    "list_changed_mid_step",
    "removed_tool",
    "reused_call_id",
    "server_dies_mid_call",
    "call_times_out",
)
HTTP_SCENARIOS = ("restarted_while_idle",)
"""The scenarios whose server Codex reaches over streamable HTTP (through the HTTP tap)."""
OUT = HERE / "traces"
SERVER = ROOT / "tests" / "testservers" / "tasks_server.py"
SERVER_OPTIONS = {"call_times_out": "tool_timeout_sec = 1\n"}
"""Codex's options for the tapped server, by scenario (its own keys of ``[mcp_servers.X]``)."""
CACHE = pathlib.Path.home() / ".cache" / "mcpbind" / f"codex-{CODEX_VERSION}"


class CodexUnavailable(Exception):
    """npm or the package cannot be had here (the reason is the message)."""


def find_codex() -> pathlib.Path:
    """The ``codex`` command: ``$MCPBIND_CODEX``, or the npm package installed in
    :data:`CACHE` (installed there on first use); raises :class:`CodexUnavailable`."""
    given = os.environ.get("MCPBIND_CODEX")
    if given:
        return pathlib.Path(given)
    command = CACHE / "node_modules" / ".bin" / "codex"
    if command.exists():
        return command
    npm = shutil.which("npm")
    if npm is None:
        raise CodexUnavailable("npm is not installed (or set MCPBIND_CODEX to a codex command)")
    CACHE.mkdir(parents=True, exist_ok=True)
    package = f"@openai/codex@{CODEX_VERSION}"
    try:
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), package],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise CodexUnavailable(f"npm install {package} took over 10 minutes") from error
    if done.returncode != 0 or not command.exists():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise CodexUnavailable(f"npm install {package} failed: {last}")
    return command


def config(url: str, work: pathlib.Path, options: str = "", server_url: str = "") -> str:
    """Codex's ``config.toml``: the stub as its model provider, the tapped server (over
    stdio, or at ``server_url`` over streamable HTTP)."""
    tap = [
        "tap",
        "--trace",
        str(work / "tasks.{pid}.wire.ndjson"),
        "--server",
        "tasks",
        "--",
        sys.executable,
        str(SERVER),
        str(work / "server.log"),
    ]
    launch = (
        f"url = {json.dumps(server_url)}"
        if server_url
        else f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps(['-m', 'mcpbind.cli', *tap])}"
    )
    return f"""\
model = "mcpbind-model-stub"
model_provider = "stub"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.stub]
name = "mcpbind model-stub"
base_url = {json.dumps(url)}
wire_api = "responses"
env_key = "MCPBIND_STUB_KEY"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.tasks]
{launch}
required = true
{options}"""


async def run_codex(
    codex: pathlib.Path, scenario: str, work: pathlib.Path, features: tuple[str, ...] = ()
) -> str:
    """One scenario through Codex (with the feature flags ``features`` on: ``codex exec
    --enable``); the merged trace (host's and tap's), as text."""
    work.mkdir(parents=True, exist_ok=True)
    home, cwd = work / "codex-home", work / "cwd"
    home.mkdir(exist_ok=True)
    cwd.mkdir(exist_ok=True)
    host = work / "host.ndjson"
    stub_command = [
        sys.executable,
        "-m",
        "mcpbind.cli",
        "model-stub",
        "--scenario",
        str(SCENARIOS_DIR / f"{scenario}.toml"),
        "--trace",
        str(host),
    ]
    stub = await anyio.open_process(stub_command, stdout=subprocess.PIPE)
    try:
        assert stub.stdout is not None
        with anyio.fail_after(60):
            url = b""
            while not url.endswith(b"\n"):
                url += await stub.stdout.receive(1)
        env = {**os.environ, "CODEX_HOME": str(home), "MCPBIND_STUB_KEY": "stub"}
        exec_ = [str(codex), "exec", "--skip-git-repo-check", "--json", "-C", str(cwd)]
        exec_ += [f"--enable={feature}" for feature in features]
        prompt = f"Run the scenario {scenario}."
        async with contextlib.AsyncExitStack() as stack:
            server_url = ""
            if scenario in HTTP_SCENARIOS:
                server_url = await stack.enter_async_context(tapped_http_server(work)) + "/mcp"
            (home / "config.toml").write_text(
                config(url.decode().strip(), work, SERVER_OPTIONS.get(scenario, ""), server_url),
                encoding="utf-8",
            )
            with anyio.fail_after(300):
                done = await anyio.run_process(
                    [*exec_, prompt], stdin=subprocess.DEVNULL, env=env, check=False
                )
        (work / "codex.jsonl").write_bytes(done.stdout)
        if done.returncode != 0:
            raise RuntimeError(f"codex exec exited {done.returncode}: {done.stderr[-2000:]!r}")
    finally:
        stub.send_signal(signal.SIGTERM)
        with anyio.fail_after(30):
            await stub.wait()
    return merged(host, sorted(work.glob("tasks.*.wire.ndjson")), features)


@contextlib.asynccontextmanager
async def tapped_http_server(work: pathlib.Path) -> AsyncIterator[str]:
    """The tests' server over streamable HTTP on a free loopback port, behind ``mcpbind
    tap --http`` (its trace ``tasks.http.wire.ndjson`` in ``work``); yields the tap's URL;
    both stopped at the end."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "MCPBIND_TEST_HTTP_PORT": str(port)}
    server = await anyio.open_process(
        [sys.executable, str(SERVER), str(work / "server.log")],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=None,
        stderr=None,
    )
    try:
        with anyio.fail_after(60):
            while True:
                try:
                    await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    await anyio.sleep(0.1)
        tap = [
            *("tap", "--trace", str(work / "tasks.http.wire.ndjson"), "--server", "tasks"),
            *("--http", "--listen", "127.0.0.1:0", "--upstream", f"http://127.0.0.1:{port}/mcp"),
        ]
        proxy = await anyio.open_process(
            [sys.executable, "-m", "mcpbind.cli", *tap], stdout=subprocess.PIPE
        )
        try:
            assert proxy.stdout is not None
            with anyio.fail_after(60):
                url = b""
                while not url.endswith(b"\n"):
                    url += await proxy.stdout.receive(1)
            yield url.decode().strip()
        finally:
            proxy.send_signal(signal.SIGTERM)
            with anyio.fail_after(30):
                await proxy.wait()
    finally:
        server.terminate()
        with anyio.fail_after(30):
            await server.wait()


def merged(host: pathlib.Path, wires: list[pathlib.Path], features: tuple[str, ...] = ()) -> str:
    """``mcpbind trace merge HOST WIRE...`` (a tap Codex killed leaves a prefix), with
    the host under test (and the feature flags it ran with) named in the header."""
    records = parse_trace(host.read_text(encoding="utf-8").splitlines())
    taps = [parse_trace(w.read_text(encoding="utf-8").splitlines(), prefix=True) for w in wires]
    out = merge_traces(records, taps)
    out[0]["peer"] = {"name": "codex", "version": CODEX_VERSION}
    if features:
        out[0]["peer"]["features"] = list(features)
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in out)


def subject(features: tuple[str, ...] = ()) -> str:
    """The subject's name: ``codex``, or ``codex-FEATURE...`` with feature flags on."""
    return "-".join(("codex", *features))


async def record(
    codex: pathlib.Path,
    out: pathlib.Path,
    work: pathlib.Path,
    scenarios: tuple[str, ...] = (*SCENARIOS, *HTTP_SCENARIOS),
    features: tuple[str, ...] = (),
) -> dict[str, list[str]]:
    out.mkdir(parents=True, exist_ok=True)
    table: dict[str, list[str]] = {}
    for scenario in scenarios:
        text = await run_codex(codex, scenario, work / scenario, features)
        (out / f"{subject(features)}-{scenario}.ndjson").write_text(text, encoding="utf-8")
        table[scenario] = verdict(text)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=OUT, help="where the traces go")
    parser.add_argument(
        "--enable",
        action="append",
        default=[],
        metavar="FEATURE",
        help="a Codex feature flag to turn on (repeatable); the traces are then named "
        "codex-FEATURE-<scenario>.ndjson",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        choices=(*SCENARIOS, *HTTP_SCENARIOS),
        help="run only this scenario (repeatable; default: all)",
    )
    args = parser.parse_args()
    scenarios = tuple(args.scenario or (*SCENARIOS, *HTTP_SCENARIOS))
    try:
        codex = find_codex()
    except CodexUnavailable as error:
        print(f"codex_traces: {error}", file=sys.stderr)
        raise SystemExit(2) from error
    with tempfile.TemporaryDirectory() as work:
        table = anyio.run(
            record,
            codex,
            args.out,
            pathlib.Path(work),
            scenarios,
            tuple(args.enable),
            backend="trio",
        )
    print(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
