"""Deliberately broken rule sets: proof that the invariant checks can fail (SPEC §10.4).

Each mutant overrides one hook of :class:`~mcpbind.model.rules.Rules` and names the
invariant that must catch it. Nothing in normal use imports this module: only the
explorer's ``--mutant`` option and the tests do.
"""

from __future__ import annotations

import attrs

from .naming import NameCollision, NamePartition, name_listing
from .rules import Rules, _evolve, _replace_call, _with_server
from .texts import CANCELLED, CallStatus
from .values import (
    Binding,
    Call,
    CallRecord,
    CallRejected,
    Deny,
    Event,
    Exclusion,
    ListPage,
    Output,
    Published,
    Reconfigure,
    Registry,
    Result,
    Sent,
    ServerSpec,
    ServerState,
    SessionExpired,
    SourceCatalog,
    State,
    StreamEnded,
    TaskCreated,
    ToolDef,
    Transition,
    evolve,
)

__all__ = ["MUTANTS", "Mutant", "mutant"]


class Mutant(Rules):
    target = ""
    """The invariant that must catch this mutant."""
    description = ""
    part = "catalogs"
    """The part of the standard suite whose interleavings expose it (SPEC §10.4)."""


class InstallPageByPage(Mutant):
    name = "install_page_by_page"
    target = "INV-3"
    description = "publishes each tools/list page as it arrives"

    def _on_list_page(self, state: State, event: Event) -> Transition:
        assert isinstance(event, ListPage)
        t = super()._on_list_page(state, event)
        i = state.bound.index(event.server)
        spec = state.bound.servers[i]
        refresh = t.state.servers[i].refresh
        assert refresh is not None
        partial = tuple(
            tool for page in spec.versions[refresh.version][: refresh.pages] for tool in page
        )
        outputs: list[Output] = list(t.outputs)
        return Transition(self.install(t.state, spec, partial, outputs), tuple(outputs))


class DropInvalidTools(Mutant):
    name = "drop_invalid_tools"
    target = "INV-3"
    description = "installs a listing without its invalid tools instead of rejecting it"

    def install(
        self, state: State, spec: ServerSpec, tools: tuple[ToolDef, ...], outputs: list[Output]
    ) -> State:
        return super().install(state, spec, tuple(t for t in tools if t.valid), outputs)


class InstallExcludedTool(Mutant):
    name = "install_excluded_tool"
    target = "INV-3"
    description = "installs a tool the host must leave out (taskSupport required)"

    def exclusions(self, spec: ServerSpec, kept: tuple[ToolDef, ...]) -> tuple[Exclusion, ...]:
        return ()


class RejectExcludableListing(Mutant):
    name = "reject_excludable_listing"
    target = "INV-3"
    description = "rejects a whole listing for a tool it should only leave out"

    def rejects(self, tool: ToolDef) -> bool:
        return not tool.valid or tool.excluded is not None


class BumpGenerationWhenUnchanged(Mutant):
    name = "bump_generation_when_unchanged"
    target = "INV-1"
    description = "advances the generation on a refresh that finds the catalog unchanged"

    def install(
        self, state: State, spec: ServerSpec, tools: tuple[ToolDef, ...], outputs: list[Output]
    ) -> State:
        before = len(outputs)
        state = super().install(state, spec, tools, outputs)
        if any(getattr(o, "status", None) == "unchanged" for o in outputs[before:]):
            registry = state.registry
            state = _evolve(
                state,
                registry=Registry(registry.generation + 1, registry.catalogs, registry.remembered),
            )
        return state


class ResolveThroughLiveRegistry(Mutant):
    name = "resolve_through_live_registry"
    target = "INV-2"
    description = "routes a call by the live registry instead of its step's snapshot"

    def resolve(self, state: State, step: int, name: str) -> Binding | None:
        return state.registry.lookup(name)


class SnapshotByReference(Mutant):
    name = "snapshot_by_reference"
    target = "INV-2"
    description = "steps share the live registry, so a refresh changes sampled steps"

    def publish(
        self,
        state: State,
        catalog: SourceCatalog,
        outputs: list[Output],
        excluded: tuple[Exclusion, ...] = (),
    ) -> State:
        state = super().publish(state, catalog, outputs, excluded)
        steps = tuple(None if s is None else state.registry for s in state.steps)
        return _evolve(state, steps=steps)


