"""Reconfiguration: a running host takes a new set of servers (SPEC §11.17, INV-15, INV-16).

Theory of operation
-------------------
``Host.reconfigure(config)`` re-runs the host's MCP server contributors on
``config.servers`` and compares the effective configuration, name by name, with the one it
runs: a server is *added*, *removed*, *changed* (its effective :class:`ServerConfig` is not
equal) or *unchanged* (:func:`plan_reconfiguration`, pure). Then, with no ``await``:

1. the ``reconfigure`` input is recorded;
2. each removed or changed server, in configuration order, retires: its refresh in flight
   ends ``rejected`` (``reconfigured``), every pending call bound to it ends ``cancelled``
   (its cancellation, if it was sent, handed to its session as at close);
3. the catalogs of the removed servers are emptied in ONE publication (INV-1, INV-15);
4. each added or changed server gets a new runtime; a changed one's keeps the old catalog
   and its calls wait, as for a lazy start (INV-11), until its first listing ended.

Then the I/O: each retired session closes once the calls it owed a cancellation have their
results (INV-16: cancellations first), each replacement connects once the session it
replaces is closed, and the call returns once the new servers' first attempts settled, as
at open (startup timeouts, the optional-startup grace) and the retired sessions closed.
Unchanged servers are not touched:
same runtime, session and process. The work is done in the host's own task group, so a
caller that gives up waiting leaves nothing half done.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

import anyio
import attrs
from anyio.abc import TaskGroup

from .calls.table import CallTable, PendingCall
from .catalog.publisher import Publisher
from .config.contributors import kinds
from .config.host import HostConfig
from .config.recorder import Recorder
from .config.server import ServerConfig
from .contributors import ServerProvenance, apply_overlays
from .errors import HostClosed
from .router import Router
from .server.context import RuntimeContext
from .server.runtime import ServerRuntime

__all__ = [
    "Change",
    "PlanReconfiguration",
    "ReconfigurePlan",
    "ReconfigureReport",
    "Reconfiguring",
    "ServerChange",
    "plan_reconfiguration",
]

Change = Literal["added", "removed", "changed", "unchanged"]


@attrs.frozen
class ReconfigurePlan:
    """What a reconfiguration does, by server name, each in configuration order (the new
    configuration's; a removed server in the old one's)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()


PlanReconfiguration = Callable[
    [Mapping[str, ServerConfig], Mapping[str, ServerConfig]], ReconfigurePlan
]


def plan_reconfiguration(
    old: Mapping[str, ServerConfig], new: Mapping[str, ServerConfig]
) -> ReconfigurePlan:
    """SPEC §11.17: compare the enabled servers of two effective configurations by name;
    a server whose effective settings are not equal is changed."""
    running = {name: c for name, c in old.items() if c.enabled}
    wanted = {name: c for name, c in new.items() if c.enabled}
    return ReconfigurePlan(
        added=tuple(name for name in wanted if name not in running),
        removed=tuple(name for name in running if name not in wanted),
        changed=tuple(n for n, c in wanted.items() if n in running and running[n] != c),
        unchanged=tuple(n for n, c in wanted.items() if n in running and running[n] == c),
    )


@attrs.frozen
class ServerChange:
    """What a reconfiguration did to one server."""

    name: str
    change: Change
    connected: bool
    """Connected once the reconfiguration returned (False for a removed server)."""
    tools: int
    """Its tools in the registry once the reconfiguration returned."""
    error: str | None = None
    """Why its (new) server's first attempt or first listing failed, if it did."""
    calls_ended: int = 0
    """Pending calls the reconfiguration ended ``cancelled`` (removed or changed)."""


