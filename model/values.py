"""Immutable values of the abstract model: configuration, state, events, outputs (SPEC §2-§3).

Everything here is ``attrs``-frozen and hashable, so a state is a canonical value the
explorer can hash, and "changing" anything means building a new value.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Literal, TypeVar, get_args

import attrs

from .naming import mcp_source
from .texts import CallStatus, ExclusionKind, OutcomeStatus, RejectKind

__all__ = [
    "EVENT_KINDS",
    "EVENT_TYPES",
    "OUTPUT_KIND",
    "OUTPUT_KINDS",
    "OUTPUT_TYPES",
    "UNKNOWN_TOOL",
    "Approve",
    "Binding",
    "Bound",
    "Call",
    "CallFailed",
    "CallProgress",
    "CallRecord",
    "CallRejected",
    "CallResponded",
    "Cancel",
    "Change",
    "Close",
    "Deny",
    "Disconnect",
    "Environment",
    "Event",
    "EventKind",
    "Exclusion",
    "LateDropped",
    "ListChanged",
    "ListDone",
    "ListFailed",
    "ListPage",
    "Output",
    "OutputKind",
    "Published",
    "Reconfigure",
    "Reconnect",
    "RefreshOutcome",
    "RefreshRequested",
    "RefreshState",
    "Refused",
    "Registry",
    "Relisten",
    "Result",
    "Sample",
    "Sent",
    "ServerSpec",
    "ServerState",
    "SessionExpired",
    "SourceCatalog",
    "State",
    "StreamEnded",
    "TaskCreated",
    "TaskEnd",
    "TaskStatus",
    "Timeout",
    "ToolDef",
    "Transition",
]

Policy = Literal["frozen", "revalidate"]
Change = Literal["added", "removed", "changed"]
"""What the one reconfiguration of a bound does to a server (SPEC §3.7)."""
UNKNOWN_TOOL = "no_such_tool"
"""A name no catalog of the bound produces: calls to it end ``unsupported``."""


_T = TypeVar("_T")
_EVOLVERS: dict[type, Any] = {}
_UNSET: Any = object()


def evolve(inst: _T, **changes: Any) -> _T:
    """``attrs.evolve`` without per-call introspection (the explorer's hot path): one
    function per class, generated once, taking each field as an optional keyword."""
    evolver = _EVOLVERS.get(type(inst))
    if evolver is None:
        evolver = _EVOLVERS[type(inst)] = _evolver(type(inst))
    return evolver(inst, **changes)  # type: ignore[no-any-return]


def _evolver(cls: type) -> Any:
    names = [f.name for f in attrs.fields(cls)]
    params = ", ".join(f"{n}=_UNSET" for n in names)
    args = ", ".join(f"inst.{n} if {n} is _UNSET else {n}" for n in names)
    namespace: dict[str, Any] = {"_UNSET": _UNSET, "cls": cls}
    # The source is built from the class's own field names, nothing from outside.
    exec(f"def evolve(inst, *, {params}):\n    return cls({args})\n", namespace)
    return namespace["evolve"]


# --- configuration ----------------------------------------------------------------------


@attrs.frozen(cache_hash=True)
class ToolDef:
    """One tool as a server lists it, abstracted to what the rules look at."""

    name: str
    read_only: bool = False
    valid: bool = True
    problem: str = ""
    """Why the tool is invalid (validation text); empty when valid."""
    visible: bool = True
    """False when ``_meta.ui.visibility`` leaves out ``"model"``."""
    excluded: ExclusionKind | None = None
    """A valid tool the host leaves out of the catalog, and why (SPEC §5.4); ``problem``
    says what is wrong with its ``x-mcp-header``."""
    spec: str = ""
    """What the rules do not look at (description, schemas, other annotations), as a
    digest: a listing that changes only this is still a change (SPEC §14.5)."""
    over_cap: bool = False
    """With ``valid`` False: the listing broke a cap of SPEC §5.2 (``problem`` names it),
    so the refresh is rejected ``cap``, not ``invalid``."""
    resource: bool = False
    """Not a tool: a resource the server lists (``resources/list``, SPEC §11.20), ``name``
    its URI. It is part of the server's catalog, read by the same refresh, installed by
    the same publication; a read of it is a call (``resources/read``)."""


Page = tuple[ToolDef, ...]
Listing = tuple[Page, ...]


@attrs.frozen(cache_hash=True)
class ServerSpec:
    """A scripted server: the listings it would return, version by version."""

    name: str
    versions: tuple[Listing, ...]
    parallel: bool = False
    tool_timeout_sec: float = 300.0
    idle_timeout: bool = False
    """The tool timeout is an idle timeout that progress re-arms, capped (SPEC §8.11)."""
    tool_max_sec: float = 3600.0
    """With ``idle_timeout``: the cap on a call's whole time."""
    tasks: bool = False
    """The server may answer a call with a task, which the host then polls (SPEC §8.12)."""
    enabled_tools: frozenset[str] | None = None
    disabled_tools: frozenset[str] = frozenset()
    streams: bool = False
    """The server's ``list_changed`` arrive on a ``subscriptions/listen`` stream it may end
    (2026-07-28, SPEC §5.7): ``stream_ended`` is possible."""
    sessions: bool = False
    """The server keeps an HTTP session it may forget (SPEC §8.13): a call sent to it may
    be refused unrun (``session_expired``)."""
    change: Change | None = None
    """What the bound's one ``reconfigure`` does to it (SPEC §3.7); None: unchanged. An
    ``added`` server is absent until then, a ``removed`` one afterwards; a ``changed`` one
    is replaced by a new session of a server that lists :attr:`replacement`."""
    replacement: tuple[Listing, ...] = ()
    """With ``change="changed"``: the replacement server's listings, version by version,
    read instead of :attr:`versions` once the reconfiguration happened."""

    @property
    def source(self) -> str:
        return mcp_source(self.name)


@attrs.frozen(cache_hash=True)
class Bound:
    """The model's configuration: servers, builtins, policy and the exploration bound."""

    servers: tuple[ServerSpec, ...]
    builtins: tuple[str, ...] = ()
    extensions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Extension contributors' tools: ``(contributor id, names)``, installed at the start
    under source ``ext:<id>`` and protected like builtins (SPEC §2.1, INV-5)."""
    policy: Policy = "revalidate"
    max_steps: int = 2
    max_calls: int = 3
    max_name_length: int = 64
    bad_arguments: bool = True
    """Whether ``call`` may carry arguments that are not a JSON object."""
    environment: frozenset[Environment] | None = None
    """What the environment may do (None: everything): event kinds, plus ``call_error``
    (an ``isError`` answer) and ``late_answer`` (an answer after the call ended)."""
    approval: bool = False
    """Gating is active and every MCP tool needs approval (SPEC §3.4): a call waits in
    phase ``approval`` until ``approve`` or ``deny``."""
    lazy: tuple[str, ...] = ()
    rearms: int = 2
    """On a server with an idle timeout, how many progress notifications re-arm a call's
    deadline before its cap is the earlier deadline: the cap, counted in idle periods."""
    """Servers started ``lazy_when_cached`` with a cache entry holding their version-0
    listing (SPEC §3.5, §11.12): that listing installs at the start and the server stays
    dormant, not connected, until a call or ``refresh_requested`` wakes it."""

    def server(self, name: str) -> ServerSpec:
        for spec in self.servers:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def index(self, name: str) -> int:
        for i, spec in enumerate(self.servers):
            if spec.name == name:
                return i
        raise KeyError(name)


# --- state ------------------------------------------------------------------------------


@attrs.frozen(cache_hash=True)
class Binding:
    """Public name -> remote identity, as captured in a registry state (SPEC §2.3)."""

    name: str
    source: str
    server: str | None
    remote_name: str
    """What is sent to the server: the tool's raw name (a builtin's: its own name)."""
    read_only: bool
    source_generation: int
    spec: str = ""
    """The tool's :attr:`ToolDef.spec`: compared by a refresh that may be unchanged."""
    resource: bool = False
    """A resource of the server (SPEC §11.20): ``name`` is what a read of it is called
    (:func:`~.naming.resource_name`), ``remote_name`` its URI, sent with
    ``resources/read``."""

    @property
    def method(self) -> Method:
        """What a call through this binding sends: ``tools/call``, or ``resources/read``."""
        return "resources/read" if self.resource else "tools/call"

    def server_only(self) -> Binding:
        """Just the server, for a finished call that may still get a late answer."""
        return Binding("", "", self.server, "", False, 0)


