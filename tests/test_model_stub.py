"""``mcpbind model-stub`` (SPEC §14.7): a scripted model that drives hosts that are not
mcpbind — a raw-SDK host written here (``mcp.Client`` for its tools, the stub for its
model, over the Responses API and Chat Completions) and Codex — through scenarios, behind
``mcpbind tap`` (stdio and HTTP); the stub's host-side trace merges with the tap's and
``trace check`` judges the merge."""

from __future__ import annotations

import json
import pathlib
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import jsonschema
import mcp
import pytest
from cli_runner import mcpbind
from test_tap import TASKS, http_tap, schema, tapped, until
from testservers.processes import http_server

from benchmarks.peers import codex_traces
from benchmarks.peers.codex_traces import SCENARIOS, SCENARIOS_DIR
from benchmarks.peers.traces import verdict
from mcpbind.model.trace import check_trace, merge_traces, parse_trace
from mcpbind.tap.model_http import HostLog, serve_model
from mcpbind.tap.scenario import (
    ModelStub,
    ScenarioError,
    load_scenario,
    read_chat,
    read_responses,
)

ROOT = pathlib.Path(__file__).resolve().parent.parent
TRACES_PAGE = ROOT / "docs" / "traces.md"
STUB = [sys.executable, "-m", "mcpbind.cli", "model-stub"]


# The scenarios, sans-IO ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name = 1\n[[steps]]\nsay = 'x'", "'name' is a string"),
        ("name = 'x'", "no [[steps]]"),
        ("[[steps]]\nsay = 'x'\ncalls = [{tool = 't'}]", "either calls or say"),
        ("[[steps]]\nwait = 1", "a step has 'calls' or 'say'"),
        ("[[steps]]\ncalls = [{arguments = {}}]", "each call names its 'tool'"),
        ("[[steps]\n", "not TOML"),
        ("[[steps]]\nsay = 'x'\npause = 'long'", "'pause' is a number of seconds, 0 to 600"),
        ("[[steps]]\nsay = 'x'\npause = -1", "'pause' is a number of seconds, 0 to 600"),
    ],
)
def test_a_scenario_that_is_not_one_is_refused_saying_what_is_wrong(text, problem):
    with pytest.raises(ScenarioError, match=re.escape(problem)):
        load_scenario(text)


def test_every_committed_scenario_loads():
    files = sorted(path.stem for path in SCENARIOS_DIR.glob("*.toml"))
    assert files == sorted([*SCENARIOS, "restarted_while_idle"])
    for scenario in files:
        loaded = load_scenario((SCENARIOS_DIR / f"{scenario}.toml").read_text())
        assert loaded.name == scenario
        assert loaded.servers == ("tasks",)


def test_a_steps_pause_is_in_its_answer_and_the_records_are_the_same():
    """SPEC §14.7: ``pause`` delays the answer (the model thinking), nothing else."""
    text = "servers = ['tasks']\n[[steps]]\npause = 2.5\ncalls = [{tool = 'mcp__tasks__x'}]\n"
    request = read_responses({"tools": [{"type": "function", "name": "mcp__tasks__x"}]}, ["tasks"])
    paused, plain = (
        ModelStub(load_scenario(text)),
        ModelStub(load_scenario(text.replace("2.5", "0"))),
    )
    (answer, written), (unpaused, same) = paused.turn(request), plain.turn(request)
    assert (answer.pause, unpaused.pause) == (2.5, 0.0)
    assert (answer.calls, written) == (unpaused.calls, same)


CODEX_TOOLS = [
    {"type": "function", "name": "exec_command", "parameters": {}},
    {
        "type": "namespace",
        "name": "mcp__tasks",
        "tools": [{"type": "function", "name": "retire"}, {"type": "function", "name": "doomed"}],
    },
]


