"""The variants of the lockstep machine (SPEC §12.2): which bound a run explores.

``mcpbind check`` runs each of :data:`LOCKSTEP_VARIANTS` under both policies, ``mcpbind
fuzz`` too (as ``<stage>-<policy>``); a failure's replay file carries its variant
(SPEC §12.3), so that it replays on the same bound. Light on purpose: the CLI imports it
at start-up, before anything heavy loads.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

__all__ = ["LOCKSTEP_VARIANTS", "PLAIN", "LockstepVariant"]


@attrs.frozen
class LockstepVariant:
    """What a variant adds to the machine's bound (``machines.lockstep_bound``). Each flag
    set is written to the variant's replay files as ``"<flag>": true``."""

    approval: bool = False
    """Every MCP call waits for the machine's approver (SPEC §3.4)."""
    lazy: bool = False
    """``git.hub`` starts dormant from its cached catalog (SPEC §3.5)."""
    progress: bool = False
    """An idle timeout that progress re-arms, up to a cap (SPEC §8.11)."""
    tasks: bool = False
    """``git.hub`` may answer calls with tasks (SPEC §8.12)."""
    streams: bool = False
    """``git.hub`` may end its ``list_changed`` stream, and forget the host's session: the
    host listens again (SPEC §5.7) and replaces the session (§8.13)."""
    reconfigure: bool = False
    """The explorer's ``reconfigure`` part: servers kept, removed, changed and added by
    one ``Host.reconfigure`` (SPEC §3.7, §11.17)."""
    deferral: bool = False
    """The host defers MCP tools above a small ``defer_threshold``: the machine calls
    ``tool_search``, deferred names and the names a search discovered (SPEC §11.9)."""

    @property
    def flags(self) -> tuple[str, ...]:
        """The names of the flags set, in this order: approval, lazy, progress, tasks,
        streams, reconfigure, deferral."""
        every = (
            ("approval", self.approval),
            ("lazy", self.lazy),
            ("progress", self.progress),
            ("tasks", self.tasks),
            ("streams", self.streams),
            ("reconfigure", self.reconfigure),
            ("deferral", self.deferral),
        )
        return tuple(name for name, on in every if on)

    def to_json(self) -> dict[str, bool]:
        """The variant's keys of a replay file: its flags set, each ``true``."""
        return dict.fromkeys(self.flags, True)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LockstepVariant:
        """The variant of a replay file; a flag it does not name is off."""
        return cls(
            approval=bool(data.get("approval", False)),
            lazy=bool(data.get("lazy", False)),
            progress=bool(data.get("progress", False)),
            tasks=bool(data.get("tasks", False)),
            streams=bool(data.get("streams", False)),
            reconfigure=bool(data.get("reconfigure", False)),
            deferral=bool(data.get("deferral", False)),
        )


PLAIN = LockstepVariant()
"""The machine's own bound."""

LOCKSTEP_VARIANTS: Mapping[str, LockstepVariant] = MappingProxyType(
    {
        "lockstep": PLAIN,
        "lockstep-approval": LockstepVariant(approval=True),
        "lockstep-lazy": LockstepVariant(lazy=True),
        "lockstep-progress": LockstepVariant(progress=True),
        "lockstep-tasks": LockstepVariant(tasks=True),
        "lockstep-streams": LockstepVariant(streams=True),
        "lockstep-reconfigure": LockstepVariant(reconfigure=True),
        "lockstep-deferral": LockstepVariant(deferral=True),
    }
)
"""The lockstep stages of ``mcpbind check`` and ``mcpbind fuzz``, by stage name."""
