"""The examples of README.md and docs/, read as data so that tests can execute them, and the
generated parts of the docs (the CLI reference, SPEC.md's table of contents).

Conventions a page follows (docs/development.md "Documentation"):

* a ```` ```toml ```` block is a configuration file: a test loads it with
  ``HostConfig.from_toml``. ``<!-- file: NAME -->`` on the line before it names the file
  (the page's console examples can then use it); ``<!-- toml: error -->`` marks a file
  that must be refused with ``ConfigError``; ``<!-- scenario: NAME -->`` a model stub's
  scenario, the text of ``benchmarks/peers/scenarios/NAME``, which loads as one;
* a ```` ```console ```` block is a terminal session: each ``$ `` line is a command, the
  lines up to the next one are what the terminal shows. A test runs every command in a
  pseudo-terminal against the embedded demo, in a scratch directory per page, and
  compares (timings masked); an answer typed at a ``[y/s/a/n/c]: `` prompt is read from
  the transcript and typed;
* a ```` ```python ```` block compiles; in README.md it runs, and the ```` ```text ````
  block right after it is its output;
* ```` ```sh ```` and ```` ```text ```` blocks are shown, not run (commands too slow for a
  test, synopses, output formats).
"""

from __future__ import annotations

import argparse
import io
import os
import pathlib
import re
from collections.abc import Iterator

import attrs

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SPEC = ROOT / "SPEC.md"
DOCS = ROOT / "docs"
CLI_REFERENCE = DOCS / "cli.md"

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
MARKER = re.compile(r"<!--\s*([\w-]+):\s*(.*?)\s*-->\s*\n$")


@attrs.frozen
class Block:
    page: pathlib.Path
    line: int
    lang: str
    body: str
    marker: tuple[str, str] | None = None  # ("file", "mcpbind.toml"), ("toml", "error")

    @property
    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page
        return f"{page}:{self.line}"


def pages() -> list[pathlib.Path]:
    """README.md and every page of the site, SPEC.md's copy excluded (it is SPEC.md)."""
    found = sorted(p for p in DOCS.rglob("*.md") if not p.is_symlink())
    return [README, *found]


def blocks(page: pathlib.Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()]
        last_line = before[before.rfind("\n", 0, len(before) - 1) + 1 :]
        marker = MARKER.search(last_line)
        found.append(
            Block(
                page=page,
                line=before.count("\n") + 1,
                lang=match.group(1),
                body=match.group(2),
                marker=(marker.group(1), marker.group(2)) if marker else None,
            )
        )
    return found


def all_blocks(lang: str) -> list[Block]:
    return [b for page in pages() for b in blocks(page) if b.lang == lang]


@attrs.frozen
class Command:
    line: str  # what follows "$ "
    expected: str  # what the terminal shows, the command's line excluded


def commands(block: Block) -> list[Command]:
    found: list[Command] = []
    current: str | None = None
    shown: list[str] = []
    for line in block.body.splitlines():
        if line.startswith("$ "):
            if current is not None:
                found.append(Command(current, "\n".join(shown)))
            current, shown = line[2:], []
        elif current is None:
            raise ValueError(f"{block.where}: a console block starts with a '$ ' line")
        else:
            shown.append(line)
    if current is not None:
        found.append(Command(current, "\n".join(shown)))
    return found


PROMPT = re.compile(r"\[[a-z/]+\]: ")
"""An approval prompt (``choice [y/s/a/n/c]: ``); what follows it in a transcript is the
answer typed."""

TIMINGS = (
    (re.compile(r"Wall time: [0-9.]+ seconds"), "Wall time: <t> seconds"),
    (re.compile(r"\b[0-9]+(\.[0-9]+)? s\b"), "<t> s"),
    (re.compile(r'"seconds": [0-9.]+'), '"seconds": <t>'),
    # a table's last column: seconds (of a part a mutant's violation cut short too)
    (re.compile(r"(?m)(?<=\s)[0-9]+\.[0-9]+(?=(  \(cut short\))?$)"), "<t>"),
)


