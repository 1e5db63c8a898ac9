"""``scripts/mutation`` (docs/development.md): a sample of two mutants of one module, run
against one test file, reported with file, line and mutation, scored, recorded, and
resumed."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULE = "impl/calls/encoding.py"


def digest(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_a_sample_of_two_mutants_reports_each_and_a_score_and_leaves_the_checkout_alone(tmp_path):
    before = digest(ROOT / MODULE)
    report, history = tmp_path / "report.json", tmp_path / "history.jsonl"
    command = [sys.executable, str(ROOT / "scripts" / "mutation"), "--sample", "2", "--seed", "7"]
    command += ["--paths", MODULE, "--tests", "tests/test_content_text.py"]
    command += ["--json", str(report), "--history", str(history)]
    env = {**os.environ, "PATH": f"{pathlib.Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert digest(ROOT / MODULE) == before  # mutants are made in a scratch copy
    lines = done.stdout.strip().splitlines()
    assert " mutants at " in lines[0]
    assert lines[-1].startswith("score: ")
    assert "minutes (seed 7" in lines[-1]
    written = json.loads(report.read_text())
    assert written["seed"] == 7
    assert len(written["outcomes"]) == 2
    for outcome in written["outcomes"]:
        assert outcome["module"] == MODULE
        assert outcome["line"] > 0
        assert " -> " in outcome["mutation"]
        assert outcome["status"] in {"killed", "survived", "timeout", "no-coverage"}
        assert outcome["tests"] == ["tests/test_content_text.py"]
        assert outcome["ran"] >= 0  # only the tests that ran the mutated statement
    survivors = [o for o in written["outcomes"] if o["status"] in ("survived", "no-coverage")]
    for survivor in survivors:  # each survivor is listed with file, line and mutation
        assert f"{MODULE}:{survivor['line']} {survivor['operator']}: " in done.stdout
    [recorded] = [json.loads(line) for line in history.read_text().splitlines()]
    assert recorded["killed"] + recorded["survived"] == 2
    assert recorded["score"] == pytest.approx(recorded["killed"] / 2)
    assert len(recorded["survivors"]) == recorded["survived"]
    # Resumed from its own report, the same draw keeps every outcome and runs no test.
    again = [*command[:-4], "--resume", str(report)]
    done = subprocess.run(again, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[1/2]" not in done.stdout
    assert "2 kept from --resume" in done.stdout.strip().splitlines()[-1]


def load_script():
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("mutation_script", str(ROOT / "scripts/mutation"))
    spec = importlib.util.spec_from_loader("mutation_script", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_script"] = module  # dataclasses look their module up
    loader.exec_module(module)
    return module


def test_a_statement_run_at_import_runs_the_files_the_table_names_for_its_module_first():
    """A mutant of a statement every test ran at import runs all the module's tests, with
    ``-x``: those of the files ``[tool.mcpbind.mutation.tests]`` names for it first (so
    ``impl/__init__.py``'s ``TYPE_CHECKING`` made true meets ``tests/test_surface.py``
    before a thousand others), each group fastest first; failing tests never."""
    script = load_script()
    config = {"tests": {"impl/__init__.py": ["tests/test_b.py"], "impl/*.py": ["tests/c.py"]}}
    assert script.TestChooser.mapped("impl/__init__.py", config) == [
        "tests/c.py",
        "tests/test_b.py",
    ]
    assert script.TestChooser.mapped("model/rules.py", config) == []
    reaches = script.Reaches.__new__(script.Reaches)
    seconds = {"tests/test_a.py": {"a::fast": 0.1, "a::slow": 5.0, "a::broken": 0.0}}
    seconds["tests/test_b.py"] = {"b::slow": 2.0, "b::fast": 0.5}
    seconds = {
        f: {f"{f}::{t.split('::')[1]}": s for t, s in ts.items()} for f, ts in seconds.items()
    }
    reaches.known = {
        f: script.Reach(lines={}, seconds=ts, failed=[f"{f}::broken"]) for f, ts in seconds.items()
    }
    files = ["tests/test_a.py", "tests/test_b.py"]
    assert reaches.passing(files) == [
        "tests/test_a.py::fast",
        "tests/test_b.py::fast",
        "tests/test_b.py::slow",
        "tests/test_a.py::slow",
    ]
    assert reaches.passing(files, frozenset({"tests/test_b.py"})) == [
        "tests/test_b.py::fast",
        "tests/test_b.py::slow",
        "tests/test_a.py::fast",
        "tests/test_a.py::slow",
    ]


def test_a_statement_run_at_import_by_one_file_still_chooses_the_tests_of_others_that_ran_it():
    """A test file that builds a value at import (a line's context is ``""``) makes the
    module's own files run whole, and the tests of other files that ran the line inside a
    test are still chosen (issue 33: ``tool_approval_modes``' check survived its loop made
    empty because a file ran it at import and the one test that pins it was left out)."""
    script = load_script()
    reaches = script.Reaches.__new__(script.Reaches)
    module = "impl/config/server.py"
    reaches.known = {
        "tests/test_a.py": script.Reach(
            lines={module: {101: ["", "tests/test_a.py::t"]}},
            seconds={"tests/test_a.py::t": 0.2},
            failed=[],
        ),
        "tests/test_b.py": script.Reach(
            lines={module: {101: ["tests/test_b.py::slow", "tests/test_b.py::fast"], 9: [""]}},
            seconds={"tests/test_b.py::slow": 3.0, "tests/test_b.py::fast": 0.1},
            failed=[],
        ),
    }
    files = ["tests/test_a.py", "tests/test_b.py"]
    assert reaches.select(module, {101}, files) == (
        ["tests/test_b.py::fast", "tests/test_a.py::t", "tests/test_b.py::slow"],
        True,
    )
    assert reaches.select(module, {102}, files) == ([], False)
    reaches.known["tests/test_a.py"].lines[module][101].remove("")
    assert reaches.select(module, {101}, files)[1] is False


def tree_with(tmp_path: pathlib.Path, source: str, conftest: str) -> pathlib.Path:
    """A checkout whose tests turn warnings into errors, as this project's do; the
    conftest imports ``lib/thing.py`` (its package layout on ``PYTHONPATH``)."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "thing.py").write_text(source)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest.py").write_text(conftest)
    (tmp_path / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\nfilterwarnings = error\n")
    return tmp_path


def test_a_process_measured_by_the_harness_that_runs_none_of_the_checkout_writes_no_stderr(
    tmp_path,
):
    """A test's child process inherits the harness (its PYTHONPATH): coverage's warning at
    its exit went to the stderr the test reads (``tests/test_tap.py``'s exit status test
    failed under coverage alone, so no sample chose it)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "scripts" / "mutation_cover"),
        "MCPBIND_MUTATION_COVERAGE": str(tmp_path / "coverage"),
        "MCPBIND_MUTATION_INCLUDE": f"{tmp_path}/nothing/*",
        "MCPBIND_MUTATION_OMIT": "",
        "MCPBIND_MUTATION_CONTEXT": "",
    }
    done = subprocess.run(
        [sys.executable, "-c", "import sys; sys.exit(3)"], env=env, capture_output=True, check=False
    )
    assert (done.returncode, done.stderr) == (3, b"")
    assert list(tmp_path.glob("coverage.*")), "the harness measured the process"


def test_a_test_files_kept_coverage_holds_while_the_harness_that_measured_it_is_unchanged():
    """The harness (``scripts/mutation_cover/``) decides which tests pass under coverage:
    once ``sitecustomize.py`` kept coverage's warning off a test's child process,
    ``tests/test_tap.py``'s exit status test (which reads that stderr) had to be measured
    again, or it stayed a failing test, never chosen."""
    script = load_script()
    files = [
        "model/naming.py",
        "scripts/mutation",
        "scripts/mutation_cover/mutation_contexts.py",
        "scripts/mutation_cover/sitecustomize.py",
        "tests/conftest.py",
        "tests/test_naming.py",
    ]
    assert script.Reaches(files).setup == [
        "scripts/mutation_cover/mutation_contexts.py",
        "scripts/mutation_cover/sitecustomize.py",
        "tests/conftest.py",
    ]


@pytest.mark.parametrize(
    ("source", "conftest", "status", "said"),
    [
        (
            'def f(x):\n    return x is not "a"\n',  # a comparison with a literal made `is not`
            "import thing\n",
            "killed (import)",
            "is not",
        ),
        (  # the harness broken, the mutated module aside
            "def f(x):\n    return x != 'a'\n",
            "import thing\nimport no_such_module_here\n",
            "error",
            "",
        ),
        ("def f(x):\n    return x != 'a'\n", "import thing\n", "survived", ""),
    ],
    ids=["mutant-breaks-import", "harness-broken", "imports"],
)
def test_a_mutant_that_stops_its_module_importing_is_killed_at_import_and_a_broken_run_is_an_error(
    tmp_path, source, conftest, status, said
):
    """A mutant whose module no longer compiles under the tests' warning filters (a
    ``SyntaxWarning`` made an error) is caught by every test that imports it: ``killed
    (import)``, counted as killed; a run that fails before any test for another reason is
    the harness's ``error``."""
    script = load_script()
    tree = tree_with(tmp_path, source, conftest)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests/test_x.py"]
    got, failure, _ = script.run_tests(tree, tree / "lib", command, 120, "lib/thing.py")
    assert got == status
    assert said in failure
    assert (status in script.KILLED) == status.startswith("killed")


