"""CatalogCache: the last good listing of each server, for fast starts (SPEC §11.12).

A process-level, bounded LRU of raw tool listings (what :func:`read_listing` returned for
a refresh that succeeded), keyed by a *server identity*: a SHA-256 over the target's
description and the settings that change the catalog. A server started with
``startup="lazy_when_cached"`` installs its cached listing at open, through the same
``build_bindings``/``replace_source`` path as a refresh (INV-3), and connects on first use.

The cache holds no event-loop objects and reads time from an injectable clock (default
``time.monotonic``), so one instance serves every event loop of a process and tests can
drive expiry. Secrets (``env`` values, HTTP headers) enter the identity only through the
digest: no key, entry or statistic holds them in clear.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from ..errors import ConfigError
from .server import ServerConfig

__all__ = [
    "DEFAULT_CATALOG_CACHE",
    "CatalogCache",
    "CatalogCacheStatistics",
    "ServerIdentity",
    "server_identity",
]

DEFAULT_MAX_ENTRIES = 32
DEFAULT_MAX_AGE_SEC = 30 * 60.0


@attrs.frozen
class ServerIdentity:
    """What a cached listing is keyed by. ``digest`` is the key; ``anchor`` is the
    in-process server object itself, held by the entry so that its ``id()`` (part of the
    digest) cannot be reused by another object while the entry lives."""

    digest: str
    anchor: object | None = attrs.field(default=None, eq=False, repr=False)


def _secret(value: Any) -> str:
    """A digest standing for a secret value in the identity (never the value)."""
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def server_identity(config: ServerConfig) -> ServerIdentity:
    """The cache key of a server: its target and the settings that change its catalog
    (``enabled_tools``, ``disabled_tools``); not its name, which only changes public
    names (recomputed at every install)."""
    target = config.target
    anchor: object | None = None
    described: dict[str, Any]
    if isinstance(target, str):
        described = {"url": target, "headers": _secret(dict(config.headers))}
    elif isinstance(getattr(target, "command", None), str):
        described = {
            "command": target.command,
            "args": list(getattr(target, "args", None) or []),
            "cwd": str(getattr(target, "cwd", None)),
            "env": _secret(getattr(target, "env", None)),
        }
    else:
        # An in-process server: its identity is the object (held as the anchor).
        described = {"in_process": type(target).__qualname__, "id": id(target)}
        anchor = target
    described["enabled_tools"] = (
        None if config.enabled_tools is None else sorted(config.enabled_tools)
    )
    described["disabled_tools"] = sorted(config.disabled_tools)
    text = json.dumps(described, sort_keys=True, default=str)
    return ServerIdentity(hashlib.sha256(text.encode()).hexdigest(), anchor)


@attrs.frozen
class CatalogCacheStatistics:
    entries: int
    max_entries: int
    max_age_sec: float
    hits: int
    misses: int
    """Lookups that found nothing usable (absent or expired)."""
    stores: int
    evictions: int
    """Entries dropped to stay within ``max_entries`` (least recently used first)."""
    expirations: int
    """Entries found older than ``max_age_sec`` and dropped."""


@attrs.frozen
class _Entry:
    tools: tuple[Any, ...]
    stored_at: float
    anchor: object | None = attrs.field(eq=False, repr=False)


def _positive_int(_: Any, __: Any, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"max_entries must be an integer >= 1, got {value!r}")


def _positive_number(_: Any, __: Any, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(f"max_age_sec must be a number > 0, got {value!r}")


@attrs.define(eq=False)
class CatalogCache:
    """A bounded LRU of raw listings with expiry (defaults: 32 entries, 30 minutes).

    Listings are stored and returned as they are; callers treat them as immutable."""

    max_entries: int = attrs.field(default=DEFAULT_MAX_ENTRIES, validator=_positive_int)
    max_age_sec: float = attrs.field(default=DEFAULT_MAX_AGE_SEC, validator=_positive_number)
    clock: Callable[[], float] = time.monotonic
    _entries: OrderedDict[str, _Entry] = attrs.field(init=False, factory=OrderedDict)
    _hits: int = attrs.field(init=False, default=0)
    _misses: int = attrs.field(init=False, default=0)
    _stores: int = attrs.field(init=False, default=0)
    _evictions: int = attrs.field(init=False, default=0)
    _expirations: int = attrs.field(init=False, default=0)

    def get(self, identity: ServerIdentity) -> tuple[Any, ...] | None:
        """The listing stored for ``identity`` within ``max_age_sec``, or None."""
        entry = self._entries.get(identity.digest)
        if entry is not None and self.clock() - entry.stored_at >= self.max_age_sec:
            del self._entries[identity.digest]
            self._expirations += 1
            entry = None
        if entry is None:
            self._misses += 1
            return None
        self._entries.move_to_end(identity.digest)
        self._hits += 1
        return entry.tools

    def put(self, identity: ServerIdentity, tools: Sequence[Any]) -> None:
        """Store the listing of a refresh that succeeded; its age starts now."""
        self._entries[identity.digest] = _Entry(tuple(tools), self.clock(), identity.anchor)
        self._entries.move_to_end(identity.digest)
        self._stores += 1
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
            self._evictions += 1

    def keys(self) -> tuple[str, ...]:
        """The digests held, least recently used first."""
        return tuple(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    def statistics(self) -> CatalogCacheStatistics:
        return CatalogCacheStatistics(
            entries=len(self._entries),
            max_entries=self.max_entries,
            max_age_sec=self.max_age_sec,
            hits=self._hits,
            misses=self._misses,
            stores=self._stores,
            evictions=self._evictions,
            expirations=self._expirations,
        )


DEFAULT_CATALOG_CACHE = CatalogCache()
"""The process-level cache every host uses unless ``HostConfig(catalog_cache=...)``."""
