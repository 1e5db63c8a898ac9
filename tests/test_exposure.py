"""Deferred tools, tool_search and shortened schemas (SPEC §11.9), on real MCP servers."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import mcp_types as types
import pytest
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer

from mcpbind.impl import (
    BuiltinTool,
    ConfigError,
    ContributorRejected,
    Host,
    HostConfig,
    ServerConfig,
)
from mcpbind.impl.catalog.exposure import parse_search_arguments, search_words
from mcpbind.impl.catalog.schemas import schema_bytes, shorten_schema
from mcpbind.impl.config.host import parse_toml
from mcpbind.impl.config.server import TOOL_SEARCH
from mcpbind.model import texts


def catalog_server(tools: list[dict[str, Any]], calls: list[str] | None = None) -> Server[Any]:
    """A lowlevel server listing ``tools`` in one page; a call answers with its name."""
    seen = calls if calls is not None else []

    async def on_list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        seen.append(params.name)
        text = json.dumps({"tool": params.name, "arguments": params.arguments})
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("catalog", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def numbered(count: int, **extra: Any) -> list[dict[str, Any]]:
    return [
        {"name": f"t{i:03}", "description": f"filler tool number {i}", **extra}
        | {"inputSchema": {"type": "object"}}
        for i in range(count)
    ]


def named(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": schema or {"type": "object"}}


def host_config(tools: list[dict[str, Any]], calls: list[str] | None = None, **settings: Any):
    return HostConfig(
        servers={"big": ServerConfig(target=catalog_server(tools, calls))}, **settings
    )


async def noop(arguments: dict[str, Any]) -> str:
    return "ran"


def builtin(name: str) -> BuiltinTool:
    return BuiltinTool(name, f"host tool {name}", {"type": "object"}, noop)


def found_names(output: str) -> list[str]:
    return [t["name"] for t in json.loads(output.splitlines()[2])["tools"]]


# --- deferral ---------------------------------------------------------------------------


async def test_at_the_threshold_the_step_shows_exactly_the_registry_and_no_tool_search():
    async with Host.open(host_config(numbered(100))) as host:
        snap = host.sample()
        state = host.registry.state
        assert snap.specs is state.specs
        assert snap.names is state.by_name
        assert snap.deferred == 0
        assert len(snap.specs) == 100
        result = await host.call(snap, "c1", TOOL_SEARCH, {"query": "filler"})
    assert result.status == "unsupported"
    assert result.output == texts.UNSUPPORTED.format(name=TOOL_SEARCH)


async def test_above_the_threshold_mcp_tools_are_deferred_and_unsupported_in_the_step():
    calls: list[str] = []
    async with Host.open(host_config(numbered(101), calls)) as host:
        snap = host.sample()
        assert [s.name for s in snap.specs] == [TOOL_SEARCH]
        assert set(snap.names) == {TOOL_SEARCH}
        assert snap.deferred == 101
        assert snap.binding("mcp__big__t000") is None
        result = await host.call(snap, "c1", "mcp__big__t000", {})
    assert result.status == "unsupported"
    assert result.output == texts.UNSUPPORTED.format(name="mcp__big__t000")
    assert calls == []


async def test_builtins_count_toward_the_threshold_and_stay_shown_when_deferring():
    config = host_config(numbered(99), builtins=(builtin("alpha"), builtin("zeta")))
    async with Host.open(config) as host:
        deferring = host.sample()
        assert [s.name for s in deferring.specs] == ["alpha", TOOL_SEARCH, "zeta"]
        ran = await host.call(deferring, "c1", "zeta", {})
        assert ran.status == "ok"
    async with Host.open(attrs_evolve(config, defer_threshold=101)) as host:
        assert len(host.sample().specs) == 101


def attrs_evolve(config: HostConfig, **changes: Any) -> HostConfig:
    import attrs

    return attrs.evolve(config, **changes)


async def test_defer_threshold_none_never_defers():
    async with Host.open(host_config(numbered(150), defer_threshold=None)) as host:
        snap = host.sample()
        assert len(snap.specs) == 150
        assert TOOL_SEARCH not in snap.names


async def test_a_search_discovers_tools_for_the_next_step_and_never_changes_the_current_one():
    """INV-2: the searching step keeps its plan and router; the next step shows the finds."""
    tools = [*numbered(150), named("get_weather", "Current weather for a city")]
    calls: list[str] = []
    async with Host.open(host_config(tools, calls)) as host:
        first = host.sample()
        result = await host.call(first, "s1", TOOL_SEARCH, {"query": "weather", "limit": 3})
        assert result.status == "ok"
        lines = result.output.splitlines()
        assert lines[0].startswith("Wall time: ")
        assert lines[1] == texts.SEARCH_FOUND.format(count=1, query="weather")
        assert json.loads(lines[2]) == {
            "tools": [
                {
                    "name": "mcp__big__get_weather",
                    "description": "Current weather for a city",
                    "input_schema": {"type": "object"},
                }
            ]
        }
        # the current step is unchanged: the find is still not one of its tools
        assert set(first.names) == {TOOL_SEARCH}
        late = await host.call(first, "c1", "mcp__big__get_weather", {})
        assert late.status == "unsupported"
        second = host.sample()
        assert [s.name for s in second.specs] == ["mcp__big__get_weather", TOOL_SEARCH]
        assert second.deferred == 150
        ok = await host.call(second, "c2", "mcp__big__get_weather", {"city": "Oslo"})
        assert ok.status == "ok"
        assert host.sample().names.keys() == second.names.keys()  # discovered for the session
    assert calls == ["get_weather"]


async def test_the_exposure_is_cached_until_a_search_discovers_something_new():
    async with Host.open(host_config(numbered(120))) as host:
        first, again = host.sample(), host.sample()
        assert first.exposure is again.exposure
        await host.call(again, "s1", TOOL_SEARCH, {"query": "nothing matches zzz"})
        assert host.sample().exposure is first.exposure
        await host.call(again, "s2", TOOL_SEARCH, {"query": "filler", "limit": 2})
        after = host.sample()
        assert after.exposure is not first.exposure
        assert after.exposure.view is first.exposure.view  # same publication: not rebuilt


async def test_bm25_ranks_an_exact_word_match_first_and_splits_identifiers_into_words():
    tools = [
        *numbered(120),
        named("send_email", "Send an email message to a person"),
        named("createIssue", "Open a ticket in the tracker"),
        named("list_files", "List the entries of a folder"),
        named("read_file", "Return the text of one file"),
        named("mailbox_stats", "Counts of messages per folder"),
    ]
    async with Host.open(host_config(tools)) as host:
        snap = host.sample()

        async def top(query: str, call_id: str) -> list[str]:
            result = await host.call(snap, call_id, TOOL_SEARCH, {"query": query})
            assert result.status == "ok"
            return found_names(result.output)

        assert (await top("email", "s1"))[0] == "mcp__big__send_email"
        assert (await top("create an issue", "s2"))[0] == "mcp__big__createIssue"
        assert (await top("files", "s3"))[0] == "mcp__big__list_files"
        messages = await top("messages folder", "s4")
        assert messages[0] == "mcp__big__mailbox_stats"  # both words beat one
        assert set(messages) >= {"mcp__big__list_files", "mcp__big__mailbox_stats"}


def test_search_words_split_underscores_delimiters_and_camel_case():
    assert search_words("mcp__git_hub__createIssue") == "mcp git hub create Issue"
    assert search_words("HTTPServer-v2.getURL") == "HTTP Server v2 get URL"


async def test_equal_scores_are_ranked_by_name_and_the_limit_applies():
    tools = [named(f"z{i}", "same words") for i in range(5)] + numbered(100)
    async with Host.open(host_config(tools)) as host:
        snap = host.sample()
        result = await host.call(snap, "s1", TOOL_SEARCH, {"query": "same", "limit": 3})
    assert found_names(result.output) == ["mcp__big__z0", "mcp__big__z1", "mcp__big__z2"]


async def test_a_search_asks_bm25s_for_no_progress_bar(monkeypatch):
    """The index and the query are tokenized and scored without bm25s's progress bars,
    which it draws with tqdm when tqdm is installed (it is not, here: a stand-in records
    what bm25s asks of it), on the terminal of the host or on the stdio it speaks MCP on
    (mutation seed 103: ``show_progress=False`` made True went unseen)."""
    import bm25s
    import bm25s.scoring
    import bm25s.tokenization

    asked: list[bool] = []

    def bar(iterable: Any = None, *args: Any, disable: bool = False, **kwargs: Any) -> Any:
        asked.append(disable)
        return iterable

    for module in (bm25s, bm25s.tokenization, bm25s.scoring):
        monkeypatch.setattr(module, "tqdm", bar)
    tools = [named(f"z{i}", "same words") for i in range(5)] + numbered(100)
    async with Host.open(host_config(tools)) as host:
        result = await host.call(host.sample(), "s1", TOOL_SEARCH, {"query": "same words"})
        assert found_names(result.output)[:1] == ["mcp__big__z0"]
    assert asked
    assert all(asked), "a progress bar was asked for"


@pytest.mark.parametrize("query", ["CREATE ISSUE", "create issue", "Create Issue"])
async def test_a_search_ignores_case_in_the_query_and_in_the_tools_words(query):
    """``createIssue`` and "Opens an Issue" are found by any casing of their words
    (mutation testing, issue 33: bm25s's ``lower`` turned off went unseen)."""
    tools = [*numbered(101), named("createIssue", "Opens an Issue on GitHub")]
    async with Host.open(host_config(tools)) as host:
        snap = host.sample()
        result = await host.call(snap, "s1", TOOL_SEARCH, {"query": query, "limit": 3})
    assert found_names(result.output) == ["mcp__big__createIssue"]


async def test_a_search_of_stopwords_matches_nothing_says_so_and_discovers_nothing():
    tools = [*numbered(101), named("common", "The one of the tools, and a few more")]
    async with Host.open(host_config(tools)) as host:
        snap = host.sample()
        result = await host.call(snap, "s1", TOOL_SEARCH, {"query": "the of and"})
        assert result.status == "ok"
        assert result.output.splitlines()[1] == texts.SEARCH_NONE.format(query="the of and")
        assert [s.name for s in host.sample().specs] == [TOOL_SEARCH]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({}, "query must be a non-empty string"),
        ({"query": "  "}, "query must be a non-empty string"),
        ({"query": "x", "limit": "3"}, "limit must be an integer"),
        ({"query": "x", "limit": 0}, "limit must be from 1 to 50, got 0"),
        ({"query": "x", "limit": 51}, "limit must be from 1 to 50, got 51"),
    ],
)
async def test_tool_search_with_bad_arguments_ends_error(arguments, problem):
    async with Host.open(host_config(numbered(101))) as host:
        result = await host.call(host.sample(), "s1", TOOL_SEARCH, arguments)
    assert result.status == "error"
    assert result.output == texts.SEARCH_BAD_ARGUMENTS.format(problem=problem, maximum=50)


