"""A listing in a trace (SPEC §14.1): one ``list_done`` per listing that ended, whatever
ended it, on real in-process servers.

A listing the host read to its end is recorded as the rules see it (each tool's
name, digest, validity), before what is decided of it; one a cap or a page rejected
before its end is recorded as its fault alone: the name (``(page)`` for a page, empty for
a cap), the problem, and ``over_cap`` for a cap. Mutation testing (issue 33) found the
second kind of record pinned by no test."""

from __future__ import annotations

import io
import json
from typing import Any

from testservers.inproc import paged_server, tool

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.trace import TraceRecorder, trace_header
from mcpbind.model.refine import refine
from mcpbind.model.trace import check_trace, parse_trace


async def traced(pages: list[list[dict[str, Any]]], **options: Any) -> list[dict[str, Any]]:
    out = io.StringIO()
    config = HostConfig(servers={"p": ServerConfig(target=paged_server(pages, **options))})
    recorder = TraceRecorder(out, trace_header(config))
    async with Host.open(config, recorder=recorder) as host:
        host.sample()
    recorder.end()
    written = [json.loads(line) for line in out.getvalue().splitlines()]
    lines = [json.dumps(record) for record in written]
    assert check_trace(parse_trace(lines)) == []
    assert refine(parse_trace(lines)).violation is None
    return written


def listed(written: list[dict[str, Any]]) -> list[Any]:
    return [r["tools"] for r in written if r["kind"] == "list_done"]


async def test_a_listing_a_cap_ends_is_recorded_as_that_cap_alone():
    written = await traced([[tool("a")], [tool("b")], [tool("c")]], cursors=lambda i: "page-1")
    assert listed(written) == [[{"name": "", "problem": "a repeated cursor", "over_cap": True}]]
    assert [r["status"] for r in written if r["kind"] == "refresh_outcome"] == ["rejected"]


async def test_a_listing_read_to_its_end_is_recorded_whole_even_when_it_is_rejected():
    written = await traced([[tool("a"), tool("a")]])
    (tools,) = listed(written)
    assert [(t["name"], "spec" in t, t.get("problem")) for t in tools] == [
        ("a", True, None),
        ("a", False, "the name is listed twice"),
    ]
    assert [r["status"] for r in written if r["kind"] == "refresh_outcome"] == ["rejected"]


async def test_an_accepted_listing_is_recorded_once():
    written = await traced([[tool("a")], [tool("b")]])
    (tools,) = listed(written)
    assert [t["name"] for t in tools] == ["a", "b"]
    assert [r["status"] for r in written if r["kind"] == "refresh_outcome"] == ["installed"]
