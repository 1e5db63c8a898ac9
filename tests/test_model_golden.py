"""The model's and the trace checkers' exact outputs, pinned (issue 33: tests that pin
a module's outputs for every input shape, so that any change of behaviour shows up as a
changed row, not only the changes a hand-written case foresaw).

* For cuts of every part of the standard suite (both policies), the reachable graph of the
  standard rules, its states numbered breadth first with each state's events taken in the
  order of their text: the number of states and transitions and a digest of every
  transition (the event, the outputs, the target's number, and what
  :func:`check_transition` and :func:`check_state` say: nothing, under these rules).
* For every model mutant on its smallest bound (``test_explore_small.SMALLEST``), the text
  of every violation met up to two events past its shortest failing trace.
* For each conforming hand-written trace of ``tests/test_trace_strict.py``, every trace one
  edit away (one record dropped, doubled, or swapped with the next; one field of one
  record changed or dropped): the id and line of each violation :func:`check_trace`
  reports and of :func:`refine`'s divergence (or ``refines``, or why the trace cannot be
  parsed or refined), and per trace a digest of all their texts.

The tables are the block below between the ``GENERATED`` markers, written by
``scripts/update-golden``: review its diff like any change of behaviour. They live in this
file, not in a data file beside it, because ``scripts/mutation`` keeps every test file's
coverage only while the tests' data files are unchanged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from test_explore_small import SMALLEST, part
from test_trace_strict import (
    ANSWERED,
    CANCELLED,
    EXPIRED,
    PAGED,
    RECONFIGURED,
    RELISTED_IN_PAGES,
    RELISTENED,
)

from mcpbind.model.bounds import Bound
from mcpbind.model.explore import format_event
from mcpbind.model.invariants import check_state, check_transition
from mcpbind.model.mutants import MUTANTS
from mcpbind.model.refine import NotRefinable, refine
from mcpbind.model.rules import STANDARD, Rules
from mcpbind.model.trace import TraceError, check_trace, parse_trace

# --- the model's graphs --------------------------------------------------------------------

#: The cuts whose graphs are pinned: (policy, part, servers, calls), one step each.
CUTS: list[tuple[str, str, int, int]] = [
    *(
        (policy, name, 1, 1)
        for policy in ("frozen", "revalidate")
        for name in (
            "catalogs",
            "calls",
            "approval",
            "sessions",
            "reconfigure",
            "lazy",
            "retry",
            "progress",
            "tasks",
            "resources",
        )
    ),
    *(
        ("revalidate", name, 1, 2)
        for name in ("calls", "approval", "retry", "progress", "tasks", "resources")
    ),
    ("frozen", "calls", 2, 1),
    ("revalidate", "calls", 2, 1),
]


def cut_name(cut: tuple[str, str, int, int]) -> str:
    policy, name, servers, calls = cut
    return f"{policy}/{name}/{servers}s{calls}c"


def graph(
    bound: Bound, rules: Rules = STANDARD, depth: int | None = None
) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """One line per transition of the graph reachable from the initial state (up to
    ``depth`` events), states numbered breadth first, each state's events in the order
    of their text: ``source event -> target | outputs`` and the violations found."""
    start = rules.initial(bound)
    first = start.state
    yield f"initial {start.outputs!r}", check_state(first)
    number = {first: 0}
    order = [first]
    level = [0]
    i = 0
    while i < len(order):
        state, at = order[i], level[i]
        if depth is None or at < depth:
            for event in sorted(rules.enabled(state), key=format_event):
                t = rules.apply(state, event)
                if t.state not in number:
                    number[t.state] = len(order)
                    order.append(t.state)
                    level.append(at + 1)
                found = check_transition(state, event, t) + check_state(t.state)
                yield f"{i} {format_event(event)} -> {number[t.state]} | {t.outputs!r}", found
        i += 1


def graph_row(cut: tuple[str, str, int, int]) -> dict[str, Any]:
    policy, name, servers, calls = cut
    digest = hashlib.sha256()
    transitions = states = 0
    for line, found in graph(part(name, policy, servers=servers, calls=calls).bound):
        digest.update(f"{line} | {found!r}\n".encode())
        if " -> " in line:
            transitions += 1
            states = max(states, int(line.split(" -> ", 1)[1].split(" ", 1)[0]))
    return {"states": states + 1, "transitions": transitions, "digest": digest.hexdigest()}


def mutant_violations(name: str) -> list[str]:
    """Every violation (id and text) met on the mutant's smallest bound, up to two events
    past its shortest failing trace."""
    m = next(m for m in MUTANTS if m.name == name)
    policy, servers, calls, length = SMALLEST[name]
    bound = part(m.part, policy, servers=servers, calls=calls).bound
    found: set[str] = set()
    for _, violations in graph(bound, m, depth=length + 2):
        found.update(f"{inv}: {why}" for inv, why in violations)
    return sorted(found)


# --- the trace checkers' verdicts ----------------------------------------------------------

BASES: dict[str, list[dict[str, Any]]] = {
    "answered": ANSWERED,
    "cancelled": CANCELLED,
    "expired": EXPIRED,
    "relistened": RELISTENED,
    "paged": PAGED,
    "relisted_in_pages": RELISTED_IN_PAGES,
    "reconfigured": RECONFIGURED,
}

STATUSES = ["ok", "error", "failed", "cancelled", "timed_out", "denied", "unavailable"]


def changed(field: str, value: Any) -> Any:
    """Another value of the same field, of the same shape where one is near."""
    if field == "status":
        return STATUSES[(STATUSES.index(value) + 1) % len(STATUSES)] if value in STATUSES else "ok"
    if field == "server":
        return "x" if value != "x" else "s"
    if field == "method":
        return "tools/list" if value != "tools/list" else "tools/call"
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, list):
        return value[:-1] if value else ["z"]
    if isinstance(value, dict):
        return {}
    return f"{value}z"


def perturbed(records: list[dict[str, Any]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Every trace one small edit away from ``records``; the header and the end kept."""
    inner = range(1, len(records) - 1)
    for i in inner:
        yield f"drop {i + 1}", records[:i] + records[i + 1 :]
        yield f"double {i + 1}", records[: i + 1] + records[i:]
        if i + 1 in inner:
            yield (
                f"swap {i + 1}-{i + 2}",
                [*records[:i], records[i + 1], records[i], *records[i + 2 :]],
            )
        for field, value in records[i].items():
            if field == "kind":
                continue
            other = changed(field, value)
            yield (
                f"{i + 1}.{field}={json.dumps(other)}",
                [*records[:i], {**records[i], field: other}, *records[i + 1 :]],
            )
            rest = {k: v for k, v in records[i].items() if k != field}
            yield f"{i + 1}.{field} dropped", [*records[:i], rest, *records[i + 1 :]]


def verdict(records: list[dict[str, Any]]) -> tuple[str, str]:
    """The short verdict (ids and lines) and its whole text."""
    try:
        parsed = parse_trace([json.dumps(r) for r in records])
    except TraceError as e:
        return f"parse@{e.line}", str(e)
    checked = check_trace(parsed)
    try:
        violation = refine(parsed).violation
    except NotRefinable as e:
        refined, text = "not refinable", str(e)
    else:
        refined = "refines" if violation is None else f"{violation.invariant}@{violation.line}"
        text = str(violation)
    short = " ".join(f"{v.invariant}@{v.line}" for v in checked) or "ok"
    return f"{short} | {refined}", "\n".join([*map(str, checked), text])


def trace_verdicts(base: str) -> dict[str, str]:
    """Each edit's short verdict, and under ``"digest"`` that of every verdict's text."""
    records = BASES[base]
    rows = {"as written": verdict(records), **{n: verdict(r) for n, r in perturbed(records)}}
    digest = hashlib.sha256("\n".join(f"{n}: {t}" for n, (_, t) in rows.items()).encode())
    return {**{n: short for n, (short, _) in rows.items()}, "digest": digest.hexdigest()}


def tables() -> dict[str, Any]:
    return {
        "graphs": {cut_name(cut): graph_row(cut) for cut in CUTS},
        "mutants": {m.name: mutant_violations(m.name) for m in MUTANTS},
        "traces": {base: trace_verdicts(base) for base in BASES},
    }


# --- the tests -----------------------------------------------------------------------------

BEGIN = "# BEGIN GENERATED by scripts/update-golden"
END = "# END GENERATED"