async def test_a_server_tool_named_tool_search_cannot_take_the_builtin():
    """INV-5: MCP names carry the mcp__ prefix; tool_search stays the host's."""
    calls: list[str] = []
    tools = [*numbered(101), named(TOOL_SEARCH, "a server's own search")]
    async with Host.open(host_config(tools, calls)) as host:
        snap = host.sample()
        binding = snap.binding(TOOL_SEARCH)
        assert binding is not None
        assert binding.source == "builtin"
        result = await host.call(snap, "s1", TOOL_SEARCH, {"query": "search"})
        assert found_names(result.output) == ["mcp__big__tool_search"]
        ok = await host.call(host.sample(), "c1", "mcp__big__tool_search", {})
        assert json.loads(ok.output.splitlines()[-1])["tool"] == TOOL_SEARCH
    assert calls == [TOOL_SEARCH]


def test_a_builtin_named_tool_search_is_a_config_error_while_deferral_is_on():
    with pytest.raises(ConfigError, match="'tool_search' is reserved while defer_threshold"):
        HostConfig(builtins=(builtin(TOOL_SEARCH),))
    assert HostConfig(builtins=(builtin(TOOL_SEARCH),), defer_threshold=None).builtins


async def test_with_deferral_off_a_builtin_named_tool_search_runs_as_the_builtin():
    config = host_config(numbered(150), builtins=(builtin(TOOL_SEARCH),), defer_threshold=None)
    async with Host.open(config) as host:
        result = await host.call(host.sample(), "c1", TOOL_SEARCH, {"query": "x"})
    assert (result.status, result.output.splitlines()[-1]) == ("ok", "ran")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"defer_threshold": -1}, "defer_threshold must be an integer >= 0"),
        ({"defer_threshold": True}, "defer_threshold must be an integer >= 0"),
        ({"schema_limit_bytes": 0}, "schema_limit_bytes must be an integer >= 1"),
        ({"schema_limit_bytes": 1.5}, "schema_limit_bytes must be an integer >= 1"),
    ],
)
def test_bad_exposure_settings_are_config_errors(settings, message):
    with pytest.raises(ConfigError, match=message):
        HostConfig(**settings)


