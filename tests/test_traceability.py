"""SPEC.md and the code say the same thing: ids are defined, cited and enforced."""

from __future__ import annotations

import pathlib
import re

from mcpbind.model import INVARIANTS, texts
from mcpbind.model.explore import LIVENESS
from mcpbind.model.mutants import MUTANTS

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPEC = (ROOT / "SPEC.md").read_text(encoding="utf-8")
ID = re.compile(r"\b(INV|LIVE)-(\d+)\b")
DEFINED = {f"{m[0]}-{m[1]}" for m in re.findall(r"^### (INV|LIVE)-(\d+) ", SPEC, re.MULTILINE)}
CHECKING = ["model", "properties", "impl", "tests"]


def cited_in(folder: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (ROOT / folder).rglob("*.py"):
        if path.name == "test_traceability.py":
            continue
        for family, number in ID.findall(path.read_text(encoding="utf-8")):
            found.setdefault(f"{family}-{number}", set()).add(str(path.relative_to(ROOT)))
    return found


def test_spec_defines_invariants_one_to_sixteen_and_three_liveness_properties():
    assert {f"INV-{n}" for n in range(1, 17)} | {"LIVE-1", "LIVE-2", "LIVE-3"} == DEFINED


def test_every_id_in_spec_is_enforced_by_a_check_that_can_fail():
    checked = {inv.id for inv in INVARIANTS} | set(LIVENESS)
    assert checked == DEFINED
    assert {m.target for m in MUTANTS} == DEFINED  # each has a mutant that its check kills
    tests = cited_in("tests")
    for inv in sorted(DEFINED):
        assert inv in tests, f"{inv} is cited by no test"


def test_nothing_cites_an_id_that_spec_does_not_define():
    for folder in CHECKING:
        for inv, paths in cited_in(folder).items():
            assert inv in DEFINED, f"{inv} cited in {sorted(paths)} is not defined in SPEC.md"
    for inv in {f"{m[0]}-{m[1]}" for m in ID.findall(SPEC)}:
        assert inv in DEFINED, f"SPEC.md mentions {inv} without defining it"


def test_every_invariant_predicate_docstring_starts_with_its_id():
    for inv in INVARIANTS:
        for predicate in (inv.state, inv.transition):
            if predicate is not None:
                assert (predicate.__doc__ or "").startswith(inv.id + ":"), predicate.__name__


def test_every_text_the_host_produces_is_written_in_spec():
    for name in dir(texts):
        value = getattr(texts, name)
        if name.isupper() and isinstance(value, str):
            assert f"`{name}`" in SPEC, f"{name} is not named in SPEC.md"
            assert value in SPEC, f"the text of {name} in SPEC.md differs from model/texts.py"
