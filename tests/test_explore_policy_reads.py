"""SPEC §10.8: the second policy reuses the first's rows (each state's events and
transitions) only where computing them read no binding policy. Here the rules' own
``enabled`` reads it: under ``revalidate`` they offer no ``close``. The second policy
must compute those states' events again and get the report it gets alone (mutation
seed 91: the explorer's ``reads[0] == read`` made ``is not`` survived, since the
standard rules' ``enabled`` never reads the policy)."""

from __future__ import annotations

import attrs

from mcpbind.model.bounds import standard_suite
from mcpbind.model.explore import Report, Shared, explore
from mcpbind.model.rules import Rules
from mcpbind.model.values import Close, Event, State


class _NoCloseUnderRevalidate(Rules):
    """The standard rules, but ``enabled`` reads the policy: no ``close`` under
    ``revalidate``."""

    def enabled(self, state: State) -> list[Event]:
        events = super().enabled(state)
        if state.bound.policy == "revalidate":
            return [e for e in events if not isinstance(e, Close)]
        return events


def _bare(report: Report) -> Report:
    return attrs.evolve(report, seconds=0)


def test_events_that_read_the_policy_are_listed_again_under_the_second_policy():
    rules = _NoCloseUnderRevalidate()
    shared = Shared()
    reports = {}
    for policy in ("frozen", "revalidate"):
        parts = standard_suite(policy, servers=1, steps=1, calls=1)  # type: ignore[arg-type]
        bound = next(p for p in parts if p.name == "calls").bound
        reused = explore(bound, rules, shared=shared)
        alone = explore(bound, rules)
        assert _bare(reused) == _bare(alone), policy
        reports[policy] = alone
    # the rules' reading matters: without a close, revalidate reaches fewer states
    assert reports["revalidate"].states < reports["frozen"].states
