"""Traces (issue 18, SPEC §14): mcpbind writes its boundary as ``mcpbind-trace/1`` and
``mcpbind trace check`` decides whether a trace conforms. Traces of mcpbind's own runs
conform; for each id its monitor covers, a small edit of a conforming trace breaking that
id is flagged with it, at the offending line."""

from __future__ import annotations

import importlib.resources
import io
import json
import pathlib
import re
import sys
from collections.abc import Mapping
from typing import Any

import anyio
import jsonschema
import pytest
from cli_runner import mcpbind
from mcp import StdioServerParameters
from mcp.server.mcpserver import MCPServer
from testservers.common import make_server
from trace_records import header

from mcpbind.impl import Host, HostConfig, NullRecorder, ServerConfig
from mcpbind.impl.config.recorder import records
from mcpbind.impl.config.server import ToolConfig
from mcpbind.impl.trace import TraceRecorder, server_options, trace_header
from mcpbind.impl.values import RefreshOutcome, ToolResult
from mcpbind.model.refine import refine
from mcpbind.model.trace import (
    REQUIRED,
    WIRE_HEADER,
    WIRE_KINDS,
    TraceError,
    check_trace,
    parse_trace,
)
from mcpbind.model.values import EVENT_KINDS, OUTPUT_KINDS, EventKind, Exclusion


def schema() -> dict[str, Any]:
    text = importlib.resources.files("mcpbind.model").joinpath("trace-schema.json").read_text()
    return dict(json.loads(text))


