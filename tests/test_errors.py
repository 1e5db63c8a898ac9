"""Every error of ``mcpbind.impl.errors``: its one-line text, the classes a caller may
catch it by, and what it keeps (SPEC §9, §11.14, §11.15); and the helpers that read a
failure out of exception groups, for every shape of group. Exact outputs, one row each."""

from __future__ import annotations

import pytest

from mcpbind.impl import errors
from mcpbind.impl.errors import (
    AuthorizationError,
    AuthorizationFailed,
    CatalogRejected,
    ConfigError,
    ContributorRejected,
    CredentialsRequired,
    DuplicateCallId,
    HostClosed,
    IllegalTransition,
    LocalError,
    LoginRequired,
    McpBindError,
    RemoteError,
    ScopeRequired,
    ServerExited,
    ServerStartupError,
    UnknownServer,
    describe,
    moved,
    split_failure,
    unwrap,
)

ROWS = [
    (
        DuplicateCallId("c1"),
        "call_id 'c1' was already used on this host; give every call a new call_id",
        (LocalError,),
        {"call_id": "c1"},
    ),
    (
        UnknownServer("nope", ["a", "b"]),
        "unknown server 'nope'; the configured servers are: a, b",
        (LocalError, KeyError),
        {"server": "nope"},
    ),
    (
        UnknownServer("nope", []),
        "unknown server 'nope'; the configured servers are: none",
        (LocalError, KeyError),
        {"server": "nope"},
    ),
    (
        HostClosed(),
        "the host is closed; use it inside its `async with Host.open(...)` block",
        (LocalError, RuntimeError),
        {},
    ),
    (
        ConfigError("bad key"),
        "bad key",
        (LocalError, ValueError),
        {},
    ),
    (
        ContributorRejected("collision", "the name x is taken"),
        "the name x is taken",
        (LocalError,),
        {"kind": "collision", "reason": "the name x is taken"},
    ),
    (
        CatalogRejected("invalid", "a bad listing", subject="t", problem="no name"),
        "a bad listing",
        (RemoteError,),
        {"kind": "invalid", "reason": "a bad listing", "subject": "t", "problem": "no name"},
    ),
    (
        CatalogRejected("collision", "taken"),
        "taken",
        (RemoteError,),
        {"kind": "collision", "subject": "", "problem": ""},
    ),
    (
        ServerStartupError("s", "refused", ("line 1", "line 2")),
        "required server 's' could not be started: refused; fix its configuration or mark "
        "it required = false to start without it",
        (RemoteError,),
        {"server": "s", "why": "refused", "stderr": ("line 1", "line 2")},
    ),
    (
        ServerStartupError("s", "refused"),
        "required server 's' could not be started: refused; fix its configuration or mark "
        "it required = false to start without it",
        (RemoteError,),
        {"stderr": ()},
    ),
    (
        ServerExited("closed", 3),
        "closed: the server's process exited with status 3 at start",
        (RemoteError,),
        {"status": 3},
    ),
    (
        ServerExited("closed", 0),
        "closed: the server's process exited with status 0 at start",
        (RemoteError,),
        {"status": 0},
    ),
    (
        ServerExited("closed", -9),
        "closed: the server's process was ended by signal 9 at start",
        (RemoteError,),
        {"status": -9},
    ),
    (
        CredentialsRequired("s", "HTTP 401"),
        "HTTP 401",
        (AuthorizationError, RemoteError),
        {"server": "s"},
    ),
    (
        LoginRequired("s"),
        "server 's' requires authorization and no one has logged in, or the login expired: "
        "run `mcpbind login s`",
        (AuthorizationError, RemoteError),
        {"server": "s"},
    ),
    (
        ScopeRequired("s", "write", ("read", "write")),
        "server 's' refused the request: it needs the scope \"write\" (HTTP 403 "
        'insufficient_scope); run `mcpbind login s --scope "read write"`',
        (AuthorizationError, RemoteError),
        {"server": "s", "scope": "write", "scopes": ("read", "write")},
    ),
    (
        AuthorizationFailed("s", "invalid_grant"),
        "authorization with server 's' failed: invalid_grant; run `mcpbind login s` to try again",
        (AuthorizationError, RemoteError),
        {"server": "s", "why": "invalid_grant"},
    ),
    (
        IllegalTransition("server s", "running", "connecting"),
        "server s: no transition from 'running' to 'connecting'",
        (RuntimeError,),
        {"what": "server s", "current": "running", "new": "connecting"},
    ),
]


