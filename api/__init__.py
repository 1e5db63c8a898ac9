"""mcpbind: a consistent tool layer for agent hosts over MCP servers (README).

The names a host needs, from :mod:`mcpbind.impl`::

    from mcpbind import Host, HostConfig, ServerConfig

    async with Host.open(HostConfig(servers={"fs": ServerConfig(target=...)})) as host:
        result = await host.call(host.sample(), "call-1", "mcp__fs__read", {"path": "x"})

and every error under :class:`McpBindError`, and ``__version__`` (the installed
distribution's, or the one in ``pyproject.toml`` for a source tree that is not installed).

They are loaded on first use (PEP 562): Python runs this file before any subpackage, so
``import mcpbind.model`` must stay free of the SDK and of trio (SPEC §11.1), and
``import mcpbind`` alone loads neither. ``mcpbind.impl`` remains the full runtime API.
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing.TYPE_CHECKING (mypy reads it so) without importing typing
if TYPE_CHECKING:
    from .impl import (
        ApprovalNotSaved,
        AuthorizationError,
        AuthorizationFailed,
        CatalogRejected,
        ConfigError,
        ConnectionLost,
        ContributorRejected,
        CredentialsError,
        CredentialsRequired,
        DuplicateCallId,
        Host,
        HostClosed,
        HostConfig,
        HttpStatusError,
        IllegalTransition,
        LocalError,
        LoginRequired,
        McpBindError,
        RemoteError,
        RequestFailed,
        ScopeRequired,
        ServerConfig,
        ServerError,
        ServerStartupError,
        ToolResult,
        UnknownServer,
    )

    __version__: str

__all__ = [
    "ApprovalNotSaved",
    "AuthorizationError",
    "AuthorizationFailed",
    "CatalogRejected",
    "ConfigError",
    "ConnectionLost",
    "ContributorRejected",
    "CredentialsError",
    "CredentialsRequired",
    "DuplicateCallId",
    "Host",
    "HostClosed",
    "HostConfig",
    "HttpStatusError",
    "IllegalTransition",
    "LocalError",
    "LoginRequired",
    "McpBindError",
    "RemoteError",
    "RequestFailed",
    "ScopeRequired",
    "ServerConfig",
    "ServerError",
    "ServerStartupError",
    "ToolResult",
    "UnknownServer",
    "__version__",
]

_FROM_IMPL = frozenset(__all__) - {"__version__"}
_UNKNOWN = "0+unknown"


def _version() -> str:
    # importlib.metadata costs about 25 ms to import: only when the version is asked for.
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("mcpbind")
    except PackageNotFoundError:
        return _source_version()


def _source_version() -> str:
    """The version in the ``pyproject.toml`` of the source tree this file belongs to (the
    folder above it, symlinks resolved), if that file is mcpbind's."""
    import tomllib  # noqa: PLC0415 # only for a source tree that is not installed
    from pathlib import Path  # noqa: PLC0415

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        with pyproject.open("rb") as file:
            project = tomllib.load(file).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return _UNKNOWN
    if project.get("name") != "mcpbind":
        return _UNKNOWN
    return str(project.get("version", _UNKNOWN))


if not TYPE_CHECKING:  # for mypy, the names are the imports above; a typo stays an error

    def __getattr__(name: str) -> object:
        if name == "__version__":
            value = _version()
        elif name in _FROM_IMPL:
            from . import impl  # noqa: PLC0415 # loads the SDK: only when a name is used

            value = getattr(impl, name)
        else:
            raise AttributeError(f"module 'mcpbind' has no attribute {name!r}")
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