def test_toml_reads_the_exposure_settings_and_false_turns_them_off():
    loaded = parse_toml("[mcpbind]\ndefer_threshold = 20\nschema_limit_bytes = 800\n")
    assert (loaded.config.defer_threshold, loaded.config.schema_limit_bytes) == (20, 800)
    off = parse_toml("[mcpbind]\ndefer_threshold = false\nschema_limit_bytes = false\n")
    assert (off.config.defer_threshold, off.config.schema_limit_bytes) == (None, None)
    assert HostConfig().defer_threshold == 100
    assert HostConfig().schema_limit_bytes == 5000
    with pytest.raises(ConfigError, match=r"\[mcpbind\] key 'defer_threshold'"):
        parse_toml("[mcpbind]\ndefer_threshold = true\n")
    with pytest.raises(ConfigError, match="schema_limit_bytes must be an integer >= 1"):
        parse_toml("[mcpbind]\nschema_limit_bytes = 0\n")


# --- schema shortening ------------------------------------------------------------------


def big_schema(properties: int = 40, words: int = 30) -> dict[str, Any]:
    """A schema like a generated one: long descriptions, nested objects, $defs."""
    text = " ".join(["word"] * words)
    return {
        "type": "object",
        "title": "Arguments",
        "description": text,
        "properties": {
            f"p{i}": {
                "type": "object",
                "description": text,
                "properties": {
                    "description": {"type": "string", "description": text},
                    "tags": {"type": "array", "items": {"type": "string", "maxLength": 9}},
                },
                "required": ["description"],
            }
            for i in range(properties)
        }
        | {
            "mode": {"type": "string", "enum": ["fast", "slow"], "description": text},
            "ref": {"$ref": "#/$defs/Thing"},
        },
        "required": ["p0", "mode"],
        "$defs": {"Thing": {"type": "object", "description": text}},
    }