def test_no_mutant_is_made_inside_an_assert_or_an_annotation_or_a_marked_line(tmp_path):
    """An assert's claim decides nothing (the outputs are those of ``python -O``), an
    annotation is a string never run, a marked line is argued in its comment: no mutant
    is made there; the statements around them are mutated as usual."""
    script = load_script()
    script.ROOT = tmp_path
    (tmp_path / "m.py").write_text(
        "from __future__ import annotations\n"
        "def f(x: int = 1 + 2) -> bool:\n"  # line 2: only the default is mutated
        "    assert x == 3 and x > 0, x + 1\n"  # line 3: nothing
        "    weight = 10.1  # pragma: no mutate\n"  # line 4: nothing
        "    return x < weight\n"  # line 5
    )
    mutants = script.mutants_of("m.py", script.operators())
    assert {m.line for m in mutants} == {2, 5}
    assert all(m.column > len("def f(x: int = ") - 2 for m in mutants if m.line == 2)


def test_uncovered_lists_the_sites_whose_statement_no_test_ran_and_only_those():
    """``scripts/mutation --uncovered``: a site is listed when no line of its statement
    ran (in a test or at import); a compound statement's header stands for its sites in
    the header, so a loop whose body ran is not listed."""
    script = load_script()
    module = "model/table.py"
    grouped = script.sites(script.mutants_of(module, script.operators()))
    source = (ROOT / module).read_text(encoding="utf-8").splitlines()
    header = 1 + next(i for i, text in enumerate(source) if "for event_type in" in text)
    everything = set(range(1, len(source) + 1))
    assert script.uncovered_sites(grouped, {module: everything}) == []
    found = script.uncovered_sites(grouped, {module: everything - {header}})
    assert found == [(module, header, ["ZeroIterationForLoop"])]
    lines = {line for _, line, _ in script.uncovered_sites(grouped, {})}
    assert header in lines
    assert lines == {line for (_, line, _, _) in grouped}


