"""The client side of the current MCP revision (issue 16; SPEC §11.2): how mcpbind names
itself, what a server's error answer and an unknown ``resultType`` become, what an HTTP
status at connect says, and the HTTP read timeout. Each against real ``MCPServer``s,
in-process, over stdio and over streamable HTTP (2026-07-28) where the transport matters."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from importlib import metadata
from typing import Annotated, Any, Literal

import anyio
import mcp_types as types
import pytest
from cli_runner import mcpbind
from mcp import StdioServerParameters
from mcp.server.elicitation import ElicitationResult
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel, Field
from testservers.common import make_server
from testservers.processes import RAW_WIRE, SERVER, http_server, http_server_process

from mcpbind.impl import (
    CredentialsRequired,
    ElicitationAnswer,
    ElicitationRequest,
    Host,
    HostConfig,
    McpConnector,
    ServerConfig,
    ServerStartupError,
)
from mcpbind.impl.calls.encoding import encode_result
from mcpbind.impl.errors import ConfigError, HttpStatusError
from mcpbind.impl.wire import http as http_module
from mcpbind.model import texts

TRANSPORTS = ["inproc", "stdio", "http"]


@pytest.fixture(scope="module")
def shared_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The port of one HTTP ``common.make_server`` for the module's tests that read nothing
    from its state directory (its ``connects`` and ``cancelled`` files) and never stop it:
    each opens a host, so a session, of its own."""
    with http_server_process(tmp_path_factory.mktemp("shared-http")) as port:
        yield port


@asynccontextmanager
async def serving_with(
    transport: str, state: pathlib.Path, http_port: int | None = None, **host_settings: Any
) -> AsyncIterator[Host]:
    """A host over ``common.make_server`` on ``transport``, with ``HostConfig`` settings."""
    async with serving(transport, state, host_settings=host_settings, http_port=http_port) as host:
        yield host


@asynccontextmanager
async def serving(
    transport: str,
    state: pathlib.Path,
    host_settings: dict[str, Any] | None = None,
    http_port: int | None = None,
    **settings: object,
) -> AsyncIterator[Host]:
    """A host over ``common.make_server`` on ``transport``; over HTTP, the server listening
    on ``http_port`` (``shared_http``) when given, else one of its own on ``state``."""
    extra = host_settings or {}
    if transport == "inproc":
        target: object = make_server(state)
    elif transport == "stdio":
        target = StdioServerParameters(command=sys.executable, args=[str(SERVER), str(state)])
    elif http_port is not None:
        url = f"http://127.0.0.1:{http_port}/mcp"
        config = ServerConfig(target=url, required=True, **settings)  # type: ignore[arg-type]
        async with Host.open(HostConfig(servers={"s": config}, **extra)) as host:
            yield host
        return
    else:
        async with http_server(state, listening=True) as port:
            config = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True, **settings)
            async with Host.open(HostConfig(servers={"s": config}, **extra)) as host:
                yield host
        return
    config = ServerConfig(target=target, required=True, **settings)  # type: ignore[arg-type]
    async with Host.open(HostConfig(servers={"s": config}, **extra)) as host:
        yield host


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_client_names_itself_mcpbind_with_its_package_version(
    transport, tmp_path, shared_http
):
    async with serving(transport, tmp_path, http_port=shared_http) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__whoami", {})
    assert result.status == "ok", result.output
    assert f"mcpbind {metadata.version('mcpbind')}" in result.output


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_json_rpc_error_answer_says_the_servers_code_and_message_once(
    transport, tmp_path, shared_http
):
    async with serving(transport, tmp_path, http_port=shared_http) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__refuse", {})
    assert result.status == "failed"
    expected = texts.SERVER_ERROR.format(
        server="s", tool="refuse", message="this needs a browser", code=-32042
    )
    assert result.output == expected
    assert result.output.count("32042") == 1
    assert "transport" not in result.output


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_x_mcp_header_parameters_reach_the_server_as_headers(
    transport, tmp_path, shared_http
):
    """SPEC §11.2: over 2026-07-28 HTTP the server rejects a ``tools/call`` whose
    ``Mcp-Param-Region`` header is missing (-32020); mcpbind's raw calls carry it."""
    async with serving(transport, tmp_path, http_port=shared_http) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__locate", {"region": "eu-west"})
    assert result.status == "ok", result.output
    assert result.output.endswith('{"result":"region eu-west"}')