def valid_object_schema(schema: Any) -> None:
    jsonschema.Draft202012Validator.check_schema(dict(schema))
    assert schema["type"] == "object"


def test_a_schema_within_the_limit_is_not_shortened():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert shorten_schema(schema, schema_bytes(schema)) is None
    assert shorten_schema(schema, schema_bytes(schema) - 1) is not None


def test_level_one_drops_annotations_everywhere_but_keeps_properties_named_description():
    schema = big_schema(properties=3)
    full = schema_bytes(schema)
    short = shorten_schema(schema, full - 1)
    assert short is not None
    valid_object_schema(short)
    assert "description" not in short
    assert "title" not in short
    p0 = short["properties"]["p0"]
    assert "description" not in p0
    assert p0["properties"]["description"] == {"type": "string"}  # a property, not a note
    assert p0["properties"]["tags"]["items"] == {"type": "string", "maxLength": 9}
    assert short["$defs"] == {"Thing": {"type": "object"}}
    assert schema_bytes(short) < full


def test_level_one_drops_annotations_of_subschemas_only_never_of_values():
    """``items`` is one subschema (its annotations go), ``const`` and ``default`` are
    values (an object among them keeps every key, annotation-like or not)."""
    value = {"mode": {"title": "Fast", "description": "kept: a value, not a note"}}
    schema = {
        "type": "object",
        "description": " ".join(["word"] * 30),
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "description": "a tag"}},
            "preset": {"type": "object", "const": value, "default": value},
        },
    }
    short = shorten_schema(schema, schema_bytes(schema) - 1)
    assert short == {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "preset": {"type": "object", "const": value, "default": value},
        },
    }
    jsonschema.validate({"preset": value}, dict(short))