def test_each_request_is_a_step_with_its_catalog_its_calls_and_the_outputs_it_brings():
    """Codex's shape: a server as one ``namespace`` tool; a call names the namespace. The
    second request brings the first call's output and a catalog without ``doomed``."""
    stub = ModelStub(load_scenario((SCENARIOS_DIR / "removed_tool.toml").read_text()))
    first = read_responses({"tools": CODEX_TOOLS, "input": []}, stub.scenario.servers)
    answer, written = stub.turn(first)
    [(call_id, tool, arguments)] = answer.calls
    assert (tool.namespace, tool.function, dict(arguments)) == (
        "mcp__tasks",
        "retire",
        {"name": "doomed"},
    )
    assert [r["kind"] for r in written] == [
        "list_done",
        "published",
        "refresh_outcome",
        "sample",
        "call",
    ]
    assert written[1]["names"] == ["mcp__tasks__doomed", "mcp__tasks__retire"]
    assert written[3]["catalog"] == ["exec_command", "mcp__tasks__doomed", "mcp__tasks__retire"]
    assert written[4] == {
        "kind": "call",
        "call_id": call_id,
        "name": "mcp__tasks__retire",
        "step": 1,
    }
    tools = [CODEX_TOOLS[0], {**CODEX_TOOLS[1], "tools": [{"type": "function", "name": "retire"}]}]
    output = {"type": "function_call_output", "call_id": call_id, "output": "doomed retired"}
    second = read_responses({"tools": tools, "input": [output]}, stub.scenario.servers)
    answer, written = stub.turn(second)
    assert written[0] == {
        "kind": "result",
        "call_id": call_id,
        "status": "ok",
        "text": "doomed retired",
    }
    assert written[2]["names"] == ["mcp__tasks__retire"]
    assert written[2]["generation"] == 2
    # the removed tool is called as the host spelled it when it still offered it
    [(_, tool, _)] = answer.calls
    assert (tool.namespace, tool.function) == ("mcp__tasks", "doomed")
    answer, written = stub.turn(second)
    assert answer.text == "Called a removed tool."
    assert [r["kind"] for r in written] == ["sample"]  # no output is new


def test_a_chat_completions_request_reads_flat_tool_names_and_tool_messages():
    body = {
        "tools": [{"type": "function", "function": {"name": "mcp__my__srv__echo"}}],
        "messages": [{"role": "tool", "tool_call_id": "c1", "content": "Error: no"}],
    }
    read = read_chat(body, ("my__srv",))
    [tool] = read.tools
    assert (tool.name, tool.server) == ("mcp__my__srv__echo", "my__srv")
    stub = ModelStub(load_scenario("servers = ['my__srv']\n[[steps]]\nsay = 'x'"))
    _, written = stub.turn(read)
    assert written[0] == {"kind": "result", "call_id": "c1", "status": "error", "text": "Error: no"}


@pytest.mark.parametrize(
    ("output", "status"),
    [
        ('Wall time: 0.0061 seconds\nOutput:\n{"result":"report"}', "ok"),
        ("Wall time: 0.0052 seconds\nOutput:Unknown tool: doomed", "error"),
        ("Wall time: 0.5 seconds\nOutput:tool call error: ... Transport closed", "error"),
        (
            "Wall time: 1.03 seconds\nOutput:tool call error: timed out awaiting tools/call",
            "timed_out",
        ),
        ('{"content": [], "isError": true}', "error"),
        ("Error: no such tool", "error"),
        ("fine", "ok"),
    ],
)
def test_a_call_outputs_status_is_what_the_model_can_tell_of_it(output, status):
    """Codex's preface (``Wall time: N seconds``, ``Output:``) aside, an output that says
    it timed out is ``timed_out``, one that says it failed ``error``."""
    stub = ModelStub(load_scenario("servers = ['tasks']\n[[steps]]\nsay = 'x'"))
    item = {"type": "function_call_output", "call_id": "c", "output": output}
    _, written = stub.turn(read_responses({"input": [item]}, ("tasks",)))
    assert written[0]["status"] == status


