"""Trace monitors: does a host's boundary log conform to the specification? (SPEC §14)

Theory of operation
-------------------
A trace in the format ``mcpbind-trace/1`` is a sequence of JSON objects, one per line,
each with a ``kind``: a ``header`` first, then the host's inputs (SPEC §3.1 events:
``sample``, ``call``, ``cancel``, ``close``, ``disconnect``, ...) and outputs (§3.2:
``published``, ``refresh_outcome``, ``sent``, ``result``, ``refused``, ``late_dropped``) in
the order they happened, then ``{"kind": "end"}``. Any host can write one, in any
language; nothing here needs mcpbind's names or texts.

:func:`check_trace` runs one *monitor* per invariant over the records, each a small state
machine fed every record in order, and reports the first offending record of each as a
:class:`TraceViolation` (the id, the record's line, what was expected, what was seen).
The monitors decide from the trace alone:

* INV-1: the ``published`` generations step by exactly one, from 1; the publications
  that follow one ``reconfigure`` (before the next input) share one generation;
* INV-3: a server's ``published`` follows its ``list_done`` (a lazy server's first, its
  cached catalog, aside; and the removal of a catalog a ``reconfigure`` removed or
  replaced, with no names), never for a listing with an invalid tool, and with no more
  names than the listing offers;
* INV-4: an accepted call gets at most one ``result``; a ``refused`` call_id (reused) gets
  no second result; no result names a call never made;
* INV-5: after every publication the names of all sources are distinct;
* INV-7: no call gets two cancellation signals (``notifications/cancelled`` or
  ``tasks/cancel``); a call whose ``tools/call`` was sent (and not refused unrun since,
  ``call_rejected`` or ``session_expired``) and that ended ``cancelled`` or ``timed_out``
  got one, by the end; a call that ended ``ok``/``error`` got none;
* INV-8: nothing is sent to a server between its ``disconnect`` and its ``reconnect`` (or
  the new session a ``reconfigure`` that adds or changes it opens);
* INV-9 (with the header's ``server_options``): no ``tools/call`` of an exclusive call of
  a step while another exclusive call of that step is in flight, the lanes read from the
  listings installed when the step was sampled;
* INV-10: nothing is sent for a call that was denied, nor before its approval; a
  ``denied`` result only after a ``deny``, and a denied call ends ``denied``;
* INV-12: after ``close`` no call gets a result unless it was pending at the close (those
  end ``cancelled``), every later ``call`` is ``refused``, and each server's ``close`` is
  the last thing sent to it (a changed server's old session aside: its replacement's
  session follows);
* INV-14: after a call's ``session_expired`` it is sent again only once a first-page
  ``tools/list`` to its server sent after the expiry was answered (``list_done`` or
  ``list_failed``), and at most twice in all; the calls of that server in flight at the
  expiry end ``failed``;
* INV-16: after a ``reconfigure``, a server it removed gets nothing but cancellations and
  its session's ``close``, then nothing; a call whose ``tools/call`` (or a read's
  ``resources/read``) went to a removed or changed server and that was still in flight
  at the ``reconfigure`` ends ``cancelled``;
* LIVE-1 (at ``end``): every accepted call has its result;
* LIVE-2 (at ``end``): every ``list_changed`` of a connected server was followed by a
  ``refresh_outcome`` of that server;
* LIVE-3 (at ``end``): every ``stream_ended`` of a server still connected was followed by
  its ``relisten`` (or a ``session_expired`` of a call sent to it: a new session listens
  anew), then a first-page ``tools/list`` to it, then its ``refresh_outcome``.

Pure: no I/O; :mod:`mcpbind.cli.trace` reads the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

import attrs

from .values import EVENT_KINDS, OUTPUT_KINDS, EventKind, OutputKind, ToolDef

__all__ = [
    "FORMAT",
    "REQUIRED",
    "WIRE_DECIDABLE",
    "WIRE_HEADER",
    "WIRE_KINDS",
    "TraceError",
    "TraceKind",
    "TraceRecord",
    "TraceViolation",
    "check_trace",
    "listed_tool",
    "merge_traces",
    "parse_trace",
    "wire_only",
]

FORMAT = "mcpbind-trace/1"
TraceKind = Literal["header", "end", "unparsed"] | EventKind | OutputKind
"""A record's ``kind``: the header, the end, an input (SPEC §3.1), an output (§3.2), or
``unparsed``: bytes a tap relayed that were not JSON-RPC (§14.6)."""
WIRE_KINDS = ("unparsed",)
"""Kinds only a wire-side trace writes (SPEC §14.6); no monitor reads them."""
_KINDS = frozenset(("header", "end", *EVENT_KINDS, *OUTPUT_KINDS, *WIRE_KINDS))
SIGNALS = frozenset({"notifications/cancelled", "tasks/cancel"})
"""The two cancellation signals of INV-7 (SPEC §8.12)."""


class TraceError(Exception):
    """The file is not a trace of this format: the line and what is wrong with it."""

    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line
        self.problem = problem


@attrs.frozen
class TraceRecord:
    line: int
    """1-based line number in the file."""
    kind: TraceKind
    fields: Mapping[str, Any]

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)


@attrs.frozen
class TraceViolation:
    invariant: str
    line: int
    expected: str
    seen: str

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)

    def __str__(self) -> str:
        return f"{self.invariant} at line {self.line}: expected {self.expected}; seen {self.seen}"


#: The fields each kind must carry (the JSON Schema ``trace-schema.json`` says the same).
REQUIRED: dict[TraceKind, tuple[str, ...]] = {
    "header": (
        "format",
        "policy",
        "servers",
        "builtins",
        "extensions",
        "max_name_length",
        "host",
    ),
    "call": ("call_id", "name"),
    "cancel": ("call_id",),
    "published": ("generation", "source", "names"),
    "refresh_outcome": ("server", "status"),
    "sent": ("server", "method"),
    "result": ("call_id", "status"),
    "refused": ("call_id",),
    "late_dropped": ("call_id",),
    "disconnect": ("server",),
    "reconnect": ("server",),
    "list_changed": ("server",),
    "stream_ended": ("server",),
    "relisten": ("server",),
    "session_expired": ("call_id",),
    "reconfigure": ("added", "removed", "changed"),
    "unparsed": ("server", "direction"),
}

FIELD_TYPES: dict[str, tuple[str, tuple[type, ...]]] = {
    **dict.fromkeys(
        [
            *("call_id", "name", "server", "source", "status", "method", "detail", "why"),
            *("answer", "task_id", "via"),
        ],
        ("a string", (str,)),
    ),
    **dict.fromkeys(
        ("step", "generation", "bytes", "max_name_length", "code", "exit_status"),
        ("an integer", (int,)),
    ),
    **dict.fromkeys(("is_error", "tasks", "arguments_ok", "cap"), ("true or false", (bool,))),
    **dict.fromkeys(
        ("servers", "builtins", "names", "added", "removed", "changed", "wire", "shown"),
        ("a list of strings", (list,)),
    ),
    "text": ("a string or null", (str, type(None))),
    "request_id": ("a string or an integer", (str, int)),
    "at": ("a number", (int, float)),
}
"""The type of each field that is a value, a list of strings or null in the trace format's
schema (``trace-schema.json``, SPEC §14.1): a record whose field has another type is no
record of this format (a ``call_id`` that is a list would be no key)."""

_NATURAL = frozenset({"step", "generation", "bytes", "max_name_length"})
"""The integer fields the schema gives a minimum (0, or 1 for ``max_name_length``)."""


def _field_problem(value: dict[str, Any]) -> str | None:
    """What is wrong with the type of one of ``value``'s fields (:data:`FIELD_TYPES`)."""
    kind = value["kind"]
    for field, given in value.items():
        spec = FIELD_TYPES.get(field)
        if spec is None:
            continue
        named, types = spec
        bad = not isinstance(given, types) or (isinstance(given, bool) and bool not in types)
        what = named
        if not bad and what == "a list of strings":
            bad = not all(isinstance(item, str) for item in given)
        if field in _NATURAL:
            least = 1 if field == "max_name_length" else 0
            bad = bad or given < least
            what = "a positive integer" if least else "an integer >= 0"
        if bad:
            return f"{kind} with a {field!r} that is not {what}: {json.dumps(given)[:60]}"
    return None


