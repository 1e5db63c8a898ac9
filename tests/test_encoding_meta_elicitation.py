"""Result encoding (SPEC §8.8, §11.5), request metadata and elicitation (SPEC §11.10),
against real in-process MCP servers."""

from __future__ import annotations

import base64
import json
from typing import Annotated

import anyio
import attrs
import mcp_types as types
import pytest
import trio.testing
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel

from mcpbind.impl import (
    ConfigError,
    ElicitationAnswer,
    ElicitationRequest,
    Host,
    HostConfig,
    ImageItem,
    McpConnector,
    ServerConfig,
    ToolConfig,
)
from mcpbind.impl.calls.encoding import truncate_bytes
from mcpbind.impl.config.host import parse_toml
from mcpbind.impl.host import META_CALL_ID, META_SESSION_ID, META_STEP
from mcpbind.model import texts

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n not really a picture").decode()
WAV = base64.b64encode(b"RIFF not really a sound").decode()


class Confirm(BaseModel):
    pass


class Name(BaseModel):
    name: str


async def ask_confirm() -> Elicit[Confirm]:
    return Elicit("Delete everything?", Confirm)


async def ask_name() -> Elicit[Name]:
    return Elicit("Who are you?", Name)


def media_server() -> MCPServer:
    """Tools that answer images, long text, their own request _meta, and elicit."""
    server = MCPServer("media")

    @server.tool(description="A caption, a picture and a sound")
    async def picture() -> list[types.ContentBlock]:
        return [
            types.TextContent(type="text", text="a cat"),
            types.ImageContent(type="image", data=PNG, mime_type="image/png"),
            types.AudioContent(type="audio", data=WAV, mime_type="audio/wav"),
        ]

    @server.tool(description="Echo text back (unstructured)")
    async def echo(text: str) -> list[types.ContentBlock]:
        return [types.TextContent(type="text", text=text)]

    @server.tool(description="Report the request's _meta")
    async def meta(ctx: Context) -> list[types.ContentBlock]:
        seen = dict(ctx.request_context.meta or {})
        ours = {k: v for k, v in seen.items() if k.startswith("dev.mcpbind/")}
        return [types.TextContent(type="text", text=json.dumps(ours, sort_keys=True))]

    @server.tool(description="Ask for a confirmation")
    async def confirm(
        answer: Annotated[ElicitationResult[Confirm], Resolve(ask_confirm)],
    ) -> str:
        return answer.action

    @server.tool(description="Ask for a name")
    async def whoami(answer: Annotated[ElicitationResult[Name], Resolve(ask_name)]) -> str:
        if answer.action == "accept":
            return f"accept:{answer.data.name}"
        return answer.action

    @server.tool(description="Ask for a confirmation, then work for `seconds`")
    async def confirm_then_work(
        seconds: float, answer: Annotated[ElicitationResult[Confirm], Resolve(ask_confirm)]
    ) -> str:
        await anyio.sleep(seconds)
        return answer.action

    @server.tool(description="Issues matching a query (a list: one text block per item)")
    async def found(query: str) -> list[str]:
        return [f"{query} fails", f"{query} is slow"]

    @server.tool(description="A list and, beside it, a note of its own")
    async def annotated() -> types.CallToolResult:
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="1"),
                types.TextContent(type="text", text="see also 2"),
            ],
            structured_content={"result": [1, 2]},
        )

    _ = (picture, echo, meta, confirm, whoami, confirm_then_work, found, annotated)
    return server


def media(**tools: ToolConfig) -> ServerConfig:
    return ServerConfig(target=media_server(), tools=tools)


# --- images (SPEC §8.8) ------------------------------------------------------------------


