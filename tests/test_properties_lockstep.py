"""The property machines (SPEC §13, issue 4): the runtime held to the model on random
interleavings. Asyncio, the replay corpus and the runtime mutants are in
``test_properties_corpus.py``, the odometer in ``test_properties_odometer.py``."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import Verbosity, given, settings
from hypothesis import strategies as st

from mcpbind.model import texts
from mcpbind.model.values import Binding, Registry, SourceCatalog
from mcpbind.properties import profiles
from mcpbind.properties.chooser import DrawChooser
from mcpbind.properties.deferral import expected_search, search_words, shown_names
from mcpbind.properties.lockstep import REACHED, replay_file
from mcpbind.properties.machines import lockstep_property, run_replay
from mcpbind.properties.variants import LockstepVariant

profiles.load()

pytestmark = pytest.mark.slow


DEFERRAL = LockstepVariant(deferral=True)


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_on_random_interleavings(policy):
    """INV-1..INV-9 on the runtime, trace refinement every step, LIVE-1 at teardown; the
    random runs reach a cancel of a call that ended and a listing answered at close."""
    reached: Counter[str] = Counter()
    lockstep_property(policy, coverage=reached)()
    assert reached["cancel after end"] > 0
    assert reached["close during list"] > 0


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_with_approval_gating(policy):
    """INV-10 on the runtime: every MCP call waits for the machine's approver; approve,
    deny (decline or cancel), cancel and disconnect interleave with everything else."""
    lockstep_property(policy, variant=LockstepVariant(approval=True))()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_with_a_lazily_started_server(policy):
    """INV-11 on the runtime: git.hub opens dormant from a cached catalog; calls wake it
    and wait for its first refresh, in acceptance order, through failures and timeouts."""
    lockstep_property(policy, variant=LockstepVariant(lazy=True))()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_with_an_idle_timeout(policy):
    """SPEC §8.11 on the runtime: git_hub's tool timeout is an idle timeout; progress,
    which the machine sends just before the deadline, re-arms it until the cap."""
    lockstep_property(policy, variant=LockstepVariant(progress=True))()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_with_calls_that_run_as_tasks(policy):
    """SPEC §8.12 on the runtime: git.hub may answer a call with a task, which the runtime
    polls to its end; a cancel, a timeout, a failed poll or close sends tasks/cancel, and
    a task status that comes after the end is dropped (INV-4, INV-7, INV-12)."""
    lockstep_property(policy, variant=LockstepVariant(tasks=True))()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_when_a_server_ends_its_list_changed_stream(policy):
    """LIVE-3 on the runtime: git.hub ends its list_changed stream, changes while no stream
    is open, and the host listens again and reads what it missed (SPEC §5.7)."""
    lockstep_property(policy, variant=LockstepVariant(streams=True))()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_across_a_reconfiguration(policy):
    """INV-15, INV-16 on the runtime: ``Host.reconfigure`` keeps ``a``, removes ``b`` and
    ``b2``, replaces ``c`` and adds ``d`` while calls are out, refreshes run and servers
    disconnect; every step's outputs are the model's (SPEC §3.7, §11.17)."""
    lockstep_property(policy, variant=LockstepVariant(reconfigure=True))()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_with_deferred_tools(policy):
    """SPEC §11.9 on the runtime: above a small defer_threshold a step shows its host
    tools, tool_search and what searches discovered; the machine searches with real,
    unmatched and invalid queries, calls deferred and discovered names, and holds each
    search result to the spec's ranking. A small budget: the replays below pin the
    decisive sequences (in the ``ci`` profile; the others run their own budget)."""
    profiles.ci_budget(100)(lockstep_property(policy, variant=DEFERRAL))()


def _replay(tmp_path, events, variant=DEFERRAL, policy="revalidate"):
    path = tmp_path / "replay.json"
    path.write_text(replay_file(events, policy=policy, variant=variant))
    reached: Counter[str] = Counter()
    assert run_replay(path, coverage=reached) == events
    assert set(reached) <= set(REACHED)
    return reached


LISTED = ["list_page(server='git.hub')", "list_done(server='git.hub')"]
"""git.hub's two tools installed: with the host tools, four tools, over the threshold."""


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_a_search_discovers_tools_that_the_next_step_shows_and_routes(tmp_path, policy):
    events = [
        *LISTED,
        "sample()",
        "search(step=0, call_id='c1', arguments={'query': 'read a file'})",
        "call(step=0, call_id='c2', name='mcp__git_hub__read', arguments_ok=True)",
        "sample()",
        "call(step=1, call_id='c3', name='mcp__git_hub__read', arguments_ok=True)",
        "call_responded(call_id='c3', is_error=False)",
    ]
    reached = _replay(tmp_path, events, policy=policy)
    assert reached["deferring step"] == 2
    assert reached["search ok found"] == 1
    assert reached["deferred call"] == 1  # the searching step does not change (INV-2)
    assert reached["discovered call"] == 1


def test_a_discovered_call_that_times_out_is_cancelled_and_its_late_answer_dropped(tmp_path):
    """A discovered tool is an MCP tool like any other once routed: its call times out,
    is cancelled, and the server's answer after that is dropped (INV-4, INV-7)."""
    events = [
        "list_done(server='git_hub')",
        "sample()",
        "search(step=0, call_id='c1', arguments={'query': 'search'})",
        "sample()",
        "call(step=1, call_id='c2', name='mcp__git_hub__search', arguments_ok=True)",
        "timeout(call_id='c2')",
        "call_responded(call_id='c2', is_error=False)",
    ]
    reached = _replay(tmp_path, events)
    assert (reached["search ok found"], reached["discovered call"]) == (1, 1)


