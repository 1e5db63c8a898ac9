"""``mcpbind catalog``: start the servers, refresh, print what a model would be shown.

Exit status: 0 (every server up), 1 (a server failed), 2 (usage or configuration error).
"""

from __future__ import annotations

import argparse
import json
import shutil
import textwrap
from typing import TYPE_CHECKING, Any

import trio

from mcpbind.impl import Host, HostConfig, McpConnector, ServerStartupError
from mcpbind.impl.wire.oauth import Authorizer
from mcpbind.model import texts

from .hosting import (
    USAGE,
    StartWatch,
    config_or_exit,
    every_tool,
    print_stderr,
    startup_failed,
    tracing,
    verbose,
)

if TYPE_CHECKING:  # the trace's writer loads only when a trace is written
    from mcpbind.impl.trace import TraceRecorder

__all__ = ["AUTH_SHOWN", "catalog_main"]

AUTH_SHOWN = {
    "unsupported": "Unsupported",
    "off": "Off",
    "bearer_token": "Bearer token",
    "oauth": "OAuth",
    "not_logged_in": "Not logged in",
    "none": "None",
}
"""How ``catalog`` shows each server's auth status (Codex's ``mcp list`` words)."""


async def _catalog(
    config: HostConfig, as_model: bool = False, recorder: TraceRecorder | None = None
) -> dict[str, Any]:
    authorizer = Authorizer.for_host(config)
    connector = McpConnector(authorizer=authorizer)
    watch = StartWatch(recorder, config)
    failed: ServerStartupError | None = None
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch.announce)
        opened = Host.open(every_tool(config, as_model), recorder=watch, connector=connector)
        try:
            async with opened as host:
                watch.scope.cancel()
                snap = host.sample()
                statuses = host.server_status()
                stderr = {n: runtime.statistics().stderr for n, runtime in host.servers.items()}
        except ServerStartupError as error:
            failed = error  # raised below, outside the nursery
        watch.scope.cancel()
    if failed is not None:
        raise failed
    auth = {s.name: await authorizer.status(s.name, config.servers[s.name]) for s in statuses}
    parallel = {name: s.supports_parallel_tool_calls for name, s in config.servers.items()}
    report: dict[str, Any] = {
        "generation": snap.generation,
        "deferred": snap.deferred,
        "servers": [
            {
                "name": s.name,
                "status": "connected" if s.connected else "unavailable",
                "auth": auth[s.name],
                "tools": s.tools,
                "error": s.error,
                "stderr": list(stderr.get(s.name, ())) if not s.connected else [],
                "excluded": [
                    {"tool": e.tool, "kind": e.kind, "reason": e.reason} for e in s.excluded
                ],
                "hears_list_changed": s.hears_list_changed,
            }
            for s in statuses
        ],
        "tools": [
            {
                "name": spec.name,
                "server": binding.server,
                "remote_name": binding.remote_name,
                "description": spec.description,
                "input_schema": dict(spec.input_schema),
                "parallel": binding.read_only or parallel.get(binding.server or "", False),
            }
            for spec in snap.specs
            for binding in [snap.names[spec.name]]
        ],
    }
    for server in report["servers"]:
        server["unlisted_enabled_tools"] = _unlisted(config, server, report["tools"], as_model)
    return report


def _unlisted(
    config: HostConfig, server: dict[str, Any], tools: list[dict[str, Any]], as_model: bool
) -> list[str]:
    """The names in a connected server's ``enabled_tools`` that it does not list (a typo
    keeps a tool out without a word, as in Codex)."""
    enabled = config.servers[server["name"]].enabled_tools
    if enabled is None or as_model or server["status"] != "connected":
        return []  # (as the model sees it, deferred tools are not in the step)
    listed = {t["remote_name"] for t in tools if t["server"] == server["name"]}
    listed |= {e["tool"] for e in server["excluded"]}
    return sorted(enabled - listed)


def catalog_main(args: argparse.Namespace) -> int:
    found = config_or_exit(args)
    if found is None:
        return USAGE
    config, source = found
    verbose(args.verbose)
    try:
        with tracing(args.trace, config) as recorder:
            report = trio.run(_catalog, config, args.as_model, recorder)
    except ServerStartupError as error:
        return startup_failed(error)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_catalog(report, source)
    return 0 if all(s["status"] == "connected" for s in report["servers"]) else 1


def _print_catalog(report: dict[str, Any], source: str) -> None:
    deferred = report["deferred"]
    more = f"; {deferred} MCP tool(s) deferred until tool_search finds them" if deferred else ""
    print(f"catalog from {source}: generation {report['generation']}{more}")
    print()
    servers = report["servers"]
    name_w = _width(16, (s["name"] for s in servers))
    print(f"  {'server':<{name_w}} {'status':<12} {'auth':<14} {'tools':>5}  error")
    for s in servers:
        auth = AUTH_SHOWN[s["auth"]]
        row = f"  {s['name']:<{name_w}} {s['status']:<12} {auth:<14} {s['tools']:>5}"
        print(f"{row}  {s['error'] or ''}".rstrip())
    for s in servers:
        print_stderr(s["name"], s["stderr"])
    for s in servers:
        if not s["hears_list_changed"]:
            print(f"  {s['name']}: {texts.UNHEARD}")
        if s["unlisted_enabled_tools"]:
            names = ", ".join(repr(n) for n in s["unlisted_enabled_tools"])
            print(f"  {s['name']}: enabled_tools names {names}, which it does not list")
    left_out = [(s["name"], e) for s in servers for e in s["excluded"]]
    if left_out:
        tool_w = _width(28, (e["tool"] for _, e in left_out))
        print()
        print(f"  {'left out (SPEC §5.4)':<{tool_w}} {'server':<{name_w}} why")
        for server, e in left_out:
            print(f"  {e['tool']:<{tool_w}} {server:<{name_w}} {e['kind']}: {e['reason']}")
    tools = report["tools"]
    tool_w = _width(44, (t["name"] for t in tools))
    server_w = _width(10, (t["server"] or "builtin" for t in tools))
    remote_w = _width(14, (t["remote_name"] for t in tools))
    print()
    header = f"  {'tool (what the model calls)':<{tool_w}} {'server':<{server_w}}"
    print(f"{header} {'remote name':<{remote_w}} lane")
    for t in tools:
        lane = "parallel" if t["parallel"] else "exclusive"
        server = t["server"] or "builtin"
        print(f"  {t['name']:<{tool_w}} {server:<{server_w}} {t['remote_name']:<{remote_w}} {lane}")
        for line in _wrapped(t["description"] or ""):
            print(line)


def _width(least: int, values: Any) -> int:
    """A column as wide as its longest value, at least ``least``: rows stay aligned."""
    return max([least, *(len(str(v)) for v in values)])


def _wrapped(description: str) -> list[str]:
    """A tool's description under its row: every line indented, long lines wrapped to
    the terminal (``COLUMNS``, else 100 columns off a terminal)."""
    width = max(40, shutil.get_terminal_size((100, 24)).columns) - 6
    lines: list[str] = []
    for paragraph in description.strip().splitlines():
        wrapped = textwrap.wrap(paragraph, width) or [""]
        lines += [f"      {text}".rstrip() for text in wrapped]
    return lines