async def test_an_image_becomes_an_item_for_an_image_capable_model_and_a_note_otherwise():
    note = f"[image omitted: image/png, {len(PNG)} base64 characters]"
    audio_note = f"[audio omitted: audio/wav, {len(WAV)} base64 characters]"
    async with Host.open(HostConfig(servers={"m": media()}, image_capable=True)) as host:
        capable = await host.call(host.sample(), "c1", "mcp__m__picture", {})
    async with Host.open(HostConfig(servers={"m": media()})) as host:
        plain = await host.call(host.sample(), "c2", "mcp__m__picture", {})

    assert capable.status == "ok"
    assert capable.items == (ImageItem("image/png", PNG),)
    body = capable.output.split("\n", 1)[1]
    attached = texts.IMAGE_ATTACHED.format(index=1, mime_type="image/png")
    assert body == f"a cat\n{attached}\n{audio_note}"  # audio stays a note
    assert plain.items == ()
    assert plain.output.split("\n", 1)[1] == f"a cat\n{note}\n{audio_note}"


async def test_a_returned_list_reaches_the_model_once_as_its_structured_content():
    """SPEC §8.8: MCPServer's one text block per item of a returned list is only the
    fallback of ``{"result": [...]}``; a block that is not one of the items is kept."""
    async with Host.open(HostConfig(servers={"m": media()})) as host:
        step = host.sample()
        listed = await host.call(step, "c1", "mcp__m__found", {"query": "login"})
        other = await host.call(step, "c2", "mcp__m__annotated", {})

    assert listed.status == "ok"
    assert listed.output.split("\n", 1)[1] == '{"result":["login fails","login is slow"]}'
    assert other.output.split("\n", 1)[1] == '{"result":[1,2]}\n1\nsee also 2'


# --- limits (SPEC §11.5) -----------------------------------------------------------------


@pytest.mark.parametrize("limit", range(100, 140))
def test_a_byte_limit_cuts_on_a_character_boundary_with_the_marker_within_the_limit(limit):
    text = "é€😀x" * 40  # 2-, 3-, 4- and 1-byte characters: 400 bytes
    cut = truncate_bytes(text, limit)
    encoded = cut.encode()  # valid UTF-8, or this raises
    marker = texts.TRUNCATED_BYTES.format(total=400, limit=limit)
    assert cut.endswith("\n" + marker)
    assert len(encoded) <= limit
    kept = cut[: -len(marker) - 1]
    assert text.startswith(kept)
    # as much as fits: one more character would break the limit
    assert len((text[: len(kept) + 1] + "\n" + marker).encode()) > limit
    assert truncate_bytes(text, 400) == text


@pytest.mark.parametrize("limit", range(60, 121, 4))
def test_a_text_of_few_characters_but_more_bytes_than_the_limit_is_cut(limit):
    """The shortcut takes a text whole only when even four bytes a character fit: 30
    four-byte characters (120 bytes) are cut under any limit below 120 (mutation seed
    103: the shortcut's ``len(text) * 4`` made ``len(text) ^ 4`` let them through)."""
    text = "😀" * 30
    cut = truncate_bytes(text, limit)
    if limit >= 120:
        assert cut == text
    else:
        assert len(cut.encode()) <= limit
        assert cut.endswith("\n" + texts.TRUNCATED_BYTES.format(total=120, limit=limit))


async def test_a_token_limit_allows_four_bytes_per_token():
    config = HostConfig(servers={"m": media(echo=ToolConfig(output_token_limit=50))})
    async with Host.open(config) as host:
        snap = host.sample()
        long = await host.call(snap, "c1", "mcp__m__echo", {"text": "ü" * 300})
        short = await host.call(snap, "c2", "mcp__m__echo", {"text": "ü" * 50})
    assert len(long.output.encode()) <= 200
    assert long.output.endswith(", limit 200]")
    assert "bytes" in long.output.rsplit("\n", 1)[1]
    assert short.output.endswith("ü" * 50)  # 100 bytes of text + header: within 200


