"""Deliberately broken variants of the runtime: proof that the machines can fail (SPEC §12.7).

Each mutant patches one component of ``mcpbind.impl`` for the duration of a ``with``
block and names the invariant it breaks. They exist only for ``mcpbind check --mutants``
and the tests; nothing in normal use imports this module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import trio

from mcpbind.impl import approval, catalog, host, registry, runtime, values
from mcpbind.impl.exposure import Exposure
from mcpbind.model.naming import hashed_name

__all__ = ["IMPL_MUTANTS", "ImplMutant", "impl_mutant"]


@attrs.frozen
class ImplMutant:
    name: str
    target: str
    description: str
    patch: Callable[[], contextlib.AbstractContextManager[None]]
    approval: bool = False
    """Killed by the machine with approval gating on (SPEC §3.4)."""
    lazy: bool = False
    """Killed by the machine with a lazily started server (SPEC §3.5)."""


@contextlib.contextmanager
def _replace(owner: Any, attribute: str, value: Any) -> Iterator[None]:
    original = getattr(owner, attribute)
    setattr(owner, attribute, value)
    try:
        yield
    finally:
        setattr(owner, attribute, original)


# --- INV-1 ----------------------------------------------------------------------------


@contextlib.contextmanager
def _bump_generation_when_unchanged() -> Iterator[None]:
    original = registry.ToolRegistry.replace_source

    def replace_source(self: registry.ToolRegistry, source: str, bindings: Any) -> Any:
        published = original(self, source, bindings)
        if published is None:
            state = self._state
            self._state = registry.RegistryState.build(
                state.generation + 1, state.catalogs, state.remembered
            )
        return published

    with _replace(registry.ToolRegistry, "replace_source", replace_source):
        yield


# --- INV-2 ----------------------------------------------------------------------------


@contextlib.contextmanager
def _steps_read_the_live_registry() -> Iterator[None]:
    def sample(self: host.Host) -> values.StepSnapshot:
        self._check_open()
        live = self.registry
        exposer = self._exposer

        class Live(values.StepSnapshot):
            @property
            def state(self) -> registry.RegistryState:
                return live.state

            @property
            def exposure(self) -> Exposure:  # plan and router follow the live state too
                return exposer.expose(live.state)

        snapshot = Live.__new__(Live)
        object.__setattr__(snapshot, "step", self._steps)
        self._steps += 1
        return snapshot

    with _replace(host.Host, "sample", sample):
        yield


# --- INV-3 ----------------------------------------------------------------------------


@contextlib.contextmanager
def _install_the_first_page_only() -> Iterator[None]:
    original = catalog.read_listing

    async def first_page(server: str, list_page: Any, on_request: Any = None) -> list[Any]:
        if on_request is not None:
            on_request(None)
        page = await list_page(None)
        return list(page["tools"]) if isinstance(page, dict) else await original(server, list_page)

    with _replace(runtime, "read_listing", first_page):
        yield


@contextlib.contextmanager
def _drop_invalid_tools() -> Iterator[None]:
    original = catalog.build_bindings

    def build_bindings(server: str, config: Any, tools: Any, state: Any, max_length: int) -> Any:
        valid = [t for t in tools if isinstance(t, dict) and isinstance(t.get("inputSchema"), dict)]
        return original(server, config, valid, state, max_length)

    with _replace(runtime, "build_bindings", build_bindings):
        yield


# --- INV-4 ----------------------------------------------------------------------------


@contextlib.contextmanager
def _late_answer_becomes_a_result() -> Iterator[None]:
    def late_answer(self: host.Host, call_id: str) -> None:
        self._late_dropped += 1
        self.recorder.late_dropped(call_id)
        self._end(call_id, "ok", "late")

    with _replace(host.Host, "late_answer", late_answer):
        yield


# --- INV-5 ----------------------------------------------------------------------------


def _is_mcp(source: str) -> bool:
    """An MCP server's source; builtins and extension tools (``ext:<id>``) are not."""
    return source.startswith("mcp:")