# BEGIN GENERATED by scripts/update-golden
TABLES: dict[str, Any] = json.loads(
    r"""
{
 "graphs": {
  "frozen/catalogs/1s1c": {
   "states": 381,
   "transitions": 3014,
   "digest": "3b509e786074bc6f301c99ce84b4f1cb348562d911a52fb07793b515c3ed066b"
  },
  "frozen/calls/1s1c": {
   "states": 114,
   "transitions": 508,
   "digest": "6cb8651b69723f1644565a41f7b4b417637535ab16e44e432d62e2e25da61dcd"
  },
  "frozen/approval/1s1c": {
   "states": 148,
   "transitions": 732,
   "digest": "b8f91aec8c21ec2938bd8c905ec7a003c5b85f50dfc0f00e661153d4d675401e"
  },
  "frozen/sessions/1s1c": {
   "states": 512,
   "transitions": 3387,
   "digest": "b714f6bbc1a1b6cb1dd685433f9ea499c31251234093473d0dc6666981f96446"
  },
  "frozen/reconfigure/1s1c": {
   "states": 6196,
   "transitions": 37430,
   "digest": "2806ebdaf1538d17dde73d2d474f7a97f0d7caf6729df54abeb71dbbe0dc0ffc"
  },
  "frozen/lazy/1s1c": {
   "states": 119,
   "transitions": 820,
   "digest": "726f31af16e80e0f5d278f8d42a2b6f630f4a46bc1cab2f5069ea830a79725b4"
  },
  "frozen/retry/1s1c": {
   "states": 171,
   "transitions": 954,
   "digest": "afb324a4eb9c3e15e5e73b43fc83e589f58764c8167e32b6800f7394d15bcb12"
  },
  "frozen/progress/1s1c": {
   "states": 114,
   "transitions": 508,
   "digest": "6cb8651b69723f1644565a41f7b4b417637535ab16e44e432d62e2e25da61dcd"
  },
  "frozen/tasks/1s1c": {
   "states": 162,
   "transitions": 978,
   "digest": "c3df718aec5b1f3c314948b23d8d8d665e558122813b4fb3728f54fda12db995"
  },
  "frozen/resources/1s1c": {
   "states": 114,
   "transitions": 508,
   "digest": "f36c05141f9787d36748162e734e7ed7cc3cd32f1cff0a8e933588f54044cadc"
  },
  "revalidate/catalogs/1s1c": {
   "states": 381,
   "transitions": 3014,
   "digest": "8ac9e10c9fdc57e3965002213b605c6e2079368cbd8b39bd17d1d467540b196f"
  },
  "revalidate/calls/1s1c": {
   "states": 113,
   "transitions": 501,
   "digest": "4b87a9507c4e20e44edb2238fb356faa99fd9438b83229bc613cdfd2af8a0169"
  },
  "revalidate/approval/1s1c": {
   "states": 147,
   "transitions": 725,
   "digest": "f2303a74ef0056a4951ed5b1ea1d44e929254395bcdf0112912e6f908aeaa4f9"
  },
  "revalidate/sessions/1s1c": {
   "states": 510,
   "transitions": 3369,
   "digest": "c3919fc69fe2f50666220f9852244169866e675400d2cf438e6e0b5e7188661d"
  },
  "revalidate/reconfigure/1s1c": {
   "states": 6028,
   "transitions": 36292,
   "digest": "371f375e52b7d0c5962191ba97ec65ef2bd2e28d6bfe941502390c5841c5c382"
  },
  "revalidate/lazy/1s1c": {
   "states": 119,
   "transitions": 820,
   "digest": "70541ddd1e3b12233254b0115dd474e3970f3043e238bdcde64ce29d873b8ec3"
  },
  "revalidate/retry/1s1c": {
   "states": 169,
   "transitions": 938,
   "digest": "717d1a2250399fbb397bd4309145a1f90ea5aec8b3b7290ec45fe26a4ecd1498"
  },
  "revalidate/progress/1s1c": {
   "states": 113,
   "transitions": 501,
   "digest": "4b87a9507c4e20e44edb2238fb356faa99fd9438b83229bc613cdfd2af8a0169"
  },
  "revalidate/tasks/1s1c": {
   "states": 160,
   "transitions": 958,
   "digest": "c5260fb84dc760dd4d92fbdece8d607bee0dd6ae74fabecb748d819f4a7fd149"
  },
  "revalidate/resources/1s1c": {
   "states": 113,
   "transitions": 501,
   "digest": "31406cf62215a1f9fe9b4c7dedb46ee69678914e9a5e1550b498d0370af2a422"
  },
  "revalidate/calls/1s2c": {
   "states": 238,
   "transitions": 1558,
   "digest": "0b98fe83375418713e37c1925a077f90b296efebb76b017cbd96bb0022426fbe"
  },
  "revalidate/approval/1s2c": {
   "states": 502,
   "transitions": 3964,
   "digest": "8be6810c3a068895a9996cb58b7242bca15dc80bb48946d9a5256560ee3e91d0"
  },
  "revalidate/retry/1s2c": {
   "states": 751,
   "transitions": 6817,
   "digest": "8abce780c9effdf920c3d493fb4c1df733f08214c02278089fb1b7868b948de0"
  },
  "revalidate/progress/1s2c": {
   "states": 238,
   "transitions": 1558,
   "digest": "0b98fe83375418713e37c1925a077f90b296efebb76b017cbd96bb0022426fbe"
  },
  "revalidate/tasks/1s2c": {
   "states": 778,
   "transitions": 8436,
   "digest": "381292e4aff4da992c5659e51ce705c3ff285def4fb0892995b6d3401c3a7ec9"
  },
  "revalidate/resources/1s2c": {
   "states": 238,
   "transitions": 1557,
   "digest": "581dabb50db2660f62529b1b22933c1bca917ea2e8cd74cf64fbc34357c8c034"
  },
  "frozen/calls/2s1c": {
   "states": 1097,
   "transitions": 7219,
   "digest": "14a28544a2e15f15e4d24260d4e37d076d56973c51738d466bfc873053fde154"
  },
  "revalidate/calls/2s1c": {
   "states": 1083,
   "transitions": 7102,
   "digest": "b6a086d50c2a0be3a4bab126cb7674944208b8868b3883f98bb919c7d074b39f"
  }
 },
 "mutants": {
  "bump_generation_when_unchanged": [
   "INV-1: generation moved 1->2 with 0 installed refresh(es), 0 removal(s) of a replaced catalog and 0 publication(s)"
  ],
  "resolve_through_live_registry": [
   "INV-2: c1 runs mcp__git_hub__read as Binding(name='mcp__git_hub__read', source='mcp:git.hub', server='git.hub', remote_name='read', read_only=True, source_generation=2, spec='', resource=False), but step 0 captured Binding(name='mcp__git_hub__read', source='mcp:git.hub', server='git.hub', remote_name='read', read_only=True, source_generation=1, spec='', resource=False)",
   "INV-2: c1: mcp__git_hub__search ended unsupported, but step 0 captured Binding(name='mcp__git_hub__search', source='mcp:git.hub', server='git.hub', remote_name='search', read_only=False, source_generation=1, spec='', resource=False)"
  ],
  "snapshot_by_reference": [
   "INV-2: step 0 changed after it was sampled"
  ],
  "install_page_by_page": [
   "INV-3: mcp:git.hub installed ['search'], which no whole listing yields",
   "INV-3: mcp:git.hub published by list_page, not by the end of its listing"
  ],
  "drop_invalid_tools": [
   "INV-3: mcp:git.hub installed ['read'], which no whole listing yields",
   "INV-3: mcp:git.hub published from a listing with an invalid tool"
  ],
  "install_excluded_tool": [
   "INV-3: git.hub left out ['research'] but reported []",
   "INV-3: mcp:git.hub installed ['read', 'research', 'write'], which no whole listing yields"
  ],
  "reject_excludable_listing": [
   "INV-3: git.hub: a listing whose tools are all valid was rejected: invalid catalog from server 'git.hub': tool 'research': ; the previous catalog stays installed"
  ],
  "deliver_late_answer": [
   "INV-4: second terminal result for c1 (ok) after it had ended"
  ],
  "accept_reused_call_id": [
   "INV-4: reused call_id c1 was accepted",
   "INV-4: second terminal result for c1 (unsupported) after it had ended"
  ],
  "shadow_builtin": [
   "INV-5: names held twice: ['mcp__git_hub__admin']"
  ],
  "rename_on_every_refresh": [
   "INV-6: git_hub/search was renamed from mcp__git_hub__search_ec62fe60a615 to mcp__git_hub__search"
  ],
  "forget_cancel_notification": [
   "INV-12: git.hub got cancellations [] at close, owed [('c1', 'notifications/cancelled')]",
   "INV-7: c1: sent [] to cancel it, owed ['notifications/cancelled']"
  ],
  "cancel_after_end_ends_again": [
   "INV-4: second terminal result for c1 (cancelled) after it had ended"
  ],
  "leave_calls_on_disconnect": [
   "INV-7: cancellation sent to disconnected server git.hub",
   "INV-8: c1 awaits a late answer from disconnected git.hub",
   "INV-8: c1 to disconnected git.hub is still sent",
   "INV-8: notifications/cancelled sent to disconnected git.hub"
  ],
  "ignore_exclusive_lane": [
   "INV-9: exclusive calls c1 and c2 in flight together"
  ],
  "stuck_lane": [],
  "forget_queued_refresh": [],
  "skip_approval": [
   "INV-10: c1 became sent without an approval (call)"
  ],
  "deny_sends": [
   "INV-10: c1 became sent without an approval (deny)",
   "INV-10: c1 ended failed while it waited for approval",
   "INV-10: c1 ended unavailable while it waited for approval"
  ],
  "time_out_while_approving": [
   "INV-10: c1 ended timed_out while it waited for approval"
  ],
  "fail_fast_when_dormant": [
   "INV-11: c1 to lazy git.hub failed fast",
   "INV-11: tools/call sent to git.hub before its first refresh ended"
  ],
  "send_while_starting": [
   "INV-11: tools/call sent to git.hub before its first refresh ended"
  ],
  "strand_waiters_on_lost_start": [
   "INV-11: c1 waits for git.hub to start, which is not starting"
  ],
  "forget_cancellations_at_close": [
   "INV-12: git.hub got cancellations [] at close, owed [('c1', 'notifications/cancelled')]",
   "INV-7: c1: sent [] to cancel it, owed ['notifications/cancelled']"
  ],
  "leave_unsent_calls_at_close": [
   "INV-12: ['c2'] still pending after close",
   "INV-12: c2 (queued) ended [] at close",
   "INV-8: c2 to disconnected git.hub is still queued"
  ],
  "accept_calls_after_close": [
   "INV-12: call after close changed the state"
  ],
  "resend_at_once": [
   "INV-13: c1 was rejected unrun and is sent, not retrying"
  ],
  "retry_every_rejection": [
   "INV-13: c1 was rejected twice and is retrying"
  ],
  "retry_on_a_stale_refresh": [
   "INV-13: c1 would retry on a refresh that started before its rejection"
  ],
  "uncapped_progress": [],
  "cancel_task_with_notification": [
   "INV-12: git.hub got cancellations [('c1', 'notifications/cancelled')] at close, owed [('c1', 'tasks/cancel')]",
   "INV-7: c1: sent ['notifications/cancelled'] to cancel it, owed ['tasks/cancel']"
  ],
  "result_from_late_task_status": [
   "INV-4: second terminal result for c1 (ok) after it had ended"
  ],
  "release_lane_for_task": [
   "INV-9: exclusive calls c1 and c2 in flight together"
  ],
  "refresh_before_relisten": [],
  "relisten_without_refresh": [],
  "expired_call_resent_at_once": [
   "INV-14: c1 was refused unrun at an expiry and is sent, not waiting"
  ],
  "expired_call_resent_every_time": [
   "INV-14: c1 was refused unrun twice and is retrying"
  ],
  "expiry_keeps_other_calls": [
   "INV-14: c1 stayed in flight on the expired session of git.hub",
   "INV-14: c2 stayed in flight on the expired session of git.hub"
  ],
  "reconfigure_in_two_generations": [
   "INV-15: the reconfiguration published [('mcp:b', ()), ('mcp:d', ())], expected the removals of ['mcp:b']",
   "INV-15: the reconfiguration published [('mcp:d', ())], expected the removals of []",
   "INV-1: the reconfiguration moved G 1->3 with 2 publication(s)",
   "INV-1: the reconfiguration moved G 2->4 with 2 publication(s)",
   "INV-1: the reconfiguration moved G 3->5 with 2 publication(s)"
  ],
  "restart_unchanged_server": [
   "INV-15: a is replacing without its replacement's first refresh in flight",
   "INV-16: the reconfiguration touched unchanged a: ['close', 'tools/list']",
   "INV-16: the reconfiguration touched unchanged a: ['tools/list']"
  ],
  "drop_cancellation_on_removal": [
   "INV-16: b got cancellations [] at the reconfiguration, owed [('c1', 'notifications/cancelled')]",
   "INV-16: c got cancellations [] at the reconfiguration, owed [('c1', 'notifications/cancelled')]",
   "INV-7: c1: sent [] to cancel it, owed ['notifications/cancelled']"
  ],
  "empty_changed_catalog_at_once": [
   "INV-15: the reconfiguration published [('mcp:b', ()), ('mcp:c', ())], expected the removals of ['mcp:b']",
   "INV-15: the reconfiguration published [('mcp:c', ())], expected the removals of []"
  ],
  "keep_old_catalog_on_failed_replacement": [
   "INV-15: c's replacement failed (disconnected) and the old catalog stays",
   "INV-15: c's replacement failed (list_failed) and the old catalog stays"
  ],
  "send_to_removed_server": [
   "INV-16: c1 of absent b is sent",
   "INV-16: notifications/cancelled sent to absent b",
   "INV-16: tools/call sent to absent b",
   "INV-7: cancellation sent to disconnected server b",
   "INV-8: c1 to disconnected b is still sent",
   "INV-8: notifications/cancelled sent to disconnected b",
   "INV-8: tools/call sent to disconnected b"
  ],
  "read_through_live_resources": [
   "INV-2: c1: read_mcp_resource(docs, file:///a) ended unsupported, but step 0 captured Binding(name='read_mcp_resource(docs, file:///a)', source='mcp:docs', server='docs', remote_name='file:///a', read_only=True, source_generation=1, spec='', resource=True)"
  ],
  "publish_resources_apart": [
   "INV-1: generation moved 0->2 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 2 publication(s)",
   "INV-1: generation moved 2->4 with 1 installed refresh(es), 0 removal(s) of a replaced catalog and 2 publication(s)"
  ]
 },
 "traces": {
  "answered": {
   "as written": "ok | refines",
   "drop 2": "ok | LIVE-2@2",
   "double 2": "ok | LIVE-2@3",
   "swap 2-3": "ok | LIVE-2@2",
   "2.server=\"x\"": "ok | LIVE-2@2",
   "2.server dropped": "parse@2",
   "2.method=\"tools/call\"": "ok | INV-2@2",
   "2.method dropped": "parse@2",
   "drop 3": "INV-3@3 | INV-1@3",
   "double 3": "ok | REFINE@4",
   "swap 3-4": "INV-3@3 | INV-1@3",
   "3.server=\"x\"": "INV-3@4 | REFINE@3",
   "3.server dropped": "INV-3@4 | REFINE@3",
   "3.tools=[\"t\"]": "INV-3@4 | INV-3@4",
   "3.tools dropped": "ok | INV-1@4",
   "drop 4": "ok | INV-3@4",
   "double 4": "INV-1@5 INV-3@5 | INV-3@5",
   "swap 4-5": "INV-3@5 | INV-3@4",
   "4.generation=2": "INV-1@4 | INV-1@4",
   "4.generation dropped": "parse@4",
   "4.source=\"mcp:sz\"": "INV-3@4 | INV-3@4",
   "4.source dropped": "parse@4",
   "4.names=[\"mcp__s__r\"]": "ok | INV-3@4",
   "4.names dropped": "parse@4",
   "drop 5": "ok | INV-3@12",
   "double 5": "ok | INV-3@6",
   "swap 5-6": "ok | refines",
   "5.server=\"x\"": "ok | INV-3@5",
   "5.server dropped": "parse@5",
   "5.status=\"ok\"": "ok | INV-3@5",
   "5.status dropped": "parse@5",
   "5.generation=2": "ok | INV-3@5",
   "5.generation dropped": "ok | INV-3@5",
   "drop 6": "ok | REFINE@6",
   "double 6": "ok | refines",
   "swap 6-7": "ok | REFINE@6",
   "6.step=1": "ok | refines",
   "6.step dropped": "ok | refines",
   "drop 7": "INV-4@9 | INV-2@7",
   "double 7": "ok | INV-4@11",
   "swap 7-8": "ok | INV-2@7",
   "7.step=1": "ok | REFINE@7",
   "7.step dropped": "ok | refines",
   "7.call_id=\"az\"": "INV-4@10 INV-12@13 LIVE-1@13 | REFINE@9",
   "7.call_id dropped": "parse@7",
   "7.name=\"mcp__s__tz\"": "ok | INV-2@8",
   "7.name dropped": "parse@7",
   "drop 8": "ok | INV-2@8",
   "double 8": "ok | INV-2@9",
   "swap 8-9": "ok | INV-2@8",
   "8.server=\"x\"": "ok | INV-2@8",
   "8.server dropped": "parse@8",
   "8.method=\"tools/list\"": "ok | LIVE-2@8",
   "8.method dropped": "parse@8",
   "8.call_id=\"az\"": "ok | refines",
   "8.call_id dropped": "ok | refines",
   "8.detail=\"tz\"": "ok | INV-2@8",
   "8.detail dropped": "ok | INV-2@8",
   "drop 9": "ok | REFINE@9",
   "double 9": "ok | REFINE@10",
   "swap 9-10": "ok | REFINE@9",
   "9.call_id=\"az\"": "ok | REFINE@9",
   "9.call_id dropped": "ok | REFINE@9",
   "drop 10": "INV-12@12 LIVE-1@12 | LIVE-1@12",
   "double 10": "INV-4@11 | INV-4@11",
   "swap 10-11": "INV-12@11 | INV-12@11",
   "10.call_id=\"az\"": "INV-4@10 INV-12@13 LIVE-1@13 | INV-4@10",
   "10.call_id dropped": "parse@10",
   "10.status=\"error\"": "ok | REFINE@10",
   "10.status dropped": "parse@10",
   "10.text=\"whatever the server saidz\"": "ok | refines",
   "10.text dropped": "ok | refines",
   "drop 11": "ok | INV-12@11",
   "double 11": "ok | REFINE@12",
   "swap 11-12": "ok | INV-12@11",
   "drop 12": "ok | INV-12@12",
   "double 12": "INV-12@13 | INV-12@13",
   "12.server=\"x\"": "ok | INV-12@12",
   "12.server dropped": "parse@12",
   "12.method=\"tools/list\"": "ok | LIVE-2@12",
   "12.method dropped": "parse@12",
   "digest": "0353d0933b2888cc3fd18047f8fc7e33759321dafe7c832dcc4893a7309a5008"
  },
  "cancelled": {
   "as written": "ok | refines",
   "drop 2": "ok | LIVE-2@2",
   "double 2": "ok | LIVE-2@3",
   "swap 2-3": "ok | LIVE-2@2",
   "2.server=\"x\"": "ok | LIVE-2@2",
   "2.server dropped": "parse@2",
   "2.method=\"tools/call\"": "ok | INV-2@2",
   "2.method dropped": "parse@2",
   "drop 3": "INV-3@3 | INV-1@3",
   "double 3": "ok | REFINE@4",
   "swap 3-4": "INV-3@3 | INV-1@3",
   "3.server=\"x\"": "INV-3@4 | REFINE@3",
   "3.server dropped": "INV-3@4 | REFINE@3",
   "3.tools=[\"t\"]": "INV-3@4 | INV-3@4",
   "3.tools dropped": "ok | INV-1@4",
   "drop 4": "ok | INV-3@4",
   "double 4": "INV-1@5 INV-3@5 | INV-3@5",
   "swap 4-5": "INV-3@5 | INV-3@4",
   "4.generation=2": "INV-1@4 | INV-1@4",
   "4.generation dropped": "parse@4",
   "4.source=\"mcp:sz\"": "INV-3@4 | INV-3@4",
   "4.source dropped": "parse@4",
   "4.names=[\"mcp__s__r\"]": "ok | INV-3@4",
   "4.names dropped": "parse@4",
   "drop 5": "ok | INV-3@15",
   "double 5": "ok | INV-3@6",
   "swap 5-6": "ok | refines",
   "5.server=\"x\"": "ok | INV-3@5",
   "5.server dropped": "parse@5",
   "5.status=\"ok\"": "ok | INV-3@5",
   "5.status dropped": "parse@5",
   "5.generation=2": "ok | INV-3@5",
   "5.generation dropped": "ok | INV-3@5",
   "drop 6": "ok | REFINE@6",
   "double 6": "ok | refines",
   "swap 6-7": "ok | REFINE@6",
   "6.step=1": "ok | refines",
   "6.step dropped": "ok | refines",
   "drop 7": "INV-4@10 | INV-2@7",
   "double 7": "ok | INV-4@11",
   "swap 7-8": "ok | INV-2@7",
   "7.step=1": "ok | REFINE@7",
   "7.step dropped": "ok | refines",
   "7.call_id=\"az\"": "INV-4@11 INV-12@16 LIVE-1@16 | INV-7@10",
   "7.call_id dropped": "parse@7",
   "7.name=\"mcp__s__tz\"": "ok | INV-2@8",
   "7.name dropped": "parse@7",
   "drop 8": "ok | INV-2@11",
   "double 8": "ok | INV-2@9",
   "swap 8-9": "ok | refines",
   "8.server=\"x\"": "ok | INV-2@8",
   "8.server dropped": "parse@8",
   "8.method=\"tools/list\"": "ok | LIVE-2@8",
   "8.method dropped": "parse@8",
   "8.call_id=\"az\"": "ok | refines",
   "8.call_id dropped": "ok | refines",
   "8.detail=\"tz\"": "ok | INV-2@8",
   "8.detail dropped": "ok | INV-2@8",
   "drop 9": "ok | INV-7@9",
   "double 9": "ok | refines",
   "swap 9-10": "ok | INV-7@9",
   "9.call_id=\"az\"": "ok | INV-7@10",
   "9.call_id dropped": "parse@9",
   "drop 10": "INV-7@10 | INV-7@12",
   "double 10": "INV-7@11 | INV-7@11",
   "swap 10-11": "ok | refines",
   "10.server=\"x\"": "ok | INV-7@10",
   "10.server dropped": "parse@10",
   "10.method=\"tools/list\"": "INV-7@11 | LIVE-2@10",
   "10.method dropped": "parse@10",
   "10.call_id=\"az\"": "INV-7@11 | INV-7@10",
   "10.call_id dropped": "INV-7@11 | INV-7@10",
   "drop 11": "INV-12@15 LIVE-1@15 | LIVE-1@12",
   "double 11": "INV-4@12 | INV-4@12",
   "swap 11-12": "ok | refines",
   "11.call_id=\"az\"": "INV-4@11 INV-12@16 LIVE-1@16 | INV-4@11",
   "11.call_id dropped": "parse@11",
   "11.status=\"timed_out\"": "ok | INV-7@11",
   "11.status dropped": "parse@11",
   "11.text=\"call cancelled by the hostz\"": "ok | INV-7@11",
   "11.text dropped": "ok | INV-7@11",
   "drop 12": "ok | INV-4@12",
   "double 12": "ok | REFINE@13",
   "swap 12-13": "ok | INV-4@12",
   "12.call_id=\"az\"": "ok | REFINE@12",
   "12.call_id dropped": "ok | REFINE@12",
   "drop 13": "ok | INV-4@15",
   "double 13": "ok | INV-4@14",
   "swap 13-14": "ok | refines",
   "13.call_id=\"az\"": "ok | INV-4@13",
   "13.call_id dropped": "parse@13",
   "drop 14": "ok | INV-12@14",
   "double 14": "ok | REFINE@15",
   "swap 14-15": "ok | INV-12@14",
   "drop 15": "ok | INV-12@15",
   "double 15": "INV-12@16 | INV-12@16",
   "15.server=\"x\"": "ok | INV-12@15",
   "15.server dropped": "parse@15",
   "15.method=\"tools/list\"": "ok | LIVE-2@15",
   "15.method dropped": "parse@15",
   "digest": "0763584ad8a7f32bcbfa29179e033b78f299b7557981f74039bd1b516b64c044"
  },
  "expired": {
   "as written": "ok | refines",
   "drop 2": "ok | LIVE-2@2",
   "double 2": "ok | LIVE-2@3",
   "swap 2-3": "ok | LIVE-2@2",
   "2.server=\"x\"": "ok | LIVE-2@2",
   "2.server dropped": "parse@2",
   "2.method=\"tools/call\"": "ok | INV-2@2",
   "2.method dropped": "parse@2",
   "drop 3": "INV-3@3 | INV-1@3",
   "double 3": "ok | REFINE@4",
   "swap 3-4": "INV-3@3 | INV-1@3",
   "3.server=\"x\"": "INV-3@4 | REFINE@3",
   "3.server dropped": "INV-3@4 | REFINE@3",
   "3.tools=[\"t\"]": "INV-3@4 INV-9@10 | INV-3@4",
   "3.tools dropped": "INV-9@10 | INV-1@4",
   "drop 4": "ok | INV-3@4",
   "double 4": "INV-1@5 INV-3@5 | INV-3@5",
   "swap 4-5": "INV-3@5 | INV-3@4",
   "4.generation=2": "INV-1@4 | INV-1@4",
   "4.generation dropped": "parse@4",
   "4.source=\"mcp:sz\"": "INV-3@4 | INV-3@4",
   "4.source dropped": "parse@4",
   "4.names=[\"mcp__s__r\"]": "ok | INV-3@4",
   "4.names dropped": "parse@4",
   "drop 5": "ok | INV-3@20",
   "double 5": "ok | INV-3@6",
   "swap 5-6": "ok | refines",
   "5.server=\"x\"": "ok | INV-3@5",
   "5.server dropped": "parse@5",
   "5.status=\"ok\"": "ok | INV-3@5",
   "5.status dropped": "parse@5",
   "5.generation=2": "ok | INV-3@5",
   "5.generation dropped": "ok | INV-3@5",
   "drop 6": "ok | REFINE@6",
   "double 6": "ok | refines",
   "swap 6-7": "ok | REFINE@6",
   "6.step=1": "ok | refines",
   "6.step dropped": "ok | refines",
   "drop 7": "INV-4@17 | INV-2@7",
   "double 7": "ok | INV-4@19",
   "swap 7-8": "ok | INV-2@7",
   "7.step=1": "ok | REFINE@7",
   "7.step dropped": "ok | refines",
   "7.call_id=\"az\"": "INV-4@18 INV-12@21 LIVE-1@21 | REFINE@11",
   "7.call_id dropped": "parse@7",
   "7.name=\"mcp__s__tz\"": "ok | INV-2@8",
   "7.name dropped": "parse@7",
   "drop 8": "ok | INV-2@10",
   "double 8": "INV-14@17 | INV-2@9",
   "swap 8-9": "ok | refines",
   "8.server=\"x\"": "INV-14@16 | INV-2@8",
   "8.server dropped": "parse@8",
   "8.method=\"tools/list\"": "ok | LIVE-2@8",
   "8.method dropped": "parse@8",
   "8.call_id=\"az\"": "ok | refines",
   "8.call_id dropped": "ok | refines",
   "8.detail=\"tz\"": "ok | INV-2@8",
   "8.detail dropped": "ok | INV-2@8",
   "drop 9": "INV-4@11 | INV-2@9",
   "double 9": "ok | INV-4@13",
   "swap 9-10": "ok | INV-2@9",
   "9.step=1": "ok | REFINE@9",
   "9.step dropped": "ok | refines",
   "9.call_id=\"bz\"": "INV-4@12 INV-12@21 LIVE-1@21 | INV-4@12",
   "9.call_id dropped": "parse@9",
   "9.name=\"mcp__s__rz\"": "ok | INV-2@10",
   "9.name dropped": "parse@9",
   "drop 10": "ok | INV-2@20",
   "double 10": "ok | INV-2@11",
   "swap 10-11": "ok | refines",
   "10.server=\"x\"": "ok | INV-2@10",
   "10.server dropped": "parse@10",
   "10.method=\"tools/list\"": "ok | LIVE-2@10",
   "10.method dropped": "parse@10",
   "10.call_id=\"bz\"": "ok | refines",
   "10.call_id dropped": "ok | refines",
   "10.detail=\"rz\"": "INV-9@10 | INV-2@10",
   "10.detail dropped": "INV-9@10 | INV-2@10",
   "drop 11": "ok | REFINE@11",
   "double 11": "ok | REFINE@12",
   "swap 11-12": "ok | REFINE@11",
   "11.call_id=\"az\"": "ok | REFINE@11",
   "11.call_id dropped": "parse@11",
   "drop 12": "INV-12@20 LIVE-1@20 | INV-14@20",
   "double 12": "INV-4@13 | INV-4@13",
   "swap 12-13": "ok | refines",
   "12.call_id=\"bz\"": "INV-4@12 INV-12@21 LIVE-1@21 | INV-4@12",
   "12.call_id dropped": "parse@12",
   "12.status=\"cancelled\"": "INV-7@12 INV-14@12 | INV-14@12",
   "12.status dropped": "parse@12",
   "12.text=\"server 's' disconnected while the call was in flight; its outcome is unknownz\"": "ok | INV-14@12",
   "12.text dropped": "ok | INV-14@12",
   "drop 13": "INV-14@15 | INV-14@13",
   "double 13": "ok | LIVE-2@14",
   "swap 13-14": "INV-14@16 | INV-14@13",
   "13.server=\"x\"": "INV-14@16 | LIVE-2@13",
   "13.server dropped": "parse@13",
   "13.method=\"tools/call\"": "INV-14@16 | INV-14@13",
   "13.method dropped": "parse@13",
   "drop 14": "INV-14@15 | INV-3@14",
   "double 14": "ok | REFINE@15",
   "swap 14-15": "ok | INV-3@14",
   "14.server=\"x\"": "INV-14@16 | REFINE@14",
   "14.server dropped": "INV-14@16 | REFINE@14",
   "14.tools=[\"t\"]": "ok | INV-3@15",
   "14.tools dropped": "ok | INV-3@15",
   "drop 15": "ok | INV-3@20",
   "double 15": "ok | INV-3@16",
   "swap 15-16": "ok | refines",
   "15.server=\"x\"": "ok | INV-3@15",
   "15.server dropped": "parse@15",
   "15.status=\"ok\"": "ok | INV-3@15",
   "15.status dropped": "parse@15",
   "15.generation=2": "ok | INV-3@15",
   "15.generation dropped": "ok | INV-3@15",
   "drop 16": "ok | INV-2@16",
   "double 16": "INV-14@17 | INV-2@17",
   "swap 16-17": "ok | INV-2@16",
   "16.server=\"x\"": "ok | INV-2@16",
   "16.server dropped": "parse@16",
   "16.method=\"tools/list\"": "ok | LIVE-2@16",
   "16.method dropped": "parse@16",
   "16.call_id=\"az\"": "ok | refines",
   "16.call_id dropped": "ok | refines",
   "16.detail=\"tz\"": "ok | INV-2@16",
   "16.detail dropped": "ok | INV-2@16",
   "drop 17": "ok | REFINE@17",
   "double 17": "ok | REFINE@18",
   "swap 17-18": "ok | REFINE@17",
   "17.call_id=\"az\"": "ok | REFINE@17",
   "17.call_id dropped": "ok | REFINE@17",
   "drop 18": "INV-12@20 LIVE-1@20 | LIVE-1@20",
   "double 18": "INV-4@19 | INV-4@19",
   "swap 18-19": "INV-12@19 | INV-12@19",
   "18.call_id=\"az\"": "INV-4@18 INV-12@21 LIVE-1@21 | INV-4@18",
   "18.call_id dropped": "parse@18",
   "18.status=\"error\"": "ok | REFINE@18",
   "18.status dropped": "parse@18",
   "drop 19": "ok | INV-12@19",
   "double 19": "ok | REFINE@20",
   "swap 19-20": "ok | INV-12@19",
   "drop 20": "ok | INV-12@20",
   "double 20": "INV-12@21 | INV-12@21",
   "20.server=\"x\"": "ok | INV-12@20",
   "20.server dropped": "parse@20",
   "20.method=\"tools/list\"": "ok | LIVE-2@20",
   "20.method dropped": "parse@20",
   "digest": "513224259614ea8c2cbbf33de93567e85607fae199c8b579ba967bfa63ac74e9"
  },
  "relistened": {
   "as written": "ok | refines",
   "drop 2": "ok | LIVE-2@2",
   "double 2": "ok | LIVE-2@3",
   "swap 2-3": "ok | LIVE-2@2",
   "2.server=\"x\"": "ok | LIVE-2@2",
   "2.server dropped": "parse@2",
   "2.method=\"tools/call\"": "ok | INV-2@2",
   "2.method dropped": "parse@2",
   "drop 3": "INV-3@3 | INV-1@3",
   "double 3": "ok | REFINE@4",
   "swap 3-4": "INV-3@3 | INV-1@3",
   "3.server=\"x\"": "INV-3@4 | REFINE@3",
   "3.server dropped": "INV-3@4 | REFINE@3",
   "3.tools=[\"t\"]": "INV-3@4 | INV-3@4",
   "3.tools dropped": "ok | INV-1@4",
   "drop 4": "ok | INV-3@4",
   "double 4": "INV-1@5 INV-3@5 | INV-3@5",
   "swap 4-5": "INV-3@5 | INV-3@4",
   "4.generation=2": "INV-1@4 | INV-1@4",
   "4.generation dropped": "parse@4",
   "4.source=\"mcp:sz\"": "INV-3@4 | INV-3@4",
   "4.source dropped": "parse@4",
   "4.names=[\"mcp__s__r\"]": "ok | INV-3@4",
   "4.names dropped": "parse@4",
   "drop 5": "ok | INV-3@13",
   "double 5": "ok | INV-3@6",
   "swap 5-6": "ok | refines",
   "5.server=\"x\"": "ok | INV-3@5",
   "5.server dropped": "parse@5",
   "5.status=\"ok\"": "ok | INV-3@5",
   "5.status dropped": "parse@5",
   "5.generation=2": "ok | INV-3@5",
   "5.generation dropped": "ok | INV-3@5",
   "drop 6": "ok | refines",
   "double 6": "ok | refines",
   "swap 6-7": "ok | refines",
   "6.step=1": "ok | refines",
   "6.step dropped": "ok | refines",
   "drop 7": "ok | REFINE@7",
   "double 7": "ok | REFINE@8",
   "swap 7-8": "ok | REFINE@7",
   "7.server=\"x\"": "ok | REFINE@7",
   "7.server dropped": "parse@7",
   "drop 8": "ok | LIVE-2@8",
   "double 8": "ok | REFINE@9",
   "swap 8-9": "ok | LIVE-2@8",
   "8.server=\"x\"": "ok | REFINE@8",
   "8.server dropped": "parse@8",
   "drop 9": "ok | LIVE-3@9",
   "double 9": "ok | LIVE-2@10",
   "swap 9-10": "ok | LIVE-3@9",
   "9.server=\"x\"": "ok | LIVE-2@9",
   "9.server dropped": "parse@9",
   "9.method=\"tools/call\"": "ok | INV-2@9",
   "9.method dropped": "parse@9",
   "drop 10": "ok | INV-3@10",
   "double 10": "ok | REFINE@11",
   "swap 10-11": "ok | INV-3@10",
   "10.server=\"x\"": "ok | REFINE@10",
   "10.server dropped": "ok | REFINE@10",
   "10.tools=[\"t\"]": "ok | INV-3@11",
   "10.tools dropped": "ok | INV-3@11",
   "drop 11": "ok | INV-3@13",
   "double 11": "ok | INV-3@12",
   "swap 11-12": "ok | refines",
   "11.server=\"x\"": "ok | INV-3@11",
   "11.server dropped": "parse@11",
   "11.status=\"ok\"": "ok | INV-3@11",
   "11.status dropped": "parse@11",
   "11.generation=2": "ok | INV-3@11",
   "11.generation dropped": "ok | INV-3@11",
   "drop 12": "ok | INV-12@12",
   "double 12": "ok | REFINE@13",
   "swap 12-13": "ok | INV-12@12",
   "drop 13": "ok | INV-12@13",
   "double 13": "INV-12@14 | INV-12@14",
   "13.server=\"x\"": "ok | INV-12@13",
   "13.server dropped": "parse@13",
   "13.method=\"tools/list\"": "ok | LIVE-2@13",
   "13.method dropped": "parse@13",
   "digest": "4f0db687fd578e6061d4387a313f356c37d921ef39b2e82914d1ed4024f8a554"
  },
  "paged": {
   "as written": "ok | refines",
   "drop 2": "ok | LIVE-2@2",
   "double 2": "ok | LIVE-2@3",
   "swap 2-3": "ok | LIVE-2@2",
   "2.server=\"x\"": "ok | LIVE-2@2",
   "2.server dropped": "parse@2",
   "2.method=\"tools/call\"": "ok | INV-2@2",
   "2.method dropped": "parse@2",
   "drop 3": "ok | LIVE-2@3",
   "double 3": "ok | LIVE-2@4",
   "swap 3-4": "ok | LIVE-2@3",
   "3.server=\"x\"": "ok | REFINE@3",
   "3.server dropped": "ok | REFINE@3",
   "drop 4": "ok | LIVE-2@4",
   "double 4": "ok | LIVE-2@5",
   "swap 4-5": "ok | LIVE-2@4",
   "4.server=\"x\"": "ok | LIVE-2@4",
   "4.server dropped": "parse@4",
   "4.method=\"tools/call\"": "ok | INV-2@4",
   "4.method dropped": "parse@4",
   "4.detail=\"cursorz\"": "ok | LIVE-2@4",
   "4.detail dropped": "ok | LIVE-2@4",
   "drop 5": "INV-3@5 | INV-1@5",
   "double 5": "ok | REFINE@6",
   "swap 5-6": "INV-3@5 | INV-1@5",
   "5.server=\"x\"": "INV-3@6 | REFINE@5",
   "5.server dropped": "INV-3@6 | REFINE@5",
   "5.tools=[\"t\"]": "INV-3@6 | INV-3@6",
   "5.tools dropped": "ok | INV-1@6",
   "drop 6": "ok | INV-3@6",
   "double 6": "INV-1@7 INV-3@7 | INV-3@7",
   "swap 6-7": "INV-3@7 | INV-3@6",
   "6.generation=2": "INV-1@6 | INV-1@6",
   "6.generation dropped": "parse@6",
   "6.source=\"mcp:sz\"": "INV-3@6 | INV-3@6",
   "6.source dropped": "parse@6",
   "6.names=[\"mcp__s__r\"]": "ok | INV-3@6",
   "6.names dropped": "parse@6",
   "drop 7": "ok | INV-3@10",
   "double 7": "ok | INV-3@8",
   "swap 7-8": "ok | refines",
   "7.server=\"x\"": "ok | INV-3@7",
   "7.server dropped": "parse@7",
   "7.status=\"ok\"": "ok | INV-3@7",
   "7.status dropped": "parse@7",
   "7.generation=2": "ok | INV-3@7",
   "7.generation dropped": "ok | INV-3@7",
   "drop 8": "ok | refines",
   "double 8": "ok | refines",
   "swap 8-9": "ok | REFINE@9",
   "8.step=1": "ok | refines",
   "8.step dropped": "ok | refines",
   "drop 9": "ok | INV-12@9",
   "double 9": "ok | REFINE@10",
   "swap 9-10": "ok | INV-12@9",
   "drop 10": "ok | INV-12@10",
   "double 10": "INV-12@11 | INV-12@11",
   "10.server=\"x\"": "ok | INV-12@10",
   "10.server dropped": "parse@10",
   "10.method=\"tools/list\"": "ok | LIVE-2@10",
   "10.method dropped": "parse@10",
   "digest": "51be40a369b8beedd29a7776475536de8b31a5d4abbd37c9586dd9c80fb8a8d7"
  },
  "relisted_in_pages": {
   "as written": "ok | refines",
   "drop 2": "ok | LIVE-2@2",
   "double 2": "ok | LIVE-2@3",
   "swap 2-3": "ok | LIVE-2@2",
   "2.server=\"x\"": "ok | LIVE-2@2",
   "2.server dropped": "parse@2",
   "2.method=\"tools/call\"": "ok | INV-2@2",
   "2.method dropped": "parse@2",
   "drop 3": "INV-3@3 | INV-1@3",
   "double 3": "ok | REFINE@4",
   "swap 3-4": "INV-3@3 | INV-1@3",
   "3.server=\"x\"": "INV-3@4 | REFINE@3",
   "3.server dropped": "INV-3@4 | REFINE@3",
   "3.tools=[\"t\"]": "INV-3@4 | INV-3@4",
   "3.tools dropped": "ok | INV-1@4",
   "drop 4": "INV-1@13 | INV-3@4",
   "double 4": "INV-1@5 INV-3@5 | INV-3@5",
   "swap 4-5": "INV-3@5 | INV-3@4",
   "4.generation=2": "INV-1@4 | INV-1@4",
   "4.generation dropped": "parse@4",
   "4.source=\"mcp:sz\"": "INV-3@4 INV-5@14 | INV-3@4",
   "4.source dropped": "parse@4",
   "4.names=[\"mcp__s__r\"]": "ok | INV-3@4",
   "4.names dropped": "parse@4",
   "drop 5": "ok | INV-3@17",
   "double 5": "ok | INV-3@6",
   "swap 5-6": "ok | refines",
   "5.server=\"x\"": "ok | INV-3@5",
   "5.server dropped": "parse@5",
   "5.status=\"ok\"": "ok | INV-3@5",
   "5.status dropped": "parse@5",
   "5.generation=2": "ok | INV-3@5",
   "5.generation dropped": "ok | INV-3@5",
   "drop 6": "ok | refines",
   "double 6": "ok | refines",
   "swap 6-7": "ok | refines",
   "6.step=1": "ok | refines",
   "6.step dropped": "ok | refines",
   "drop 7": "ok | LIVE-2@7",
   "double 7": "ok | LIVE-2@19",
   "swap 7-8": "ok | LIVE-2@7",
   "7.server=\"x\"": "ok | REFINE@7",
   "7.server dropped": "parse@7",
   "drop 8": "ok | LIVE-2@8",
   "double 8": "ok | LIVE-2@9",
   "swap 8-9": "ok | LIVE-2@8",
   "8.server=\"x\"": "ok | LIVE-2@8",
   "8.server dropped": "parse@8",
   "8.method=\"tools/call\"": "ok | INV-2@8",
   "8.method dropped": "parse@8",
   "drop 9": "ok | LIVE-2@9",
   "double 9": "ok | LIVE-2@10",
   "swap 9-10": "ok | LIVE-2@9",
   "9.server=\"x\"": "ok | REFINE@9",
   "9.server dropped": "ok | REFINE@9",
   "drop 10": "ok | LIVE-2@10",
   "double 10": "ok | LIVE-2@11",
   "swap 10-11": "ok | LIVE-2@10",
   "10.server=\"x\"": "ok | LIVE-2@10",
   "10.server dropped": "parse@10",
   "10.method=\"tools/call\"": "ok | INV-2@10",
   "10.method dropped": "parse@10",
   "10.detail=\"cursorz\"": "ok | LIVE-2@10",
   "10.detail dropped": "ok | LIVE-2@10",
   "drop 11": "ok | LIVE-2@11",
   "double 11": "ok | LIVE-2@12",
   "swap 11-12": "ok | LIVE-2@11",
   "11.server=\"x\"": "ok | REFINE@11",
   "11.server dropped": "ok | REFINE@11",
   "drop 12": "ok | LIVE-2@12",
   "double 12": "ok | LIVE-2@13",
   "swap 12-13": "ok | LIVE-2@12",
   "12.server=\"x\"": "ok | LIVE-2@12",
   "12.server dropped": "parse@12",
   "12.method=\"tools/call\"": "ok | INV-2@12",
   "12.method dropped": "parse@12",
   "12.detail=\"cursorz\"": "ok | LIVE-2@12",
   "12.detail dropped": "ok | LIVE-2@12",
   "drop 13": "INV-3@13 | INV-1@13",
   "double 13": "ok | REFINE@14",
   "swap 13-14": "INV-3@13 | INV-1@13",
   "13.server=\"x\"": "INV-3@14 | REFINE@13",
   "13.server dropped": "INV-3@14 | REFINE@13",
   "13.tools=[]": "INV-3@14 | INV-3@14",
   "13.tools dropped": "ok | INV-3@14",
   "drop 14": "ok | INV-3@14",
   "double 14": "INV-1@15 INV-3@15 | INV-3@15",
   "swap 14-15": "INV-3@15 | INV-3@14",
   "14.generation=3": "INV-1@14 | INV-1@14",
   "14.generation dropped": "parse@14",
   "14.source=\"mcp:sz\"": "INV-3@14 INV-5@14 | INV-3@14",
   "14.source dropped": "parse@14",
   "14.names=[]": "ok | INV-3@14",
   "14.names dropped": "parse@14",
   "drop 15": "ok | INV-3@17",
   "double 15": "ok | INV-3@16",
   "swap 15-16": "ok | refines",
   "15.server=\"x\"": "ok | INV-3@15",
   "15.server dropped": "parse@15",
   "15.status=\"ok\"": "ok | INV-3@15",
   "15.status dropped": "parse@15",
   "15.generation=3": "ok | INV-3@15",
   "15.generation dropped": "ok | INV-3@15",
   "drop 16": "ok | INV-12@16",
   "double 16": "ok | REFINE@17",
   "swap 16-17": "ok | INV-12@16",
   "drop 17": "ok | INV-12@17",
   "double 17": "INV-12@18 | INV-12@18",
   "17.server=\"x\"": "ok | INV-12@17",
   "17.server dropped": "parse@17",
   "17.method=\"tools/list\"": "ok | LIVE-2@17",
   "17.method dropped": "parse@17",
   "digest": "228a2fbfbb3fe36ce468cdf00a9abe3d035f2a4764cd92222e250d08bcd92d45"
  },
  "reconfigured": {
   "as written": "ok | refines",
   "drop 2": "ok | LIVE-2@3",
   "double 2": "ok | LIVE-2@3",
   "swap 2-3": "ok | refines",
   "2.server=\"x\"": "ok | LIVE-2@3",
   "2.server dropped": "parse@2",
   "2.method=\"tools/call\"": "ok | INV-2@2",
   "2.method dropped": "parse@2",
   "drop 3": "ok | LIVE-2@6",
   "double 3": "ok | LIVE-2@4",
   "swap 3-4": "ok | refines",
   "3.server=\"s\"": "ok | LIVE-2@3",
   "3.server dropped": "parse@3",
   "3.method=\"tools/call\"": "ok | INV-2@3",
   "3.method dropped": "parse@3",
   "drop 4": "INV-3@4 | INV-1@4",
   "double 4": "ok | REFINE@5",
   "swap 4-5": "INV-3@4 | INV-1@4",
   "4.server=\"x\"": "INV-3@5 | INV-3@5",
   "4.server dropped": "INV-3@5 | REFINE@4",
   "4.tools=[]": "INV-3@5 | INV-1@5",
   "4.tools dropped": "ok | INV-1@5",
   "drop 5": "INV-1@7 | INV-3@5",
   "double 5": "INV-1@6 INV-3@6 | INV-3@6",
   "swap 5-6": "INV-3@6 | INV-3@5",
   "5.generation=2": "INV-1@5 | INV-1@5",
   "5.generation dropped": "parse@5",
   "5.source=\"mcp:sz\"": "INV-3@5 INV-5@23 | INV-3@5",
   "5.source dropped": "parse@5",
   "5.names=[]": "ok | INV-3@5",
   "5.names dropped": "parse@5",
   "drop 6": "ok | INV-3@35",
   "double 6": "ok | INV-3@7",
   "swap 6-7": "ok | refines",
   "6.server=\"x\"": "ok | INV-3@6",
   "6.server dropped": "parse@6",
   "6.status=\"ok\"": "ok | INV-3@6",
   "6.status dropped": "parse@6",
   "6.generation=2": "ok | INV-3@6",
   "6.generation dropped": "ok | INV-3@6",
   "drop 7": "INV-3@7 | INV-1@7",
   "double 7": "ok | REFINE@8",
   "swap 7-8": "INV-3@7 | INV-1@7",
   "7.server=\"s\"": "INV-3@8 | REFINE@7",
   "7.server dropped": "INV-3@8 | REFINE@7",
   "7.tools=[]": "INV-3@8 | INV-1@8",
   "7.tools dropped": "ok | INV-1@8",
   "drop 8": "INV-1@15 | INV-3@8",
   "double 8": "INV-1@9 INV-3@9 | INV-3@9",
   "swap 8-9": "INV-3@9 | INV-3@8",
   "8.generation=3": "INV-1@8 | INV-1@8",
   "8.generation dropped": "parse@8",
   "8.source=\"mcp:xz\"": "INV-3@8 | INV-3@8",
   "8.source dropped": "parse@8",
   "8.names=[]": "ok | INV-3@8",
   "8.names dropped": "parse@8",
   "drop 9": "ok | INV-3@35",
   "double 9": "ok | INV-3@10",
   "swap 9-10": "ok | refines",
   "9.server=\"s\"": "ok | INV-3@9",
   "9.server dropped": "parse@9",
   "9.status=\"ok\"": "ok | INV-3@9",
   "9.status dropped": "parse@9",
   "9.generation=3": "ok | INV-3@9",
   "9.generation dropped": "ok | INV-3@9",
   "drop 10": "ok | REFINE@10",
   "double 10": "ok | refines",
   "swap 10-11": "ok | REFINE@10",
   "10.step=1": "ok | refines",
   "10.step dropped": "ok | refines",
   "drop 11": "INV-4@13 | INV-2@11",
   "double 11": "ok | INV-4@15",
   "swap 11-12": "ok | INV-2@11",
   "11.step=1": "ok | REFINE@11",
   "11.step dropped": "ok | refines",
   "11.call_id=\"az\"": "INV-4@14 INV-12@36 LIVE-1@36 | INV-4@14",
   "11.call_id dropped": "parse@11",
   "11.name=\"mcp__x__uz\"": "ok | INV-2@12",
   "11.name dropped": "parse@11",
   "drop 12": "ok | INV-2@35",
   "double 12": "ok | INV-2@13",
   "swap 12-13": "INV-16@13 | INV-16@13",
   "12.server=\"s\"": "ok | INV-2@12",
   "12.server dropped": "parse@12",
   "12.method=\"tools/list\"": "ok | LIVE-2@12",
   "12.method dropped": "parse@12",
   "12.call_id=\"az\"": "ok | refines",
   "12.call_id dropped": "ok | refines",
   "12.detail=\"uz\"": "ok | INV-2@12",
   "12.detail dropped": "ok | INV-2@12",
   "drop 13": "INV-3@15 INV-12@18 | REFINE@13",
   "double 13": "ok | not refinable",
   "swap 13-14": "ok | REFINE@13",
   "13.added=[]": "ok | LIVE-2@20",
   "13.added dropped": "parse@13",
   "13.removed=[]": "INV-3@16 | REFINE@14",
   "13.removed dropped": "parse@13",
   "13.changed=[]": "INV-12@19 | INV-12@18",
   "13.changed dropped": "parse@13",
   "drop 14": "INV-9@24 INV-12@35 LIVE-1@35 | LIVE-1@35",
   "double 14": "INV-4@15 | INV-4@15",
   "swap 14-15": "ok | refines",
   "14.call_id=\"az\"": "INV-4@14 INV-9@25 INV-12@36 LIVE-1@36 | INV-4@14",
   "14.call_id dropped": "parse@14",
   "14.status=\"timed_out\"": "INV-16@14 | INV-7@14",
   "14.status dropped": "parse@14",
   "14.text=\"call cancelled: a reconfiguration removed server 'x' while the call was in flight; the server was told to cancel itz\"": "ok | INV-7@14",
   "14.text dropped": "ok | INV-7@14",
   "drop 15": "INV-7@14 | INV-7@35",
   "double 15": "INV-7@16 | INV-16@16",
   "swap 15-16": "ok | refines",
   "15.server=\"s\"": "ok | INV-7@15",
   "15.server dropped": "parse@15",
   "15.method=\"tools/list\"": "INV-7@14 INV-16@15 | INV-16@15",
   "15.method dropped": "parse@15",
   "15.call_id=\"az\"": "INV-7@14 | INV-16@15",
   "15.call_id dropped": "INV-7@14 | INV-16@15",
   "drop 16": "INV-1@22 | INV-1@35",
   "double 16": "ok | INV-3@17",
   "swap 16-17": "ok | refines",
   "16.generation=4": "INV-1@16 | INV-1@16",
   "16.generation dropped": "parse@16",
   "16.source=\"mcp:xz\"": "INV-3@16 | INV-3@16",
   "16.source dropped": "parse@16",
   "16.names=[\"z\"]": "INV-3@16 | INV-3@16",
   "16.names dropped": "parse@16",
   "drop 17": "ok | INV-12@35",
   "double 17": "INV-12@18 INV-16@18 | INV-16@18",
   "swap 17-18": "ok | refines",
   "17.server=\"s\"": "INV-12@19 | INV-12@18",
   "17.server dropped": "parse@17",
   "17.method=\"tools/list\"": "INV-16@17 | INV-16@17",
   "17.method dropped": "parse@17",
   "drop 18": "ok | INV-12@35",
   "double 18": "INV-12@20 | INV-12@19",
   "swap 18-19": "ok | refines",
   "18.server=\"x\"": "INV-12@18 INV-16@18 | INV-16@18",
   "18.server dropped": "parse@18",
   "18.method=\"tools/list\"": "ok | LIVE-2@19",
   "18.method dropped": "parse@18",
   "drop 19": "ok | LIVE-2@21",
   "double 19": "ok | LIVE-2@20",
   "swap 19-20": "ok | refines",
   "19.server=\"x\"": "INV-12@19 INV-16@19 | INV-16@19",
   "19.server dropped": "parse@19",
   "19.method=\"tools/call\"": "ok | INV-2@19",
   "19.method dropped": "parse@19",
   "drop 20": "ok | LIVE-2@27",
   "double 20": "ok | LIVE-2@21",
   "swap 20-21": "ok | refines",
   "20.server=\"x\"": "INV-12@20 INV-16@20 | INV-16@20",
   "20.server dropped": "parse@20",
   "20.method=\"tools/call\"": "ok | INV-2@20",
   "20.method dropped": "parse@20",
   "drop 21": "INV-4@26 | INV-2@24",
   "double 21": "ok | INV-4@28",
   "swap 21-22": "ok | refines",
   "21.step=1": "ok | REFINE@21",
   "21.step dropped": "ok | refines",
   "21.call_id=\"bz\"": "INV-4@27 INV-12@36 LIVE-1@36 | REFINE@26",
   "21.call_id dropped": "parse@21",
   "21.name=\"mcp__s__tz\"": "ok | INV-2@25",
   "21.name dropped": "parse@21",
   "drop 22": "INV-3@22 | INV-1@22",
   "double 22": "ok | REFINE@23",
   "swap 22-23": "INV-3@22 | INV-1@22",
   "22.server=\"x\"": "INV-3@23 | REFINE@22",
   "22.server dropped": "INV-3@23 | REFINE@22",
   "22.tools=[\"t\"]": "INV-3@23 | INV-1@23",
   "22.tools dropped": "ok | INV-3@23",
   "drop 23": "INV-1@28 | INV-3@23",
   "double 23": "INV-1@24 INV-3@24 | INV-3@24",
   "swap 23-24": "INV-3@24 | INV-3@23",
   "23.generation=5": "INV-1@23 | INV-1@23",
   "23.generation dropped": "parse@23",
   "23.source=\"mcp:sz\"": "INV-3@23 INV-5@23 | INV-3@23",
   "23.source dropped": "parse@23",
   "23.names=[\"mcp__s__t\"]": "ok | INV-3@23",
   "23.names dropped": "parse@23",
   "drop 24": "ok | INV-3@35",
   "double 24": "ok | INV-3@25",
   "swap 24-25": "ok | refines",
   "24.server=\"x\"": "ok | INV-3@24",
   "24.server dropped": "parse@24",
   "24.status=\"ok\"": "ok | INV-3@24",
   "24.status dropped": "parse@24",
   "24.generation=5": "ok | INV-3@24",
   "24.generation dropped": "ok | INV-3@24",
   "drop 25": "ok | INV-2@25",
   "double 25": "ok | INV-2@26",
   "swap 25-26": "ok | INV-2@25",
   "25.server=\"x\"": "INV-12@25 INV-16@25 | INV-16@25",
   "25.server dropped": "parse@25",
   "25.method=\"tools/list\"": "ok | LIVE-2@25",
   "25.method dropped": "parse@25",
   "25.call_id=\"bz\"": "ok | refines",
   "25.call_id dropped": "ok | refines",
   "25.detail=\"tz\"": "ok | INV-2@25",
   "25.detail dropped": "ok | INV-2@25",
   "drop 26": "ok | REFINE@26",
   "double 26": "ok | REFINE@27",
   "swap 26-27": "ok | REFINE@26",
   "26.call_id=\"bz\"": "ok | REFINE@26",
   "26.call_id dropped": "ok | REFINE@26",
   "drop 27": "INV-12@35 LIVE-1@35 | LIVE-1@35",
   "double 27": "INV-4@28 | INV-4@28",
   "swap 27-28": "ok | refines",
   "27.call_id=\"bz\"": "INV-4@27 INV-12@36 LIVE-1@36 | INV-4@27",
   "27.call_id dropped": "parse@27",
   "27.status=\"error\"": "ok | REFINE@27",
   "27.status dropped": "parse@27",
   "drop 28": "INV-3@28 | INV-1@28",
   "double 28": "ok | REFINE@29",
   "swap 28-29": "INV-3@28 | INV-1@28",
   "28.server=\"x\"": "INV-3@29 | REFINE@28",
   "28.server dropped": "INV-3@29 | REFINE@28",
   "28.tools=[]": "INV-3@29 | INV-1@29",
   "28.tools dropped": "ok | INV-1@29",
   "drop 29": "ok | INV-3@29",
   "double 29": "INV-1@30 INV-3@30 | INV-3@30",
   "swap 29-30": "INV-3@30 | INV-3@29",
   "29.generation=6": "INV-1@29 | INV-1@29",
   "29.generation dropped": "parse@29",
   "29.source=\"mcp:yz\"": "INV-3@29 | INV-3@29",
   "29.source dropped": "parse@29",
   "29.names=[]": "ok | INV-3@29",
   "29.names dropped": "parse@29",
   "drop 30": "ok | INV-3@35",
   "double 30": "ok | INV-3@31",
   "swap 30-31": "ok | refines",
   "30.server=\"x\"": "ok | INV-3@30",
   "30.server dropped": "parse@30",
   "30.status=\"ok\"": "ok | INV-3@30",
   "30.status dropped": "parse@30",
   "30.generation=6": "ok | INV-3@30",
   "30.generation dropped": "ok | INV-3@30",
   "drop 31": "INV-4@31 | INV-4@31",
   "double 31": "ok | INV-4@37",
   "swap 31-32": "INV-4@31 | INV-4@31",
   "31.step=1": "ok | REFINE@31",
   "31.step dropped": "ok | refines",
   "31.call_id=\"cz\"": "INV-4@32 INV-12@36 LIVE-1@36 | INV-4@32",
   "31.call_id dropped": "parse@31",
   "31.name=\"mcp__x__uz\"": "ok | INV-2@32",
   "31.name dropped": "parse@31",
   "drop 32": "INV-12@35 LIVE-1@35 | LIVE-1@35",
   "double 32": "INV-4@33 | INV-4@33",
   "swap 32-33": "INV-12@33 | INV-12@33",
   "32.call_id=\"cz\"": "INV-4@32 INV-12@36 LIVE-1@36 | INV-4@32",
   "32.call_id dropped": "parse@32",
   "32.status=\"ok\"": "ok | INV-2@32",
   "32.status dropped": "parse@32",
   "32.text=\"tool mcp__x__u is no longer available: server 'x' was removed by a reconfiguration; nothing was sent; sample a new step to see the current toolsz\"": "ok | INV-2@32",
   "32.text dropped": "ok | INV-2@32",
   "drop 33": "ok | INV-12@33",
   "double 33": "ok | REFINE@34",
   "swap 33-34": "ok | INV-12@33",
   "drop 34": "ok | INV-12@35",
   "double 34": "INV-12@35 | INV-12@35",
   "swap 34-35": "ok | refines",
   "34.server=\"x\"": "INV-12@34 INV-16@34 | INV-16@34",
   "34.server dropped": "parse@34",
   "34.method=\"tools/list\"": "ok | LIVE-2@34",
   "34.method dropped": "parse@34",
   "drop 35": "ok | INV-12@35",
   "double 35": "INV-12@36 | INV-12@36",
   "35.server=\"x\"": "INV-12@35 INV-16@35 | INV-16@35",
   "35.server dropped": "parse@35",
   "35.method=\"tools/list\"": "ok | LIVE-2@35",
   "35.method dropped": "parse@35",
   "digest": "5174751628c13ac9d99326e18f4182186bb042ca33b7a857afcbaec2323dac16"
  }
 }
}
"""  # noqa: E501 - generated, one row a line
)
# END GENERATED


