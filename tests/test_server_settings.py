"""A server's settings checked as they are built (``ServerConfig``, ``ToolConfig``; SPEC
§11.4): each wrong value is one ``ConfigError`` whose exact text names the setting and
what it got, and the right ones are kept as given. One row each."""

from __future__ import annotations

import math
from typing import Any

import pytest

from mcpbind.impl import ConfigError, ServerConfig, ToolConfig

URL = "http://127.0.0.1:1/mcp"

WRONG: list[tuple[str, dict[str, Any], str]] = [
    (
        "no target",
        {"target": None},
        "target is required: an MCPServer, StdioServerParameters or URL",
    ),
    (
        "a URL of no http",
        {"target": "ftp://h/mcp"},
        "a URL target must start with http:// or https://, got 'ftp://h/mcp'",
    ),
    ("startup", {"startup": "lazy"}, "startup must be one of eager, lazy_when_cached, got 'lazy'"),
    (
        "default approval mode",
        {"default_tools_approval_mode": "never"},
        "default_tools_approval_mode must be one of auto, prompt, writes, approve, got 'never'",
    ),
    (
        "approval modes not a mapping",
        {"tool_approval_modes": ["t"]},
        "tool_approval_modes must map raw tool names to modes, got ['t']",
    ),
    (
        "an approval mode unknown",
        {"tool_approval_modes": {"t": "never"}},
        "tool_approval_modes: 't' must map to one of auto, prompt, writes, approve, got 'never'",
    ),
    (
        "an approval mode twice",
        {"tools": {"t": ToolConfig(approval_mode="auto")}, "tool_approval_modes": {"t": "prompt"}},
        "tool 't': approval_mode 'auto' in tools and 'prompt' in tool_approval_modes; set it once",
    ),
    (
        "tools not ToolConfigs",
        {"tools": {"t": {"approval_mode": "auto"}}},
        "tools must map raw tool names to ToolConfig, got {'t': {'approval_mode': 'auto'}}",
    ),
    (
        "a tool list a string",
        {"enabled_tools": "t"},
        "tool lists must be lists of tool names, got 't'",
    ),
    (
        "a tool list of numbers",
        {"disabled_tools": [1]},
        "tool lists must be lists of tool names, got [1]",
    ),
    (
        "a negative timeout",
        {"tool_timeout_sec": -1},
        "tool_timeout_sec must be a number >= 0, got -1",
    ),
    (
        "a NaN timeout",
        {"list_timeout_sec": math.nan},
        "list_timeout_sec must be a number >= 0, got nan",
    ),
    (
        "a boolean timeout",
        {"startup_timeout_sec": True},
        "startup_timeout_sec must be a number >= 0, got True",
    ),
]


@pytest.mark.parametrize(("settings", "text"), [r[1:] for r in WRONG], ids=[r[0] for r in WRONG])
def test_a_wrong_server_setting_is_one_config_error_naming_it(settings: dict[str, Any], text: str):
    with pytest.raises(ConfigError) as raised:
        ServerConfig(**{"target": URL, **settings})
    assert str(raised.value) == text


TOOL_WRONG: list[tuple[dict[str, Any], str]] = [
    (
        {"approval_mode": "sometimes"},
        "approval_mode must be one of auto, prompt, writes, approve, got 'sometimes'",
    ),
    ({"output_token_limit": 24}, "output_token_limit must be an integer >= 25, got 24"),
    ({"output_token_limit": True}, "output_token_limit must be an integer >= 25, got True"),
    ({"output_byte_limit": 99}, "output_byte_limit must be an integer >= 100, got 99"),
    ({"output_byte_limit": 100.0}, "output_byte_limit must be an integer >= 100, got 100.0"),
]


@pytest.mark.parametrize(("settings", "text"), TOOL_WRONG)
def test_a_wrong_tool_setting_is_one_config_error_naming_it(settings: dict[str, Any], text: str):
    with pytest.raises(ConfigError) as raised:
        ToolConfig(**settings)
    assert str(raised.value) == text


def test_the_least_values_and_the_tool_lists_are_kept_as_given():
    tool = ToolConfig(approval_mode="writes", output_token_limit=25, output_byte_limit=100)
    assert (tool.output_token_limit, tool.output_byte_limit) == (25, 100)
    config = ServerConfig(
        target="https://h/mcp",
        enabled_tools=("a", "b"),
        disabled_tools=None,
        tool_timeout_sec=0,
        tool_approval_modes={"a": "approve"},
    )
    assert config.enabled_tools == frozenset({"a", "b"})
    assert config.disabled_tools == frozenset()
    assert config.tools["a"].approval_mode == "approve"  # moved into tools, once
    assert dict(config.tool_approval_modes) == {}
    assert ServerConfig(target=URL, enabled_tools=None).enabled_tools is None
