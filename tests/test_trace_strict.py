"""Refinement of a trace against the model (issue 18, SPEC §14.5): ``mcpbind trace check
--strict``. mcpbind's own traces are runs of the model; a small edit of a conforming
trace is flagged at its line with the id its divergence belongs to, and a replay file of
the trace's inputs is written that runs against mcpbind's runtime in lockstep."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import attrs
import pytest
from cli_runner import mcpbind

from mcpbind.model import refine as refine_module
from mcpbind.model import trace as trace_module
from mcpbind.model.bounds import describe, load_bound
from mcpbind.model.explore import format_event, replay
from mcpbind.model.mutants import MUTANTS
from mcpbind.model.refine import (
    RECENT,
    RECENT_INPUTS,
    DirectRules,
    NotRefinable,
    RecentRules,
    recent,
    refine,
)
from mcpbind.model.rules import STANDARD
from mcpbind.model.texts import (
    DISCONNECTED,
    DUPLICATE_CALL_ID,
    HOST_CLOSED,
    RECONFIGURED_SENT,
    REMOVED,
    TIMED_OUT_CAP,
)
from mcpbind.model.trace import FIELD_TYPES, TraceError, check_trace, merge_traces, parse_trace
from mcpbind.model.values import ListDone, ListPage
from mcpbind.properties.machines import lockstep_bound, run_replay


def lines(records: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(r) for r in records]


def refined(records: list[dict[str, Any]]) -> tuple[str, int] | None:
    """The divergence (id, line), or None when the trace is a run of the model."""
    violation = refine(parse_trace(lines(records))).violation
    return None if violation is None else (violation.invariant, violation.line)


HEADER = {
    "kind": "header",
    "format": "mcpbind-trace/1",
    "policy": "revalidate",
    "servers": ["s"],
    "server_options": {"s": {"tool_timeout_sec": 10.0}},
    "builtins": [],
    "extensions": {},
    "max_name_length": 64,
    "host": {"name": "other", "version": "1"},
}
LISTED = [
    {"kind": "sent", "server": "s", "method": "tools/list"},
    {"kind": "list_done", "server": "s", "tools": ["t", {"name": "r", "read_only": True}]},
    {"kind": "published", "generation": 1, "source": "mcp:s", "names": ["mcp__s__r", "mcp__s__t"]},
    {"kind": "refresh_outcome", "server": "s", "status": "installed", "generation": 1},
    {"kind": "sample", "step": 0},
]
CALL = {"kind": "call", "step": 0, "call_id": "a", "name": "mcp__s__t"}
SENT = {"kind": "sent", "server": "s", "method": "tools/call", "call_id": "a", "detail": "t"}
SIGNAL = {"kind": "sent", "server": "s", "method": "notifications/cancelled", "call_id": "a"}
CLOSE = [{"kind": "close"}, {"kind": "sent", "server": "s", "method": "close"}]
END = {"kind": "end"}

ANSWERED = [
    HEADER,
    *LISTED,
    CALL,
    SENT,
    {"kind": "call_responded", "call_id": "a"},
    {"kind": "result", "call_id": "a", "status": "ok", "text": "whatever the server said"},
    *CLOSE,
    END,
]
CANCELLED = [
    HEADER,
    *LISTED,
    CALL,
    SENT,
    {"kind": "cancel", "call_id": "a"},
    SIGNAL,
    {"kind": "result", "call_id": "a", "status": "cancelled", "text": "call cancelled by the host"},
    {"kind": "call_responded", "call_id": "a"},
    {"kind": "late_dropped", "call_id": "a"},
    *CLOSE,
    END,
]

READ = {"kind": "call", "step": 0, "call_id": "b", "name": "mcp__s__r"}
SENT_READ = {**SENT, "call_id": "b", "detail": "r"}
LISTING = {"kind": "sent", "server": "s", "method": "tools/list"}
RELISTED = [
    LISTING,
    {"kind": "list_done", "server": "s", "tools": ["t", {"name": "r", "read_only": True}]},
    {"kind": "refresh_outcome", "server": "s", "status": "unchanged", "generation": 1},
]
#: SPEC §8.13: the session expires under ``a``; ``b``, in flight on it, fails; ``a`` is sent
#: once more after the new session's first listing.
EXPIRED = [
    HEADER,
    *LISTED,
    CALL,
    SENT,
    READ,
    SENT_READ,
    {"kind": "session_expired", "call_id": "a"},
    {"kind": "result", "call_id": "b", "status": "failed", "text": DISCONNECTED.format(server="s")},
    *RELISTED,
    SENT,
    {"kind": "call_responded", "call_id": "a"},
    {"kind": "result", "call_id": "a", "status": "ok"},
    *CLOSE,
    END,
]
#: SPEC §5.7: the server ends its list_changed stream; the host listens again and refreshes.
RELISTENED = [
    HEADER,
    *LISTED,
    {"kind": "stream_ended", "server": "s"},
    {"kind": "relisten", "server": "s"},
    *RELISTED,
    *CLOSE,
    END,
]


def test_hand_written_runs_of_the_model_refine_it():
    assert refined(ANSWERED) is None
    assert refined(CANCELLED) is None
    assert refined(EXPIRED) is None
    assert refined(RELISTENED) is None


#: SPEC §3.1: a listing read in pages: each page with more to come is a ``list_page`` and a
#: ``tools/list`` for the next (its cursor); the model does not know how many pages the
#: server has, so the refiner lets the listing being read have more.
PAGE = [
    {"kind": "list_page", "server": "s"},
    {"kind": "sent", "server": "s", "method": "tools/list", "detail": "cursor"},
]
PAGED = [HEADER, LISTED[0], *PAGE, *LISTED[1:], *CLOSE, END]
#: ... and a second version of the catalog, announced and read in three pages.
RELISTED_IN_PAGES = [
    HEADER,
    *LISTED,
    {"kind": "list_changed", "server": "s"},
    LISTING,
    *PAGE,
    *PAGE,
    {"kind": "list_done", "server": "s", "tools": ["t"]},
    {"kind": "published", "generation": 2, "source": "mcp:s", "names": ["mcp__s__t"]},
    {"kind": "refresh_outcome", "server": "s", "status": "installed", "generation": 2},
    *CLOSE,
    END,
]


def test_listings_read_page_by_page_refine_it_the_first_and_a_later_version():
    """The refiner gives the listing being read room for more pages, also for a version
    of the catalog the trace has not listed yet (issue 33: no test the mutation run
    chooses read a paged listing)."""
    assert refined(PAGED) is None
    assert refined(RELISTED_IN_PAGES) is None
    assert refined([HEADER, LISTED[0], PAGE[0], *LISTED[1:], *CLOSE, END]) is not None


def edit(records: list[dict[str, Any]], at: int, **changes: Any) -> list[dict[str, Any]]:
    edited = [dict(r) for r in records]
    edited[at].update(changes)
    return edited


def without(records: list[dict[str, Any]], at: int) -> list[dict[str, Any]]:
    return records[:at] + records[at + 1 :]


def index(records: list[dict[str, Any]], record: dict[str, Any]) -> int:
    return records.index(record)


RESULT = 9  # ANSWERED's result line, 0-based
#: An edit of a conforming trace, the id its divergence is named after, and its line.
DIVERGENT = {
    "a result in another status": (edit(ANSWERED, RESULT, status="failed"), "REFINE", 10),
    "a publication of other names": (edit(ANSWERED, 3, names=["mcp__s__x"]), "INV-3", 4),
    "a publication out of step": (edit(ANSWERED, 3, generation=2), "INV-1", 4),
    "a tools/call never sent": (without(ANSWERED, 7), "INV-2", 8),
    "a tools/call never sent nor answered": ([HEADER, *LISTED, CALL, END], "INV-2", 8),
    "the wrong tool sent": (edit(ANSWERED, 7, detail="r"), "INV-2", 8),
    "a cancellation never sent": (without(CANCELLED, index(CANCELLED, SIGNAL)), "INV-7", 12),
    "a second cancellation": (
        [*CANCELLED[:11], SIGNAL, *CANCELLED[11:]],
        "INV-7",
        12,
    ),
    "a late answer made a result": (
        edit(CANCELLED, 12, kind="result", status="ok"),
        "INV-4",
        13,
    ),
    "an answer to a call never made": (
        [HEADER, *LISTED, {"kind": "call_responded", "call_id": "a"}, *CLOSE, END],
        "REFINE",
        7,
    ),
    "a call resent at once after its session expired": (
        [*EXPIRED[:12], SENT, *EXPIRED[12:15], *EXPIRED[16:]],
        "INV-14",
        13,
    ),
    "a call in flight at an expiry answered": (
        edit(EXPIRED, 11, status="ok", text="an answer from the lost session"),
        "INV-14",
        12,
    ),
    "no listing after a relisten": ([*RELISTENED[:8], *CLOSE, END], "LIVE-3", 11),
    "a call refused unrun resent before the refresh it waits for": (
        [*ANSWERED[:8], {"kind": "call_rejected", "call_id": "a"}, SENT, *CLOSE, END],
        "INV-13",
        10,
    ),
    "a call after close accepted": (
        [
            *ANSWERED[:-1],
            {**CALL, "call_id": "b"},
            {"kind": "result", "call_id": "b", "status": "unsupported"},
            END,
        ],
        "INV-12",
        len(ANSWERED) + 1,
    ),
}


@pytest.mark.parametrize("case", sorted(DIVERGENT))
def test_a_trace_that_leaves_the_model_is_flagged_at_its_line_with_the_id(case):
    records, invariant, line = DIVERGENT[case]
    assert refined(records) == (invariant, line)


@pytest.mark.parametrize(
    "answer",
    [
        {"kind": "call_responded", "call_id": "a"},
        {"kind": "call_failed", "call_id": "a", "why": "reset"},
        {"kind": "call_rejected", "call_id": "a"},
        {"kind": "session_expired", "call_id": "a"},
        {"kind": "task_created", "call_id": "a"},
        {"kind": "progress", "call_id": "a"},
    ],
    ids=lambda answer: answer["kind"],
)
def test_a_calls_answer_recorded_before_its_request_is_flagged_at_the_answer(answer):
    """SPEC §14.5: a call's answer (or its failure, its refusal unrun, a task, progress)
    never comes before its ``tools/call``: recorded first, it is flagged there, named
    after the request the model sends first (a review of issue 33: the model's send
    names no call, and the swapped pair refined)."""
    swapped = [HEADER, *LISTED, CALL, answer, SENT, END]
    violation = refine(parse_trace(lines(swapped))).violation
    assert violation is not None
    fields = {k: v for k, v in answer.items() if k != "kind"}
    assert str(violation) == (
        "INV-2 at line 8: expected first ('sent', 's', 'tools/call', 't'), which the model "
        f"sends before its answer; seen {answer['kind']} {fields}"
    )


def test_a_request_names_its_call_so_an_answer_waits_for_its_own():
    """SPEC §14.5: two calls of one tool, the second's request recorded first: the first's
    answer still waits for the first's request; a request with no ``call_id`` stands for
    the oldest call of that tool whose request the trace has not shown."""
    answered = [{"kind": "call_responded", "call_id": c} for c in ("a", "b")]
    results = [{"kind": "result", "call_id": c, "status": "ok"} for c in ("a", "b")]
    calls = [{**READ, "call_id": c} for c in ("a", "b")]
    sent_a, sent_b = ({**SENT_READ, "call_id": c} for c in ("a", "b"))
    ok = [HEADER, *LISTED, *calls, sent_b, sent_a, answered[0], results[0], answered[1]]
    ok += [results[1], END]
    assert refined(ok) is None
    early = [HEADER, *LISTED, *calls, sent_b, answered[0], sent_a, *ok[11:]]
    assert refined(early) == ("INV-2", 10)
    unnamed = [
        {k: v for k, v in r.items() if k != "call_id"} if r is sent_a or r is sent_b else r
        for r in ok
    ]
    assert refined(unnamed) is None


def test_a_listing_answered_before_it_was_sent_is_flagged_at_the_answer():
    """SPEC §14.5: an output may come after later inputs, but an answer never before its
    request: the first ``list_done`` recorded before the ``tools/list`` it answers is
    flagged there, with the request the model sends first (a review of issue 33: the
    swapped pair refined)."""
    swapped = [HEADER, LISTED[1], LISTED[0], *ANSWERED[3:]]
    violation = refine(parse_trace(lines(swapped))).violation
    assert violation is not None
    assert str(violation) == (
        "LIVE-2 at line 2: expected first ('sent', 's', 'tools/list', ''), which the model "
        "sends before its answer; seen list_done {'server': 's', 'tools': ['t', {'name': "
        "'r', 'read_only': True}]}"
    )
    last_page_first = [HEADER, LISTED[0], PAGE[0], LISTED[1], PAGE[1], *LISTED[2:], *CLOSE, END]
    assert refined(PAGED) is None
    assert refined(last_page_first) == ("LIVE-2", 4)  # before the next page's request


@pytest.mark.parametrize("status", ["ok", "error"])
def test_a_host_tools_answer_refines_whatever_its_handler_said(status):
    """A call of a host tool (the header's ``builtins``) runs its handler in the host: the
    model says only that it answered, so an ``ok`` or ``error`` result with any text is a
    run of the model (issue 33: ``_loosen``'s status test negated survived)."""
    host = {**HEADER, "builtins": ["ask"]}
    call = {"kind": "call", "step": 0, "call_id": "h", "name": "ask"}
    answer = {"kind": "result", "call_id": "h", "status": status, "text": "the handler's text"}
    assert refined([host, *LISTED, call, answer, *CLOSE, END]) is None


def test_a_conforming_trace_refines_with_a_replay_bound_counting_its_steps_and_calls():
    """SPEC §14.5: the replay's bound holds the trace's one step and one call, no gating
    (issue 33: the gating test's ``and`` made ``or`` left every ungated trace without a
    bound)."""
    for records in (ANSWERED, [HEADER, *LISTED, CALL, SENT, END]):  # ended; still out
        bound = refine(parse_trace(lines(records))).bound
        assert bound is not None
        assert (bound.max_steps, bound.max_calls, bound.approval) == (1, 1, False)


def test_strict_writes_a_replay_file_that_runs_against_the_runtime_in_lockstep(tmp_path):
    records, _, line = DIVERGENT["a result in another status"]
    path = tmp_path / "peer.ndjson"
    path.write_text("\n".join(lines(records)) + "\n")
    done = mcpbind("trace", "check", str(path), "--strict", "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["strict"]["conforms"] is False
    assert ("REFINE", line) in [(v["invariant"], v["line"]) for v in report["violations"]]
    replay = pathlib.Path(report["strict"]["replay_file"])
    assert replay == tmp_path / "peer.ndjson.replay.json"
    data = json.loads(replay.read_text())
    assert data["line"] == line
    assert data["events"] == [
        "list_done(server='s')",
        "sample()",
        "call(step=0, call_id='c1', name='mcp__s__t', arguments_ok=True)",
        "call_responded(call_id='c1', is_error=False)",
    ]
    # The same inputs, given to mcpbind's runtime and the model side by side (SPEC §12.2):
    # mcpbind does what the model says.
    assert len(run_replay(replay)) == 4


def test_a_header_without_server_options_cannot_be_refined_and_exits_2(tmp_path):
    header = {k: v for k, v in HEADER.items() if k != "server_options"}
    with pytest.raises(NotRefinable, match="server_options"):
        refine(parse_trace(lines([header, END])))
    path = tmp_path / "t.ndjson"
    path.write_text("\n".join(lines([header, END])) + "\n")
    done = mcpbind("trace", "check", str(path), "--strict")
    assert done.returncode == 2
    assert 'cannot refine: line 1: the header has no "server_options"' in done.stderr


def test_a_lazily_started_server_is_not_refined():
    header = {**HEADER, "server_options": {"s": {"lazy": True}}}
    with pytest.raises(NotRefinable, match="starts lazily"):
        refine(parse_trace(lines([header, END])))


def test_a_header_server_no_record_names_never_started_and_is_not_refined():
    """SPEC §14.5: the model starts every server, so a trace whose header names a server
    that no record mentions (it failed at once) is not refined, naming it; the rest of
    the trace conforms (issue 33: the loop over the header's servers made to run zero
    times survived: only the command line's test, skipped by the mutation run, saw it)."""
    header = {
        **HEADER,
        "servers": ["s", "dead"],
        "server_options": {**HEADER["server_options"], "dead": {}},
    }
    with pytest.raises(NotRefinable, match="server 'dead' never started"):
        refine(parse_trace(lines([header, *ANSWERED[1:]])))
    assert refined(ANSWERED) is None


def test_a_field_the_trace_leaves_out_is_tried_both_ways():
    """Whether a call's arguments were a JSON object is not in the trace: both are
    tried, and the outputs decide (the set of states of SPEC §14.5)."""
    bad = [
        HEADER,
        *LISTED,
        CALL,
        {"kind": "result", "call_id": "a", "status": "error", "text": "invalid arguments for x"},
        *CLOSE,
        END,
    ]
    bad[-4]["text"] = "invalid arguments for mcp__s__t: not a JSON object"
    assert refined(bad) is None
    report = refine(parse_trace(lines(ANSWERED)))
    assert report.most_states == 2


def test_an_output_no_way_of_taking_the_trace_owes_is_explained_by_the_first_way():
    """After a call the trace leaves two ways open (its arguments an object or not), an
    output neither owes is flagged with what the first owes, the ``tools/call``, the
    same way as the rest of the report (issue 33: the explanation taken from the last
    way, which owes an error result, survived)."""
    records = [HEADER, *LISTED, CALL, {"kind": "result", "call_id": "a", "status": "ok"}]
    violation = refine(parse_trace(lines([*records, *CLOSE, END]))).violation
    assert violation is not None
    assert (violation.invariant, violation.line) == ("REFINE", 8)
    assert (
        violation.expected
        == "one of the outputs the model owes: [('sent', 's', 'tools/call', 't')]"
    )


def test_a_call_ended_in_one_way_of_taking_a_field_is_not_reused_in_another():
    """Refinement sets calls that ended aside (a long trace stays linear); a call that one
    candidate ended (its arguments taken as bad) is still new to the others."""
    b = {**CALL, "call_id": "b"}
    records = [
        HEADER,
        *LISTED,
        CALL,
        b,
        SENT,
        {"kind": "call_responded", "call_id": "a"},
        {"kind": "result", "call_id": "a", "status": "ok"},
        {**SENT, "call_id": "b"},
        {"kind": "call_responded", "call_id": "b"},
        {"kind": "result", "call_id": "b", "status": "ok"},
        *CLOSE,
        END,
    ]
    assert refined(records) is None
    again = [*records[:-3], {**CALL, "call_id": "a"}, *records[-3:]]  # a reused after it ended
    exact = {"kind": "refused", "call_id": "a", "text": DUPLICATE_CALL_ID.format(call_id="a")}
    assert refined([*again[:-3], exact, *again[-3:]]) is None  # the model refuses it
    other = {**exact, "text": "call_id 'a' was already used"}
    assert refined([*again[:-3], other, *again[-3:]]) == ("INV-4", len(again) - 2)


# --- a reconfiguration (SPEC §3.7, §14.1) --------------------------------------------------

RECONFIGURED = [
    {**HEADER, "policy": "frozen", "servers": ["s", "x"], "server_options": {"s": {}, "x": {}}},
    {"kind": "sent", "server": "s", "method": "tools/list"},
    {"kind": "sent", "server": "x", "method": "tools/list"},
    {"kind": "list_done", "server": "s", "tools": ["t"]},
    {"kind": "published", "generation": 1, "source": "mcp:s", "names": ["mcp__s__t"]},
    {"kind": "refresh_outcome", "server": "s", "status": "installed", "generation": 1},
    {"kind": "list_done", "server": "x", "tools": ["u"]},
    {"kind": "published", "generation": 2, "source": "mcp:x", "names": ["mcp__x__u"]},
    {"kind": "refresh_outcome", "server": "x", "status": "installed", "generation": 2},
    {"kind": "sample", "step": 0},
    {"kind": "call", "step": 0, "call_id": "a", "name": "mcp__x__u"},
    {"kind": "sent", "server": "x", "method": "tools/call", "call_id": "a", "detail": "u"},
    # x removed (its call in flight cancelled, its catalog emptied), s replaced, y added
    {"kind": "reconfigure", "added": ["y"], "removed": ["x"], "changed": ["s"]},
    {
        "kind": "result",
        "call_id": "a",
        "status": "cancelled",
        "text": RECONFIGURED_SENT.format(how="removed", server="x"),
    },
    {"kind": "sent", "server": "x", "method": "notifications/cancelled", "call_id": "a"},
    {"kind": "published", "generation": 3, "source": "mcp:x", "names": []},
    {"kind": "sent", "server": "x", "method": "close"},
    {"kind": "sent", "server": "s", "method": "close"},
    {"kind": "sent", "server": "s", "method": "tools/list"},
    {"kind": "sent", "server": "y", "method": "tools/list"},
    # frozen: a call of the step pinned before waits for s's replacement, then goes to it
    {"kind": "call", "step": 0, "call_id": "b", "name": "mcp__s__t"},
    {"kind": "list_done", "server": "s", "tools": ["t", "w"]},
    {"kind": "published", "generation": 4, "source": "mcp:s", "names": ["mcp__s__t", "mcp__s__w"]},
    {"kind": "refresh_outcome", "server": "s", "status": "installed", "generation": 4},
    {"kind": "sent", "server": "s", "method": "tools/call", "call_id": "b", "detail": "t"},
    {"kind": "call_responded", "call_id": "b"},
    {"kind": "result", "call_id": "b", "status": "ok"},
    {"kind": "list_done", "server": "y", "tools": ["t"]},
    {"kind": "published", "generation": 5, "source": "mcp:y", "names": ["mcp__y__t"]},
    {"kind": "refresh_outcome", "server": "y", "status": "installed", "generation": 5},
    # ... but not to the removed x: unavailable, nothing sent
    {"kind": "call", "step": 0, "call_id": "c", "name": "mcp__x__u"},
    {
        "kind": "result",
        "call_id": "c",
        "status": "unavailable",
        "text": REMOVED.format(name="mcp__x__u", server="x"),
    },
    {"kind": "close"},
    {"kind": "sent", "server": "s", "method": "close"},
    {"kind": "sent", "server": "y", "method": "close"},
    END,
]


def edited(records: list[dict[str, Any]], line: int, **changes: Any) -> list[dict[str, Any]]:
    """``records`` with the record on (1-based) ``line`` changed; ``None`` drops a field."""
    record = {**records[line - 1], **changes}
    return [*records[: line - 1], record, *records[line:]]


def test_a_reconfiguration_refines_the_model_and_its_replay_holds():
    """SPEC §3.7: the reconfigure record names the servers added, removed and changed; its
    publications share one generation (INV-1); a changed server's listings after it are
    its replacement's; the replay bound carries both, through describe and back."""
    refinement = refine(parse_trace(lines(RECONFIGURED)))
    assert refinement.violation is None
    assert check_trace(parse_trace(lines(RECONFIGURED))) == []
    assert refinement.bound is not None
    bound = load_bound(describe(refinement.bound))
    assert [(s.name, s.change) for s in bound.servers] == [
        ("s", "changed"),
        ("x", "removed"),
        ("y", "added"),
    ]
    assert len(bound.servers[0].replacement[0][0]) == 2
    assert replay(bound, refinement.events) == []


@pytest.mark.parametrize(
    ("line", "changes", "expected"),
    [
        # the removal in a generation of its own: the monitors and refinement say INV-1
        pytest.param(16, {"generation": 4}, "INV-1", id="removal-in-its-own-generation"),
        # a call in flight on the removed server ends otherwise than cancelled (INV-16)
        pytest.param(14, {"status": "failed"}, "INV-16", id="not-cancelled"),
    ],
)
def test_a_reconfiguration_that_leaves_the_model_is_flagged(
    line: int, changes: dict[str, Any], expected: str
):
    records = edited(RECONFIGURED, line, **changes)
    assert expected in {v.invariant for v in check_trace(parse_trace(lines(records)))}
    assert refined(records) is not None


def test_nothing_may_reach_a_removed_server_after_its_close():
    """INV-16: the monitors flag a message to a removed server after its session closed;
    refinement blames the same id for a message the model never sends to an absent one."""
    after_close = {"kind": "sent", "server": "x", "method": "tools/list"}
    records = [*RECONFIGURED[:17], after_close, *RECONFIGURED[17:]]
    found = check_trace(parse_trace(lines(records)))
    assert [(v.invariant, v.line) for v in found if v.invariant == "INV-16"] == [("INV-16", 18)]
    assert refined(records) == ("INV-16", 18)


def test_a_second_reconfiguration_is_not_refined():
    again = {"kind": "reconfigure", "added": [], "removed": [], "changed": ["y"]}
    records = [*RECONFIGURED[:-5], again, *RECONFIGURED[-5:]]
    with pytest.raises(NotRefinable, match="a second reconfigure"):
        refine(parse_trace(lines(records)))


REFUSED_AFTER_CLOSE = {"kind": "refused", "call_id": "b", "text": HOST_CLOSED}


@pytest.mark.parametrize("step", [0, 1, 7])
def test_a_call_after_close_is_refused_whatever_step_it_names(step):
    """SPEC §3.1, INV-12: after close the model refuses every call, so the step a call
    names does not matter, even one no sample made (issue 33: the refiner dropped a
    call naming a step out of range after a close when ``not state.closed`` lost its
    ``not``)."""
    call = {**CALL, "call_id": "b", "step": step}
    records = [*ANSWERED[:-1], call, REFUSED_AFTER_CLOSE, END]
    assert refined(records) is None


@pytest.mark.parametrize(
    ("records", "kind"),
    [(ANSWERED, "call_responded"), (CANCELLED, "cancel")],
    ids=["call_responded", "cancel"],
)
def test_an_input_about_a_call_that_also_names_its_server_is_still_that_input(records, kind):
    """SPEC §14.1: unknown fields are allowed, so a host may add ``server`` to a record
    about one call; it is still the call's answer or cancel, not an input about the server
    (issue 33: any record naming a known server taken as ``relisten`` survived)."""
    named = [{**r, "server": "s"} if r["kind"] == kind else r for r in records]
    assert named != records
    assert refined(named) is None


REUSED = {"kind": "refused", "call_id": "a", "text": DUPLICATE_CALL_ID.format(call_id="a")}


@pytest.mark.parametrize(
    ("records", "refused"),
    [
        ([*ANSWERED[:-1], {**CALL, "call_id": "b"}, REFUSED_AFTER_CLOSE, END], "c2"),
        ([*ANSWERED[:-3], CALL, REUSED, *ANSWERED[-3:]], "c1"),
    ],
    ids=["after-close", "reused-call-id"],
)
def test_a_refused_call_is_replayed_as_the_explorers_call_of_the_last_step_sampled(
    records, refused
):
    """SPEC §14.5: the replay names a call refused after close, or under a call_id already
    used, as the explorer offers it: an unknown tool called in the last step sampled
    (step 0 of the one ``sample``), and the replay runs under the explorer's guards
    (issue 33: that step counted one past the last, ``len - 1`` made ``+ 1``, survived)."""
    refinement = refine(parse_trace(lines(records)))
    assert refinement.violation is None
    calls = [format_event(e) for e in refinement.events if e.kind == "call"]
    assert calls[-1] == f"call(step=0, call_id='{refused}', name='no_such_tool', arguments_ok=True)"
    assert refinement.bound is not None
    assert replay(refinement.bound, refinement.events) == []


@pytest.mark.parametrize("step", [1, 7])
def test_a_call_naming_a_step_no_sample_made_is_flagged_before_close(step):
    """A call of the one step 0 that names step 1 (the next, not yet sampled), a later
    one or a negative one is no call of the model: flagged at the call, and the checker
    neither crashes nor takes it as a call of another step."""
    records = edit(ANSWERED, index(ANSWERED, CALL), step=step)
    assert refined(records) == ("REFINE", index(ANSWERED, CALL) + 1)


def test_kept_answers_of_the_rules_are_told_apart_by_the_bound():
    """Refinement and the lockstep machine keep the rules' answers for the states they
    meet (``RecentRules``); a state's equality leaves its bound out, so two equal states
    whose bounds differ (a one-page listing where the other has two) get their own."""
    bound = lockstep_bound("revalidate")
    two_pages = STANDARD.initial(bound).state
    spec = two_pages.bound.servers[0]
    one_page = attrs.evolve(spec, versions=((spec.versions[0][0],), *spec.versions[1:]))
    single = attrs.evolve(bound, servers=(one_page, *bound.servers[1:]))
    one_page_state = attrs.evolve(two_pages, bound=single)
    assert one_page_state == two_pages
    kept = RecentRules(STANDARD)
    for state in (two_pages, one_page_state, two_pages):
        assert kept.enabled(state) == tuple(STANDARD.enabled(state))
        for event in kept.enabled(state):
            assert kept.allows(state, event)
            assert kept.apply(state, event) == STANDARD.apply(state, event)
    assert ListPage(spec.name) in kept.enabled(two_pages)
    assert ListDone(spec.name) in kept.enabled(one_page_state)
    assert not kept.allows(one_page_state, ListPage(spec.name))


def test_a_mutant_of_the_rules_is_refined_with_answers_of_its_own():
    assert recent(STANDARD) is RECENT
    mutant = MUTANTS[0]
    assert recent(mutant) is not RECENT
    assert recent(mutant).rules is mutant


def answered_in_turn(calls: int) -> list[dict[str, Any]]:
    """One step and ``calls`` calls of ``mcp__s__t``, each answered before the next."""
    records = [HEADER, *LISTED]
    for i in range(calls):
        call_id = f"a{i}"
        records += [
            {**CALL, "call_id": call_id},
            {**SENT, "call_id": call_id},
            {"kind": "call_responded", "call_id": call_id},
            {"kind": "result", "call_id": call_id, "status": "ok"},
        ]
    return [*records, *CLOSE, END]


def test_a_long_trace_keeps_no_answers_past_its_first_inputs_and_still_diverges_there():
    """SPEC §14.5 (cost linear in the trace): only a trace's first ``RECENT_INPUTS`` inputs
    ask the kept answers (runs share their first events, not their later ones); past them
    the rules are asked directly, and a divergence there is still found, on its line."""
    assert RECENT_INPUTS == 128  # the figure SPEC §14.5 gives
    calls = RECENT_INPUTS  # two inputs per call: half of them past the first inputs
    records = answered_in_turn(calls)
    kept = []
    for trace in (records, answered_in_turn(4 * calls)):
        RECENT.clear()
        assert refined(trace) is None
        kept.append(RECENT.statistics())
    assert kept[0] == kept[1]
    assert kept[0].applied > 0
    late = max(i for i, r in enumerate(records) if r["kind"] == "result")
    assert refined(edit(records, late, status="failed")) == ("REFINE", late + 1)
    sent = late - 2
    assert refined(edit(records, sent, detail="r")) == ("INV-2", sent + 1)


def test_the_direct_rules_answer_as_the_kept_ones_do():
    """``DirectRules`` (a long trace's later inputs) and ``RecentRules`` give the same
    answers on every state of a lockstep bound's first events."""
    bound = lockstep_bound("revalidate")
    direct, kept = DirectRules(STANDARD), RecentRules(STANDARD)
    assert direct.initial(bound) == kept.initial(bound)
    state = direct.initial(bound).state
    for taken in range(8):
        events = direct.enabled(state)
        assert events == kept.enabled(state)
        assert events
        for event in events:
            assert direct.allows(state, event)
            assert kept.allows(state, event)
            assert direct.apply(state, event) == kept.apply(state, event)
        refused = [e for e in kept.enabled(direct.initial(bound).state) if e not in events]
        for event in refused:
            assert not direct.allows(state, event)
        state = direct.apply(state, events[taken % (len(events) - 1)]).state  # not close


BAD_FIELDS = [
    ("call_id", ["a"], "call with a 'call_id' that is not a string: [\"a\"]"),
    ("call_id", 7, "call with a 'call_id' that is not a string: 7"),
    ("name", None, "call with a 'name' that is not a string: null"),
    ("step", -1, "call with a 'step' that is not an integer >= 0: -1"),
    ("step", "0", "call with a 'step' that is not an integer >= 0: \"0\""),
    ("step", True, "call with a 'step' that is not an integer >= 0: true"),
    ("step", 0.5, "call with a 'step' that is not an integer >= 0: 0.5"),
    ("arguments_ok", 1, "call with a 'arguments_ok' that is not true or false: 1"),
    ("server", {"s": 1}, "call with a 'server' that is not a string: {\"s\": 1}"),
    ("at", "now", "call with a 'at' that is not a number: \"now\""),
    ("names", ["a", 1], "call with a 'names' that is not a list of strings: [\"a\", 1]"),
    ("text", 3, "call with a 'text' that is not a string or null: 3"),
    ("request_id", 1.5, "call with a 'request_id' that is not a string or an integer: 1.5"),
]


@pytest.mark.parametrize(
    ("field", "value", "problem"), BAD_FIELDS, ids=[f"{f}={v!r}" for f, v, _ in BAD_FIELDS]
)
def test_a_field_of_another_type_than_the_schema_gives_is_no_trace(field, value, problem):
    """SPEC §14.1: a record whose field has another type than the trace format's schema
    gives is refused on its line, with the field and the value (a ``call_id`` that is a
    list was a traceback out of ``mcpbind trace check``)."""
    line = index(ANSWERED, CALL)
    records = [*ANSWERED[:line], {**ANSWERED[line], field: value}, *ANSWERED[line + 1 :]]
    with pytest.raises(TraceError) as caught:
        parse_trace(lines(records))
    assert str(caught.value) == f"line {line + 1}: {problem}"


@pytest.mark.parametrize("value", [None, "a string", 3])
def test_a_field_of_the_type_the_schema_gives_is_a_record(value):
    """The other side of the type check: ``text`` may be a string or null, ``request_id``
    a string or an integer, ``at`` an integer or a float; a boolean is no integer."""
    line = index(ANSWERED, CALL)
    changes = {"at": 3 if value == 3 else 2.5, "request_id": value if value else 1}
    if value != 3:
        changes["text"] = value
    records = [*ANSWERED[:line], {**ANSWERED[line], **changes}, *ANSWERED[line + 1 :]]
    assert parse_trace(lines(records))[line].get("at") == changes["at"]


def test_the_field_types_are_those_of_the_trace_schema():
    """``FIELD_TYPES`` names every field the schema gives a plain type to, with that type."""
    schema = json.loads(
        (pathlib.Path(trace_module.__file__).parent / "trace-schema.json").read_text()
    )
    plain = {"string": str, "integer": int, "boolean": bool, "null": type(None), "number": float}
    expected = {}
    for field, spec in schema["properties"].items():
        kinds = spec.get("type")
        if kinds is None or kinds == "object":
            continue
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if kinds == ["array"]:
            if spec["items"] == {"type": "string"}:
                expected[field] = (list,)
            continue
        expected[field] = tuple(plain[k] for k in kinds)
    given = {
        f: tuple(int if t is int and f == "at" else t for t in types)
        for f, (_, types) in FIELD_TYPES.items()
    }
    given["at"] = (float,)
    assert given == expected


def swapped(records: list[dict[str, Any]], at: int) -> list[dict[str, Any]]:
    """``records`` with the record at (0-based) ``at`` and the next one swapped."""
    return [*records[:at], records[at + 1], records[at], *records[at + 2 :]]


DISCONNECTED_FIRST = [
    HEADER,
    *LISTED,
    CALL,
    {"kind": "disconnect", "server": "s"},
    SENT,
    {"kind": "result", "call_id": "a", "status": "failed", "text": DISCONNECTED.format(server="s")},
    END,
]
#: Traces on which the monitors and refinement once disagreed (a review of issue 33), each
#: with what ``check_trace`` reports and what refinement does: they agree on the id, and
#: refinement's line is where the trace first left the model (SPEC §14.2, §14.5).
AGREED: dict[str, tuple[list[dict[str, Any]], list[tuple[str, int]], tuple[str, int]]] = {
    "a publication after its refresh's outcome": (
        swapped(ANSWERED, 3),
        [("INV-3", 5)],
        ("INV-3", 4),
    ),
    "a result made before the close, shown after it": (
        swapped(ANSWERED, RESULT),
        [("INV-12", 11)],
        ("INV-12", 11),
    ),
    "a tools/call sent after its server's disconnect": (
        DISCONNECTED_FIRST,
        [("INV-8", 9)],
        ("INV-8", 9),
    ),
    "a tools/call sent after its server's removal": (
        swapped(RECONFIGURED, 11),
        [("INV-16", 13)],
        ("INV-16", 13),
    ),
    "an answer before its tools/call (no monitor sees it)": (
        swapped(ANSWERED, 7),
        [],
        ("INV-2", 8),
    ),
}


@pytest.mark.parametrize("case", list(AGREED))
def test_the_monitors_and_refinement_name_one_id_for_each_kind_of_trace_they_once_split_on(case):
    """SPEC §14.5: a publication after its outcome (INV-3), a result after the close
    (INV-12), a request after its server's disconnect (INV-8) or removal (INV-16): the
    monitors flag them, and refinement, which took any order of owed outputs, does too."""
    records, monitors, refinement = AGREED[case]
    parsed = parse_trace(lines(records))
    assert [(v.invariant, v.line) for v in check_trace(parsed)] == monitors
    assert refined(records) == refinement


@pytest.mark.parametrize("kind", ["disconnect", "reconnect", "stream_ended", "relisten"])
def test_an_input_of_a_server_no_one_named_is_no_event_even_naming_a_call(kind):
    """SPEC §14.5: an input about a server neither the header nor a ``reconfigure`` names
    is an input the model does not allow, flagged at its line, even when it carries the
    ``call_id`` of a call in flight (issue 33: the call inputs' ``kind == "task_created"``
    made ``<=`` took such a record as the call's task)."""
    stray = {"kind": kind, "server": "zz", "call_id": "a"}
    assert refined([HEADER, *LISTED, CALL, SENT, stray, END]) == ("REFINE", 9)


def test_a_sample_after_close_is_an_input_the_model_does_not_allow():
    """SPEC §14.5: a ``sample`` after the close is no event of the model: ``REFINE`` at its
    line; INV-2 is for a step that shows a tool it does not hold (issue 33: the ``shown``
    test's ``is not None`` made ``is None`` named every refused sample INV-2)."""
    assert refined([HEADER, *LISTED, *CLOSE, {"kind": "sample", "step": 1}, END]) == ("REFINE", 9)


def test_a_cap_that_fires_names_the_default_hour_when_the_header_gives_no_tool_max_sec():
    """SPEC §14.1: a missing ``server_options`` key has ``ServerConfig``'s default:
    ``tool_max_sec`` 3600, so a cap that fires says 3600 seconds (issue 33: the default
    made 3601.0 survived)."""
    idle = {**HEADER, "server_options": {"s": {"idle_timeout": True}}}
    capped = TIMED_OUT_CAP.format(seconds="3600 seconds")
    records = [
        idle,
        *LISTED,
        CALL,
        SENT,
        {"kind": "timeout", "call_id": "a", "cap": True},
        SIGNAL,
        {"kind": "result", "call_id": "a", "status": "timed_out", "text": capped},
        *CLOSE,
        END,
    ]
    assert refined(records) is None


@pytest.mark.parametrize(("cap", "refines"), [(None, True), (True, True), (False, False)])
def test_a_timeout_that_does_not_say_which_deadline_fired_is_tried_both_ways(cap, refines):
    """SPEC §14.5: which deadline fired is timing. A ``timeout`` record that says
    (``cap``) is taken as it says; one that does not is tried both ways, so the cap's text
    refines it, and a ``cap: false`` does not (mutation seed 101: the choice's ``cap is
    None`` made ``not`` tried one way without ``cap`` and both with it)."""
    idle = {**HEADER, "server_options": {"s": {"idle_timeout": True}}}
    capped = TIMED_OUT_CAP.format(seconds="3600 seconds")
    timeout: dict[str, Any] = {"kind": "timeout", "call_id": "a"}
    if cap is not None:
        timeout["cap"] = cap
    records = [
        idle,
        *LISTED,
        CALL,
        SENT,
        timeout,
        SIGNAL,
        {"kind": "result", "call_id": "a", "status": "timed_out", "text": capped},
        *CLOSE,
        END,
    ]
    assert (refined(records) is None) == refines


def test_only_a_trace_that_ends_early_forgives_its_last_line_cut_short():
    """SPEC §14.3: a trace that ends early (``prefix``) leaves out a last line cut in the
    middle of its writing (no newline); a whole trace does not, and a line that is not
    JSON with its newline is not a trace either way (issue 33: the test's ``and`` made
    ``or`` forgave both)."""
    good = [json.dumps(r) + "\n" for r in [HEADER, *LISTED]]
    cut = [*good, '{"kind": "sam']
    assert len(parse_trace(cut, prefix=True)) == len(good)
    with pytest.raises(TraceError, match="not JSON") as whole:
        parse_trace([*cut, json.dumps(END)])
    assert whole.value.line == len(cut)
    broken = [*good[:2], '{"kind": \n', *good[2:]]
    with pytest.raises(TraceError, match="not JSON") as early:
        parse_trace(broken, prefix=True)
    assert early.value.line == 3


def test_a_result_of_a_call_accepted_once_and_refused_twice_is_its_one_result():
    """SPEC §14.2 (INV-4): a call_id offered three times, accepted once and refused twice
    (reused), has its one result (issue 33: the monitor's ``calls - refusals`` made
    ``calls >> refusals`` took it for a call every offer of which was refused)."""
    reused = [
        {**CALL, "step": 0},
        {"kind": "refused", "call_id": "a", "text": DUPLICATE_CALL_ID.format(call_id="a")},
    ]
    records = [HEADER, *LISTED, CALL, SENT, *reused, *reused]
    records += [{"kind": "call_responded", "call_id": "a"}]
    records += [{"kind": "result", "call_id": "a", "status": "ok"}, *CLOSE, END]
    assert check_trace(parse_trace(lines(records))) == []
    assert refined(records) is None


def test_a_request_lost_at_a_disconnect_is_owed_at_the_end_not_taken_for_a_later_one():
    """SPEC §14.5: the ``tools/call`` of a call lost at a disconnect, never shown, is not
    taken for the same request of a later call on the new session: that one is shown,
    and the lost one is owed at the end (issue 33: the skipping of an output owed since
    before the disconnect made a stop flagged the later call's request instead)."""
    failed = DISCONNECTED.format(server="s")
    second = {**CALL, "call_id": "b"}
    records = [
        HEADER,
        *LISTED,
        CALL,
        {"kind": "disconnect", "server": "s"},
        {"kind": "result", "call_id": "a", "status": "failed", "text": failed},
        {"kind": "reconnect", "server": "s"},
        *LISTED[:2],
        {"kind": "refresh_outcome", "server": "s", "status": "unchanged", "generation": 1},
        second,
        {**SENT, "call_id": "b"},
        {"kind": "call_responded", "call_id": "b"},
        {"kind": "result", "call_id": "b", "status": "ok"},
        END,
    ]
    assert refined(records) == ("INV-2", len(records))


def test_a_blank_line_is_skipped_and_the_records_after_it_are_read():
    """A blank line in a trace is no record and does not end it (issue 33: the parser's
    ``continue`` made ``break`` dropped every record after it)."""
    text = [*lines([HEADER, *LISTED[:2]]), "\n", *lines([*LISTED[2:], END])]
    records = parse_trace(text)
    assert [r.kind for r in records] == ["header", *(r["kind"] for r in LISTED), "end"]


def test_a_trace_that_ends_early_is_read_only_up_to_its_first_line_cut_short():
    """SPEC §14.3: lines given without their newlines (``splitlines``) to a trace that ends
    early: the first that is not JSON is where the writer stopped, nothing after it is
    read (issue 33: ``break`` made ``continue`` read on past the cut)."""
    given = [*lines([HEADER, *LISTED[:2]]), '{"kind": "sam', *lines(LISTED[2:])]
    assert [r.kind for r in parse_trace(given, prefix=True)] == ["header", "sent", "list_done"]


def test_a_publication_of_a_listing_never_done_is_flagged_after_a_builtin_one():
    """SPEC §14.2 (INV-3): a publication of a source that is not a server's (``builtin``)
    is passed over, and a server's publication with no ``list_done`` before it, later, is
    still flagged (issue 33: the monitor's ``continue`` made ``break`` stopped at the first)."""
    builtin = {"kind": "published", "generation": 1, "source": "builtin", "names": []}
    early = {**LISTED[2], "generation": 2}
    records = parse_trace(lines([HEADER, builtin, early, END]))
    assert [(v.invariant, v.line) for v in check_trace(records)] == [("INV-3", 3)]


def test_a_merge_names_line_1_of_a_tap_trace_that_is_not_wire_side():
    """SPEC §14.6: a tap's trace must say ``"side": "wire"`` in its header, line 1 (issue
    33: the error's line number made 0 or 2 went unnoticed)."""
    host = parse_trace(lines([HEADER, *LISTED, END]))
    with pytest.raises(TraceError, match='"side": "wire"') as error:
        merge_traces(host, [host])
    assert error.value.line == 1


def test_a_json_rpc_error_answer_ends_its_call_failed_with_the_servers_own_text():
    """SPEC §8.8: a ``call_failed`` with a JSON-RPC ``code`` is the server's own answer, so
    the call's ``failed`` result carries whatever text the server gave (issue 33: the
    call's loose set's ``|`` made ``+``, no trace reached it)."""
    answered = [
        HEADER,
        *LISTED,
        CALL,
        SENT,
        {"kind": "call_failed", "call_id": "a", "code": -32603, "why": "boom"},
        {"kind": "result", "call_id": "a", "status": "failed", "text": "the server's own words"},
        *CLOSE,
        END,
    ]
    assert refined(answered) is None


class _Unhashable:
    """A value a malformed trace field could put in a state: it does not hash (each try
    counted)."""

    def __init__(self) -> None:
        self.tries = 0

    def __hash__(self) -> int:
        self.tries += 1
        raise TypeError("unhashable")


class _Found:
    def __init__(self, key: tuple[object, ...]) -> None:
        self._key = key

    def key(self) -> tuple[object, ...]:
        return self._key


def test_candidates_with_a_key_that_does_not_hash_are_scanned_and_never_hashed_again():
    """Refinement keeps each candidate once (``refine._Distinct``): past a few it hashes
    their keys, and once a key does not hash it compares them by scanning from then on,
    trying no hash again (issue 33: the flags' ``False`` made ``True`` tried each add;
    ``key in keys`` made ``not in`` dropped the new candidate and kept the repeat)."""
    late = _Unhashable()
    distinct = refine_module._Distinct()
    found = [_Found((n,)) for n in range(5)]
    for each in found:
        distinct.add(each)  # type: ignore[arg-type]  # only its key is read
    odd = _Found((late,))
    distinct.add(odd)  # type: ignore[arg-type]
    distinct.add(_Found((late,)))  # type: ignore[arg-type]  # an equal key: not kept
    distinct.add(_Found((5,)))  # type: ignore[arg-type]
    assert [f.key() for f in distinct.kept] == [*(f.key() for f in found), (late,), (5,)]
    assert distinct.kept[5] is odd  # the first of the two equal keys
    assert late.tries == 1
    first = _Unhashable()
    distinct = refine_module._Distinct()
    for each in [_Found((first,)), *(_Found((n,)) for n in range(6))]:
        distinct.add(each)  # type: ignore[arg-type]
    assert len(distinct.kept) == 7
    assert first.tries == 1