def records_of(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def lines(records: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(r) for r in records]


def violated(records: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(v.invariant, v.line) for v in check_trace(parse_trace(lines(records)))]


@pytest.fixture(scope="module")
def demo_trace(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """``mcpbind call`` on the embedded demo, traced (the issue's first check)."""
    path = tmp_path_factory.mktemp("trace") / "t.ndjson"
    done = mcpbind("call", "mcp__notes__add", '{"text": "hi"}', "--trace", str(path))
    assert done.returncode == 0, done.stderr
    checked = mcpbind("trace", "check", str(path), "--strict")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "conforms (23 records, refines the model)" in checked.stdout
    return records_of(path.read_text())


def test_a_traced_mcpbind_call_on_the_demo_conforms_and_matches_the_schema(demo_trace):
    validator = jsonschema.Draft202012Validator(schema())
    for record in demo_trace:
        validator.validate(record)
    kinds = [r["kind"] for r in demo_trace]
    assert kinds[0] == "header"
    assert kinds[-1] == "end"
    assert {"published", "refresh_outcome", "sample", "call", "sent", "result", "close"} <= set(
        kinds
    )
    header = demo_trace[0]
    assert header["format"] == "mcpbind-trace/1"
    assert header["servers"] == ["git.hub", "git_hub", "notes"]
    assert header["host"]["name"] == "mcpbind"
    [sent] = [r for r in demo_trace if r["kind"] == "sent" and r["method"] == "tools/call"]
    assert (sent["server"], sent["call_id"], sent["detail"]) == ("notes", "cli-1", "add")


def test_the_schema_requires_what_the_checker_requires():
    rules = schema()["allOf"]
    required = {
        rule["if"]["properties"]["kind"]["const"]: rule["then"]["required"]
        for rule in rules
        if rule["if"]["properties"].get("side") != {"const": "wire"}
    }
    assert required == {kind: list(fields) for kind, fields in REQUIRED.items()}
    [wire] = [r for r in rules if r["if"]["properties"].get("side") == {"const": "wire"}]
    assert wire["then"]["required"] == list(WIRE_HEADER)  # a tap's header (SPEC §14.6)


def test_the_schema_knows_every_kind_the_model_has_and_no_other():
    kinds = schema()["properties"]["kind"]["enum"]
    assert len(kinds) == len(set(kinds))
    assert set(kinds) == {"header", "end", *EVENT_KINDS, *OUTPUT_KINDS, *WIRE_KINDS}


def spec_required_fields() -> dict[str, set[str]]:
    """SPEC §14.1's table: kind -> the fields it says are required."""
    import re

    spec = (pathlib.Path(__file__).resolve().parent.parent / "SPEC.md").read_text()
    section = spec.split("### 14.1 The format", 1)[1].split("\n\n", 3)[1]
    found: dict[str, set[str]] = {}
    for row in section.splitlines()[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        if len(cells) < 3:
            continue
        required = cells[1]
        while re.search(r"\([^()]*\)", required):  # the explanations in brackets
            required = re.sub(r"\([^()]*\)", "", required)
        for kind in re.findall(r"`(\w+)`", cells[0]):
            found[kind] = set(re.findall(r"`(\w+)`", required))
    return found


def test_the_spec_table_requires_what_the_checker_requires():
    found = spec_required_fields()
    assert {kind for kind, fields in found.items() if fields} == set(REQUIRED)
    for kind, fields in REQUIRED.items():
        assert found[kind] == set(fields), kind


def test_a_refresh_outcome_record_names_the_tools_left_out_and_only_when_there_are_some():
    """SPEC §14.1: ``excluded`` lists, in listing order, the valid tools a refresh left out
    of the catalog, and is absent when it left none out (issue 33: the branch negated
    survived)."""
    out = io.StringIO()
    recorder = TraceRecorder(out, {"kind": "header"})
    left_out = tuple(
        Exclusion(tool=name, kind="task_required", reason=f"{name} needs a task")
        for name in ("research", "deploy")
    )
    recorder.refresh_outcome(RefreshOutcome("s", "installed", 2, excluded=left_out))
    recorder.refresh_outcome(RefreshOutcome("s", "unchanged", 2))
    assert records_of(out.getvalue())[1:] == [
        {
            "kind": "refresh_outcome",
            "server": "s",
            "status": "installed",
            "generation": 2,
            "excluded": ["research", "deploy"],
        },
        {"kind": "refresh_outcome", "server": "s", "status": "unchanged", "generation": 2},
    ]


def test_a_duplicated_result_fails_naming_inv_4(demo_trace, tmp_path):
    at = next(i for i, r in enumerate(demo_trace) if r["kind"] == "result")
    edited = [*demo_trace[: at + 1], demo_trace[at], *demo_trace[at + 1 :]]
    path = tmp_path / "dup.ndjson"
    path.write_text("\n".join(lines(edited)) + "\n")
    done = mcpbind("trace", "check", str(path), "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["conforms"] is False
    assert [(v["invariant"], v["line"]) for v in report["violations"]] == [("INV-4", at + 2)]


def test_a_deleted_result_fails_naming_live_1(demo_trace):
    at = next(i for i, r in enumerate(demo_trace) if r["kind"] == "result")
    found = violated(demo_trace[:at] + demo_trace[at + 1 :])
    assert "LIVE-1" in {invariant for invariant, _ in found}


def test_a_generation_raised_by_one_fails_naming_inv_1(demo_trace):
    at = next(i for i, r in enumerate(demo_trace) if r["kind"] == "published")
    edited = [dict(r) for r in demo_trace]
    edited[at]["generation"] += 1
    assert violated(edited) == [("INV-1", at + 1)]


def trace(*body: dict[str, Any]) -> list[dict[str, Any]]:
    return [header(), *body, {"kind": "end"}]


SENT_CALL = {"kind": "sent", "server": "s", "method": "tools/call", "call_id": "c1"}
CALL = {"kind": "call", "step": 0, "call_id": "c1", "name": "mcp__s__t"}
CANCELLED = {"kind": "result", "call_id": "c1", "status": "cancelled"}
SIGNAL = {"kind": "sent", "server": "s", "method": "notifications/cancelled", "call_id": "c1"}
PUBLISHED = {"kind": "published", "generation": 1, "source": "mcp:s", "names": ["mcp__s__t"]}

LISTED = {"kind": "list_done", "server": "s", "tools": ["t"]}
OPTIONS = {"s": {"parallel": False}}
A_STEP = {"kind": "sample", "step": 0}
EXPIRED = {"kind": "session_expired", "call_id": "c1"}
LISTING = {"kind": "sent", "server": "s", "method": "tools/list"}
UNCHANGED = {"kind": "refresh_outcome", "server": "s", "status": "unchanged"}
STREAM_ENDED = {"kind": "stream_ended", "server": "s"}
RELISTEN = {"kind": "relisten", "server": "s"}


def with_lanes(*body: dict[str, Any]) -> list[dict[str, Any]]:
    """A trace whose header gives the servers' options (INV-9 reads them)."""
    records = trace(*body)
    records[0] = {**records[0], "server_options": OPTIONS}
    return records


#: For each id: a small trace breaking exactly it, and the line its monitor must name.
BROKEN = {
    "INV-1": (trace(LISTED, PUBLISHED, LISTED, {**PUBLISHED, "generation": 3}), 5),
    "INV-3": (
        trace(
            {"kind": "list_done", "server": "s", "tools": [{"name": "t", "problem": "bad"}]},
            PUBLISHED,
        ),
        3,
    ),
    "INV-9": (
        with_lanes(
            LISTED,
            PUBLISHED,
            A_STEP,
            CALL,
            {**CALL, "call_id": "c2"},
            {**SENT_CALL, "detail": "t"},
            {**SENT_CALL, "detail": "t", "call_id": "c2"},
        ),
        8,
    ),
    "INV-10": (
        trace(CALL, {"kind": "deny", "call_id": "c1"}, SENT_CALL, CANCELLED, SIGNAL),
        4,
    ),
    "INV-4": (
        trace(
            CALL,
            {**CALL, "call_id": "c1"},
            {"kind": "refused", "call_id": "c1"},
            {"kind": "result", "call_id": "c1", "status": "ok"},
            {"kind": "result", "call_id": "c1", "status": "ok"},
        ),
        6,
    ),
    "INV-5": (
        trace(
            LISTED,
            PUBLISHED,
            {**LISTED, "server": "other"},
            {**PUBLISHED, "generation": 2, "source": "mcp:other"},
        ),
        5,
    ),
    "INV-7": (trace(CALL, SENT_CALL, CANCELLED), 4),
    "INV-8": (
        trace(CALL, {"kind": "disconnect", "server": "s"}, SENT_CALL, CANCELLED, SIGNAL),
        4,
    ),
    "INV-12": (
        trace(
            {"kind": "close"},
            CALL,
            {"kind": "result", "call_id": "c1", "status": "ok"},
        ),
        4,
    ),
    "INV-14": (trace(CALL, SENT_CALL, EXPIRED, LISTING, SENT_CALL), 6),
    "LIVE-1": (trace(CALL, SENT_CALL), 4),
    "LIVE-2": (trace({"kind": "list_changed", "server": "s"}), 2),
    "LIVE-3": (trace(LISTED, STREAM_ENDED, RELISTEN, UNCHANGED), 3),
}


@pytest.mark.parametrize("invariant", sorted(BROKEN))
def test_a_trace_breaking_one_id_is_flagged_with_it_at_its_line(invariant):
    records, line = BROKEN[invariant]
    assert (invariant, line) in violated(records)


def test_a_new_session_after_an_expiry_listens_anew_but_still_owes_its_refresh():
    """LIVE-3 (SPEC §8.13): a session_expired of a call to a server whose stream ended
    opens a new session, which listens; its first listing and refresh_outcome end the
    debt, as after a relisten. The lockstep streams machine met this trace."""
    expired = (LISTED, A_STEP, STREAM_ENDED, CALL, {**SENT_CALL, "detail": "t"}, EXPIRED)
    assert "LIVE-3" not in {i for i, _ in violated(trace(*expired, LISTING, UNCHANGED))}
    assert ("LIVE-3", 4) in violated(trace(*expired))  # no listing: still owed
    other = {**SENT_CALL, "server": "other"}
    assert ("LIVE-3", 4) in violated(trace(*expired[:4], other, EXPIRED, LISTING, UNCHANGED))
    # Only an expiry opens a session: a call's other ends (a timeout, a task's start or
    # status, all of them kinds that sort after "session_expired") leave the debt owed.
    for kind in ("timeout", "task_created", "task_status"):
        ended = {**EXPIRED, "kind": kind}
        assert ("LIVE-3", 4) in violated(trace(*expired[:-1], ended, LISTING, UNCHANGED)), kind


def test_the_conforming_versions_of_those_traces_conform():
    assert violated(trace(LISTED, PUBLISHED, LISTED, {**PUBLISHED, "generation": 2})) == []
    excluded = {"name": "t", "problem": "bad header", "excluded": "x_mcp_header"}
    left_out = {"kind": "list_done", "server": "s", "tools": ["t", excluded]}
    assert violated(trace(left_out, PUBLISHED)) == []  # left out is not invalid (SPEC §5.4)
    result = {"kind": "result", "call_id": "c1", "status": "ok"}
    one_after_the_other = with_lanes(
        LISTED,
        PUBLISHED,
        A_STEP,
        CALL,
        {**CALL, "call_id": "c2"},
        {**SENT_CALL, "detail": "t"},
        result,
        {**SENT_CALL, "detail": "t", "call_id": "c2"},
        {**result, "call_id": "c2"},
    )
    assert violated(one_after_the_other) == []
    read_only = {"kind": "list_done", "server": "s", "tools": [{"name": "t", "read_only": True}]}
    together = [read_only if r == LISTED else r for r in one_after_the_other]
    together.insert(7, together.pop(8))  # c2 sent while c1 is in flight: both parallel
    assert violated(together) == []
    exclusive = [LISTED if r == read_only else r for r in together]
    assert ("INV-9", 8) in violated(exclusive)  # the same order, exclusive: flagged
    denied = {"kind": "result", "call_id": "c1", "status": "denied"}
    assert violated(trace(CALL, {"kind": "deny", "call_id": "c1"}, denied)) == []
    assert violated(trace(CALL, SENT_CALL, CANCELLED, SIGNAL)) == []
    refresh = {"kind": "refresh_outcome", "server": "s", "status": "installed"}
    assert violated(trace({"kind": "list_changed", "server": "s"}, refresh)) == []
    refused = {"kind": "refused", "call_id": "c1"}
    assert violated(trace({"kind": "close"}, CALL, refused)) == []
    ok = {"kind": "result", "call_id": "c1", "status": "ok"}
    resent = (CALL, SENT_CALL, EXPIRED, LISTING, LISTED, UNCHANGED, SENT_CALL, ok)
    assert violated(trace(*resent)) == []
    relistened = (LISTED, STREAM_ENDED, RELISTEN, LISTING, LISTED, UNCHANGED)
    assert violated(trace(*relistened)) == []
    assert violated(trace(STREAM_ENDED, {"kind": "disconnect", "server": "s"})) == []


def test_two_calls_in_flight_of_a_tool_the_steps_listing_does_not_name_hold_one_lane():
    """INV-9's monitor reads a tool its step's listing does not name (the host sent
    another name than the one listed) as exclusive, the reading that can only flag more:
    two such calls of one step in flight together on a server without parallel calls are
    flagged at the second send (issue 33: that default made non-exclusive survived)."""
    records, line = BROKEN["INV-9"]
    unlisted = [{**r, "detail": "u"} if r.get("method") == "tools/call" else r for r in records]
    assert unlisted != records
    assert ("INV-9", line) in violated(unlisted)


def test_an_expiry_flags_a_third_send_and_another_call_that_outlives_it():
    """INV-14 from the trace alone: at most two tools/call for a call whose session
    expired; a call of that server in flight at the expiry ends failed."""
    ok = {"kind": "result", "call_id": "c1", "status": "ok"}
    twice = (CALL, SENT_CALL, EXPIRED, LISTING, LISTED, UNCHANGED, SENT_CALL)
    again = (*twice, EXPIRED, LISTING, LISTED, UNCHANGED, SENT_CALL, ok)
    assert ("INV-14", 13) in violated(trace(*again))
    other = {**SENT_CALL, "call_id": "c2"}
    answered = {"kind": "result", "call_id": "c2", "status": "ok"}
    failed = {**answered, "status": "failed"}
    outlived = (CALL, {**CALL, "call_id": "c2"}, SENT_CALL, other, EXPIRED, answered)
    assert ("INV-14", 7) in violated(trace(*outlived))
    assert "INV-14" not in {i for i, _ in violated(trace(*outlived[:-1], failed))}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "an empty file"),
        ("not json\n", "not JSON"),
        ('{"kind": "call", "call_id": "c1", "name": "x"}\n', "the first record must be"),
        (json.dumps(header()) + "\n", "does not end with"),
        (json.dumps(header()) + '\n{"kind": "fly"}\n{"kind": "end"}\n', "unknown kind"),
        (json.dumps(header()) + '\n{"kind": "result"}\n{"kind": "end"}\n', "result without"),
    ],
)
def test_a_file_that_is_not_a_trace_is_refused_with_its_line_and_problem(text, problem):
    with pytest.raises(TraceError, match=problem):
        parse_trace(io.StringIO(text))


def test_a_line_parsed_before_in_another_trace_is_still_refused_in_the_wrong_place():
    """parse_trace keeps the lines it parsed (their fields checked once); where a line
    stands is checked each time."""
    first, end = json.dumps(header()), '{"kind": "end"}'
    assert [r.kind for r in parse_trace([first, end])] == ["header", "end"]
    for lines, problem in [
        ([end], "the first record must be"),
        ([first, first, end], "a second header"),
        ([first, end, end], 'a record after {"kind": "end"}'),
    ]:
        with pytest.raises(TraceError, match=re.escape(problem)) as caught:
            parse_trace(lines)
        assert caught.value.line == len(lines) - (problem == "a second header")


def test_mcpbind_trace_check_on_a_file_that_is_not_a_trace_exits_2(tmp_path):
    path = tmp_path / "bad.ndjson"
    path.write_text("not json\n")
    done = mcpbind("trace", "check", str(path))
    assert done.returncode == 2
    assert "not a trace: line 1: not JSON" in done.stderr


async def test_a_host_run_with_cancels_timeouts_and_a_close_with_a_pending_call_conforms(
    tmp_path,
):
    out = io.StringIO()
    config = HostConfig(
        servers={"s": ServerConfig(target=make_server(tmp_path), tool_timeout_sec=0.2)}
    )
    recorder = TraceRecorder(out, trace_header(config))
    results = []
    async with anyio.create_task_group() as group:
        async with Host.open(config, recorder=recorder) as host:
            step = host.sample()
            names = sorted(step.names)
            slow = next(n for n in names if n.endswith("__slow"))
            echo = next(n for n in names if n.endswith("__echo"))
            results.append(await host.call(step, "c1", echo, {"text": "hi"}))

            async def call(call_id: str, seconds: float) -> None:
                results.append(await host.call(step, call_id, slow, {"seconds": seconds}))

            group.start_soon(call, "c2", 5.0)  # times out
            await anyio.sleep(0.5)
            group.start_soon(call, "c3", 5.0)  # cancelled
            await anyio.sleep(0.05)
            host.cancel("c3")
            group.start_soon(call, "c4", 0.15)  # pending at the close
            await anyio.sleep(0.05)
        recorder.end()
    written = records_of(out.getvalue())
    assert violated(written) == []
    assert refine(parse_trace(lines(written))).violation is None  # SPEC §14.5
    statuses = sorted((r["call_id"], r["status"]) for r in written if r["kind"] == "result")
    assert statuses == [("c1", "ok"), ("c2", "timed_out"), ("c3", "cancelled"), ("c4", "cancelled")]
    kinds = [r["kind"] for r in written]
    assert {"timeout", "cancel", "close"} <= set(kinds)
    validator = jsonschema.Draft202012Validator(schema())
    for record in written:
        validator.validate(record)


def test_traces_written_by_the_library_round_trip_through_a_file(tmp_path):
    path = pathlib.Path(tmp_path) / "empty.ndjson"
    with path.open("w") as out:
        recorder = TraceRecorder(out, trace_header(HostConfig()))
        recorder.end()
        recorder.event("call", {"call_id": "late"})  # after end: nothing
    assert [r["kind"] for r in records_of(path.read_text())] == ["header", "end"]


def test_a_failing_machine_run_carries_the_runtimes_own_trace_up_to_the_failure():
    """SPEC §12.8: a machine failure comes with the runtime's trace, which ``mcpbind
    check`` writes beside the replay file; here a runtime mutant's replay fails."""
    from mcpbind.properties.impl_mutants import impl_mutant
    from mcpbind.properties.lockstep import MachineFailure
    from mcpbind.properties.machines import run_replay

    replays = pathlib.Path(__file__).parent / "replays"
    mutant = impl_mutant("late_answer_becomes_a_result")
    with pytest.raises(MachineFailure) as failure:
        run_replay(replays / f"{mutant.name}.json", seams=mutant.seams)
    records = parse_trace(failure.value.boundary.splitlines())
    assert records[0].kind == "header"
    assert records[-1].kind == "end"
    assert "INV-4" in {v.invariant for v in check_trace(records)}  # the second result


async def test_a_traced_run_with_tasks_conforms_and_shows_each_tasks_cancel(tmp_path):
    """SPEC §8.12 in a trace: a task that completes, and one cancelled with its one
    tasks/cancel (INV-7's signal for a task)."""
    from testservers.tasks_server import build

    out = io.StringIO()
    config = HostConfig(servers={"s": ServerConfig(target=build(tmp_path / "log"))})
    recorder = TraceRecorder(out, trace_header(config))
    async with Host.open(config, recorder=recorder) as host:
        step = host.sample()
        await host.call(step, "c1", "mcp__s__research", {"topic": "x", "stages": 1})
        async with anyio.create_task_group() as group:

            async def slow() -> None:
                await host.call(step, "c2", "mcp__s__research", {"topic": "y", "stages": 999})

            group.start_soon(slow)
            await anyio.sleep(0.3)
            host.cancel("c2")
    recorder.end()
    written = records_of(out.getvalue())
    assert violated(written) == []
    assert refine(parse_trace(lines(written))).violation is None  # SPEC §14.5
    assert [r["call_id"] for r in written if r["kind"] == "task_created"] == ["c1", "c2"]
    assert [r["status"] for r in written if r["kind"] == "task_status"] == ["completed"]
    signals = [(r["method"], r.get("call_id")) for r in written if r["kind"] == "sent"]
    assert ("tasks/cancel", "c2") in signals
    assert ("notifications/cancelled", "c2") not in signals


# --- issue 28: mcpbind's own traces in three situations refine (SPEC §14.5) ---------------


def strict(records: list[dict[str, Any]]) -> tuple[str, int] | None:
    """The first divergence of ``records`` from the model, as ``(id, line)``."""
    violation = refine(parse_trace(lines(records))).violation
    return None if violation is None else (violation.invariant, violation.line)


def spliced(records: list[dict[str, Any]], after: int, *extra: dict[str, Any]):
    return [*records[: after + 1], *extra, *records[after + 1 :]]


async def test_a_traced_run_with_tools_deferred_behind_tool_search_refines(tmp_path):
    """SPEC §11.9, §14.5: a deferring step's ``sample`` says what it ``shown``s; a call of a
    deferred tool is ``unsupported``, ``tool_search`` is a host tool, and a tool it
    discovered is routed in the next step."""
    out = io.StringIO()
    config = HostConfig(
        servers={"s": ServerConfig(target=make_server(tmp_path))}, defer_threshold=2
    )
    recorder = TraceRecorder(out, trace_header(config))
    async with Host.open(config, recorder=recorder) as host:
        step = host.sample()
        assert (await host.call(step, "c1", "mcp__s__echo", {"text": "hi"})).status == "unsupported"
        assert (await host.call(step, "c2", "tool_search", {"query": "echo"})).status == "ok"
        assert (await host.call(step, "c3", "tool_search", {"limit": "x"})).status == "error"
        later = host.sample()
        assert (await host.call(later, "c4", "mcp__s__echo", {"text": "hi"})).status == "ok"
    recorder.end()
    written = records_of(out.getvalue())
    samples = [r for r in written if r["kind"] == "sample"]
    assert [s["shown"] for s in samples] == [["tool_search"], ["mcp__s__echo", "tool_search"]]
    assert violated(written) == []
    assert strict(written) is None
    validator = jsonschema.Draft202012Validator(schema())
    for record in written:
        validator.validate(record)
    path = tmp_path / "deferred.ndjson"
    path.write_text(out.getvalue())
    assert mcpbind("trace", "check", "--strict", str(path)).returncode == 0
    # Tampered: the first step claims to show echo, so the model routes c1 (INV-2) ...
    first = written.index(samples[0])
    shows_echo = [dict(r) for r in written]
    shows_echo[first]["shown"] = ["mcp__s__echo", "tool_search"]
    c1 = next(i for i, r in enumerate(written) if r["kind"] == "result" and r["call_id"] == "c1")
    assert strict(shows_echo) == ("INV-2", c1 + 1)
    # ... and a step that shows a tool its registry state does not hold is no view of it.
    invented = [dict(r) for r in written]
    invented[first]["shown"] = ["mcp__s__nope", "tool_search"]
    assert strict(invented) == ("INV-2", first + 1)


async def test_a_traced_cancel_of_a_call_that_already_ended_refines(tmp_path):
    """SPEC §3.1: a host may cancel a call that ended (or a call_id it never used): nothing
    happens. A cancellation or a second result after it leaves the model."""
    out = io.StringIO()
    config = HostConfig(servers={"s": ServerConfig(target=make_server(tmp_path))})
    recorder = TraceRecorder(out, trace_header(config))
    async with Host.open(config, recorder=recorder) as host:
        step = host.sample()
        assert (await host.call(step, "c1", "mcp__s__echo", {"text": "hi"})).status == "ok"
        host.cancel("c1")
        host.cancel("never-offered")
    recorder.end()
    written = records_of(out.getvalue())
    cancels = [i for i, r in enumerate(written) if r["kind"] == "cancel"]
    assert len(cancels) == 2
    assert violated(written) == []
    assert strict(written) is None
    signal = {"kind": "sent", "server": "s", "method": "notifications/cancelled", "call_id": "c1"}
    assert strict(spliced(written, cancels[0], signal)) == ("INV-7", cancels[0] + 2)
    again = {
        "kind": "result",
        "call_id": "c1",
        "status": "cancelled",
        "text": "call cancelled by the host",
    }
    assert strict(spliced(written, cancels[0], again)) == ("INV-4", cancels[0] + 2)


async def test_a_task_status_that_comes_after_the_host_gave_the_task_up_is_traced_and_dropped():
    """INV-4, SPEC §8.12: the call of a 2025-11-25 task times out, its ``tasks/cancel`` is
    refused with -32602 (the task ended meanwhile): the trace says a task status came for
    the call (``task_status``, not ``call_responded``) and that it was dropped, after the
    call's one result, which waited for the refusal."""
    out = io.StringIO()
    target = StdioServerParameters(command=sys.executable, args=[str(RAW_TASKS_2025)])
    server = ServerConfig(target=target, required=True, tool_timeout_sec=0.3)
    config = HostConfig(servers={"s": server})
    recorder = TraceRecorder(out, trace_header(config))
    async with Host.open(config, recorder=recorder) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__stuck", {})
        assert result.status == "timed_out", result.output
        assert host.statistics().late_dropped == 1
    recorder.end()
    written = records_of(out.getvalue())
    assert [(r["kind"], r.get("method")) for r in written if r.get("call_id") == "c1"] == [
        ("call", None),
        ("sent", "tools/call"),
        ("task_created", None),
        ("timeout", None),
        ("sent", "tasks/cancel"),
        ("task_status", None),  # the refusal: the task had ended
        ("late_dropped", None),
        ("result", None),
    ]


async def test_a_listing_answered_while_the_host_closes_installs_nothing_and_refines():
    """SPEC §11.14 (INV-12): a ``tools/list`` answer that arrives once the host started to
    close is dropped (no ``list_done``, nothing published, no page asked for), as the
    model's ``close`` has it: the refresh ended ``rejected``. Seen against
    server-everything about one run in seven; here the answer is held until the host's
    ``close`` is recorded."""
    server = _GatedListing("gated")

    @server.tool(description="Echo")
    def echo(text: str) -> str:
        return text

    out = io.StringIO()
    config = HostConfig(servers={"s": ServerConfig(target=server)})
    recorder = _ReleaseAtClose(out, trace_header(config), server)
    outcomes = []
    async with anyio.create_task_group() as group, Host.open(config, recorder=recorder) as host:
        server.gate = anyio.Event()

        async def refresh() -> None:
            outcomes.append(await host.refresh("s"))

        group.start_soon(refresh)
        with anyio.fail_after(10):
            while server.waiting == 0:
                await anyio.sleep(0.01)
    recorder.end()
    written = records_of(out.getvalue())
    close = next(i for i, r in enumerate(written) if r["kind"] == "close")
    after = [r["kind"] for r in written[close:]]
    assert "list_done" not in after
    assert "published" not in after
    assert [(o.status, o.kind) for o in outcomes] == [("rejected", "closed")]
    assert violated(written) == []
    assert strict(written) is None
    # What mcpbind wrote before: the listing decided (and installed) after the close.
    done = next(r for r in written if r["kind"] == "list_done")
    assert strict(spliced(written, close, done)) == ("REFINE", close + 2)
    published = {"kind": "published", "generation": 2, "source": "mcp:s", "names": ["mcp__s__echo"]}
    assert strict(spliced(written, close, published)) is not None


class _GatedListing(MCPServer):
    """Its ``tools/list`` waits for ``gate`` while one is set."""

    gate: anyio.Event | None = None
    waiting = 0

    async def list_tools(self) -> list[Any]:
        tools = await super().list_tools()
        if self.gate is not None:
            self.waiting += 1
            await self.gate.wait()
        return tools


class _ReleaseAtClose(TraceRecorder):
    """Releases the server's listing when the host records its ``close``: the answer
    arrives while the host closes."""

    def __init__(self, out: io.StringIO, header: dict[str, Any], server: _GatedListing) -> None:
        super().__init__(out, header)
        self._server = server

    def event(self, kind: Any, fields: Any) -> None:
        super().event(kind, fields)
        if kind == "close" and self._server.gate is not None:
            self._server.gate.set()


class Kinds(NullRecorder):
    """Keeps the kind of every event it is told."""

    def __init__(self) -> None:
        self.kinds: list[str] = []

    def event(self, kind: EventKind, fields: Mapping[str, Any]) -> None:
        self.kinds.append(kind)


class InFrontOfNothing(Kinds):
    """In front of a recorder that keeps nothing: it asks to be spared what is gated."""

    keeps = False


async def test_a_listing_and_a_step_are_reported_only_to_a_recorder_that_may_keep_them():
    """The one gate of trace work (``records``): a recorder that keeps events is told the
    listing and the step; a plain ``NullRecorder``, or one that says it keeps nothing,
    is spared making them, and still told what is not gated (the refresh request)."""
    server = MCPServer("s", log_level="CRITICAL")

    @server.tool()
    def t() -> str:
        return "ok"

    told = {}
    for recorder in (Kinds(), InFrontOfNothing()):
        config = HostConfig(servers={"s": ServerConfig(target=server)})
        async with Host.open(config, recorder=recorder) as host:
            host.sample()
            await host.refresh("s")
        told[type(recorder).__name__] = recorder.kinds
    assert {"list_done", "sample", "refresh_requested"} <= set(told["Kinds"])
    assert "list_done" not in told["InFrontOfNothing"]
    assert "sample" not in told["InFrontOfNothing"]
    assert "refresh_requested" in told["InFrontOfNothing"]
    assert (records(NullRecorder()), records(Kinds()), records(InFrontOfNothing())) == (
        False,
        True,
        False,
    )


def test_a_result_for_a_call_the_host_refused_is_flagged_inv_4():
    """The trace checker counts refusals against calls: a refused call has no result
    (issue 33: counting refusals as ``<< 1`` survived)."""
    refused = {"kind": "refused", "call_id": "c1"}
    ok = {"kind": "result", "call_id": "c1", "status": "ok"}
    assert violated(trace(CALL, refused, ok)) == [("INV-4", 4)]
    assert violated(trace(CALL, refused, CALL, ok)) == []  # the call accepted once more


async def test_the_trace_says_whether_a_server_answered_is_error():
    """``call_responded`` carries the answer's ``isError`` (issue 33: reading any answer
    as an error survived)."""
    from testservers.inproc import fs_server

    out = io.StringIO()
    config = HostConfig(servers={"fs": ServerConfig(target=fs_server())})
    recorder = TraceRecorder(out, trace_header(config))
    async with Host.open(config, recorder=recorder) as host:
        step = host.sample()
        assert (await host.call(step, "c1", "mcp__fs__read", {"path": "a"})).status == "ok"
        assert (await host.call(step, "c2", "mcp__fs__fail", {})).status == "error"
    recorder.end()
    answered = [r for r in records_of(out.getvalue()) if r["kind"] == "call_responded"]
    assert [(r["call_id"], r["is_error"]) for r in answered] == [("c1", False), ("c2", True)]


RAW_TASKS_2025 = pathlib.Path(__file__).parent / "testservers" / "raw_tasks_2025.py"

DEFAULT_OPTIONS = {
    "parallel": False,
    "tool_timeout_sec": 300.0,
    "idle_timeout": False,
    "tool_max_sec": 3600.0,
    "enabled_tools": None,
    "disabled_tools": [],
    "approval": False,
    "lazy": False,
}


@pytest.mark.parametrize(
    ("settings", "has_approver", "changed"),
    [
        ({}, False, {}),
        ({}, True, {"approval": True}),
        ({"default_tools_approval_mode": "prompt"}, False, {"approval": True}),
        ({"tools": {"t": ToolConfig(approval_mode="approve")}}, False, {"approval": True}),
        ({"tools": {"t": ToolConfig(output_byte_limit=100)}}, False, {}),
        ({"supports_parallel_tool_calls": True}, False, {"parallel": True}),
        (
            {"tool_timeout_sec": 2, "idle_timeout": True, "tool_max_sec": 9},
            False,
            {"tool_timeout_sec": 2, "idle_timeout": True, "tool_max_sec": 9},
        ),
        (
            {"enabled_tools": ["b", "a"], "disabled_tools": ["d", "c"]},
            False,
            {"enabled_tools": ["a", "b"], "disabled_tools": ["c", "d"]},
        ),
        ({"startup": "lazy_when_cached"}, False, {"lazy": True}),
    ],
)
def test_a_servers_options_in_the_header_are_its_settings_and_whether_any_call_is_gated(
    settings, has_approver, changed
):
    """SPEC §14.1: ``approval`` is true when an approver is given, or the server or any one
    of its tools sets an approval mode; each other field is the server's setting."""
    server = ServerConfig(target="http://127.0.0.1:1/mcp", **settings)
    assert server_options(server, has_approver=has_approver) == {**DEFAULT_OPTIONS, **changed}


@pytest.mark.parametrize(
    ("report", "record"),
    [
        (
            lambda r: r.published(3, "mcp:s", ("mcp__s__a",)),
            {"kind": "published", "generation": 3, "source": "mcp:s", "names": ["mcp__s__a"]},
        ),
        (
            lambda r: r.refresh_outcome(RefreshOutcome("s", "installed", 2)),
            {"kind": "refresh_outcome", "server": "s", "status": "installed", "generation": 2},
        ),
        (
            lambda r: r.refresh_outcome(
                RefreshOutcome("s", "rejected", 2, kind="invalid", reason="bad")
            ),
            {
                "kind": "refresh_outcome",
                "server": "s",
                "status": "rejected",
                "generation": 2,
                "reject": "invalid",
                "reason": "bad",
            },
        ),
        (
            lambda r: r.refresh_outcome(
                RefreshOutcome(
                    "s", "installed", 2, excluded=(Exclusion("t", "task_required", "why"),)
                )
            ),
            {
                "kind": "refresh_outcome",
                "server": "s",
                "status": "installed",
                "generation": 2,
                "excluded": ["t"],
            },
        ),
        (
            lambda r: r.result(ToolResult("c1", "ok", "out")),
            {"kind": "result", "call_id": "c1", "status": "ok", "text": "out"},
        ),
        (
            lambda r: r.sent("s", "tools/call", "echo", "c1"),
            {
                "kind": "sent",
                "server": "s",
                "method": "tools/call",
                "call_id": "c1",
                "detail": "echo",
            },
        ),
        (
            lambda r: r.sent("s", "tools/list", ""),
            {"kind": "sent", "server": "s", "method": "tools/list"},
        ),
        (
            lambda r: r.sent("s", "notifications/cancelled", "c1"),
            {"kind": "sent", "server": "s", "method": "notifications/cancelled", "call_id": "c1"},
        ),
        (
            lambda r: r.sent("s", "tasks/cancel", "c1", "ignored"),
            {"kind": "sent", "server": "s", "method": "tasks/cancel", "call_id": "c1"},
        ),
        (
            lambda r: r.refused("c1", "why"),
            {"kind": "refused", "call_id": "c1", "text": "why"},
        ),
        (lambda r: r.late_dropped("c1"), {"kind": "late_dropped", "call_id": "c1"}),
        (
            lambda r: r.event("list_changed", {"server": "s"}),
            {"kind": "list_changed", "server": "s"},
        ),
    ],
)
def test_each_report_is_written_as_one_record_stamped_with_the_clock(report, record):
    """SPEC §14.1, §14.6: one JSON line per report, ``at`` from the clock on every record
    but the header and the end; nothing after the end."""
    out = io.StringIO()
    recorder = TraceRecorder(out, {"kind": "header", "x": 1}, clock=lambda: 12.5)
    report(recorder)
    recorder.end()
    report(recorder)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines == [{"kind": "header", "x": 1}, {**record, "at": 12.5}, {"kind": "end"}]


def test_without_a_clock_no_record_is_stamped():
    out = io.StringIO()
    recorder = TraceRecorder(out, {"kind": "header"})
    recorder.late_dropped("c1")
    assert out.getvalue() == '{"kind": "header"}\n{"kind": "late_dropped", "call_id": "c1"}\n'
