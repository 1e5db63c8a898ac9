"""Hypothesis settings profiles, chosen by ``MCPBIND_HYPOTHESIS_PROFILE`` (SPEC §12.5).

``ci`` (the default): derandomised, bounded, no example database — the property suite
fits in minutes on 2 cores. ``nightly``: random seeds, large budgets, a persistent
example database (a directory, or Redis through Hypothesis's Redis database).
``dev``: like ``ci`` but random and with the local database.

Hypothesis loads a built-in ``ci`` profile by itself when ``CI`` is set; registering and
loading ours explicitly keeps the budgets ours. Every profile reports one failure, not a
group of distinct ones: the callers (``mcpbind check``, ``mcpbind fuzz``, the mutant
killer) take a run's verdict as one ``MachineFailure``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import ExampleDatabase

__all__ = ["PROFILES", "ci_budget", "load", "profile_name"]

PROFILES = ("ci", "nightly", "dev")
ENV = "MCPBIND_HYPOTHESIS_PROFILE"
_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "ci",
    max_examples=400,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=_SUPPRESS,
    report_multiple_bugs=False,
)
settings.register_profile(
    "dev",
    max_examples=100,
    deadline=None,
    print_blob=True,
    suppress_health_check=_SUPPRESS,
    report_multiple_bugs=False,
)
settings.register_profile(
    "nightly",
    max_examples=20_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=_SUPPRESS,
    report_multiple_bugs=False,
    phases=list(Phase),
)


def profile_name() -> str:
    name = os.environ.get(ENV, "ci")
    if name not in PROFILES:
        raise ValueError(f"{ENV}={name!r}: known profiles are {', '.join(PROFILES)}")
    return name


def load(name: str | None = None, database: ExampleDatabase | None = None) -> settings:
    """Load a profile (default: from the environment); optionally with a database."""
    chosen = name or profile_name()
    settings.load_profile(chosen)
    if database is not None:
        settings.register_profile(f"{chosen}+db", settings.get_profile(chosen), database=database)
        settings.load_profile(f"{chosen}+db")
    current = settings.default
    assert current is not None
    return current


def ci_budget(examples: int) -> settings:
    """Settings for a test that runs ``examples`` examples in the ``ci`` profile (a
    machine whose decisive sequences replays pin) and the loaded profile's own budget in
    the others."""
    if profile_name() == "ci":
        return settings(max_examples=examples)
    return settings()