@attrs.frozen(cache_hash=True)
class SourceCatalog:
    """One source's installed catalog; ``bindings`` sorted by public name."""

    source: str
    generation: int
    bindings: tuple[Binding, ...]
    resources: tuple[Binding, ...] = ()
    """The server's resources (SPEC §11.20), sorted by URI: installed with its tools, by
    the same publication, under the same source generation."""

    def remote_names(self) -> frozenset[str]:
        return frozenset(b.remote_name for b in self.bindings)

    def uris(self) -> frozenset[str]:
        return frozenset(b.remote_name for b in self.resources)


@attrs.frozen(cache_hash=True)
class Registry:
    """An immutable registry state: one per published generation (INV-1)."""

    generation: int
    catalogs: tuple[SourceCatalog, ...]
    remembered: tuple[tuple[tuple[str, str], str], ...] = ()
    """``((server, tool), name)`` for every identity ever named, sorted."""

    def catalog(self, source: str) -> SourceCatalog:
        for catalog in self.catalogs:
            if catalog.source == source:
                return catalog
        raise KeyError(source)

    def lookup(self, name: str) -> Binding | None:
        for catalog in self.catalogs:
            for binding in catalog.bindings:
                if binding.name == name:
                    return binding
            for binding in catalog.resources:
                if binding.name == name:
                    return binding
        return None

    def names(self) -> tuple[str, ...]:
        return tuple(b.name for c in self.catalogs for b in c.bindings)