def test_the_merge_names_the_wire_calls_after_the_stubs_call_records_in_their_order():
    """The stub writes no ``sent``: the k-th ``tools/call`` of a tool on the wire is the
    k-th ``call`` of ``mcp__SERVER__TOOL`` on the host's side (SPEC §14.6)."""
    header = load_header()
    host = [
        header,
        {"kind": "call", "call_id": "a", "name": "mcp__tasks__research", "at": 1.0},
        {"kind": "call", "call_id": "b", "name": "mcp__tasks__research", "at": 1.1},
        {"kind": "result", "call_id": "a", "status": "ok", "at": 3.0},
        {"kind": "result", "call_id": "b", "status": "ok", "at": 3.1},
        {"kind": "end"},
    ]
    wire = [
        {
            "kind": "header",
            "format": "mcpbind-trace/1",
            "side": "wire",
            "servers": ["tasks"],
            "host": {},
        },
        *[
            {
                "kind": "sent",
                "server": "tasks",
                "method": "tools/call",
                "call_id": n,
                "detail": "research",
                "at": t,
            }
            for n, t in (("7", 1.5), ("8", 1.6))
        ],
        {"kind": "call_responded", "call_id": "8", "is_error": False, "at": 2.0},
        {"kind": "call_responded", "call_id": "7", "is_error": False, "at": 2.1},
        {"kind": "end"},
    ]
    merged = merge_traces(parsed(host), [parsed(wire)])
    sent = [(r["kind"], r["call_id"]) for r in merged if r["kind"] in ("sent", "call_responded")]
    assert sent == [("sent", "a"), ("sent", "b"), ("call_responded", "b"), ("call_responded", "a")]
    assert check_trace(parsed(merged)) == []


def test_the_merge_pairs_each_of_three_wire_calls_of_a_tool_with_the_hosts_call_of_its_rank():
    """The k-th, for every k: three calls of one tool, the third too (issue 33: counting
    the calls taken down instead of up paired two calls right and a third wrong)."""
    ids = ("a", "b", "c")
    host = [
        load_header(),
        *[{"kind": "call", "call_id": c, "name": "mcp__tasks__research", "at": 1.0} for c in ids],
        *[{"kind": "result", "call_id": c, "status": "ok", "at": 3.0} for c in ids],
        {"kind": "end"},
    ]
    header = {"kind": "header", "format": "mcpbind-trace/1", "side": "wire", "servers": ["tasks"]}
    sent = {"kind": "sent", "server": "tasks", "method": "tools/call", "detail": "research"}
    wire = [
        {**header, "host": {}},
        *[{**sent, "call_id": n, "at": t} for n, t in (("7", 1.5), ("8", 1.6), ("9", 1.7))],
        {"kind": "end"},
    ]
    merged = merge_traces(parsed(host), [parsed(wire)])
    assert [r["call_id"] for r in merged if r["kind"] == "sent"] == ["a", "b", "c"]


def test_a_call_a_restarted_server_refused_and_its_resend_keep_the_stubs_call_id():
    """SPEC §14.6: the stub names its calls by their ``call`` records; a ``tools/call`` of
    a tool after a ``session_expired`` of that tool's call is its resend, in the new
    session with a new request id: it takes that call's id (and the pairing of the
    tool's later calls stays), so INV-14 sees a resend sent before any listing."""
    host = [
        load_header(),
        {"kind": "call", "call_id": "a", "name": "mcp__tasks__research", "at": 1.0},
        {"kind": "result", "call_id": "a", "status": "ok", "at": 3.0},
        {"kind": "call", "call_id": "b", "name": "mcp__tasks__research", "at": 3.5},
        {"kind": "result", "call_id": "b", "status": "ok", "at": 5.0},
        {"kind": "end"},
    ]
    wire = [
        {
            "kind": "header",
            "format": "mcpbind-trace/1",
            "side": "wire",
            "servers": ["tasks"],
            "host": {},
        },
        {"kind": "sent", "server": "tasks", "method": "tools/call", "call_id": "3", "at": 1.1},
        {"kind": "session_expired", "call_id": "3", "at": 1.2},
        {"kind": "sent", "server": "tasks", "method": "initialize", "at": 1.3},
        {"kind": "sent", "server": "tasks", "method": "tools/call", "call_id": "1", "at": 1.4},
        {"kind": "call_responded", "call_id": "1", "is_error": False, "at": 2.0},
        {"kind": "sent", "server": "tasks", "method": "tools/call", "call_id": "2", "at": 4.0},
        {"kind": "call_responded", "call_id": "2", "is_error": False, "at": 4.5},
        {"kind": "end"},
    ]
    for record in wire[1:-1]:
        if record.get("method") == "tools/call":
            record["detail"] = "research"
    merged = merge_traces(parsed(host), [parsed(wire)])
    named = [r["call_id"] for r in merged if "call_id" in r and r["kind"] != "call"]
    assert named == ["a", "a", "a", "a", "a", "b", "b", "b"]
    assert [v.invariant for v in check_trace(parsed(merged))] == ["INV-14"]


