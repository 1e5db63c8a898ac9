"""SPEC §14.2 (INV-12, INV-16) in ``mcpbind trace check``: a call pending at the close,
or in flight on a server a reconfiguration removes, ends ``cancelled``, and with no
other status, whatever the trace writes: one of the other statuses, or one no host
writes (mutation seed 91: ``status != "cancelled"`` made ``> "cancelled"`` survived,
since every status the host writes sorts after it)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from trace_records import header

from mcpbind.model.texts import CALL_STATUSES
from mcpbind.model.trace import check_trace, parse_trace

HEADER = header()
PENDING_AT_CLOSE = [
    {"kind": "call", "step": 0, "call_id": "c1", "name": "mcp__s__t"},
    {"kind": "sent", "server": "s", "method": "tools/call", "call_id": "c1"},
    {"kind": "close"},
    {"kind": "sent", "server": "s", "method": "notifications/cancelled", "call_id": "c1"},
]
IN_FLIGHT_ON_A_REMOVED_SERVER = [
    {"kind": "call", "step": 0, "call_id": "c1", "name": "mcp__s__t"},
    {"kind": "sent", "server": "s", "method": "tools/call", "call_id": "c1"},
    {"kind": "reconfigure", "added": [], "removed": ["s"], "changed": [], "server_options": {}},
    {"kind": "sent", "server": "s", "method": "notifications/cancelled", "call_id": "c1"},
]
OTHER_STATUSES = [s for s in CALL_STATUSES if s != "cancelled"] + ["aborted", ""]


def invariants_at(
    status: str, before: list[dict[str, Any]] = PENDING_AT_CLOSE
) -> set[tuple[str, int]]:
    records: list[dict[str, Any]] = [
        HEADER,
        *before,
        {"kind": "result", "call_id": "c1", "status": status},
        {"kind": "end"},
    ]
    parsed = parse_trace([json.dumps(r) for r in records])
    return {(v.invariant, v.line) for v in check_trace(parsed)}


def test_a_call_pending_at_the_close_or_on_a_removed_server_that_ends_cancelled_conforms():
    assert invariants_at("cancelled") == set()
    assert invariants_at("cancelled", IN_FLIGHT_ON_A_REMOVED_SERVER) == set()


@pytest.mark.parametrize("status", OTHER_STATUSES)
def test_a_call_pending_at_the_close_that_ends_otherwise_is_inv_12_at_its_result(status):
    assert ("INV-12", 6) in invariants_at(status)


@pytest.mark.parametrize("status", OTHER_STATUSES)
def test_a_call_in_flight_on_a_removed_server_that_ends_otherwise_is_inv_16_at_its_result(status):
    assert ("INV-16", 6) in invariants_at(status, IN_FLIGHT_ON_A_REMOVED_SERVER)


def test_fields_a_records_kind_does_not_have_change_no_verdict():
    """A monitor reads a record by its kind: a ``call`` record that also carries the
    ``server`` and ``method`` of a send is not a send (mutation seed 103: INV-16's
    ``kind == "sent"`` made ``<=`` took it for one, and every kind the host writes with a
    ``method`` is ``sent``)."""
    call = IN_FLIGHT_ON_A_REMOVED_SERVER[0]
    reconfigure = IN_FLIGHT_ON_A_REMOVED_SERVER[2]
    plain = [call, reconfigure]
    stray = [{**call, "server": "s", "method": "tools/call"}, reconfigure]
    for status in ("ok", "cancelled"):
        assert invariants_at(status, stray) == invariants_at(status, plain)
    assert ("INV-16", 6) in invariants_at("ok", IN_FLIGHT_ON_A_REMOVED_SERVER)
