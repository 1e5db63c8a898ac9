"""The call table: every accepted call_id, and each call while it is pending (INV-4).

Theory of operation. The router opens one :class:`PendingCall` per accepted call, from
acceptance to its terminal result, and closes it then; nothing else creates or ends one.
A call_id is accepted once per host: :meth:`CallTable.open` refuses one used before
(:class:`DuplicateCallId`). While pending, a call runs inside its own cancel scope:

* :meth:`CallTable.cancel` ends it ``cancelled`` from outside (``Host.cancel``, INV-7);
* its tool timeout is the scope's deadline, set when it reaches its server (``attach``:
  after any approval, SPEC §8.4);
* while it is attached to a server, :meth:`CallTable.fail_server` ends it ``failed`` when
  that server's session is lost (INV-8), and :meth:`CallTable.pause` stops its deadline
  while the server asks the user for input (SPEC §11.10);
* :meth:`CallTable.close_all` ends every pending call when the host closes (INV-12);
* :meth:`CallTable.end_bound` ends every pending call bound to a server a reconfiguration
  removes or replaces (SPEC §11.17, INV-16), approval waiters included.

A call waiting for its approval is pending but attached to no server: a disconnect does
not end it and it has no deadline yet (SPEC §3.4), as in the model's ``approval`` phase.
The router reads how a call ended (``ended_by``, ``sent``, ``phase``) to choose its
result; this module makes no results.
"""

from __future__ import annotations

import asyncio
import math
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType, TracebackType
from typing import Any, Literal, Protocol

import anyio
import attrs

from ..catalog.registry import Binding
from ..errors import DuplicateCallId, moved

__all__ = [
    "CALL_PHASES",
    "CallPhase",
    "CallScope",
    "CallTable",
    "CallTableStatistics",
    "EndedBy",
    "PendingCall",
    "loop_clock",
    "loop_scope",
]

CallPhase = Literal["checking", "approval", "starting", "dispatch", "retrying", "local"]
"""Where a pending call is (the glossary of SPEC §2): its synchronous checks, waiting for
its approval, waiting for a lazy start (SPEC §11.12), queued for the lane or sent
(``sent`` tells which; a call the server runs as a task stays here, ``task`` set),
waiting to be sent again after the server rejected it unrun (SPEC §8.9), or running a
builtin or extension tool's handler."""

CALL_PHASES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "checking": frozenset({"approval", "starting", "dispatch", "local"}),
        "approval": frozenset({"starting", "dispatch"}),
        "starting": frozenset({"dispatch"}),
        "dispatch": frozenset({"retrying"}),
        "retrying": frozenset({"dispatch"}),
        "local": frozenset(),
    }
)
"""Every phase a pending call may move to from each phase (SPEC §11.1); the model's
call phases (``model/values.py``) map onto these (SPEC §2)."""

EndedBy = Literal["cancelled", "disconnected", "closed", "removed", "replaced"]
"""Who ended a call early: ``removed``/``replaced``, a reconfiguration (SPEC §11.17)."""


class CallScope(Protocol):
    """What a call asks of its cancel scope: ``anyio.CancelScope``'s API, which trio's own
    ``trio.CancelScope`` has too (:func:`loop_scope`)."""

    deadline: float

    @property
    def cancel_called(self) -> bool: ...

    def cancel(self) -> None: ...

    def __enter__(self) -> object: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None: ...