def test_searches_that_find_nothing_or_have_bad_arguments_discover_nothing(tmp_path):
    events = [
        "sample()",  # two host tools only: the step shows every tool, no tool_search
        "search(step=0, call_id='c1', arguments={'query': 'search'})",
        *LISTED,
        "sample()",
        "search(step=1, call_id='c2', arguments={'query': 'weather'})",
        "search(step=1, call_id='c3', arguments={'query': 'read', 'limit': 0})",
        "call(step=1, call_id='c4', name='tool_search', arguments_ok=False)",
    ]
    reached = _replay(tmp_path, events)
    assert reached["deferring step"] == 1
    assert (reached["search ok"], reached["search error"], reached["search not run"]) == (1, 1, 2)
    assert reached["search ok found"] == 0


def test_a_cancel_of_a_call_that_ended_is_driven_in_lockstep(tmp_path):
    """SPEC §3.1: the model's no-op; the runtime sends nothing and ends nothing again."""
    events = [
        *LISTED,
        "sample()",
        "call(step=0, call_id='c1', name='mcp__git_hub__read', arguments_ok=True)",
        "call_responded(call_id='c1', is_error=False)",
        "cancel(call_id='c1')",
        "call(step=0, call_id='c2', name='no_such_tool', arguments_ok=True)",
        "cancel(call_id='c2')",
    ]
    reached = _replay(tmp_path, events, variant=LockstepVariant())
    assert reached["cancel after end"] == 2


@pytest.mark.parametrize(
    "events",
    [["close()"], ["list_page(server='git.hub')", "close()"]],
    ids=["first-listings", "second-page"],
)
def test_a_listing_answered_while_the_host_closes_is_driven_in_lockstep(tmp_path, events):
    """SPEC §11.14: the answer races the close; the runtime drops it (INV-12), and the
    run's own trace still refines the model."""
    reached = _replay(tmp_path, events, variant=LockstepVariant())
    assert reached["close during list"] == 2  # git.hub and git_hub are both listing


def test_the_deferral_oracle_gives_the_spec_example():
    """The machine's oracle, written from SPEC §11.9, reproduces the section's example:
    150 tools of ``big``, a search for ``weather``."""
    tools = tuple(
        Binding(f"mcp__big__{name}", "mcp:big", "big", name, False, 1)
        for name in sorted(["get_weather", *(f"tool_{i:03}" for i in range(149))])
    )
    state = Registry(1, (SourceCatalog("builtin", 0, ()), SourceCatalog("mcp:big", 1, tools)))
    assert shown_names(state, 100, set()) == {"tool_search"}
    answer = expected_search(
        state, {"query": "weather"}, {"get_weather": "Current weather for a city"}
    )
    head = texts.SEARCH_FOUND.format(count=1, query="weather")
    body = (
        '{"tools":[{"name":"mcp__big__get_weather","description":"Current weather for a '
        'city","input_schema":{"type":"object"}}]}'
    )
    assert (answer.status, answer.text, answer.found) == (
        "ok",
        f"{head}\n{body}",
        (("big", "get_weather"),),
    )
    assert shown_names(state, 100, set(answer.found)) == {"tool_search", "mcp__big__get_weather"}
    assert shown_names(state, None, set()) is None


def test_the_deferral_oracle_splits_words_as_the_spec_says():
    assert search_words("mcp__git_hub__createIssue") == ["mcp", "git", "hub", "create", "issue"]
    assert search_words("HTTPServer") == ["http", "server"]
    assert search_words("read a file") == ["read", "file"]


def _script(chooser: DrawChooser) -> list[object]:
    """A few choices as a machine makes them: a kind, a count, one of that many."""
    kind = chooser.choose(("sample", "call", "close"), "kind")
    steps = chooser.steps(4)
    return [kind, steps, chooser.choose(tuple(range(steps + 1)), "event")]


def test_the_draw_chooser_makes_the_same_choices_whether_it_prints_them_or_not():
    """Generating, the machines draw from the test case's data directly; a verbose run
    draws each choice with ``data.draw``, printing it: the same examples, in order."""

    def examples(verbosity: Verbosity) -> list[list[object]]:
        made: list[list[object]] = []

        @settings(max_examples=60, derandomize=True, database=None, verbosity=verbosity)
        @given(st.data())
        def script(data):
            made.append(_script(DrawChooser(data)))

        script()
        return made

    quiet = examples(Verbosity.normal)
    assert len(quiet) > 10
    assert quiet == examples(Verbosity.verbose)


def test_a_failing_example_is_reported_with_each_choice_and_its_label():
    @settings(max_examples=20, derandomize=True, database=None)
    @given(st.data())
    def failing(data):
        choices = _script(DrawChooser(data))
        assert choices[0] != "close"

    with pytest.raises(AssertionError) as caught:
        failing()
    notes = "\n".join(getattr(caught.value, "__notes__", ()))
    assert "Draw 1 (kind): 'close'" in notes
    assert "Draw 2 (steps): 0" in notes
