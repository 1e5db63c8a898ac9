"""The wire shape of every request mcpbind writes that a schema defines (SPEC §8.12,
§11.10, §11.14), checked against the MCP schema of its revision as the SDK ships it
(``mcp_types``: models generated from ``schema/<revision>.json``) and pinned exactly.

Mutation testing (issue 33) found that the elicitation answers of a 2026-07-28 task
could go out with Python field names instead of the wire's (``by_alias`` dropped) and no
test failed: the schema's models ignore unknown keys, so each body is also compared
whole.

Two views: what a real host wrote to a real server over stdio (the tests' tasks server,
``testservers/tasks_server.py``, copies every byte it reads), and, for the 2025-11-25
task requests that server does not serve, the task wire of that era
(:class:`~mcpbind.impl.wire.tasks.TaskWire`) writing to a recorder; a 2025-11-25 task
call itself reaches ``testservers/raw_tasks_2025.py``, which answers with what it got.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
from collections.abc import Callable
from typing import Any

import mcp_types as types
import mcp_types._v2025_11_25 as schema_2025  # the schema's own models, generated
import mcp_types._v2026_07_28 as schema_2026
import pytest
from mcp import StdioServerParameters
from mcp_types import methods

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.sending import META_CALL_ID, META_SESSION_ID, META_STEP
from mcpbind.impl.values import ElicitationAnswer, ElicitationRequest
from mcpbind.impl.wire.connection import answer_elicitation
from mcpbind.impl.wire.seam import RequestFailed, ServerError, TaskHandle, TaskPoll
from mcpbind.impl.wire.tasks import RELATED_TASK, TaskWire, seconds

SERVER = pathlib.Path(__file__).parent / "testservers" / "tasks_server.py"
RAW_TASKS_2025 = pathlib.Path(__file__).parent / "testservers" / "raw_tasks_2025.py"
MODERN = "2026-07-28"
TASK = TaskHandle("t-1", 0.02)


async def accept(request: ElicitationRequest) -> ElicitationAnswer:
    return ElicitationAnswer("accept", {"interpretation": "the fruit"})


async def host_session(tmp_path: pathlib.Path) -> list[dict[str, Any]]:
    """Every JSON-RPC message a host wrote to the tasks server over stdio in a session that
    listens, calls a plain tool, runs a task that asks for input, and one that times out."""
    wire = tmp_path / "wire.ndjson"
    target = StdioServerParameters(
        command=sys.executable,
        args=[str(SERVER)],
        env={**os.environ, "MCPBIND_TEST_WIRE_LOG": str(wire)},
    )
    server = ServerConfig(target=target, required=True, tool_timeout_sec=0.5)
    config = HostConfig(servers={"s": server}, elicitation="ask", elicitation_handler=accept)
    async with Host.open(config) as host:
        step = host.sample()
        plain = await host.call(step, "c1", "mcp__s__long_operation", {"steps": 1, "seconds": 0})
        asked = await host.call(step, "c2", "mcp__s__research", {"topic": "a", "ambiguous": True})
        slow = await host.call(step, "c3", "mcp__s__research", {"topic": "b", "stages": 1000})
    assert (plain.status, asked.status, slow.status) == ("ok", "ok", "timed_out")
    return [json.loads(line) for line in wire.read_text(encoding="utf-8").splitlines()]


async def test_every_request_a_host_writes_conforms_to_the_2026_schema_and_is_pinned(tmp_path):
    written = await host_session(tmp_path)
    requests = [m for m in written if "id" in m and "method" in m]
    known = {method for method, version in methods.CLIENT_REQUESTS if version == MODERN}
    by_method: dict[str, list[dict[str, Any]]] = {}
    for message in requests:
        by_method.setdefault(message["method"], []).append(message.get("params") or {})
        if message["method"] in known:  # the core schema's requests, checked whole
            methods.validate_client_request(message["method"], MODERN, message.get("params"))
    assert {"tools/call", "subscriptions/listen", "tasks/get", "tasks/update", "tasks/cancel"} <= (
        by_method.keys()
    )
    # tools/call: mcpbind's _meta beside the revision's own keys
    for params in by_method["tools/call"]:
        meta = params["_meta"]
        assert {"dev.mcpbind/call_id", "dev.mcpbind/session_id", "dev.mcpbind/step"} <= meta.keys()
        assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN
    assert [p["_meta"]["dev.mcpbind/call_id"] for p in by_method["tools/call"]] == [
        "c1",
        "c2",
        "c3",
    ]

    # The tasks extension's requests (SEP-2663; no schema in the SDK): pinned whole, less
    # the revision's _meta, and each input response checked against the schema's result.
    def body(params: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in params.items() if key != "_meta"}

    task_ids = {p["taskId"] for p in by_method["tasks/get"]}
    assert len(task_ids) == 2
    assert all(body(p) == {"taskId": p["taskId"]} for p in by_method["tasks/get"])
    [update] = by_method["tasks/update"]
    assert body(update) == {
        "taskId": update["taskId"],
        "inputResponses": {
            "clarify-1": {"action": "accept", "content": {"interpretation": "the fruit"}}
        },
    }
    for response in update["inputResponses"].values():
        schema_2026.ElicitResult.model_validate(response, by_name=False)
    [cancel] = by_method["tasks/cancel"]
    assert body(cancel) == {"taskId": cancel["taskId"]}
    assert cancel["taskId"] in task_ids
    assert cancel["taskId"] != update["taskId"]


class Recorder:
    """Stands for the connection's raw request: records each, answers from a script."""

    def __init__(self, answers: dict[str, list[Any]]) -> None:
        self.answers = answers
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, method: str, params: dict[str, Any], *, name: str) -> Any:
        assert name == params["taskId"]  # Mcp-Name on 2026-07-28 sessions
        self.sent.append((method, params))
        answer = self.answers[method].pop(0)
        if isinstance(answer, Exception):  # the server's JSON-RPC error
            raise answer
        return answer


