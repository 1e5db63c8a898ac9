"""``step_overlay`` (SPEC §11.19) by itself, without servers: the contributors of the
usual kind replay their own earlier actions, each under its own name, and a per-step
contributor that raises leaves the servers as they are with a warning saying why (a
``ConfigError`` by its text, anything else by its repr)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pytest
from mcp import StdioServerParameters

from mcpbind.impl import RemoveServer, ServerConfig, SetServer, StepContext
from mcpbind.impl.contributors import apply_overlays
from mcpbind.impl.errors import ConfigError
from mcpbind.impl.lifetime import step_overlay


def config(command: str) -> ServerConfig:
    return ServerConfig(target=StdioServerParameters(command=command))


class Fixed:
    """A contributor of the usual kind: the same actions every time."""

    def __init__(self, id: str, actions: Sequence[SetServer | RemoveServer]) -> None:
        self.id = id
        self._actions = actions

    def actions(self, servers: Mapping[str, ServerConfig]) -> Sequence[SetServer | RemoveServer]:
        return self._actions


class Raising:
    """A per-step contributor whose ``actions_for_step`` raises ``error``."""

    id = "raising"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def actions(self, servers: Mapping[str, ServerConfig]) -> Sequence[SetServer | RemoveServer]:
        return []

    async def actions_for_step(
        self, servers: Mapping[str, ServerConfig], step: StepContext
    ) -> Sequence[SetServer | RemoveServer]:
        raise self.error


async def test_contributors_of_the_usual_kind_replay_their_own_actions_under_their_names() -> None:
    base = {"a": config("a")}
    first = Fixed("first", [SetServer("b", config("b"))])
    second = Fixed("second", [RemoveServer("a"), SetServer("c", config("c"))])
    running = apply_overlays(base, [first, second])
    again = await step_overlay(base, [first, second], running, StepContext(step=1))
    assert again is not None
    assert dict(again.servers) == dict(running.servers) == {"b": config("b"), "c": config("c")}
    assert [(r.order, r.contributor, r.action) for r in again.actions] == [
        (0, "first", SetServer("b", config("b"))),
        (1, "second", RemoveServer("a")),
        (2, "second", SetServer("c", config("c"))),
    ]
    assert {name: r.contributor for name, r in again.decided_by.items()} == {
        "a": "second",
        "b": "first",
        "c": "second",
    }


@pytest.mark.parametrize(
    ("error", "why"),
    [
        (ConfigError("server 'b' is not allowed here"), "(server 'b' is not allowed here)"),
        (
            RuntimeError("the plugin store is unreachable"),
            "(RuntimeError('the plugin store is unreachable'))",
        ),
    ],
)
async def test_a_per_step_contributor_that_raises_is_named_with_its_reason_and_changes_nothing(
    error: Exception, why: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpbind.contributors")
    base = {"a": config("a")}
    running = apply_overlays(base, [])
    assert await step_overlay(base, [Raising(error)], running, StepContext(step=3)) is None
    [message] = [r.getMessage() for r in caplog.records]
    assert message == (
        "contributor 'raising': actions_for_step failed at step 3 "
        + why
        + "; the host keeps the servers it runs"
    )
