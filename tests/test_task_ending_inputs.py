"""A call the server runs as a task (SPEC §8.12) and the host gives up on records the
input that ends it once (SPEC §3.1, §14.1): the give-up reports it before its
``tasks/cancel``, and the call's ending finds it reported. In-process, the tests' tasks
server (``testservers/tasks_server.py``)."""

from __future__ import annotations

import pathlib

from testservers.recorders import Inputs
from testservers.tasks_server import build

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.model import texts


async def test_a_task_that_times_out_records_its_timeout_once_before_its_tasks_cancel(
    tmp_path: pathlib.Path,
) -> None:
    log = tmp_path / "log"
    log.write_text("")
    inputs = Inputs()
    config = ServerConfig(target=build(log), required=True, tool_timeout_sec=0.5)
    async with Host.open(HostConfig(servers={"s": config}), recorder=inputs) as host:
        arguments = {"topic": "slow", "stages": 1000}
        result = await host.call(host.sample(), "c1", "mcp__s__research", arguments)
    assert (result.status, result.output) == (
        "timed_out",
        texts.TIMED_OUT.format(seconds="0.5 seconds"),
    )
    assert inputs.seen.count("timeout") == 1
    assert inputs.seen.index("timeout") < inputs.seen.index("tasks/cancel")
