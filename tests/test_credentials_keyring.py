"""The OS keyring as the credentials store (SPEC §11.15, ``mcp_oauth_credentials_store``),
through a stand-in ``keyring`` package: the keyring extra is not installed where the tests
run, so without one the store's reading, writing and refusals ran in no test (issue 33).

The stand-in has the package's surface mcpbind uses: ``get_keyring``, ``get_password``,
``set_password``, ``delete_password`` and ``keyring.backends.fail.Keyring``.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from mcpbind.impl.config.credentials import (
    KEYRING_SERVICE,
    AutoTokenStore,
    Credentials,
    CredentialsError,
    FileTokenStore,
    KeyringTokenStore,
)


class _Failing:
    """keyring.backends.fail.Keyring: the backend of a machine without a keyring."""

    priority = 0


class _Backend:
    priority = 1


class _Package(types.ModuleType):
    def __init__(self, backend: Any) -> None:
        super().__init__("keyring")
        self.backend = backend
        self.entries: dict[tuple[str, str], str] = {}
        self.refuse = False

    def get_keyring(self) -> Any:
        if isinstance(self.backend, Exception):
            raise self.backend
        return self.backend

    def _refusing(self) -> None:
        if self.refuse:
            raise RuntimeError("locked")

    def get_password(self, service: str, key: str) -> str | None:
        self._refusing()
        return self.entries.get((service, key))

    def set_password(self, service: str, key: str, text: str) -> None:
        self._refusing()
        self.entries[(service, key)] = text

    def delete_password(self, service: str, key: str) -> None:
        self._refusing()
        del self.entries[(service, key)]


def installed(monkeypatch: pytest.MonkeyPatch, backend: Any) -> _Package:
    package = _Package(backend)
    backends = types.ModuleType("keyring.backends")
    fail = types.ModuleType("keyring.backends.fail")
    fail.Keyring = _Failing  # type: ignore[attr-defined]  # a module's attribute, set here
    backends.fail = fail  # type: ignore[attr-defined]  # as above
    monkeypatch.setitem(sys.modules, "keyring", package)
    monkeypatch.setitem(sys.modules, "keyring.backends", backends)
    monkeypatch.setitem(sys.modules, "keyring.backends.fail", fail)
    return package


class _NoPriority:
    pass


@pytest.mark.parametrize(
    ("backend", "usable"),
    [
        (_Backend(), True),
        (_NoPriority(), True),
        (_Failing(), False),
        (type("Zero", (), {"priority": 0})(), False),
        (type("Negative", (), {"priority": -1})(), False),
        (RuntimeError("no D-Bus"), False),
    ],
)
def test_a_keyring_is_used_only_with_a_working_backend(monkeypatch, backend, usable, tmp_path):
    installed(monkeypatch, backend)
    assert KeyringTokenStore.usable() is usable
    assert KeyringTokenStore().usable() is usable  # asked of a store as well as its class
    auto = AutoTokenStore(FileTokenStore(tmp_path / "c.json"))
    assert auto.name == ("keyring" if usable else "file")


def test_without_the_keyring_package_no_keyring_is_usable(monkeypatch):
    monkeypatch.setitem(sys.modules, "keyring", None)
    assert KeyringTokenStore.usable() is False


CREDENTIALS = Credentials(
    server="crm", url="https://crm.example/mcp", tokens={"access_token": "at"}, expires_at=9.5
)


async def test_credentials_saved_in_the_keyring_are_loaded_and_deleted(monkeypatch):
    package = installed(monkeypatch, _Backend())
    store = KeyringTokenStore()
    assert await store.load("crm|k") is None
    assert await store.delete("crm|k") is False
    await store.save("crm|k", CREDENTIALS)
    assert list(package.entries) == [(KEYRING_SERVICE, "crm|k")]
    assert await store.load("crm|k") == CREDENTIALS
    assert await store.delete("crm|k") is True
    assert package.entries == {}
    assert await store.load("crm|k") is None


@pytest.mark.parametrize(
    ("text", "loaded"),
    [("", None), ("[1, 2]", None), ('{"server": "crm"}', Credentials(server="crm", url=""))],
)
async def test_a_keyring_entry_is_read_as_credentials_only_when_it_is_an_object(
    monkeypatch, text, loaded
):
    package = installed(monkeypatch, _Backend())
    package.entries[(KEYRING_SERVICE, "crm|k")] = text
    assert await KeyringTokenStore().load("crm|k") == loaded


async def test_a_keyring_entry_that_is_not_json_says_to_log_in_again(monkeypatch):
    package = installed(monkeypatch, _Backend())
    package.entries[(KEYRING_SERVICE, "crm|k")] = "{not json"
    with pytest.raises(CredentialsError) as caught:
        await KeyringTokenStore().load("crm|k")
    assert str(caught.value) == (
        "the keyring entry for 'crm' is not valid JSON; run mcpbind logout and log in again"
    )


@pytest.mark.parametrize(("method", "verb"), [("load", "get"), ("save", "set")])
async def test_a_keyring_that_refuses_is_a_credentials_error_naming_what_it_refused(
    monkeypatch, method, verb
):
    package = installed(monkeypatch, _Backend())
    package.refuse = True
    store = KeyringTokenStore()
    arguments: tuple[Any, ...] = ("crm|k",) if method == "load" else ("crm|k", CREDENTIALS)
    with pytest.raises(CredentialsError) as caught:
        await getattr(store, method)(*arguments)
    assert str(caught.value) == f"the keyring refused to {verb} credentials: RuntimeError"