def answering(result: dict[str, object], output_schema: dict[str, Any] | None = None) -> Server:
    """A lowlevel server whose one tool ``t`` answers ``result`` as it is."""

    async def on_list_tools(ctx: object, params: object) -> types.ListToolsResult:
        tool = types.Tool(name="t", input_schema={"type": "object"}, output_schema=output_schema)
        return types.ListToolsResult(tools=[tool])

    async def on_call_tool(ctx: object, params: object) -> types.CallToolResult:
        return types.CallToolResult.model_validate(result)

    return Server("answering", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


@pytest.mark.parametrize(
    ("extra", "status"),
    [({}, "ok"), ({"resultType": "complete"}, "ok"), ({"resultType": "bogus"}, "failed")],
    ids=["absent", "complete", "unknown"],
)
async def test_an_absent_result_type_means_complete_and_an_unknown_one_fails(extra, status):
    """The encoding's reading of ``resultType`` (SPEC §8.8). In process the SDK's server
    stamps ``complete`` on a result that has none, so ``absent`` never reaches the wire
    here: ``test_a_result_without_result_type_over_the_wire_is_complete`` sends one."""
    result = {"content": [{"type": "text", "text": "done"}], **extra}
    config = HostConfig(servers={"s": ServerConfig(target=answering(result), required=True)})
    async with Host.open(config) as host:
        ended = await host.call(host.sample(), "c1", "mcp__s__t", {})
    assert ended.status == status
    if status == "failed":
        assert ended.output == texts.UNKNOWN_RESULT_TYPE.format(
            server="s", tool="t", result_type="bogus"
        )
    else:
        assert ended.output.endswith("\ndone")


def raw_wire_target(transport: str, port: int | None = None) -> object:
    if transport == "stdio":
        return StdioServerParameters(command=sys.executable, args=[str(RAW_WIRE)])
    return f"http://127.0.0.1:{port}/mcp"


@asynccontextmanager
async def raw_wire(
    transport: str, state: pathlib.Path, **host_settings: Any
) -> AsyncIterator[Host]:
    """A host on ``testservers/raw_wire.py``, a 2026-07-28 server whose results carry no
    ``resultType``, over stdio or streamable HTTP."""
    if transport == "stdio":
        config = ServerConfig(target=raw_wire_target("stdio"), required=True)  # type: ignore[arg-type]
        async with Host.open(HostConfig(servers={"s": config}, **host_settings)) as host:
            yield host
        return
    async with http_server(state, listening=True, script=RAW_WIRE) as port:
        config = ServerConfig(target=raw_wire_target("http", port), required=True)  # type: ignore[arg-type]
        async with Host.open(HostConfig(servers={"s": config}, **host_settings)) as host:
            yield host


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_result_without_result_type_over_the_wire_is_complete(transport, tmp_path):
    """SPEC §8.8 (MCP 2026-07-28 basic/index, "ResultType": clients MUST treat an absent
    ``resultType`` as ``complete``). The SDK's own check of a 2026-07-28 result requires
    the field and failed such a call with "malformed reply: 2 validation error(s)"; the
    listing, the answer and the answer after an input round all come without it."""
    confirmed: list[ElicitationRequest] = []

    async def accept(request: ElicitationRequest) -> ElicitationAnswer:
        confirmed.append(request)
        return ElicitationAnswer("accept", {"ok": True})

    async with raw_wire(transport, tmp_path, elicitation="ask", elicitation_handler=accept) as host:
        step = host.sample()
        assert sorted(step.names) == ["mcp__s__confirm", "mcp__s__plain"]
        plain = await host.call(step, "c1", "mcp__s__plain", {})
        confirm = await host.call(step, "c2", "mcp__s__confirm", {})
    assert (plain.status, plain.output.splitlines()[1:]) == ("ok", ["plain-ok"]), plain.output
    assert confirm.status == "ok", confirm.output
    assert confirm.output.splitlines()[1:] == [
        'confirmed {"action": "accept", "content": {"ok": true}} with state opaque-state-1'
    ]
    assert [r.message for r in confirmed] == ["Please confirm"]


async def test_a_listing_with_fields_spelled_by_the_sdks_python_names_is_a_malformed_reply():
    """SPEC §8.8: a 2026-07-28 result is checked against its revision's schema as the
    SDK's own check does, by the wire's names. The SDK's models would also read
    ``ttl_ms``/``cache_scope`` by their Python names (mutation testing, issue 33:
    reading by name failed no test); a server that spells them so sent no valid
    listing, and no tool of it is installed."""
    env = {**os.environ, "MCPBIND_TEST_RAW_PYTHON_NAMES": "1"}
    target = StdioServerParameters(command=sys.executable, args=[str(RAW_WIRE)], env=env)
    config = HostConfig(servers={"s": ServerConfig(target=target, required=False)})
    async with Host.open(config) as host:
        names = sorted(host.sample().names)
        [status] = host.server_status()
    assert (names, status.tools) == ([], 0)
    why = "malformed reply: 2 validation error(s)"
    assert status.error == texts.REJECT_LIST_FAILED.format(server="s", why=why)


async def test_a_task_handle_without_a_task_id_fails_the_call_as_malformed():
    """SPEC §8.12: ``resultType: "task"`` is a task (the host declares the extension on
    every request); one without ``taskId`` is no task anyone could poll."""
    result = {"content": [], "resultType": "task", "status": "working"}
    config = HostConfig(servers={"s": ServerConfig(target=answering(result), required=True)})
    async with Host.open(config) as host:
        ended = await host.call(host.sample(), "c1", "mcp__s__t", {})
    why = "malformed task handle: taskId or status missing or invalid"
    assert (ended.status, ended.output) == (
        "failed",
        texts.TRANSPORT.format(tool="t", server="s", why=why),
    )


SCOPE_CHALLENGE = 'Bearer error="insufficient_scope", scope="notes:write"'
GATEWAY_TEXT = "Access is only allowed at localhost:3916"


@pytest.mark.parametrize(
    ("status", "env", "said"),
    [
        ("401", {}, "requires authorization (HTTP 401 Unauthorized)"),
        (
            "403",
            {"MCPBIND_TEST_HTTP_CHALLENGE": SCOPE_CHALLENGE},
            "requires authorization (HTTP 403 Forbidden)",
        ),
        (
            "403",
            {"MCPBIND_TEST_HTTP_BODY": GATEWAY_TEXT},
            f"the server answered HTTP 403 Forbidden: {GATEWAY_TEXT};",
        ),
        ("500", {}, "the server answered HTTP 500 Internal Server Error: no entry;"),
    ],
    ids=["401", "403-insufficient-scope", "403", "500"],
)
async def test_an_http_status_at_connect_is_named_and_a_refusal_says_authorization(
    tmp_path, status, env, said
):
    """SPEC §11.2: 401 and a 403 ``insufficient_scope`` challenge are OAuth's (§11.15);
    any other status, a plain 403 included, is named with the server's own text."""
    async with http_server(
        tmp_path, listening=True, MCPBIND_TEST_HTTP_STATUS=status, **env
    ) as port:
        config = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True)
        with pytest.raises(ServerStartupError) as raised:
            async with Host.open(HostConfig(servers={"s": config})):
                pass
    assert said in str(raised.value)
    assert "Server returned an error response" not in str(raised.value)
    refusal = "requires authorization" in said
    assert ("requires authorization" in str(raised.value)) == refusal
    assert ("login" in str(raised.value)) is False
    if status == "401":  # OAuth was tried first (SPEC §11.15): nothing to log in with
        assert isinstance(raised.value.__cause__, CredentialsRequired)
        assert "publishes no OAuth metadata" in str(raised.value)
    if not refusal:
        assert isinstance(raised.value.__cause__, HttpStatusError)


