"""Sources and public tool names (SPEC §2.1, §6), shared by the model and the runtime.

Sources: ``builtin`` (the host's own tools), ``mcp:<server>`` (one per MCP server) and
``ext:<id>`` (one per tool contributor). Only MCP sources are named here; the others
own the names they bring, which an MCP tool can never take (INV-5).

A public name is what the model sees and calls; the server always receives the raw
tool name. The rules, in order:

* sanitise: every character outside ``[A-Za-z0-9_]`` becomes ``_`` (an empty result
  becomes ``_``); case is kept;
* prefix: ``mcp__`` + sanitise(server) + ``__`` + sanitise(tool), without a second
  ``mcp__`` when the sanitised server name already starts with it;
* length: over ``max_length`` the name is cut and ``_`` + 12 hex digits of SHA-1 of the
  raw identity are appended;
* collisions: an identity that already holds a name keeps it (INV-6); newcomers are
  named in sorted raw-identity order, so one listing always yields the same names;
  a newcomer whose name is taken by another MCP identity gets the hash suffix
  (re-hashed with an attempt counter while still taken); a newcomer whose natural
  name belongs to a non-MCP source is a collision that rejects the refresh (INV-5).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping

import attrs

__all__ = [
    "BUILTIN",
    "DEFAULT_MAX_NAME_LENGTH",
    "EXT_PREFIX",
    "HASH_LENGTH",
    "MCP_PREFIX",
    "MIN_MAX_NAME_LENGTH",
    "READ_RESOURCE",
    "RESOURCE_TOOLS",
    "NameCollision",
    "NamePartition",
    "assign_names",
    "ext_source",
    "hashed_name",
    "identity_hash",
    "is_mcp_source",
    "mcp_source",
    "name_listing",
    "natural_name",
    "partition_names",
    "resource_name",
    "sanitize",
    "source_owner",
]

BUILTIN = "builtin"
"""The source of the host's own tools."""
MCP_PREFIX = "mcp:"
EXT_PREFIX = "ext:"


def mcp_source(server: str) -> str:
    """The source of one MCP server's tools: ``mcp:<server>``."""
    return MCP_PREFIX + server


def ext_source(contributor: str) -> str:
    """The source of one tool contributor's tools: ``ext:<id>`` (SPEC §11.11)."""
    return EXT_PREFIX + contributor


READ_RESOURCE = "read_mcp_resource"
"""The builtin tool that reads one resource of a server (SPEC §11.20)."""
RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", READ_RESOURCE)
"""The resource tools' names (SPEC §11.20), Codex's."""


def resource_name(server: str, uri: str) -> str:
    """What a read of ``uri`` of ``server`` is called by in a step's router: the builtin
    ``read_mcp_resource`` with its ``server`` and ``uri`` arguments (SPEC §11.20)."""
    return f"{READ_RESOURCE}({server}, {uri})"


def is_mcp_source(source: str) -> bool:
    return source.startswith(MCP_PREFIX)


def source_owner(source: str) -> str:
    """Who a source stands for: the server of ``mcp:<server>``, the contributor of
    ``ext:<id>``, ``builtin`` itself."""
    for prefix in (MCP_PREFIX, EXT_PREFIX):
        if source.startswith(prefix):
            return source[len(prefix) :]
    return source


DEFAULT_MAX_NAME_LENGTH = 64
HASH_LENGTH = 12
# The cut must leave room for "mcp__" + one character + "_" + the hash.
MIN_MAX_NAME_LENGTH = 24
PREFIX = "mcp__"
DELIMITER = "__"

_UNSAFE = re.compile(r"[^A-Za-z0-9_]", re.ASCII)

Identity = tuple[str, str]
"""``(server, raw tool name)``: what a public name stands for."""


def sanitize(text: str) -> str:
    """Replace every character outside ``[A-Za-z0-9_]`` by ``_``; never return ``""``."""
    return _UNSAFE.sub("_", text) or "_"