class DeliverLateAnswer(Mutant):
    name = "deliver_late_answer"
    target = "INV-4"
    description = "turns an answer that arrives after cancel/timeout into a second result"

    def late_answer(self, state: State, record: CallRecord) -> Transition:
        t = super().late_answer(state, record)
        return Transition(t.state, (*t.outputs, Result(record.call_id, "ok")))


class AcceptReusedCallId(Mutant):
    name = "accept_reused_call_id"
    target = "INV-4"
    description = "accepts a call whose call_id was already used"

    def accept_reused_id(self, event: Call) -> bool:
        return True


class ShadowBuiltin(Mutant):
    name = "shadow_builtin"
    target = "INV-5"
    description = "lets an MCP tool take a name that a builtin or extension tool owns"

    def partition(self, registry: Registry, spec: ServerSpec) -> NamePartition:
        return attrs.evolve(super().partition(registry, spec), reserved={})


class RenameOnEveryRefresh(Mutant):
    name = "rename_on_every_refresh"
    target = "INV-6"
    description = "names a listing from scratch, so an incumbent can lose its name"

    def assign(
        self, registry: Registry, spec: ServerSpec, kept: tuple[ToolDef, ...], max_length: int
    ) -> dict[tuple[str, str], str] | NameCollision:
        return name_listing(
            spec.name,
            (t.name for t in kept),
            attrs.evolve(self.partition(registry, spec), held={}),
            remembered={},
            max_length=max_length,
        )


class ForgetCancelNotification(Mutant):
    name = "forget_cancel_notification"
    target = "INV-7"
    description = "ends a cancelled or timed-out call without telling the server"

    def cancel_messages(self, server: str, record: CallRecord) -> tuple[Output, ...]:
        return ()


class CancelAfterEndEndsAgain(Mutant):
    name = "cancel_after_end_ends_again"
    target = "INV-4"
    description = "gives a call the host cancels after it ended a second result, cancelled"
    part = "calls"

    def cancel_after_end(self, state: State, record: CallRecord) -> Transition:
        return Transition(state, (Result(record.call_id, "cancelled", CANCELLED),))


class LeaveCallsOnDisconnect(Mutant):
    name = "leave_calls_on_disconnect"
    target = "INV-8"
    description = "leaves a disconnected server's calls in flight"

    def fail_calls(self, state: State, server: str, outputs: list[Output]) -> State:
        return state


class IgnoreExclusiveLane(Mutant):
    name = "ignore_exclusive_lane"
    target = "INV-9"
    description = "sends exclusive calls without waiting for the step's lane"
    part = "calls"

    def lane_busy(self, state: State, step: int) -> bool:
        return False


class StuckLane(Mutant):
    name = "stuck_lane"
    target = "LIVE-1"
    description = (
        "a cancelled or timed-out lane holder never frees the lane, and queued calls "
        "have no deadline"
    )
    part = "calls"

    def releases_lane(self, record: CallRecord, status: CallStatus) -> bool:
        return record.exclusive and status not in ("cancelled", "timed_out")

    def can_time_out(self, record: CallRecord) -> bool:
        return record.phase != "queued"


class ForgetQueuedRefresh(Mutant):
    name = "forget_queued_refresh"
    target = "LIVE-2"
    description = "notes a list_changed that arrives during a refresh but never queues one"

    def coalesce(self, state: State, i: int, *, stale: bool) -> Transition:
        server = state.servers[i]
        assert server.refresh is not None
        refresh = evolve(server.refresh, fresh=server.refresh.fresh and not stale)
        return Transition(_with_server(state, i, evolve(server, refresh=refresh)))


class SkipApproval(Mutant):
    name = "skip_approval"
    target = "INV-10"
    description = "sends a gated call at once instead of waiting for its approval"
    part = "approval"

    def needs_approval(self, state: State, binding: Binding) -> bool:
        return False


class DenySends(Mutant):
    name = "deny_sends"
    target = "INV-10"
    description = "treats a deny like an approval: the declined call is sent"
    part = "approval"

    def _on_deny(self, state: State, event: Event) -> Transition:
        assert isinstance(event, Deny)
        record = state.call(event.call_id)
        assert record is not None
        return self.dispatch(state, record)


class TimeOutWhileApproving(Mutant):
    name = "time_out_while_approving"
    target = "INV-10"
    description = "runs the tool timeout while the call waits for its approval"
    part = "approval"

    def can_time_out(self, record: CallRecord) -> bool:
        return True


class FailFastWhenDormant(Mutant):
    name = "fail_fast_when_dormant"
    target = "INV-11"
    description = "fails a call to a dormant server at once (NOT_CONNECTED) instead of waking it"
    part = "lazy"

    def waits_for_start(self, state: State, i: int) -> bool:
        return False