@attrs.frozen(cache_hash=True)
class RefreshState:
    """A refresh in flight for one server."""

    version: int
    """The listing being read (the server's version when the refresh started)."""
    pages: int = 0
    """Pages received so far."""
    fresh: bool = True
    """No ``list_changed`` arrived since it started (it covers every notification)."""
    queued: bool = False
    """Another refresh was requested meanwhile; it starts when this one ends (LIVE-2)."""


Start = Literal["dormant", "starting"]


@attrs.frozen(cache_hash=True)
class ServerState:
    connected: bool
    version: int
    refresh: RefreshState | None
    owed: bool = False
    """A ``list_changed`` arrived that no completed refresh has answered yet (LIVE-2)."""
    start: Start | None = None
    """A lazy start (SPEC §3.5): ``dormant`` (cached catalog installed, never connected),
    ``starting`` (woken: connected, its first refresh in flight); None once settled."""
    listening: bool = True
    """The host hears the server's ``list_changed`` (SPEC §5.7): False once the server
    ended the stream they arrive on, until ``relisten``. A new session listens anew."""
    unread: bool = False
    """The catalog changed while nobody listened, and no refresh has started since (one
    that starts reads the current version): LIVE-3."""
    present: bool = True
    """The server is in the configuration (SPEC §3.7): False for an ``added`` server before
    the reconfiguration and a ``removed`` one after it. An absent server is not connected,
    has no refresh, an empty catalog, no call pending and no event of any kind."""
    replacing: bool = False
    """A ``changed`` server whose replacement has not finished its first refresh yet: the
    catalog installed is still the old server's (INV-15)."""


CallPhase = Literal["approval", "starting", "queued", "sent", "retrying", "task", "done"]
"""``retrying``: the server refused the call unrun (-32020, SPEC §8.9; or an expired
session, §8.13); it waits for a refresh of that server, then is sent once more.
``task``: the server answered the call with a task (SPEC §8.12); the host polls it until
its terminal status."""