WIRE_HEADER = ("format", "side", "servers", "host")
"""What a wire-side trace's header must carry (``"side": "wire"``, SPEC §14.6): a tap
knows neither the host's policy, nor its builtins, nor its name length."""

WIRE_DECIDABLE = ("INV-7", "LIVE-2", "LIVE-3")
"""The ids a wire-only trace decides (SPEC §14.6): what crossed the wire says whether a
call got two cancellations (INV-7), and whether a ``list_changed`` or an ended stream was
followed by a new listing (LIVE-2, LIVE-3). The others need the host's view (INV-8 and
INV-12 too: a tap's file is one session, which nothing of it can follow)."""


def wire_only(records: list[TraceRecord]) -> bool:
    """A trace written by a tap alone (its header says ``"side": "wire"``)."""
    return bool(records) and records[0].kind == "header" and records[0].get("side") == "wire"


_PARSED: dict[str, dict[str, Any]] = {}
"""Lines parsed lately, each with its value once its checks that do not depend on its
place passed: traces repeat most of their lines (every lockstep run writes one, and runs
share their events). A record's fields are read, never changed, so records share them."""
_PARSED_KEPT = 8192


def parse_trace(lines: Iterable[str], *, prefix: bool = False) -> list[TraceRecord]:
    """The records of a trace; raises :class:`TraceError` for anything that is not one
    (not JSON, no ``kind``, an unknown kind, a missing field, no header first, no end).

    ``prefix``: a trace that ends early (its writer was killed, SPEC §14.3) is accepted:
    no ``end`` record, and a last line cut short (no newline, not JSON) is left out."""
    records: list[TraceRecord] = []
    for number, text in enumerate(lines, start=1):
        value = _PARSED.get(text)
        if value is not None:  # a line met before: parsed and its fields checked then
            kind = value["kind"]
            misplaced = _misplaced(records, kind)
            if misplaced is not None:
                raise TraceError(number, misplaced)
            records.append(TraceRecord(number, kind, value))
            continue
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            if prefix and not text.endswith("\n"):
                break  # the last line, cut as it was written
            raise TraceError(number, f"not JSON ({error.msg})") from error
        if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
            raise TraceError(number, 'not a JSON object with a string "kind"')
        kind = value["kind"]
        misplaced = _misplaced(records, kind)
        if misplaced is not None:
            raise TraceError(number, misplaced)
        if kind == "header":
            if value.get("format") != FORMAT:
                raise TraceError(number, f'the header\'s "format" is not {FORMAT!r}')
        elif kind not in _KINDS:
            raise TraceError(number, f"unknown kind {kind!r}")
        required = REQUIRED.get(kind, ())
        if kind == "header" and value.get("side") == "wire":
            required = WIRE_HEADER
        missing = [name for name in required if name not in value]
        if missing:
            raise TraceError(number, f"{kind} without {', '.join(missing)}")
        problem = _field_problem(value)
        if problem is not None:
            raise TraceError(number, problem)
        if len(_PARSED) >= _PARSED_KEPT:
            _PARSED.clear()
        _PARSED[text] = value
        records.append(TraceRecord(number, kind, value))
    if not records:
        raise TraceError(1, "an empty file")
    if records[-1].kind != "end" and not prefix:
        raise TraceError(records[-1].line, 'the trace does not end with {"kind": "end"}')
    return records


