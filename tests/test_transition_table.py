"""The transition table of SPEC §3.3 as rendered from effects (``model/table.py``): one row
per event kind in the model's order, each effect once and sorted, "(never seen)" for a
kind no run showed. The full table against SPEC.md is checked in ``test_explorer.py``
(slow: it explores the standard suite); this pins the rendering alone, cheaply."""

from __future__ import annotations

from mcpbind.model.rules import GUARDS
from mcpbind.model.table import BEGIN, END, render
from mcpbind.model.values import EVENT_TYPES


def test_every_event_kind_has_one_row_in_the_models_order_with_its_guard():
    lines = render([]).split("\n")
    assert lines[0] == BEGIN
    assert lines[-1] == END
    assert lines[1:3] == [
        "| event | enabled when | effects seen on the standard suite |",
        "|---|---|---|",
    ]
    rows = lines[3:-1]
    assert rows == [f"| `{t.kind}` | {GUARDS[t].text} | (never seen) |" for t in EVENT_TYPES]


def test_effects_of_a_kind_are_shown_once_each_sorted_and_other_kinds_stay_unseen():
    first, second = EVENT_TYPES[0], EVENT_TYPES[1]
    table = render([(first.kind, "b"), (first.kind, "a"), (first.kind, "a"), (second.kind, "c")])
    rows = table.split("\n")[3:-1]
    assert rows[0] == f"| `{first.kind}` | {GUARDS[first].text} | a<br>b |"
    assert rows[1] == f"| `{second.kind}` | {GUARDS[second].text} | c |"
    assert all(row.endswith("| (never seen) |") for row in rows[2:])
    assert len(rows) == len(EVENT_TYPES)