async def test_a_tools_own_limit_beats_the_host_default_and_its_byte_limit_beats_its_tokens():
    config = HostConfig(
        servers={"m": media(echo=ToolConfig(output_byte_limit=150, output_token_limit=1000))},
        output_limit=120,
    )
    async with Host.open(config) as host:
        snap = host.sample()
        echo = await host.call(snap, "c1", "mcp__m__echo", {"text": "x" * 1000})
        other = await host.call(snap, "c2", "mcp__m__picture", {})
    assert len(echo.output.encode()) == 150
    assert echo.output.endswith("bytes, limit 150]")
    assert len(other.output) == 120  # the host's default, in characters
    assert other.output.endswith("characters, limit 120]")


def test_byte_and_token_limits_below_what_the_marker_needs_are_config_errors():
    with pytest.raises(ConfigError, match="output_byte_limit must be an integer >= 100"):
        ToolConfig(output_byte_limit=99)
    with pytest.raises(ConfigError, match="output_token_limit must be an integer >= 25"):
        ToolConfig(output_token_limit=24)


# --- request metadata (SPEC §11.10) ------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_tools_call_carries_the_session_step_and_call_id_in_meta(mode):
    config = HostConfig(servers={"m": media()})
    async with Host.open(config, connector=McpConnector(mode)) as host:
        host.sample()
        snap = host.sample()
        result = await host.call(snap, "call-7", "mcp__m__meta", {})
        other = await host.call(host.sample(), "call-8", "mcp__m__meta", {})
    assert result.status == "ok"
    seen = json.loads(result.output.split("\n", 1)[1])
    assert seen == {META_CALL_ID: "call-7", META_SESSION_ID: host.session_id, META_STEP: 1}
    assert json.loads(other.output.split("\n", 1)[1])[META_STEP] == 2
    assert len(host.session_id) == 32


async def test_each_host_has_its_own_session_id():
    async with Host.open(HostConfig()) as one, Host.open(HostConfig()) as two:
        assert one.session_id != two.session_id


# --- elicitation (SPEC §11.10) -----------------------------------------------------------


@attrs.define
class Asker:
    """An elicitation handler that records what it was asked."""

    answer: ElicitationAnswer | Exception
    delay: float = 0.0
    asked: list[ElicitationRequest] = attrs.field(factory=list)

    async def __call__(self, request: ElicitationRequest) -> ElicitationAnswer:
        self.asked.append(request)
        await anyio.sleep(self.delay)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


async def elicited(mode: str, tool: str, **settings: object) -> str:
    config = HostConfig(servers={"m": media()}, **settings)  # type: ignore[arg-type]
    async with Host.open(config, connector=McpConnector(mode)) as host:
        result = await host.call(host.sample(), "c1", f"mcp__m__{tool}", {})
    assert result.status == "ok", result.output
    return result.output.split("\n", 1)[1]


MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])


@MODES
async def test_by_default_every_elicitation_is_declined(mode):
    assert await elicited(mode, "confirm") == '{"result":"decline"}'
    assert await elicited(mode, "whoami") == '{"result":"decline"}'


@MODES
async def test_never_ask_accepts_a_plain_confirmation_and_declines_a_form_with_fields(mode):
    assert await elicited(mode, "confirm", elicitation="never_ask") == '{"result":"accept"}'
    assert await elicited(mode, "whoami", elicitation="never_ask") == '{"result":"decline"}'


@MODES
async def test_ask_forwards_the_question_to_the_handler_and_its_answer_to_the_server(mode):
    asker = Asker(ElicitationAnswer("accept", {"name": "ada"}))
    out = await elicited(mode, "whoami", elicitation="ask", elicitation_handler=asker)
    assert out == '{"result":"accept:ada"}'
    [request] = asker.asked
    assert (request.server, request.message) == ("m", "Who are you?")
    assert request.requested_schema["properties"] == {"name": {"title": "Name", "type": "string"}}


@MODES
async def test_a_handler_that_raises_or_answers_nonsense_declines(mode, caplog):
    failing = Asker(RuntimeError("the UI crashed"))
    out = await elicited(mode, "whoami", elicitation="ask", elicitation_handler=failing)
    assert out == '{"result":"decline"}'
    assert "elicitation handler failed for server 'm'" in caplog.text
    bad = Asker(ElicitationAnswer("accept", {"name": {"nested": 1}}))
    out = await elicited(mode, "whoami", elicitation="ask", elicitation_handler=bad)
    assert out == '{"result":"decline"}'
    cancel = Asker(ElicitationAnswer("cancel"))
    out = await elicited(mode, "confirm", elicitation="ask", elicitation_handler=cancel)
    assert out == '{"result":"cancel"}'


