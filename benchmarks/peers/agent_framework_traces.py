"""Microsoft agent-framework's ``MCPStdioTool`` through the four trace scenarios of
``traces.py``; runs in the peer's own venv (asyncio, no mcpbind).

``python agent_framework_traces.py SERVER_PYTHON SERVER OUT WORK`` runs each scenario
against ``SERVER`` (the tests' logging server, run by ``SERVER_PYTHON``), writes
``agent-framework-<scenario>.ndjson`` into OUT (its logs in WORK) and prints the names.
The tool (it loads the server's tools as ``FunctionTool`` s when entered and, on the
2026-07-28 protocol, opens a ``subscriptions/listen`` stream and reloads them in the
background on each ``list_changed``) writes no trace, so the harness writes it from
outside (``_outside.py``), making the calls an agent run makes without a model: a step is
the tool's ``functions``, which ``Agent.run`` copies into the run's tool list at its
start, a call is the step's ``FunctionTool.invoke(arguments=..., tool_call_id=...)``, as
the run's function-invocation loop calls it. A name the step lacks is ``unsupported``, a
returned value ``ok``, the tool's ``ToolExecutionException`` ``error`` (the server's error
result) or ``failed`` (an ``MCPError`` under it: the connection or the protocol failed),
any other exception ``failed``, a cancelled call ``cancelled``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import pathlib
from importlib import metadata
from typing import Any

from _outside import NAME, Outside, play, write_all
from agent_framework import MCPStdioTool
from agent_framework.exceptions import ToolExecutionException
from mcp import MCPError

SUBJECT = "agent-framework"


class Subject:
    def __init__(self, tool: MCPStdioTool, trace: Outside) -> None:
        self.tool = tool
        self.trace = trace
        self.functions: dict[str, Any] = {}
        self.steps = 0

    async def sample(self) -> None:
        """A step: the functions the tool holds now (as its last load left them)."""
        self.functions = {f.name: f for f in self.tool.functions}
        self.trace.catalog(sorted(self.functions))
        self.trace.add("sample", step=self.steps)
        self.steps += 1

    async def call(self, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        trace = self.trace
        trace.current = call_id
        trace.add("call", step=self.steps - 1, call_id=call_id, name=tool)
        status = "failed"
        try:
            function = self.functions.get(tool)
            if function is None:
                status = "unsupported"
            else:
                await function.invoke(arguments=arguments, tool_call_id=call_id)
                status = "ok"
        except asyncio.CancelledError:
            status = "cancelled"
            raise
        except ToolExecutionException as error:  # the server's error, or a lost connection
            causes = (*error.args, error.__cause__)
            status = "failed" if any(isinstance(c, MCPError) for c in causes) else "error"
        except Exception:  # the tool's or its client's failure, as a status
            status = "failed"
        finally:
            await trace.settle(call_id, status)


async def run(scenario: str, python: str, server_path: str, log: pathlib.Path) -> str:
    log.write_text("")
    trace = Outside(log, "agent-framework MCPStdioTool", metadata.version("agent-framework-core"))
    tool = MCPStdioTool(name=NAME, command=python, args=[server_path, str(log)])
    await tool.__aenter__()
    subject = Subject(tool, trace)
    try:
        await subject.sample()
        if await play(scenario, subject, trace):
            return trace.end()
        trace.wire()
    finally:
        with contextlib.suppress(Exception):  # a dead server's client may not close
            await tool.__aexit__(None, None, None)
    trace.add("close")
    return trace.end()


async def main() -> None:
    # Its failed calls and lost subscriptions are logged at ERROR/WARNING on stderr: the
    # trace has them.
    logging.getLogger("agent_framework").setLevel(logging.CRITICAL)
    await write_all(run, SUBJECT)


if __name__ == "__main__":
    asyncio.run(main())
