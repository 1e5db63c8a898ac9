"""The standard bound: the scripted configuration the explorer proves the invariants on.

Two servers whose names sanitise to the same namespace (``git.hub`` and ``git_hub``,
both ``mcp__git_hub__...``), so whichever installs ``search`` second is renamed; a
builtin, and an extension contributor's tool that owns a name in that namespace, so one
listing collides with it; a listing
split over two pages; an invalid listing; a version in which a tool leaves and a tool the
host must leave out arrives; a read-only tool (parallel lane) next to exclusive ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from .naming import natural_name
from .rules import STANDARD
from .values import EVENT_KINDS, Bound, Environment, ServerSpec, ToolDef

__all__ = [
    "LAZY_SERVERS",
    "NIGHTLY_DEEPER",
    "SERVER_A",
    "SERVER_B",
    "SUITES",
    "Part",
    "Suite",
    "installable",
    "standard_bound",
    "standard_suite",
    "suite",
]

SERVER_A = "git.hub"
SERVER_B = "git_hub"

SEARCH = ToolDef("search")
READ = ToolDef("read", read_only=True)
WRITE = ToolDef("write")
BROKEN = ToolDef("broken", valid=False, problem="inputSchema is not a JSON object")
ADMIN = ToolDef("admin")
#: Valid, but only callable as a task (``execution.taskSupport: "required"``) on a server
#: that declares no tasks for ``tools/call``: left out (SPEC §5.4).
RESEARCH = ToolDef("research", excluded="task_required")

SERVER_A_SPEC = ServerSpec(
    SERVER_A,
    versions=(
        ((SEARCH,), (READ,)),  # v0: two pages
        ((READ, BROKEN),),  # v1: one invalid tool rejects the whole listing
        ((READ,), (WRITE, RESEARCH)),  # v2: search leaves, write arrives, research is left out
    ),
)
SERVER_B_SPEC = ServerSpec(
    SERVER_B,
    versions=(
        ((SEARCH,),),  # v0: collides with git.hub's search after sanitising
        ((SEARCH, ADMIN),),  # v1: admin would take the builtin's name
    ),
)
BUILTINS = ("shell",)
#: An extension contributor (SPEC §11.11) whose tool takes ``git_hub`` v1's natural name
#: ``mcp__git_hub__admin``: a non-MCP source that INV-5 protects like a builtin.
EXTENSIONS = (("admin", ("mcp__git_hub__admin",)),)
RESERVED = BUILTINS + tuple(name for _, names in EXTENSIONS for name in names)


#: What the environment may do in the ``calls`` part: the catalog machinery reduced to
#: the events that change what calls observe (installs, connection), and servers that
#: answer, or are cancelled or time out, but never answer late (SPEC §10.2).
CALLS_ENVIRONMENT: frozenset[Environment] = frozenset(
    {"list_done", "list_changed", "disconnect", "reconnect", "call_responded", "cancel", "timeout"}
)

#: All the environment can do (what ``environment=None`` means).
_EVERYTHING: frozenset[Environment] = frozenset({*EVENT_KINDS, "call_error", "late_answer"})

#: The ``catalogs`` part: everything but a rejection (-32020), which the ``retry`` part
#: explores (SPEC §10.2): both in one part double it.
CATALOGS_ENVIRONMENT = frozenset(k for k in _EVERYTHING if k != "call_rejected")

#: The ``retry`` part (SPEC §8.9): the calls environment plus rejections unrun and failed
#: listings (a refresh that fails still answers a waiting retry).
RETRY_ENVIRONMENT: frozenset[Environment] = frozenset(
    {*CALLS_ENVIRONMENT, "call_rejected", "list_failed"}
)

#: The ``progress`` part (SPEC §8.11): the calls environment plus progress notifications,
#: against ``git_hub`` with an idle timeout.
PROGRESS_ENVIRONMENT: frozenset[Environment] = frozenset({*CALLS_ENVIRONMENT, "progress"})
IDLE_SERVERS = (SERVER_B,)

#: The ``tasks`` part (SPEC §8.12): the calls environment plus tasks (created, polled to
#: a terminal status, late statuses) and failed polls, against ``git.hub`` running tasks.
TASKS_ENVIRONMENT: frozenset[Environment] = frozenset(
    {*CALLS_ENVIRONMENT, "task_created", "task_status", "late_answer", "call_failed"}
)
TASK_SERVERS = (SERVER_A,)

#: The ``approval`` part: the calls environment plus the approver's answers (SPEC §10.2).
APPROVAL_ENVIRONMENT: frozenset[Environment] = frozenset({*CALLS_ENVIRONMENT, "approve", "deny"})

#: The ``lazy`` part: the calls environment plus a host refresh (which wakes a dormant
#: server) and a failed listing (a first refresh that fails still settles the start).
LAZY_ENVIRONMENT: frozenset[Environment] = frozenset(
    {*CALLS_ENVIRONMENT, "refresh_requested", "list_failed"}
)

#: The server the ``lazy`` part starts ``lazy_when_cached`` with a cached catalog.
LAZY_SERVERS = (SERVER_A,)

#: The ``sessions`` part (SPEC §5.7, §8.13): the calls environment plus a ``list_changed``
#: stream the server ends and the host's new one, and a session the server forgets,
#: against ``git.hub`` doing both.
SESSIONS_ENVIRONMENT: frozenset[Environment] = frozenset(
    {*CALLS_ENVIRONMENT, "stream_ended", "relisten", "session_expired"}
)
SESSION_SERVERS = (SERVER_A,)

#: The ``reconfigure`` part (SPEC §3.7): four servers with one exclusive tool each, and
#: one reconfiguration that keeps ``a``, removes ``b``, replaces ``c`` (its replacement
#: lists ``search`` and ``write``) and adds ``d``. Its environment is kept small (SPEC
#: §10.2): installs and failed listings (a replacement whose first refresh fails removes
#: the old catalog), disconnects without reconnects (a replacement that loses its
#: connection first removes it too), answers and the host's cancel; no timeouts (they end
#: calls as a cancel does, with more transitions) and one step.
RECONFIGURE_SERVERS = (
    ServerSpec("a", versions=(((SEARCH,),),)),
    ServerSpec("b", versions=(((SEARCH,),),), change="removed"),
    ServerSpec("c", versions=(((SEARCH,),),), change="changed", replacement=(((SEARCH, WRITE),),)),
    ServerSpec("d", versions=(((SEARCH,),),), change="added"),
)
RECONFIGURE_ENVIRONMENT: frozenset[Environment] = frozenset(
    {"list_done", "list_failed", "disconnect", "call_responded", "cancel"}
)

#: The ``resources`` part (SPEC §11.20): one server whose catalog holds a tool and a
#: resource; its change replaces the resource (``file:///a`` leaves, ``file:///b``
#: arrives) and nothing else, so the refresh that reads it installs only because of its
#: resources. Reads are calls of the step's resources; the calls environment.
RESOURCE_A = ToolDef("file:///a", resource=True)
RESOURCE_B = ToolDef("file:///b", resource=True)
RESOURCES_SERVER = ServerSpec(
    "docs",
    versions=(
        ((SEARCH, RESOURCE_A),),  # v0
        ((SEARCH, RESOURCE_B),),  # v1: a resource leaves, another arrives
    ),
)


def installable(spec: ServerSpec) -> ServerSpec:
    """The versions of ``spec`` that can install, each as a single page (SPEC §10.2).

    Calls observe only the connection and the installed catalogs; rejected listings and
    page boundaries change neither, so the ``calls`` part leaves them out.
    """
    versions = []
    for version in range(len(spec.versions)):
        tools = STANDARD.listed_tools(spec, version)
        if all(t.valid for t in tools) and not any(
            natural_name(spec.name, t.name) in RESERVED for t in tools
        ):
            versions.append((tools,))
    return attrs.evolve(spec, versions=tuple(versions))


@attrs.frozen
class Part:
    """One exhaustively explored piece of the standard suite."""

    name: str
    bound: Bound


def standard_suite(
    policy: Literal["frozen", "revalidate"] = "revalidate",
    *,
    servers: int = 2,
    steps: int | None = None,
    calls: int | None = None,
) -> tuple[Part, ...]:
    """The standard bound, as the ten parts of SPEC §10.2, the large ones first: the
    order :func:`~mcpbind.model.suite.run_suite` hands them to its workers.

    ``catalogs``: every scripted version and page, every event; 2 steps, 1 call.
    ``calls``: the installable versions, calls-relevant environment; 2 steps, 3 calls.
    ``approval``: as ``calls`` with gating active (every MCP call waits for approve or
    deny); 2 steps, 2 calls.
    ``sessions``: as ``calls`` with ``git.hub`` ending its ``list_changed`` stream and
    forgetting the session (SPEC §5.7, §8.13), plus those events and the host's
    ``relisten``; 1 step, 2 calls.
    ``reconfigure``: four one-tool servers and the one reconfiguration of SPEC §3.7 (kept,
    removed, changed, added); installs, failed listings, disconnects, answers and
    cancels; 1 step, 2 calls; ``servers`` does not cut it.
    ``lazy``: as ``calls`` with ``git.hub`` started lazily from a cached catalog (SPEC
    §3.5), plus host refreshes and failed listings; 2 steps, 2 calls.
    ``retry``: as ``calls`` plus rejections unrun (-32020, SPEC §8.9) and failed listings;
    1 step (a retry keeps its step's lane), 2 calls.
    ``progress``: as ``calls`` with ``git_hub``'s tool timeout an idle timeout (SPEC
    §8.11), plus progress notifications; 1 step, 2 calls.
    ``tasks``: as ``calls`` with ``git.hub`` answering calls with tasks (SPEC §8.12), plus
    task statuses, late ones and failed polls; 1 step, 2 calls.
    ``resources``: one server listing a tool and a resource that its change replaces
    (SPEC §11.20); reads of the step's resources are calls; the calls environment; 2
    steps, 2 calls; ``servers`` does not cut it.
    ``steps``/``calls`` override every part.
    """
    specs = (SERVER_A_SPEC, SERVER_B_SPEC)
    if not 1 <= servers <= len(specs):
        raise ValueError(f"servers must be 1 or 2 in the scripted bound, got {servers}")
    catalogs = Bound(
        servers=specs[:servers],
        builtins=BUILTINS,
        extensions=EXTENSIONS,
        policy=policy,
        max_steps=2 if steps is None else steps,
        max_calls=1 if calls is None else calls,
        environment=CATALOGS_ENVIRONMENT,
    )
    call_part = Bound(
        servers=tuple(installable(s) for s in specs[:servers]),
        builtins=BUILTINS,
        extensions=EXTENSIONS,
        policy=policy,
        max_steps=2 if steps is None else steps,
        max_calls=3 if calls is None else calls,
        bad_arguments=False,
        environment=CALLS_ENVIRONMENT,
    )
    approval_part = attrs.evolve(
        call_part,
        max_calls=2 if calls is None else calls,
        environment=APPROVAL_ENVIRONMENT,
        approval=True,
    )
    lazy_part = attrs.evolve(
        call_part,
        max_calls=2 if calls is None else calls,
        environment=LAZY_ENVIRONMENT,
        lazy=tuple(s.name for s in specs[:servers] if s.name in LAZY_SERVERS),
    )
    retry_part = attrs.evolve(
        call_part,
        max_steps=1 if steps is None else steps,
        max_calls=2 if calls is None else calls,
        environment=RETRY_ENVIRONMENT,
    )
    progress_part = attrs.evolve(
        call_part,
        servers=_set_for(call_part.servers, IDLE_SERVERS, idle_timeout=True),
        max_steps=1 if steps is None else steps,
        max_calls=2 if calls is None else calls,
        environment=PROGRESS_ENVIRONMENT,
    )
    tasks_part = attrs.evolve(
        call_part,
        servers=_set_for(call_part.servers, TASK_SERVERS, tasks=True),
        max_steps=1 if steps is None else steps,
        max_calls=2 if calls is None else calls,
        environment=TASKS_ENVIRONMENT,
    )
    sessions_part = attrs.evolve(
        call_part,
        servers=_set_for(call_part.servers, SESSION_SERVERS, streams=True, sessions=True),
        max_steps=1 if steps is None else steps,
        max_calls=2 if calls is None else calls,
        environment=SESSIONS_ENVIRONMENT,
    )
    resources_part = Bound(
        servers=(RESOURCES_SERVER,),
        policy=policy,
        max_steps=2 if steps is None else steps,
        max_calls=2 if calls is None else calls,
        bad_arguments=False,
        environment=CALLS_ENVIRONMENT,
    )
    reconfigure_part = Bound(
        servers=RECONFIGURE_SERVERS,
        policy=policy,
        max_steps=1 if steps is None else steps,
        max_calls=2 if calls is None else calls,
        bad_arguments=False,
        environment=RECONFIGURE_ENVIRONMENT,
    )
    return (
        Part("catalogs", catalogs),
        Part("calls", call_part),
        Part("approval", approval_part),
        Part("sessions", sessions_part),
        Part("reconfigure", reconfigure_part),
        Part("lazy", lazy_part),
        Part("retry", retry_part),
        Part("progress", progress_part),
        Part("tasks", tasks_part),
        Part("resources", resources_part),
    )


Suite = Literal["standard", "nightly"]
SUITES: tuple[Suite, ...] = ("standard", "nightly")

#: The nightly bound (SPEC §10.6): ``(steps, calls)`` each part gets on top of the
#: standard suite's. One more call is where the rules' interactions grow (a third call
#: meets two others in flight, queued or retrying); the catalogs part's refreshes are
#: whole already, and with a second call it did not finish in 5 minutes.
NIGHTLY_DEEPER: Mapping[str, tuple[int, int]] = {
    "catalogs": (0, 0),
    "calls": (0, 1),
    "approval": (0, 1),
    "sessions": (0, 1),
    "reconfigure": (0, 1),
    "lazy": (0, 1),
    "retry": (0, 1),
    "progress": (0, 1),
    "tasks": (0, 1),
    "resources": (0, 1),
}


def suite(
    name: Suite,
    policy: Literal["frozen", "revalidate"] = "revalidate",
    *,
    servers: int = 2,
    steps: int | None = None,
    calls: int | None = None,
) -> tuple[Part, ...]:
    """The parts of the suite called ``name``: :func:`standard_suite`, or the nightly bound,
    each part deeper by :data:`NIGHTLY_DEEPER` (``steps``/``calls`` set the standard
    suite's, which the nightly bound adds to)."""
    parts = standard_suite(policy, servers=servers, steps=steps, calls=calls)
    if name == "standard":
        return parts
    deeper = []
    for part in parts:
        more_steps, more_calls = NIGHTLY_DEEPER[part.name]
        bound = attrs.evolve(
            part.bound,
            max_steps=part.bound.max_steps + more_steps,
            max_calls=part.bound.max_calls + more_calls,
        )
        deeper.append(Part(part.name, bound))
    return tuple(deeper)


def _set_for(
    specs: tuple[ServerSpec, ...], names: tuple[str, ...], **changes: Any
) -> tuple[ServerSpec, ...]:
    """``specs`` with the flags ``changes`` set on the servers called one of ``names``."""
    return tuple(attrs.evolve(s, **changes) if s.name in names else s for s in specs)


def standard_bound(
    policy: Literal["frozen", "revalidate"] = "revalidate",
    *,
    servers: int = 2,
    steps: int = 2,
    calls: int = 3,
) -> Bound:
    """Every scripted version, page and event, with ``steps`` steps and ``calls`` calls."""
    return attrs.evolve(
        standard_suite(policy, servers=servers)[0].bound, max_steps=steps, max_calls=calls
    )


def describe(bound: Bound) -> dict[str, object]:
    """The bound as JSON-ready data (for ``mcpbind explore --json``)."""
    environment = None if bound.environment is None else sorted(bound.environment)
    return {
        "servers": [
            {
                "name": s.name,
                "versions": [
                    [[attrs.asdict(t) for t in page] for page in version] for version in s.versions
                ],
                "parallel": s.parallel,
                "tool_timeout_sec": s.tool_timeout_sec,
                "idle_timeout": s.idle_timeout,
                "tool_max_sec": s.tool_max_sec,
                "tasks": s.tasks,
                "streams": s.streams,
                "sessions": s.sessions,
                "enabled_tools": None if s.enabled_tools is None else sorted(s.enabled_tools),
                "disabled_tools": sorted(s.disabled_tools),
                "change": s.change,
                "replacement": [
                    [[attrs.asdict(t) for t in page] for page in version]
                    for version in s.replacement
                ],
            }
            for s in bound.servers
        ],
        "builtins": list(bound.builtins),
        "extensions": {contributor: list(names) for contributor, names in bound.extensions},
        "policy": bound.policy,
        "steps": bound.max_steps,
        "calls": bound.max_calls,
        "max_name_length": bound.max_name_length,
        "bad_arguments": bound.bad_arguments,
        "environment": environment,
        "approval": bound.approval,
        "lazy": list(bound.lazy),
        "rearms": bound.rearms,
    }


def load_bound(data: Mapping[str, Any]) -> Bound:
    """The bound :func:`describe` wrote (a replay file's ``bound``, SPEC §14.5)."""
    servers = []
    for server in data["servers"]:
        enabled = server.get("enabled_tools")
        versions, replacement = (
            tuple(
                tuple(tuple(ToolDef(**tool) for tool in page) for page in version)
                for version in server.get(key, ())
            )
            for key in ("versions", "replacement")
        )
        servers.append(
            ServerSpec(
                server["name"],
                versions,
                parallel=bool(server.get("parallel", False)),
                tool_timeout_sec=float(server.get("tool_timeout_sec", 300.0)),
                idle_timeout=bool(server.get("idle_timeout", False)),
                tool_max_sec=float(server.get("tool_max_sec", 3600.0)),
                tasks=bool(server.get("tasks", False)),
                streams=bool(server.get("streams", False)),
                sessions=bool(server.get("sessions", False)),
                enabled_tools=None if enabled is None else frozenset(enabled),
                disabled_tools=frozenset(server.get("disabled_tools", ())),
                change=server.get("change"),
                replacement=replacement,
            )
        )
    environment = data.get("environment")
    return Bound(
        servers=tuple(servers),
        builtins=tuple(data.get("builtins", ())),
        extensions=tuple((k, tuple(v)) for k, v in data.get("extensions", {}).items()),
        policy=data.get("policy", "revalidate"),
        max_steps=int(data.get("steps", 2)),
        max_calls=int(data.get("calls", 3)),
        max_name_length=int(data.get("max_name_length", 64)),
        bad_arguments=bool(data.get("bad_arguments", True)),
        environment=None if environment is None else frozenset(environment),
        approval=bool(data.get("approval", False)),
        lazy=tuple(data.get("lazy", ())),
        rearms=int(data.get("rearms", 2)),
    )