def test_level_two_keeps_top_level_properties_and_their_childrens_types():
    schema = big_schema(properties=40, words=3)
    level_one = shorten_schema(schema, schema_bytes(schema) - 1)
    assert level_one is not None
    short = shorten_schema(schema, schema_bytes(level_one) - 1)
    assert short is not None
    valid_object_schema(short)
    assert set(short) == {"type", "properties", "required"}
    assert short["required"] == ["p0", "mode"]
    assert short["properties"]["p0"] == {
        "type": "object",
        "properties": {"description": {"type": "string"}, "tags": {"type": "array"}},
        "required": ["description"],
    }
    assert short["properties"]["mode"] == {"type": "string", "enum": ["fast", "slow"]}
    assert short["properties"]["ref"] == {}  # its $defs are gone: no dangling reference


def test_level_three_keeps_property_names_and_required_and_level_four_only_the_type():
    schema = big_schema(properties=40)
    names = {
        "type": "object",
        "properties": {key: {} for key in schema["properties"]},
        "required": ["p0", "mode"],
    }
    limit = schema_bytes(names)
    assert shorten_schema(schema, limit) == names
    assert shorten_schema(schema, limit - 1) == {"type": "object"}
    assert shorten_schema(schema, 5) == {"type": "object"}  # the smallest there is


def test_shortening_is_deterministic_and_never_rejects_what_the_full_schema_accepts():
    schema = big_schema(properties=60)
    instance = {
        "p0": {"description": "d", "tags": ["x"]},
        "mode": "fast",
        "ref": {"anything": 1},
    }
    jsonschema.validate(instance, schema)
    for limit in (20_000, 5000, 1000, 300, 40):
        short = shorten_schema(schema, limit)
        assert short is not None
        assert short == shorten_schema(schema, limit)
        valid_object_schema(short)
        jsonschema.validate(instance, dict(short))
        if limit >= 1000:
            assert schema_bytes(short) <= limit


async def test_the_step_shows_a_shortened_schema_and_keeps_the_full_one():
    schema = big_schema(properties=60)
    tools = [named("huge", "A tool with a huge schema", schema), named("small", "tiny")]
    calls: list[str] = []
    async with Host.open(host_config(tools, calls)) as host:
        snap = host.sample()
        spec = {s.name: s for s in snap.specs}["mcp__big__huge"]
        shown = schema_bytes(spec.input_schema)
        assert shown <= 5000
        valid_object_schema(spec.input_schema)
        note = texts.SCHEMA_SHORTENED.format(full=schema_bytes(schema), shown=shown)
        assert spec.description == f"A tool with a huge schema\n\n{note}"
        assert spec.full_input_schema == schema
        assert snap.full_input_schema("mcp__big__huge") == schema
        binding = snap.binding("mcp__big__huge")
        assert binding is not None
        assert binding.spec is spec  # plan and router show the same spec (INV-2)
        small = snap.binding("mcp__big__small")
        assert small is not None
        assert small.spec.shortened_from is None
        assert snap.full_input_schema("mcp__big__nope") is None
        assert host.sample().specs is snap.specs  # shortened once per publication
        ok = await host.call(snap, "c1", "mcp__big__huge", {"mode": "fast"})
        assert ok.status == "ok"
    assert calls == ["huge"]


