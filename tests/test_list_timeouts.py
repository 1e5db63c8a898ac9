"""The listing timeout (SPEC §5.6): a refresh whose ``tools/list`` is not whole within
``list_timeout_sec`` is rejected as ``list_failed`` with the exact text, the catalog
kept; 0 means no limit. A real in-process server whose listings after the first take
the row's seconds, under trio's virtual time."""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
import trio
import trio.testing
from mcp.server.lowlevel import Server

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.model import texts


def slow_lister(seconds: float) -> Server:
    """One tool ``t``; every listing after the first takes ``seconds``."""
    listings = 0

    async def on_list_tools(ctx: object, params: object) -> types.ListToolsResult:
        nonlocal listings
        listings += 1
        if listings > 1:
            await anyio.sleep(seconds)
        return types.ListToolsResult(tools=[types.Tool(name="t", input_schema={"type": "object"})])

    return Server("slow-lister", on_list_tools=on_list_tools)


ROWS = [
    # list_timeout_sec, the listing's seconds -> status, kind, reason
    (5, 10.0, "rejected", "list_failed", "no complete listing within list_timeout_sec = 5"),
    (2.5, 3.0, "rejected", "list_failed", "no complete listing within list_timeout_sec = 2.5"),
    (5, 4.0, "unchanged", None, None),
    (0, 100_000.0, "unchanged", None, None),  # 0: no limit at all
]


@pytest.mark.trio
@pytest.mark.parametrize("row", ROWS, ids=["late", "late-fraction", "in-time", "zero-is-none"])
async def test_a_listing_not_whole_within_its_timeout_rejects_the_refresh_and_keeps_the_catalog(
    autojump_clock: trio.testing.MockClock, row: tuple[float, float, str, str | None, str | None]
) -> None:
    timeout, seconds, status, kind, why = row
    server = ServerConfig(target=slow_lister(seconds), list_timeout_sec=timeout)
    async with Host.open(HostConfig(servers={"s": server})) as host:
        outcome = await host.refresh("s")
        assert sorted(host.sample().names) == ["mcp__s__t"]  # the catalog, kept
    assert (outcome.status, outcome.kind) == (status, kind)
    reason = None if why is None else texts.REJECT_LIST_FAILED.format(server="s", why=why)
    assert outcome.reason == reason