class SendWhileStarting(Mutant):
    name = "send_while_starting"
    target = "INV-11"
    description = "sends a call to a server still running its first refresh instead of waiting"
    part = "lazy"

    def waits_for_start(self, state: State, i: int) -> bool:
        return state.servers[i].start == "dormant"


class StrandWaitersOnLostStart(Mutant):
    name = "strand_waiters_on_lost_start"
    target = "INV-11"
    description = "leaves the calls waiting for a start waiting when its connection is lost"
    part = "lazy"

    def lost_start_fails(self, record: CallRecord) -> bool:
        return False


class ForgetCancellationsAtClose(Mutant):
    name = "forget_cancellations_at_close"
    target = "INV-12"
    description = "closes the sessions without the cancellations owed to the calls in flight"
    part = "calls"

    def close_cancellations(self, server: str, record: CallRecord) -> tuple[Output, ...]:
        return ()


class LeaveUnsentCallsAtClose(Mutant):
    name = "leave_unsent_calls_at_close"
    target = "INV-12"
    description = "ends only the calls in flight at close; queued or waiting calls keep waiting"
    part = "calls"

    def ends_at_close(self, record: CallRecord) -> bool:
        return record.phase == "sent"


class ResendAtOnce(Mutant):
    name = "resend_at_once"
    target = "INV-13"
    description = "sends a call the server rejected unrun again at once, with no refresh"
    part = "retry"

    def _on_call_rejected(self, state: State, event: Event) -> Transition:
        assert isinstance(event, CallRejected)
        record = state.call(event.call_id)
        assert record is not None
        if record.retried:
            return super()._on_call_rejected(state, event)
        assert record.binding is not None
        assert record.binding.server is not None
        state = _replace_call(state, evolve(record, retried=True))
        return Transition(
            state, (Sent(record.binding.server, "tools/call", record.binding.remote_name),)
        )


class RetryEveryRejection(Mutant):
    name = "retry_every_rejection"
    target = "INV-13"
    description = "a call the server keeps rejecting is refreshed for and sent again forever"
    part = "retry"

    def _on_call_rejected(self, state: State, event: Event) -> Transition:
        assert isinstance(event, CallRejected)
        record = state.call(event.call_id)
        assert record is not None
        state = _replace_call(state, evolve(record, retried=False))
        return super()._on_call_rejected(state, event)


class RetryOnAStaleRefresh(Mutant):
    name = "retry_on_a_stale_refresh"
    target = "INV-13"
    description = "a rejected call is sent again when the refresh already in flight ends"
    part = "retry"

    def waits_behind(self, server: ServerState) -> bool:
        return False


class UncappedProgress(Mutant):
    name = "uncapped_progress"
    target = "LIVE-1"
    description = "progress re-arms the idle timeout without counting towards a cap"
    part = "progress"

    def rearmed(self, record: CallRecord) -> CallRecord:
        return record


class CancelTaskWithNotification(Mutant):
    name = "cancel_task_with_notification"
    target = "INV-7"
    description = "cancels a call that runs as a task with notifications/cancelled"
    part = "tasks"

    def cancel_messages(self, server: str, record: CallRecord) -> tuple[Output, ...]:
        return (Sent(server, "notifications/cancelled", record.call_id),)


class ResultFromLateTaskStatus(Mutant):
    name = "result_from_late_task_status"
    target = "INV-4"
    description = "turns a task status that comes after the call ended into a second result"
    part = "tasks"

    def late_task_status(self, state: State, record: CallRecord) -> Transition:
        t = super().late_task_status(state, record)
        return Transition(t.state, (*t.outputs, Result(record.call_id, "ok")))


class ReleaseLaneForTask(Mutant):
    name = "release_lane_for_task"
    target = "INV-9"
    description = "an exclusive call gives up its step's lane once it runs as a task"
    part = "tasks"

    def holds_lane(self, record: CallRecord) -> bool:
        return record.phase in ("sent", "retrying")

    def _on_task_created(self, state: State, event: Event) -> Transition:
        assert isinstance(event, TaskCreated)
        t = super()._on_task_created(state, event)
        record = state.call(event.call_id)
        assert record is not None
        outputs: list[Output] = []
        return Transition(self.hand_off(t.state, record.step, outputs), tuple(outputs))


