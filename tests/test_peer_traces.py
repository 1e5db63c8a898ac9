"""Traces of eight host layers through the same four scenarios (issue 18, SPEC §14.4):
mcpbind's own (written by its TraceRecorder), mcp's ``ClientSessionGroup``, openai-agents'
MCP tools, fastmcp's ``ClientGroup``, pydantic-ai's ``MCPToolset`` (with its tool cache and
without: ``cache_tools=False``), agent-framework's ``MCPStdioTool``,
langchain-mcp-adapters (a session per call, and one session) and google-adk's
``McpToolset`` (written by the harness from outside). The files in
``benchmarks/peers/traces/`` are flagged as the table in docs/traces.md says, and recording the
first two anew gives the same verdicts (the others need their own venvs, installed from the
package index: ``python -m benchmarks.peers.traces --with-peers`` records them anew)."""

from __future__ import annotations

import json
import pathlib

import anyio
import pytest
from cli_runner import mcpbind

from benchmarks.peers.traces import OUT, SCENARIOS, SUBJECTS, record, verdict
from mcpbind.model.refine import NotRefinable, refine
from mcpbind.model.trace import parse_trace

TRACES_PAGE = pathlib.Path(__file__).resolve().parent.parent / "docs" / "traces.md"

#: What each subject's trace of each scenario violates (docs/traces.md "Traces of other host
#: layers"): mcpbind conforms throughout; both others accept a reused call_id (two
#: results, INV-4); the group never refreshes after list_changed (LIVE-2), the agent layer
#: and fastmcp's ClientGroup list again for their next step; pydantic-ai's toolset keeps its
#: cached tools (it opens no listen stream, so it never hears list_changed: LIVE-2) unless
#: its cache is off, when it lists again for each step; agent-framework's tool listens and
#: reloads its tools in the background, so its next step has the change; langchain's
#: adapter lists for each step, and on one session of its mcp 1.x it cancels a call
#: without notifications/cancelled (INV-7); with a session per call (its default) the
#: cancellation closes the call's session and comes out as an error; google-adk's toolset
#: lists on every get_tools() and opens a new session after its server died.
EXPECTED = {
    "mcpbind": {scenario: [] for scenario in SCENARIOS},
    "client-session-group": {
        "cancel_in_flight": [],
        "reused_call_id": ["INV-4"],
        "server_dies_mid_call": [],
        "refresh_during_a_step": ["LIVE-2"],
    },
    "openai-agents": {
        "cancel_in_flight": [],
        "reused_call_id": ["INV-4"],
        "server_dies_mid_call": [],
        "refresh_during_a_step": [],
    },
    "fastmcp-client-group": {
        "cancel_in_flight": [],
        "reused_call_id": ["INV-4"],
        "server_dies_mid_call": [],
        "refresh_during_a_step": [],
    },
    "pydantic-ai": {
        "cancel_in_flight": [],
        "reused_call_id": ["INV-4"],
        "server_dies_mid_call": [],
        "refresh_during_a_step": ["LIVE-2"],
    },
    "pydantic-ai-uncached": {
        "cancel_in_flight": [],
        "reused_call_id": ["INV-4"],
        "server_dies_mid_call": [],
        "refresh_during_a_step": [],
    },
    "agent-framework": {
        "cancel_in_flight": [],
        "reused_call_id": ["INV-4"],
        "server_dies_mid_call": [],
        "refresh_during_a_step": [],
    },
    "langchain-mcp-adapters": {
        "cancel_in_flight": [],
        "reused_call_id": ["INV-4"],
        "server_dies_mid_call": [],
        "refresh_during_a_step": [],
    },
    "langchain-mcp-adapters-session": {
        "cancel_in_flight": ["INV-7"],
        "reused_call_id": ["INV-4"],
        "server_dies_mid_call": [],
        "refresh_during_a_step": [],
    },
    "google-adk": {
        "cancel_in_flight": [],
        "reused_call_id": ["INV-4"],
        "server_dies_mid_call": [],
        "refresh_during_a_step": [],
    },
}


def cell(ids: list[str]) -> str:
    return ", ".join(ids) if ids else "conforms"


@pytest.mark.parametrize("subject", sorted(EXPECTED))
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_each_committed_trace_is_flagged_as_the_table_says(subject, scenario):
    text = (OUT / f"{subject}-{scenario}.ndjson").read_text(encoding="utf-8")
    assert verdict(text) == EXPECTED[subject][scenario]


def test_the_docs_table_says_what_the_traces_show():
    page = TRACES_PAGE.read_text(encoding="utf-8")
    for subject, row in EXPECTED.items():
        line = f"| `{subject}` | " + " | ".join(cell(row[s]) for s in SCENARIOS) + " |"
        assert line in page, line


NEWEST = [
    "fastmcp-client-group",
    "pydantic-ai",
    "pydantic-ai-uncached",
    "agent-framework",
    "langchain-mcp-adapters",
    "langchain-mcp-adapters-session",
    "google-adk",
]


@pytest.mark.parametrize("subject", NEWEST)
def test_mcpbind_trace_check_flags_the_newest_peers_traces_as_the_table_says(subject):
    """The command a user runs on a committed trace gives the table's verdict (exit 0 when
    it conforms, 1 with the invariants broken), here for fastmcp's ClientGroup,
    pydantic-ai's MCPToolset, agent-framework's MCPStdioTool, langchain's adapter and
    google-adk's McpToolset."""
    for scenario in SCENARIOS:
        path = OUT / f"{subject}-{scenario}.ndjson"
        done = mcpbind("trace", "check", "--json", str(path))
        expected = EXPECTED[subject][scenario]
        assert done.returncode == (1 if expected else 0), done.stderr
        seen = [v["invariant"] for v in json.loads(done.stdout)["violations"]]
        assert seen == expected


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_mcpbinds_traces_refine_the_model_and_the_peers_cannot_be_refined(scenario):
    """SPEC §14.5: mcpbind's traces of the four scenarios (a real server over stdio, one
    dying mid-call) are runs of the model; the peers' carry no server_options (they use
    neither mcpbind's names nor its texts), so only the monitors judge them."""
    ours = parse_trace((OUT / f"mcpbind-{scenario}.ndjson").read_text().splitlines())
    assert refine(ours).violation is None
    for peer in sorted(set(EXPECTED) - {"mcpbind"}):
        theirs = (OUT / f"{peer}-{scenario}.ndjson").read_text().splitlines()
        with pytest.raises(NotRefinable):
            refine(parse_trace(theirs))


@pytest.mark.slow
def test_recording_the_scenarios_anew_gives_the_same_verdicts(tmp_path):
    table = anyio.run(record, tmp_path / "out", tmp_path, backend="trio")
    assert table == {subject: EXPECTED[subject] for subject in SUBJECTS}
    for scenario in SCENARIOS:
        text = (tmp_path / "out" / f"mcpbind-{scenario}.ndjson").read_text()
        assert refine(parse_trace(text.splitlines())).violation is None
