"""Extension contributors: four ways host code plugs into a host (SPEC §11.11).

Theory of operation. A contributor is an object with a stable ``id`` and one or more of
four methods; the host classifies it by the methods it has:

* ``tools()`` (:class:`ToolContributor`): the tools it owns, installed under source
  ``ext:<id>``. A non-MCP source like ``builtin``: an MCP server can never take one of its
  names (INV-5). Read at open (part of the initial registry state, ``G = 0``) and again at
  ``Host.refresh_contributors()``, where each changed contributor is one publication
  (INV-1) of its whole, validated tool list (INV-3). The handler is part of the binding,
  so a step calls the handler of the registry state it was sampled from (INV-2).
* ``actions(servers)`` (:class:`McpServerContributor`): ordered ``SetServer`` /
  ``RemoveServer`` actions over the configured servers, applied at open before any
  server starts (and again on the new servers of each ``Host.reconfigure``, SPEC
  §11.17); each carries its provenance, and the later action wins for one name.
* ``on_result(result)`` (:class:`TurnItemContributor`): runs after each terminal result,
  in order, and may rewrite its output; a failure is a warning and the rest still run.
* ``fragments(turn)`` (:class:`TurnInputContributor`): context fragments for a turn from
  the contributor's own state; it sees the user's input as an immutable value and cannot
  change it.

Everything here that decides is a pure function (:func:`apply_overlays`,
:func:`ext_bindings`); the host acts on what they return.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

import attrs

from mcpbind.model import texts
from mcpbind.model.naming import ext_source

from .catalog.publisher import Publisher
from .catalog.registry import Binding, ToolSpec
from .config.contributors import (
    McpServerContributor,
    RemoveServer,
    SetServer,
    ToolContributor,
    TurnContext,
    TurnInputContributor,
    TurnItemContributor,
)
from .config.server import BuiltinTool, ServerConfig
from .errors import ConfigError, ContributorRejected
from .values import ToolResult

__all__ = [
    "ContributorOutcome",
    "Fragment",
    "OverlayRecord",
    "ServerProvenance",
    "ToolContributors",
    "TurnInput",
    "apply_actions",
    "apply_overlays",
    "ext_bindings",
    "local_binding",
]

logger = logging.getLogger("mcpbind.contributors")

# --- tool contributors --------------------------------------------------------------------


@attrs.frozen
class ContributorOutcome:
    """How re-reading one tool contributor ended (``Host.refresh_contributors``)."""

    contributor: str
    status: texts.OutcomeStatus
    generation: int
    kind: Literal["invalid", "collision"] | None = None
    reason: str | None = None


def ext_bindings(contributor_id: str, tools: Any) -> tuple[Binding, ...] | str:
    """The bindings of a contributor's whole tool list, or why it is invalid (INV-3: one bad
    entry rejects the whole list). Collisions with other sources are the registry's check."""
    if isinstance(tools, str | bytes | Mapping) or not isinstance(tools, Sequence):
        return f"tools() must return a sequence of BuiltinTool, got {type(tools).__name__}"
    source = ext_source(contributor_id)
    bindings: list[Binding] = []
    names: set[str] = set()
    for tool in tools:
        if not isinstance(tool, BuiltinTool):
            return f"expected a BuiltinTool, got {type(tool).__name__}"
        if not isinstance(tool.name, str) or not tool.name:
            return f"a tool name must be a non-empty string, got {tool.name!r}"
        if tool.name in names:
            return f"tool {tool.name} is listed twice"
        names.add(tool.name)
        bindings.append(local_binding(tool, source))
    return tuple(bindings)


def local_binding(tool: BuiltinTool, source: str) -> Binding:
    """A host-run tool (builtin, or an extension's) as a binding of its non-MCP source:
    public name = raw name, no server, the handler captured (INV-2)."""
    spec = ToolSpec(tool.name, tool.description, tool.input_schema)
    return Binding(tool.name, source, None, tool.name, spec, 0, tool.read_only, tool.handler)


