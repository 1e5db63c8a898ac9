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

if TYPE_CHECKING:
    from .approval import Approver
    from .contributors import Contributor

__all__ = [
    "APPROVAL_MODES",
    "BuiltinTool",
    "ConfigWarning",
    "HostConfig",
    "ServerConfig",
    "ToolConfig",
]


class ConfigWarning(UserWarning):
    """A configuration setting that is accepted but has no effect."""


BindingPolicy = Literal["frozen", "revalidate"]
ApprovalMode = Literal["auto", "prompt", "writes", "approve"]
APPROVAL_MODES: tuple[ApprovalMode, ...] = ("auto", "prompt", "writes", "approve")


def _approval_mode(name: str) -> Callable[[Any, Any, Any], None]:
    def check(_: Any, __: Any, value: Any) -> None:
        if value is not None and value not in APPROVAL_MODES:
            raise ConfigError(f"{name} must be one of {', '.join(APPROVAL_MODES)}, got {value!r}")

    return check


def _positive_or_none(name: str) -> Callable[[Any, Any, Any], None]:
    def check(_: Any, __: Any, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name} must be an integer >= 1, got {value!r}")

    return check


@attrs.frozen
class ToolConfig:
    """Settings of one tool of one server (``[mcp_servers.<name>.tools.<tool>]``), keyed by
    its raw name. Unset fields fall back to the server's, then the host's settings."""

    approval_mode: ApprovalMode | None = attrs.field(
        default=None, validator=_approval_mode("approval_mode")
    )
    output_token_limit: int | None = attrs.field(
        default=None, validator=_positive_or_none("output_token_limit")
    )
    output_byte_limit: int | None = attrs.field(
        default=None, validator=_positive_or_none("output_byte_limit")
    )


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
    """Characters of model-visible output per result; longer output is cut with a marker."""
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
        if self.approver is not None and not callable(self.approver):
            raise ConfigError(f"approver must be an async callable, got {self.approver!r}")
        seen: set[str] = set()
        for tool in self.builtins:
            if tool.name in seen:
                raise ConfigError(f"builtin tool {tool.name!r} is defined twice")
            seen.add(tool.name)