def test_a_mutant_in_a_defs_header_is_reached_where_the_function_is_called():
    """A decorator or a default runs at import, with the ``def``; what it changes shows
    where the function is called, so its body's lines choose tests too (seed 101:
    ``@property`` removed from ``ServerMembership.starting`` survived, the tests that
    read it never chosen). A mutant inside the body is not widened."""
    script = load_script()
    source = (
        "class A:\n"
        "    @property\n"
        "    def starting(self, x=1):\n"
        '        """Doc."""\n'
        "        return self.x\n"
        "\n"
        "    def other(self):\n"
        "        return 2\n"
    )
    tree = ast.parse(source)
    assert script.statement_lines(tree, 2, 5) == {2, 3}
    assert script.reach_lines(tree, 2, 5) == {2, 3, 4, 5}  # the decorator
    assert script.reach_lines(tree, 3, 25) == {2, 3, 4, 5}  # the default
    assert script.reach_lines(tree, 5, 15) == {5}  # inside the body: as it was
    assert script.reach_lines(tree, 8, 15) == {8}


def test_a_position_cosmic_ray_offers_but_cannot_mutate_is_no_mutant(tmp_path, monkeypatch):
    """Cosmic Ray's ExceptionReplacer offers a dotted name in an ``except`` tuple, then
    fails to replace it (``'PythonNode' object has no attribute 'value'``): seed 103's run
    stopped there. Such a position is ``no-mutation``, said and counted neither way."""
    script = load_script()
    source = "try:\n    pass\nexcept (KeyError, os.error):\n    pass\n"
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(script, "ROOT", tmp_path)
    operator = [(n, o) for n, o in script.operators() if n == "core/ExceptionReplacer"]
    mutants = script.mutants_of("m.py", operator)
    dotted = [m for m in mutants if m.column == source.splitlines()[2].index("os.error")]
    assert dotted, [(m.line, m.column) for m in mutants]
    outcome = script.mutate_and_test(
        dotted[0],
        tree=tmp_path,
        farm=tmp_path,
        tests=[],
        candidates=[],
        config={},
        slow=False,
        timeout=1.0,
        reaches=None,
    )
    assert outcome.status == "no-mutation"
    assert outcome.failure.startswith("Cosmic Ray could not make it: AttributeError")
    assert (tmp_path / "m.py").read_text(encoding="utf-8") == source