@pytest.mark.parametrize(
    ("body", "content_type", "text"),
    [
        (
            "<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1>"
            "<p>Only  from\nthe office &amp; VPN</p></body></html>",
            "text/html",
            "403 Forbidden Forbidden Only from the office & VPN",
        ),
        ("key sk-live-7f3e9a1c0b2d-SECRET refused\n" + "x" * 300, "text/plain", None),
        # A page labelled plain text is still markup (issue 33: the test of the label or
        # the leading "<" made "and" survived).
        ("  <html><body><h1>Forbidden</h1></body></html>", "text/plain", "Forbidden"),
    ],
    ids=["html", "secret-and-long", "markup-labelled-plain"],
)
async def test_a_403_says_the_servers_text_on_one_short_line_without_secrets(
    tmp_path, body, content_type, text
):
    env = {"MCPBIND_TEST_HTTP_BODY": body, "MCPBIND_TEST_HTTP_TYPE": content_type}
    async with http_server(tmp_path, listening=True, MCPBIND_TEST_HTTP_STATUS="403", **env) as port:
        config = ServerConfig(
            target=f"http://127.0.0.1:{port}/mcp",
            required=True,
            headers={"X-Api-Key": "sk-live-7f3e9a1c0b2d-SECRET"},
        )
        with pytest.raises(ServerStartupError) as raised:
            async with Host.open(HostConfig(servers={"s": config})):
                pass
    said = str(raised.value.__cause__)
    assert "\n" not in str(raised.value)
    assert "SECRET" not in str(raised.value)
    if text is not None:
        assert said == texts.HTTP_STATUS_TEXT.format(status="403 Forbidden", text=text)
    else:
        quoted = said.removeprefix("the server answered HTTP 403 Forbidden: ")
        assert quoted.startswith("key [redacted] refused xxx")
        assert len(quoted) == 200
        assert quoted.endswith("…")


