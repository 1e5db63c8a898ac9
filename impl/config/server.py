"""Server-level configuration values (docs/configuration.md, SPEC §8.4, §11.4).

A leaf module: ``ServerConfig``, ``ToolConfig``, ``BuiltinTool`` and the mode literals
depend on nothing else of mcpbind but its errors, so every component that reads a
server's settings (approval, the catalog cache, contributors, the TOML reader, the
runtime) can import them without importing the host's configuration. Values are
validated when built: a bad value raises :class:`ConfigError` naming the setting.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Any, Literal

import attrs

from mcpbind.model.naming import RESOURCE_TOOLS

from ..errors import ConfigError
from .oauth import OAuthConfig

__all__ = [
    "APPROVAL_MODES",
    "ELICITATION_POLICIES",
    "RESOURCE_TOOL_NAMES",
    "STARTUP_POLICIES",
    "TOOL_SEARCH",
    "ApprovalMode",
    "BindingPolicy",
    "BuiltinTool",
    "ElicitationPolicy",
    "ServerConfig",
    "StartupPolicy",
    "StdioTarget",
    "ToolConfig",
    "non_negative",
]


TOOL_SEARCH = "tool_search"
"""The name of the host's search tool while deferral is on (SPEC §11.9): reserved."""
RESOURCE_TOOL_NAMES = RESOURCE_TOOLS
"""The resource tools' names (SPEC §11.20), Codex's: reserved while they are on."""

BindingPolicy = Literal["frozen", "revalidate"]
ElicitationPolicy = Literal["decline", "never_ask", "ask"]
ELICITATION_POLICIES: tuple[ElicitationPolicy, ...] = ("decline", "never_ask", "ask")
ApprovalMode = Literal["auto", "prompt", "writes", "approve"]
APPROVAL_MODES: tuple[ApprovalMode, ...] = ("auto", "prompt", "writes", "approve")
StartupPolicy = Literal["eager", "lazy_when_cached"]
STARTUP_POLICIES: tuple[StartupPolicy, ...] = ("eager", "lazy_when_cached")


def _startup_policy(_: Any, __: Any, value: Any) -> None:
    if value not in STARTUP_POLICIES:
        raise ConfigError(f"startup must be one of {', '.join(STARTUP_POLICIES)}, got {value!r}")


def _approval_mode(name: str) -> Callable[[Any, Any, Any], None]:
    def check(_: Any, __: Any, value: Any) -> None:
        if value is not None and value not in APPROVAL_MODES:
            raise ConfigError(f"{name} must be one of {', '.join(APPROVAL_MODES)}, got {value!r}")

    return check


def _at_least_or_none(name: str, least: int) -> Callable[[Any, Any, Any], None]:
    def check(_: Any, __: Any, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ConfigError(f"{name} must be an integer >= {least}, got {value!r}")

    return check


@attrs.frozen
class ToolConfig:
    """Settings of one tool of one server (``[mcp_servers.<name>.tools.<tool>]``), keyed by
    its raw name. Unset fields fall back to the server's, then the host's settings."""

    approval_mode: ApprovalMode | None = attrs.field(
        default=None, validator=_approval_mode("approval_mode")
    )
    output_token_limit: int | None = attrs.field(
        default=None, validator=_at_least_or_none("output_token_limit", 25)
    )
    """Model-visible output of this tool, in tokens of 4 UTF-8 bytes (SPEC §11.5)."""
    output_byte_limit: int | None = attrs.field(
        default=None, validator=_at_least_or_none("output_byte_limit", 100)
    )
    """Model-visible output of this tool in UTF-8 bytes; wins over ``output_token_limit``.
    At least 100, so that the truncation marker always fits."""


def _approval_modes(value: Any) -> Mapping[str, ApprovalMode]:  # converter: checked here
    if not isinstance(value, Mapping):
        raise ConfigError(f"tool_approval_modes must map raw tool names to modes, got {value!r}")
    for tool, mode in value.items():
        if not isinstance(tool, str) or mode not in APPROVAL_MODES:
            raise ConfigError(
                f"tool_approval_modes: {tool!r} must map to one of "
                f"{', '.join(APPROVAL_MODES)}, got {mode!r}"
            )
    return MappingProxyType(dict(value))


def _tool_configs(value: Any) -> Mapping[str, ToolConfig]:  # converter: checked here
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, ToolConfig) for k, v in value.items()
    ):
        raise ConfigError(f"tools must map raw tool names to ToolConfig, got {value!r}")
    return MappingProxyType(dict(value))


def non_negative(name: str) -> Callable[[Any, attrs.Attribute[float], float], None]:
    def check(_: Any, attribute: attrs.Attribute[float], value: float) -> None:
        if (
            not isinstance(value, int | float)
            or isinstance(value, bool)
            or math.isnan(value)
            or value < 0
        ):
            raise ConfigError(f"{name} must be a number >= 0, got {value!r}")

    return check


def _names(value: Any) -> frozenset[str] | None:  # converter: any input, checked here
    if value is None:
        return None
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"tool lists must be lists of tool names, got {value!r}")
    return frozenset(value)


def _denied(value: Any) -> frozenset[str]:
    return _names(value) or frozenset()


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(value)


@attrs.frozen
class StdioTarget:
    """A server run as a subprocess over stdio: what a ``config.toml`` server with
    ``command`` gives (the SDK's ``StdioServerParameters`` is accepted as a target too)."""

    command: str
    args: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    env: Mapping[str, str] | None = attrs.field(default=None, repr=False)
    """The child's environment variables (secrets: never shown); None: the SDK's
    default environment."""
    cwd: str | None = None


