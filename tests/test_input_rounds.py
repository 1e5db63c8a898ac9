"""A 2026-07-28 call the server answers with ``input_required`` (SPEC §8.8, §11.10) is
sent again with the answers; how the input requests a client cannot answer as they are
end it. Against ``testservers/raw_wire.py`` over stdio, with its odd tools listed
(``MCPBIND_TEST_RAW_ODD_INPUTS``): each row is the tool and the call's exact ending. And
the pure readings of a result the connection makes before any model sees it."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from mcp import StdioServerParameters
from testservers.processes import RAW_WIRE
from testservers.raw_wire import STATE

from mcpbind.impl import ElicitationAnswer, ElicitationRequest, Host, HostConfig, ServerConfig
from mcpbind.impl.wire.connection import call_params, complete_by_default
from mcpbind.model import texts


def failed(tool: str, why: str) -> tuple[str, str]:
    return "failed", texts.TRANSPORT.format(tool=tool, server="s", why=why)


ROWS = [
    ("nagging", failed("nagging", "the server asked for input more than 10 times"), 10),
    (
        "sampling",
        failed(
            "sampling",
            "the server asked for sampling/createMessage, which mcpbind does not provide",
        ),
        0,
    ),
    # refused by the revision's result check, before any input is read
    ("malformed", failed("malformed", "malformed reply: 2 validation error(s)"), 0),
    ("patient", ("ok", "patient-ok"), 0),  # no input asked: the state goes back, unanswered
]


@pytest.mark.parametrize(("tool", "ending", "asked"), ROWS, ids=[r[0] for r in ROWS])
async def test_input_requests_a_client_cannot_answer_end_the_call_as_the_row_says(
    tool: str, ending: tuple[str, str], asked: int
) -> None:
    questions: list[ElicitationRequest] = []

    async def accept(request: ElicitationRequest) -> ElicitationAnswer:
        questions.append(request)
        return ElicitationAnswer("accept", {"ok": True})

    env = {**os.environ, "MCPBIND_TEST_RAW_ODD_INPUTS": "1"}
    target = StdioServerParameters(command=sys.executable, args=[str(RAW_WIRE)], env=env)
    config = HostConfig(
        servers={"s": ServerConfig(target=target, required=True)},
        elicitation="ask",
        elicitation_handler=accept,
    )
    async with Host.open(config) as host:
        result = await host.call(host.sample(), "c1", f"mcp__s__{tool}", {})
    status, text = ending
    assert result.status == status, result.output
    if status == "ok":
        assert result.output.splitlines()[1:] == [text]
    else:
        assert result.output == text
    assert len(questions) == asked  # each round asked the user once; the others, never


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        ({}, {"resultType": "complete"}),
        ({"resultType": "input_required"}, {"resultType": "input_required"}),
        ({"ttlMs": -5, "resultType": "complete"}, {"ttlMs": 0, "resultType": "complete"}),
        ({"ttlMs": -0.5}, {"ttlMs": 0, "resultType": "complete"}),
        ({"ttlMs": 0}, {"ttlMs": 0, "resultType": "complete"}),
        ({"ttlMs": 0.5}, {"ttlMs": 0.5, "resultType": "complete"}),  # under 1, not negative
        ({"ttlMs": 7}, {"ttlMs": 7, "resultType": "complete"}),
        ({"ttlMs": True}, {"ttlMs": True, "resultType": "complete"}),  # a bool is no number
        ({"ttlMs": "-1"}, {"ttlMs": "-1", "resultType": "complete"}),
        ([1, 2], [1, 2]),  # not a result object: left for the check to refuse
        (None, None),
    ],
)
def test_an_absent_result_type_reads_complete_and_a_negative_ttl_reads_zero(
    raw: Any, read: Any
) -> None:
    assert complete_by_default(raw) == read


@pytest.mark.parametrize(
    ("name", "meta"),
    [
        (7, None),  # a name that is no string: the SDK's model says what is wrong
        ("echo", {"dev.mcpbind/step": None}),  # the SDK's dump drops a None
        ("echo", {"dev.mcpbind/step": float("nan")}),
    ],
)
def test_a_call_the_short_cut_cannot_write_as_the_sdk_would_is_left_to_the_sdk(
    name: Any, meta: Any
) -> None:
    assert call_params(name, {"text": "x"}, meta) is None


def test_the_raw_servers_state_is_what_a_patient_call_sends_back() -> None:
    """The row ``patient`` above relies on it: one fixed state, echoed."""
    assert STATE == "opaque-state-1"