def answers(expected: str) -> list[str]:
    return [
        PROMPT.split(line, maxsplit=1)[1] for line in expected.splitlines() if PROMPT.search(line)
    ]


CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")


def screen(raw: str) -> str:
    """What a terminal shows of ``raw``: colours dropped, a line rewritten after ``\\r``
    shows its last version, a cursor moved up (``ESC[nA``) and a line erased (``ESC[2K``,
    ``ESC[K``) as a terminal does them (how a transient progress bar disappears), trailing
    blanks dropped."""
    lines: list[str] = [""]
    row = col = 0
    i = 0
    text = raw.replace("\r\n", "\n")
    while i < len(text):
        m = CSI.match(text, i)
        if m:
            arg, op = m.groups()
            if op == "A":
                row = max(0, row - int(arg or "1"))
            elif op == "K":
                lines[row] = lines[row][:col] if arg in {"", "0"} else ""
            i = m.end()
            continue
        ch = text[i]
        i += 1
        if ch == "\n":
            row += 1
            col = 0
            if row == len(lines):
                lines.append("")
        elif ch == "\r":
            col = 0
        elif ch == "\x1b":
            continue
        else:
            line = lines[row]
            lines[row] = line[:col] + ch + line[col + 1 :]
            col += 1
    kept = [line.rstrip() for line in lines]
    return "\n".join(kept).strip("\n")


STARTING = re.compile(r"^mcpbind: still starting: ")
"""The notice ``catalog`` and ``call`` print on a terminal while servers start (after 1 s,
then every 5 s): whether it shows depends on how fast the servers start, as timings do."""


def masked(text: str) -> str:
    lines = (line.rstrip() for line in text.splitlines() if not STARTING.match(line))
    text = "\n".join(lines).strip("\n")
    for pattern, stand_in in TIMINGS:
        text = pattern.sub(stand_in, text)
    return text


# The generated parts -------------------------------------------------------------------

CLI_BEGIN = "<!-- cli-reference: generated by scripts/update-docs from the argument parsers -->"
CLI_END = "<!-- /cli-reference -->"
TOC_BEGIN = "<!-- toc: generated by scripts/update-docs -->"
TOC_END = "<!-- /toc -->"


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:  # argparse offers no public walk of its subparsers
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                for inner, deeper in _subcommands(sub):
                    yield f"{name} {inner}", deeper


def cli_reference() -> str:
    """``mcpbind --help`` and each command's ``--help``, as the parsers print them at 100
    columns."""
    from mcpbind.cli.main import build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        parser = build_parser()
        parts = ["```text", "$ mcpbind --help", _help(parser), "```"]
        for name, sub in _subcommands(parser):
            parts += ["", f"### `mcpbind {name}`", "", "```text", _help(sub), "```"]
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    return "\n".join([CLI_BEGIN, *parts, CLI_END])


def _help(parser: argparse.ArgumentParser) -> str:
    out = io.StringIO()
    parser.print_help(out)
    return out.getvalue().rstrip()


def anchor(heading: str) -> str:
    """The anchor GitHub and MkDocs give a heading (lower case, punctuation dropped)."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def spec_toc(spec: str) -> str:
    lines = [TOC_BEGIN, ""]
    outside_code = FENCE.sub("", spec)
    for match in re.finditer(r"^(##|###) (.+)$", outside_code, re.MULTILINE):
        level, heading = match.groups()
        if heading == "Contents":
            continue
        indent = "" if level == "##" else "  "
        lines.append(f"{indent}- [{heading}](#{anchor(heading)})")
    return "\n".join([*lines, "", TOC_END])


def replace_between(text: str, begin: str, end: str, new: str) -> str:
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + new + tail


def current_between(text: str, begin: str, end: str) -> str:
    _, rest = text.split(begin, 1)
    inner, _ = rest.split(end, 1)
    return begin + inner + end