def answering(handler: Callable[[ElicitationRequest], Any]) -> Any:
    async def answer(params: types.ElicitRequestParams) -> types.ElicitResult:
        return await answer_elicitation("s", handler, params)

    return answer


def elicit(meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "mode": "form",
        "message": "Which one?",
        "requestedSchema": {"type": "object", "properties": {"interpretation": {"type": "string"}}},
    }
    if meta is not None:
        params["_meta"] = meta
    return {"method": "elicitation/create", "params": params}


def frame(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def test_the_2025_task_requests_conform_to_their_schema_and_are_pinned():
    answers = {
        "tasks/get": [
            {"taskId": "t-1", "status": "working"},
            {"taskId": "t-1", "status": "completed"},
        ],
        "tasks/result": [{"content": []}],
        "tasks/cancel": [{"taskId": "t-1", "status": "cancelled"}],
    }
    recorder = Recorder(answers)
    wire = TaskWire(recorder, False, answering(accept))
    await wire.poll(TASK)
    await wire.poll(TASK)
    await wire.cancel(TASK, on_late=lambda: None)
    assert recorder.sent == [
        ("tasks/get", {"taskId": "t-1"}),
        ("tasks/get", {"taskId": "t-1"}),
        ("tasks/result", {"taskId": "t-1"}),
        ("tasks/cancel", {"taskId": "t-1"}),
    ]
    models = {
        "tasks/get": schema_2025.GetTaskRequest,
        "tasks/result": schema_2025.GetTaskPayloadRequest,
        "tasks/cancel": schema_2025.CancelTaskRequest,
    }
    for method, params in recorder.sent:
        models[method].model_validate(frame(method, params), by_name=False)


async def test_a_2025_task_call_goes_out_with_its_meta_as_the_wire_spells_it():
    """A 2025-11-25 tool that requires a task is called as one (SPEC §8.12), its params
    dumped by the host itself: ``_meta`` (the host's call metadata, SPEC §11.10) must go
    as the wire spells it, never as the SDK's Python name ``meta``. The server
    (``testservers/raw_tasks_2025.py``) answers the task with the params it got."""
    target = StdioServerParameters(command=sys.executable, args=[str(RAW_TASKS_2025)])
    config = HostConfig(servers={"s": ServerConfig(target=target, required=True)})
    async with Host.open(config) as host:
        step = host.sample()
        result = await host.call(step, "c1", "mcp__s__echo_params", {"x": 1})
    assert result.status == "ok", result.output
    got = json.loads(result.output.splitlines()[1])
    assert sorted(got) == ["_meta", "arguments", "name", "task"]
    assert (got["name"], got["arguments"], got["task"]) == (
        "echo_params",
        {"x": 1},
        {"ttl": 3_600_000},  # an hour (SPEC §8.12): a literal, so a changed constant fails
    )
    assert {key: got["_meta"][key] for key in (META_CALL_ID, META_STEP)} == {
        META_CALL_ID: "c1",
        META_STEP: step.step,
    }
    assert got["_meta"][META_SESSION_ID]
    schema_2025.CallToolRequest.model_validate(frame("tools/call", got), by_name=False)


async def test_a_2026_task_input_answer_goes_out_in_the_wires_field_names():
    """The answer carries ``_meta`` (the related task, echoed) as the wire spells it,
    never the SDK's Python name ``meta``."""
    related = {RELATED_TASK: {"taskId": "t-1"}}
    waiting = {"taskId": "t-1", "status": "input_required", "inputRequests": {"k": elicit(related)}}
    recorder = Recorder({"tasks/get": [waiting], "tasks/update": [{}]})
    wire = TaskWire(recorder, True, answering(accept))
    poll = await wire.poll(TASK)
    assert poll.status == "input_required"
    assert recorder.sent[1] == (
        "tasks/update",
        {
            "taskId": "t-1",
            "inputResponses": {
                "k": {
                    "action": "accept",
                    "content": {"interpretation": "the fruit"},
                    "_meta": {RELATED_TASK: {"taskId": "t-1"}},
                }
            },
        },
    )
    schema_2026.ElicitResult.model_validate(
        recorder.sent[1][1]["inputResponses"]["k"], by_name=False
    )


async def test_a_declined_2026_task_input_answer_is_the_action_alone():
    async def decline(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer("decline")

    waiting = {"taskId": "t-1", "status": "input_required", "inputRequests": {"k": elicit()}}
    recorder = Recorder({"tasks/get": [waiting], "tasks/update": [{}]})
    await TaskWire(recorder, True, answering(decline)).poll(TASK)
    assert recorder.sent[1] == (
        "tasks/update",
        {"taskId": "t-1", "inputResponses": {"k": {"action": "decline"}}},
    )


@pytest.mark.parametrize(
    ("modern", "code", "late"),
    [(False, -32602, True), (False, -32603, False), (True, -32602, False)],
)
async def test_a_2025_task_cancel_refused_as_already_ended_is_a_late_answer(modern, code, late):
    """2025-11-25: ``tasks/cancel`` of a task already terminal MUST be refused with
    -32602; the call has ended (INV-4), so that refusal is the task's late answer, said
    once. Any other error, and any error on 2026-07-28, is the request's failure (issue
    33: this branch ran in no test a sample run chooses)."""
    refused = ServerError(code, "task already terminal")
    recorder = Recorder({"tasks/cancel": [refused]})
    wire = TaskWire(recorder, modern, answering(accept))
    said: list[str] = []
    if late:
        await wire.cancel(TASK, on_late=lambda: said.append("late"))
    else:
        with pytest.raises(ServerError) as caught:
            await wire.cancel(TASK, on_late=lambda: said.append("late"))
        assert caught.value is refused
    assert said == (["late"] if late else [])
    assert recorder.sent == [("tasks/cancel", {"taskId": "t-1"})]


# --- each poll's answer, read in its era (SPEC §8.12) -----------------------------------

GOT = "tasks/get"


def got(status: str, **fields: Any) -> dict[str, Any]:
    return {"taskId": "t-1", "status": status, **fields}


@pytest.mark.parametrize(
    ("modern", "answers", "expected"),
    [
        pytest.param(False, {GOT: [got("working", pollInterval=250)]}, TaskPoll("working", 0.25)),
        pytest.param(
            False,
            {GOT: [got("working", pollIntervalMs=250)]},
            TaskPoll("working", None),
            id="2025 reads pollInterval only",
        ),
        pytest.param(
            True,
            {GOT: [got("working", pollIntervalMs=250, pollInterval=9)]},
            TaskPoll("working", 0.25),
            id="2026 reads pollIntervalMs only",
        ),
        pytest.param(
            False,
            {GOT: [got("cancelled", statusMessage="stopped by admin")]},
            TaskPoll("cancelled", None, message="stopped by admin"),
        ),
        pytest.param(True, {GOT: [got("cancelled", statusMessage=7)]}, TaskPoll("cancelled", None)),
        pytest.param(
            False,
            {GOT: [got("completed")], "tasks/result": [{"content": []}]},
            TaskPoll("completed", None, result={"content": []}),
        ),
        pytest.param(
            False,
            {GOT: [got("failed")], "tasks/result": [ServerError(-32603, "the tool broke")]},
            TaskPoll("failed", None, message="the tool broke"),
            id="2025 failed: tasks/result's error",
        ),
        pytest.param(
            True,
            {GOT: [got("completed", result={"content": []})]},
            TaskPoll("completed", None, result={"content": []}),
        ),
        pytest.param(
            True,
            {GOT: [got("failed", error={"code": 1, "message": "why"}, statusMessage="no")]},
            TaskPoll("failed", None, message="why"),
        ),
        pytest.param(
            True,
            {GOT: [got("failed", error={"code": 1}, statusMessage="status says")]},
            TaskPoll("failed", None, message="status says"),
        ),
        pytest.param(
            True,
            {GOT: [got("input_required", inputRequests={})]},
            TaskPoll("input_required", None),
            id="2026 nothing new to answer: no tasks/update",
        ),
    ],
)
async def test_a_polls_answer_is_read_as_its_era_defines_it(modern, answers, expected):
    recorder = Recorder({method: list(script) for method, script in answers.items()})
    wire = TaskWire(recorder, modern, answering(accept))
    assert await wire.poll(TASK) == expected
    assert [method for method, _ in recorder.sent] == list(answers)


@pytest.mark.parametrize(
    ("modern", "answer", "message"),
    [
        (False, [], "malformed tasks/get answer: no valid status"),
        (True, got("sleeping"), "malformed tasks/get answer: no valid status"),
        (True, got("completed"), "malformed tasks/get answer: a completed task without result"),
        (True, got("completed", result=[]), "malformed tasks/get answer: a completed task"),
        (True, got("input_required"), "input_required without inputRequests"),
        (
            True,
            got("input_required", inputRequests={"k": "ask me"}),
            "malformed input request: it names no method",
        ),
        (
            True,
            got("input_required", inputRequests={"k": {"x": 1}}),
            "malformed input request: it names no method",
        ),
        (
            True,
            got("input_required", inputRequests={"k": {"method": 7, "params": {}}}),
            "malformed input request: it names no method",
        ),
        (
            True,
            got("input_required", inputRequests={"k": {"method": "bogus", "params": {}}}),
            "malformed input request: ",
        ),
        (
            True,
            got("input_required", inputRequests={"k": {"method": "sampling/createMessage"}}),
            "malformed input request: ",
        ),
        (
            True,
            got(
                "input_required",
                inputRequests={
                    "k": {
                        "method": "roots/list",
                        "params": {},
                    }
                },
            ),
            "the server asked for roots/list, which mcpbind does not provide",
        ),
    ],
)
async def test_a_malformed_poll_answer_fails_the_request_naming_what_is_wrong(
    modern, answer, message
):
    wire = TaskWire(Recorder({GOT: [answer]}), modern, answering(accept))
    with pytest.raises(RequestFailed) as caught:
        await wire.poll(TASK)
    assert message in str(caught.value)


async def test_a_2025_tasks_result_that_is_not_an_object_fails_the_request():
    recorder = Recorder({GOT: [got("completed")], "tasks/result": [["content"]]})
    wire = TaskWire(recorder, False, answering(accept))
    with pytest.raises(RequestFailed, match="malformed tasks/result answer: not a JSON object"):
        await wire.poll(TASK)


async def test_a_2026_input_request_asked_again_is_answered_once():
    """SEP-2663: every poll repeats a pending request; its key is answered once, and a
    terminal status forgets the keys."""
    waiting = got("input_required", inputRequests={"k": elicit()})
    recorder = Recorder(
        {GOT: [waiting, waiting, got("completed", result={}), waiting], "tasks/update": [{}, {}]}
    )
    wire = TaskWire(recorder, True, answering(accept))
    for _ in range(4):
        await wire.poll(TASK)
    assert [method for method, _ in recorder.sent] == [
        GOT,
        "tasks/update",
        GOT,
        GOT,
        GOT,
        "tasks/update",
    ]


@pytest.mark.parametrize(
    ("given", "interval"),
    [
        *[(1500, 1.5), (0, 0.0), (0.5, 0.0005), (30_000, 30.0)],
        *[(-1, None), (-0.001, None), (True, None), (False, None), ("5", None), (None, None)],
    ],
)
def test_a_poll_interval_in_milliseconds_is_read_as_seconds_or_as_none_given(given, interval):
    """A negative, boolean or non-numeric interval is none given: the host then waits its
    default (SPEC §8.12; mutation testing, issue 33: ``>= 0`` made ``>= -1`` survived)."""
    assert seconds(given) == interval
