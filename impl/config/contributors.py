"""The extension contributors a host application plugs in (SPEC §11.11): the four
protocols, the values they exchange with the host, and the check of
``HostConfig.contributors``. What the host does with them is :mod:`mcpbind.impl.contributors`.

A contributor is an object with a stable ``id`` and one or more of four methods; the host
classifies it by the methods it has: ``tools()`` (:class:`ToolContributor`),
``actions(servers)`` (:class:`McpServerContributor`), ``on_result(result)``
(:class:`TurnItemContributor`) and ``fragments(turn)`` (:class:`TurnInputContributor`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from ..errors import ConfigError
from ..values import ToolResult
from .server import BuiltinTool, ServerConfig

__all__ = [
    "Contributor",
    "Kinds",
    "McpServerContributor",
    "OverlayAction",
    "RemoveServer",
    "SetServer",
    "StepContext",
    "StepMcpServerContributor",
    "ToolContributor",
    "TurnContext",
    "TurnInputContributor",
    "TurnItemContributor",
    "check_contributors",
    "kinds",
]

_ID = re.compile(r"[A-Za-z0-9_.-]+", re.ASCII)


# --- the four kinds ---------------------------------------------------------------------


@runtime_checkable
class ToolContributor(Protocol):
    """Owns tools: source ``ext:<id>``, protected from MCP names like builtins (INV-5)."""

    id: str

    def tools(self) -> Sequence[BuiltinTool]:
        """The contributor's whole tool list now; read at open and at each
        ``Host.refresh_contributors()``. Must not block."""
        ...


@attrs.frozen
class SetServer:
    """Add ``name`` to the servers, or replace its configuration."""

    name: str
    config: ServerConfig


@attrs.frozen
class RemoveServer:
    """Take ``name`` out of the servers (it is not started); no effect if absent."""

    name: str


OverlayAction = SetServer | RemoveServer


@runtime_checkable
class McpServerContributor(Protocol):
    """Adds, replaces or removes MCP servers before the host starts any."""

    id: str

    def actions(self, servers: Mapping[str, ServerConfig]) -> Sequence[SetServer | RemoveServer]:
        """Actions over ``servers`` (read-only: the configured servers after the actions of
        the contributors before this one). Called at ``Host.open``, and again on the new
        servers at each ``Host.reconfigure`` (SPEC §11.17)."""
        ...


@attrs.frozen
class StepContext:
    """What a per-step MCP server contributor is told about a step (SPEC §11.19)."""

    step: int
    """Numbered from 0 per host, in the order of ``Host.begin_step`` calls."""
    mcp_context: Any = None
    """What the caller passed to ``Host.begin_step(mcp_context=...)``: the host does not
    read it (the extension seed's ``step.mcp_context``)."""


@runtime_checkable
class StepMcpServerContributor(Protocol):
    """An MCP server contributor whose actions depend on the step (SPEC §11.19): its
    ``actions`` run at ``Host.open`` as any contributor's, and ``actions_for_step`` at
    each ``Host.begin_step``. When the servers the actions give differ from those the host
    runs, the host reconfigures before it samples the step."""

    id: str

    def actions(self, servers: Mapping[str, ServerConfig]) -> Sequence[SetServer | RemoveServer]:
        """The actions at ``Host.open``, before any step."""
        ...

    async def actions_for_step(
        self, servers: Mapping[str, ServerConfig], step: StepContext
    ) -> Sequence[SetServer | RemoveServer]:
        """The actions for ``step`` over ``servers`` (read-only: the configured servers
        after the actions of the contributors before this one, for this step). Raising,
        or returning anything but actions, skips this step's re-evaluation with a
        warning naming the contributor: the host keeps the servers it runs."""
        ...


@runtime_checkable
class TurnItemContributor(Protocol):
    """Post-processes every terminal result, in contributor order."""

    id: str

    async def on_result(self, result: ToolResult) -> ToolResult | None:
        """A result with a rewritten ``output`` (same call_id and status), or None to keep
        it as it is. Raising is a warning: the next contributor gets the last good value."""
        ...


@attrs.frozen
class TurnContext:
    """What a turn-input contributor is told about a turn. Immutable: a contributor can read
    the user's input but has no way to change what the host hands on."""

    turn: int
    """Numbered from 0 per host, in the order of ``Host.turn_input`` calls."""
    user_input: str
    servers: tuple[str, ...]
    """The enabled servers (after the overlay), in configuration order."""


@runtime_checkable
class TurnInputContributor(Protocol):
    """Adds context fragments to a turn's model input from its own state."""

    id: str

    async def fragments(self, turn: TurnContext) -> Sequence[str]:
        """Text fragments for this turn (possibly none)."""
        ...


Contributor = ToolContributor | McpServerContributor | TurnItemContributor | TurnInputContributor


def _has(contributor: object, method: str) -> bool:
    return getattr(contributor, method, None) is not None


@attrs.frozen
class Kinds:
    """The contributors of each kind, each in order: what ``isinstance`` against the kind's
    protocol selects, for contributors that have their ``id`` (every contributor of a valid
    :class:`HostConfig`): those that have each method of the kind (an attribute that is
    not None, as the protocol's check asks). The protocol's own check looks its members up
    again on every call (about 15 µs each); the host asks at each start and step, and the
    lockstep machine starts a host per run."""

    tools: tuple[ToolContributor, ...]
    servers: tuple[McpServerContributor, ...]
    per_step: tuple[StepMcpServerContributor, ...]
    items: tuple[TurnItemContributor, ...]
    inputs: tuple[TurnInputContributor, ...]


def kinds(contributors: Sequence[object]) -> Kinds:
    """``contributors`` by kind (:class:`Kinds`)."""
    if not contributors:
        return _NO_KINDS
    tools: list[Any] = []
    servers: list[Any] = []
    per_step: list[Any] = []
    items: list[Any] = []
    inputs: list[Any] = []
    for contributor in contributors:
        if _has(contributor, "tools"):
            tools.append(contributor)
        if _has(contributor, "actions"):
            servers.append(contributor)
            if _has(contributor, "actions_for_step"):
                per_step.append(contributor)
        if _has(contributor, "on_result"):
            items.append(contributor)
        if _has(contributor, "fragments"):
            inputs.append(contributor)
    return Kinds(tuple(tools), tuple(servers), tuple(per_step), tuple(items), tuple(inputs))


_NO_KINDS = Kinds((), (), (), (), ())


def check_contributors(contributors: Any) -> tuple[Contributor, ...]:
    """``HostConfig.contributors``: a tuple of contributors with valid, unique ids."""
    if isinstance(contributors, str | bytes | Mapping) or not isinstance(contributors, Sequence):
        raise ConfigError(f"contributors must be a tuple of contributors, got {contributors!r}")
    seen: set[str] = set()
    for contributor in contributors:
        cid = getattr(contributor, "id", None)
        if not isinstance(cid, str) or not _ID.fullmatch(cid):
            raise ConfigError(
                f"contributor {contributor!r}: id must be a non-empty string of "
                f"[A-Za-z0-9_.-], got {cid!r}"
            )
        if cid in seen:
            raise ConfigError(f"contributor id {cid!r} is used twice")
        seen.add(cid)
        if kinds((contributor,)) == _NO_KINDS:
            raise ConfigError(
                f"contributor {cid!r} has none of tools(), actions(), on_result(), fragments()"
            )
    return tuple(contributors)