def load_header() -> dict[str, Any]:
    stub = ModelStub(load_scenario("servers = ['tasks']\n[[steps]]\nsay = 'x'"))
    return stub.header([], "0")


def parsed(lines: list[dict[str, Any]]) -> Any:
    return parse_trace([json.dumps(r) for r in lines])


# A raw-SDK host driven by the stub -------------------------------------------------------


@asynccontextmanager
async def model_stub(scenario: str, trace: pathlib.Path) -> AsyncIterator[str]:
    """The stub in this process for the block; yields its base URL."""
    with trace.open("w", encoding="utf-8") as out:
        log = HostLog(out, ModelStub(load_scenario(scenario)), "test")
        async with anyio.create_task_group() as group:
            port = await group.start(serve_model, 0, log)
            yield f"http://127.0.0.1:{port}/v1"
            group.cancel_scope.cancel()
        log.end()


PREFIX = "mcp__tasks__"


async def raw_host(
    client: mcp.Client, model: str, api: str, heard: list[Any], timeout: float | None = None
) -> str:
    """A host in a few lines: its tools from ``mcp.Client``, its model the stub. Each step
    offers the server's tools as ``mcp__tasks__TOOL`` (listed anew after a
    ``list_changed``), runs the step's calls side by side, and sends their outputs with
    the next request; with a ``timeout``, a call that outlasts it is cancelled and the
    model told it timed out. It has no call identity: a reused call id runs again."""
    conversation: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    tools = (await client.list_tools()).tools
    async with httpx2.AsyncClient(timeout=60) as http:
        while True:
            if heard:
                heard.clear()
                tools = (await client.list_tools()).tools
            offered = [(PREFIX + t.name, t.input_schema) for t in tools]
            if api == "responses":
                calls, text = await responses_step(http, model, conversation, offered)
            else:
                calls, text = await chat_step(http, model, conversation, offered)
            if not calls:
                return text
            outputs: dict[str, str] = {}
            async with anyio.create_task_group() as group:
                for call_id, name, arguments in calls:
                    call = (call_id, name, arguments)
                    group.start_soon(run_call, client, outputs, call, timeout)
            if any(name == PREFIX + "retire" for _, name, _ in calls):
                await until(lambda: heard)  # the server announces list_changed
            for call_id, _, _ in calls:
                if api == "responses":
                    item = {"type": "function_call_output", "call_id": call_id}
                    conversation.append({**item, "output": outputs[call_id]})
                else:
                    item = {"role": "tool", "tool_call_id": call_id}
                    conversation.append({**item, "content": outputs[call_id]})


async def run_call(
    client: mcp.Client,
    outputs: dict[str, str],
    call: tuple[str, str, str],
    timeout: float | None,
) -> None:
    call_id, name, arguments = call
    answer = None
    try:
        with anyio.move_on_after(timeout):  # cancelled: notifications/cancelled goes out
            answer = await client.call_tool(name.removeprefix(PREFIX), json.loads(arguments))
    except Exception as error:  # the server died: the model is told, as Codex tells it
        outputs[call_id] = f"Error: {error!r}"
        return
    if answer is None:
        outputs[call_id] = f"Error: timed out after {timeout} s"
        return
    shown = " ".join(getattr(part, "text", "") for part in answer.content)
    outputs[call_id] = f"Error: {shown}" if answer.is_error else shown


async def events(http: httpx2.AsyncClient, url: str, body: dict[str, Any]) -> list[str]:
    found: list[str] = []
    async with http.stream("POST", url, json=body) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                found.append(line[6:])
    return found


async def responses_step(
    http: httpx2.AsyncClient, model: str, conversation: list[dict[str, Any]], offered: list[Any]
) -> tuple[list[tuple[str, str, str]], str]:
    tools = [{"type": "function", "name": name, "parameters": schema} for name, schema in offered]
    body = {"model": "stub", "stream": True, "input": conversation, "tools": tools}
    done = [json.loads(e) for e in await events(http, f"{model}/responses", body)]
    assert [e["type"] for e in done][0 :: len(done) - 1] == [
        "response.created",
        "response.completed",
    ]
    items = [e["item"] for e in done if e["type"] == "response.output_item.done"]
    calls = [i for i in items if i["type"] == "function_call"]
    conversation.extend(calls)
    text = "".join(p["text"] for i in items if i["type"] == "message" for p in i["content"])
    return [(c["call_id"], c["name"], c["arguments"]) for c in calls], text