async def test_schema_limit_none_shows_every_schema_in_full():
    schema = big_schema(properties=60)
    tools = [named("huge", "A tool with a huge schema", schema)]
    async with Host.open(host_config(tools, schema_limit_bytes=None)) as host:
        snap = host.sample()
    assert snap.specs[0].input_schema == schema
    assert snap.specs is host.registry.state.specs


async def test_tool_search_returns_shortened_schemas():
    schema = big_schema(properties=60)
    tools = [*numbered(101), named("huge", "A unique giant", schema)]
    async with Host.open(host_config(tools, schema_limit_bytes=1000)) as host:
        result = await host.call(host.sample(), "s1", TOOL_SEARCH, {"query": "giant"})
        found = json.loads(result.output.splitlines()[2])["tools"]
        assert [t["name"] for t in found] == ["mcp__big__huge"]
        assert schema_bytes(found[0]["input_schema"]) <= 1000
        assert found[0]["description"].endswith("the server checks the full schema]")
        later = host.sample()
        assert later.full_input_schema("mcp__big__huge") == schema


async def test_an_mcpserver_with_many_decorated_tools_is_deferred_and_searchable():
    server = MCPServer("many")
    for index in range(110):

        def make(i: int):
            def handler(text: str = "") -> str:
                return f"{i}:{text}"

            return handler

        topic = "invoice" if index == 77 else "widget"
        server.add_tool(make(index), name=f"op_{index}", description=f"Handle a {topic}")
    async with Host.open(HostConfig(servers={"m": ServerConfig(target=server)})) as host:
        snap = host.sample()
        assert snap.deferred == 110
        result = await host.call(snap, "s1", TOOL_SEARCH, {"query": "invoice", "limit": 1})
        assert found_names(result.output) == ["mcp__m__op_77"]
        ok = await host.call(host.sample(), "c1", "mcp__m__op_77", {"text": "hi"})
    assert ok.status == "ok"
    assert ok.output.splitlines()[-1] == '{"result":"77:hi"}'


@pytest.mark.slow
def test_the_cli_lists_and_calls_every_tool_and_as_model_shows_the_deferred_step(tmp_path):
    import sys

    from cli_runner import mcpbind

    config = tmp_path / "c.toml"
    config.write_text(
        "[mcpbind]\ndefer_threshold = 0\n\n[mcp_servers.notes]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["-m", "mcpbind.demo.servers", "notes"]\n'
    )
    listed = mcpbind("catalog", "--json", "--config", str(config))
    assert listed.returncode == 0, listed.stderr
    names = [t["name"] for t in json.loads(listed.stdout)["tools"]]
    assert "mcp__notes__add" in names
    assert TOOL_SEARCH not in names
    called = mcpbind("call", "mcp__notes__add", '{"text": "hi"}', "--config", str(config))
    assert called.returncode == 0, called.stdout + called.stderr
    assert "cli-1: ok" in called.stdout
    seen = mcpbind("catalog", "--json", "--as-model", "--config", str(config))
    assert seen.returncode == 0, seen.stderr
    as_model = json.loads(seen.stdout)
    assert [t["name"] for t in as_model["tools"]] == [TOOL_SEARCH]
    assert as_model["deferred"] == len(names)
    search = ["call", TOOL_SEARCH, '{"query": "add a note"}', "--as-model", "--json"]
    found = mcpbind(*search, "--config", str(config))
    assert found.returncode == 0, found.stdout + found.stderr
    assert "mcp__notes__add" in json.loads(found.stdout)["output"]
    hidden = mcpbind("call", "mcp__notes__add", "{}", "--as-model", "--config", str(config))
    assert hidden.returncode == 1
    assert "unsupported" in hidden.stdout


