"""A host that lives for hours: what it re-checks when a step begins (SPEC §11.18, §11.19).

Theory of operation
-------------------
``Host.sample()`` stays synchronous and O(1): it reads the registry state and nothing
else. What may have changed outside the host between two steps is re-checked by
``await host.begin_step()``, which an agent loop calls instead of ``sample()`` at the top
of each step, and which then samples:

1. **Logins** (SPEC §11.18). A server that is down for want of credentials
   (``ServerStatus.state == "login_required"``) has its record read from the credentials
   store again; when it now holds tokens (``mcpbind login SERVER`` ran meanwhile, in this
   process or another), the server connects at once with them, without waiting out its
   backoff, and the step is sampled once that attempt settled: connected and listed, or
   failed again (and said so). A server that is up, or down for another reason, costs
   nothing. ``await host.credentials_changed(server)`` does the same on demand, for one
   server or every server waiting for a login.
2. **Per-step overlays** (SPEC §11.19). Every :class:`StepMcpServerContributor` is asked
   for this step's actions, in contributor order, over the configured servers; the other
   MCP server contributors' actions are replayed as the host last ran them. When the
   servers this gives differ from those the host runs, the host reconfigures to them
   (``Host.reconfigure_to``, SPEC §11.17, called from one place:
   :meth:`HostLifetime._reconfigure_for_step`) before it samples. A contributor that
   raises or returns something else than actions leaves the servers as they are, with a
   warning naming it.

Each check decides synchronously what to do (no await in the decision) and then does the
I/O; none of it runs while a step is being sampled, so a step never sees half of it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from .catalog.planner import StepSnapshot
from .config.contributors import (
    McpServerContributor,
    StepContext,
    StepMcpServerContributor,
    kinds,
)
from .config.host import HostConfig
from .config.server import ServerConfig
from .contributors import OverlayRecord, ServerProvenance, apply_actions
from .errors import ConfigError
from .server.runtime import ServerRuntime
from .wire.oauth import Authorizer

__all__ = ["HostLifetime", "step_overlay"]

logger = logging.getLogger("mcpbind.contributors")


async def step_overlay(
    base: Mapping[str, ServerConfig],
    contributors: Sequence[McpServerContributor],
    running: ServerProvenance,
    step: StepContext,
) -> ServerProvenance | None:
    """SPEC §11.19: the servers for ``step``: each per-step contributor's
    ``actions_for_step``, the other contributors' actions as the host runs them
    (``running``) replayed, in contributor order over ``base``. None (keep the servers
    the host runs) when a contributor raises or returns something else than actions; a
    warning names it."""
    servers = dict(base)
    records: list[OverlayRecord] = []
    decided: dict[str, OverlayRecord] = {}
    for contributor in contributors:
        if isinstance(contributor, StepMcpServerContributor):
            view = MappingProxyType(dict(servers))
            try:
                actions: Any = await contributor.actions_for_step(view, step)
                apply_actions(contributor.id, actions, servers, records, decided)
            except Exception as error:  # a contributor's fault: the step goes on as it was
                why = str(error) if isinstance(error, ConfigError) else repr(error)
                logger.warning(
                    "contributor %r: actions_for_step failed at step %d (%s); the host "
                    "keeps the servers it runs",
                    contributor.id,
                    step.step,
                    why,
                )
                return None
        else:
            replayed = [r.action for r in running.actions if r.contributor == contributor.id]
            apply_actions(contributor.id, replayed, servers, records, decided)
    return ServerProvenance(
        servers=MappingProxyType(servers),
        actions=tuple(records),
        decided_by=MappingProxyType(decided),
    )


class HostLifetime:
    """The part of :class:`.host.Host` that re-checks the world when a step begins (see
    the module docstring)."""

    config: HostConfig
    servers: dict[str, ServerRuntime]
    _authorizer: Authorizer | None
    _overlay: ServerProvenance
    _steps: int

    def sample(self) -> StepSnapshot:
        raise NotImplementedError  # the host's

    def _check_open(self) -> None:
        raise NotImplementedError  # the host's

    def _runtime(self, server: str) -> ServerRuntime:
        raise NotImplementedError  # the host's

    async def reconfigure_to(self, overlay: ServerProvenance) -> Any:
        raise NotImplementedError  # the host's (:mod:`.reconfigure`)

    async def begin_step(self, mcp_context: Any = None) -> StepSnapshot:
        """Begin a step: pick up logins completed meanwhile (SPEC §11.18), re-evaluate
        the per-step MCP server contributors with ``mcp_context`` and reconfigure when the
        servers they give differ (SPEC §11.19), then return :meth:`sample`. Raises
        :class:`HostClosed` once the host closed."""
        self._check_open()
        step = StepContext(self._steps, mcp_context)
        self._steps += 1
        waiting = [r for r in self.servers.values() if r.state == "login_required"]
        await self._pick_up(waiting)
        contributors = self._step_contributors()
        if contributors:
            overlay = await step_overlay(self.config.servers, contributors, self._overlay, step)
            if overlay is not None and dict(overlay.servers) != dict(self._overlay.servers):
                await self._reconfigure_for_step(overlay)
        return self.sample()

    async def credentials_changed(self, server: str | None = None) -> None:
        """SPEC §11.18: the credentials store changed (a login completed). ``server``
        (default: every server whose state is ``login_required``) reads its record
        again; one that is not connected and now has tokens connects at once with them.
        Returns once those attempts settled; ``server_status()`` says how they ended. A
        connected server keeps its session: its next connection uses the new record.
        Raises :class:`UnknownServer` for a name the host does not run."""
        self._check_open()
        if server is None:
            runtimes = [r for r in self.servers.values() if r.state == "login_required"]
        else:
            runtimes = [self._runtime(server)]
        await self._pick_up(runtimes)

    async def reconnect(self, server: str) -> None:
        """Connect ``server`` again now, without waiting out its backoff (SPEC §11.18), and
        return once that attempt settled (connected and listed, or failed: its status
        says why). No effect on a server that is connected, dormant or not yet started.
        Raises :class:`UnknownServer` for a name the host does not run."""
        self._check_open()
        await self._runtime(server).reconnect_now()

    async def _pick_up(self, runtimes: Sequence[ServerRuntime]) -> None:
        authorizer = self._authorizer
        if authorizer is None or not runtimes:
            return
        for runtime in runtimes:
            if await authorizer.reload(runtime.name, runtime.config):
                await runtime.reconnect_now()

    def _step_contributors(self) -> tuple[McpServerContributor, ...]:
        """Every MCP server contributor, in order, when one of them is per-step."""
        by_kind = kinds(self.config.contributors)
        if by_kind.per_step:
            return by_kind.servers
        return ()

    async def _reconfigure_for_step(self, overlay: ServerProvenance) -> None:
        """The one place a step's overlay changes the servers the host runs."""
        await self.reconfigure_to(overlay)