@attrs.frozen
class ServerConfig:
    """One MCP server.

    ``target`` is what ``mcp.Client`` accepts: an in-process ``MCPServer`` or lowlevel
    ``Server``, a :class:`StdioTarget` or the SDK's ``StdioServerParameters`` (a
    subprocess over stdio), or a streamable-HTTP URL (``http://`` or ``https://``).
    """

    target: Any = attrs.field(repr=False)
    """Not in the repr: a stdio target carries ``env``, whose values may be secrets."""
    enabled: bool = True
    required: bool = False
    startup_timeout_sec: float = attrs.field(
        default=30.0, validator=non_negative("startup_timeout_sec")
    )
    tool_timeout_sec: float = attrs.field(default=300.0, validator=non_negative("tool_timeout_sec"))
    """0 means no limit."""
    idle_timeout: bool = False
    """``tool_timeout_sec`` is an idle timeout: each progress notification of a call in
    flight starts it again, up to ``tool_max_sec`` in all (SPEC §8.11)."""
    tool_max_sec: float = attrs.field(default=3600.0, validator=non_negative("tool_max_sec"))
    """With ``idle_timeout``: the cap on a call's whole time, from dispatch."""
    list_timeout_sec: float = attrs.field(default=30.0, validator=non_negative("list_timeout_sec"))
    """One deadline for a whole refresh (every page); 0 means no limit."""
    enabled_tools: frozenset[str] | None = attrs.field(default=None, converter=_names)
    disabled_tools: frozenset[str] = attrs.field(default=frozenset(), converter=_denied)
    supports_parallel_tool_calls: bool = False
    headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    """HTTP headers for a URL target (secrets: never shown)."""
    unusable: str | None = None
    """Why this server cannot start, found when its configuration was read (an unset
    ``bearer_token_env_var``, SPEC §11.4): each start of it fails with this text, as a
    server that cannot be reached does; None for a server that can start."""
    default_tools_approval_mode: ApprovalMode | None = attrs.field(
        default=None, validator=_approval_mode("default_tools_approval_mode")
    )
    tools: Mapping[str, ToolConfig] = attrs.field(factory=dict, converter=_tool_configs)
    """Per-tool settings keyed by raw tool name."""
    tool_approval_modes: Mapping[str, ApprovalMode] = attrs.field(
        factory=dict, converter=_approval_modes, repr=False
    )
    """A shorthand: ``{raw tool name: mode}`` is folded into ``tools`` (as each tool's
    ``approval_mode``) when the config is built; a mode set both ways must agree."""
    oauth: OAuthConfig | None = attrs.field(factory=OAuthConfig)
    """How a URL server is authorized (SPEC §11.15); None: never. Unused for a server
    whose ``headers`` carry ``Authorization`` (a bearer token), and for stdio."""
    startup: StartupPolicy = attrs.field(default="eager", validator=_startup_policy)
    """``eager``: connect when the host opens. ``lazy_when_cached``: when the catalog
    cache holds this server's listing, install it at open and connect on first use
    (SPEC §11.12); without an entry, the same as ``eager``."""

    @property
    def over_http(self) -> bool:
        """The target is a streamable-HTTP URL (SPEC §5.4: x-mcp-header exclusion)."""
        return isinstance(self.target, str)

    def describe(self) -> str:
        """A safe one-line description of the target (no env, no headers)."""
        target = self.target
        if isinstance(target, str):
            return f"streamable HTTP {target}"
        command = getattr(target, "command", None)
        if isinstance(command, str):
            args = " ".join(getattr(target, "args", []) or [])
            return f"stdio: {command} {args}".rstrip()
        return f"in-process {type(target).__name__}"

    def __attrs_post_init__(self) -> None:
        if self.tool_approval_modes:
            tools = dict(self.tools)
            for tool, mode in self.tool_approval_modes.items():
                current = tools.get(tool, ToolConfig())
                if current.approval_mode not in (None, mode):
                    raise ConfigError(
                        f"tool {tool!r}: approval_mode {current.approval_mode!r} in tools and "
                        f"{mode!r} in tool_approval_modes; set it once"
                    )
                tools[tool] = attrs.evolve(current, approval_mode=mode)
            object.__setattr__(self, "tools", _tool_configs(tools))  # frozen: built once here
            object.__setattr__(self, "tool_approval_modes", MappingProxyType({}))
        if self.idle_timeout and not 0 < self.tool_timeout_sec < self.tool_max_sec:
            raise ConfigError(
                "an idle timeout needs 0 < tool_timeout_sec < tool_max_sec, got "
                f"tool_timeout_sec = {self.tool_timeout_sec:g}, "
                f"tool_max_sec = {self.tool_max_sec:g}; the cap is what ends a call that "
                "keeps reporting progress"
            )
        target = self.target
        if isinstance(target, str) and not target.startswith(("http://", "https://")):
            raise ConfigError(f"a URL target must start with http:// or https://, got {target!r}")
        if target is None:
            raise ConfigError("target is required: an MCPServer, StdioServerParameters or URL")


@attrs.frozen
class BuiltinTool:
    """A tool the host provides itself: source ``builtin`` (INV-5 protects its name)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    handler: Callable[[dict[str, Any]], Awaitable[str]]
    read_only: bool = False