@attrs.define(eq=False)
class PendingCall:
    """One accepted call until its terminal result. Its fields change only through its
    verbs; its phase only along :data:`CALL_PHASES`."""

    call_id: str
    order: int
    """Acceptance order (1, 2, ...): calls that waited for a start go on in it."""
    accepted: float
    """When it was accepted (``anyio.current_time()``): the wall time runs from here."""
    scope: CallScope = attrs.field(factory=anyio.CancelScope)
    _phase: CallPhase = "checking"
    _binding: Binding | None = None
    _server: str | None = None
    _started: float = 0.0
    _sent: bool = False
    _task: bool = False
    _ended_by: EndedBy | None = None
    _end_reported: bool = False
    _expired: bool = False
    _cap: float = math.inf
    _paused: int = 0
    _remaining: float = math.inf

    # --- what it is now -----------------------------------------------------------------

    @property
    def phase(self) -> CallPhase:
        return self._phase

    @property
    def binding(self) -> Binding | None:
        """What it executes, once resolved in its step (INV-2)."""
        return self._binding

    @property
    def server(self) -> str | None:
        """The server it is attached to (waiting for its start, queued or sent), else None."""
        return self._server

    @property
    def started(self) -> float:
        """When it reached its server or its handler (its tool timeout runs from here)."""
        return self._started

    @property
    def sent(self) -> bool:
        """``tools/call`` left for the server."""
        return self._sent

    @property
    def task(self) -> bool:
        """The server runs it as a task (SPEC §8.12): its cancellation is ``tasks/cancel``."""
        return self._task

    @property
    def expired(self) -> bool:
        """It waits to be sent again because the server forgot the session (SPEC §8.13),
        not for a ``-32020`` (§8.9)."""
        return self._expired

    @property
    def ended_by(self) -> EndedBy | None:
        """Who ended it early; None: nobody (it ran out its deadline if the scope fired)."""
        return self._ended_by

    @property
    def capped(self) -> bool:
        """Its deadline that fired was the cap (SPEC §8.11)."""
        return anyio.current_time() >= self._cap

    # --- verbs ------------------------------------------------------------------------------

    def _move(self, phase: CallPhase) -> None:
        moved("pending call", CALL_PHASES, self._phase, phase)
        self._phase = phase

    def resolve(self, binding: Binding) -> None:
        """Its name resolved in its step to ``binding`` (INV-2)."""
        self._binding = binding

    def await_approval(self) -> None:
        self._move("approval")

    def attach(self, server: str, timeout: float, cap: float, now: float) -> None:
        """It reached ``server`` at ``now``: its tool timeout (0: none) runs from then;
        ``cap`` (``math.inf``: none) bounds its whole time when progress re-arms the
        timeout (SPEC §8.11)."""
        self._server = server
        self._started = now
        # 0: none; it is never negative (ServerConfig checks it), so a comparison would say
        # no more than its truth does.
        self.scope.deadline = self._started + timeout if timeout else math.inf
        self._cap = self._started + cap

    def wait_start(self) -> None:
        """It waits for its server's lazy start (INV-11)."""
        self._move("starting")

    def dispatch(self) -> None:
        """It goes for the lane, then the wire."""
        self._move("dispatch")

    def mark_sent(self) -> None:
        """``tools/call`` left for the server."""
        self._sent = True

    def retry(self, *, expired: bool = False) -> None:
        """The server refused it unrun: it waits to be sent again, after a refresh (a
        ``-32020``, SPEC §8.9) or on a new session (``expired``, §8.13)."""
        self._move("retrying")
        self._sent = False
        self._expired = expired

    def run_as_task(self) -> None:
        """The server answered with a task (SPEC §8.12)."""
        self._task = True

    def run_local(self) -> None:
        """A builtin or extension tool's handler runs it; its time runs from now."""
        self._move("local")
        self._started = anyio.current_time()

    def report_end(self) -> bool:
        """Whether the input that ends it (a deadline, a failure) is still to be recorded
        (SPEC §14.1): True once, then False."""
        if self._end_reported:
            return False
        self._end_reported = True
        return True

    def mark_ended(self, why: EndedBy) -> None:
        """Note who ended it early; the first reason wins."""
        if self._ended_by is None:
            self._ended_by = why

    def end_early(self, why: EndedBy) -> None:
        """End it from outside: the first reason wins, its scope is cancelled."""
        if self._ended_by is None:
            self.mark_ended(why)
            self.scope.cancel()

    def pause(self) -> None:
        """Stop the tool timeout's clock (SPEC §11.10); nests."""
        if self._paused == 0:
            self._remaining = self.scope.deadline - anyio.current_time()
            self.scope.deadline = math.inf
        self._paused += 1

    def resume(self) -> None:
        self._paused -= 1
        if self._paused == 0:
            self.scope.deadline = anyio.current_time() + self._remaining

    def rearm(self, idle: float) -> None:
        """SPEC §8.11: progress came; the idle deadline starts again, never past the cap."""
        if self._paused:
            self._remaining = idle
            return
        self.scope.deadline = min(anyio.current_time() + idle, self._cap)