def identity_hash(server: str, tool: str, attempt: int = 0) -> str:
    """First 12 hex digits of SHA-1 of ``server\\0tool`` (``\\0attempt`` appended when > 0)."""
    raw = f"{server}\0{tool}" if attempt == 0 else f"{server}\0{tool}\0{attempt}"
    return hashlib.sha1(raw.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()[
        :HASH_LENGTH
    ]


def _joined(server: str, tool: str) -> str:
    namespace = sanitize(server)
    if not namespace.startswith(PREFIX):
        namespace = PREFIX + namespace
    return namespace + DELIMITER + sanitize(tool)


def hashed_name(server: str, tool: str, max_length: int, attempt: int = 0) -> str:
    """The joined name cut to fit, followed by ``_`` and the identity hash."""
    keep = max_length - HASH_LENGTH - 1
    return _joined(server, tool)[:keep] + "_" + identity_hash(server, tool, attempt)


def natural_name(server: str, tool: str, max_length: int = DEFAULT_MAX_NAME_LENGTH) -> str:
    """The name an identity gets when nothing else holds it (SPEC §6.1-6.3)."""
    if max_length < MIN_MAX_NAME_LENGTH:
        raise ValueError(f"max_length must be at least {MIN_MAX_NAME_LENGTH}, got {max_length}")
    name = _joined(server, tool)
    if len(name) <= max_length:
        return name
    return hashed_name(server, tool, max_length)


@attrs.frozen
class NameCollision:
    """A newcomer's natural name belongs to a non-MCP source (SPEC §6.5, INV-5)."""

    name: str
    identity: Identity
    owner: str


@attrs.frozen
class NamePartition:
    """The names installed now, as a new listing of one MCP source must see them (§6.4-6.6)."""

    held: Mapping[Identity, str]
    """Names the source's own identities hold now (kept, INV-6)."""
    taken: frozenset[str]
    """Names other MCP sources hold (never reused)."""
    reserved: Mapping[str, str]
    """Names of non-MCP sources, mapped to their source (a collision, INV-5)."""


def partition_names(server: str, installed: Iterable[tuple[str, str, str]]) -> NamePartition:
    """Split every installed ``(source, public name, raw name)`` by its relation to the
    MCP source of ``server``: its own, another MCP source's, a non-MCP source's."""
    own = mcp_source(server)
    held: dict[Identity, str] = {}
    taken: set[str] = set()
    reserved: dict[str, str] = {}
    for source, name, raw in installed:
        if source == own:
            held[(server, raw)] = name
        elif is_mcp_source(source):
            taken.add(name)
        else:
            reserved[name] = source
    return NamePartition(held, frozenset(taken), reserved)


def assign_names(
    identities: Iterable[Identity],
    *,
    held: Mapping[Identity, str],
    taken: Collection[str],
    reserved: Mapping[str, str],
    remembered: Mapping[Identity, str],
    max_length: int = DEFAULT_MAX_NAME_LENGTH,
) -> dict[Identity, str] | NameCollision:
    """Name every identity of one source's new listing.

    ``held``: names the source's listed identities hold now (kept, INV-6).
    ``taken``: names held by every other source (never reused).
    ``reserved``: names of non-MCP sources, mapped to their owner (collision, INV-5).
    ``remembered``: names identities held earlier; reused when free.
    Returns the full assignment, or the first collision in sorted identity order.
    """
    ordered = sorted(set(identities))
    result: dict[Identity, str] = {}
    used: set[str] = set(taken)
    used.update(reserved)
    for identity in ordered:
        name = held.get(identity)
        if name is not None:
            result[identity] = name
            used.add(name)
    for identity in ordered:
        if identity in result:
            continue
        server, tool = identity
        natural = natural_name(server, tool, max_length)
        owner = reserved.get(natural)
        if owner is not None:
            return NameCollision(name=natural, identity=identity, owner=owner)
        previous = remembered.get(identity)
        if previous is not None and previous not in used:
            name = previous
        elif natural not in used:
            name = natural
        else:
            attempt = 0
            name = hashed_name(server, tool, max_length, attempt)
            while name in used:
                attempt += 1
                name = hashed_name(server, tool, max_length, attempt)
        result[identity] = name
        used.add(name)
    return result


def name_listing(
    server: str,
    raw_names: Iterable[str],
    partition: NamePartition,
    *,
    remembered: Mapping[Identity, str],
    max_length: int = DEFAULT_MAX_NAME_LENGTH,
) -> dict[Identity, str] | NameCollision:
    """Name one listing of ``server`` against the names installed now (SPEC §6)."""
    return assign_names(
        ((server, raw) for raw in raw_names),
        held=partition.held,
        taken=partition.taken,
        reserved=partition.reserved,
        remembered=remembered,
        max_length=max_length,
    )