class RefreshBeforeRelisten(Mutant):
    name = "refresh_before_relisten"
    target = "LIVE-3"
    description = (
        "refreshes when the server ends its list_changed stream and not when the host "
        "listens again, so a change while the stream was down stays unread"
    )
    part = "sessions"

    def _on_stream_ended(self, state: State, event: Event) -> Transition:
        assert isinstance(event, StreamEnded)
        t = super()._on_stream_ended(state, event)
        i = state.bound.index(event.server)
        state = _with_server(t.state, i, evolve(t.state.servers[i], owed=True))
        return self.notified(state, i)

    def relistened(self, state: State, i: int) -> Transition:
        return Transition(state)


class RelistenWithoutRefresh(Mutant):
    name = "relisten_without_refresh"
    target = "LIVE-3"
    description = "listens again without refreshing, so what was missed meanwhile stays unread"
    part = "sessions"

    def relistened(self, state: State, i: int) -> Transition:
        return Transition(state)


class ExpiredCallResentAtOnce(Mutant):
    name = "expired_call_resent_at_once"
    target = "INV-14"
    description = (
        "sends a call refused for an expired session again at once on the new session, "
        "before its first listing ended"
    )
    part = "sessions"

    def wait_for_new_session(self, state: State, record: CallRecord) -> Transition:
        assert record.binding is not None
        assert record.binding.server is not None
        state = _replace_call(state, evolve(record, retried=True))
        return Transition(
            state, (Sent(record.binding.server, "tools/call", record.binding.remote_name),)
        )


class ExpiredCallResentEveryTime(Mutant):
    name = "expired_call_resent_every_time"
    target = "INV-14"
    description = "a call refused again for an expired session waits and is sent again, forever"
    part = "sessions"

    def _on_session_expired(self, state: State, event: Event) -> Transition:
        assert isinstance(event, SessionExpired)
        record = state.call(event.call_id)
        assert record is not None
        state = _replace_call(state, evolve(record, retried=False))
        return super()._on_session_expired(state, event)


class ExpiryKeepsOtherCalls(Mutant):
    name = "expiry_keeps_other_calls"
    target = "INV-14"
    description = "leaves the server's other calls in flight on the session it no longer knows"
    part = "sessions"

    def fail_expired_calls(
        self, state: State, server: str, refused: str, outputs: list[Output]
    ) -> State:
        return state


class AcceptCallsAfterClose(Mutant):
    name = "accept_calls_after_close"
    target = "INV-12"
    description = "accepts a call after the host closed"

    def accepts_after_close(self) -> bool:
        return True


class ReconfigureInTwoGenerations(Mutant):
    name = "reconfigure_in_two_generations"
    target = "INV-1"
    description = (
        "publishes a reconfiguration's removals, then each added server's empty catalog "
        "in a generation of its own"
    )
    part = "reconfigure"

    def _on_reconfigure(self, state: State, event: Event) -> Transition:
        assert isinstance(event, Reconfigure)
        t = super()._on_reconfigure(state, event)
        registry = t.state.registry
        generation = registry.generation + 1
        added = [
            Published(generation, s.source, ()) for s in state.bound.servers if s.change == "added"
        ]
        if not added:
            return t
        bumped = Registry(generation, registry.catalogs, registry.remembered)
        return Transition(_evolve(t.state, registry=bumped), (*t.outputs, *added))


class RestartUnchangedServer(Mutant):
    name = "restart_unchanged_server"
    target = "INV-16"
    description = "a reconfiguration restarts every server it keeps, not only the changed ones"
    part = "reconfigure"

    def ends_session(self, spec: ServerSpec) -> bool:
        return spec.change != "added"


class DropCancellationOnRemoval(Mutant):
    name = "drop_cancellation_on_removal"
    target = "INV-16"
    description = (
        "ends the calls in flight on a removed or replaced server without telling it, "
        "then closes its session"
    )
    part = "reconfigure"

    def reconfigure_cancellations(self, server: str, record: CallRecord) -> tuple[Output, ...]:
        return ()


class EmptyChangedCatalogAtOnce(Mutant):
    name = "empty_changed_catalog_at_once"
    target = "INV-15"
    description = (
        "empties a changed server's catalog at the reconfiguration instead of keeping it "
        "until its replacement has listed"
    )
    part = "reconfigure"

    def emptied_at_reconfiguration(self, spec: ServerSpec) -> bool:
        return spec.change in ("removed", "changed")


