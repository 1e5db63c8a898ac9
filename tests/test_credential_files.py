"""The credentials file (SPEC §11.15): what a file that cannot be read, is not JSON or
not an object, or cannot be written becomes (one ``CredentialsError`` whose exact text
says what to do, the file left as it was), and how records come and go. Real files in a
temporary directory; the memory store beside it."""

from __future__ import annotations

import json
import pathlib
import stat
import sys
from collections.abc import Callable

import pytest

from mcpbind.impl import CredentialsError, FileTokenStore, MemoryTokenStore
from mcpbind.impl.config.credentials import (
    AutoTokenStore,
    Credentials,
    KeyringTokenStore,
    open_store,
)

RECORD = Credentials("notes", "http://127.0.0.1:1/mcp", tokens={"access_token": "at"})

Setup = Callable[[pathlib.Path], None]


def a_directory(path: pathlib.Path) -> None:
    path.mkdir()


def not_json(path: pathlib.Path) -> None:
    path.write_text('{\n  "a": 1,\n  oops\n}\n')


def a_list(path: pathlib.Path) -> None:
    path.write_text("[1, 2]")


READS: list[tuple[str, Setup, str]] = [
    ("unreadable", a_directory, "cannot read the credentials file {path}: Is a directory"),
    (
        "not JSON",
        not_json,
        "the credentials file {path} is not valid JSON (line 3); it was left as it is: fix "
        "or remove it, then log in again",
    ),
    (
        "not an object",
        a_list,
        "the credentials file {path} is not a JSON object; it was left as it is",
    ),
]


@pytest.mark.parametrize(("setup", "text"), [r[1:] for r in READS], ids=[r[0] for r in READS])
async def test_a_credentials_file_that_cannot_be_read_is_one_error_saying_what_to_do(
    tmp_path: pathlib.Path, setup: Setup, text: str
) -> None:
    path = tmp_path / "credentials.json"
    setup(path)
    before = path.read_bytes() if path.is_file() else None
    store = FileTokenStore(path)
    for attempt in (store.load("k"), store.save("k", RECORD), store.delete("k")):
        with pytest.raises(CredentialsError) as raised:
            await attempt
        assert str(raised.value) == text.format(path=path)
    assert (path.read_bytes() if path.is_file() else None) == before  # left as it was


async def test_a_credentials_file_that_cannot_be_written_is_one_error_naming_it() -> None:
    """A folder no file can be made in, whoever runs the test (root included)."""
    path = pathlib.Path("/proc/self/credentials.json")
    with pytest.raises(CredentialsError) as raised:
        await FileTokenStore(path).save("k", RECORD)
    said = str(raised.value)
    assert said.startswith(f"cannot write the credentials file {path}: ")
    assert said.count(":") == 1  # the system's reason, one line, no traceback


async def test_a_record_that_fails_to_write_leaves_the_file_as_it_was_and_no_temporary(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "credentials.json"
    store = FileTokenStore(path)
    await store.save("k", RECORD)
    before = path.read_bytes()
    odd = Credentials("notes", "http://127.0.0.1:1/mcp", tokens={"scope": {"a"}})  # a set
    with pytest.raises(TypeError):
        await store.save("k", odd)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["credentials.json"]


def on_disk(path: pathlib.Path) -> tuple[list[str], int] | None:
    """The keys of the records the file holds and its mode; None while it is blank."""
    text = path.read_text()
    if not text.strip():
        return None
    return sorted(json.loads(text)), stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(
    ("open_at", "saved", "deleted"),
    [
        pytest.param(FileTokenStore, (["k"], 0o600), ([], 0o600), id="file"),
        pytest.param(lambda path: MemoryTokenStore(), None, None, id="memory"),
    ],
)
async def test_a_store_starts_empty_and_holds_a_record_until_it_is_deleted_once(
    tmp_path: pathlib.Path,
    open_at: Callable[[pathlib.Path], FileTokenStore | MemoryTokenStore],
    saved: tuple[list[str], int] | None,
    deleted: tuple[list[str], int] | None,
) -> None:
    """A blank credentials file holds nothing; the memory store never writes it."""
    path = tmp_path / "credentials.json"
    path.write_text("  \n")
    store = open_at(path)
    assert await store.load("k") is None
    assert await store.delete("k") is False  # nothing written for nothing removed
    assert path.read_text() == "  \n"
    await store.save("k", RECORD)
    assert on_disk(path) == saved
    assert await store.load("k") == RECORD
    assert (await store.delete("k"), await store.delete("k")) == (True, False)
    assert on_disk(path) == deleted
    assert await store.load("k") is None


def test_each_store_choice_opens_its_store_and_another_is_an_error(tmp_path: pathlib.Path):
    path = tmp_path / "credentials.json"
    assert isinstance(open_store("keyring"), KeyringTokenStore)
    file = open_store("file", path)
    assert isinstance(file, FileTokenStore)
    assert file.path == path
    assert isinstance(open_store("auto", path), AutoTokenStore)
    with pytest.raises(CredentialsError) as raised:
        open_store("vault")  # type: ignore[arg-type]
    assert str(raised.value) == (
        "mcp_oauth_credentials_store must be one of auto, keyring, file, got 'vault'"
    )


async def test_auto_without_a_usable_keyring_writes_the_file_it_was_given(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "keyring", None)  # not installed
    monkeypatch.setenv("MCPBIND_HOME", str(tmp_path / "default"))  # never the user's own
    path = tmp_path / "credentials.json"
    store = open_store("auto", path)
    assert store.name == "file"
    await store.save("k", RECORD)
    assert list(json.loads(path.read_text())) == ["k"]  # that file, not the default one
    assert await store.load("k") == RECORD
    assert await store.delete("k") is True


async def test_the_credentials_file_is_written_sorted_and_indented_whatever_the_order_saved(
    tmp_path: pathlib.Path,
) -> None:
    """The same records make the same file (a diff of it shows what changed)."""
    path = tmp_path / "credentials.json"
    store = FileTokenStore(path)
    await store.save("b", RECORD)
    await store.save("a", RECORD)
    text = path.read_text()
    assert text.startswith('{\n  "a": {\n    "client": null,\n')
    assert text.index('"a"') < text.index('"b"')
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True)
