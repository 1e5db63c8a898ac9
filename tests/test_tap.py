"""``mcpbind tap`` (SPEC §14.6): a host that is not mcpbind — the raw ``mcp.Client`` —
lists, calls, hears ``list_changed`` and cancels through the tap, over stdio and over
streamable HTTP; the tap changes no byte; its wire-side trace passes ``trace check``; a
killed tap leaves a checkable prefix; mcpbind's own trace merges with the tap's."""

from __future__ import annotations

import io
import json
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import jsonschema
import mcp
import pytest
from cli_runner import mcpbind
from mcp import StdioServerParameters
from testservers.processes import http_server, wait_listening
from trace_records import header
from wire import RELAY, wire

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.impl.trace import TraceRecorder, trace_header
from mcpbind.model.trace import (
    WIRE_DECIDABLE,
    check_trace,
    merge_traces,
    parse_trace,
)

HERE = pathlib.Path(__file__).parent / "testservers"
TASKS = HERE / "tasks_server.py"
STDIO = HERE / "stdio_server.py"
TAP = [sys.executable, "-m", "mcpbind.cli", "tap"]


def records(path: pathlib.Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def check(path: pathlib.Path) -> list[tuple[str, int]]:
    with path.open(encoding="utf-8") as lines:
        return [(v.invariant, v.line) for v in check_trace(parse_trace(lines, prefix=True))]


def tapped(trace: pathlib.Path, *command: str, server: str = "tasks") -> StdioServerParameters:
    args = [*TAP[1:], "--trace", str(trace), "--server", server, "--", *command]
    return StdioServerParameters(command=sys.executable, args=args)


def schema() -> dict[str, Any]:
    import importlib.resources

    text = importlib.resources.files("mcpbind.model").joinpath("trace-schema.json").read_text()
    return dict(json.loads(text))


async def until(condition: Any) -> None:
    """Until ``condition()`` holds (another process writes what it looks at)."""
    with anyio.fail_after(30):
        while not condition():
            await anyio.sleep(0.02)


async def session_of_a_raw_client(client: mcp.Client) -> None:
    """What the tests' host does: list, call ``retire`` and hear its ``list_changed`` on a
    2026-07-28 listen stream, list again, cancel a long call."""
    listed = await client.list_tools()
    assert "doomed" in [tool.name for tool in listed.tools]
    async with client.listen(tools_list_changed=True) as changes:
        answer = await client.call_tool("retire", {"name": "doomed"})
        assert answer.content[0].text == "doomed retired"  # type: ignore[union-attr]
        with anyio.fail_after(30):
            async for _ in changes:
                break
    listed = await client.list_tools()
    assert "doomed" not in [tool.name for tool in listed.tools]
    with anyio.move_on_after(0.3) as scope:
        await client.call_tool("long_operation", {"steps": 2, "seconds": 60})
    assert scope.cancelled_caught


def assert_the_session_is_on_record(written: list[dict[str, Any]]) -> None:
    assert written[0]["side"] == "wire"
    body = written[1:-1]
    assert all(r["side"] == "wire" and isinstance(r["at"], float) for r in body)
    seen = [(r["kind"], r.get("method") or r.get("detail") or "") for r in body]
    listings = [r["tools"] for r in body if r["kind"] == "list_done"]
    assert "doomed" in listings[0]
    assert "doomed" not in listings[1]
    [retire] = [r for r in body if r.get("detail") == "retire"]
    [long_call] = [r for r in body if r.get("detail") == "long_operation"]
    answered = [r for r in body if r["kind"] == "call_responded"]
    assert [r["call_id"] for r in answered] == [retire["call_id"]]
    cancels = [r for r in body if r.get("method") == "notifications/cancelled" and "call_id" in r]
    assert [r["call_id"] for r in cancels] == [long_call["call_id"]]
    changed = seen.index(("list_changed", ""))
    assert seen.index(("sent", "subscriptions/listen")) < changed
    # the host listed again after the change: the wire's view of LIVE-2's refresh
    assert ("sent", "tools/list") in seen[changed:]
    validator = jsonschema.Draft202012Validator(schema())
    for record in written:
        validator.validate(record)


@pytest.mark.slow
async def test_a_raw_mcp_client_lists_calls_hears_list_changed_and_cancels_through_the_stdio_tap(
    tmp_path,
):
    trace = tmp_path / "wire.ndjson"
    params = tapped(trace, sys.executable, str(TASKS), str(tmp_path / "log"))
    async with mcp.Client(params) as client:
        await session_of_a_raw_client(client)
    await until(lambda: trace.read_text().endswith('{"kind": "end"}\n'))
    written = records(trace)
    assert_the_session_is_on_record(written)
    # the session's end: stdin EOF closed it, then the server exited on its own
    assert [r["kind"] for r in written[-3:]] == ["sent", "disconnect", "end"]
    assert written[-3]["method"] == "close"
    assert written[-2]["exit_status"] == 0
    assert "notifications/cancelled" in (tmp_path / "log").read_text()  # it reached the server
    done = mcpbind("trace", "check", str(trace))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"wire-only: {', '.join(WIRE_DECIDABLE)} decided" in done.stdout


@pytest.mark.slow
async def test_the_2025_list_changed_notification_and_a_read_only_tool_are_on_record(tmp_path):
    """A handshake-era session (``mode="legacy"``): the server sends
    ``notifications/tools/list_changed`` on the connection itself; the listing marks the
    tool annotated read-only (INV-9 reads it in a merge)."""
    trace = tmp_path / "wire.ndjson"
    code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import inproc; inproc.fs_server().run()"
    heard: list[Any] = []

    async def on_message(message: Any) -> None:
        heard.append(message)

    params = tapped(trace, sys.executable, "-c", code, server="fs")
    async with mcp.Client(params, mode="legacy", message_handler=on_message) as client:
        assert client.protocol_version == "2025-11-25"
        await client.list_tools()
        await client.call_tool("grow_legacy", {"tool": "sprout"})
        await until(lambda: heard)
        listed = await client.list_tools()
        assert "sprout" in [tool.name for tool in listed.tools]
    await until(lambda: trace.read_text().endswith('{"kind": "end"}\n'))
    written = records(trace)
    kinds = [r["kind"] for r in written]
    assert kinds.count("list_changed") == 1
    changed = kinds.index("list_changed")
    first, second = [r["tools"] for r in written if r["kind"] == "list_done"]
    assert {"name": "read", "read_only": True} in first
    assert "write" in first
    assert "sprout" in second
    assert changed < kinds.index("list_done", changed)
    assert check(trace) == []


@asynccontextmanager
async def http_tap(trace: pathlib.Path, upstream: str, server: str = "tasks") -> AsyncIterator[str]:
    """``mcpbind tap --http`` for the block; yields its URL; SIGTERM at the end."""
    http = ["--http", "--listen", "127.0.0.1:0", "--upstream", upstream]
    process = await anyio.open_process(
        [*TAP, "--trace", str(trace), "--server", server, *http], stdout=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        with anyio.fail_after(60):
            first = b""
            while not first.endswith(b"\n"):
                first += await process.stdout.receive(1)
        yield first.decode().strip()
    finally:
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(30):
            assert await process.wait() == 0


@pytest.mark.slow
async def test_a_raw_mcp_client_lists_calls_hears_list_changed_and_cancels_through_the_http_tap(
    tmp_path,
):
    trace = tmp_path / "wire.ndjson"
    async with (
        http_server(tmp_path / "log", listening=True, script=TASKS) as port,
        http_tap(trace, f"http://127.0.0.1:{port}/mcp") as url,
    ):
        async with mcp.Client(f"{url}/mcp") as client:
            await session_of_a_raw_client(client)
        # On 2026-07-28 the host cancels by closing the call's stream: wait for the tap
        # to see that before stopping it.
        await until(lambda: '"via": "closed stream"' in trace.read_text())
    written = records(trace)
    assert written[-1] == {"kind": "end"}
    assert_the_session_is_on_record(written)
    assert check(trace) == []


# The broken stream leaves the SDK's response generators to the garbage collector.
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_an_upstream_that_breaks_off_a_stream_breaks_off_the_hosts_and_the_tap_goes_on(
    tmp_path,
):
    """SPEC §14.6: the server restarts (``restart``: the process re-executes itself)
    under a handshake-era session's open GET stream; the tap closes the host's connection
    mid-body as the upstream did, and goes on: the host's next call reaches the new
    process, which knows no session (404: ``session_expired``), and SIGTERM ends the tap
    with 0."""
    trace = tmp_path / "wire.ndjson"
    async with (
        http_server(tmp_path / "log", listening=True, script=TASKS) as port,
        http_tap(trace, f"http://127.0.0.1:{port}/mcp") as url,
        mcp.Client(f"{url}/mcp", mode="legacy") as client,
    ):
        await client.call_tool("restart", {"after": 0.2})
        await until(lambda: "restarted" in (tmp_path / "log").read_text())
        await wait_listening(port)  # the new process
        with pytest.raises(mcp.MCPError, match="Session not found"):
            await client.call_tool("long_operation", {"steps": 1, "seconds": 0.01})
    written = records(trace)
    assert [r["kind"] for r in written].count("session_expired") == 1
    # the client's DELETE of the session the server forgot, at its exit, closes nothing
    assert "close" not in [r.get("method") for r in written if r["kind"] == "sent"]
    assert written[-1] == {"kind": "end"}


# The raw mcp.Client leaves httpx2's SSE generator of a handshake-era GET stream to the
# garbage collector at close (the SDK's own, as in test_close.py).
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_handshake_era_session_keeps_its_session_id_through_the_http_tap(tmp_path):
    """The server refuses a request without the ``Mcp-Session-Id`` it issued: calls that
    succeed through the tap show the header passed both ways; the host's DELETE at the
    end is the session's close on record."""
    trace = tmp_path / "wire.ndjson"
    log = tmp_path / "requests.log"
    legacy = {"MCPBIND_TEST_HTTP_LEGACY": "1", "MCPBIND_TEST_HTTP_LOG": str(log)}
    async with (
        http_server(tmp_path / "state", listening=True, **legacy) as port,
        http_tap(trace, f"http://127.0.0.1:{port}/mcp", server="s") as url,
    ):
        async with mcp.Client(f"{url}/mcp") as client:
            assert client.protocol_version != "2026-07-28"
            echoed = await client.call_tool("echo", {"text": "through the tap"})
            assert echoed.content[0].text == "through the tap"  # type: ignore[union-attr]
        await until(lambda: "DELETE" in log.read_text())
        await until(lambda: '"why": "delete"' in trace.read_text())
    written = records(trace)
    methods = [r.get("method") for r in written if r["kind"] == "sent"]
    assert methods.index("initialize") < methods.index("tools/call")
    assert methods[-1] == "close"
    assert check(trace) == []


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_tap_changes_no_byte_between_the_host_and_the_server(tmp_path, transport):
    """stdio: the logging relay on both sides of the tap sees the same messages in each
    direction; HTTP: the same requests answered directly and through the tap come back
    with the same status, type and body."""
    if transport == "stdio":
        outer, inner = tmp_path / "host-side.log", tmp_path / "server-side.log"
        server = [sys.executable, str(TASKS), str(tmp_path / "log")]
        behind = [sys.executable, str(RELAY), str(inner), *server]
        tap = [*TAP[1:], "--trace", str(tmp_path / "w.ndjson"), "--", *behind]
        params = StdioServerParameters(
            command=sys.executable, args=[str(RELAY), str(outer), sys.executable, *tap]
        )
        async with mcp.Client(params) as client:
            await session_of_a_raw_client(client)
        await until(lambda: "EOF" in inner.read_text())
        # the relay logs each line as it read it (its text, not a parse of it)
        host_side = outer.read_text(encoding="utf-8").splitlines()
        server_side = inner.read_text(encoding="utf-8").splitlines()
        for direction in ("> ", "< "):
            assert [line for line in host_side if line.startswith(direction)] == [
                line for line in server_side if line.startswith(direction)
            ]
        assert len(wire(outer)) > 10
        return
    bodies = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "no/such/method", "params": {}},
    ]
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
    }
    async with http_server(tmp_path / "log", listening=True, script=TASKS) as port:
        direct = f"http://127.0.0.1:{port}/mcp"
        async with http_tap(tmp_path / "w.ndjson", direct) as url, httpx2.AsyncClient() as http:
            for body in [*bodies, "this is not JSON"]:
                content = body if isinstance(body, str) else json.dumps(body)
                answers = [
                    await http.post(target, content=content, headers=headers)
                    for target in (direct, f"{url}/mcp")
                ]
                seen = [(a.status_code, a.headers.get("content-type"), a.content) for a in answers]
                assert seen[0] == seen[1]
    written = records(tmp_path / "w.ndjson")
    assert [r["kind"] for r in written if r["kind"] == "unparsed"] == ["unparsed"]


