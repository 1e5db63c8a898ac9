"""Where OAuth credentials live between runs (SPEC §11.15): a keyring or a file.

One record per server, keyed by its name and URL (``store_key``): the tokens with their
absolute expiry, the client registration, the authorization server's metadata (so
that a token can be refreshed after a restart without discovering it again) and the
DPoP key the tokens are bound to. The
choice follows Codex's ``mcp_oauth_credentials_store``: ``keyring`` (the OS keyring
through the ``keyring`` package), ``file`` (``credentials.json`` under ``MCPBIND_HOME``,
default ``~/.mcpbind``, readable by the user alone), ``auto`` (the keyring when one is
usable, else the file).

A store never loses a record it cannot read: a credentials file that is not valid JSON
raises :class:`CredentialsError` naming it, and is left as it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import pathlib
import tempfile
from collections.abc import Mapping
from typing import Any, Literal, Protocol

import anyio
import attrs

from ..errors import LocalError

__all__ = [
    "STORE_CHOICES",
    "AutoTokenStore",
    "Credentials",
    "CredentialsError",
    "FileTokenStore",
    "KeyringTokenStore",
    "MemoryTokenStore",
    "StoreChoice",
    "TokenStore",
    "default_credentials_path",
    "open_store",
    "store_key",
]

logger = logging.getLogger("mcpbind.oauth")

StoreChoice = Literal["auto", "keyring", "file"]
STORE_CHOICES: tuple[StoreChoice, ...] = ("auto", "keyring", "file")
KEYRING_SERVICE = "mcpbind MCP credentials"


class CredentialsError(LocalError):
    """The credentials store cannot be read or written; nothing in it was changed."""


@attrs.frozen
class Credentials:
    """What is kept for one server. Never shown: the repr names the server only."""

    server: str
    url: str
    tokens: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    """The token response (``access_token``, ``refresh_token``, ``scope``, ...)."""
    expires_at: float | None = None
    """When the access token expires (seconds since the epoch); None: not said."""
    client: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    """The client registration (``client_id``, and a secret for a confidential client)."""
    metadata: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    """The authorization server's metadata, for a refresh after a restart."""
    dpop_key: Mapping[str, Any] | None = attrs.field(default=None, repr=False)
    """The DPoP key pair the tokens are bound to (RFC 9449): ``{"alg", "jwk"}``, the JWK
    with its private part. Kept with the tokens, so that a stored or refreshed token is
    presented with the key it was issued for."""

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "url": self.url,
            "tokens": None if self.tokens is None else dict(self.tokens),
            "expires_at": self.expires_at,
            "client": None if self.client is None else dict(self.client),
            "metadata": None if self.metadata is None else dict(self.metadata),
            "dpop_key": None if self.dpop_key is None else dict(self.dpop_key),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Credentials:
        expires = data.get("expires_at")
        return cls(
            server=str(data.get("server", "")),
            url=str(data.get("url", "")),
            tokens=_mapping(data.get("tokens")),
            expires_at=float(expires) if isinstance(expires, int | float) else None,
            client=_mapping(data.get("client")),
            metadata=_mapping(data.get("metadata")),
            dpop_key=_mapping(data.get("dpop_key")),
        )


def _mapping(value: Any) -> Mapping[str, Any] | None:
    return dict(value) if isinstance(value, Mapping) else None


def store_key(server: str, url: str) -> str:
    """``name|<16 hex of sha256(url)>``: a server renamed or moved is a new record."""
    return f"{server}|{hashlib.sha256(url.encode()).hexdigest()[:16]}"


class TokenStore(Protocol):
    """Where credentials are kept; every method may block briefly (a file, a keyring)."""

    @property
    def name(self) -> str:
        """``memory``, ``file``, ``keyring``: which store it is."""

    async def load(self, key: str) -> Credentials | None: ...

    async def save(self, key: str, credentials: Credentials) -> None: ...

    async def delete(self, key: str) -> bool:
        """Forget ``key``; False when nothing was stored under it."""


class MemoryTokenStore:
    """Credentials for this process only (tests, the conformance suite's client)."""

    name = "memory"

    def __init__(self) -> None:
        self._records: dict[str, Credentials] = {}

    async def load(self, key: str) -> Credentials | None:
        return self._records.get(key)

    async def save(self, key: str, credentials: Credentials) -> None:
        self._records[key] = credentials

    async def delete(self, key: str) -> bool:
        return self._records.pop(key, None) is not None


def default_credentials_path() -> pathlib.Path:
    """``$MCPBIND_HOME/credentials.json``; ``MCPBIND_HOME`` defaults to ``~/.mcpbind``."""
    home = os.environ.get("MCPBIND_HOME") or os.path.join(os.path.expanduser("~"), ".mcpbind")
    return pathlib.Path(home) / "credentials.json"