@pytest.mark.parametrize(("error", "text", "bases", "kept"), ROWS, ids=lambda v: None)
def test_each_error_says_one_line_is_caught_by_its_kinds_and_keeps_its_fields(
    error, text, bases, kept
):
    assert str(error) == text
    assert "\n" not in text
    assert isinstance(error, McpBindError)
    for base in bases:
        assert isinstance(error, base)
    assert not (isinstance(error, LocalError) and isinstance(error, RemoteError))
    for name, value in kept.items():
        assert getattr(error, name) == value


def test_a_move_the_table_allows_passes_and_any_other_raises_naming_both_phases():
    table = {"a": frozenset({"b"}), "b": frozenset()}
    moved("x", table, "a", "b")
    with pytest.raises(IllegalTransition, match=r"^x: no transition from 'b' to 'a'$"):
        moved("x", table, "b", "a")
    with pytest.raises(IllegalTransition):
        moved("x", table, "a", "a")


ONE = ValueError("one")
TWO = KeyError("two")


@pytest.mark.parametrize(
    ("error", "inner"),
    [
        (ONE, ONE),
        (ExceptionGroup("g", [ONE]), ONE),
        (ExceptionGroup("g", [ExceptionGroup("h", [ONE])]), ONE),
        (ExceptionGroup("g", [ONE, TWO]), None),  # two: the group itself
        (ExceptionGroup("g", [ExceptionGroup("h", [ONE, TWO])]), "h"),
    ],
)
def test_unwrap_takes_the_one_exception_out_of_nested_single_member_groups(error, inner):
    got = unwrap(error)
    if inner is None:
        assert got is error
    elif inner == "h":
        assert isinstance(got, ExceptionGroup)
        assert got.message == "h"
    else:
        assert got is inner


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (ValueError("first line\nsecond line"), "first line"),
        (ValueError(), "ValueError"),
        (ExceptionGroup("g", [ValueError("inner"), KeyError("k")]), "inner"),
        (BaseExceptionGroup("g", [KeyboardInterrupt()]), "KeyboardInterrupt"),
        (ExceptionGroup("g", [ExceptionGroup("h", [OSError("deep")])]), "deep"),
    ],
)
def test_describe_gives_the_first_line_of_the_first_exception_inside_the_groups(error, text):
    assert describe(error) == text


def test_split_failure_parts_the_plain_failures_from_cancellations():
    assert split_failure(ONE) == (ONE, None)
    interrupt = KeyboardInterrupt()
    assert split_failure(interrupt) == (None, interrupt)
    failure, rest = split_failure(BaseExceptionGroup("g", [ONE, interrupt]))
    assert isinstance(failure, ExceptionGroup)
    assert failure.exceptions == (ONE,)
    assert isinstance(rest, BaseExceptionGroup)
    assert rest.exceptions == (interrupt,)
    failure, rest = split_failure(ExceptionGroup("g", [ONE]))
    assert isinstance(failure, ExceptionGroup)
    assert rest is None


def test_the_module_defines_no_error_without_a_row():
    """A new error class gets a row above (its text, kinds and fields)."""
    rowed = {type(error) for error, *_ in ROWS}
    defined = {
        cls
        for cls in vars(errors).values()
        if isinstance(cls, type)
        and issubclass(cls, McpBindError)
        and cls.__module__ == errors.__name__
    }
    abstract = {McpBindError, LocalError, RemoteError, AuthorizationError, errors.HttpStatusError}
    assert defined - abstract == rowed