def read_tools(
    contributor: ToolContributor, reserved: Mapping[str, str] = MappingProxyType({})
) -> tuple[Binding, ...] | str:
    """Call ``tools()`` and build its bindings; an exception is a problem, not a crash. A
    list holding a ``reserved`` name (name -> while what: ``tool_search`` while deferral is
    on, SPEC §11.9; the resource tools while they are on, §11.20) is invalid."""
    try:
        tools = contributor.tools()
    except Exception as error:
        return f"tools() raised {type(error).__name__}: {error}"
    bindings = ext_bindings(contributor.id, tools)
    if not isinstance(bindings, str):
        for b in bindings:
            if b.name in reserved:
                return f"the name {b.name} is reserved {reserved[b.name]}"
    return bindings


@attrs.define(eq=False)
class ToolContributors:
    """A host's tool contributors, in order: their first tools (part of the initial
    registry state) and every later re-read, each published through the one path."""

    contributors: tuple[ToolContributor, ...]
    reserved: Mapping[str, str] = MappingProxyType({})
    """Names no contributor may take, each with while what (``tool_search`` while
    deferral is on, the resource tools while they are on)."""

    def initial(self) -> list[tuple[str, tuple[Binding, ...]]]:
        """Each contributor's source and first tools; raises :class:`ContributorRejected`
        (``invalid``) for a list that cannot be read: the host does not open."""
        sources = []
        for contributor in self.contributors:
            bindings = read_tools(contributor, self.reserved)
            if isinstance(bindings, str):
                reason = texts.EXT_INVALID.format(contributor=contributor.id, problem=bindings)
                raise ContributorRejected("invalid", reason)
            sources.append((ext_source(contributor.id), bindings))
        return sources

    def refresh(self, publisher: Publisher) -> tuple[ContributorOutcome, ...]:
        """Re-read every contributor, in order; each changed list is one publication
        (INV-1) of the whole list (INV-3). A rejected one keeps its previous tools and is
        logged as a warning."""
        outcomes = []
        for contributor in self.contributors:
            outcome = self._refresh(contributor, publisher)
            if outcome.status == "rejected":
                logger.warning("%s", outcome.reason)
            outcomes.append(outcome)
        return tuple(outcomes)

    def _refresh(self, contributor: ToolContributor, publisher: Publisher) -> ContributorOutcome:
        cid = contributor.id
        generation = publisher.state.generation
        bindings = read_tools(contributor, self.reserved)
        if isinstance(bindings, str):
            reason = texts.EXT_INVALID.format(contributor=cid, problem=bindings)
            return ContributorOutcome(cid, "rejected", generation, "invalid", reason)
        try:
            published = publisher.publish(ext_source(cid), bindings)
        except ContributorRejected as rejected:
            return ContributorOutcome(cid, "rejected", generation, rejected.kind, rejected.reason)
        if published is None:
            return ContributorOutcome(cid, "unchanged", generation)
        return ContributorOutcome(cid, "installed", published.generation)


# --- MCP server contributors --------------------------------------------------------------


@attrs.frozen
class OverlayRecord:
    """One applied action and where it came from."""

    order: int
    """Global contribution order: 0, 1, ... over every action of every contributor."""
    contributor: str
    action: SetServer | RemoveServer


@attrs.frozen
class ServerProvenance:
    """The result of the MCP server overlay (``Host.server_provenance()``)."""

    servers: Mapping[str, ServerConfig]
    """The servers the host runs from: the configuration with every action applied."""
    actions: tuple[OverlayRecord, ...]
    """Every action, in the order applied."""
    decided_by: Mapping[str, OverlayRecord]
    """Per server name touched by an action: the last action on it (the one that won)."""


def apply_overlays(
    base: Mapping[str, ServerConfig], contributors: Sequence[McpServerContributor]
) -> ServerProvenance:
    """Apply every contributor's actions in order; the later action wins for one name.

    Raises :class:`ConfigError` naming the contributor for an action that is not a
    ``SetServer``/``RemoveServer`` with a non-empty name and a ``ServerConfig``. An
    exception from ``actions()`` propagates: the host does not open on a half overlay."""
    servers = dict(base)
    records: list[OverlayRecord] = []
    decided: dict[str, OverlayRecord] = {}
    for contributor in contributors:
        actions = contributor.actions(MappingProxyType(dict(servers)))
        apply_actions(contributor.id, actions, servers, records, decided)
    return ServerProvenance(
        servers=MappingProxyType(servers),
        actions=tuple(records),
        decided_by=MappingProxyType(decided),
    )


