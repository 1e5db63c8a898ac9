"""The model stub's scenarios and its reading of a host's requests (SPEC §14.7), sans-IO.

Theory of operation
-------------------
``mcpbind model-stub`` stands where an agent host expects its model: it answers the
host's sampling requests (OpenAI Responses API, Chat Completions) from a scenario, a
list of steps written as data (TOML), each step either tool calls (several at once: the
host may run them in parallel) or a final message, and how long the model takes before
it answers (``pause``: the host is idle meanwhile). A request of the host is one step:
it carries the tools the host offers the model at that step and, in the conversation so
far, the output of each call the model asked for. :class:`ModelStub` reads one request
(:func:`read_responses`, :func:`read_chat`: a :class:`Request`), decides the answer (the
next step of the scenario) and the host-side records that request and answer mean:

- ``sample`` for the request (``step`` its number, ``catalog`` the tool names it offers,
  MCP tools as ``mcp__SERVER__TOOL``);
- for each server whose tools at this step differ from the last step's: ``list_done``
  (the host listed: the tap's wire record stands for it in a merge), ``published`` (its
  names, one generation up) and ``refresh_outcome`` ``installed``: what the host's
  catalog became, as the model sees it;
- ``result`` for each call output the request carries that no earlier request did
  (``status`` ``error`` when the output says so, ``ok`` otherwise, ``text`` its start);
- ``call`` for each call the answer asks for (``call_id``, ``name``, ``step``).

No I/O here: :mod:`.model_http` serves the HTTP and writes the records.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

__all__ = [
    "ModelStub",
    "Request",
    "Scenario",
    "ScenarioError",
    "ScriptedCall",
    "Step",
    "load_scenario",
    "read_chat",
    "read_responses",
]

MCP_PREFIX = "mcp__"
TEXT_KEPT = 200
"""How much of a call's output a ``result`` record keeps."""


class ScenarioError(Exception):
    """A scenario file that is not one (SPEC §14.7; the CLI exits 2 with this text)."""


@attrs.frozen
class ScriptedCall:
    tool: str
    """``mcp__SERVER__TOOL`` (or a host's own tool by its name)."""
    arguments: Mapping[str, Any]
    call_id: str | None = None
    """None: the stub names it ``stub-STEP-INDEX``."""


@attrs.frozen
class Step:
    calls: tuple[ScriptedCall, ...] = ()
    say: str | None = None
    """The final message, for a step without calls."""
    pause: float = 0.0
    """Seconds the model takes before it answers this step (the host waits, idle)."""


@attrs.frozen
class Scenario:
    name: str
    servers: tuple[str, ...]
    steps: tuple[Step, ...]
    final: str = "done"
    """What the model says once the steps are spent."""


def load_scenario(text: str) -> Scenario:
    """The scenario in a TOML text; raises :class:`ScenarioError` naming what is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ScenarioError(f"not TOML: {error}") from error
    name = data.get("name", "scenario")
    servers = data.get("servers", [])
    if not isinstance(name, str) or not _strings(servers):
        raise ScenarioError("'name' is a string and 'servers' a list of server names")
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ScenarioError("no [[steps]]: a scenario is at least one step")
    return Scenario(
        name,
        tuple(servers),
        tuple(_step(number, raw) for number, raw in enumerate(steps, 1)),
        str(data.get("final", "done")),
    )


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _step(number: int, raw: Any) -> Step:
    if not isinstance(raw, Mapping) or set(raw) - {"calls", "say", "pause"}:
        raise ScenarioError(
            f"step {number}: a step has 'calls' or 'say' (and 'pause'), nothing else"
        )
    calls = raw.get("calls", [])
    say = raw.get("say")
    if not isinstance(calls, list) or (say is not None and not isinstance(say, str)):
        raise ScenarioError(f"step {number}: 'calls' is a list of tables, 'say' a string")
    if bool(calls) == (say is not None):
        raise ScenarioError(f"step {number}: either calls or say")
    pause = raw.get("pause", 0)
    if isinstance(pause, bool) or not isinstance(pause, int | float) or not 0 <= pause <= 600:
        raise ScenarioError(f"step {number}: 'pause' is a number of seconds, 0 to 600")
    return Step(tuple(_call(number, call) for call in calls), say, float(pause))


def _call(number: int, raw: Any) -> ScriptedCall:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("tool"), str):
        raise ScenarioError(f"step {number}: each call names its 'tool'")
    arguments = raw.get("arguments", {})
    call_id = raw.get("call_id")
    if not isinstance(arguments, Mapping) or (call_id is not None and not isinstance(call_id, str)):
        raise ScenarioError(f"step {number}: 'arguments' is a table, 'call_id' a string")
    return ScriptedCall(raw["tool"], dict(arguments), call_id)


@attrs.frozen
class Offered:
    """A tool of a request: its name for the trace and how the host spells a call of it."""

    name: str
    """``mcp__SERVER__TOOL`` for an MCP tool, else the host's name of it."""
    server: str | None
    namespace: str | None
    """Codex's ``namespace`` tool (``mcp__SERVER``) holding it, if any."""
    function: str
    """The name a call gives (inside its namespace, when there is one)."""


