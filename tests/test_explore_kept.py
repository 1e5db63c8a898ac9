"""SPEC §10.10: a state equal to one already explored but in its steps takes that one's
transitions (their steps aside) instead of applying the rules again. Counted through
the rules' ``apply``: keeping computes fewer transitions than computing each, with the
same report (mutation seed 91: the explorer's ``if same_but_steps is None`` negated,
which starts a new table at every state and so keeps nothing, survived: only the
reports were compared, and they are the same either way)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from mcpbind.model.bounds import standard_suite
from mcpbind.model.explore import explore
from mcpbind.model.rules import Rules


class _ComputesEach(Rules):
    """The standard rules, the explorer keeping none of their transitions."""

    steps_unread = False  # type: ignore[assignment]  # a plain value for the cached property


@pytest.mark.parametrize("name", ["calls", "catalogs"])
def test_states_equal_but_in_their_steps_do_not_apply_the_rules_again(
    name: str, monkeypatch: pytest.MonkeyPatch
):
    applied = 0
    apply = Rules.apply

    def counted(self: Rules, state: Any, event: Any) -> Any:
        nonlocal applied
        applied += 1
        return apply(self, state, event)

    monkeypatch.setattr(Rules, "apply", counted)
    parts = standard_suite("revalidate", servers=1, steps=2, calls=1)
    bound = next(p for p in parts if p.name == name).bound
    counts, reports = [], []
    for rules in (Rules(), _ComputesEach()):
        applied = 0
        reports.append(attrs.evolve(explore(bound, rules), seconds=0))
        counts.append(applied)
    assert reports[0] == reports[1]
    kept, each = counts
    assert kept < each, counts
