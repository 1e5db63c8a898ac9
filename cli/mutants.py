"""``mcpbind check --mutants``: every deliberately broken model and runtime, and which
check kills it (SPEC §10.4, §12.7)."""

from __future__ import annotations

import pathlib
from typing import Any

from mcpbind.model.bounds import standard_suite
from mcpbind.model.explore import explore

from .progress import Progress

__all__ = ["check_mutants"]


def check_mutants(progress: Progress, corpus: pathlib.Path | None = None) -> list[dict[str, Any]]:
    """Every model mutant through the explorer, every runtime mutant through the lockstep
    machine (generation only: a mutant counts as killed at its first failing example)."""
    from mcpbind.model.mutants import MUTANTS  # noqa: PLC0415
    from mcpbind.properties.impl_mutants import IMPL_MUTANTS  # noqa: PLC0415
    from mcpbind.properties.machines import kill_impl_mutant  # noqa: PLC0415

    results: list[dict[str, Any]] = []
    for model_mutant in MUTANTS:
        started = progress.start(f"model mutant {model_mutant.name}")
        killed_by: str | None = None
        for policy in ("revalidate", "frozen"):
            part = next(p for p in standard_suite(policy) if p.name == model_mutant.part)
            found = explore(part.bound, model_mutant, stop_on=model_mutant.target)
            hit = [v for v in found.violations if v.invariant == model_mutant.target]
            if hit:
                killed_by = model_mutant.target
                break
        results.append(
            {
                "name": model_mutant.name,
                "kind": "model",
                "killed": killed_by is not None,
                "invariant": model_mutant.target,
                "examples": found.states,
            }
        )
        progress.done(f"model mutant {model_mutant.name}", started, "kill" if killed_by else "LIVE")
    for impl in IMPL_MUTANTS:
        started = progress.start(f"runtime mutant {impl.name}")
        kill = kill_impl_mutant(impl.name, corpus)
        results.append(
            {
                "name": impl.name,
                "kind": "runtime",
                "killed": kill.killed,
                "invariant": impl.target,
                "check": kill.check,
                "by": kill.by,
                "examples": kill.examples,
            }
        )
        progress.done(f"runtime mutant {impl.name}", started, "kill" if kill.killed else "LIVE")
    return results