@attrs.frozen
class Request:
    """One sampling request as the stub reads it."""

    tools: tuple[Offered, ...]
    outputs: tuple[tuple[str, str], ...]
    """Each call output in the conversation, in order: (call id, output text)."""
    api: str
    """``responses`` or ``chat``."""


def _server_of(name: str, servers: Sequence[str]) -> str | None:
    """The server of ``mcp__SERVER__TOOL``: the longest known server name that fits (a
    name may hold ``__``), else what stands before the next ``__``."""
    if not name.startswith(MCP_PREFIX):
        return None
    rest = name[len(MCP_PREFIX) :]
    fits = [s for s in servers if rest.startswith(s + "__")]
    if fits:
        return max(fits, key=len)
    server, sep, _ = rest.partition("__")
    return server if sep and server else None


def _offered(tool: Any, servers: Sequence[str]) -> list[Offered]:
    if not isinstance(tool, Mapping):
        return []
    if tool.get("type") == "function" and isinstance(tool.get("function"), Mapping):
        tool = tool["function"]  # Chat Completions: {"type": "function", "function": {...}}
    name = tool.get("name")
    if not isinstance(name, str):
        return []
    if tool.get("type") == "namespace":  # Codex: a server as one tool of functions
        server = name.removeprefix(MCP_PREFIX) if name.startswith(MCP_PREFIX) else None
        inner = tool.get("tools") or tool.get("functions") or []
        found: list[Offered] = []
        for function in inner if isinstance(inner, list) else []:
            if isinstance(function, Mapping) and isinstance(function.get("name"), str):
                fn = function["name"]
                full = f"{name}__{fn}" if server is not None else f"{name}.{fn}"
                found.append(Offered(full, server, name, fn))
        return found
    return [Offered(name, _server_of(name, servers), None, name)]


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):  # content parts
        return "".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part) for part in output
        )
    return json.dumps(output, ensure_ascii=False)


def read_responses(body: Mapping[str, Any], servers: Sequence[str]) -> Request:
    """A Responses API request (``POST /v1/responses``)."""
    tools = [o for tool in body.get("tools") or [] for o in _offered(tool, servers)]
    items = body.get("input")
    outputs = [
        (str(item.get("call_id")), _text(item.get("output")))
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, Mapping) and item.get("type") == "function_call_output"
    ]
    return Request(tuple(tools), tuple(outputs), "responses")


def read_chat(body: Mapping[str, Any], servers: Sequence[str]) -> Request:
    """A Chat Completions request (``POST /v1/chat/completions``)."""
    tools = [o for tool in body.get("tools") or [] for o in _offered(tool, servers)]
    messages = body.get("messages")
    outputs = [
        (str(message.get("tool_call_id")), _text(message.get("content")))
        for message in (messages if isinstance(messages, list) else [])
        if isinstance(message, Mapping) and message.get("role") == "tool"
    ]
    return Request(tuple(tools), tuple(outputs), "chat")


_CODEX_PREFACE = re.compile(r"\AWall time: [0-9.]+ seconds\nOutput:\n?")
"""What Codex puts before an MCP call's output for the model."""


