"""The client the official MCP conformance suite drives (``scripts/conformance``).

``python client.py URL``: one host on the scenario server at URL, through mcpbind's
public API only. It samples a step and calls every tool of it once, with arguments made
from each tool's input schema, accepting any elicitation with an empty form (so the
schema's defaults are what the server gets, SEP-1034). Exit 0 when the host opened and
every call ended; the suite itself judges what the server saw.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import anyio

from mcpbind.impl import ElicitationAnswer, ElicitationRequest, Host, HostConfig, ServerConfig

_SAMPLES: dict[str, Any] = {"string": "test", "integer": 2, "number": 3, "boolean": True}


def arguments_for(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A value of each property's type (the first of an enum)."""
    made: dict[str, Any] = {}
    for name, field in (schema.get("properties") or {}).items():
        if not isinstance(field, Mapping):
            continue
        if field.get("enum"):
            made[name] = field["enum"][0]
        elif field.get("type") in _SAMPLES:
            made[name] = _SAMPLES[field["type"]]
    return made


async def accept_empty(request: ElicitationRequest) -> ElicitationAnswer:
    return ElicitationAnswer("accept", {})


async def main(url: str) -> int:
    config = HostConfig(
        servers={"conformance": ServerConfig(target=url, required=True)},
        elicitation="ask",
        elicitation_handler=accept_empty,
    )
    async with Host.open(config) as host:
        step = host.sample()
        for index, name in enumerate(sorted(step.names)):
            binding = step.binding(name)
            if binding is None or binding.server is None:
                continue
            result = await host.call(
                step, f"c{index}", name, arguments_for(step.full_input_schema(name) or {})
            )
            print(f"{name}: {result.status}: {result.output.splitlines()[-1][:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1], backend="trio"))
