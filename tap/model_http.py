"""``mcpbind model-stub``: the scripted model served on loopback (SPEC §14.7).

HTTP/1.1 by h11 over an anyio listener, as the tap's proxy (:mod:`.http`). It answers
``POST …/responses`` (the OpenAI Responses API; streamed as server-sent events when the
request says ``"stream": true``: ``response.created``, one ``response.output_item.done``
per output item, ``response.completed``) and ``POST …/chat/completions`` (streamed as
``chat.completion.chunk`` events ending ``data: [DONE]``, or one JSON answer), and ``GET
…/models`` with an empty list. Each request is one turn of :class:`.scenario.ModelStub`,
one at a time; its records are written, each flushed, before the answer goes out, so a
host's reaction to the answer comes later on the machine's clock (the merge of SPEC §14.6
orders by it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO

import anyio
import anyio.abc
import attrs
import h11

from .h11io import serve_connection
from .scenario import Answer, ModelStub, read_chat, read_responses
from .stdio import TapFailed

__all__ = ["HostLog", "serve_model"]

_USAGE = {
    "input_tokens": 0,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 0,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 0,
}


@attrs.define(eq=False)
class HostLog:
    """Writes the stub's host-side trace: the header at the first request (it names the
    host's own tools, which only a request shows), each record with ``at`` and flushed."""

    out: TextIO
    stub: ModelStub
    version: str
    clock: Callable[[], float] = time.time
    _started: bool = False
    _ended: bool = False

    def _write(self, record: Mapping[str, Any]) -> None:
        if not self._ended:
            self.out.write(json.dumps(record, ensure_ascii=False) + "\n")
            self.out.flush()

    def start(self, builtins: Iterable[str]) -> None:
        if not self._started:
            self._started = True
            self._write(self.stub.header(list(builtins), self.version))

    def write(self, records: Iterable[Mapping[str, Any]]) -> None:
        for record in records:
            self._write({**record, "at": self.clock()})

    def end(self) -> None:
        self.start(())
        self._write({"kind": "end"})
        self._ended = True


async def serve_model(
    port: int,
    log: HostLog,
    *,
    task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve on 127.0.0.1:``port`` (0: any free port) until cancelled; report the port."""
    try:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=port)
    except OSError as error:
        raise TapFailed(f"cannot listen on 127.0.0.1:{port}: {error.strerror or error}") from error
    turns = anyio.Lock()
    async with listener:
        task_status.started(listener.extra(anyio.abc.SocketAttribute.local_port))
        await listener.serve(_Server(log, turns).connection)


@attrs.define(eq=False)
class _Server:
    log: HostLog
    turns: anyio.Lock
    responses: int = 0

    async def connection(self, stream: anyio.abc.SocketStream) -> None:
        async def answer(connection: h11.Connection, request: h11.Request, body: bytes) -> bool:
            try:
                await self._answer(stream, connection, request, body)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return False
            return True

        await serve_connection(stream, answer)

    async def _answer(
        self,
        stream: anyio.abc.SocketStream,
        connection: h11.Connection,
        request: h11.Request,
        body: bytes,
    ) -> None:
        async def send(*events: Any) -> None:
            for event in events:
                data = connection.send(event)
                if data:
                    await stream.send(data)

        target = request.target.decode("ascii").split("?", 1)[0].rstrip("/")
        method = request.method.decode("ascii")
        if method == "GET" and target.endswith("/models"):
            await _json(send, 200, {"object": "list", "data": [], "models": []})
            return
        api = "responses" if target.endswith("/responses") else "chat"
        if method != "POST" or not target.endswith(("/responses", "/chat/completions")):
            await _json(send, 404, {"error": {"message": f"no {method} {target} here"}})
            return
        try:
            data = json.loads(body)
        except ValueError as error:
            data = f"not JSON ({error})"
        if not isinstance(data, dict):
            await _json(send, 400, {"error": {"message": f"the body is not a JSON object: {data}"}})
            return
        servers = self.log.stub.scenario.servers
        read = read_responses(data, servers) if api == "responses" else read_chat(data, servers)
        async with self.turns:
            self.log.start(tool.name for tool in read.tools if tool.server is None)
            answer, records = self.log.stub.turn(read)
            self.log.write(records)
            self.responses += 1
            number = self.responses
        # SPEC §14.7: a step's pause, the model thinking; the records are written already.
        await anyio.sleep(answer.pause)
        streamed = data.get("stream") is True
        if api == "responses":
            await _responses(send, number, answer, streamed=streamed)
        else:
            await _chat(send, number, answer, streamed=streamed)


Send = Callable[..., Any]


async def _json(send: Send, status: int, value: Any) -> None:
    body = json.dumps(value).encode()
    headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
    await send(h11.Response(status_code=status, headers=headers), h11.Data(data=body))
    await send(h11.EndOfMessage())


async def _events(send: Send, events: Iterable[Mapping[str, Any] | str]) -> None:
    headers = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
    await send(h11.Response(status_code=200, headers=headers))
    for event in events:
        if isinstance(event, str):
            chunk = f"data: {event}\n\n"
        else:
            chunk = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
        await send(h11.Data(data=chunk.encode()))
    await send(h11.EndOfMessage())


def _items(number: int, answer: Answer) -> list[dict[str, Any]]:
    """The output items of a Responses API answer."""
    if answer.text is not None:
        return [
            {
                "type": "message",
                "id": f"msg_{number}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
            }
        ]
    items: list[dict[str, Any]] = []
    for index, (call_id, tool, arguments) in enumerate(answer.calls):
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{number}_{index}",
            "call_id": call_id,
            "name": tool.function,
            "arguments": json.dumps(arguments),
            "status": "completed",
        }
        if tool.namespace is not None:
            item["namespace"] = tool.namespace
        items.append(item)
    return items


async def _responses(send: Send, number: int, answer: Answer, *, streamed: bool) -> None:
    items = _items(number, answer)
    response = {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": int(time.time()),
        "model": "mcpbind-model-stub",
        "status": "completed",
        "output": items,
        "usage": _USAGE,
    }
    if not streamed:
        await _json(send, 200, response)
        return
    created = {**response, "status": "in_progress", "output": []}
    events: list[Mapping[str, Any]] = [{"type": "response.created", "response": created}]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": response})
    numbered = [{**event, "sequence_number": n} for n, event in enumerate(events)]
    await _events(send, numbered)


async def _chat(send: Send, number: int, answer: Answer, *, streamed: bool) -> None:
    calls = [
        {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": tool.name, "arguments": json.dumps(arguments)},
        }
        for index, (call_id, tool, arguments) in enumerate(answer.calls)
    ]
    finish = "tool_calls" if calls else "stop"
    base = {"id": f"chatcmpl-{number}", "created": int(time.time()), "model": "mcpbind-model-stub"}
    if not streamed:
        message: dict[str, Any] = {"role": "assistant", "content": answer.text}
        if calls:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        await _json(send, 200, {**base, "object": "chat.completion", "choices": [choice]})
        return
    chunk = {**base, "object": "chat.completion.chunk"}
    delta: dict[str, Any] = {"role": "assistant", "content": answer.text}
    if calls:
        delta["tool_calls"] = calls
    first = {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    last = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    await _events(send, [json.dumps(first), json.dumps(last), "[DONE]"])