@attrs.frozen(cache_hash=True)
class CallRecord:
    """One accepted call and what happened to it."""

    call_id: str
    step: int
    name: str
    binding: Binding | None
    exclusive: bool
    phase: CallPhase
    status: CallStatus | None = None
    results: int = 0
    """Terminal results delivered for this call_id (INV-4: exactly one once done)."""
    late: bool = False
    """The server may still answer a request the host has already ended."""
    retried: bool = False
    """Rejected unrun once (SPEC §8.9): waiting to be sent again, or sent again."""
    behind: bool = False
    """``retrying`` behind a refresh that started before the rejection: it waits for the
    refresh queued after that one (INV-13)."""
    progressed: int = 0
    """Progress notifications that re-armed its idle timeout (SPEC §8.11)."""
    task: bool = False
    """It runs as a task (SPEC §8.12): ended early, it is cancelled with ``tasks/cancel``;
    with ``late``, what may still come is the task's status, not an answer."""
    expired: bool = False
    """``retrying`` because the server no longer knew the session (SPEC §8.13, INV-14),
    not because it rejected the call's headers: what a timeout or close says of it."""


@attrs.frozen(cache_hash=True)
class State:
    """The whole model state. ``bound`` is configuration, not part of equality."""

    bound: Bound = attrs.field(eq=False, repr=False)
    servers: tuple[ServerState, ...]
    registry: Registry
    steps: tuple[Registry | None, ...] = ()
    """Snapshots by step index; ``None`` once no call can use it (see ``collect_steps``)."""
    calls: tuple[CallRecord, ...] = ()
    closed: bool = False
    """The host has closed (SPEC §3.6): sessions ended, every call ended, none accepted."""
    reconfigured: bool = False
    """The bound's one ``reconfigure`` happened (SPEC §3.7)."""

    def call(self, call_id: str) -> CallRecord | None:
        for record in self.calls:
            if record.call_id == call_id:
                return record
        return None


# --- events (SPEC §3) -------------------------------------------------------------------

EventKind = Literal[
    "refresh_requested",
    "list_page",
    "list_done",
    "list_failed",
    "list_changed",
    "stream_ended",
    "relisten",
    "sample",
    "call",
    "call_responded",
    "call_rejected",
    "session_expired",
    "call_failed",
    "cancel",
    "approve",
    "deny",
    "timeout",
    "progress",
    "task_created",
    "task_status",
    "disconnect",
    "reconnect",
    "reconfigure",
    "close",
]
"""The kind of an input (SPEC §3.1): an event's ``kind``, a trace record's ``kind`` (SPEC
§14.1), what the runtime reports through ``Recorder.event``. The one list of them."""
EVENT_KINDS: tuple[EventKind, ...] = get_args(EventKind)
"""Every :data:`EventKind`, in the order of the SPEC's transition table (§3.3)."""
Environment = EventKind | Literal["call_error", "late_answer"]
"""What a bound lets the environment do (:attr:`Bound.environment`): the events of a kind,
an ``isError`` answer (``call_error``), an answer or task status after the call ended
(``late_answer``)."""


@attrs.frozen(cache_hash=True)
class RefreshRequested:
    kind: ClassVar[EventKind] = "refresh_requested"
    server: str


@attrs.frozen(cache_hash=True)
class ListPage:
    """A non-final ``tools/list`` page arrives (it carries ``nextCursor``)."""

    kind: ClassVar[EventKind] = "list_page"
    server: str


@attrs.frozen(cache_hash=True)
class ListDone:
    """The final page arrives; the host validates, names and installs (or rejects)."""

    kind: ClassVar[EventKind] = "list_done"
    server: str


@attrs.frozen(cache_hash=True)
class ListFailed:
    kind: ClassVar[EventKind] = "list_failed"
    server: str
    why: str = "server error"


@attrs.frozen(cache_hash=True)
class ListChanged:
    """The server's catalog moves to its next version and it announces ``list_changed``."""

    kind: ClassVar[EventKind] = "list_changed"
    server: str


@attrs.frozen(cache_hash=True)
class StreamEnded:
    """The server ended, gracefully, the ``subscriptions/listen`` stream its
    ``list_changed`` arrive on (SPEC §5.7): the host hears no change until it listens
    again. The SDK neither listens again nor replays what was missed."""

    kind: ClassVar[EventKind] = "stream_ended"
    server: str