def _misplaced(records: list[TraceRecord], kind: str) -> str | None:
    """What is wrong with a record of ``kind`` after ``records``, whatever its fields."""
    if not records and kind != "header":
        return 'the first record must be {"kind": "header", ...}'
    if records and records[-1].kind == "end":
        return 'a record after {"kind": "end"}'
    if kind == "header" and records:
        return "a second header"
    return None


def check_trace(records: list[TraceRecord]) -> list[TraceViolation]:
    """Every invariant the trace breaks, the first offending record of each, in id order.
    A wire-only trace (SPEC §14.6) is judged by the monitors of :data:`WIRE_DECIDABLE`
    alone, LIVE-2 and LIVE-3 taking a new listing's ``list_done`` as the refresh."""
    found: dict[str, TraceViolation] = {}
    wire = wire_only(records)
    monitors = _WIRE_MONITORS if wire else _MONITORS
    for monitor in monitors:
        violation = next(iter(monitor(records)), None)
        if violation is not None and violation.invariant not in found:
            found[violation.invariant] = violation
    return [found[key] for key in sorted(found, key=_id_order)]


def _id_order(invariant: str) -> tuple[str, int]:
    family, _, number = invariant.partition("-")
    return (family, int(number))


def _show(record: TraceRecord) -> str:
    return json.dumps(dict(record.fields), sort_keys=True)


# --- the monitors ------------------------------------------------------------------------


_INPUTS = frozenset(EVENT_KINDS)


def _names(record: TraceRecord, field: str) -> set[str]:
    """The server names a ``reconfigure`` record lists under ``field``."""
    value = record.get(field)
    return {str(name) for name in value} if isinstance(value, list) else set()