def test_the_tables_hold_every_cut_mutant_and_trace_and_nothing_else():
    assert list(TABLES["graphs"]) == [cut_name(c) for c in CUTS]
    assert list(TABLES["mutants"]) == [m.name for m in MUTANTS]
    assert list(TABLES["traces"]) == list(BASES)


@pytest.mark.parametrize("cut", CUTS, ids=cut_name)
def test_each_cut_of_the_standard_rules_has_its_pinned_graph(cut):
    """States, transitions, and the digest of every transition's event, outputs, target
    and invariant verdicts."""
    assert graph_row(cut) == TABLES["graphs"][cut_name(cut)]


@pytest.mark.parametrize("m", MUTANTS, ids=lambda m: m.name)
def test_each_model_mutant_meets_exactly_its_pinned_violations(m):
    assert mutant_violations(m.name) == TABLES["mutants"][m.name]


@pytest.mark.parametrize("base", list(BASES))
def test_every_one_edit_change_of_a_conforming_trace_gets_its_pinned_verdicts(base):
    """The trace as written conforms and refines; each edit's verdicts are the table's,
    their texts too (the digest)."""
    pinned = TABLES["traces"][base]
    assert pinned["as written"] == "ok | refines"
    now = trace_verdicts(base)
    differing = {e: (pinned.get(e), now.get(e)) for e in {*pinned, *now}}
    differing = {e: pair for e, pair in differing.items() if pair[0] != pair[1]}
    assert not differing, json.dumps(dict(sorted(differing.items())[:8]), indent=1)