async def test_a_403_to_one_call_fails_that_call_with_the_servers_text(tmp_path):
    """A gateway that refuses one request mid-session: the call says the status and the
    text (SPEC §11.2), the session lives on."""
    env = {"MCPBIND_TEST_HTTP_BODY": GATEWAY_TEXT, "MCPBIND_TEST_HTTP_STATUS_METHOD": "tools/call"}
    async with http_server(tmp_path, listening=True, MCPBIND_TEST_HTTP_STATUS="403", **env) as port:
        config = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True)
        async with Host.open(HostConfig(servers={"s": config})) as host:
            result = await host.call(host.sample(), "c1", "mcp__s__echo", {"text": "x"})
            assert host.statistics().connected == {"s": True}
    why = texts.HTTP_STATUS_TEXT.format(status="403 Forbidden", text=GATEWAY_TEXT)
    assert (result.status, result.output) == (
        "failed",
        texts.TRANSPORT.format(tool="echo", server="s", why=why),
    )


def test_mcpbind_call_says_a_403_and_its_text_on_one_line(tmp_path):
    async def serve_and_call() -> Any:
        env = {"MCPBIND_TEST_HTTP_BODY": GATEWAY_TEXT}
        async with http_server(
            tmp_path, listening=True, MCPBIND_TEST_HTTP_STATUS="403", **env
        ) as port:
            path = tmp_path / "mcpbind.toml"
            path.write_text(
                f'[mcp_servers.s]\nurl = "http://127.0.0.1:{port}/mcp"\nrequired = true\n',
                encoding="utf-8",
            )
            return await anyio.to_thread.run_sync(
                lambda: mcpbind("call", "mcp__s__echo", '{"text": "x"}', "--config", str(path))
            )

    done = anyio.run(serve_and_call)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "mcpbind: "
        + texts.STARTUP_FAILED.format(
            server="s",
            why=texts.HTTP_STATUS_TEXT.format(status="403 Forbidden", text=GATEWAY_TEXT),
        )
    ], done.stderr


@pytest.mark.parametrize("tool_timeout", [10.0, 0.0], ids=["longer", "none"])
async def test_the_http_read_timeout_follows_the_tool_timeout(
    tmp_path, monkeypatch, tool_timeout, shared_http
):
    """A tool silent for longer than the transport's base read timeout (here cut to 1 s)
    still answers when its tool timeout allows it; with the read timeout held at the base
    (the margin taken away) the same call fails, so the check can fail."""
    monkeypatch.setattr(http_module, "HTTP_READ_TIMEOUT", 1.0)
    arguments = {"seconds": 2.5}
    async with serving(
        "http", tmp_path, http_port=shared_http, tool_timeout_sec=tool_timeout
    ) as host:
        slept = await host.call(host.sample(), "c1", "mcp__s__slow", arguments)
    assert slept.status == "ok", slept.output
    if tool_timeout:
        monkeypatch.setattr(http_module, "HTTP_READ_MARGIN", 1.0 - tool_timeout)
        async with serving(
            "http", tmp_path, http_port=shared_http, tool_timeout_sec=tool_timeout
        ) as host:
            cut = await host.call(host.sample(), "c1", "mcp__s__slow", arguments)
        assert cut.status == "failed", cut.output


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_structured_answer_that_conforms_to_its_output_schema_is_ok(
    transport, tmp_path, shared_http
):
    async with serving(transport, tmp_path, http_port=shared_http) as host:
        binding = host.sample().binding("mcp__s__measure")
        assert binding is not None
        assert binding.spec.output_schema is not None
        result = await host.call(host.sample(), "c1", "mcp__s__measure", {"text": "a b c"})
    assert result.status == "ok", result.output
    assert result.output.endswith('{"length":5,"words":3}')