class FileTokenStore:
    """One JSON object ``{key: record}`` in a file only its owner may read (mode 0600),
    replaced whole on every write (a reader never sees half a file)."""

    name = "file"

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = pathlib.Path(path) if path is not None else default_credentials_path()
        self._lock = anyio.Lock()

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as error:
            raise CredentialsError(
                f"cannot read the credentials file {self.path}: {error.strerror}"
            ) from error
        try:
            data = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as error:
            raise CredentialsError(
                f"the credentials file {self.path} is not valid JSON (line {error.lineno}); "
                "it was left as it is: fix or remove it, then log in again"
            ) from None
        if not isinstance(data, dict):
            raise CredentialsError(
                f"the credentials file {self.path} is not a JSON object; it was left as it is"
            )
        return data

    def _write(self, data: Mapping[str, Any]) -> None:
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temporary = tempfile.mkstemp(prefix=".credentials.", dir=directory)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    os.fchmod(out.fileno(), 0o600)
                    json.dump(data, out, indent=2, sort_keys=True)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError as error:
            raise CredentialsError(
                f"cannot write the credentials file {self.path}: {error.strerror}"
            ) from error

    async def load(self, key: str) -> Credentials | None:
        async with self._lock:
            data = await anyio.to_thread.run_sync(self._read)
        record = data.get(key)
        return Credentials.from_json(record) if isinstance(record, Mapping) else None

    async def save(self, key: str, credentials: Credentials) -> None:
        def update() -> None:
            data = self._read()
            data[key] = credentials.to_json()
            self._write(data)

        async with self._lock:
            await anyio.to_thread.run_sync(update)

    async def delete(self, key: str) -> bool:
        def remove() -> bool:
            data = self._read()
            if key not in data:
                return False
            del data[key]
            self._write(data)
            return True

        async with self._lock:
            return await anyio.to_thread.run_sync(remove)


class KeyringTokenStore:
    """The OS keyring through the ``keyring`` package (``pip install 'mcpbind[keyring]'``):
    one entry per server under the service ``mcpbind MCP credentials``."""

    name = "keyring"

    def __init__(self, service: str = KEYRING_SERVICE) -> None:
        self.service = service

    @staticmethod
    def usable() -> bool:
        """A keyring package with a working backend (not the fail-always one of a
        headless machine)."""
        try:
            import keyring  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
            from keyring.backends import fail  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415
        except ImportError:
            return False
        try:
            backend = keyring.get_keyring()
        except Exception:
            return False
        return not isinstance(backend, fail.Keyring) and getattr(backend, "priority", 1) > 0

    def _call(self, method: str, *args: str) -> Any:
        try:
            import keyring  # noqa: PLC0415
        except ImportError as error:
            raise CredentialsError(
                "mcp_oauth_credentials_store = 'keyring' needs the keyring package: "
                "pip install 'mcpbind[keyring]'"
            ) from error
        try:
            return getattr(keyring, method)(self.service, *args)
        except Exception as error:
            raise CredentialsError(
                f"the keyring refused to {method.split('_', maxsplit=1)[0]} credentials: "
                f"{type(error).__name__}"
            ) from None

    async def load(self, key: str) -> Credentials | None:
        text = await anyio.to_thread.run_sync(self._call, "get_password", key)
        if not text:
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            raise CredentialsError(
                f"the keyring entry for {key.split('|', maxsplit=1)[0]!r} is not valid JSON; "
                "run mcpbind logout and log in again"
            ) from None
        return Credentials.from_json(data) if isinstance(data, Mapping) else None

    async def save(self, key: str, credentials: Credentials) -> None:
        text = json.dumps(credentials.to_json(), sort_keys=True)
        await anyio.to_thread.run_sync(self._call, "set_password", key, text)

    async def delete(self, key: str) -> bool:
        if await self.load(key) is None:
            return False
        await anyio.to_thread.run_sync(self._call, "delete_password", key)
        return True


class AutoTokenStore:
    """The keyring when one is usable, else the file (Codex's ``auto``), chosen when
    credentials are first needed: a host whose servers never ask pays nothing."""

    def __init__(self, file: FileTokenStore | None = None) -> None:
        self._file = file
        self._chosen: TokenStore | None = None

    @property
    def chosen(self) -> TokenStore:
        if self._chosen is None:
            usable = KeyringTokenStore.usable()
            self._chosen = KeyringTokenStore() if usable else (self._file or FileTokenStore())
        return self._chosen

    @property
    def name(self) -> str:
        return self.chosen.name

    async def load(self, key: str) -> Credentials | None:
        return await self.chosen.load(key)

    async def save(self, key: str, credentials: Credentials) -> None:
        await self.chosen.save(key, credentials)

    async def delete(self, key: str) -> bool:
        return await self.chosen.delete(key)


def open_store(choice: StoreChoice, path: str | os.PathLike[str] | None = None) -> TokenStore:
    """The store ``mcp_oauth_credentials_store`` names; ``path`` for the file."""
    if choice == "keyring":
        return KeyringTokenStore()
    if choice == "file":
        return FileTokenStore(path)
    if choice == "auto":
        return AutoTokenStore(FileTokenStore(path))
    raise CredentialsError(
        f"mcp_oauth_credentials_store must be one of {', '.join(STORE_CHOICES)}, got {choice!r}"
    )
