"""Router: one call, from acceptance to its one terminal result (SPEC §8, INV-2, INV-4).

Theory of operation
-------------------
:meth:`Router.call` follows the model's call rules (``model/rules.py``: ``_on_call``,
``dispatch``, ``end_call``) in the order of SPEC §8.2:

1. a ``call_id`` used before is refused (:class:`DuplicateCallId`, no result);
2. the name is resolved in the step's own snapshot (INV-2), else ``unsupported``;
3. the arguments must be a JSON object, else ``error``; a builtin or extension tool now
   runs the handler its binding captured, ``tool_search`` ranks the step's tools;
4. a call that approval gates waits for its approver (INV-10), else ``denied``; a tool
   of a server a reconfiguration removed ends ``unavailable`` (SPEC §11.17);

then, in :meth:`Router._dispatch` (the model's ``dispatch``):

5. under ``revalidate`` a tool its server no longer lists ends ``unavailable``; a call to
   a lazily started server first waits for the start to settle (INV-11), then 5 again;
6. a disconnected server fails the call at once (``NOT_CONNECTED``);
7. an exclusive call takes its step's lane (INV-9); then ``tools/call`` is sent.

Every check decides synchronously and returns an :class:`Ending` or None (go on); none
makes a result. The whole route runs inside the call's cancel scope (:mod:`.calls`):
``Host.cancel``, the tool timeout and a disconnect interrupt it (INV-7, LIVE-1, INV-8),
and :meth:`.calls.endings.CallEndings.ended_early` reads how. Exceptions become endings in
one place, :meth:`.calls.endings.CallEndings.translate`; the result is made in one place,
:meth:`Router.end_call`, exactly once per accepted call (INV-4). Only
:class:`DuplicateCallId` escapes.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

import attrs

from mcpbind.model import texts
from mcpbind.model.naming import resource_name

from .calls.approval import ApprovalGate
from .calls.arguments import parse_arguments
from .calls.encoding import OutputLimits, encode_read, encode_result, wall_time_header
from .calls.endings import CallEndings, Ending
from .calls.lanes import Lanes
from .calls.local import list_resources, run_local, tool_search
from .calls.progress import ProgressCounts
from .calls.table import CallTable, PendingCall
from .catalog.planner import Planner, StepSnapshot
from .catalog.registry import Binding, RegistryState, ToolRegistry
from .catalog.resources import READ_RESOURCE, read_binding
from .config.host import HostConfig
from .config.recorder import Recorder, records
from .config.server import ServerConfig
from .errors import DuplicateCallId
from .sending import META_CALL_ID, META_SESSION_ID, META_STEP, Sending
from .server.runtime import ServerRuntime
from .values import ToolResult

__all__ = ["META_CALL_ID", "META_SESSION_ID", "META_STEP", "Router", "RouterStatistics"]


logger = logging.getLogger("mcpbind.router")
_NOTHING: frozenset[str] = frozenset()


@attrs.frozen
class RouterStatistics:
    results: Mapping[str, int]
    """Terminal results so far, by status."""
    late_dropped: int
    """Answers that arrived after their call had ended (dropped, INV-4)."""
    progress: int = 0
    late_progress: int = 0


class Router(Sending):
    """Routes the calls of one host; see the module docstring for the order of checks."""

    def __init__(
        self,
        *,
        config: HostConfig,
        servers: Mapping[str, ServerRuntime],
        calls: CallTable,
        lanes: Lanes,
        approvals: ApprovalGate,
        planner: Planner,
        registry: ToolRegistry,
        recorder: Recorder,
        session_id: str,
    ) -> None:
        self.config = config
        self.servers = servers
        self.calls = calls
        self.lanes = lanes
        self.approvals = approvals
        self.planner = planner
        self.registry = registry
        self.recorder = recorder
        self.recording = records(recorder)
        """Whether the recorder keeps anything: else the events of a call are not made."""
        self.session_id = session_id
        self._configs: dict[str, ServerConfig] = {}
        """Each server's settings, kept after a reconfiguration removed it: a call that
        ended with it may still be making its result."""
        self._endings = CallEndings(recorder, self._configs.__getitem__)
        self._limits = OutputLimits.build(config.output_limit, {})
        self.reconfigured()
        self._results: Counter[str] = Counter()
        self._late_dropped = 0
        self._progress = ProgressCounts()

    def reconfigured(self) -> None:
        """The host's servers changed (SPEC §11.17): read their settings again."""
        configs = {name: r.config for name, r in self.servers.items()}
        self._configs.update(configs)
        self._limits = OutputLimits.build(self.config.output_limit, configs)

    def statistics(self) -> RouterStatistics:
        counts = self._progress
        return RouterStatistics(
            dict(self._results), self._late_dropped, counts.delivered, counts.late
        )

    # --- the call ------------------------------------------------------------------------

    async def call(self, step: StepSnapshot, call_id: str, name: str, arguments: Any) -> ToolResult:
        """Route one call of ``step`` and return its terminal result (SPEC §8.2)."""
        if self.recording:
            recorded = _read_name(arguments) if name == READ_RESOURCE else name
            self.recorder.event("call", {"step": step.step, "call_id": call_id, "name": recorded})
        try:
            call = self.calls.open(call_id)  # 1. INV-4: a call_id is accepted once
        except DuplicateCallId as error:
            self.recorder.refused(call_id, str(error))
            raise
        ending: Ending | None = None
        try:
            with call.scope:
                ending = await self._route(call, step, name, arguments)
        except Exception as error:  # the one place where exceptions become endings
            header = wall_time_header(self.calls.clock() - call.started)
            ending = self._endings.translate(call, error, header)
        finally:
            self.calls.close(call)
        if ending is None or call.ended_by == "disconnected":
            ending = self._endings.ended_early(call)
        return self.end_call(call_id, ending)

    def end_call(self, call_id: str, ending: Ending) -> ToolResult:
        """The one terminal result of an accepted call (INV-4): counted and reported."""
        result = ToolResult(call_id, ending.status, ending.output, ending.items)
        self._results[ending.status] += 1
        if self.recording:
            self.recorder.result(result)
        return result

    def cancel(self, call_id: str) -> None:
        """End the pending call ``call_id`` as ``cancelled``; no effect once it ended."""
        self.calls.cancel(call_id)

    def late_answer(self, call_id: str, *, task: bool = False) -> None:
        """A connection reports an answer for a call that already ended (INV-4)."""
        self._late_dropped += 1
        self.recorder.event("task_status" if task else "call_responded", {"call_id": call_id})
        self.recorder.late_dropped(call_id)

    # --- the checks of SPEC §8.2, in the model's order -----------------------------------

    async def _route(
        self, call: PendingCall, step: StepSnapshot, name: str, arguments: Any
    ) -> Ending:
        binding = step.binding(name)  # 2. INV-2: the step's own snapshot
        if binding is None:
            return Ending("unsupported", texts.UNSUPPORTED.format(name=name))
        parsed = parse_arguments(arguments)  # 3. SPEC §8.1
        if isinstance(parsed, str):
            return Ending("error", texts.BAD_ARGUMENTS.format(name=name, problem=parsed))
        if self.planner.is_resource_tool(binding):  # SPEC §11.20
            seen = self.resources_seen(step)
            if binding.name != READ_RESOURCE:
                return list_resources(seen, binding.name, parsed)
            target = read_binding(seen, parsed)
            if isinstance(target, str):
                return Ending("error", target)
            binding = target  # a read is a call of that server: the rest is the same
        call.resolve(binding)
        if binding.server is None:
            if self.planner.is_search(binding):
                return tool_search(self.planner, step, parsed)
            return await run_local(call, binding, parsed)
        denied = await self.approvals.admit(  # 4. INV-10
            call,
            binding,
            name=name,
            arguments=parsed,
            config=self._configs[binding.server],
            recorder=self.recorder,
        )
        if denied is not None:
            return denied
        runtime = self.servers.get(binding.server)
        if runtime is None:  # SPEC §11.17: a reconfiguration removed it; both policies
            return Ending("unavailable", texts.REMOVED.format(name=name, server=binding.server))
        return await self._dispatch(
            call, step=step.step, binding=binding, name=name, arguments=parsed, runtime=runtime
        )

    def resources_seen(self, step: StepSnapshot) -> RegistryState:
        """INV-2 (SPEC §11.20): the resource tools answer from the step's own registry
        state, never the live one."""
        return step.state

    async def _dispatch(
        self,
        call: PendingCall,
        *,
        step: int,
        binding: Binding,
        name: str,
        arguments: dict[str, Any],
        runtime: ServerRuntime,
    ) -> Ending:
        """The model's ``dispatch``: an accepted (and approved) call of an MCP tool."""
        gone = self._revalidated(binding, name)  # 5. SPEC §7.3
        if gone is not None:
            return gone
        # SPEC §8.4: the tool timeout runs from here (after any approval; a wait for a lazy
        # start counts); the wall time runs from acceptance.
        settings = runtime.config
        cap = settings.tool_max_sec if settings.idle_timeout else math.inf
        self.calls.attach(call, runtime.name, settings.tool_timeout_sec, cap)
        if runtime.starting:
            # SPEC §11.12 (INV-11): a lazily started server is waited for, dormant or
            # connected, until its first refresh has ended; not failed fast, not sent to.
            call.wait_start()
            await runtime.wait_started(call.order)
            if runtime.connection is None:
                return Ending("failed", texts.NOT_CONNECTED.format(server=runtime.name))
            gone = self._revalidated(binding, name)  # against the live catalog now
            if gone is not None:
                return gone
        elif runtime.connection is None:  # 6. INV-8: fail fast, nothing sent
            return Ending("failed", texts.NOT_CONNECTED.format(server=runtime.name))
        call.dispatch()
        exclusive = not (binding.read_only or runtime.config.supports_parallel_tool_calls)
        raw = await self._send(  # 7. INV-9, then the wire
            call,
            step=step,
            binding=binding,
            name=name,
            arguments=arguments,
            runtime=runtime,
            exclusive=exclusive,
        )
        if isinstance(raw, Ending):  # the retry of SPEC §8.9 or the task of §8.12 ended it
            return raw
        if binding.resource is not None:  # SPEC §11.20: its contents as a tool's content
            raw = encode_read(raw)
        status, output, items = encode_result(
            raw,
            self.calls.clock() - call.accepted,
            server=runtime.name,
            tool=binding.remote_name,
            limit=self._limits.of(runtime.name, binding.remote_name),
            image_capable=self.config.image_capable,
            output=binding.spec.output_check,
        )
        return Ending(status, output, items)

    def _revalidated(self, binding: Binding, name: str) -> Ending | None:
        """SPEC §7.3: under ``revalidate``, a tool its server no longer lists ends
        ``unavailable`` with nothing sent; None when the call may go on."""
        if self.config.binding_policy != "revalidate" or binding.resource == "unlisted":
            return None  # a URI the step never listed is read as given (SPEC §11.20)
        state = self.registry.state
        if binding.resource == "listed":
            if binding.remote_name in state.catalog(binding.source).resources.uris:
                return None
            text = texts.RESOURCE_UNAVAILABLE.format(uri=binding.remote_name, server=binding.server)
            return Ending("unavailable", text)
        if binding.remote_name in state.live_remotes.get(binding.source, _NOTHING):
            return None
        text = texts.UNAVAILABLE.format(name=name, server=binding.server, tool=binding.remote_name)
        return Ending("unavailable", text)


def _read_name(arguments: Any) -> str:
    """How a trace names a ``read_mcp_resource`` call (SPEC §11.20, §14.1): the model's
    name of the read, ``read_mcp_resource(<server>, <uri>)``, when the arguments give both;
    else the tool's own name."""
    parsed = parse_arguments(arguments)
    if isinstance(parsed, dict):
        server, uri = parsed.get("server"), parsed.get("uri")
        if isinstance(server, str) and isinstance(uri, str):
            return resource_name(server.strip(), uri.strip())
    return READ_RESOURCE