def test_a_line_that_is_not_json_rpc_is_recorded_and_still_forwarded_unchanged(tmp_path):
    """``cat`` as the server: whatever the host writes comes back byte for byte, a line
    that is not JSON, CRLF, odd spacing and a last line without its newline included."""
    sent = (
        b'{"jsonrpc": "2.0",  "id": 7, "method": "tools/list", "params": {}}\r\n'
        b"\xff\xfe not even UTF-8\n"
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}\n'
        b'{"jsonrpc":"2.0","id":8,"method":"ping"}'
    )
    trace = tmp_path / "cat.ndjson"
    done = subprocess.run(
        [*TAP, "--trace", str(trace), "--", "cat"], input=sent, capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == sent
    written = records(trace)
    unparsed = [r for r in written if r["kind"] == "unparsed"]
    # each line the tap read twice, from the host and back from cat; the bytes are counted
    assert [(r["direction"], r["bytes"]) for r in unparsed] == [
        ("to_server", 17),
        ("to_host", 17),
    ]
    methods = [r.get("method") for r in written if r["kind"] == "sent"]
    assert methods == ["tools/list", "notifications/cancelled", "ping", "close"]
    assert check(trace) == []


@pytest.mark.slow
async def test_a_killed_tap_leaves_a_prefix_that_trace_check_reads(tmp_path):
    trace = tmp_path / "wire.ndjson"
    state = tmp_path / "state"
    params = tapped(trace, sys.executable, str(STDIO), str(state), server="s")

    async def call_until_the_tap_is_killed() -> None:
        async with mcp.Client(params) as client, anyio.create_task_group() as group:

            async def slow() -> None:
                await client.call_tool("slow", {"seconds": 60})

            group.start_soon(slow)
            await until(lambda: '"detail": "slow"' in trace.read_text())
            os.kill(_parent_of(int((state / "pid").read_text())), signal.SIGKILL)

    with pytest.raises(BaseException):  # noqa: B017, PT011 - the SDK's error for a lost server
        await call_until_the_tap_is_killed()
    done = mcpbind("trace", "check", str(trace))
    assert done.returncode == 1
    assert "ends early after line" in done.stdout
    assert "the records so far break no invariant" in done.stdout


def _parent_of(pid: int) -> int:
    stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def test_the_tap_exits_with_the_status_of_its_server_and_records_it(tmp_path):
    code = "import sys; sys.stdin.readline(); sys.exit(3)"
    done = subprocess.run(
        [*TAP, "--trace", str(tmp_path / "w.{pid}.ndjson"), "--", sys.executable, "-c", code],
        input=b"hello\n",
        capture_output=True,
        check=False,
    )
    assert done.returncode == 3
    assert done.stderr == b""
    [trace] = tmp_path.glob("w.*.ndjson")  # {pid}: one file per session
    assert trace.name.split(".")[1].isdigit()
    disconnect, end = records(trace)[-2:]
    assert (disconnect["kind"], disconnect["exit_status"], end) == (
        "disconnect",
        3,
        {"kind": "end"},
    )
    assert disconnect["server"] == pathlib.Path(sys.executable).name  # COMMAND's file name


def test_sigterm_reaches_the_server_and_the_tap_reports_its_death_as_a_shell_does(tmp_path):
    trace = tmp_path / "w.ndjson"
    state = tmp_path / "state"
    tap = subprocess.Popen(
        [*TAP, "--trace", str(trace), "--", sys.executable, str(STDIO), str(state)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not (state / "pid").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    tap.send_signal(signal.SIGTERM)
    assert tap.wait(timeout=60) == 128 + signal.SIGTERM
    assert b"Traceback" not in tap.stderr.read()  # type: ignore[union-attr]
    written = records(trace)
    assert written[-2]["kind"] == "disconnect"
    assert written[-2]["exit_status"] == 128 + signal.SIGTERM
    for stream in (tap.stdin, tap.stdout, tap.stderr):
        stream.close()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ((), "no server to run: mcpbind tap --trace FILE -- COMMAND [ARGS...]"),
        (("--http",), "--http needs --listen 127.0.0.1:PORT and --upstream URL"),
        (
            ("--http", "--listen", "0.0.0.0:8000", "--upstream", "http://127.0.0.1:1/mcp"),
            "--listen '0.0.0.0:8000': expected 127.0.0.1:PORT (loopback only)",
        ),
        (("--http", "--listen", "127.0.0.1:0", "--upstream", "ftp://x"), "is not an http://"),
        (("--", "/no/such/server"), "cannot start /no/such/server: No such file or directory"),
        (("--listen", "127.0.0.1:0", "--", "cat"), "--listen and --upstream go with --http"),
    ],
)
def test_a_tap_that_cannot_start_says_why_in_one_line_and_exits_2(tmp_path, args, problem):
    done = mcpbind("tap", "--trace", str(tmp_path / "w.ndjson"), *args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("mcpbind tap: ")
    assert problem in done.stderr


def test_a_trace_file_that_cannot_be_written_exits_2(tmp_path):
    done = mcpbind("tap", "--trace", str(tmp_path / "no" / "dir" / "w.ndjson"), "--", "cat")
    assert done.returncode == 2
    assert done.stderr.startswith("mcpbind tap: cannot write ")


# --- what a wire-only trace decides (SPEC §14.6) ------------------------------------------


def wire_trace(*body: dict[str, Any]) -> list[str]:
    header = {
        "kind": "header",
        "format": "mcpbind-trace/1",
        "side": "wire",
        "servers": ["s"],
        "host": {"name": "mcpbind tap", "version": "0"},
    }
    return [json.dumps(r) + "\n" for r in (header, *body, {"kind": "end"})]


HOST_HEADER: dict[str, Any] = header(host={"name": "h", "version": "0"})
"""A host's header with one server, s, for the merge's hand-made traces."""
CALL = {"kind": "sent", "server": "s", "method": "tools/call", "call_id": "1", "detail": "t"}
CANCEL = {"kind": "sent", "server": "s", "method": "notifications/cancelled", "call_id": "1"}
LIST = {"kind": "sent", "server": "s", "method": "tools/list"}
DONE = {"kind": "list_done", "server": "s", "tools": ["t"]}
CHANGED = {"kind": "list_changed", "server": "s"}


@pytest.mark.parametrize(
    ("body", "flagged"),
    [
        ((CALL, CANCEL, CANCEL), [("INV-7", 4)]),
        # INV-8 and INV-12 are the host's to decide: a tap's file is one session
        ((CALL, {"kind": "disconnect", "server": "s"}, CANCEL), []),
        ((LIST, {"kind": "sent", "server": "s", "method": "close"}, CALL), []),
        ((LIST, DONE, CHANGED), [("LIVE-2", 4)]),
        ((LIST, DONE, CHANGED, LIST), [("LIVE-2", 4)]),  # asked, never answered
        ((LIST, DONE, CHANGED, LIST, DONE), []),
        ((LIST, DONE, CHANGED, {"kind": "sent", "server": "s", "method": "close"}), []),
        (
            (
                LIST,
                DONE,
                {"kind": "stream_ended", "server": "s"},
                {"kind": "relisten", "server": "s"},
            ),
            [("LIVE-3", 4)],
        ),
        (
            (
                {"kind": "stream_ended", "server": "s"},
                {"kind": "relisten", "server": "s"},
                LIST,
                DONE,
            ),
            [],
        ),
        # INV-4 and LIVE-1 need the host's calls: a wire-only trace leaves them undecided
        ((CALL, {"kind": "call_responded", "call_id": "1"}), []),
        # bytes the tap could not parse end no stream (seed 82: kind == "stream_ended"
        # made >= survived; "unparsed" sorts after it)
        ((LIST, DONE, {"kind": "unparsed", "server": "s", "direction": "to_host"}), []),
    ],
)
def test_a_wire_only_trace_is_judged_by_what_the_wire_decides(body, flagged):
    found = check_trace(parse_trace(wire_trace(*body)))
    assert [(v.invariant, v.line) for v in found] == flagged
    assert {v.invariant for v in found} <= set(WIRE_DECIDABLE)


# --- mcpbind as the host, through the tap: the merge (SPEC §14.6) --------------------------


@pytest.mark.slow
async def test_mcpbind_through_the_tap_merges_its_trace_with_the_taps_and_the_merge_conforms(
    tmp_path,
):
    wire_file = tmp_path / "wire.ndjson"
    params = tapped(wire_file, sys.executable, str(TASKS), str(tmp_path / "log"))
    config = HostConfig(servers={"tasks": ServerConfig(target=params)})
    out = io.StringIO()
    recorder = TraceRecorder(out, trace_header(config), clock=time.time)
    async with Host.open(config, recorder=recorder) as host:
        step = host.sample()
        first = await host.call(step, "c1", "mcp__tasks__research", {"topic": "x", "stages": 1})
        assert first.status == "ok"
        async with anyio.create_task_group() as group:

            async def long() -> None:
                slow = {"steps": 2, "seconds": 60}
                await host.call(step, "c2", "mcp__tasks__long_operation", slow)

            group.start_soon(long)
            await until(lambda: '"detail": "long_operation"' in wire_file.read_text())
            host.cancel("c2")
        retired = await host.call(step, "c3", "mcp__tasks__retire", {"name": "doomed"})
        assert retired.status == "ok"
        await until(lambda: "mcp__tasks__doomed" not in host.sample().names)
    recorder.end()
    await until(lambda: wire_file.read_text().endswith('{"kind": "end"}\n'))
    host_file = tmp_path / "host.ndjson"
    host_file.write_text(out.getvalue(), encoding="utf-8")
    merged_file = tmp_path / "merged.ndjson"
    done = mcpbind("trace", "merge", str(host_file), str(wire_file), "-o", str(merged_file))
    assert done.returncode == 0, done.stderr
    done = mcpbind("trace", "check", str(merged_file))
    assert done.returncode == 0, done.stdout + done.stderr
    merged = records(merged_file)
    assert merged[0]["wire"] == ["tasks"]
    # the wire's records stand for the host's, under the host's call ids
    wire_sent = [
        (r["method"], r.get("call_id"))
        for r in merged
        if r["kind"] == "sent" and r.get("side") == "wire"
    ]
    assert ("tools/call", "c1") in wire_sent
    assert ("tools/call", "c2") in wire_sent
    assert ("notifications/cancelled", "c2") in wire_sent
    assert ("tasks/get", "c1") in wire_sent
    assert all(r.get("side") == "wire" for r in merged if r["kind"] == "sent")
    assert [r["call_id"] for r in merged if r["kind"] == "task_created"] == ["c1"]
    kinds = [r["kind"] for r in merged]
    assert kinds.index("list_changed") < len(kinds) - 1 - kinds[::-1].index("refresh_outcome")
    times = [r["at"] for r in merged[1:-1]]
    assert times == sorted(times)
    # and the merge is checked, not waved through: the wire's cancellation twice is INV-7
    [cancel] = [
        r
        for r in merged
        if r.get("method") == "notifications/cancelled" and r.get("call_id") == "c2"
    ]
    at = merged.index(cancel)
    doubled = [*merged[: at + 1], cancel, *merged[at + 1 :]]
    lines = [json.dumps(r) + "\n" for r in doubled]
    assert [(v.invariant, v.line) for v in check_trace(parse_trace(lines))] == [("INV-7", at + 2)]


def test_a_merge_needs_the_hosts_times_and_a_taps_trace():
    host = parse_trace(
        [
            json.dumps(HOST_HEADER),
            json.dumps({"kind": "sample", "step": 0}),
            json.dumps({"kind": "end"}),
        ]
    )
    wire_records = parse_trace(wire_trace(LIST))
    with pytest.raises(Exception, match='line 2: a host record without "at"'):
        merge_traces(host, [wire_records])
    with pytest.raises(Exception, match="the first trace of a merge is the host's"):
        merge_traces(wire_records, [wire_records])


def test_records_of_the_same_time_merge_the_hosts_first_then_each_taps_in_order():
    """One clock, coarse: a host record and a tap's of the same ``at`` keep the host's
    first, whichever record of its file each is (issue 33: ties broken by a record's
    place in its file instead, putting a tap's first record before the host's, survived);
    a record without ``at`` goes with the one before it."""
    host = [
        HOST_HEADER,
        {"kind": "sample", "step": 0, "at": 1.0},
        {"kind": "refresh_requested", "server": "s", "at": 2.0},
        {"kind": "end"},
    ]
    wire = [{**LIST, "at": 2.0}, DONE, {**LIST, "at": 1.5}]
    merged = merge_traces(
        parse_trace([json.dumps(r) + "\n" for r in host]), [parse_trace(wire_trace(*wire))]
    )
    body = [(r["kind"], r.get("at")) for r in merged[1:-1]]
    assert body == [
        ("sample", 1.0),
        ("refresh_requested", 2.0),
        ("sent", 2.0),
        ("list_done", None),
        ("sent", 1.5),
    ]


def test_a_session_whose_first_record_is_at_time_zero_is_the_first_of_its_server():
    """A clock that starts at 0 (seconds since the host began): a tap file whose first
    record is at 0 is the server's first session, before one that began at 0.5, so the
    host's first call pairs with the wire's first (issue 33: a missing or zero ``at``
    read as 1.0 survived)."""
    host = [
        HOST_HEADER,
        {**CALL, "call_id": "a", "at": 0},
        {"kind": "result", "call_id": "a", "status": "ok", "at": 0.3},
        {**CALL, "call_id": "b", "at": 0.45},
        {"kind": "result", "call_id": "b", "status": "ok", "at": 0.7},
        {"kind": "end"},
    ]
    first = [
        {**CALL, "call_id": "7", "at": 0},
        {"kind": "call_responded", "call_id": "7", "at": 0.2},
    ]
    second = [
        {**CALL, "call_id": "1", "at": 0.5},
        {"kind": "call_responded", "call_id": "1", "at": 0.6},
    ]
    merged = merge_traces(
        parse_trace([json.dumps(r) + "\n" for r in host]),
        [parse_trace(wire_trace(*second)), parse_trace(wire_trace(*first))],
    )
    body = [(r["kind"], r.get("call_id")) for r in merged[1:-1]]
    assert body == [
        ("sent", "a"),
        ("call_responded", "a"),
        ("result", "a"),
        ("sent", "b"),
        ("call_responded", "b"),
        ("result", "b"),
    ]


def test_a_host_that_sends_nothing_names_its_calls_by_its_call_records_alone():
    """A host that writes no ``sent`` of the server (the model stub, SPEC §14.7) names the
    wire's calls by its ``call`` records, in order; another record that carries a tool's
    ``name`` too (a result, as some hosts write it) is not a call (issue 33: the test's
    ``or`` made ``and`` counted it)."""
    host = [
        HOST_HEADER,
        {"kind": "call", "call_id": "a", "name": "mcp__s__t", "at": 1.0},
        {"kind": "result", "call_id": "a", "status": "ok", "name": "mcp__s__t", "at": 1.5},
        {"kind": "call", "call_id": "b", "name": "mcp__s__t", "at": 2.0},
        {"kind": "result", "call_id": "b", "status": "ok", "at": 2.5},
        {"kind": "end"},
    ]
    wire = [
        {**CALL, "call_id": "7", "at": 1.1},
        {"kind": "call_responded", "call_id": "7", "at": 1.2},
        {**CALL, "call_id": "8", "at": 2.1},
        {"kind": "call_responded", "call_id": "8", "at": 2.2},
    ]
    merged = merge_traces(
        parse_trace([json.dumps(r) + "\n" for r in host]), [parse_trace(wire_trace(*wire))]
    )
    sent = [
        (r["kind"], r.get("call_id")) for r in merged if r["kind"] in ("sent", "call_responded")
    ]
    assert sent == [("sent", "a"), ("call_responded", "a"), ("sent", "b"), ("call_responded", "b")]


def test_the_merge_names_the_wires_calls_by_the_hosts_and_orders_everything_by_time():
    """Two sessions of one server (two tap files); the host's ``sent`` of ``t`` pair with
    the wire's in order; the host's own wire-side records of it are left out; its reading
    of a listing rides on the wire's ``list_done``."""
    host_header = HOST_HEADER
    rich = [{"name": "t", "read_only": True, "spec": "x"}]
    host = [
        host_header,
        {"kind": "sent", "server": "s", "method": "tools/list", "at": 1.0},
        {"kind": "list_done", "server": "s", "tools": rich, "at": 1.2},
        {"kind": "call", "call_id": "a", "name": "mcp__s__t", "at": 2.0},
        {
            "kind": "sent",
            "server": "s",
            "method": "tools/call",
            "call_id": "a",
            "detail": "t",
            "at": 2.1,
        },
        {"kind": "call_responded", "call_id": "a", "at": 2.5},
        {"kind": "result", "call_id": "a", "status": "ok", "at": 2.6},
        {"kind": "call", "call_id": "b", "name": "mcp__s__t", "at": 5.0},
        {
            "kind": "sent",
            "server": "s",
            "method": "tools/call",
            "call_id": "b",
            "detail": "t",
            "at": 5.1,
        },
        {"kind": "call_responded", "call_id": "b", "at": 5.5},
        {"kind": "result", "call_id": "b", "status": "ok", "at": 5.6},
        {"kind": "end"},
    ]
    wire_one = [
        {"kind": "sent", "server": "s", "method": "tools/list", "at": 1.05},
        {"kind": "list_done", "server": "s", "tools": ["t"], "at": 1.1},
        {
            "kind": "sent",
            "server": "s",
            "method": "tools/call",
            "call_id": "7",
            "detail": "t",
            "at": 2.2,
        },
        {"kind": "call_responded", "call_id": "7", "at": 2.4},
        {"kind": "disconnect", "server": "s", "exit_status": 1, "at": 3.0},
    ]
    wire_two = [
        {
            "kind": "sent",
            "server": "s",
            "method": "tools/call",
            "call_id": "1",
            "detail": "t",
            "at": 5.2,
        },
        {"kind": "call_responded", "call_id": "1", "at": 5.4},
    ]
    parsed = [
        parse_trace([json.dumps(r) + "\n" for r in host]),
        parse_trace(wire_trace(*wire_two)),  # given out of order: sessions sort by time
        parse_trace(wire_trace(*wire_one)),
    ]
    merged = merge_traces(parsed[0], parsed[1:])
    assert merged[0]["wire"] == ["s"]
    body = [(r["kind"], r.get("call_id"), r["at"]) for r in merged[1:-1]]
    assert body == [
        ("sent", None, 1.05),
        ("list_done", None, 1.1),
        ("call", "a", 2.0),
        ("sent", "a", 2.2),
        ("call_responded", "a", 2.4),
        ("result", "a", 2.6),
        ("disconnect", None, 3.0),
        ("call", "b", 5.0),
        ("sent", "b", 5.2),
        ("call_responded", "b", 5.4),
        ("result", "b", 5.6),
    ]
    assert merged[2]["tools"] == rich
    assert merged[-1] == {"kind": "end"}