COUNTED = {
    "type": "object",
    "properties": {"count": {"type": "integer"}},
    "required": ["count"],
}


async def call_t(result: dict[str, object], schema: dict[str, Any] | None) -> tuple[str, str]:
    config = HostConfig(servers={"s": ServerConfig(target=answering(result, schema))})
    async with Host.open(config) as host:
        ended = await host.call(host.sample(), "c1", "mcp__s__t", {})
    return ended.status, ended.output


def mismatch(problem: str) -> str:
    return texts.STRUCTURED_MISMATCH.format(server="s", tool="t", problem=problem)


async def test_structured_content_that_does_not_match_the_output_schema_ends_error_naming_it():
    answer = {"content": [], "structuredContent": {"count": "three"}}
    assert await call_t(answer, COUNTED) == (
        "error",
        mismatch("at $.count: 'three' is not of type 'integer'"),
    )


async def test_a_tool_with_an_output_schema_that_answers_no_structured_content_ends_error():
    answer = {"content": [{"type": "text", "text": "3"}]}
    assert await call_t(answer, COUNTED) == ("error", mismatch("structuredContent is missing"))


async def test_an_is_error_answer_is_not_held_to_the_output_schema():
    answer = {"content": [{"type": "text", "text": "it broke"}], "isError": True}
    status, output = await call_t(answer, COUNTED)
    assert status == "error"
    assert output.endswith("it broke")


async def test_a_remote_ref_in_an_output_schema_is_never_fetched():
    """A ``$ref`` to a schema on a loopback port that is listening: nothing connects."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        url = f"http://127.0.0.1:{port}/count.json"
        schema = {"type": "object", "properties": {"count": {"$ref": url}}}
        answer = {"content": [], "structuredContent": {"count": 3}}
        status, output = await call_t(answer, schema)
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert status == "error"
    assert f"$ref {url!r} cannot be resolved" in output


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "array"}, "outputSchema has type 'array', not 'object'"),
        (
            {"type": "object", "properties": {"n": {"type": "integr"}}},
            "outputSchema is not a valid JSON Schema: at $.properties.n.type",
        ),
    ],
    ids=["not-an-object", "not-a-schema"],
)
async def test_an_invalid_output_schema_rejects_the_whole_listing(schema, problem):
    server = answering({"content": []}, schema)
    async with Host.open(HostConfig(servers={"s": ServerConfig(target=server)})) as host:
        assert host.sample().binding("mcp__s__t") is None
        outcome = await host.refresh("s")
    assert outcome.status == "rejected"
    assert problem in outcome.reason


# --- content: what reaches the model (SPEC §8.8) ------------------------------------------

PNG = "iVBORw0KGgo" + "A" * 400_000  # the size server-filesystem sends for a 300 KB image


def media_file_answer() -> dict[str, Any]:
    """server-filesystem's ``read_media_file``: the image, mirrored in structuredContent."""
    image = {"type": "image", "data": PNG, "mimeType": "image/png"}
    return {"content": [image], "structuredContent": {"content": [image]}}


@pytest.mark.parametrize("image_capable", [False, True], ids=["text-only", "image-capable"])
async def test_an_image_mirrored_in_structured_content_never_reaches_the_model_as_base64(
    image_capable,
):
    server = answering(media_file_answer())
    config = HostConfig(servers={"s": ServerConfig(target=server)}, image_capable=image_capable)
    async with Host.open(config) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__t", {})
    assert result.status == "ok"
    assert "AAAA" not in result.output
    assert len(result.output) < 300
    assert '"data":"[400011 base64 characters omitted]"' in result.output
    if image_capable:
        assert [item.data for item in result.items] == [PNG]
        assert "[image 1: image/png, attached to this result]" in result.output
    else:
        assert result.items == ()
        assert "[image omitted: image/png, 400011 base64 characters]" in result.output


def encoded(raw: dict[str, Any], image_capable: bool = False) -> str:
    return encode_result(raw, 0.0, server="s", tool="t", image_capable=image_capable)[1]


def test_with_structured_content_its_json_text_is_shown_once_and_other_blocks_still_are():
    structured = {"rows": 2}
    raw = {
        "structuredContent": structured,
        "content": [
            {"type": "text", "text": '{\n  "rows": 2\n}'},  # its fallback: not repeated
            {"type": "text", "text": "two rows matched"},
            {"type": "audio", "data": "UklGR" * 10, "mimeType": "audio/wav"},
        ],
    }
    body = encoded(raw).split("\n", 1)[1]
    assert body.splitlines() == [
        '{"rows":2}',
        "two rows matched",
        "[audio omitted: audio/wav, 50 base64 characters]",
    ]


