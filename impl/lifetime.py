"""A host that lives for hours: what it re-checks when a step begins (SPEC §11.18).

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

Each check decides synchronously what to do (no await in the decision) and then does the
I/O; none of it runs while a step is being sampled, so a step never sees half of it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .catalog.planner import StepSnapshot
from .config.host import HostConfig
from .server.runtime import ServerRuntime
from .wire.oauth import Authorizer

__all__ = ["HostLifetime"]


class HostLifetime:
    """The part of :class:`.host.Host` that re-checks the world when a step begins (see
    the module docstring)."""

    config: HostConfig
    servers: dict[str, ServerRuntime]
    _authorizer: Authorizer | None
    _steps: int

    def sample(self) -> StepSnapshot:
        raise NotImplementedError  # the host's

    def _check_open(self) -> None:
        raise NotImplementedError  # the host's

    def _runtime(self, server: str) -> ServerRuntime:
        raise NotImplementedError  # the host's

    async def begin_step(self) -> StepSnapshot:
        """Begin a step: pick up logins completed meanwhile (SPEC §11.18), then return
        :meth:`sample`. Raises :class:`HostClosed` once the host closed."""
        self._check_open()
        self._steps += 1
        waiting = [r for r in self.servers.values() if r.state == "login_required"]
        await self._pick_up(waiting)
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
