"""One exception hierarchy, split by whose fault it is (SPEC §9).

``LocalError``: the caller misused mcpbind (bad configuration, a reused call_id, an
unknown server). ``RemoteError``: a server misbehaved or could not be reached (a bad
catalog, a failed start). At the router boundary nothing here escapes ``Host.call``
except :class:`DuplicateCallId`: every call ends in a ``ToolResult``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from mcpbind.model import texts

__all__ = [
    "AuthorizationError",
    "AuthorizationFailed",
    "CatalogRejected",
    "ConfigError",
    "ContributorRejected",
    "CredentialsRequired",
    "DuplicateCallId",
    "HostClosed",
    "HttpStatusError",
    "IllegalTransition",
    "LocalError",
    "LoginRequired",
    "McpBindError",
    "RemoteError",
    "ScopeRequired",
    "ServerExited",
    "ServerStartupError",
    "UnknownServer",
    "describe",
    "moved",
    "split_failure",
    "unwrap",
]


class McpBindError(Exception):
    """The root of every error mcpbind raises."""


class LocalError(McpBindError):
    """The caller's misuse; fix the call or the configuration."""


class ConfigError(LocalError, ValueError):
    """A configuration value is missing, of the wrong type, or impossible."""


class DuplicateCallId(LocalError):
    """A call_id was used twice on one host (SPEC §9.2, INV-4)."""

    def __init__(self, call_id: str) -> None:
        super().__init__(texts.DUPLICATE_CALL_ID.format(call_id=call_id))
        self.call_id = call_id


class ContributorRejected(LocalError):
    """A tool contributor's tool list was refused (SPEC §11.11): ``invalid`` (a bad entry, a
    name listed twice, ``tools()`` raised) or ``collision`` (a name another source holds,
    INV-5). ``Host.open`` raises it; ``Host.refresh_contributors`` reports it as a rejected
    outcome and keeps the contributor's previous tools."""

    def __init__(self, kind: Literal["invalid", "collision"], reason: str) -> None:
        super().__init__(reason)
        self.kind: Literal["invalid", "collision"] = kind
        self.reason = reason


class UnknownServer(LocalError, KeyError):
    """A server name that the host's configuration does not define."""

    def __init__(self, server: str, known: list[str]) -> None:
        message = texts.UNKNOWN_SERVER.format(server=server, known=", ".join(known) or "none")
        super().__init__(message)
        self.server = server

    def __str__(self) -> str:
        return str(self.args[0])


class HostClosed(LocalError, RuntimeError):
    """The host was used after its ``async with`` block ended."""

    def __init__(self) -> None:
        super().__init__(texts.HOST_CLOSED)


class RemoteError(McpBindError):
    """A server misbehaved or could not be reached."""


class CatalogRejected(RemoteError):
    """A listing was rejected (SPEC §5.6); the previous catalog stays installed."""

    def __init__(
        self, kind: texts.RejectKind, reason: str, *, subject: str = "", problem: str = ""
    ) -> None:
        super().__init__(reason)
        self.kind: texts.RejectKind = kind
        self.reason = reason
        self.subject = subject
        """What was wrong, for a trace (SPEC §14.1): the tool (``(page)`` for a page)..."""
        self.problem = problem
        """... and the problem, or the cap the listing broke."""


class ServerStartupError(RemoteError):
    """A ``required`` server could not be started within its startup timeout.
    ``stderr``: the last lines a stdio server wrote to its stderr (SPEC §11.14)."""

    def __init__(self, server: str, why: str, stderr: tuple[str, ...] = ()) -> None:
        super().__init__(texts.STARTUP_FAILED.format(server=server, why=why))
        self.server = server
        self.why = why
        self.stderr = stderr