def test_a_plain_return_value_wrapped_as_result_is_not_repeated():
    raw = {"structuredContent": {"result": "done"}, "content": [{"type": "text", "text": "done"}]}
    assert encoded(raw).split("\n", 1)[1] == '{"result":"done"}'


def test_a_resource_link_shows_its_name_title_uri_mime_type_and_description():
    link = {
        "type": "resource_link",
        "uri": "file:///srv/report.pdf",
        "name": "report.pdf",
        "title": "Quarterly report",
        "description": "Q3 figures, 12 pages",
        "mimeType": "application/pdf",
    }
    body = encoded({"content": [link, {"type": "resource_link", "uri": "file:///x"}]})
    assert body.split("\n", 1)[1].splitlines() == [
        '[resource link: report.pdf "Quarterly report" <file:///srv/report.pdf> '
        "(application/pdf): Q3 figures, 12 pages]",
        "[resource link: <file:///x>]",
    ]


def test_an_embedded_blob_in_structured_content_is_replaced_by_its_size():
    blob = {"uri": "file:///a.bin", "blob": "QUJD" * 100, "mimeType": "application/octet-stream"}
    body = encoded({"content": [], "structuredContent": {"resource": blob}})
    assert "QUJD" not in body
    assert '"blob":"[400 base64 characters omitted]"' in body


# --- elicitation (SPEC §11.10) --------------------------------------------------------


class Profile(BaseModel):
    """Fields whose JSON Schema ``default`` differs from what the server assumes when a
    field is left out, so the server's answer shows whether the client filled it in."""

    name: str
    language: str = Field(default="(left out)", json_schema_extra={"default": "en"})
    copies: int = Field(default=-1, json_schema_extra={"default": 2})


async def ask_profile() -> Elicit[Profile]:
    return Elicit("Your profile?", Profile)


def profile_server() -> MCPServer:
    server = MCPServer("profile")

    @server.tool(description="Ask for a profile")
    async def profile(answer: Annotated[ElicitationResult[Profile], Resolve(ask_profile)]) -> str:
        if answer.action != "accept":
            return answer.action
        return f"{answer.data.name} {answer.data.language} {answer.data.copies}"

    _ = profile
    return server


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_accepted_form_gets_the_schemas_defaults_for_the_fields_it_leaves_out(mode):
    async def user(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer("accept", {"name": "ada", "copies": 5})

    config = HostConfig(
        servers={"p": ServerConfig(target=profile_server())},
        elicitation="ask",
        elicitation_handler=user,
    )
    async with Host.open(config, connector=McpConnector(mode)) as host:
        result = await host.call(host.sample(), "c1", "mcp__p__profile", {})
    assert result.status == "ok", result.output
    assert result.output.endswith('{"result":"ada en 5"}')  # language filled, copies kept


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_client_advertises_form_elicitation_only(transport, tmp_path, shared_http):
    async with serving(transport, tmp_path, http_port=shared_http) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__modes", {})
    assert result.status == "ok", result.output
    assert result.output.endswith('{"result":"form"}')


@pytest.mark.parametrize(("limit", "length"), [(None, 40_000), (0, None)], ids=["default", "off"])
async def test_by_default_one_result_is_cut_to_40000_characters_and_0_turns_that_off(limit, length):
    answer = {"content": [{"type": "text", "text": "x" * 100_000}]}
    settings = {} if limit is None else {"output_limit": limit}
    server = ServerConfig(target=answering(answer))
    async with Host.open(HostConfig(servers={"s": server}, **settings)) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__t", {})
    if length is None:
        assert result.output.endswith("x" * 100_000)
    else:
        assert len(result.output) == length
        assert result.output.endswith("[mcpbind: output truncated: 100026 characters, limit 40000]")


@pytest.mark.parametrize("limit", [50, -1, True])
def test_an_output_limit_between_1_and_99_or_negative_is_a_config_error(limit):
    with pytest.raises(ConfigError, match="output_limit must be 0"):
        HostConfig(output_limit=limit)


async def test_a_call_rejected_for_its_headers_is_retried_once_after_a_refresh(tmp_path):
    """SPEC §8.9 (INV-13): the first listing hides ``locate``'s ``x-mcp-header``, so the
    call goes without ``Mcp-Param-Region`` and the server answers -32020 unrun; the host
    refreshes the server, learns the header, and the one retry runs the tool."""
    log = tmp_path / "http.log"
    env = {"MCPBIND_TEST_HIDDEN_HEADERS": "1", "MCPBIND_TEST_HTTP_LOG": str(log)}
    async with http_server(tmp_path, listening=True, **env) as port:
        config = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True)
        async with Host.open(HostConfig(servers={"s": config})) as host:
            result = await host.call(host.sample(), "c1", "mcp__s__locate", {"region": "eu"})
    assert result.status == "ok", result.output
    assert result.output.endswith('{"result":"region eu"}')
    requests = log.read_text().splitlines()
    assert requests.count("POST tools/call") == 2
    assert requests.count("POST tools/list") == 2