@contextlib.contextmanager
def _shadow_builtins() -> Iterator[None]:
    name_tools = registry.RegistryState.name_tools

    def ignore_builtins(
        self: registry.RegistryState, server: str, raw: Any, max_length: int
    ) -> Any:
        hidden = registry.RegistryState.build(
            self.generation,
            {s: c for s, c in self.catalogs.items() if _is_mcp(s)},
            self.remembered,
        )
        return name_tools(hidden, server, raw, max_length)

    original = registry.ToolRegistry.replace_source

    def replace_source(self: registry.ToolRegistry, source: str, bindings: Any) -> Any:
        state = self._state
        names = {b.name for b in bindings}
        kept = {
            s: attrs.evolve(c, bindings=tuple(b for b in c.bindings if b.name not in names))
            for s, c in state.catalogs.items()
            if not _is_mcp(s)
        }
        self._state = registry.RegistryState.build(
            state.generation, {**state.catalogs, **kept}, state.remembered
        )
        published = original(self, source, bindings)
        if published is None:
            self._state = state
        return published

    with (
        _replace(registry.RegistryState, "name_tools", ignore_builtins),
        _replace(registry.ToolRegistry, "replace_source", replace_source),
    ):
        yield


# --- INV-6 ----------------------------------------------------------------------------


@contextlib.contextmanager
def _rename_incumbent_on_collision() -> Iterator[None]:
    name_tools = registry.RegistryState.name_tools

    def newcomer_wins(self: registry.RegistryState, server: str, raw: Any, max_length: int) -> Any:
        mine = registry.mcp_source(server)
        alone = registry.RegistryState.build(
            self.generation,
            {s: c for s, c in self.catalogs.items() if s == mine or not _is_mcp(s)},
            self.remembered,
        )
        return name_tools(alone, server, raw, max_length)

    original = registry.ToolRegistry.replace_source

    def replace_source(self: registry.ToolRegistry, source: str, bindings: Any) -> Any:
        bindings = list(bindings)
        wanted = {b.name for b in bindings}
        state = self._state
        catalogs = dict(state.catalogs)
        for other, other_catalog in state.catalogs.items():
            if other == source or not _is_mcp(other):
                continue
            renamed = tuple(
                attrs.evolve(b, name=hashed_name(b.server or "", b.remote_name, 64))
                if b.name in wanted
                else b
                for b in other_catalog.bindings
            )
            catalogs[other] = attrs.evolve(other_catalog, bindings=renamed)
        self._state = registry.RegistryState.build(state.generation, catalogs, state.remembered)
        published = original(self, source, bindings)
        if published is None:
            self._state = state
        return published

    with (
        _replace(registry.RegistryState, "name_tools", newcomer_wins),
        _replace(registry.ToolRegistry, "replace_source", replace_source),
    ):
        yield


# --- INV-7 ----------------------------------------------------------------------------


@contextlib.contextmanager
def _cancel_leaves_the_request_running() -> Iterator[None]:
    def cancel(self: Any) -> None:
        if self.ended_by is None:
            self.ended_by = host._CANCELLED

    with _replace(host._Call, "cancel", cancel):
        yield


# --- INV-8 ----------------------------------------------------------------------------


@contextlib.contextmanager
def _keep_calls_after_disconnect() -> Iterator[None]:
    def fail_disconnected(self: Any) -> None:
        return None

    with _replace(host._Call, "fail_disconnected", fail_disconnected):
        yield


# --- INV-9 ----------------------------------------------------------------------------


@contextlib.contextmanager
def _no_exclusive_lane() -> Iterator[None]:
    def lane(self: host.Host, step: int) -> trio.Lock:
        return trio.Lock()

    with _replace(host.Host, "_lane", lane):
        yield


# --- LIVE-2 ---------------------------------------------------------------------------


@contextlib.contextmanager
def _drop_notifications_during_a_refresh() -> Iterator[None]:
    def on_list_changed(self: runtime.ServerRuntime) -> None:
        if self.connected and self._current is None:
            self.request_refresh()

    with _replace(runtime.ServerRuntime, "on_list_changed", on_list_changed):
        yield


# --- INV-10 ---------------------------------------------------------------------------