def loop_clock() -> Callable[[], float]:
    """The running event loop's own clock: the reader ``anyio.current_time()`` ends in,
    the same values, without looking the backend up again (through ``sniffio``) at
    every read. trio's is its run's clock (``trio.lowlevel.current_clock()``), asyncio's
    the running loop's ``time``; any other loop: ``anyio.current_time`` itself. trio is
    asked only when it is loaded already (an asyncio host never loads it)."""
    trio = _running_trio()
    if trio is not None:
        clock: Callable[[], float] = trio.lowlevel.current_clock().current_time
        return clock
    try:
        return asyncio.get_running_loop().time
    except RuntimeError:  # no asyncio loop runs in this thread
        return anyio.current_time


def loop_scope() -> Callable[[], CallScope]:
    """The running event loop's own cancel scope class. On trio it is
    ``trio.CancelScope`` itself: ``anyio.CancelScope`` wraps one there, and each of a
    call's uses of its scope (made, entered, its deadline set, left) went through the
    wrapper's extra frame. On asyncio (or any other loop) it is the class
    ``anyio.CancelScope()`` makes on that backend. trio is asked only when it is loaded
    already (an asyncio host never loads it)."""
    trio = _running_trio()
    if trio is not None:
        kind: Callable[[], CallScope] = trio.CancelScope
        return kind
    return type(anyio.CancelScope())


def _running_trio() -> Any:
    """The ``trio`` module when this code runs inside ``trio.run``, else None. trio is
    asked only when it is loaded already (an asyncio host never loads it)."""
    trio = sys.modules.get("trio")
    if trio is None:
        return None
    try:
        trio.lowlevel.current_task()
    except RuntimeError:  # not inside trio.run
        return None
    return trio


@attrs.frozen
class CallTableStatistics:
    accepted: int
    """call_ids accepted so far (each once, INV-4)."""
    pending: int
    """Calls accepted and not ended yet: waiting for approval or a start, queued, sent or
    running a handler."""
    attached: dict[str, int]
    """Pending calls per server they are attached to."""


