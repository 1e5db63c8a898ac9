"""The SDK's private names are used in ``impl/wire/sdk.py`` and nowhere else, and each use
there names the test that pins it (SPEC §11.16).

``scripts/sdk-canary`` runs those pinning tests against the newest ``mcp`` 2.x. A test that
needs the SDK's private state goes through a helper in ``impl/wire/sdk.py`` too.
"""

from __future__ import annotations

import ast
import json.encoder
import re
import shutil
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpbind.impl.calls import encoding
from mcpbind.impl.wire.sdk import PRIVATE_NAMES, c_json_encoder

ROOT = Path(__file__).resolve().parent.parent
SDK = Path("impl", "wire", "sdk.py")
EXEMPT = {SDK, Path("tests", "test_sdk_private.py")}
FOLDERS = ("api", "impl", "model", "properties", "cli", "demo", "benchmarks", "scripts", "tests")
REFLECTION = {"getattr", "setattr", "hasattr", "delattr"}
PINNED_BY = re.compile(r"``(test_\w+)``")


def private_uses(source: str, names: Collection[str]) -> list[tuple[int, str]]:
    """The lines where ``source`` uses one of ``names``: as a name, an attribute, a
    definition (an override counts), a parameter or keyword, an import, or a string given
    to ``getattr``/``setattr``/``hasattr``/``delattr`` (``monkeypatch.setattr`` too; a
    dotted string by its last part). Comments and other strings do not count."""
    tree = ast.parse(source)
    return sorted({(node.lineno, w) for node in ast.walk(tree) for w in words(node) if w in names})


def words(node: ast.AST) -> Iterator[str]:
    match node:
        case ast.Name(id=word) | ast.Attribute(attr=word) | ast.arg(arg=word):
            yield word
        case ast.FunctionDef(name=word) | ast.AsyncFunctionDef(name=word) | ast.ClassDef(name=word):
            yield word
        case ast.keyword(arg=str() as word):
            yield word
        case ast.alias(name=name, asname=asname):
            yield from name.split(".")
            if asname is not None:
                yield asname
        case ast.ImportFrom(module=str() as module):
            yield from module.split(".")
        case ast.Call(func=ast.Name(id=call) | ast.Attribute(attr=call), args=args) if (
            call in REFLECTION
        ):
            for arg in args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield arg.value.rsplit(".", 1)[-1]


def project_files(root: Path) -> Iterator[Path]:
    """Every Python file of the project under ``root`` (relative), scripts without a
    ``.py`` suffix included when they start with a Python shebang."""
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            if path.suffix == ".py" or (path.suffix == "" and is_python_script(path)):
                yield path.relative_to(root)


def is_python_script(path: Path) -> bool:
    with path.open("rb") as file:
        first = file.readline()
    return first.startswith(b"#!") and b"python" in first


def offenders(root: Path) -> list[str]:
    """``path:line: name`` for each use of a private SDK name outside ``impl/wire/sdk.py``."""
    found = []
    for path in project_files(root):
        if path in EXEMPT:
            continue
        for line, name in private_uses((root / path).read_text(encoding="utf-8"), PRIVATE_NAMES):
            found.append(f"{path}:{line}: {name}")
    return found


def test_no_file_but_wire_sdk_uses_a_private_name_of_the_sdk():
    scanned = list(project_files(ROOT))
    for folder in FOLDERS:
        assert any(path.parts[0] == folder for path in scanned), f"nothing scanned in {folder}/"
    assert offenders(ROOT) == [], "use impl/wire/sdk.py (or add a helper there)"


def test_every_private_name_is_used_in_wire_sdk():
    source = (ROOT / SDK).read_text(encoding="utf-8")
    assert {name for _, name in private_uses(source, PRIVATE_NAMES)} == set(PRIVATE_NAMES)


def test_every_underscore_name_wire_sdk_reaches_into_is_listed_or_its_own():
    """``self._x = ...`` in sdk.py is mcpbind's own; any other ``._x`` is the SDK's."""
    tree = ast.parse((ROOT / SDK).read_text(encoding="utf-8"))
    own = {
        target.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    }
    reached = {
        word
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute | ast.Call | ast.FunctionDef | ast.AsyncFunctionDef)
        for word in words(node)
        if word.startswith("_") and not word.startswith("__")
    }
    assert reached - own - set(PRIVATE_NAMES) == set()


