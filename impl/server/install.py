"""One server's listings, read and installed (SPEC §5, §11.12).

A refresh reads every page of ``tools/list`` under ``list_timeout_sec``, then decides
what the listing means against the registry state and publishes it with no ``await`` in
between (INV-3), and caches it for the next fast start. A cached listing is installed by
the same decision and publication. What the runtime does around it (coalescing runs,
sessions, the install order of first catalogs) is :mod:`.runtime`'s.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

import anyio

from mcpbind.model import texts
from mcpbind.model.naming import mcp_source

from ..catalog.listing import trace_tools
from ..catalog.registry import NO_RESOURCES, Resources
from ..catalog.resources import read_resources, trace_resources
from ..config.catalog_cache import server_identity
from ..config.recorder import records
from ..config.server import ServerConfig
from ..errors import CatalogRejected
from ..values import RefreshOutcome
from ..wire.seam import Connection, RequestFailed
from .context import RuntimeContext

__all__ = ["Installer"]


class _Dropped(Exception):
    """The host closed while a listing was being read: nothing more of it is asked for."""


class Installer:
    """Reads and installs the listings of server ``name``."""

    def __init__(self, name: str, config: ServerConfig, context: RuntimeContext) -> None:
        self.name = name
        self.source = mcp_source(name)
        self.config = config
        self._context = context
        self._identity = server_identity(config)
        self.retired: Literal["removed", "replaced"] | None = None
        """A reconfiguration removed or replaced the server (SPEC §11.17): a listing still
        being read is dropped, never installed (INV-16)."""
        self._resources: Resources = NO_RESOURCES
        self._resources_read: object = None
        """SPEC §11.20: the session's :meth:`~.seam.Connection.resources_version` when
        ``_resources`` were read; a refresh reads them again only when it moved."""
        self.closing = False
        """The host is closing (SPEC §11.14): its refresh already ended ``rejected``, so a
        listing still being read is dropped (no ``list_done``, nothing installed, no
        further page asked for: INV-12)."""

    def rejected(self, kind: texts.RejectKind, reason: str) -> RefreshOutcome:
        generation = self._context.publisher.state.generation
        return RefreshOutcome(self.name, "rejected", generation, kind, reason)

    def cached(self) -> Sequence[Any] | None:
        """The cached listing of this server, if the cache holds a usable one."""
        return self._context.cache.get(self._identity)

    def install_cached(self, tools: Sequence[Any]) -> bool:
        """Install a cached listing as the first catalog (SPEC §11.12), exactly as a
        refresh decides and publishes; False when it is rejected (e.g. a name now taken
        by a builtin: a live refresh decides then)."""
        context = self._context
        state = context.publisher.state
        try:
            decision = context.build_bindings(
                self.name, self.config, tools, state, context.config.max_name_length
            )
            context.publisher.publish(self.source, decision.bindings)
        except CatalogRejected:
            return False
        return True

    async def refresh(
        self, connection: Connection, before_install: Callable[[], Awaitable[None]]
    ) -> RefreshOutcome:
        """One refresh over ``connection``: its outcome. ``before_install`` is awaited
        once the listing is whole and before it is decided (the install order of first
        catalogs, SPEC §11.3). Raises ConnectionLost."""
        context = self._context
        recorder = context.recorder
        listed = False
        try:
            timeout = self.config.list_timeout_sec
            # 0: none; never negative (ServerConfig checks it): its truth is the test
            with anyio.move_on_after(timeout if timeout else math.inf) as deadline:
                tools = await context.read_listing(
                    self.name, connection.list_tools, self._on_list_request
                )
                resources = NO_RESOURCES  # SPEC §11.20: the resources, by the same refresh
                if connection.declares_resources():
                    heard = connection.resources_version()
                    if heard is self._resources_read:  # no change of them heard since
                        resources = self._resources
                    else:
                        resources = await read_resources(self.name, connection.list_resources)
                        self._resources, self._resources_read = resources, heard
            if deadline.cancelled_caught:
                why = f"no complete listing within list_timeout_sec = {timeout:g}"
                recorder.event("list_failed", {"server": self.name, "why": why})
                reason = texts.REJECT_LIST_FAILED.format(server=self.name, why=why)
                return self.rejected("list_failed", reason)
            await before_install()
            if self.closing:  # the answer came while the host closed: nothing is decided
                return self.rejected("closed", texts.REJECT_CLOSED.format(server=self.name))
            if self.retired is not None:  # removed or replaced meanwhile: nothing installed
                how = self.retired
                reason = texts.REJECT_RECONFIGURED.format(how=how, server=self.name)
                return self.rejected("reconfigured", reason)
            # Decide and publish with no await in between (INV-3). The listing is in the
            # trace where it is decided, so its outputs follow it (SPEC §14.1).
            tasks = connection.runs_tasks()
            listed = True
            if records(recorder):  # the trace's view of the listing, made only for one
                recorder.event("list_done", self._listed(tools, tasks, resources))
            state = context.publisher.state
            decision = context.build_bindings(
                self.name,
                self.config,
                tools,
                state,
                context.config.max_name_length,
                tasks=tasks,
            )
            published = context.publisher.publish(self.source, decision.bindings, resources)
            context.cache.put(self._identity, tools)  # SPEC §11.12
            excluded = decision.excluded
            if published is None:
                return RefreshOutcome(self.name, "unchanged", state.generation, excluded=excluded)
            return RefreshOutcome(self.name, "installed", published.generation, excluded=excluded)
        except CatalogRejected as rejected:
            if not listed:  # a page or a cap rejected the listing before its end
                fault: dict[str, Any] = {"name": rejected.subject, "problem": rejected.problem}
                if rejected.kind == "cap":
                    fault["over_cap"] = True
                recorder.event("list_done", {"server": self.name, "tools": [fault]})
            return self.rejected(rejected.kind, rejected.reason)
        except _Dropped:
            return self.rejected("closed", texts.REJECT_CLOSED.format(server=self.name))
        except RequestFailed as failed:
            recorder.event("list_failed", {"server": self.name, "why": str(failed)})
            why = texts.REJECT_LIST_FAILED.format(server=self.name, why=str(failed))
            return self.rejected("list_failed", why)

    def forget_resources(self) -> None:
        """The next refresh reads the resource lists again (an explicit refresh)."""
        self._resources_read = None

    def _on_list_request(self, cursor: str | None) -> None:
        recorder = self._context.recorder
        if self.closing:
            raise _Dropped
        if cursor is not None:  # a page with more to come arrived (SPEC §3.1 list_page)
            recorder.event("list_page", {"server": self.name})
        recorder.sent(self.name, "tools/list", "" if cursor is None else "cursor")

    def _listed(self, tools: list[Any], tasks: bool, resources: Resources) -> dict[str, Any]:
        """The ``list_done`` of a trace: each tool as the rules see it, then each resource
        (SPEC §14.1, §11.20)."""
        entries = trace_tools(self.name, self.config, tools, tasks=tasks)
        entries.extend(trace_resources(resources))
        return {"server": self.name, "tools": entries, "tasks": tasks}
