"""Where a server's first start is (SPEC §11.3, §11.12; the glossary of SPEC §2).

* ``connecting`` — the first attempt is under way;
* ``listed`` — its first listing is in and waits for the servers before it (§11.3);
* ``dormant`` — started ``lazy_when_cached``: its cached catalog is installed, it is not
  connected, nothing is sent; a call or ``host.refresh`` wakes it;
* ``starting`` — woken, before its first refresh ended: calls wait (INV-11); a server a
  reconfiguration changed starts here, its replacement's first listing pending (§11.17);
* ``running`` — settled; sessions come and go;
* ``failed`` — a required server that could not start.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal

__all__ = ["SERVER_PHASES", "ServerPhase"]

ServerPhase = Literal["connecting", "listed", "dormant", "starting", "running", "failed"]

SERVER_PHASES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "connecting": frozenset({"listed", "dormant", "starting", "running", "failed"}),
        "listed": frozenset({"connecting"}),
        "dormant": frozenset({"starting", "running"}),
        "starting": frozenset({"running"}),
        "running": frozenset(),
        "failed": frozenset(),
    }
)
"""Every phase a server may move to from each phase (SPEC §11.1): ``listed`` goes back
to ``connecting`` once its turn came; the replacement of a changed server moves to
``starting`` before it connects (SPEC §11.17); a lazy start that ends before it settled (a failed
first connection, the host closing) goes from ``dormant`` straight to ``running``."""
