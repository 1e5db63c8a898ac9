"""The second machine: the runtime over real in-process ``MCPServer``s, no double.

Random interleavings of refreshes, samples, calls, cancels and catalog changes (a tool
added or removed, then ``list_changed`` announced) run against two real SDK servers whose
names collide after sanitising. Nothing is scripted below the SDK, so this machine cannot
be held to the model step by step; it checks INV-1..INV-5 on what it observes, and that
each call_id ends exactly once (INV-4, LIVE-1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st
from mcp.server.mcpserver import MCPServer
from mcp.shared.subscriptions import ToolsListChanged

from mcpbind.impl import BuiltinTool, DuplicateCallId, Host, HostConfig, ServerConfig
from mcpbind.impl.catalog.planner import StepSnapshot
from mcpbind.impl.seams import PRODUCTION, Seams
from mcpbind.impl.values import ToolResult

from .lockstep import MachineFailure

__all__ = ["real_servers_property", "run_real_servers"]

SERVERS = ("git.hub", "git_hub")
POOL = ("search", "read", "write", "admin", "a.b", "a_b")
BUILTIN = "mcp__git_hub__admin"


@attrs.define(eq=False)
class _Server:
    name: str
    mcp: MCPServer
    tools: set[str]
    history: list[frozenset[str]]
    gate: trio.Event = attrs.field(factory=trio.Event)

    def add(self, tool: str) -> None:
        async def handler() -> str:  # async: a sync tool would run in a thread
            await trio.sleep(0.5)
            return f"{self.name}/{tool}"

        self.mcp.add_tool(handler, name=tool, description=f"{tool} of {self.name}")
        self.tools.add(tool)
        self.history.append(frozenset(self.tools))

    def remove(self, tool: str) -> None:
        self.mcp.remove_tool(tool)
        self.tools.discard(tool)
        self.history.append(frozenset(self.tools))


def _server(name: str, initial: tuple[str, ...]) -> _Server:
    server = _Server(name, MCPServer(name, log_level="ERROR"), set(), [frozenset()])
    for tool in initial:
        server.add(tool)
    return server


@attrs.define(eq=False)
class _Run:
    draw: Callable[[Any, str], Any]
    seams: Seams = PRODUCTION
    trace: list[str] = attrs.field(factory=list)
    results: dict[str, list[ToolResult]] = attrs.field(factory=dict)
    expected: dict[str, tuple[str, str] | None] = attrs.field(factory=dict)
    snapshots: list[tuple[StepSnapshot, dict[str, tuple[str | None, str]]]] = attrs.field(
        factory=list
    )
    generations: list[int] = attrs.field(factory=list)
    calls: int = 0
    problems: list[tuple[str, str]] = attrs.field(factory=list)
    """Found inside call tasks, raised by ``check`` between actions (deterministically)."""

    def fail(self, check: str, detail: str) -> MachineFailure:
        return MachineFailure(check, detail, self.trace)

    async def main(self, steps: int) -> None:
        servers = {
            "git.hub": _server("git.hub", ("search", "read")),
            "git_hub": _server("git_hub", ("search",)),
        }

        async def builtin(arguments: dict[str, Any]) -> str:
            return "builtin"

        config = HostConfig(
            servers={
                n: ServerConfig(target=s.mcp, tool_timeout_sec=30) for n, s in servers.items()
            },
            builtins=(BuiltinTool(BUILTIN, "host tool", {"type": "object"}, builtin),),
        )
        async with Host.open(config, seams=self.seams) as host, trio.open_nursery() as nursery:
            for _ in range(steps):
                action = self.draw(
                    st.sampled_from(["refresh", "sample", "call", "cancel", "change", "wait"]),
                    "action",
                )
                await self.act(action, host, servers, nursery)
                self.check(host, servers)
            with trio.move_on_after(120):
                while host.statistics().calls_in_flight:
                    await trio.sleep(1)
            if host.statistics().calls_in_flight:
                stuck = host.statistics().calls_in_flight
                raise self.fail(
                    "LIVE-1", f"{stuck} call(s) still running 120 s after the last step"
                )
            self.check(host, servers)
            nursery.cancel_scope.cancel()
        for call_id, results in self.results.items():
            if len(results) != 1:
                raise self.fail("INV-4", f"{call_id} ended with {len(results)} results")

    async def act(
        self, action: str, host: Host, servers: dict[str, _Server], nursery: trio.Nursery
    ) -> None:
        if action == "refresh":
            name = self.draw(st.sampled_from(SERVERS), "server")
            self.trace.append(f"refresh({name})")
            outcome = await host.refresh(name)
            if outcome.status == "installed":
                self.generations.append(outcome.generation)
        elif action == "sample":
            snap = host.sample()
            self.trace.append(f"sample() -> generation {snap.generation}")
            frozen = {n: (b.server, b.remote_name) for n, b in snap.names.items()}
            self.snapshots.append((snap, frozen))
        elif action == "call" and self.snapshots:
            snap, frozen = self.snapshots[-1]
            names = [*sorted(frozen), "mcp__nope__nope"]
            name = self.draw(st.sampled_from(names), "name")
            call_id = f"c{self.calls}"
            self.calls += 1
            self.expected[call_id] = frozen.get(name)  # type: ignore[assignment]
            self.trace.append(f"call({call_id}, {name})")
            nursery.start_soon(self._call, host, snap, call_id, name)
        elif action == "cancel" and self.calls:
            call_id = f"c{self.draw(st.integers(0, self.calls - 1), 'call')}"
            self.trace.append(f"cancel({call_id})")
            host.cancel(call_id)
        elif action == "change":
            server = servers[self.draw(st.sampled_from(SERVERS), "server")]
            tool = self.draw(st.sampled_from(POOL), "tool")
            if tool in server.tools:
                server.remove(tool)
                self.trace.append(f"remove({server.name}, {tool})")
            else:
                server.add(tool)
                self.trace.append(f"add({server.name}, {tool})")
            await server.mcp._subscriptions.publish(ToolsListChanged())
        else:
            self.trace.append("wait")
        await trio.testing.wait_all_tasks_blocked()

    async def _call(self, host: Host, snap: StepSnapshot, call_id: str, name: str) -> None:
        try:
            result = await host.call(snap, call_id, name, {})
        except DuplicateCallId as error:
            self.problems.append(("INV-4", f"fresh call_id refused: {error}"))
            return
        self.results.setdefault(call_id, []).append(result)
        target = self.expected[call_id]
        if result.status == "ok" and target is not None:
            server, remote = target
            if server is not None and f"{server}/{remote}" not in result.output:
                self.problems.append(("INV-2", f"{call_id} ran something else: {result.output!r}"))
        if target is None and result.status != "unsupported":
            self.problems.append(
                ("INV-2", f"{call_id} to a name not in its step ended {result.status}")
            )

    def check(self, host: Host, servers: dict[str, _Server]) -> None:
        if self.problems:
            raise self.fail(*self.problems[0])
        state = host.registry.state
        if self.generations != sorted(self.generations) or len(set(self.generations)) != len(
            self.generations
        ):
            raise self.fail("INV-1", f"installed generations {self.generations}")
        if state.generation < max(self.generations, default=0):
            raise self.fail("INV-1", "the generation went back")
        names = [b.name for c in state.catalogs.values() for b in c.bindings]
        if len(names) != len(set(names)):
            raise self.fail("INV-5", "a name is held twice")
        builtin = state.by_name.get(BUILTIN)
        if builtin is None or builtin.server is not None:
            raise self.fail("INV-5", "the builtin lost its name")
        for name, server in servers.items():
            remotes = state.live_remotes.get(f"mcp:{name}", frozenset())
            if remotes and remotes not in server.history:
                raise self.fail("INV-3", f"{name} shows {sorted(remotes)}, never its whole catalog")
        for snap, frozen in self.snapshots:
            if {n: (b.server, b.remote_name) for n, b in snap.names.items()} != frozen:
                raise self.fail("INV-2", f"step {snap.step} changed")


def run_real_servers(
    draw: Callable[[Any, str], Any], steps: int = 25, *, seams: Seams = PRODUCTION
) -> list[str]:
    run = _Run(draw, seams)
    try:
        trio.run(run.main, steps, clock=trio.testing.MockClock(autojump_threshold=0))
    except BaseExceptionGroup as group:
        failures = [e for e in group.exceptions if isinstance(e, MachineFailure)]
        if failures:
            raise failures[0] from None
        raise
    return run.trace


def real_servers_property(steps: int = 25, *, seams: Seams = PRODUCTION) -> Callable[[], None]:
    @given(st.data())
    def real_servers(data: Any) -> None:
        draw = lambda strategy, label: data.draw(strategy, label=label)  # noqa: E731
        run_real_servers(draw, steps, seams=seams)

    return real_servers