async def chat_step(
    http: httpx2.AsyncClient, model: str, conversation: list[dict[str, Any]], offered: list[Any]
) -> tuple[list[tuple[str, str, str]], str]:
    tools = [{"type": "function", "function": {"name": n, "parameters": s}} for n, s in offered]
    body = {"model": "stub", "stream": True, "messages": conversation, "tools": tools}
    chunks = await events(http, f"{model}/chat/completions", body)
    assert chunks[-1] == "[DONE]"
    deltas = [json.loads(c)["choices"][0]["delta"] for c in chunks[:-1]]
    calls = [call for d in deltas for call in d.get("tool_calls", [])]
    text = "".join(d.get("content") or "" for d in deltas)
    if calls:
        conversation.append({"role": "assistant", "tool_calls": calls})
    return [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls], text


TIMEOUTS = {"call_times_out": 1.0}
"""The raw host's timeout for each call, by scenario (Codex's is the harness's)."""
UNSENT = {"server_dies_mid_call": {"research"}}
"""The calls of a scenario that cannot reach the wire: the server is dead by then."""

#: What each committed scenario's merged trace violates, per host: the raw host lists
#: anew after list_changed and has no call identity (a reused id runs twice: INV-4); Codex
#: 0.171.0 neither lists anew after list_changed (LIVE-2: its later steps still offer the
#: retired tool) nor refuses a reused call id (INV-4).
EXPECTED = {
    "raw-sdk-host": {s: ["INV-4"] if s == "reused_call_id" else [] for s in SCENARIOS},
    "codex": {
        "call_a_tool": [],
        "parallel_calls": [],
        "list_changed_mid_step": ["LIVE-2"],
        "removed_tool": ["LIVE-2"],
        "reused_call_id": ["INV-4"],
        "server_dies_mid_call": [],
        "call_times_out": [],
    },
}


FEATURE = "mcp_tool_list_changed"
FLAGGED = codex_traces.subject((FEATURE,))
#: What Codex 0.171.0 does with its feature flag ``mcp_tool_list_changed`` on (``codex exec
#: --enable mcp_tool_list_changed``; "under development", off by default): it lists anew on
#: ``notifications/tools/list_changed`` and its next step no longer offers the retired tool.
EXPECTED_FLAGGED = {"list_changed_mid_step": [], "removed_tool": []}


RESTART = "restarted_while_idle"
#: What the scenarios that need a server over HTTP show, per host: the raw host (a
#: handshake-era ``mcp.Client``) does not open a new session when its server no longer
#: knows the old one; it fails the call, and sends it no second time. Codex 0.171.0 opens
#: a new session and sends the refused call again at once, without listing first (INV-14).
EXPECTED_HTTP = {"raw-sdk-host": {RESTART: []}, "codex": {RESTART: ["INV-14"]}}
RESENT = {RESTART: [("stub-2-1", "long_operation")]}
"""The calls a host sends again in a scenario (Codex, after the 404 of a new session)."""