async def test_the_tool_timeout_pauses_on_either_backend_in_real_time():
    """SPEC §11.10 on trio and asyncio alike: the user takes twice the tool's timeout."""
    slow_user = Asker(ElicitationAnswer("accept", {}), delay=0.6)
    config = HostConfig(
        servers={"m": ServerConfig(target=media_server(), tool_timeout_sec=0.3)},
        elicitation="ask",
        elicitation_handler=slow_user,
    )
    async with Host.open(config) as host:
        result = await host.call(host.sample(), "c1", "mcp__m__confirm", {})
    assert result.status == "ok", result.output
    assert result.output.endswith('{"result":"accept"}')


@pytest.mark.trio
@MODES
async def test_the_tool_timeout_pauses_while_the_user_is_asked(
    mode: str, autojump_clock: trio.testing.MockClock
):
    slow_user = Asker(ElicitationAnswer("accept", {}), delay=5.0)
    config = HostConfig(
        servers={"m": ServerConfig(target=media_server(), tool_timeout_sec=1)},
        elicitation="ask",
        elicitation_handler=slow_user,
    )
    async with Host.open(config, connector=McpConnector(mode)) as host:
        started = anyio.current_time()
        result = await host.call(host.sample(), "c1", "mcp__m__confirm", {})
        took = anyio.current_time() - started
    assert result.status == "ok", result.output
    assert result.output.endswith('{"result":"accept"}')
    assert took >= 5.0  # the user took 5 s of the tool's 1 s: the clock waited
    assert slow_user.asked


@pytest.mark.trio
@MODES
@pytest.mark.parametrize(("work", "status"), [(0.5, "ok"), (2.0, "timed_out")])
async def test_after_the_question_the_call_has_only_the_time_it_had_left(
    mode: str, work: float, status: str, autojump_clock: trio.testing.MockClock
):
    slow_user = Asker(ElicitationAnswer("accept", {}), delay=5.0)
    config = HostConfig(
        servers={"m": ServerConfig(target=media_server(), tool_timeout_sec=1)},
        elicitation="ask",
        elicitation_handler=slow_user,
    )
    async with Host.open(config, connector=McpConnector(mode)) as host:
        started = anyio.current_time()
        arguments = {"seconds": work}
        result = await host.call(host.sample(), "c1", "mcp__m__confirm_then_work", arguments)
        took = anyio.current_time() - started
    assert result.status == status, result.output
    if status == "timed_out":
        assert result.output == texts.TIMED_OUT.format(seconds="1 second")
        assert 6.0 <= took < 6.5  # 5 s asked (paused) + what was left of 1 s


def test_ask_without_a_handler_is_a_config_error():
    with pytest.raises(ConfigError, match="elicitation = 'ask' needs an elicitation_handler"):
        HostConfig(elicitation="ask")
    with pytest.raises(ConfigError, match="elicitation must be one of decline, never_ask, ask"):
        HostConfig(elicitation="sometimes")  # type: ignore[arg-type]


def test_the_mcpbind_table_reads_elicitation_and_image_capable():
    loaded = parse_toml('[mcpbind]\nelicitation = "never_ask"\nimage_capable = true\n')
    assert (loaded.config.elicitation, loaded.config.image_capable) == ("never_ask", True)
    with pytest.raises(ConfigError, match=r"\[mcpbind\] key 'elicitation': .*needs an elicit"):
        parse_toml('[mcpbind]\nelicitation = "ask"\n')
    with pytest.raises(ConfigError, match=r"\[mcpbind\] key 'image_capable': must be true"):
        parse_toml("[mcpbind]\nimage_capable = 1\n")
