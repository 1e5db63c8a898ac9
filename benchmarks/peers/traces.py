"""Host layers through the same four scenarios, as traces (issue 18, SPEC §14.5).

``python -m benchmarks.peers.traces [--out DIR]`` drives each subject against the tests'
logging server (``tests/testservers/tasks_server.py``, over stdio) through:

* ``cancel_in_flight``: a slow call, cancelled once the server has it;
* ``reused_call_id``: two calls under one call_id, one after the other;
* ``server_dies_mid_call``: a call during which the server process exits, then a call;
* ``refresh_during_a_step``: a step sampled, the server stops listing a tool and announces
  ``list_changed``, then (once the subject's catalog dropped the tool, or after 2 s) the
  step calls that tool, then the next step is sampled (the trace ends with the host open);

writes one trace per subject and scenario (``<subject>-<scenario>.ndjson``), checks each
with the monitors of SPEC §14.2 and prints what each violates.

Subjects: ``mcpbind`` (its own :class:`~mcpbind.impl.trace.TraceRecorder`, the production
writer), ``client-session-group`` (``mcp.client.session_group.ClientSessionGroup`` of
the SDK, which writes no trace: this harness writes it from outside, ``_outside.py``:
its own inputs, what the group returns, the group's ``tools`` after each step, and what
reached the server, from the server's own log; the group has no call_id, the harness
names its calls) and, with ``--with-peers``, each in its own venv and traced from outside
the same way, ``openai-agents`` (``openai_agents_traces.py``), ``fastmcp-client-group``
(fastmcp's ``ClientGroup``, ``fastmcp_traces.py``) and ``pydantic-ai`` (pydantic-ai's
``MCPToolset``, ``pydantic_ai_traces.py``; ``pydantic-ai-uncached`` with its documented
``cache_tools=False``), ``agent-framework`` (Microsoft agent-framework's
``MCPStdioTool``, ``agent_framework_traces.py``) and ``langchain-mcp-adapters``
(``MultiServerMCPClient``'s tools, a session per call; ``-session`` on one session:
``langchain_traces.py``) and ``google-adk`` (its ``McpToolset``, ``google_adk_traces.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import pathlib
import subprocess
import sys
from collections.abc import Awaitable, Callable
from importlib import metadata
from typing import Any

import anyio
from mcp import StdioServerParameters
from mcp.client.session_group import ClientSessionGroup

from mcpbind.impl import DuplicateCallId, Host, HostConfig, ServerConfig
from mcpbind.impl.trace import TraceRecorder, trace_header
from mcpbind.model.trace import check_trace, parse_trace

from ._outside import NAME, QUICK, SCENARIOS, SLOW, Outside, wait_for

SERVER = pathlib.Path(__file__).resolve().parents[2] / "tests" / "testservers" / "tasks_server.py"
OUT = pathlib.Path(__file__).resolve().parent / "traces"
SUBJECTS = ("mcpbind", "client-session-group")
REFRESH_WINDOW = 2.0
"""How long a subject's catalog may take to drop the retired tool before the step's call."""


def _params(log: pathlib.Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(SERVER), str(log)])


# --- mcpbind: the production trace writer -------------------------------------------------


async def mcpbind_run(scenario: str, log: pathlib.Path) -> str:
    """The scenario on a mcpbind host; the trace its TraceRecorder wrote."""
    log.write_text("")
    out = io.StringIO()
    config = HostConfig(
        servers={NAME: ServerConfig(target=_params(log), required=True)},
        reconnect_initial_sec=0.05,
    )
    recorder = TraceRecorder(out, trace_header(config))
    async with Host.open(config, recorder=recorder) as host:
        step = host.sample()

        async def call(call_id: str, tool: str, arguments: dict[str, Any]) -> None:
            with contextlib.suppress(DuplicateCallId):  # refused, and traced so
                await host.call(step, call_id, f"mcp__{NAME}__{tool}", arguments)

        if scenario == "cancel_in_flight":
            async with anyio.create_task_group() as group:
                group.start_soon(call, "c1", "long_operation", SLOW)
                await wait_for(log, "tools/call long_operation")
                host.cancel("c1")
        elif scenario == "reused_call_id":
            await call("c1", "long_operation", QUICK)
            await call("c1", "long_operation", QUICK)
        elif scenario == "server_dies_mid_call":
            await call("c1", "die", {"after": 0.2})
            with anyio.fail_after(20):
                while not host.statistics().connected[NAME]:
                    await anyio.sleep(0.02)
            await call("c2", "long_operation", QUICK)
        else:
            await call("c1", "retire", {"name": "doomed"})
            with anyio.move_on_after(REFRESH_WINDOW):  # time for its refresh
                while f"mcp__{NAME}__doomed" in host.registry.state.by_name:
                    await anyio.sleep(0.02)
            await call("c2", "doomed", {})
            host.sample()  # the next step
            recorder.end()  # observed while open, as for the other subjects
    recorder.end()
    return out.getvalue()


# --- ClientSessionGroup: traced from outside ------------------------------------------------


async def _group_call(
    subject: tuple[ClientSessionGroup, Outside, list[str]],
    call_id: str,
    tool: str,
    arguments: dict[str, Any],
) -> None:
    """One call through the group (with its trace and its step's names), traced: its
    input, what reached the server, its end."""
    group, trace, step = subject
    trace.current = call_id
    trace.add("call", step=0, call_id=call_id, name=tool)
    status, lost = "failed", False
    try:
        if tool not in step:
            status = "unsupported"
        else:
            result = await group.call_tool(tool, arguments)
            status = "error" if result.is_error else "ok"
    except anyio.get_cancelled_exc_class():
        status = "cancelled"
        raise
    except Exception as error:  # the group's failure, as a status
        lost = "closed" in str(error).lower()
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0.05)  # what the server logged for this call
            if status == "cancelled":  # its cancellation, if the layer sent one
                await _logged(trace.log, "notifications/cancelled", 2.0)
        trace.wire()
        if lost:
            trace.add("disconnect", server=NAME)
        trace.add("result", call_id=call_id, status=status)


async def group_run(scenario: str, log: pathlib.Path) -> str:
    """The scenario on an ``mcp`` ``ClientSessionGroup``, traced from outside."""
    log.write_text("")
    trace = Outside(log, "mcp ClientSessionGroup", metadata.version("mcp"))
    async with ClientSessionGroup() as group:
        await group.connect_to_server(_params(log))
        trace.catalog(sorted(group.tools))
        trace.add("sample", step=0)
        call = functools.partial(_group_call, (group, trace, sorted(group.tools)))
        if scenario == "cancel_in_flight":
            async with anyio.create_task_group() as running:
                running.start_soon(call, "c1", "long_operation", SLOW)
                await wait_for(log, "tools/call long_operation")
                trace.wire()
                trace.add("cancel", call_id="c1")
                running.cancel_scope.cancel()
        elif scenario == "reused_call_id":
            await call("c1", "long_operation", QUICK)
            await call("c1", "long_operation", QUICK)
        elif scenario == "server_dies_mid_call":
            await call("c1", "die", {"after": 0.2})
            await call("c2", "long_operation", QUICK)
        else:
            await call("c1", "retire", {"name": "doomed"})
            with anyio.move_on_after(REFRESH_WINDOW):  # time for a refresh, if it makes one
                while "doomed" in group.tools:
                    await anyio.sleep(0.02)
            trace.catalog(sorted(group.tools))
            await call("c2", "doomed", {})
            trace.catalog(sorted(group.tools))  # the next step reads the group's tools
            trace.add("sample", step=1)
            return trace.end()  # observed while open: LIVE-2 is about an open host
        trace.wire()
    trace.add("close")
    return trace.end()


async def _logged(log: pathlib.Path, prefix: str, seconds: float) -> None:
    """Until the server logged ``prefix`` (a busy machine is slow to write), or not."""
    with contextlib.suppress(TimeoutError):
        await wait_for(log, prefix, seconds)


RUNS: dict[str, Callable[[str, pathlib.Path], Awaitable[str]]] = {
    "mcpbind": mcpbind_run,
    "client-session-group": group_run,
}


def verdict(text: str) -> list[str]:
    """The ids a trace violates (empty: it conforms)."""
    return [v.invariant for v in check_trace(parse_trace(text.splitlines()))]


async def record(out: pathlib.Path, work: pathlib.Path) -> dict[str, dict[str, list[str]]]:
    out.mkdir(parents=True, exist_ok=True)
    table: dict[str, dict[str, list[str]]] = {}
    for subject in SUBJECTS:
        for scenario in SCENARIOS:
            text = await RUNS[subject](scenario, work / f"{subject}-{scenario}.log")
            (out / f"{subject}-{scenario}.ndjson").write_text(text, encoding="utf-8")
            table.setdefault(subject, {})[scenario] = verdict(text)
    return table


PEER_RUNNERS = {
    "openai_agents_traces.py": ("openai-agents", ("openai-agents",)),
    "fastmcp_traces.py": ("fastmcp", ("fastmcp-client-group",)),
    "pydantic_ai_traces.py": ("pydantic-ai", ("pydantic-ai", "pydantic-ai-uncached")),
    "agent_framework_traces.py": ("agent-framework", ("agent-framework",)),
    "langchain_traces.py": (
        "langchain-mcp-adapters",
        ("langchain-mcp-adapters", "langchain-mcp-adapters-session"),
    ),
    "google_adk_traces.py": ("google-adk", ("google-adk",)),
}
"""Each peer runner: the peer of ``__main__`` whose venv it runs in, and the subjects it
writes traces of."""


def record_peer(
    script: str, out: pathlib.Path, work: pathlib.Path
) -> dict[str, dict[str, list[str]]]:
    """A peer runner in its peer's own venv (``__main__``'s, installed on first use): it
    writes its subjects' four traces each into ``out``; their verdicts."""
    from .__main__ import (  # noqa: PLC0415
        DEFAULT_VENV_DIR,
        PEERS,
        TRACE_PEERS,
        ensure_venv,
        venv_python,
    )

    name, subjects = PEER_RUNNERS[script]
    peer = next(p for p in (*PEERS, *TRACE_PEERS) if p.name == name)
    venv = ensure_venv(peer, DEFAULT_VENV_DIR, lambda line: print(line, file=sys.stderr))
    runner = pathlib.Path(__file__).with_name(script)
    command = [str(venv_python(venv)), str(runner), sys.executable, str(SERVER), str(out)]
    subprocess.run([*command, str(work)], check=True, capture_output=True, timeout=600)
    return {
        subject: {
            scenario: verdict((out / f"{subject}-{scenario}.ndjson").read_text(encoding="utf-8"))
            for scenario in SCENARIOS
        }
        for subject in subjects
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=OUT, help="where the traces go")
    parser.add_argument(
        "--with-peers",
        action="store_true",
        help="also openai-agents, fastmcp's ClientGroup, pydantic-ai's MCPToolset, "
        "agent-framework's MCPStdioTool, langchain-mcp-adapters and google-adk's "
        "McpToolset, each in its own venv "
        "(installed from the package index on first use, as python -m benchmarks.peers does)",
    )
    args = parser.parse_args()
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as work:
        table = anyio.run(record, args.out, pathlib.Path(work), backend="trio")
        if args.with_peers:
            for script in PEER_RUNNERS:
                table.update(record_peer(script, args.out, pathlib.Path(work)))
    print(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