class SearchContributor:
    """A tool contributor (SPEC §11.11) whose tool list the test changes."""

    id = "ext1"

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def tools(self) -> list[BuiltinTool]:
        return [builtin(name) for name in self.names]


async def test_extension_tools_count_toward_the_threshold_and_stay_shown_when_deferring():
    contributor = SearchContributor(["notes"])
    config = attrs_evolve(host_config(numbered(100)), contributors=(contributor,))
    async with Host.open(config) as host:
        snap = host.sample()
        assert [s.name for s in snap.specs] == ["notes", TOOL_SEARCH]
        assert snap.deferred == 100
        ran = await host.call(snap, "c1", "notes", {})
    assert ran.status == "ok"


async def test_an_extension_tool_named_tool_search_is_refused_while_deferral_is_on():
    clash = SearchContributor([TOOL_SEARCH])
    with pytest.raises(ContributorRejected) as raised:
        async with Host.open(HostConfig(contributors=(clash,))):
            pytest.fail("the host must not open")
    problem = "the name tool_search is reserved while defer_threshold is set"
    assert raised.value.kind == "invalid"
    assert str(raised.value) == texts.EXT_INVALID.format(contributor="ext1", problem=problem)
    later = SearchContributor(["fine"])
    async with Host.open(HostConfig(contributors=(later,))) as host:
        later.names = ["fine", TOOL_SEARCH]
        (outcome,) = host.refresh_contributors()
        assert (outcome.status, outcome.kind) == ("rejected", "invalid")
        assert [s.name for s in host.sample().specs] == ["fine"]
    off = HostConfig(contributors=(SearchContributor([TOOL_SEARCH]),), defer_threshold=None)
    async with Host.open(off) as host:
        assert [s.name for s in host.sample().specs] == [TOOL_SEARCH]


async def test_the_tool_search_schema_the_model_reads_accepts_exactly_the_limits_it_runs():
    """The schema shown for ``tool_search`` is pinned, and its bounds are the tool's own:
    a limit the schema refuses ends ``error``, one it accepts runs (issue 33: a changed
    ``minimum`` survived every test)."""
    async with Host.open(host_config(numbered(101))) as host:
        snap = host.sample()
        [spec] = [s for s in snap.specs if s.name == TOOL_SEARCH]
        assert dict(spec.input_schema) == {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 8},
            },
            "required": ["query"],
        }
        validator = jsonschema.Draft202012Validator(dict(spec.input_schema))
        for limit in (-1, 0, 1, 2, 49, 50, 51):
            arguments = {"query": "filler", "limit": limit}
            result = await host.call(snap, f"c{limit}", TOOL_SEARCH, arguments)
            assert (result.status == "ok") is validator.is_valid(arguments), (limit, result)


@pytest.mark.parametrize(
    ("arguments", "read"),
    [
        ({"query": "x"}, ("x", 8)),
        ({"query": " x ", "limit": 1}, (" x ", 1)),
        ({"query": "x", "limit": 50}, ("x", 50)),
        ({"query": "x", "limit": 3.0}, ("x", 3)),
        ({"query": "x", "limit": 3.5}, "limit must be an integer"),
        ({"query": "x", "limit": True}, "limit must be an integer"),
        ({"query": "x", "limit": None}, "limit must be an integer"),
        ({"query": "x", "limit": 0}, "limit must be from 1 to 50, got 0"),
        ({"query": "x", "limit": -1.0}, "limit must be from 1 to 50, got -1"),
        ({"query": "x", "limit": 51}, "limit must be from 1 to 50, got 51"),
        ({"query": 3}, "query must be a non-empty string"),
        ({"query": ""}, "query must be a non-empty string"),
    ],
)
def test_tool_search_reads_its_query_and_limit_or_says_what_is_wrong(arguments, read):
    """SPEC §11.9: ``limit`` defaults to 8, from 1 to 50, a whole float taken as an integer;
    the query is searched as given."""
    assert parse_search_arguments(arguments) == read
