"""One server's refresh runs (``impl/server/refreshes.py``, SPEC §5.1, §11.12, INV-14):
which run each operation answers, and which outcomes are reported, one sequence a row.

A run that ran reports its outcome (``outcomes`` counts it, the recorder is told); one
that never ran (a queued run a lost session or a replaced one ends) gets the same answer
unreported. Mutation testing (issue 33) found ``renew``'s branch for a queued run beside
a dormant server's owed run never run by any test: the last rows drive it."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server.lowlevel import Server
from testservers.inproc import tool

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.catalog.publisher import Publisher
from mcpbind.impl.catalog.registry import ToolRegistry
from mcpbind.impl.config.recorder import NullRecorder
from mcpbind.impl.server.refreshes import Refreshes, RefreshRun
from mcpbind.impl.values import RefreshOutcome


class Outcomes(NullRecorder):
    def __init__(self) -> None:
        self.reported: list[str] = []

    def refresh_outcome(self, outcome: RefreshOutcome) -> None:
        self.reported.append(outcome.status)


def refreshes() -> tuple[Refreshes, Outcomes]:
    recorder = Outcomes()
    return Refreshes("s", Publisher(ToolRegistry(), recorder), recorder), recorder


def ended(run: RefreshRun | None) -> str | None:
    """A run's answer: its outcome's status (and its kind, when rejected), None if open."""
    if run is None or run.outcome is None:
        assert run is None or not run.done.is_set()
        return None
    assert run.done.is_set()
    outcome = run.outcome
    return outcome.status if outcome.kind is None else f"{outcome.status} {outcome.kind}"


UNCHANGED = RefreshOutcome("s", "unchanged", 0)
LOST = RefreshOutcome("s", "rejected", 0, "disconnected", "lost")


def test_a_finished_run_is_reported_and_hands_on_the_queued_one():
    r, recorder = refreshes()
    current = r.start()
    queued = r.join()
    assert r.join() is queued  # every later request joins the one queued run
    assert r.finish(current, UNCHANGED) is queued
    assert (ended(current), ended(queued), r.queued, r.current) == ("unchanged", None, None, None)
    assert (r.outcomes, recorder.reported) == ({"unchanged": 1}, ["unchanged"])


def test_a_lost_session_rejects_the_run_in_flight_reported_and_the_queued_one_unreported():
    r, recorder = refreshes()
    current, queued = r.start(), r.join()
    first = r.first_run()
    r.reject_all(LOST)
    assert (ended(current), ended(queued), ended(first)) == (
        "rejected disconnected",
        "rejected disconnected",
        None,  # a dormant server's owed run waits for a session
    )
    assert (r.outcomes, recorder.reported) == ({"rejected": 1}, ["rejected"])
    r.reject_every(LOST)
    assert (ended(first), r.first) == ("rejected disconnected", None)
    assert recorder.reported == ["rejected", "rejected"]


def test_an_answered_request_is_reported_at_once():
    r, recorder = refreshes()
    run = r.answered(UNCHANGED)
    assert ended(run) == "unchanged"
    assert recorder.reported == ["unchanged"]


@pytest.mark.parametrize(
    ("owed", "queued", "answers"),
    [
        (False, False, "a new run"),
        (False, True, "the queued run"),
        (True, False, "the owed run"),
        (True, True, "the owed run"),
    ],
)
def test_a_renewed_session_answers_one_run_and_ends_what_it_replaced(owed, queued, answers):
    """INV-14: the run in flight ends rejected (reported); the new session's first
    listing answers the run a dormant server owes, else the queued run, else a new one;
    a queued run it does not answer ends with the run in flight's answer, unreported."""
    r, recorder = refreshes()
    first = r.first_run() if owed else None
    current = r.start()
    waiting = r.join() if queued else None
    run = r.renew(LOST)
    expected: dict[str, Any] = {"the owed run": first, "the queued run": waiting}
    if answers == "a new run":
        assert run not in (first, current, waiting)
    else:
        assert run is expected[answers]
    assert (r.first, r.current, r.queued) == (run, None, None)
    assert ended(run) is None
    assert ended(current) == "rejected disconnected"
    assert ended(waiting) == (
        "rejected disconnected" if queued and answers != "the queued run" else None
    )
    assert (r.outcomes, recorder.reported) == ({"rejected": 1}, ["rejected"])


def held_server(gate: list[anyio.Event]) -> Server[Any]:
    """A lowlevel server whose every ``tools/list`` after the first waits for
    ``gate[0]``."""
    listings = [0]

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listings[0] += 1
        if listings[0] > 1:
            await gate[0].wait()
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool("a"))])

    return Server("held", on_list_tools=on_list_tools)


async def test_a_servers_statistics_say_a_refresh_runs_and_one_is_queued_behind_it():
    """SPEC §5.1: while a refresh is in flight, every later request joins one queued
    run; the server's statistics show both, and neither once they end (mutation testing,
    issue 33: ``refresh_queued`` was never looked at)."""
    gate = [anyio.Event()]
    config = HostConfig(servers={"s": ServerConfig(target=held_server(gate))})
    async with Host.open(config) as host:
        runtime = host.servers["s"]
        stats = runtime.statistics()
        assert (stats.refreshing, stats.refresh_queued) == (False, False)
        in_flight = runtime.request_refresh()
        assert (runtime.statistics().refreshing, runtime.statistics().refresh_queued) == (
            True,
            False,
        )
        queued = runtime.request_refresh()
        assert runtime.request_refresh() is queued
        assert queued is not in_flight
        stats = runtime.statistics()
        assert (stats.refreshing, stats.refresh_queued) == (True, True)
        gate[0].set()
        await queued.done.wait()
        stats = runtime.statistics()
        assert (stats.refreshing, stats.refresh_queued) == (False, False)
        assert stats.outcomes == {"installed": 1, "unchanged": 2}