class KeepOldCatalogOnFailedReplacement(Mutant):
    name = "keep_old_catalog_on_failed_replacement"
    target = "INV-15"
    description = (
        "keeps the old server's catalog installed when its replacement's first refresh "
        "fails or its connection is lost"
    )
    part = "reconfigure"

    def replaced(self, state: State, i: int, outputs: list[Output]) -> State:
        return state


class SendToRemovedServer(Mutant):
    name = "send_to_removed_server"
    target = "INV-16"
    description = (
        "frozen: sends a call of a step pinned before a removal to the removed server, as "
        "if its session were kept for the step"
    )
    part = "reconfigure"

    def to_absent(self, state: State, record: CallRecord) -> Transition:
        binding = record.binding
        assert binding is not None
        assert binding.server is not None
        if state.bound.policy != "frozen":
            return super().to_absent(state, record)
        state = _replace_call(state, evolve(record, phase="sent"))
        return Transition(state, (Sent(binding.server, "tools/call", binding.remote_name),))


class ReadThroughLiveResources(Mutant):
    name = "read_through_live_resources"
    target = "INV-2"
    description = "routes a resource read by the live catalog's resources, not its step's"
    part = "resources"

    def resolve(self, state: State, step: int, name: str) -> Binding | None:
        captured = super().resolve(state, step, name)
        if captured is None or not captured.resource:
            return captured
        return state.registry.lookup(name)


class PublishResourcesApart(Mutant):
    name = "publish_resources_apart"
    target = "INV-1"
    description = "publishes a refresh's tools, then its resources in a generation of their own"
    part = "resources"

    def publish(
        self,
        state: State,
        catalog: SourceCatalog,
        outputs: list[Output],
        excluded: tuple[Exclusion, ...] = (),
    ) -> State:
        # Every install gives its resources the new source generation, so a refresh with
        # resources never keeps the old ones: only a refresh without any is not split.
        if not catalog.resources:
            return super().publish(state, catalog, outputs, excluded)
        old = state.registry.catalog(catalog.source)
        tools_only = attrs.evolve(catalog, resources=old.resources)
        state = super().publish(state, tools_only, outputs, excluded)
        registry = state.registry
        generation = registry.generation + 1
        catalogs = tuple(catalog if c.source == catalog.source else c for c in registry.catalogs)
        outputs.append(
            Published(generation, catalog.source, tuple(b.name for b in catalog.bindings))
        )
        return _evolve(state, registry=Registry(generation, catalogs, registry.remembered))


MUTANTS: tuple[Mutant, ...] = (
    BumpGenerationWhenUnchanged(),
    ResolveThroughLiveRegistry(),
    SnapshotByReference(),
    InstallPageByPage(),
    DropInvalidTools(),
    InstallExcludedTool(),
    RejectExcludableListing(),
    DeliverLateAnswer(),
    AcceptReusedCallId(),
    ShadowBuiltin(),
    RenameOnEveryRefresh(),
    ForgetCancelNotification(),
    CancelAfterEndEndsAgain(),
    LeaveCallsOnDisconnect(),
    IgnoreExclusiveLane(),
    StuckLane(),
    ForgetQueuedRefresh(),
    SkipApproval(),
    DenySends(),
    TimeOutWhileApproving(),
    FailFastWhenDormant(),
    SendWhileStarting(),
    StrandWaitersOnLostStart(),
    ForgetCancellationsAtClose(),
    LeaveUnsentCallsAtClose(),
    AcceptCallsAfterClose(),
    ResendAtOnce(),
    RetryEveryRejection(),
    RetryOnAStaleRefresh(),
    UncappedProgress(),
    CancelTaskWithNotification(),
    ResultFromLateTaskStatus(),
    ReleaseLaneForTask(),
    RefreshBeforeRelisten(),
    RelistenWithoutRefresh(),
    ExpiredCallResentAtOnce(),
    ExpiredCallResentEveryTime(),
    ExpiryKeepsOtherCalls(),
    ReconfigureInTwoGenerations(),
    RestartUnchangedServer(),
    DropCancellationOnRemoval(),
    EmptyChangedCatalogAtOnce(),
    KeepOldCatalogOnFailedReplacement(),
    SendToRemovedServer(),
    ReadThroughLiveResources(),
    PublishResourcesApart(),
)


def mutant(name: str) -> Mutant:
    """The mutant called ``name``; ``KeyError`` lists the known names."""
    for candidate in MUTANTS:
        if candidate.name == name:
            return candidate
    known = ", ".join(m.name for m in MUTANTS)
    raise KeyError(f"unknown mutant {name!r}; known mutants: {known}")
