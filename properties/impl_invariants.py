"""The invariants of SPEC §4 checked directly on the runtime, after every machine step.

Trace refinement against the model already implies them (the model satisfies them on
every state, §10); these checks say the same thing in terms of the runtime's own
observations, so that a failure names the broken property rather than a diverging output.
Each takes the machine's run as a :class:`~.run_view.RunView` and returns None, or why the
invariant fails; none changes the run.
"""

from __future__ import annotations

from collections import Counter

from mcpbind.model import texts
from mcpbind.model.invariants import complete_catalogs

from .run_view import RunView, SeenOutcome, SeenPublished, SeenResult, SeenSent, mcp_names

__all__ = ["CHECKS"]


def inv_1_one_generation_per_install(run: RunView) -> str | None:
    """INV-1: publications are numbered 1, 2, ... with one per installed refresh (or
    cached catalog installed at the start, SPEC §11.12, or removal of catalogs by a
    reconfiguration, §11.17: one generation for all the sources it empties), and the
    registry's generation is the last one published."""
    history = run.history
    published = [item for item in history if isinstance(item, SeenPublished)]
    generations = [p.generation for p in published]
    distinct = sorted(set(generations))
    installed = [
        item for item in history if isinstance(item, SeenOutcome) and item.status == "installed"
    ]
    if generations != sorted(generations) or distinct != list(range(1, len(distinct) + 1)):
        return f"publications numbered {generations}"
    by_install = {item.generation for item in installed}
    removals = {
        g
        for g in distinct
        if g not in by_install and all(not p.names for p in published if p.generation == g)
    }
    shared = {g for g in distinct if generations.count(g) > 1}
    if shared - removals:
        return f"generations {sorted(shared - removals)} published more than one source"
    if len(installed) + run.cached_installs + len(removals) != len(distinct):
        return (
            f"{len(distinct)} publications for {len(installed)} installed refreshes, "
            f"{run.cached_installs} cached catalog(s) and {len(removals)} removal(s)"
        )
    if run.registry.generation != len(distinct):
        return f"generation {run.registry.generation} after {len(distinct)} publications"
    return None


def inv_2_steps_never_change(run: RunView) -> str | None:
    """INV-2: every sampled step still has exactly the names and bindings it had."""
    for index, (snapshot, names) in enumerate(zip(run.snapshots, run.sampled, strict=True)):
        now = {n: (b.server, b.remote_name) for n, b in snapshot.names.items()}
        if now != names:
            return f"step {index} changed after it was sampled"
        if {s.name for s in snapshot.specs} != set(now):
            return f"step {index}: its plan and its router disagree"
    return None


def inv_3_catalogs_are_whole_listings(run: RunView) -> str | None:
    """INV-3: each server's installed tools are one whole validated listing."""
    allowed = complete_catalogs(run.bound)
    state = run.registry
    for spec in run.bound.servers:
        remotes = state.live_remotes.get(spec.source, frozenset())
        if remotes not in allowed[spec.source]:
            return f"{spec.source} shows {sorted(remotes)}, which no whole listing yields"
    return None


def inv_4_one_result_per_call(run: RunView) -> str | None:
    """INV-4: no call_id has two results; a reused call_id got none."""
    for call_id, results in run.results.items():
        if len(results) > 1:
            return f"{call_id} has {len(results)} results"
    seen: set[str] = set()
    again: set[str] = set()
    for item in run.history:
        if isinstance(item, SeenResult):
            (again if item.call_id in seen else seen).add(item.call_id)
    twice = sorted(again)
    return f"results reported twice for {twice}" if twice else None


def inv_5_names_unique_and_builtins_kept(run: RunView) -> str | None:
    """INV-5: names are unique and every builtin and extension tool still owns its name."""
    state = run.registry
    names = [b.name for c in state.catalogs.values() for b in c.bindings]
    if len(names) != len(set(names)):
        return "a public name is held twice"
    local = [*run.bound.builtins, *(n for _, names in run.bound.extensions for n in names)]
    for builtin in local:
        binding = state.by_name.get(builtin)
        if binding is None or binding.server is not None:
            return f"non-MCP tool {builtin} lost its name"
    return None


def inv_6_names_stable(run: RunView) -> str | None:
    """INV-6: an identity listed in two consecutive publications keeps its name (the
    machine keeps the names of each check for the next: ``run.previous_names``)."""
    current = mcp_names(run.registry)
    previous = run.previous_names if run.previous_names is not None else current
    for identity, name in current.items():
        if identity in previous and previous[identity] != name:
            return f"{identity} renamed from {previous[identity]} to {name}"
    return None


_SIGNALS = ("notifications/cancelled", "tasks/cancel")


