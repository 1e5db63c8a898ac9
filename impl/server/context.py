"""What a server's runtime is given (SPEC §11.1): the parts it shares with the other
servers and the host, and one live session."""

from __future__ import annotations

import anyio
import attrs
from anyio.abc import TaskGroup

from ..calls.table import CallTable
from ..catalog.listing import BuildBindings, ReadListing, build_bindings, read_listing
from ..catalog.publisher import Publisher
from ..config.catalog_cache import CatalogCache
from ..config.host import HostConfig
from ..config.recorder import Recorder
from ..wire.seam import Connection, Connector

__all__ = ["RuntimeContext", "Session"]


@attrs.frozen
class RuntimeContext:
    """What every server's runtime shares with the others and the host."""

    publisher: Publisher
    calls: CallTable
    connector: Connector
    cache: CatalogCache
    recorder: Recorder
    config: HostConfig
    read_listing: ReadListing = read_listing
    build_bindings: BuildBindings = build_bindings


@attrs.define(eq=False)
class Session:
    """One live connection and the tasks that serve it."""

    connection: Connection
    group: TaskGroup
    lost: anyio.Event = attrs.field(factory=anyio.Event)