@attrs.frozen(cache_hash=True)
class Relisten:
    """The server acknowledged the host's new ``subscriptions/listen`` stream (SPEC §5.7):
    the host hears changes again and refreshes for those it may have missed."""

    kind: ClassVar[EventKind] = "relisten"
    server: str


@attrs.frozen(cache_hash=True)
class Sample:
    kind: ClassVar[EventKind] = "sample"


@attrs.frozen(cache_hash=True)
class Call:
    kind: ClassVar[EventKind] = "call"
    step: int
    call_id: str
    name: str
    arguments_ok: bool = True


@attrs.frozen(cache_hash=True)
class CallResponded:
    kind: ClassVar[EventKind] = "call_responded"
    call_id: str
    is_error: bool = False


@attrs.frozen(cache_hash=True)
class CallRejected:
    """The server answered the call with -32020 (its ``Mcp-Param-*`` headers do not match
    the arguments): it refused the call before running it (SPEC §8.9)."""

    kind: ClassVar[EventKind] = "call_rejected"
    call_id: str


@attrs.frozen(cache_hash=True)
class SessionExpired:
    """The server refused the call unrun with HTTP 404: it no longer knows the host's
    session (SPEC §8.13). The host opens a new session; the call never ran."""

    kind: ClassVar[EventKind] = "session_expired"
    call_id: str


@attrs.frozen(cache_hash=True)
class CallFailed:
    kind: ClassVar[EventKind] = "call_failed"
    call_id: str
    why: str = "connection reset"


@attrs.frozen(cache_hash=True)
class Cancel:
    kind: ClassVar[EventKind] = "cancel"
    call_id: str


@attrs.frozen(cache_hash=True)
class Timeout:
    kind: ClassVar[EventKind] = "timeout"
    call_id: str
    cap: bool = False
    """A server with an idle timeout (SPEC §8.11): the cap on the call's whole time
    fired, not the idle timeout."""


@attrs.frozen(cache_hash=True)
class CallProgress:
    """The server reported progress on a call in flight. On a server with an idle timeout
    it re-arms the call's deadline, up to the cap (SPEC §8.11)."""

    kind: ClassVar[EventKind] = "progress"
    call_id: str


@attrs.frozen(cache_hash=True)
class TaskCreated:
    """The server answered an in-flight call with a task handle (SPEC §8.12): the call
    stays pending, in phase ``task``, and the host polls the task."""

    kind: ClassVar[EventKind] = "task_created"
    call_id: str


TaskEnd = Literal["completed", "failed", "cancelled"]


@attrs.frozen(cache_hash=True)
class TaskStatus:
    """A poll of the call's task found it terminal (SPEC §8.12): ``completed`` with the
    tool's result (``is_error`` its ``isError``), or ``failed``/``cancelled`` by the server.
    After the call ended, a late status: dropped and counted (INV-4)."""

    kind: ClassVar[EventKind] = "task_status"
    call_id: str
    status: TaskEnd = "completed"
    is_error: bool = False
    why: str = "the server gave no reason"
    """A ``failed`` task's status message (free text the environment chooses)."""


@attrs.frozen(cache_hash=True)
class Approve:
    """The approver allows a call waiting for approval (once, for the session or always:
    the same for this call)."""

    kind: ClassVar[EventKind] = "approve"
    call_id: str


@attrs.frozen(cache_hash=True)
class Deny:
    """The approver declines or cancels a call waiting for approval, or none can answer."""

    kind: ClassVar[EventKind] = "deny"
    call_id: str
    answer: Literal["decline", "cancel"] = "decline"
    """What the approver said (the runtime also denies when no approver can answer)."""


@attrs.frozen(cache_hash=True)
class Disconnect:
    kind: ClassVar[EventKind] = "disconnect"
    server: str


@attrs.frozen(cache_hash=True)
class Close:
    """The host shuts down (SPEC §3.6): its ``async with Host.open(...)`` block ends."""

    kind: ClassVar[EventKind] = "close"


@attrs.frozen(cache_hash=True)
class Reconnect:
    kind: ClassVar[EventKind] = "reconnect"
    server: str