def _status(text: str) -> str:
    """A call output's status (SPEC §8.6) as the model can tell it: ``error`` when the
    output is an MCP result marked ``isError`` or says it is an error, ``timed_out``
    when it says the call timed out, else ``ok``."""
    text = _CODEX_PREFACE.sub("", text)
    if "timed out" in text.lower():
        return "timed_out"
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, Mapping) and (value.get("isError") is True or "error" in value):
        return "error"
    lowered = text.lstrip().lower()
    return "error" if lowered.startswith(("error", "tool call error", "unknown tool")) else "ok"


@attrs.frozen
class Answer:
    """What the stub answers a request: calls to make, or a message."""

    calls: tuple[tuple[str, Offered, Mapping[str, Any]], ...]
    """(call id, how to call it, its arguments)."""
    text: str | None
    pause: float = 0.0
    """Seconds to wait before answering (the scenario step's ``pause``)."""


@attrs.define(eq=False)
class ModelStub:
    """The scripted model: one :meth:`turn` per request (see the module's doc)."""

    scenario: Scenario
    step: int = 0
    generation: int = 0
    _outputs_seen: int = 0
    _catalogs: dict[str, tuple[str, ...]] = attrs.field(factory=dict)
    _spelling: dict[str, Offered] = attrs.field(factory=dict)
    """Each MCP tool as a request offered it last: a call of a removed tool is spelled so."""

    def header(self, builtins: Sequence[str], version: str) -> dict[str, Any]:
        return {
            "kind": "header",
            "format": "mcpbind-trace/1",
            # The model cannot see how the host routes; neither policy is claimed by it.
            "policy": "revalidate",
            "servers": list(self.scenario.servers),
            "builtins": sorted(builtins),
            "extensions": {},
            "max_name_length": 64,
            "host": {"name": "mcpbind model-stub", "version": version},
            "scenario": self.scenario.name,
        }

    def turn(self, request: Request) -> tuple[Answer, list[dict[str, Any]]]:
        """The answer to one request and the host-side records it means, in order."""
        self.step += 1
        records: list[dict[str, Any]] = []
        for call_id, text in request.outputs[self._outputs_seen :]:
            records.append(
                {
                    "kind": "result",
                    "call_id": call_id,
                    "status": _status(text),
                    "text": text[:TEXT_KEPT],
                }
            )
        self._outputs_seen = len(request.outputs)
        records.extend(self._catalog(request))
        records.append(
            {
                "kind": "sample",
                "step": self.step,
                "generation": self.generation,
                "catalog": sorted(tool.name for tool in request.tools),
            }
        )
        scripted = (
            self.scenario.steps[self.step - 1] if self.step <= len(self.scenario.steps) else None
        )
        pause = scripted.pause if scripted is not None else 0.0
        if scripted is None or not scripted.calls:
            text = scripted.say if scripted is not None and scripted.say else self.scenario.final
            return Answer((), text, pause), records
        calls: list[tuple[str, Offered, Mapping[str, Any]]] = []
        for index, call in enumerate(scripted.calls, 1):
            call_id = call.call_id or f"stub-{self.step}-{index}"
            calls.append((call_id, self._spelled(call.tool, request), call.arguments))
            records.append(
                {"kind": "call", "call_id": call_id, "name": call.tool, "step": self.step}
            )
        return Answer(tuple(calls), None, pause), records

    def _catalog(self, request: Request) -> list[dict[str, Any]]:
        by_server: dict[str, list[str]] = {server: [] for server in self.scenario.servers}
        for tool in request.tools:
            if tool.server is not None:
                by_server.setdefault(tool.server, []).append(tool.name)
                self._spelling[tool.name] = tool
        records: list[dict[str, Any]] = []
        for server, names in by_server.items():
            now = tuple(sorted(names))
            if self._catalogs.get(server, ()) == now:
                continue
            self._catalogs[server] = now
            self.generation += 1
            records += [
                {"kind": "list_done", "server": server},
                {
                    "kind": "published",
                    "generation": self.generation,
                    "source": f"mcp:{server}",
                    "names": list(now),
                },
                {
                    "kind": "refresh_outcome",
                    "server": server,
                    "status": "installed",
                    "generation": self.generation,
                },
            ]
        return records

    def _spelled(self, tool: str, request: Request) -> Offered:
        for offered in request.tools:
            if offered.name == tool:
                return offered
        if tool in self._spelling:  # removed since: called as the host spelled it then
            return self._spelling[tool]
        return Offered(tool, _server_of(tool, self.scenario.servers), None, tool)