async def test_a_call_rejected_again_after_the_refresh_fails_without_a_third_send(tmp_path):
    log = tmp_path / "http.log"
    env = {"MCPBIND_TEST_HIDDEN_HEADERS": "-1", "MCPBIND_TEST_HTTP_LOG": str(log)}
    async with http_server(tmp_path, listening=True, **env) as port:
        config = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True)
        async with Host.open(HostConfig(servers={"s": config})) as host:
            result = await host.call(host.sample(), "c1", "mcp__s__locate", {"region": "eu"})
    assert result.status == "failed"
    assert result.output == texts.REJECTED_AGAIN.format(server="s", tool="locate")
    assert log.read_text().splitlines().count("POST tools/call") == 2


def sign_in_server() -> MCPServer:
    """A tool that asks the user to open a sign-in page (URL-mode elicitation)."""
    server = MCPServer("sign-in")

    @server.tool(description="Ask the user to sign in on a web page")
    async def sign_in(ctx: Context) -> str:
        answer = await ctx.elicit_url("Sign in to continue", "https://example.test/login", "e-7")
        return answer.action

    _ = sign_in
    return server


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_url_elicitation_is_offered_only_when_the_handler_takes_urls(
    transport, tmp_path, shared_http
):
    async def user(request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer("decline")

    settings = {"elicitation": "ask", "elicitation_handler": user}
    modes = {}
    for url in (False, True):
        async with serving_with(
            transport, tmp_path, shared_http, elicitation_url=url, **settings
        ) as host:
            result = await host.call(host.sample(), "c1", "mcp__s__modes", {})
        modes[url] = result.output.rsplit("\n", 1)[-1]
    assert modes == {False: '{"result":"form"}', True: '{"result":"form,url"}'}


async def sign_in(
    action: Literal["accept", "decline", "cancel"], *, url: bool
) -> tuple[Any, list[ElicitationRequest]]:
    """``sign_in`` called once, the user answering ``action``; the result and what the
    user was asked. A handshake-era session: MCPServer's ``ctx.elicit_url`` asks over the
    back-channel."""
    asked: list[ElicitationRequest] = []

    async def user(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer(action)

    config = HostConfig(
        servers={"s": ServerConfig(target=sign_in_server())},
        elicitation="ask",
        elicitation_handler=user,
        elicitation_url=url,
    )
    async with Host.open(config, connector=McpConnector("legacy")) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__sign_in", {})
    return result, asked


async def test_url_elicitation_reaches_the_handler_with_its_url_and_its_answer_the_server():
    result, asked = await sign_in("accept", url=True)
    assert result.status == "ok", result.output
    assert result.output.endswith('{"result":"accept"}')
    (request,) = asked
    assert (request.mode, request.url, request.elicitation_id) == (
        "url",
        "https://example.test/login",
        "e-7",
    )
    assert request.message == "Sign in to continue"


@pytest.mark.parametrize("url", [False, True], ids=["no-url-handler", "url-handler"])
async def test_a_url_request_is_declined_without_asking_unless_the_handler_takes_urls(url):
    result, asked = await sign_in("cancel", url=url)
    assert result.output.endswith('{"result":"cancel"}' if url else '{"result":"decline"}')
    assert len(asked) == (1 if url else 0)


@pytest.mark.parametrize("settings", [{"elicitation_url": True}, {"elicitation_url": "yes"}])
def test_elicitation_url_needs_the_ask_policy_and_a_boolean(settings):
    with pytest.raises(ConfigError, match="elicitation_url"):
        HostConfig(servers={}, **settings)


# --- -32042, URL elicitation required (SPEC §11.10) ---------------------------------------

URL_TRANSPORTS = [
    "inproc",
    "stdio",
    "http",
    pytest.param(  # the SDK's SSE generator at close, as in tests/test_close.py
        "http-2025",
        marks=pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    ),
]
"""``http-2025``: a handshake-era session (2025-11-25), the revision that defines -32042
(2026-07-28 retires the code, but a server that still sends it means the same)."""
CONNECT_URLS = (
    "https://example.com/connect?elicitationId=e1 (Connect your Example account 1) and "
    "https://example.com/connect?elicitationId=e2 (Connect your Example account 2)"
)


@asynccontextmanager
async def url_serving(transport: str, state: pathlib.Path, **host_settings: Any):
    if transport != "http-2025":
        async with serving_with(transport, state, **host_settings) as host:
            yield host
        return
    async with http_server(state, listening=True, MCPBIND_TEST_HTTP_LEGACY="1") as port:
        config = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True)
        async with Host.open(HostConfig(servers={"s": config}, **host_settings)) as host:
            yield host


async def connect_twice(
    transport: str, state: pathlib.Path, answers: list[str] | None = None, **settings: Any
) -> tuple[Any, list[ElicitationRequest]]:
    """``connect`` with two URLs; what the user (answering ``answers`` in turn) was asked."""
    asked: list[ElicitationRequest] = []

    async def user(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer((answers or ["accept", "accept"])[len(asked) - 1])  # type: ignore[arg-type]

    if settings.get("elicitation") == "ask":
        settings["elicitation_handler"] = user
    async with url_serving(transport, state, **settings) as host:
        result = await host.call(host.sample(), "c1", "mcp__s__connect", {"accounts": 2})
    assert (state / "connects").read_text().split() == ["2"], "sent once, never retried"
    return result, asked


@pytest.mark.parametrize("transport", URL_TRANSPORTS)
@pytest.mark.parametrize(
    "settings", [{}, {"elicitation": "ask"}], ids=["decline", "ask-without-urls"]
)
async def test_url_elicitation_required_names_the_urls_when_no_one_can_be_shown_them(
    transport, settings, tmp_path
):
    """A server's -32042 carries the URLs the user must open (MCP 2025-11-25
    client/elicitation); a host whose handler takes no URLs asks nobody, and the call's
    text names them so that the model can tell the user."""
    result, asked = await connect_twice(transport, tmp_path, **settings)
    assert (result.status, asked) == ("failed", [])
    assert result.output == texts.URL_REQUIRED.format(server="s", tool="connect", urls=CONNECT_URLS)


@pytest.mark.parametrize("transport", URL_TRANSPORTS)
async def test_url_elicitation_required_asks_the_handler_with_each_url_and_does_not_retry(
    transport, tmp_path
):
    result, asked = await connect_twice(
        transport, tmp_path, elicitation="ask", elicitation_url=True
    )
    assert [(r.server, r.mode, r.url, r.elicitation_id, r.message) for r in asked] == [
        ("s", "url", f"https://example.com/connect?elicitationId=e{n}", f"e{n}", message)
        for n, message in (
            (1, "Connect your Example account 1"),
            (2, "Connect your Example account 2"),
        )
    ]
    assert result.status == "failed"
    assert result.output == texts.URL_ACCEPTED.format(server="s", tool="connect", urls=CONNECT_URLS)


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_url_elicitation_required_stops_asking_at_the_first_url_the_user_refuses(
    action, tmp_path
):
    result, asked = await connect_twice(
        "stdio", tmp_path, [action], elicitation="ask", elicitation_url=True
    )
    assert [r.elicitation_id for r in asked] == ["e1"]
    assert result.output == texts.URL_DECLINED.format(
        server="s", tool="connect", urls=CONNECT_URLS, action=action
    )


def test_mcpbind_call_prints_the_urls_of_url_elicitation_required_on_one_line(tmp_path):
    path = tmp_path / "mcpbind.toml"
    path.write_text(
        "[mcp_servers.s]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(SERVER), str(tmp_path)])}\n",
        encoding="utf-8",
    )
    done = mcpbind("call", "mcp__s__connect", '{"accounts": 2}', "--config", str(path))
    expected = texts.URL_REQUIRED.format(server="s", tool="connect", urls=CONNECT_URLS)
    assert done.stdout.splitlines() == ["cli-1: failed", expected], done.stderr
    assert "Traceback" not in done.stderr