class ServerExited(RemoteError):
    """A stdio server's process exited before its session opened (SPEC §11.14): the
    text says with which status (or signal), after what the transport saw."""

    def __init__(self, why: str, status: int) -> None:
        if status < 0:
            text = texts.SERVER_KILLED.format(why=why, signal=-status)
        else:
            text = texts.SERVER_EXITED.format(why=why, status=status)
        super().__init__(text)
        self.status = status


class AuthorizationError(RemoteError):
    """A server's authorization did not succeed (SPEC §11.15). Four kinds, by what the
    user must do: :class:`CredentialsRequired`, :class:`LoginRequired`,
    :class:`ScopeRequired`, :class:`AuthorizationFailed`."""

    def __init__(self, server: str, message: str) -> None:
        super().__init__(message)
        self.server = server


class CredentialsRequired(AuthorizationError):
    """No credentials: the server refused the connection (HTTP 401 or 403) and there is
    nothing to log in with (OAuth turned off for it, or it publishes no OAuth metadata).
    Give it credentials: ``bearer_token_env_var``, ``http_headers`` or
    ``env_http_headers``."""


class LoginRequired(AuthorizationError):
    """Login needed: a person must authorize the host for ``server`` (no usable token),
    and no one can be asked here: run ``mcpbind login SERVER``."""

    def __init__(self, server: str) -> None:
        super().__init__(server, texts.LOGIN_REQUIRED.format(server=server))


class ScopeRequired(AuthorizationError):
    """Step-up needed: the server refused a request with HTTP 403 ``insufficient_scope``
    (OAuth's step-up) and no one can be asked here to authorize the wider scope: run
    ``mcpbind login SERVER --scope "..."`` with :attr:`scopes`. ``scope`` is what the
    server's challenge named; ``scopes`` adds it to those already granted or configured
    (SPEC §11.15). The tokens already stored are kept."""

    def __init__(self, server: str, scope: str, scopes: tuple[str, ...]) -> None:
        text = texts.SCOPE_REQUIRED.format(server=server, scope=scope, scopes=" ".join(scopes))
        super().__init__(server, text)
        self.scope = scope
        self.scopes = scopes


class AuthorizationFailed(AuthorizationError):
    """The authorization server is unusable: the flow failed (the authorization server
    refused, its metadata was wrong, the server kept refusing the tokens it issued)."""

    def __init__(self, server: str, why: str) -> None:
        super().__init__(server, texts.AUTHORIZATION_FAILED.format(server=server, why=why))
        self.why = why


class HttpStatusError(RemoteError):
    """A connection failed on the HTTP status the server answered (SPEC §11.2)."""


class IllegalTransition(McpBindError, RuntimeError):
    """A runtime component was moved to a phase its transition table does not allow
    (SPEC §11.1): a fault of mcpbind itself, never of the caller or a server."""

    def __init__(self, what: str, current: str, new: str) -> None:
        super().__init__(f"{what}: no transition from {current!r} to {new!r}")
        self.what = what
        self.current = current
        self.new = new


def moved(what: str, table: Mapping[str, frozenset[str]], current: str, new: str) -> None:
    """Raise :class:`IllegalTransition` unless ``table`` allows ``current`` -> ``new``."""
    if new not in table[current]:
        raise IllegalTransition(what, current, new)


def unwrap(error: Exception) -> Exception:
    """The one exception inside nested single-member exception groups (the task groups
    of a transport), or ``error`` itself."""
    while isinstance(error, ExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def describe(error: BaseException) -> str:
    """A one-line reason from an exception, unwrapping exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error) or type(error).__name__
    return text.splitlines()[0]


def split_failure(error: BaseException) -> tuple[Exception | None, BaseException | None]:
    """``(failure, rest)``: the plain exceptions in ``error`` and what else came with them
    (cancellations, KeyboardInterrupt), either None when there is none. A transport that
    fails while it is being cancelled raises both in one group."""
    if isinstance(error, Exception):
        return error, None
    if isinstance(error, BaseExceptionGroup):
        failure, rest = error.split(Exception)
        return failure, rest
    return None, error
