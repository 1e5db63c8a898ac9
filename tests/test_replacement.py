"""A changed server's replacement (SPEC §11.17, INV-15) against in-process servers: the
old catalog stays until the replacement's first listing, which replaces it in one
publication, or, when that listing fails, the old catalog is removed and the outcome
says so. Fast twins of ``tests/test_reconfigure.py``'s stdio scenarios (marked slow),
so that mutation testing's ``--sample`` runs reach ``impl/server/membership.py``."""

from __future__ import annotations

from typing import Any

import pytest
from testservers.inproc import paged_server, tool

from mcpbind.impl import Host, HostConfig, NullRecorder, ServerConfig
from mcpbind.impl.reconfigure import (
    ReconfigurePlan,
    ReconfigureReport,
    ServerChange,
    plan_reconfiguration,
)
from mcpbind.model import texts


async def test_a_replacement_whose_listing_succeeds_installs_its_catalog_in_place_of_the_old():
    old = ServerConfig(target=paged_server([[tool("echo")]]))
    new = ServerConfig(target=paged_server([[tool("echo"), tool("measure")]]))
    async with Host.open(HostConfig(servers={"c": old})) as host:
        generation = host.sample().generation
        report = await host.reconfigure(HostConfig(servers={"c": new}))
        (change,) = report.servers
        assert (change.name, change.change, change.connected, change.tools, change.error) == (
            "c",
            "changed",
            True,
            2,
            None,
        )
        step = host.sample()
        assert step.generation == generation + 1
        assert sorted(s.name for s in step.specs) == ["mcp__c__echo", "mcp__c__measure"]
        result = await host.call(step, "c1", "mcp__c__measure", {})
        assert result.status == "ok", result.output
        assert [(s.name, s.connected, s.tools) for s in host.server_status()] == [("c", True, 2)]


async def test_a_replacement_whose_listing_fails_removes_the_old_catalog_and_says_so():
    old = ServerConfig(target=paged_server([[tool("echo")]]))
    broken = ServerConfig(target=paged_server([[tool("echo")]], fail_page=0))
    async with Host.open(HostConfig(servers={"c": old})) as host:
        generation = host.sample().generation
        report = await host.reconfigure(HostConfig(servers={"c": broken}))
        (change,) = report.servers
        assert (change.name, change.change, change.tools) == ("c", "changed", 0)
        assert change.error is not None
        assert texts.REPLACED_CATALOG_REMOVED in change.error  # not "stays installed"
        step = host.sample()
        assert step.specs == ()
        assert step.generation == generation + 1


class Publications(NullRecorder):
    def __init__(self) -> None:
        self.log: list[tuple[int, str, tuple[str, ...]]] = []

    def published(self, generation: int, source: str, names: tuple[str, ...]) -> None:
        self.log.append((generation, source, names))


async def test_removals_report_the_emptied_catalogs_alone_in_one_generation():
    """INV-1, INV-15: removing a server with tools and one with none moves G by one, and
    only the catalog that changed is reported published (in-process twin of
    ``tests/test_reconfigure.py``'s removals)."""
    servers = {
        "a": ServerConfig(target=paged_server([[tool("echo")]])),
        "b": ServerConfig(target=paged_server([[]])),
        "c": ServerConfig(target=paged_server([[tool("echo")]])),
    }
    recorder = Publications()
    async with Host.open(HostConfig(servers=servers), recorder=recorder) as host:
        generation = host.sample().generation
        before = len(recorder.log)
        report = await host.reconfigure(HostConfig(servers={"c": servers["c"]}))
        assert recorder.log[before:] == [(generation + 1, "mcp:a", ())]
        assert report.generation == host.sample().generation == generation + 1


def _server(target: str = "http://127.0.0.1:1/mcp", **settings: Any) -> ServerConfig:
    return ServerConfig(target=target, **settings)


A, B, C = _server(), _server("http://127.0.0.1:2/mcp"), _server("http://127.0.0.1:3/mcp")


@pytest.mark.parametrize(
    ("old", "new", "plan"),
    [
        ({}, {}, ReconfigurePlan()),
        ({"a": A}, {"a": A}, ReconfigurePlan(unchanged=("a",))),
        ({"a": A}, {"a": _server()}, ReconfigurePlan(unchanged=("a",))),  # equal settings
        ({"a": A}, {"a": _server(tool_timeout_sec=9)}, ReconfigurePlan(changed=("a",))),
        ({"a": A}, {"a": B}, ReconfigurePlan(changed=("a",))),
        ({}, {"b": B, "a": A}, ReconfigurePlan(added=("b", "a"))),  # the new order
        ({"b": B, "a": A}, {}, ReconfigurePlan(removed=("b", "a"))),  # the old order
        (
            {"a": A, "b": B, "c": C},
            {"c": _server("http://127.0.0.1:9/mcp"), "d": A, "a": A},
            ReconfigurePlan(added=("d",), removed=("b",), changed=("c",), unchanged=("a",)),
        ),
        ({"a": _server(enabled=False)}, {"a": A}, ReconfigurePlan(added=("a",))),
        ({"a": A}, {"a": _server(enabled=False)}, ReconfigurePlan(removed=("a",))),
        ({"a": _server(enabled=False)}, {"a": _server(enabled=False)}, ReconfigurePlan()),
    ],
)
def test_a_reconfiguration_plans_each_enabled_server_by_name_in_configuration_order(old, new, plan):
    """SPEC §11.17: by name, enabled servers only; changed when its effective settings
    differ; each list in its configuration's order."""
    assert plan_reconfiguration(old, new) == plan


def test_a_reports_lists_name_the_servers_of_each_kind_of_change_in_order():
    servers = tuple(
        ServerChange(name, change, connected=change != "removed", tools=0)
        for name, change in [
            ("a", "added"),
            ("r", "removed"),
            ("c", "changed"),
            ("b", "added"),
            ("u", "unchanged"),
        ]
    )
    report = ReconfigureReport(generation=3, servers=servers)
    assert (report.added, report.removed, report.changed, report.unchanged) == (
        ("a", "b"),
        ("r",),
        ("c",),
        ("u",),
    )