def inv_7_cancellation_once(run: RunView) -> str | None:
    """INV-7: no call got two cancellation signals (a notification or a task cancel); each
    named a call that ended early (or a task given up after a failed poll); a call that
    ran as a task was never cancelled with ``notifications/cancelled`` (SPEC §8.12)."""
    signals: dict[str, list[str]] = {}
    for item in run.history:
        if isinstance(item, SeenSent) and item.method in _SIGNALS:
            signals.setdefault(item.detail, []).append(item.method)
    tasks = {c for s in run.servers.values() for c in s.ran_tasks}
    for call_id, sent in signals.items():
        if len(sent) > 1:
            return f"{call_id} was cancelled {len(sent)} times: {sent}"
        if call_id in tasks and sent[0] != "tasks/cancel":
            return f"{call_id} runs as a task but was cancelled with {sent[0]}"
        results = run.results.get(call_id, [])
        # A task is also given up (with its tasks/cancel) when a poll of it failed.
        ended_early: tuple[str, ...] = ("cancelled", "timed_out")
        if sent[0] == "tasks/cancel":
            ended_early = ("cancelled", "timed_out", "failed")
        if results and results[0].status not in ended_early:
            return f"{call_id} was cancelled at the server but ended {results[0].status}"
    return None


def inv_8_nothing_in_flight_to_a_disconnected_server(run: RunView) -> str | None:
    """INV-8: a disconnected server has no parked listing or call."""
    connected = run.connected
    for name, server in run.servers.items():
        if not connected.get(name, False) and (server.lists or server.calls or server.polls):
            return f"{name} is disconnected with requests in flight"
    return None


def inv_9_one_exclusive_call_per_step(run: RunView) -> str | None:
    """INV-9: at most one exclusive call of a step is out at the servers."""
    steps = run.call_steps
    exclusive: Counter[int] = Counter()
    for name, server in run.servers.items():
        config = run.config.servers.get(name)  # None: absent (SPEC §3.7)
        parallel = config is not None and config.supports_parallel_tool_calls
        out = {**server.calls, **server.tasks}
        for call_id, pending in out.items():
            read_only = any(
                t.read_only and t.name == pending.name
                for version in server.versions
                for page in version
                for t in page
            )
            if not (parallel or read_only):
                exclusive[steps.get(call_id, -1)] += 1
    crowded = sorted(step for step, n in exclusive.items() if n > 1)
    return f"steps {crowded} have two exclusive calls out" if crowded else None


def inv_10_nothing_sent_before_approval(run: RunView) -> str | None:
    """INV-10: a call waiting for its approval is at no server and has no result."""
    for call_id in run.approvals:
        if call_id in run.results:
            return f"{call_id} has a result while it waits for approval"
        for name, server in run.servers.items():
            if call_id in server.calls or call_id in server.late:
                return f"{call_id} reached {name} while it waits for approval"
    return None


def inv_11_lazy_server_waited_for(run: RunView) -> str | None:
    """INV-11: until a lazily started server's first refresh has ended (its first refresh
    outcome), no ``tools/call`` reaches it and no call to it fails for want of a
    connection: its calls wait."""
    for name in run.bound.lazy:
        not_connected = texts.NOT_CONNECTED.format(server=name)
        for item in run.history:
            if isinstance(item, SeenOutcome) and item.server == name:
                break
            if isinstance(item, SeenSent) and (item.server, item.method) == (name, "tools/call"):
                return f"tools/call sent to {name} before its first refresh ended"
            if (
                isinstance(item, SeenResult)
                and item.status == "failed"
                and item.text == not_connected
            ):
                return f"{item.call_id} to {name} failed fast before its start settled"
    return None


def inv_12_close_loses_nothing(run: RunView) -> str | None:
    """INV-12: every cancellation the runtime reported reached its server's wire (the
    machine writes what transports were handed when it settles; a session that closes
    writes it first); no session is ever torn down; once the host closed, leaving
    ``Host.open`` has finished and each session it had open ended ``close``."""
    if run.closing and not run.closed:
        return "leaving Host.open did not finish"
    # One pass over the run's history for every server (this runs after every step).
    signals = [
        item for item in run.history if isinstance(item, SeenSent) and item.method in _SIGNALS
    ]
    for name, server in run.servers.items():
        sent = [(item.method, item.detail) for item in signals if item.server == name]
        wired = [(what, detail) for what, detail in server.wire if what in _SIGNALS]
        if sent or wired:  # most runs send no cancellation: no multisets to build
            reported, written = Counter(sent), Counter(wired)
            if reported != written:
                missing = sorted((reported - written).elements())
                return f"cancellations {missing} reported for {name} never reached it"
        if ("killed", "") in server.wire:
            return f"a session of {name} was torn down instead of closed"
        if run.closed and server.wire and server.wire[-1][0] == "open":
            return f"{name}'s session was still open after the host closed"
    return None


CHECKS = (
    inv_1_one_generation_per_install,
    inv_2_steps_never_change,
    inv_3_catalogs_are_whole_listings,
    inv_4_one_result_per_call,
    inv_5_names_unique_and_builtins_kept,
    inv_6_names_stable,
    inv_7_cancellation_once,
    inv_8_nothing_in_flight_to_a_disconnected_server,
    inv_9_one_exclusive_call_per_step,
    inv_10_nothing_sent_before_approval,
    inv_11_lazy_server_waited_for,
    inv_12_close_loses_nothing,
)
