"""Every example in README.md and docs/ is executed, and the figures that go stale are
checked (issue 28; the conventions are in ``doc_blocks.py`` and docs/development.md).

Terminal examples run in a pseudo-terminal (``pty``), so what they show is what a person
at a terminal sees: ``mcpbind call`` asks for approval there, and the answer written in the
example is typed.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import fcntl
import itertools
import os
import pathlib
import pty
import re
import select
import shlex
import struct
import subprocess
import sys
import termios
import time
import warnings

import doc_blocks as d
import pytest
from test_explorer import PINNED

from mcpbind.cli.explore import liveness_ids, safety_ids
from mcpbind.cli.main import build_parser
from mcpbind.impl import ConfigError, HostConfig
from mcpbind.tap.scenario import load_scenario

TOML = d.all_blocks("toml")
PYTHON = d.all_blocks("python")
DOC_PAGES = [p for p in d.pages() if p != d.README]
SPEC_TEXT = d.SPEC.read_text(encoding="utf-8")


# TOML ----------------------------------------------------------------------------------


@pytest.mark.parametrize("block", TOML, ids=[b.where for b in TOML])
def test_every_toml_block_loads_with_from_toml(block, tmp_path, monkeypatch):
    """A file the docs show loads; one marked ``toml-error`` is refused; one marked
    ``scenario`` is the model stub's committed scenario of that name, and loads. The environment
    variables a block names (a bearer token's, a header's) are set to a stand-in, as they
    would be where the file is used."""
    for name in re.findall(r'"([A-Z][A-Z0-9_]+)"', block.body):
        monkeypatch.setenv(name, "stand-in")
    kind, name = block.marker or ("file", "config.toml")
    if kind == "scenario":  # a model stub's scenario (SPEC §14.7): the committed file's text
        committed = d.ROOT / "benchmarks" / "peers" / "scenarios" / name
        assert block.body == committed.read_text(encoding="utf-8")
        assert load_scenario(block.body).name == committed.stem
        return
    path = tmp_path / name
    path.write_text(block.body, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a Codex key mcpbind does not act on is a warning
        if kind == "toml-error":
            with pytest.raises(ConfigError):
                HostConfig.from_toml(path)
        else:
            assert isinstance(HostConfig.from_toml(path), HostConfig)


def test_the_docs_have_configuration_examples():
    pages = {b.page.name for b in TOML}
    assert {"configuration.md"} <= pages
    assert any(b.marker == ("toml-error", "typo.toml") for b in TOML)


# Terminal examples ---------------------------------------------------------------------


def terminal(line: str, cwd: pathlib.Path, answers: list[str], timeout: float = 240) -> str:
    """Run one ``$ `` line with stdin, stdout and stderr on a pseudo-terminal of 100 x 50;
    type each answer when a prompt waits for it. Returns everything the terminal got."""
    argv = shlex.split(line, comments=True)
    if argv[0] == "mcpbind":  # the installed command, as after `. .venv/bin/activate`
        script = pathlib.Path(sys.executable).parent / "mcpbind"
        command = [str(script)] if script.exists() else [sys.executable, "-m", "mcpbind.cli"]
        argv = [*command, *argv[1:]]
    env = {
        **os.environ,
        "HOME": str(cwd),
        "MCPBIND_HOME": str(cwd / ".mcpbind"),
        "PATH": f"{pathlib.Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "COLUMNS": "100",
        "LINES": "50",
        "TERM": "xterm",
    }
    env.pop("MCPBIND_HYPOTHESIS_PROFILE", None)
    controller, terminal_fd = pty.openpty()
    fcntl.ioctl(terminal_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 100, 0, 0))
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=terminal_fd,
        stdout=terminal_fd,
        stderr=terminal_fd,
        start_new_session=True,
    )
    os.close(terminal_fd)
    shown = b""
    pending = list(answers)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.2)
            if ready:
                try:
                    data = os.read(controller, 65536)
                except OSError:  # EIO: every copy of the terminal side is closed
                    break
                if not data:
                    break
                shown += data
                tail = d.screen(shown.decode(errors="replace")).rsplit("\n", 1)[-1] + " "
                if pending and d.PROMPT.search(tail) and tail.endswith(": "):
                    os.write(controller, pending.pop(0).encode() + b"\n")
            elif process.poll() is not None:
                break
        else:
            process.kill()
            pytest.fail(f"{line!r} did not end within {timeout} s; it showed:\n{shown!r}")
        process.wait(timeout=30)
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
    return d.screen(shown.decode(errors="replace"))


def run_console_examples(page: pathlib.Path, scratch: pathlib.Path) -> list[str]:
    """Every ``$ `` line of the page, in order, in one scratch directory holding the page's
    named TOML files. Returns a description of each difference."""
    found = d.blocks(page)
    for block in found:
        if block.lang == "toml" and block.marker is not None:
            (scratch / block.marker[1]).write_text(block.body, encoding="utf-8")
    differences = []
    for block in found:
        if block.lang != "console":
            continue
        for command in d.commands(block):
            got = d.masked(terminal(command.line, scratch, d.answers(command.expected)))
            want = d.masked(command.expected)
            if got != want:
                diff = "\n".join(
                    difflib.unified_diff(
                        want.splitlines(), got.splitlines(), "the page", "the terminal", lineterm=""
                    )
                )
                differences.append(f"{block.where}: $ {command.line}\n{diff}")
    return differences


@pytest.mark.slow
def test_the_readme_first_run_passes_through_a_pseudo_terminal_approval_prompt_included(
    tmp_path,
):
    text = d.README.read_text(encoding="utf-8")
    first_run = text[text.index("## First run") : text.index("## The library")]
    assert "\n$ mcpbind call mcp__git_hub__deploy\n" in first_run
    assert "choice [y/s/a/n/c]: y" in first_run  # the approval prompt, answered
    differences = run_console_examples(d.README, tmp_path)
    assert not differences, "\n\n".join(differences)


CONSOLE_PAGES = [p for p in DOC_PAGES if any(b.lang == "console" for b in d.blocks(p))]


@pytest.mark.slow
@pytest.mark.parametrize("page", CONSOLE_PAGES, ids=[p.name for p in CONSOLE_PAGES])
def test_every_terminal_example_of_the_docs_shows_what_a_terminal_shows(page, tmp_path):
    differences = run_console_examples(page, tmp_path)
    assert not differences, "\n\n".join(differences)


def test_a_console_example_that_differs_is_reported(tmp_path):
    """The comparison can fail: a changed line of output is a difference."""
    page = tmp_path / "page.md"
    page.write_text("```console\n$ mcpbind call mcp__nope\ncli-1: ok\n```\n", encoding="utf-8")
    differences = run_console_examples(page, tmp_path)
    assert len(differences) == 1
    assert "+cli-1: unsupported" in differences[0]


def test_masking_hides_timings_and_nothing_else():
    assert d.masked("Wall time: 0.0121 seconds") == d.masked("Wall time: 3.5 seconds")
    assert d.masked("explore: 1750 states, depth 13, 1.0 s") == d.masked(
        "explore: 1750 states, depth 13, 22.4 s"
    )
    assert d.masked("  calls   frozen   118   491   8     0.0") == d.masked(
        "  calls   frozen   118   491   8     2.5"
    )
    assert d.masked("1750 states") != d.masked("1751 states")
    assert d.masked("  calls   frozen   118") != d.masked("  calls   frozen   119")
    assert d.screen("\r\x1b[K[notes] progress 1/2\r\x1b[Kdone  \r\n") == "done"


# Python --------------------------------------------------------------------------------


@pytest.mark.parametrize("block", PYTHON, ids=[b.where for b in PYTHON])
def test_every_python_block_compiles(block):
    # Snippets run inside a host's async function: top-level ``await`` is allowed.
    compile(block.body, block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


@pytest.mark.slow
def test_the_readme_library_example_runs_on_trio_and_asyncio_and_prints_what_it_shows(tmp_path):
    found = d.blocks(d.README)
    pairs = [
        (code, shown)
        for code, shown in itertools.pairwise(found)
        if code.lang == "python" and shown.lang == "text"
    ]
    assert pairs, "README.md shows no program with its output"
    for code, shown in pairs:
        assert "trio.run(" in code.body
        assert "asyncio.run(" in code.body
        assert len(code.body.splitlines()) <= 25, "the README's library example stays short"
        ran = subprocess.run(
            [sys.executable, "-c", code.body],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert ran.returncode == 0, ran.stderr
        assert d.masked(ran.stdout) == d.masked(shown.body), code.where


# Commands that are shown, not run ------------------------------------------------------


def _mcpbind_commands(block: d.Block) -> list[list[str]]:
    found = []
    for line in block.body.splitlines():
        for part in re.split(r"&&|\|", line):
            words = shlex.split(part, comments=True)
            if words and pathlib.PurePath(words[0]).name == "mcpbind":
                found.append(words[1:])
    return found


SHOWN = [b for page in d.pages() for b in d.blocks(page) if b.lang == "sh"]


@pytest.mark.parametrize("block", SHOWN, ids=[b.where for b in SHOWN])
def test_every_mcpbind_command_shown_parses(block, capsys):
    for words in _mcpbind_commands(block):
        try:
            args = build_parser().parse_args(words)
        except SystemExit as stopped:
            pytest.fail(f"{block.where}: mcpbind {shlex.join(words)}: {capsys.readouterr().err}")
            raise AssertionError from stopped  # pragma: no cover - fail raises
        assert args.command is not None


def test_every_block_says_its_language():
    for page in d.pages():
        for block in d.blocks(page):
            assert block.lang in {"toml", "console", "python", "sh", "text"}, block.where


# Generated parts -----------------------------------------------------------------------


def test_the_cli_reference_is_the_help_the_parsers_print():
    text = d.CLI_REFERENCE.read_text(encoding="utf-8")
    current = d.current_between(text, d.CLI_BEGIN, d.CLI_END)
    assert current == d.cli_reference(), "run scripts/update-docs and commit docs/cli.md"


def _options(parser: argparse.ArgumentParser) -> set[str]:
    found = {o for action in parser._actions for o in action.option_strings}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options(sub)
    return found


def test_every_option_in_a_docs_table_is_an_option_of_the_cli():
    options = _options(build_parser())
    for page in (d.DOCS / "cli.md", d.DOCS / "model.md"):
        for row in re.findall(r"^\| `(--?[\w-]+)", page.read_text(encoding="utf-8"), re.M):
            assert row in options, f"{page.name}: {row} is not an option of mcpbind"


def test_spec_has_a_table_of_contents_of_its_headings():
    current = d.current_between(SPEC_TEXT, d.TOC_BEGIN, d.TOC_END)
    assert current == d.spec_toc(SPEC_TEXT), "run scripts/update-docs and commit SPEC.md"


# Figures -------------------------------------------------------------------------------


def _defined(prefix: str) -> list[int]:
    return sorted(int(n) for n in re.findall(rf"^### {prefix}-(\d+) ", SPEC_TEXT, re.M))


def test_invariant_ranges_in_the_docs_and_the_cli_are_the_specs():
    safety, liveness = _defined("INV"), _defined("LIVE")
    assert safety == list(range(1, len(safety) + 1))  # ids are never reused: no gaps
    assert liveness == list(range(1, len(liveness) + 1))
    assert safety_ids() == f"INV-1..INV-{safety[-1]}"
    assert liveness_ids() == f"LIVE-1..LIVE-{liveness[-1]}"
    for page in [*d.pages(), d.SPEC]:
        text = page.read_text(encoding="utf-8")
        for prefix, last in (("INV", safety[-1]), ("LIVE", liveness[-1])):
            for found in re.findall(rf"\b{prefix}-1\.\.{prefix}-(\d+)", text):
                assert int(found) == last, f"{page.name} says {prefix}-1..{prefix}-{found}"


def test_state_and_transition_counts_in_the_docs_are_the_pinned_ones():
    total = (sum(s for s, _ in PINNED.values()), sum(t for _, t in PINNED.values()))
    known = {total, *PINNED.values()}
    seen = 0
    for page in [*d.pages(), d.SPEC]:
        text = page.read_text(encoding="utf-8")
        pairs = re.findall(r"([\d,]{6,}) states and ([\d,]{6,}) transitions", text)
        pairs += re.findall(r'"states": (\d+), "transitions": (\d+)', text)
        for states, transitions in pairs:
            pair = (int(states.replace(",", "")), int(transitions.replace(",", "")))
            assert pair in known, f"{page.name}: {states} states, {transitions} transitions"
            seen += 1
        for part, policy, states, transitions in re.findall(
            r"^\| (\w+) \| (frozen|revalidate) \| ([\d,]+) \| ([\d,]+) \|$", text, re.M
        ):
            pair = (int(states.replace(",", "")), int(transitions.replace(",", "")))
            assert PINNED[(part, policy)] == pair, f"{page.name}: {part} {policy}"
            seen += 1
    assert seen > len(PINNED)


# The README ----------------------------------------------------------------------------


def test_the_readme_is_at_most_250_lines_and_keeps_the_ci_test_command():
    text = d.README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    between = text.split("<!-- test-command -->", 1)[1].split("<!-- /test-command -->", 1)[0]
    command = [line for line in between.strip().splitlines() if not line.startswith("```")]
    assert len(command) == 1
    assert command[0].endswith("python -m pytest -n 2")  # every test, on two workers
    assert ". .venv/bin/activate" in text


def _headings(page: pathlib.Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return {d.anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}


def test_every_relative_link_of_the_readme_reaches_a_file_and_its_heading():
    text = d.README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links
    for link in links:
        if re.match(r"[a-z]+://", link):
            continue
        path, _, fragment = link.partition("#")
        target = d.ROOT / path
        assert target.exists(), link
        if fragment:
            assert fragment in _headings(target), link