@pytest.mark.slow
@pytest.mark.trio
@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_a_raw_sdk_host_driven_by_the_stub_through_the_stdio_tap_merges_and_is_judged(
    tmp_path, scenario
):
    """Responses API, streamed; a handshake-era session, whose ``list_changed`` the host
    hears on the connection and answers by listing again."""
    host, wire = tmp_path / "host.ndjson", tmp_path / "wire.ndjson"
    heard: list[Any] = []

    async def on_message(message: Any) -> None:
        if "ToolListChanged" in type(message).__name__ or "list_changed" in repr(message):
            heard.append(message)

    text = (SCENARIOS_DIR / f"{scenario}.toml").read_text()
    params = tapped(wire, sys.executable, str(TASKS), str(tmp_path / "log"))
    async with model_stub(text, host) as model:
        async with mcp.Client(params, mode="legacy", message_handler=on_message) as client:
            said = await raw_host(client, model, "responses", heard, TIMEOUTS.get(scenario))
        assert said == load_scenario(text).steps[-1].say
    await until(lambda: wire.read_text().endswith('{"kind": "end"}\n'))
    merged = merge_traces(
        parse_trace(host.read_text().splitlines()), [parse_trace(wire.read_text().splitlines())]
    )
    # each wire call under the host's id (a step's calls reach the wire in any order)
    on_wire = [(r["call_id"], r["detail"]) for r in merged if r.get("method") == "tools/call"]
    offered = [
        (r["call_id"], r["name"].removeprefix(PREFIX)) for r in merged if r["kind"] == "call"
    ]
    assert sorted(on_wire) == sorted(c for c in offered if c[1] not in UNSENT.get(scenario, ()))
    if scenario in ("removed_tool", "list_changed_mid_step"):
        published = [r["names"] for r in merged if r["kind"] == "published"]
        assert "mcp__tasks__doomed" in published[0]
        assert "mcp__tasks__doomed" not in published[1]
    assert verdict(dump(merged)) == EXPECTED["raw-sdk-host"][scenario]
    validator = jsonschema.Draft202012Validator(schema())
    for record in [*(json.loads(line) for line in host.read_text().splitlines()), *merged]:
        validator.validate(record)


PARALLEL = """
name = "two_long_calls"
servers = ["tasks"]

[[steps]]
calls = [
    { tool = "mcp__tasks__long_operation", arguments = { steps = 2, seconds = 1.0 } },
    { tool = "mcp__tasks__long_operation", arguments = { steps = 2, seconds = 1.0 } },
]

[[steps]]
say = "done"
"""


@pytest.mark.slow
@pytest.mark.trio
async def test_a_raw_sdk_host_runs_a_steps_calls_side_by_side_through_the_http_tap(tmp_path):
    """Chat Completions, streamed, from the ``mcpbind model-stub`` command; streamable
    HTTP through ``mcpbind tap --http``: both calls of the step are on the wire before
    either is answered, and the merge conforms."""
    host, wire, scenario = tmp_path / "host.ndjson", tmp_path / "wire.ndjson", tmp_path / "s.toml"
    scenario.write_text(PARALLEL)
    stub = await anyio.open_process(
        [*STUB, "--scenario", str(scenario), "--trace", str(host)], stdout=subprocess.PIPE
    )
    try:
        assert stub.stdout is not None
        model = b""
        with anyio.fail_after(60):
            while not model.endswith(b"\n"):
                model += await stub.stdout.receive(1)
        async with (
            http_server(tmp_path / "log", listening=True, script=TASKS) as port,
            http_tap(wire, f"http://127.0.0.1:{port}/mcp") as url,
            mcp.Client(f"{url}/mcp") as client,
        ):
            assert await raw_host(client, model.decode().strip(), "chat", []) == "done"
    finally:
        stub.send_signal(signal.SIGTERM)
        with anyio.fail_after(30):
            assert await stub.wait() == 0
    merged = merge_traces(
        parse_trace(host.read_text().splitlines()), [parse_trace(wire.read_text().splitlines())]
    )
    kinds = [(r["kind"], r.get("method")) for r in merged]
    sent = [i for i, k in enumerate(kinds) if k == ("sent", "tools/call")]
    answered = [i for i, k in enumerate(kinds) if k[0] == "call_responded"]
    assert len(sent) == 2
    assert sent[1] < answered[0]
    assert verdict(dump(merged)) == []