@attrs.define(eq=False)
class CallTable:
    """The one owner of pending calls, by call_id and by server."""

    _used: set[str] = attrs.field(factory=set)
    _pending: dict[str, PendingCall] = attrs.field(factory=dict)
    _by_server: dict[str, set[PendingCall]] = attrs.field(factory=dict)
    _emptied: anyio.Event | None = None
    _watches: list[tuple[set[PendingCall], anyio.Event]] = attrs.field(factory=list)
    _scope_kind: Callable[[], CallScope] | None = None
    """The running loop's own cancel scope class (:func:`loop_scope`), learnt once:
    ``anyio.CancelScope()`` looks the backend up again for every scope, and every call
    makes one. A table lives in one host, on one event loop."""
    clock: Callable[[], float] = anyio.current_time
    """The event loop's clock (:func:`loop_clock`), learnt with the scope class: every
    call reads it at acceptance, when it reaches its server and at its result."""

    def __len__(self) -> int:
        return len(self._pending)

    def statistics(self) -> CallTableStatistics:
        return CallTableStatistics(
            accepted=len(self._used),
            pending=len(self._pending),
            attached={server: len(calls) for server, calls in self._by_server.items() if calls},
        )

    def open(self, call_id: str) -> PendingCall:
        """Accept ``call_id``; raises :class:`DuplicateCallId` if it was used before."""
        if call_id in self._used:
            raise DuplicateCallId(call_id)
        self._used.add(call_id)
        kind = self._scope_kind
        if kind is None:
            kind = self._scope_kind = loop_scope()
            self.clock = loop_clock()
        call = PendingCall(call_id, len(self._used), self.clock(), kind())
        self._pending[call_id] = call
        return call

    def close(self, call: PendingCall) -> None:
        """The call has its terminal result: it is no longer pending anywhere."""
        del self._pending[call.call_id]
        self.detach(call)
        for watched, ended in self._watches:
            watched.discard(call)
            if not watched:
                ended.set()
        if not self._pending and self._emptied is not None:
            self._emptied.set()

    def attach(self, call: PendingCall, server: str, timeout: float, cap: float = math.inf) -> None:
        """The call reached ``server`` (:meth:`PendingCall.attach`); a disconnect of
        ``server`` ends it from now on (INV-8)."""
        call.attach(server, timeout, cap, self.clock())
        attached = self._by_server.get(server)
        if attached is None:
            attached = self._by_server[server] = set()
        attached.add(call)

    def rearm(self, call: PendingCall, idle: float) -> None:
        """SPEC §8.11: progress on ``call`` re-arms its idle timeout, up to its cap."""
        call.rearm(idle)

    def detach(self, call: PendingCall) -> None:
        if call.server is not None:
            self._by_server[call.server].discard(call)

    def get(self, call_id: str) -> PendingCall | None:
        """The pending call ``call_id``; None when it is not (or no longer) pending."""
        return self._pending.get(call_id)

    def cancel(self, call_id: str) -> None:
        """End the pending call ``call_id`` ``cancelled``; no effect once it ended."""
        call = self._pending.get(call_id)
        if call is not None:
            call.end_early("cancelled")

    def fail_server(self, server: str) -> None:
        """INV-8: every call attached to ``server`` ends now (its session is gone)."""
        for call in list(self._by_server.get(server, ())):
            call.end_early("disconnected")

    def fail_in_flight(self, server: str, *, spare: PendingCall) -> None:
        """INV-14: the server forgot the session: every call attached to ``server`` that is
        out (sent, or running as a task) but ``spare`` ends now, as on a disconnect; a call
        not sent yet goes on, on the next session."""
        for call in list(self._by_server.get(server, ())):
            if call.sent and call is not spare:
                call.end_early("disconnected")

    def close_all(self) -> None:
        """INV-12: the host closes; every pending call ends now, whatever it waits for."""
        for call in list(self._pending.values()):
            call.end_early("closed")

    def end_bound(
        self, server: str, how: Literal["removed", "replaced"]
    ) -> tuple[PendingCall, ...]:
        """SPEC §11.17 (INV-16): a reconfiguration removes or replaces ``server`` (``how``);
        every pending call bound to it ends now, whatever it waits for: its approval, its
        server's start, the lane, its answer. Returns the calls it ended."""
        bound = self.bound(server)
        for call in bound:
            call.end_early(how)
        return bound

    def bound(self, server: str) -> tuple[PendingCall, ...]:
        """The pending calls whose binding names ``server`` (attached to it or not)."""
        return tuple(
            call
            for call in self._pending.values()
            if call.server == server or (call.binding is not None and call.binding.server == server)
        )

    async def wait_ended(self, calls: tuple[PendingCall, ...]) -> None:
        """Return once each of ``calls`` has had its result made (its cancellation, when
        it owes one, handed to its session first)."""
        watched = {call for call in calls if self._pending.get(call.call_id) is call}
        if not watched:
            return
        entry = (watched, anyio.Event())
        self._watches.append(entry)
        try:
            await entry[1].wait()
        finally:
            self._watches.remove(entry)

    async def wait_empty(self) -> None:
        """Return once no call is pending (each has had its result made)."""
        if self._pending:
            self._emptied = anyio.Event()
            await self._emptied.wait()

    def pause(self, server: str) -> tuple[PendingCall, ...]:
        """Stop the deadlines of ``server``'s calls; give the result to :meth:`resume`."""
        paused = tuple(self._by_server.get(server, ()))
        for call in paused:
            call.pause()
        return paused

    def resume(self, paused: tuple[PendingCall, ...]) -> None:
        for call in paused:
            call.resume()