def _inv_1(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    generation = 0
    reconfiguring = False  # since a reconfigure, no other input yet
    shared: int | None = None  # the generation its publications share (SPEC §3.7)
    for record in records:
        if record.kind == "published":
            seen = record.get("generation")
            if shared is not None and seen == shared:
                continue
            if seen != generation + 1:
                yield TraceViolation(
                    "INV-1", record.line, f"generation {generation + 1}", f"generation {seen!r}"
                )
                return
            generation = seen
            if reconfiguring:
                shared = seen
        elif record.kind in _INPUTS:
            reconfiguring, shared = record.kind == "reconfigure", None


def listed_tool(entry: Any) -> ToolDef | None:
    """One tool of a ``list_done`` record as the rules see it (SPEC §14.1): a raw name, or
    the object with its facts; None for an entry that is neither."""
    if isinstance(entry, str):
        return ToolDef(entry)
    if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
        return None
    problem = entry.get("problem") or ""
    excluded = entry.get("excluded")
    return ToolDef(
        entry["name"],
        read_only=bool(entry.get("read_only", False)),
        valid=not (problem and excluded is None),
        problem=problem,
        visible=not entry.get("hidden", False),
        excluded=excluded,
        spec=str(entry.get("spec", "")),
        over_cap=bool(entry.get("over_cap", False)),
        resource=bool(entry.get("resource", False)),
    )


def _offered(tool: ToolDef | None) -> bool:
    """The tool may be published: valid, visible, not left out (unknown: it may)."""
    return tool is None or (tool.valid and tool.visible and tool.excluded is None)


def _servers_with(records: list[TraceRecord], option: str) -> set[str] | None:
    """The servers the header's ``server_options`` give ``option``; None without them."""
    options = records[0].get("server_options") if records else None
    if not isinstance(options, Mapping):
        return None
    return {
        name for name, given in options.items() if isinstance(given, Mapping) and given.get(option)
    }


def _inv_3(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    pending: dict[str, list[Any] | None] = {}  # server -> its listing's tools (None: unsaid)
    cached = _servers_with(records, "lazy") or set()  # its first catalog: the cache (§11.12)
    replaced: set[str] = set()  # servers a reconfigure removed or changed (SPEC §3.7)
    for record in records:
        server = record.get("server")
        if record.kind == "reconfigure":
            replaced |= _names(record, "removed") | _names(record, "changed")
        elif record.kind == "list_done":
            tools = record.get("tools")
            pending[server] = list(tools) if isinstance(tools, list) else None
            cached.discard(server)
        elif record.kind == "refresh_outcome":
            pending.pop(server, None)
        elif record.kind == "published":
            source = str(record.get("source"))
            if not source.startswith("mcp:"):
                continue
            owner = source.removeprefix("mcp:")
            if owner in replaced and not record.get("names"):
                continue  # a removal: nothing half-installed (INV-15 in the model)
            if owner in cached:
                cached.discard(owner)
                continue
            if owner not in pending:
                expected = f"a publication of {source} only at the end of its listing"
                yield TraceViolation("INV-3", record.line, expected, "no list_done before it")
                return
            listed = pending.pop(owner)
            if listed is None:  # a listing whose tools the trace does not show
                continue
            tools = [listed_tool(entry) for entry in listed]
            invalid = [t.name for t in tools if t is not None and not t.valid]
            if invalid:
                expected = f"no publication of a listing with an invalid tool ({invalid[0]!r})"
                yield TraceViolation("INV-3", record.line, expected, _show(record))
                return
            offered = sum(1 for t in tools if _offered(t))
            if len(record.get("names") or ()) > offered:
                expected = f"at most the {offered} tools its listing offers"
                yield TraceViolation("INV-3", record.line, expected, _show(record))
                return


def _inv_9(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    """Needs the header's ``server_options`` (which servers are parallel); without them a
    trace says nothing about lanes."""
    parallel = _servers_with(records, "parallel")
    if parallel is None:
        return
    listing: dict[str, dict[str, bool]] = {}
    installed: dict[str, dict[str, bool] | None] = {}  # None: lanes the trace does not show
    snapshots: dict[int, dict[str, dict[str, bool] | None]] = {}
    steps: dict[str, int] = {}
    holding: dict[int, str] = {}  # step -> the exclusive call in flight
    for record in records:
        server = record.get("server")
        call_id = record.get("call_id")
        if record.kind == "list_done":
            tools = (listed_tool(entry) for entry in record.get("tools") or ())
            listing[server] = {t.name: not t.read_only for t in tools if t is not None}
        elif record.kind == "published" and str(record.get("source")).startswith("mcp:"):
            owner = str(record.get("source")).removeprefix("mcp:")
            installed[owner] = listing.pop(owner, None)  # a cached catalog: not listed here
        elif record.kind == "sample":
            step = record.get("step")
            if isinstance(step, int):
                snapshots[step] = dict(installed)
        elif record.kind == "call" and isinstance(record.get("step"), int):
            steps.setdefault(call_id, record.get("step"))
        elif record.kind == "sent" and record.get("method") == "tools/call" and call_id in steps:
            step = steps[call_id]
            lanes = snapshots.get(step, installed).get(server)
            if lanes is None or server in parallel or not lanes.get(record.get("detail"), True):
                continue
            holder = holding.setdefault(step, call_id)
            if holder != call_id:
                expected = f"one exclusive call of step {step} in flight ({holder} is)"
                yield TraceViolation("INV-9", record.line, expected, _show(record))
                return
        elif record.kind == "result":
            for step, holder in list(holding.items()):
                if holder == call_id:
                    del holding[step]


def _inv_10(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    sent: set[str] = set()
    denied: set[str] = set()
    for record in records:
        call_id = record.get("call_id")
        if record.kind == "sent" and record.get("method") == "tools/call" and call_id:
            if call_id in denied:
                expected = f"nothing sent for {call_id}, which was denied"
                yield TraceViolation("INV-10", record.line, expected, _show(record))
                return
            sent.add(call_id)
        elif record.kind == "approve" and call_id in sent:
            expected = f"no tools/call for {call_id} before its approval"
            yield TraceViolation("INV-10", record.line, expected, "one was sent already")
            return
        elif record.kind == "deny":
            if call_id in sent:
                expected = f"no tools/call for {call_id}, which waited for approval"
                yield TraceViolation("INV-10", record.line, expected, "one was sent already")
                return
            denied.add(call_id)
        elif record.kind == "result":
            status = record.get("status")
            if status == "denied" and call_id not in denied:
                expected = f"a denied result only after a deny of {call_id}"
                yield TraceViolation("INV-10", record.line, expected, _show(record))
                return
            if call_id in denied and status not in ("denied", "cancelled"):
                expected = f"{call_id}, denied, ends denied"
                yield TraceViolation("INV-10", record.line, expected, _show(record))
                return


def _inv_4(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    calls: dict[str, int] = {}  # call records per call_id
    refusals: dict[str, int] = {}
    results: set[str] = set()
    for record in records:
        call_id = record.get("call_id")
        if record.kind == "call":
            calls[call_id] = calls.get(call_id, 0) + 1
        elif record.kind == "refused":
            refusals[call_id] = refusals.get(call_id, 0) + 1
        elif record.kind == "result":
            if calls.get(call_id, 0) - refusals.get(call_id, 0) < 1:
                expected = "a result only for a call the host accepted"
                yield TraceViolation("INV-4", record.line, expected, _show(record))
                return
            if call_id in results:
                expected = f"one result for {call_id}"
                yield TraceViolation("INV-4", record.line, expected, f"a second: {_show(record)}")
                return
            results.add(call_id)


def _inv_5(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    names: dict[str, tuple[str, ...]] = {}
    for record in records:
        if record.kind != "published":
            continue
        names[str(record.get("source"))] = tuple(record.get("names") or ())
        owners: dict[str, str] = {}
        for source, held in names.items():
            for name in held:
                other = owners.setdefault(name, source)
                # name is one of held's: its count is at least 1, so > 1 is != 1
                if other != source or held.count(name) > 1:  # pragma: no mutate
                    expected = "every public name held by one source, once"
                    seen = f"{name!r} held by {other!r} and {source!r}"
                    yield TraceViolation("INV-5", record.line, expected, seen)
                    return


def _inv_7(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    in_flight: set[str] = set()
    signals: dict[str, int] = {}
    early: dict[str, TraceRecord] = {}
    for record in records:
        call_id = record.get("call_id")
        if record.kind == "sent" and record.get("method") == "tools/call" and call_id:
            in_flight.add(call_id)
        elif record.kind in ("call_rejected", "session_expired"):
            in_flight.discard(call_id)  # refused unrun: nothing of it runs until resent
        elif record.kind == "sent" and record.get("method") in SIGNALS and call_id:
            signals[call_id] = signals.get(call_id, 0) + 1
            if signals[call_id] > 1:
                expected = f"one cancellation signal for {call_id}"
                yield TraceViolation("INV-7", record.line, expected, f"a second: {_show(record)}")
                return
        elif record.kind == "result" and call_id in in_flight:
            if record.get("status") in ("cancelled", "timed_out"):
                early[call_id] = record
            elif record.get("status") in ("ok", "error") and signals.get(call_id):
                expected = f"no cancellation for {call_id}, which ran to its answer"
                yield TraceViolation("INV-7", record.line, expected, _show(record))
                return
        elif record.kind == "end":
            for ended_id, result in early.items():
                if not signals.get(ended_id):
                    expected = f"one cancellation signal for {ended_id}, ended in flight"
                    yield TraceViolation("INV-7", result.line, expected, "none by the end")
                    return


def _inv_8(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    down: set[str] = set()
    for record in records:
        server = record.get("server")
        if record.kind == "disconnect":
            down.add(server)
        elif record.kind == "reconnect":
            down.discard(server)
        elif record.kind == "reconfigure":  # a new session for each (SPEC §3.7)
            down -= _names(record, "added") | _names(record, "changed")
        elif record.kind == "sent" and server in down:
            expected = f"nothing sent to {server!r} while it is disconnected"
            yield TraceViolation("INV-8", record.line, expected, _show(record))
            return


def _inv_12(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    started: set[str] = set()
    ended: set[str] = set()
    at_close: set[str] | None = None
    closed_servers: set[str] = set()
    down: set[str] = set()
    renewing: set[str] = set()  # changed servers whose old session's close is to come
    for record in records:
        call_id = record.get("call_id")
        server = record.get("server")
        if record.kind == "disconnect":
            down.add(server)
        elif record.kind == "reconnect":
            down.discard(server)
        elif record.kind == "reconfigure":
            renewing |= _names(record, "changed") - down
            down -= _names(record, "added") | _names(record, "changed")
        if record.kind == "close":
            at_close = started - ended
        elif record.kind == "call" and at_close is None:
            started.add(call_id)
        elif record.kind == "result":
            if at_close is not None and call_id not in at_close:
                expected = "after close, results only for the calls pending at the close"
                yield TraceViolation("INV-12", record.line, expected, _show(record))
                return
            if at_close is not None and record.get("status") != "cancelled":
                expected = f"{call_id}, pending at the close, ends cancelled"
                yield TraceViolation("INV-12", record.line, expected, _show(record))
                return
            ended.add(call_id)
        elif record.kind == "sent":
            if server in closed_servers:
                expected = f"nothing sent to {server!r} after its session closed"
                yield TraceViolation("INV-12", record.line, expected, _show(record))
                return
            if record.get("method") == "close" and server in renewing:
                renewing.discard(server)  # the old session's: its replacement follows
            elif record.get("method") == "close":
                closed_servers.add(server)
        elif record.kind == "end" and at_close is not None:
            left = sorted(at_close - ended)
            if left:
                expected = "every call pending at the close ended"
                yield TraceViolation("INV-12", record.line, expected, f"{left} without a result")
                return


_ENDS_OR_REFUSES = frozenset(
    {
        "call_responded",
        "call_failed",
        "call_rejected",
        "session_expired",
        "task_status",
        "cancel",
        "timeout",
    }
)
"""Inputs after which a call is no longer in flight on its session (INV-14)."""


def _first_page(record: TraceRecord) -> bool:
    """A ``tools/list`` that starts a listing (a next page carries its cursor's detail)."""
    return (
        record.kind == "sent" and record.get("method") == "tools/list" and not record.get("detail")
    )


def _inv_14(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    server_of: dict[str, str] = {}  # call -> the server its tools/call went to
    sends: dict[str, int] = {}  # call -> its tools/call so far
    in_flight: set[str] = set()
    expired: set[str] = set()  # calls that had a session_expired
    waiting: dict[str, str] = {}  # call -> "expired", "listing" or "listed"
    doomed: set[str] = set()  # calls in flight at an expiry of their server
    for record in records:
        kind = record.kind
        call_id = record.get("call_id")
        server = record.get("server")
        if kind == "sent" and record.get("method") == "tools/call" and call_id:
            sends[call_id] = sends.get(call_id, 0) + 1
            server_of.setdefault(call_id, server)
            if call_id in expired and sends[call_id] > 2:
                expected = f"at most two tools/call for {call_id}, whose session expired"
                yield TraceViolation("INV-14", record.line, expected, f"a third: {_show(record)}")
                return
            if waiting.pop(call_id, "listed") != "listed":
                expected = f"{call_id} sent again only after a listing of the new session ended"
                yield TraceViolation("INV-14", record.line, expected, _show(record))
                return
            in_flight.add(call_id)
        elif _first_page(record):
            for other, stage in waiting.items():
                if stage == "expired" and server_of.get(other) == server:
                    waiting[other] = "listing"
        elif kind in ("list_done", "list_failed"):
            for other, stage in waiting.items():
                if stage == "listing" and server_of.get(other) == server:
                    waiting[other] = "listed"
        elif kind == "session_expired" and call_id in server_of:
            expired.add(call_id)
            waiting[call_id] = "expired"
            in_flight.discard(call_id)
            lost = server_of[call_id]
            doomed |= {other for other in in_flight if server_of.get(other) == lost}
        elif kind in _ENDS_OR_REFUSES:
            in_flight.discard(call_id)
        elif kind == "result":
            in_flight.discard(call_id)
            waiting.pop(call_id, None)
            if call_id in doomed:
                doomed.discard(call_id)
                if record.get("status") != "failed":
                    expected = f"{call_id}, in flight when its server's session expired, fails"
                    yield TraceViolation("INV-14", record.line, expected, _show(record))
                    return


_CALL_SENDS = ("tools/call", "resources/read")
"""What a call sends: a read of ``read_mcp_resource`` is a call too (SPEC §11.20)."""


def _inv_16(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    server_of: dict[str, str] = {}  # call -> the server its tools/call (or read) went to
    in_flight: set[str] = set()
    removed: dict[str, bool] = {}  # server -> its session closed since
    doomed: set[str] = set()  # calls in flight on a server a reconfigure ended
    for record in records:
        kind = record.kind
        call_id = record.get("call_id")
        server = record.get("server")
        if kind == "sent" and server in removed:
            method = record.get("method")
            if removed[server] or method not in (*SIGNALS, "close"):
                expected = f"nothing but cancellations and a close sent to removed {server!r}"
                yield TraceViolation("INV-16", record.line, expected, _show(record))
                return
            removed[server] = method == "close"
        elif kind == "sent" and record.get("method") in _CALL_SENDS and call_id:
            server_of[call_id] = server
            in_flight.add(call_id)
        elif kind == "reconfigure":
            ended = _names(record, "removed") | _names(record, "changed")
            doomed |= {c for c in in_flight if server_of.get(c) in ended}
            removed.update(dict.fromkeys(_names(record, "removed"), False))
        elif kind in _ENDS_OR_REFUSES:
            in_flight.discard(call_id)
        elif kind == "result":
            in_flight.discard(call_id)
            if call_id in doomed:
                doomed.discard(call_id)
                if record.get("status") != "cancelled":
                    expected = f"{call_id}, in flight on a server the reconfigure ended, cancelled"
                    yield TraceViolation("INV-16", record.line, expected, _show(record))
                    return


def _live_1(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    calls: dict[str, int] = {}
    refused: set[str] = set()
    results: set[str] = set()
    for record in records:
        call_id = record.get("call_id")
        if record.kind == "call" and call_id not in calls:
            calls[call_id] = record.line
        elif record.kind == "refused":
            refused.add(call_id)
        elif record.kind == "result":
            results.add(call_id)
        elif record.kind == "end":
            open_calls = sorted(c for c in calls if c not in results and c not in refused)
            if open_calls:
                expected = "every accepted call ended"
                seen = f"{open_calls} with no result"
                yield TraceViolation("LIVE-1", record.line, expected, seen)


def _live_2(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    owed: dict[str, int] = {}
    down: set[str] = set()
    wire = wire_only(records)
    listing: dict[str, int] = {}  # wire-only: a first page asked since the list_changed
    for record in records:
        server = record.get("server")
        if wire and _first_page(record) and server in owed:
            listing[server] = owed[server]
        elif wire and record.kind in ("list_done", "list_failed") and server in listing:
            owed.pop(server, None)  # the host listed anew: the wire's view of a refresh
            del listing[server]
        elif wire and record.kind == "sent" and record.get("method") == "close":
            owed.pop(server, None)  # the session ended: no refresh is owed on it
        if wire and record.kind == "disconnect":
            owed.pop(server, None)
        if record.kind == "list_changed" and server not in down:
            owed.setdefault(server, record.line)
        elif record.kind == "refresh_outcome":
            owed.pop(server, None)
        elif record.kind == "disconnect":
            down.add(server)
        elif record.kind == "reconnect":
            down.discard(server)
        elif record.kind == "reconfigure":  # SPEC §3.7: gone, or a new session that lists
            for name in _names(record, "removed"):
                owed.pop(name, None)
            down -= _names(record, "added") | _names(record, "changed")
        elif record.kind == "close":
            owed.clear()  # LIVE-2 is about an open host (SPEC §3.6)
        elif record.kind == "end" and owed:
            server, line = min(owed.items(), key=lambda item: item[1])
            expected = f"a refresh of {server!r} after its list_changed"
            yield TraceViolation("LIVE-2", line, expected, "none by the end")


def _live_3(records: list[TraceRecord]) -> Iterator[TraceViolation]:
    pending: dict[str, tuple[str, int]] = {}  # server -> (stage, line of its stream_ended)
    server_of: dict[Any, str] = {}  # call_id -> the server its tools/call went to
    wire = wire_only(records)
    for record in records:
        server = record.get("server")
        stage = pending.get(server, ("", 0))[0]  # pragma: no mutate - its line is not read
        if record.kind == "sent" and record.get("method") == "tools/call":
            server_of[record.get("call_id")] = server
        if wire and record.kind in ("list_done", "list_failed") and stage == "listing":
            del pending[server]  # wire-only: the new listing's answer stands for the refresh
        elif wire and record.kind == "sent" and record.get("method") == "close":
            pending.pop(server, None)  # the session ended
        elif record.kind == "stream_ended":
            pending[server] = ("ended", pending.get(server, ("", record.line))[1])
        elif record.kind == "relisten" and stage:
            pending[server] = ("listening", pending[server][1])
        elif record.kind == "session_expired" and server_of.get(record.get("call_id")) in pending:
            # SPEC §8.13: the host opened a new session, which listens anew (the model's
            # ``new_session``); its first listing and refresh_outcome are still owed.
            expired = server_of[record.get("call_id")]
            pending[expired] = ("listening", pending[expired][1])
        elif stage == "listening" and _first_page(record):
            pending[server] = ("listing", pending[server][1])
        elif record.kind == "refresh_outcome" and stage == "listing":
            del pending[server]
        elif record.kind == "disconnect":
            pending.pop(server, None)  # a new session listens anew
        elif record.kind == "reconfigure":  # gone, or a new session (SPEC §3.7)
            for name in _names(record, "removed") | _names(record, "changed"):
                pending.pop(name, None)
        elif record.kind == "close":
            pending.clear()  # LIVE-3 is about an open host (SPEC §3.6)
        elif record.kind == "end" and pending:
            server, (_, line) = min(pending.items(), key=lambda item: item[1][1])
            expected = f"{server!r} listened to again and refreshed after its stream ended"
            yield TraceViolation("LIVE-3", line, expected, "none by the end")


_MONITORS = (
    _inv_1,
    _inv_3,
    _inv_4,
    _inv_5,
    _inv_7,
    _inv_8,
    _inv_9,
    _inv_10,
    _inv_12,
    _inv_14,
    _inv_16,
    _live_1,
    _live_2,
    _live_3,
)
_WIRE_MONITORS = (_inv_7, _live_2, _live_3)
"""The monitors of :data:`WIRE_DECIDABLE`, in its order."""


_WIRE_SIDE = frozenset(
    {
        "sent",
        "list_page",
        "list_done",
        "list_failed",
        "list_changed",
        "stream_ended",
        "relisten",
        "call_responded",
        "call_failed",
        "task_created",
        "task_status",
        "session_expired",
    }
)
"""The kinds a tap writes that a host writes too (SPEC §14.6): in a merge, the wire's
record of a tapped server stands and the host's is left out."""


def merge_traces(host: list[TraceRecord], wires: list[list[TraceRecord]]) -> list[dict[str, Any]]:
    """One trace of a host and the taps in front of some of its servers (SPEC §14.6).

    The host's header and records, its wire-side ones of the tapped servers left out; the
    taps' records in their place, each ``tools/call`` named by the host's call (the k-th
    the host sent to that server's tool is the k-th on its wire), each ``list_done``
    carrying the host's reading of the listing when the host wrote one for it; all in the
    order of their ``at`` (one clock: the machine's), each file's own order kept."""
    if not host or wire_only(host):
        raise TraceError(1, 'the first trace of a merge is the host\'s (no "side": "wire")')
    for wire in wires:
        if not wire_only(wire):
            raise TraceError(1, 'a tap\'s trace has "side": "wire" in its header')
    tapped: dict[str, list[list[TraceRecord]]] = {}
    # A server's sessions (a file each) in the order they began, whatever the order given.
    for wire in sorted(wires, key=lambda w: next((r.get("at") for r in w[1:2]), 0.0) or 0.0):
        for server in wire[0].get("servers", []):
            tapped.setdefault(server, []).append([r for r in wire[1:] if r.kind != "end"])
    untimed = [r for r in host[1:] if r.kind != "end" and not isinstance(r.get("at"), int | float)]
    if untimed:
        raise TraceError(
            untimed[0].line, 'a host record without "at": write the trace with a clock'
        )
    server_of: dict[str, str] = {}  # the host's call -> the server its tools/call went to
    host_calls: dict[tuple[str, str], list[str]] = {}
    host_listings: dict[str, list[Any]] = {}
    kept: list[dict[str, Any]] = []
    # A host that writes no `sent` of a tapped server (the model stub, §14.7, cannot see
    # the wire) names its calls by their `call` records: mcp__SERVER__TOOL, in order.
    offered = _offered_calls(host, tapped)
    for record in host[1:]:
        server, call_id = record.get("server"), record.get("call_id")
        if record.kind == "sent" and record.get("method") == "tools/call" and server in tapped:
            server_of[call_id] = server
            host_calls.setdefault((server, record.get("detail", "")), []).append(call_id)
        if record.kind == "list_done" and server in tapped and "tools" in record.fields:
            host_listings.setdefault(server, []).append(record.get("tools"))
        mine = server if "server" in record.fields else server_of.get(call_id)
        if record.kind in _WIRE_SIDE and mine in tapped:
            continue
        if record.kind != "end":
            kept.append(dict(record.fields))
    for key, calls in offered.items():
        host_calls.setdefault(key, calls)
    by_call = {server for server, _ in offered}
    streams = [kept]
    for server, sessions in tapped.items():
        listings = host_listings.get(server, [])
        streams.append(_renamed(server, sessions, host_calls, listings, server in by_call))
    merged = [dict(host[0].fields)]
    merged[0]["wire"] = sorted(tapped)
    merged.extend(_by_time(streams))
    merged.append({"kind": "end"})
    return merged


def _offered_calls(
    host: list[TraceRecord], tapped: Mapping[str, object]
) -> dict[tuple[str, str], list[str]]:
    """(server, tool) -> the host's calls of it in the order of their `call` records, for
    the tapped servers the host wrote no `sent` `tools/call` of (SPEC §14.6, §14.7)."""
    sending = {
        r.get("server") for r in host if r.kind == "sent" and r.get("method") == "tools/call"
    }
    servers = sorted((s for s in tapped if s not in sending), key=len, reverse=True)
    calls: dict[tuple[str, str], list[str]] = {}
    for record in host:
        name = record.get("name")
        if record.kind != "call" or not isinstance(name, str):
            continue
        for server in servers:  # the longest name that fits: a server's name may hold __
            prefix = f"mcp__{server}__"
            if name.startswith(prefix):
                key = (server, name.removeprefix(prefix))
                calls.setdefault(key, []).append(record.get("call_id"))
                break
    return calls


def _renamed(
    server: str,
    sessions: list[list[TraceRecord]],
    host_calls: Mapping[tuple[str, str], list[str]],
    listings: list[Any],
    by_call: bool = False,
) -> list[dict[str, Any]]:
    """A server's sessions on the wire, one after the other, with the host's call ids and
    listing readings (SPEC §14.6); a session's request ids are its own. ``by_call``: the
    host's calls are named by their ``call`` records, so a ``tools/call`` of a tool after
    a ``session_expired`` of that tool's call is that call's resend."""
    taken: dict[tuple[str, str], int] = {}
    refused: dict[tuple[str, str], list[str]] = {}  # refused (404), not yet sent again
    tool_of: dict[str, tuple[str, str]] = {}  # the host's call -> (server, tool)
    done = 0
    out: list[dict[str, Any]] = []
    for session in sessions:
        names: dict[str, str] = {}  # the wire's call id -> the host's
        for record in session:
            wire_id = record.get("call_id")
            key = (server, record.get("detail", ""))
            sent = record.kind == "sent" and record.get("method") == "tools/call"
            if by_call and sent and wire_id and refused.get(key):
                names[wire_id] = refused[key].pop(0)  # its resend: the pairing stays
            fields, done = _named(
                server,
                record,
                names=names,
                taken=taken,
                host_calls=host_calls,
                listings=listings,
                done=done,
            )
            if fields["kind"] == "sent" and fields.get("method") == "tools/call":
                tool_of[fields["call_id"]] = key
            if by_call and fields["kind"] == "session_expired" and fields["call_id"] in tool_of:
                refused.setdefault(tool_of[fields["call_id"]], []).append(fields["call_id"])
            out.append(fields)
    return out


def _named(
    server: str,
    record: TraceRecord,
    *,
    names: dict[str, str],
    taken: dict[tuple[str, str], int],
    host_calls: Mapping[tuple[str, str], list[str]],
    listings: list[Any],
    done: int,
) -> tuple[dict[str, Any], int]:
    """One wire record under the host's names; ``done``: the listings seen so far."""
    fields = dict(record.fields)
    call_id = fields.get("call_id")
    if record.kind == "sent" and fields.get("method") == "tools/call" and call_id:
        if call_id in names:  # named already: a refused call's resend
            fields["call_id"] = names[call_id]
            return fields, done
        key = (server, fields.get("detail", ""))
        index = taken.get(key, 0)
        taken[key] = index + 1
        calls = host_calls.get(key, [])
        names[call_id] = calls[index] if index < len(calls) else f"{server}#{call_id}"
    if isinstance(call_id, str):
        fields["call_id"] = names.get(call_id, f"{server}#{call_id}")
    if record.kind == "list_done":
        if done < len(listings):
            fields["tools"] = listings[done]
        done += 1
    return fields, done


def _by_time(streams: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The streams' records by ``at``, each stream's order kept (a record without ``at``
    goes with the one before it)."""
    keyed: list[tuple[float, int, int, dict[str, Any]]] = []
    for number, stream in enumerate(streams):
        last = float("-inf")
        for index, record in enumerate(stream):
            at = record.get("at")
            last = max(last, float(at)) if isinstance(at, int | float) else last
            keyed.append((last, number, index, record))
    keyed.sort(key=lambda item: (item[0], item[1] != 0, item[1], item[2]))
    return [record for *_, record in keyed]
