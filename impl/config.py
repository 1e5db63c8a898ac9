"""Host and server configuration (README "Configuration", SPEC §8.4).

Values are validated when built: a bad value raises :class:`ConfigError` naming the
setting, and nothing is started.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import attrs

from mcpbind.model.naming import DEFAULT_MAX_NAME_LENGTH, MIN_MAX_NAME_LENGTH

from .errors import ConfigError
from .exposure import TOOL_SEARCH
from .values import ElicitationAnswer, ElicitationRequest

if TYPE_CHECKING:
    from .approval import Approver
    from .catalog_cache import CatalogCache
    from .contributors import Contributor

__all__ = [
    "APPROVAL_MODES",
    "ELICITATION_POLICIES",
    "STARTUP_POLICIES",
    "BuiltinTool",
    "ConfigWarning",
    "ElicitationHandler",
    "ElicitationPolicy",
    "HostConfig",
    "ServerConfig",
    "ToolConfig",
]


class ConfigWarning(UserWarning):
    """A configuration setting that is accepted but has no effect."""


BindingPolicy = Literal["frozen", "revalidate"]
ElicitationPolicy = Literal["decline", "never_ask", "ask"]
ELICITATION_POLICIES: tuple[ElicitationPolicy, ...] = ("decline", "never_ask", "ask")
ElicitationHandler = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]
"""Asks the user; see SPEC §11.10."""
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


def _non_negative(name: str) -> Callable[[Any, attrs.Attribute[float], float], None]:
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


@attrs.frozen
class ServerConfig:
    """One MCP server.

    ``target`` is what ``mcp.Client`` accepts: an in-process ``MCPServer`` or lowlevel
    ``Server``, ``StdioServerParameters`` (a subprocess over stdio), or a streamable-HTTP
    URL (``http://`` or ``https://``).
    """

    target: Any = attrs.field(repr=False)
    """Not in the repr: a stdio target carries ``env``, whose values may be secrets."""
    enabled: bool = True
    required: bool = False
    startup_timeout_sec: float = attrs.field(
        default=30.0, validator=_non_negative("startup_timeout_sec")
    )
    tool_timeout_sec: float = attrs.field(
        default=300.0, validator=_non_negative("tool_timeout_sec")
    )
    """0 means no limit."""
    list_timeout_sec: float = attrs.field(default=30.0, validator=_non_negative("list_timeout_sec"))
    """One deadline for a whole refresh (every page); 0 means no limit."""
    enabled_tools: frozenset[str] | None = attrs.field(default=None, converter=_names)
    disabled_tools: frozenset[str] = attrs.field(default=frozenset(), converter=_denied)
    supports_parallel_tool_calls: bool = False
    headers: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    """HTTP headers for a URL target (secrets: never shown)."""
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
    startup: StartupPolicy = attrs.field(default="eager", validator=_startup_policy)
    """``eager``: connect when the host opens. ``lazy_when_cached``: when the catalog
    cache holds this server's listing, install it at open and connect on first use
    (SPEC §11.12); without an entry, the same as ``eager``."""

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


def _contributors(value: Any) -> tuple[Contributor, ...]:  # converter: checked there
    from .contributors import check_contributors  # noqa: PLC0415 - contributors imports config

    return check_contributors(value)


@attrs.frozen
class HostConfig:
    servers: Mapping[str, ServerConfig] = attrs.field(factory=dict)
    max_name_length: int = DEFAULT_MAX_NAME_LENGTH
    binding_policy: BindingPolicy = "revalidate"
    builtins: tuple[BuiltinTool, ...] = ()
    reconnect_initial_sec: float = attrs.field(
        default=0.5, validator=_non_negative("reconnect_initial_sec")
    )
    reconnect_max_sec: float = attrs.field(
        default=30.0, validator=_non_negative("reconnect_max_sec")
    )
    output_limit: int | None = None
    """Characters of model-visible output per result; longer output is cut with a marker.
    A tool's own ``output_byte_limit``/``output_token_limit`` wins (SPEC §11.5)."""
    image_capable: bool = False
    """The model takes images: image blocks become ``ToolResult.items`` (SPEC §8.8)."""
    elicitation: ElicitationPolicy = "decline"
    """What the host answers when a server asks the user for input (SPEC §11.10)."""
    elicitation_handler: ElicitationHandler | None = attrs.field(default=None, repr=False)
    """Asks the user when ``elicitation = "ask"``."""
    approver: Approver | None = attrs.field(default=None, repr=False)
    """Answers approval requests (SPEC §11.8); with one, every tool without a configured
    mode is gated as ``auto``. None: only tools whose server or tool config sets a mode
    are gated, and those that need asking are denied."""
    config_path: str | None = None
    """The file this config was read from (set by ``from_toml``/``load_toml``): where an
    "allow always" answer is saved. None: such answers hold for the session only."""
    contributors: tuple[Contributor, ...] = attrs.field(default=(), converter=_contributors)
    """Extension contributors, in order (SPEC §11.11): each has a unique ``id`` and one or
    more of ``tools()``, ``actions()``, ``on_result()``, ``fragments()``."""
    defer_threshold: int | None = 100
    """Above this many model-visible tools (builtins and MCP), a step shows the builtins,
    ``tool_search`` and the MCP tools it discovered only (SPEC §11.9); None: never defer."""
    schema_limit_bytes: int | None = 5000
    """An MCP tool whose input schema's compact JSON is longer is shown with a shortened
    schema (SPEC §11.9); None: never shorten."""
    optional_startup_grace_sec: float | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(_non_negative("optional_startup_grace_sec")),
    )
    """How long ``Host.open`` waits for optional servers; later ones start absent and join
    when they connect (SPEC §11.12). None: wait for each up to its startup_timeout_sec."""
    catalog_cache: CatalogCache | None = attrs.field(default=None, repr=False)
    """Where listings are cached (SPEC §11.12); None: the process-level default cache."""

    @classmethod
    def from_toml(
        cls, path: str | os.PathLike[str], *, approver: Approver | None = None
    ) -> HostConfig:
        """Read a Codex-compatible ``config.toml`` (README "Configuration file"); the
        result remembers ``path`` as its ``config_path``.

        Raises ConfigError naming the file, table and key; a Codex key mcpbind does not act
        on is reported as a :class:`ConfigWarning`."""
        from .toml_config import load_toml  # noqa: PLC0415 - config.py stays import-light

        loaded = load_toml(path)
        for message in loaded.warnings:
            warnings.warn(message, ConfigWarning, stacklevel=2)
        if approver is not None:
            return attrs.evolve(loaded.config, approver=approver)
        return loaded.config

    def __attrs_post_init__(self) -> None:
        if self.binding_policy not in ("frozen", "revalidate"):
            raise ConfigError(
                f"binding_policy must be 'frozen' or 'revalidate', got {self.binding_policy!r}"
            )
        if not isinstance(self.max_name_length, int) or self.max_name_length < MIN_MAX_NAME_LENGTH:
            raise ConfigError(
                f"max_name_length must be an integer >= {MIN_MAX_NAME_LENGTH}, "
                f"got {self.max_name_length!r}"
            )
        if self.elicitation not in ELICITATION_POLICIES:
            raise ConfigError(
                f"elicitation must be one of {', '.join(ELICITATION_POLICIES)}, "
                f"got {self.elicitation!r}"
            )
        if self.elicitation == "ask" and self.elicitation_handler is None:
            raise ConfigError(
                "elicitation = 'ask' needs an elicitation_handler to ask the user; "
                "pass HostConfig(elicitation_handler=...) or use 'decline' or 'never_ask'"
            )
        if not isinstance(self.image_capable, bool):
            raise ConfigError(f"image_capable must be true or false, got {self.image_capable!r}")
        for name, server in self.servers.items():
            if not isinstance(name, str) or not name:
                raise ConfigError(f"server names must be non-empty strings, got {name!r}")
            if not isinstance(server, ServerConfig):
                raise ConfigError(f"server {name!r}: expected a ServerConfig, got {server!r}")
        if self.output_limit is not None and (
            isinstance(self.output_limit, bool)
            or not isinstance(self.output_limit, int)
            or self.output_limit < 100
        ):
            raise ConfigError(f"output_limit must be an integer >= 100, got {self.output_limit!r}")
        for name, value, least in (
            ("defer_threshold", self.defer_threshold, 0),
            ("schema_limit_bytes", self.schema_limit_bytes, 1),
        ):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < least
            ):
                raise ConfigError(
                    f"{name} must be an integer >= {least} or None (off), got {value!r}"
                )
        if self.catalog_cache is not None:
            from .catalog_cache import CatalogCache  # noqa: PLC0415 - it imports this module

            if not isinstance(self.catalog_cache, CatalogCache):
                raise ConfigError(
                    f"catalog_cache must be a CatalogCache, got {self.catalog_cache!r}"
                )
        if self.approver is not None and not callable(self.approver):
            raise ConfigError(f"approver must be an async callable, got {self.approver!r}")
        seen: set[str] = set()
        for tool in self.builtins:
            if tool.name == TOOL_SEARCH and self.defer_threshold is not None:
                raise ConfigError(
                    f"builtin tool {TOOL_SEARCH!r} is reserved while defer_threshold is set "
                    "(SPEC §11.9): rename the builtin or set defer_threshold = None"
                )
            if tool.name in seen:
                raise ConfigError(f"builtin tool {tool.name!r} is defined twice")
            seen.add(tool.name)
