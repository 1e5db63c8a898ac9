"""What a server is doing now, as ``Host.server_status()`` says it (SPEC §11.18).

A server's runtime knows more than "connected or not": whether its first start settled
(:mod:`.phases`), whether it holds a session, how many connection attempts failed since
its last session, whether the last one failed for want of credentials, and what the
transport saw of the server while the host was idle. :func:`server_state` folds those
into one word, decided synchronously from the runtime's fields (no I/O): it is read on
every ``server_status()`` call and must be as cheap as the fields it reads.

* ``starting`` — its first attempt is under way (or listed, waiting for its turn, or a
  lazy start woken and not settled);
* ``dormant`` — started ``lazy_when_cached``: cached catalog, no session, nothing sent;
* ``connected`` — a session is open and nothing says the server is gone;
* ``unreachable`` — a session is held, but while the host was idle the transport found
  the server not listening (a handshake-era HTTP server's notification stream could not
  reconnect) or saying it no longer knows the session: the next request finds out
  (a new session, SPEC §8.13, or a reconnect, SPEC §3.1);
* ``reconnecting`` — no session: it ended, or every attempt since failed; the runtime
  retries with backoff (``reconnect_initial_sec`` doubling up to ``reconnect_max_sec``);
* ``login_required`` — no session, and the last attempt failed for want of credentials
  (:class:`~..errors.CredentialsRequired`, :class:`~..errors.LoginRequired`): run
  ``mcpbind login SERVER``; the host picks the credentials up at its next step
  (``Host.begin_step``) or on ``Host.credentials_changed`` (SPEC §11.18);
* ``failed`` — a required server that could not start (the host did not open);
* ``closed`` — the host closed it.
"""

from __future__ import annotations

from typing import Literal

from .phases import ServerPhase

__all__ = ["ServerState", "StreamFault", "server_state"]

ServerState = Literal[
    "starting",
    "dormant",
    "connected",
    "unreachable",
    "reconnecting",
    "login_required",
    "failed",
    "closed",
]

StreamFault = Literal["unreachable", "expired"]
"""What an idle session's transport found: the server not listening, or answering that it
no longer knows the session."""


def server_state(
    *,
    phase: ServerPhase,
    connected: bool,
    closing: bool,
    login_required: bool,
    stream_fault: StreamFault | None,
) -> ServerState:
    """The one word for a runtime's fields (module docstring)."""
    if closing:
        return "closed"
    if phase == "failed":
        return "failed"
    if connected:
        return "connected" if stream_fault is None else "unreachable"
    if phase == "dormant":
        return "dormant"
    if phase in ("connecting", "listed", "starting"):
        return "starting"
    return "login_required" if login_required else "reconnecting"