# The restart breaks off the SDK's open response streams of the first session: the SDK
# leaves their async generators to be collected unexhausted (as in tests/test_sessions.py).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.slow
@pytest.mark.trio
async def test_a_raw_sdk_host_whose_http_server_restarts_while_it_is_idle_is_judged(tmp_path):
    """``restarted_while_idle`` (SPEC §14.7) through the HTTP tap: a handshake-era session;
    the server answers ``restart`` and comes back on its port with no session while the
    stub takes 5 s over the next step; the host's next call carries the old session id
    and is refused (404: ``session_expired`` on the wire). The raw host opens no new
    session: it tells the model the call failed, and sends it no second time."""
    host, wire = tmp_path / "host.ndjson", tmp_path / "wire.ndjson"
    text = (SCENARIOS_DIR / f"{RESTART}.toml").read_text()
    async with (
        model_stub(text, host) as model,
        http_server(tmp_path / "log", listening=True, script=TASKS) as port,
        http_tap(wire, f"http://127.0.0.1:{port}/mcp") as url,
    ):
        async with mcp.Client(f"{url}/mcp", mode="legacy") as client:
            said = await raw_host(client, model, "responses", [])
        assert said == load_scenario(text).steps[-1].say
    merged = merge_traces(
        parse_trace(host.read_text().splitlines()), [parse_trace(wire.read_text().splitlines())]
    )
    expired = [r["call_id"] for r in merged if r["kind"] == "session_expired"]
    assert expired == ["stub-2-1"]
    results = {r["call_id"]: r["status"] for r in merged if r["kind"] == "result"}
    assert results == {"stub-1-1": "ok", "stub-2-1": "error"}
    on_wire = [r["call_id"] for r in merged if r.get("method") == "tools/call"]
    assert on_wire == ["stub-1-1", "stub-2-1"]  # the refused call is not sent again
    assert verdict(dump(merged)) == EXPECTED_HTTP["raw-sdk-host"][RESTART]


def dump(merged: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in merged)


@pytest.mark.trio
async def test_the_stub_answers_unstreamed_requests_lists_no_models_and_refuses_the_rest(
    tmp_path,
):
    scenario = (
        "servers = ['tasks']\n[[steps]]\ncalls = [{tool = 'mcp__tasks__research'}]\n"
        "[[steps]]\nsay = 'bye'\n"
    )
    tools = [{"type": "function", "name": "mcp__tasks__research"}]
    async with (
        model_stub(scenario, tmp_path / "host.ndjson") as model,
        httpx2.AsyncClient() as http,
    ):
        first = await http.post(f"{model}/responses", json={"tools": tools, "input": []})
        [call] = first.json()["output"]
        assert (call["type"], call["name"], call["call_id"]) == (
            "function_call",
            "mcp__tasks__research",
            "stub-1-1",
        )
        chat = {"tools": [{"type": "function", "function": tools[0]}], "messages": []}
        second = (await http.post(f"{model}/chat/completions", json=chat)).json()
        message = second["choices"][0]["message"]
        assert (message["content"], second["choices"][0]["finish_reason"]) == ("bye", "stop")
        assert (await http.get(f"{model}/models")).json()["data"] == []
        assert (await http.get(f"{model}/embeddings")).status_code == 404
        assert (await http.post(f"{model}/responses", content=b"[1]")).status_code == 400
    kinds = [
        json.loads(line)["kind"] for line in (tmp_path / "host.ndjson").read_text().splitlines()
    ]
    assert kinds == [
        "header",
        "list_done",
        "published",
        "refresh_outcome",
        "sample",
        "call",
        "sample",
        "end",
    ]


# The command ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--listen", "0.0.0.0:1"], "expected 127.0.0.1:PORT"),
        (["--scenario", "/nonexistent/s.toml"], "cannot read /nonexistent/s.toml"),
        (["--trace", "/nonexistent/t.ndjson"], "cannot write /nonexistent/t.ndjson"),
    ],
)
def test_each_usage_error_of_the_command_is_one_line_and_exit_2(tmp_path, args, problem):
    scenario = tmp_path / "s.toml"
    scenario.write_text("[[steps]]\nsay = 'x'\n")
    given = {"--scenario": str(scenario), "--trace": str(tmp_path / "t.ndjson")}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        given[flag] = value
    done = mcpbind("model-stub", *[w for pair in given.items() for w in pair])
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert problem in done.stderr