def apply_actions(
    contributor: str,
    actions: object,
    servers: dict[str, ServerConfig],
    records: list[OverlayRecord],
    decided: dict[str, OverlayRecord],
) -> None:
    """Check one contributor's ``actions`` and apply them to ``servers`` in order (the
    later action wins for one name), recording each. Raises :class:`ConfigError` naming
    the contributor before anything is applied when one is not an action."""
    if isinstance(actions, str | bytes | Mapping) or not isinstance(actions, Sequence):
        raise ConfigError(
            f"contributor {contributor!r}: actions() must return a sequence of "
            f"SetServer/RemoveServer, got {type(actions).__name__}"
        )
    for action in actions:
        if not isinstance(action, SetServer | RemoveServer):
            raise ConfigError(
                f"contributor {contributor!r}: expected SetServer or RemoveServer, got {action!r}"
            )
        if not isinstance(action.name, str) or not action.name:
            raise ConfigError(
                f"contributor {contributor!r}: server names must be non-empty strings, "
                f"got {action.name!r}"
            )
        if isinstance(action, SetServer) and not isinstance(action.config, ServerConfig):
            raise ConfigError(
                f"contributor {contributor!r}: server {action.name!r}: expected a "
                f"ServerConfig, got {action.config!r}"
            )
    for action in actions:
        if isinstance(action, SetServer):
            servers[action.name] = action.config
        else:
            servers.pop(action.name, None)
        record = OverlayRecord(len(records), contributor, action)
        records.append(record)
        decided[action.name] = record


# --- turn-item contributors ---------------------------------------------------------------


async def run_turn_items(
    contributors: Sequence[TurnItemContributor], result: ToolResult
) -> ToolResult:
    """Each contributor in order on the last good value. A contributor that raises, or
    returns anything but a result with the same call_id and status, is skipped with a
    warning naming it (INV-4: the one terminal result keeps its identity and status)."""
    for contributor in contributors:
        try:
            changed = await contributor.on_result(result)
        except Exception as error:
            logger.warning(
                "turn-item contributor %r failed on call %r: %s: %s",
                contributor.id,
                result.call_id,
                type(error).__name__,
                error,
            )
            continue
        if changed is None:
            continue
        if (
            not isinstance(changed, ToolResult)
            or changed.call_id != result.call_id
            or changed.status != result.status
            or not isinstance(changed.output, str)
        ):
            logger.warning(
                "turn-item contributor %r failed on call %r: it may change only the output "
                "of the result, got %r",
                contributor.id,
                result.call_id,
                changed,
            )
            continue
        result = changed
    return result


# --- turn-input contributors --------------------------------------------------------------


@attrs.frozen
class Fragment:
    """One context fragment and the contributor that owns it."""

    contributor: str
    text: str


@attrs.frozen
class TurnInput:
    """A turn's model input: the user's text exactly as given, then the fragments."""

    turn: int
    user_input: str
    fragments: tuple[Fragment, ...]


def _texts(value: Any) -> tuple[str, ...] | str:
    """The fragments of one contributor, or why its answer is not a sequence of str."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        return f"fragments() must return a sequence of str, got {value!r}"
    own = tuple(value)
    for text in own:
        if not isinstance(text, str):
            return f"a fragment must be a str, got {text!r}"
    return own


async def run_turn_inputs(
    contributors: Sequence[TurnInputContributor], context: TurnContext
) -> TurnInput:
    """Every contributor's fragments in contributor order. One that raises or returns
    anything but a sequence of strings contributes nothing (all or none of its fragments)
    and a warning names it; the others still run."""
    fragments: list[Fragment] = []
    for contributor in contributors:
        try:
            own = _texts(await contributor.fragments(context))
        except Exception as error:
            own = f"{type(error).__name__}: {error}"
        if isinstance(own, str):
            logger.warning(
                "turn-input contributor %r failed on turn %d: %s", contributor.id, context.turn, own
            )
            continue
        fragments.extend(Fragment(contributor.id, text) for text in own)
    return TurnInput(context.turn, context.user_input, tuple(fragments))
