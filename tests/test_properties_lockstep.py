"""The property machines (SPEC §13, issue 4): the runtime held to the model on random
interleavings. Asyncio, the replay corpus and the runtime mutants are in
``test_properties_corpus.py``, the odometer in ``test_properties_odometer.py``."""

from __future__ import annotations

import pytest

from mcpbind.properties import profiles
from mcpbind.properties.machines import lockstep_property
from mcpbind.properties.variants import LockstepVariant

profiles.load()

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_on_random_interleavings(policy):
    """INV-1..INV-9 on the runtime, trace refinement every step, LIVE-1 at teardown."""
    lockstep_property(policy)()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_with_approval_gating(policy):
    """INV-10 on the runtime: every MCP call waits for the machine's approver; approve,
    deny (decline or cancel), cancel and disconnect interleave with everything else."""
    lockstep_property(policy, variant=LockstepVariant(approval=True))()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_with_a_lazily_started_server(policy):
    """INV-11 on the runtime: git.hub opens dormant from a cached catalog; calls wake it
    and wait for its first refresh, in acceptance order, through failures and timeouts."""
    lockstep_property(policy, variant=LockstepVariant(lazy=True))()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_with_an_idle_timeout(policy):
    """SPEC §8.11 on the runtime: git_hub's tool timeout is an idle timeout; progress,
    which the machine sends just before the deadline, re-arms it until the cap."""
    lockstep_property(policy, variant=LockstepVariant(progress=True))()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_with_calls_that_run_as_tasks(policy):
    """SPEC §8.12 on the runtime: git.hub may answer a call with a task, which the runtime
    polls to its end; a cancel, a timeout, a failed poll or close sends tasks/cancel, and
    a task status that comes after the end is dropped (INV-4, INV-7, INV-12)."""
    lockstep_property(policy, variant=LockstepVariant(tasks=True))()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_when_a_server_ends_its_list_changed_stream(policy):
    """LIVE-3 on the runtime: git.hub ends its list_changed stream, changes while no stream
    is open, and the host listens again and reads what it missed (SPEC §5.7)."""
    lockstep_property(policy, variant=LockstepVariant(streams=True))()


@pytest.mark.parametrize("policy", ["revalidate", "frozen"])
def test_runtime_refines_the_model_across_a_reconfiguration(policy):
    """INV-15, INV-16 on the runtime: ``Host.reconfigure`` keeps ``a``, removes ``b`` and
    ``b2``, replaces ``c`` and adds ``d`` while calls are out, refreshes run and servers
    disconnect; every step's outputs are the model's (SPEC §3.7, §11.17)."""
    lockstep_property(policy, variant=LockstepVariant(reconfigure=True))()