@attrs.frozen(cache_hash=True)
class Reconfigure:
    """The host applies a new configuration (SPEC §3.7): every server with a ``change``
    is added, removed or replaced in one transition; the others are untouched."""

    kind: ClassVar[EventKind] = "reconfigure"


Event = (
    RefreshRequested
    | ListPage
    | ListDone
    | ListFailed
    | ListChanged
    | StreamEnded
    | Relisten
    | Sample
    | Call
    | CallResponded
    | CallRejected
    | SessionExpired
    | CallFailed
    | Cancel
    | Approve
    | Deny
    | Timeout
    | CallProgress
    | TaskCreated
    | TaskStatus
    | Disconnect
    | Reconnect
    | Reconfigure
    | Close
)
EVENT_TYPES: tuple[type[Event], ...] = (
    RefreshRequested,
    ListPage,
    ListDone,
    ListFailed,
    ListChanged,
    StreamEnded,
    Relisten,
    Sample,
    Call,
    CallResponded,
    CallRejected,
    SessionExpired,
    CallFailed,
    Cancel,
    Approve,
    Deny,
    Timeout,
    CallProgress,
    TaskCreated,
    TaskStatus,
    Disconnect,
    Reconnect,
    Reconfigure,
    Close,
)

# --- outputs (SPEC §3.2) ----------------------------------------------------------------

OutputKind = Literal["published", "refresh_outcome", "result", "sent", "refused", "late_dropped"]
"""The kind of an output (SPEC §3.2): :data:`OUTPUT_KIND` of its type, a trace record's
``kind``."""
OUTPUT_KINDS: tuple[OutputKind, ...] = get_args(OutputKind)


@attrs.frozen
class Published:
    """A new registry state became visible."""

    generation: int
    source: str
    names: tuple[str, ...]


@attrs.frozen
class Exclusion:
    """One tool of a listing the host left out of its catalog (SPEC §5.4)."""

    tool: str
    kind: ExclusionKind
    reason: str


@attrs.frozen
class RefreshOutcome:
    server: str
    status: OutcomeStatus
    generation: int
    kind: RejectKind | None = None
    """``rejected``: why (the runtime's ``RefreshOutcome.kind``; a trace's ``reject``)."""
    reason: str | None = None
    excluded: tuple[Exclusion, ...] = ()
    """``installed`` and ``unchanged``: the tools of the listing left out, in listing order."""


@attrs.frozen
class Result:
    """A terminal result. ``text`` is None when the server supplies the content."""

    call_id: str
    status: CallStatus
    text: str | None = None


Method = Literal[
    "tools/list", "tools/call", "resources/read", "notifications/cancelled", "tasks/cancel", "close"
]
"""``close``: the host ended the server's session (stdin closed, or an HTTP ``DELETE``).
``resources/read``: a call of ``read_mcp_resource`` (SPEC §11.20), detail the URI.
``tasks/cancel``: the cancellation of a call that runs as a task (SPEC §8.12, INV-7)."""


@attrs.frozen
class Sent:
    """A message sent to a server: the raw tool name for calls, the call_id for cancels."""

    server: str
    method: Method
    detail: str = ""


@attrs.frozen
class Refused:
    """A misuse refused with a typed error; no state changes and no result is produced."""

    call_id: str
    text: str


@attrs.frozen
class LateDropped:
    """A response for a call that already ended: dropped and counted (INV-4)."""

    call_id: str


Output = Published | RefreshOutcome | Result | Sent | Refused | LateDropped
OUTPUT_KIND: Mapping[type[Output], OutputKind] = MappingProxyType(
    {
        Published: "published",
        RefreshOutcome: "refresh_outcome",
        Result: "result",
        Sent: "sent",
        Refused: "refused",
        LateDropped: "late_dropped",
    }
)
"""The kind of each output type. Not a class attribute, as an event's ``kind`` is: a
refresh outcome's ``kind`` is why it was rejected, as in the runtime."""
OUTPUT_TYPES: tuple[type[Output], ...] = tuple(OUTPUT_KIND)


@attrs.frozen
class Transition:
    state: State
    outputs: tuple[Output, ...] = ()