@attrs.frozen
class ReconfigureReport:
    """What ``Host.reconfigure`` did, server by server in configuration order."""

    generation: int
    """The registry generation once the removals were published (one publication)."""
    servers: tuple[ServerChange, ...]

    def _named(self, change: Change) -> tuple[str, ...]:
        return tuple(s.name for s in self.servers if s.change == change)

    @property
    def added(self) -> tuple[str, ...]:
        return self._named("added")

    @property
    def removed(self) -> tuple[str, ...]:
        return self._named("removed")

    @property
    def changed(self) -> tuple[str, ...]:
        return self._named("changed")

    @property
    def unchanged(self) -> tuple[str, ...]:
        return self._named("unchanged")


@attrs.define(eq=False)
class _Retirement:
    runtime: ServerRuntime
    ended: tuple[PendingCall, ...]
    closed: anyio.Event = attrs.field(factory=anyio.Event)


class Reconfiguring:
    """The part of :class:`.host.Host` that reconfigures it (see the module docstring)."""

    config: HostConfig
    recorder: Recorder
    servers: dict[str, ServerRuntime]
    _overlay: ServerProvenance
    _calls: CallTable
    _publisher: Publisher
    _router: Router
    _context: RuntimeContext
    _make_runtime: Callable[[str, ServerConfig, RuntimeContext], ServerRuntime]
    _plan: PlanReconfiguration
    _group: TaskGroup | None
    _open: bool
    _reconfiguring: anyio.Lock
    _retiring: list[_Retirement]

    async def reconfigure(self, config: HostConfig) -> ReconfigureReport:
        """Run the servers of ``config`` from now on (SPEC §11.17) and report what changed.

        The host's MCP server contributors run again on ``config.servers``; only the
        servers are read from ``config`` (every other setting stays as the host opened).
        Servers removed or changed end their pending calls ``cancelled`` (a call in
        flight gets its ``notifications/cancelled`` before the session closes); the
        removed servers' tools leave in one publication; a changed server's catalog stays
        until its replacement's first listing replaces it in one publication, or is
        removed if that listing fails; calls to it wait meanwhile. Unchanged servers keep
        their session and process. Returns once the retired sessions closed and the new
        servers' first attempts settled (as ``Host.open`` waits). Concurrent calls run one
        after the other. Raises
        :class:`HostClosed` once the host closed, and :class:`ConfigError` (nothing
        changed) when a contributor's actions are invalid."""
        if not self._open:
            raise HostClosed
        async with self._reconfiguring:
            if not self._open or self._group is None:
                raise HostClosed
            group = self._group
            contributors = list(kinds(self.config.contributors).servers)
            overlay = apply_overlays(config.servers, contributors)  # may raise: nothing changed
            return await self._apply(config, overlay, group)

    async def reconfigure_to(self, overlay: ServerProvenance) -> ReconfigureReport:
        """Run the servers of ``overlay`` from now on, the configured servers unchanged:
        a per-step overlay's (SPEC §11.19, ``Host.begin_step``). As :meth:`reconfigure`
        otherwise, the contributors not run again."""
        if not self._open:
            raise HostClosed
        async with self._reconfiguring:
            if not self._open or self._group is None:
                raise HostClosed
            return await self._apply(self.config, overlay, self._group)

    async def _apply(
        self, config: HostConfig, overlay: ServerProvenance, group: TaskGroup
    ) -> ReconfigureReport:
        counts, generation = self._decide(config, overlay, group)
        done = anyio.Event()
        joining = [self.servers[n] for n in counts.joining]
        group.start_soon(self._settle, joining, list(self._retiring), done)
        await done.wait()
        return self._report(counts, generation)

    def _decide(
        self, config: HostConfig, overlay: ServerProvenance, group: TaskGroup
    ) -> tuple[_Counts, int]:
        """Everything a reconfiguration changes, decided at once (no ``await``)."""
        plan = self._plan(self._overlay.servers, overlay.servers)
        # trace's writer loads here, not at start-up (issue 29: `mcpbind catalog` records nothing)
        from .trace import server_options  # noqa: PLC0415

        approver = self.config.approver is not None
        options = {  # what refinement needs of the servers it adds or changes (SPEC §14.1)
            name: server_options(overlay.servers[name], has_approver=approver)
            for name in overlay.servers
            if name in plan.added or name in plan.changed
        }
        names = {"added": plan.added, "removed": plan.removed, "changed": plan.changed}
        fields: dict[str, Any] = {k: list(v) for k, v in names.items()}
        self.recorder.event("reconfigure", {**fields, "server_options": options})
        counts = _Counts(plan)
        leaving = set(plan.removed) | set(plan.changed)
        retirements: dict[str, _Retirement] = {}
        for name in [n for n in self.servers if n in leaving]:  # configuration order
            runtime = self.servers[name]
            how: Literal["removed", "replaced"] = "removed" if name in plan.removed else "replaced"
            runtime.retire(how)
            retirement = _Retirement(runtime, self._calls.end_bound(name, how))
            counts.ended[name] = len(retirement.ended)
            retirements[name] = retirement
        emptied = {self.servers[n].source: () for n in plan.removed}
        published = self._publisher.publish_many(emptied)
        generation = (published or self._publisher.state).generation
        for name in plan.removed:
            del self.servers[name]
        servers = dict(self.servers)
        self.servers.clear()
        for name, server in overlay.servers.items():  # the new configuration's order
            if name in plan.unchanged:
                self.servers[name] = servers[name]
            elif name in plan.added or name in plan.changed:
                runtime = self._make_runtime(name, server, self._context)
                old = retirements.get(name)
                if old is None:
                    runtime.join(replacing=False)
                else:
                    runtime.join(replacing=True, after=old.closed)
                self.servers[name] = runtime
                group.start_soon(runtime.run, name=f"mcpbind server {name}")
        for retirement in retirements.values():
            self._retiring.append(retirement)
            group.start_soon(self._retire, retirement)
        self._overlay = overlay
        self.config = attrs.evolve(self.config, servers=dict(config.servers))
        self._router.reconfigured()
        return counts, generation

    async def _retire(self, retirement: _Retirement) -> None:
        """INV-16: the retired server's session closes once every call it ended has its
        result (each cancellation handed to the session first)."""
        try:
            await retirement.runtime.retired(lambda: self._calls.wait_ended(retirement.ended))
        finally:
            retirement.closed.set()
            self._retiring.remove(retirement)

    async def _settle(
        self, joining: list[ServerRuntime], retiring: list[_Retirement], done: anyio.Event
    ) -> None:
        """Wait for each retired session to close, and for each new server's first attempt
        as ``Host.open`` does: an optional one at most ``optional_startup_grace_sec``."""
        try:
            for retirement in retiring:
                await retirement.closed.wait()
            grace = self.config.optional_startup_grace_sec
            async with anyio.create_task_group() as waiting:
                for runtime in joining:
                    limit = math.inf if runtime.config.required or grace is None else grace
                    waiting.start_soon(_wait_reported, runtime, limit)
        finally:
            done.set()

    def _report(self, counts: _Counts, generation: int) -> ReconfigureReport:
        plan = counts.plan
        state = self._publisher.state
        changes: list[ServerChange] = []
        for name, runtime in self.servers.items():
            change: Change = (
                "added"
                if name in plan.added
                else "changed"
                if name in plan.changed
                else "unchanged"
            )
            changes.append(
                ServerChange(
                    name,
                    change,
                    runtime.connected,
                    len(state.catalog(runtime.source).bindings),
                    None if change == "unchanged" else runtime.last_error,
                    counts.ended.get(name, 0),
                )
            )
        for name in plan.removed:
            changes.append(ServerChange(name, "removed", False, 0, None, counts.ended[name]))
        return ReconfigureReport(generation, tuple(changes))


@attrs.define(eq=False)
class _Counts:
    plan: ReconfigurePlan
    ended: dict[str, int] = attrs.field(factory=dict)

    @property
    def joining(self) -> tuple[str, ...]:
        return (*self.plan.added, *self.plan.changed)


async def _wait_reported(runtime: ServerRuntime, limit: float) -> None:
    with anyio.move_on_after(limit):
        await runtime.wait_reported()