def test_a_scenario_file_that_is_not_one_exits_2(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text("name = 'x'\n")
    done = mcpbind("model-stub", "--scenario", str(scenario), "--trace", str(tmp_path / "t"))
    assert done.returncode == 2
    problem = "not a scenario: no [[steps]]: a scenario is at least one step"
    assert done.stderr == f"mcpbind model-stub: {scenario}: {problem}\n"


# Codex --------------------------------------------------------------------------------


def cell(ids: list[str]) -> str:
    return ", ".join(ids) if ids else "conforms"


@pytest.mark.parametrize("scenario", [*SCENARIOS, RESTART])
def test_each_committed_codex_trace_is_flagged_as_the_table_says(scenario):
    text = (codex_traces.OUT / f"codex-{scenario}.ndjson").read_text(encoding="utf-8")
    assert json.loads(text.splitlines()[0])["peer"] == {"name": "codex", "version": "0.171.0"}
    validator = jsonschema.Draft202012Validator(schema())
    for line in text.splitlines():
        validator.validate(json.loads(line))
    assert verdict(text) == {**EXPECTED["codex"], **EXPECTED_HTTP["codex"]}[scenario]


@pytest.mark.parametrize("scenario", EXPECTED_FLAGGED)
def test_each_committed_trace_of_codex_with_its_list_changed_flag_conforms(scenario):
    text = (codex_traces.OUT / f"{FLAGGED}-{scenario}.ndjson").read_text(encoding="utf-8")
    peer = {"name": "codex", "version": "0.171.0", "features": [FEATURE]}
    assert json.loads(text.splitlines()[0])["peer"] == peer
    validator = jsonschema.Draft202012Validator(schema())
    for line in text.splitlines():
        validator.validate(json.loads(line))
    # it lists again once the server says its list changed
    assert [json.loads(line).get("method") for line in text.splitlines()].count("tools/list") == 2
    assert verdict(text) == EXPECTED_FLAGGED[scenario]


def test_the_docs_table_says_what_the_stub_driven_traces_show():
    page = TRACES_PAGE.read_text(encoding="utf-8")
    for host, row in EXPECTED.items():
        line = f"| {host} | " + " | ".join(cell(row[s]) for s in SCENARIOS) + " |"
        assert line in page, line
    cells = (cell(EXPECTED_FLAGGED[s]) if s in EXPECTED_FLAGGED else "not run" for s in SCENARIOS)
    line = f"| {FLAGGED} | " + " | ".join(cells) + " |"
    assert line in page, line
    for host, row in EXPECTED_HTTP.items():
        assert f"| {host} | {cell(row[RESTART])} |" in page, host


@pytest.fixture(scope="module")
def codex() -> pathlib.Path:
    try:
        return codex_traces.find_codex()
    except codex_traces.CodexUnavailable as error:
        print(f"Codex unavailable: {error}")
        pytest.skip(f"Codex {codex_traces.CODEX_VERSION} unavailable: {error}")


@pytest.mark.slow
@pytest.mark.trio
@pytest.mark.parametrize("scenario", [*SCENARIOS, RESTART])
async def test_codex_driven_by_the_stub_through_the_tap_is_judged_as_the_table_says(
    tmp_path, codex, scenario
):
    """Real Codex (``codex exec``) against the tests' server behind the stdio tap, its
    model the stub: the merged trace has every wire call under the stub's call id and
    the verdict the committed trace has."""
    text = await codex_traces.run_codex(codex, scenario, tmp_path)
    merged = [json.loads(line) for line in text.splitlines()]
    on_wire = [(r["call_id"], r["detail"]) for r in merged if r.get("method") == "tools/call"]
    offered = [
        (r["call_id"], r["name"].removeprefix(PREFIX)) for r in merged if r["kind"] == "call"
    ]
    # Codex sent every call the stub asked for that could reach the server (and again
    # the one a restarted server refused)
    sent = [c for c in offered if c[1] not in UNSENT.get(scenario, ())]
    assert sorted(on_wire) == sorted([*sent, *RESENT.get(scenario, [])])
    assert verdict(text) == {**EXPECTED["codex"], **EXPECTED_HTTP["codex"]}[scenario]


@pytest.mark.slow
@pytest.mark.trio
@pytest.mark.parametrize("scenario", EXPECTED_FLAGGED)
async def test_codex_with_its_list_changed_flag_lists_anew_and_conforms(tmp_path, codex, scenario):
    """Real Codex with ``--enable mcp_tool_list_changed``: the verdict the committed
    ``codex-mcp_tool_list_changed-*`` trace has (no LIVE-2)."""
    text = await codex_traces.run_codex(codex, scenario, tmp_path, (FEATURE,))
    assert [json.loads(line).get("method") for line in text.splitlines()].count("tools/list") == 2
    assert verdict(text) == EXPECTED_FLAGGED[scenario]