@contextlib.contextmanager
def _allow_without_asking() -> Iterator[None]:
    def decide(self: approval.ApprovalGate, **_: Any) -> None:
        return None  # every call goes ahead as if approved

    with _replace(approval.ApprovalGate, "decide", decide):
        yield


# --- INV-11 ---------------------------------------------------------------------------


@contextlib.contextmanager
def _send_once_connected() -> Iterator[None]:
    original = runtime.ServerRuntime.wait_started

    async def wait_started(self: runtime.ServerRuntime, order: int) -> None:
        if self.connection is None:  # waits only until connected, not for the first refresh
            await original(self, order)

    with _replace(runtime.ServerRuntime, "wait_started", wait_started):
        yield


@contextlib.contextmanager
def _fail_fast_when_dormant() -> Iterator[None]:
    async def wait_started(self: runtime.ServerRuntime, order: int) -> None:
        return None  # neither wakes the server nor waits: the call finds no connection

    with _replace(runtime.ServerRuntime, "wait_started", wait_started):
        yield


IMPL_MUTANTS: tuple[ImplMutant, ...] = (
    ImplMutant(
        "bump_generation_when_unchanged",
        "INV-1",
        "the registry advances its generation on an unchanged refresh",
        _bump_generation_when_unchanged,
    ),
    ImplMutant(
        "steps_read_the_live_registry",
        "INV-2",
        "a step snapshot reads the live registry instead of holding its state",
        _steps_read_the_live_registry,
    ),
    ImplMutant(
        "install_the_first_page_only",
        "INV-3",
        "a refresh installs the first tools/list page as the whole catalog",
        _install_the_first_page_only,
    ),
    ImplMutant(
        "drop_invalid_tools",
        "INV-3",
        "a listing with an invalid tool is installed without it",
        _drop_invalid_tools,
    ),
    ImplMutant(
        "late_answer_becomes_a_result",
        "INV-4",
        "an answer after cancel/timeout is delivered as a second result",
        _late_answer_becomes_a_result,
    ),
    ImplMutant(
        "shadow_builtins",
        "INV-5",
        "naming and the registry let an MCP tool take a builtin or extension tool's name",
        _shadow_builtins,
    ),
    ImplMutant(
        "rename_incumbent_on_collision",
        "INV-6",
        "a newcomer takes a colliding name and the other server's incumbent is renamed",
        _rename_incumbent_on_collision,
    ),
    ImplMutant(
        "cancel_leaves_the_request_running",
        "INV-7",
        "host.cancel marks the call but never cancels the request at the server",
        _cancel_leaves_the_request_running,
    ),
    ImplMutant(
        "keep_calls_after_disconnect",
        "INV-8",
        "a disconnect does not fail the server's queued and in-flight calls",
        _keep_calls_after_disconnect,
    ),
    ImplMutant(
        "no_exclusive_lane",
        "INV-9",
        "exclusive calls of a step are sent together",
        _no_exclusive_lane,
    ),
    ImplMutant(
        "drop_notifications_during_a_refresh",
        "LIVE-2",
        "a list_changed that arrives while a refresh runs is ignored",
        _drop_notifications_during_a_refresh,
    ),
    ImplMutant(
        "allow_without_asking",
        "INV-10",
        "the approval gate lets every call through without asking the approver",
        _allow_without_asking,
        approval=True,
    ),
    ImplMutant(
        "send_once_connected",
        "INV-11",
        "a call to a lazily started server is sent once connected, before its first refresh ended",
        _send_once_connected,
        lazy=True,
    ),
    ImplMutant(
        "fail_fast_when_dormant",
        "INV-11",
        "a call to a dormant server fails NOT_CONNECTED instead of waking it and waiting",
        _fail_fast_when_dormant,
        lazy=True,
    ),
)


def impl_mutant(name: str) -> ImplMutant:
    for candidate in IMPL_MUTANTS:
        if candidate.name == name:
            return candidate
    known = ", ".join(m.name for m in IMPL_MUTANTS)
    raise KeyError(f"unknown implementation mutant {name!r}; known: {known}")