def test_each_function_and_class_of_wire_sdk_names_a_test_that_pins_it():
    source = (ROOT / SDK).read_text(encoding="utf-8")
    defined = {
        match.group(1)
        for path in (ROOT / "tests").rglob("*.py")
        for match in re.finditer(r"def (test_\w+)\(", path.read_text(encoding="utf-8"))
    }
    uses = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    assert uses
    for node in uses:
        named = set(PINNED_BY.findall(ast.get_docstring(node) or ""))
        assert named, f"{node.name} names no pinning test (``test_...`` in its docstring)"
        assert named <= defined, f"{node.name}: no such test {sorted(named - defined)}"
    assert set(PINNED_BY.findall(source)) <= defined  # what scripts/sdk-canary runs


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("session._stamp(data, options)", [(1, "_stamp")]),
        ("s._dispatcher.send_raw_request(m)", [(1, "_dispatcher"), (1, "send_raw_request")]),
        ('maps = getattr(session, "_x_mcp_header_maps", None)', [(1, "_x_mcp_header_maps")]),
        ('monkeypatch.setattr(client, "_build_session", fake)', [(1, "_build_session")]),
        ('monkeypatch.setattr("mcp.Client._build_session", f)', [(1, "_build_session")]),
        ("class P(Base):\n    async def _initialize(self): ...", [(2, "_initialize")]),
        ("from mcp.client import send_raw_request as send", [(1, "send_raw_request")]),
        ("def f(_build_capabilities): ...", [(1, "_build_capabilities")]),
        ("f(_stamp=1)", [(1, "_stamp")]),
        ('"_stamp" in text  # _stamp, a comment', []),
        ("self._stamped = session._dispatchers", []),
    ],
)
def test_the_scan_finds_each_kind_of_use_and_nothing_else(code, found):
    assert private_uses(code, PRIVATE_NAMES) == found


def test_a_use_planted_outside_wire_sdk_is_reported(tmp_path):
    for folder in FOLDERS:
        (tmp_path / folder).mkdir()
    (tmp_path / SDK).parent.mkdir(parents=True)
    shutil.copy(ROOT / SDK, tmp_path / SDK)
    planted = tmp_path / "impl" / "calls" / "tasks.py"
    planted.parent.mkdir()
    planted.write_text("def send(session):\n    return session._dispatcher\n", encoding="utf-8")
    script = tmp_path / "scripts" / "probe"
    script.write_text('#!/usr/bin/env python3\ngetattr(c, "_stamp")\n', encoding="utf-8")
    assert offenders(tmp_path) == [
        "impl/calls/tasks.py:2: _dispatcher",
        "scripts/probe:2: _stamp",
    ]


SAMPLE = {"text": "naïve ✓", "n": [1, 2.5, True, None], "nested": {"a": {"b": []}}}


def test_the_c_json_encoder_is_still_in_the_standard_library():
    """``c_json_encoder`` relies on json's private ``c_make_encoder`` (this Python's C
    accelerator): if it disappears, this fails, and calls fall back to ``JSONEncoder``."""
    assert callable(getattr(json.encoder, "c_make_encoder", None))
    encoder = c_json_encoder(str)
    assert encoder is not None
    expected = json.dumps(SAMPLE, separators=(",", ":"), ensure_ascii=False)
    assert "".join(encoder(SAMPLE, 0)) == expected
    assert encoding.compact_json(SAMPLE) == expected


def _outcome(encode: Any, value: Any) -> str:
    try:
        return encode(value)
    except (TypeError, ValueError) as error:
        return f"refused: {type(error).__name__}"


@pytest.mark.parametrize(
    "value",
    [
        {"b": 1, "a": 2},  # the order kept, not sorted
        {1: "x", 2.5: "y", False: "z", None: "w"},  # keys JSON turns into text
        {(1, 2): "a tuple key"},  # refused, not skipped
        [float("nan"), float("inf")],  # allowed, as json.dumps does
        {"set": {1}},  # refused by ``default``
    ],
    ids=["order", "scalar-keys", "tuple-key", "nan", "unencodable"],
)
def test_the_c_encoder_gives_what_json_dumps_gives_or_refuses_what_it_refuses(value):
    """Every flag of ``c_json_encoder``'s ``c_make_encoder`` call (sort_keys, skipkeys,
    allow_nan) as ``json.dumps`` with the same separators has it: the same text, or the
    same refusal."""

    def dumps(v: Any) -> str:
        return json.dumps(v, separators=(",", ":"), ensure_ascii=False)

    assert _outcome(encoding.compact_json, value) == _outcome(dumps, value)


def test_without_the_c_json_encoder_results_are_encoded_to_the_same_text(monkeypatch):
    """The fallback: a Python without the accelerator has ``c_make_encoder = None``."""
    expected = encoding.compact_json(SAMPLE)
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    assert c_json_encoder(str) is None
    monkeypatch.setattr(encoding, "_COMPACT_PARTS", c_json_encoder(str))
    assert encoding.compact_json(SAMPLE) == expected
