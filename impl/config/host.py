"""The host's configuration (docs/configuration.md, SPEC §8.4, §11.4).

:class:`HostConfig` is validated when built: a bad value raises :class:`ConfigError`
naming the setting, and nothing is started. Server-level values live in the leaf
module :mod:`.server`; a Codex-compatible ``config.toml`` is
read by :mod:`.toml` and turned into a ``HostConfig`` by :func:`parse_toml` and
:func:`load_toml`.
"""

from __future__ import annotations

import os
import pathlib
import warnings
from collections.abc import Mapping

import attrs

from mcpbind.model.naming import DEFAULT_MAX_NAME_LENGTH, MIN_MAX_NAME_LENGTH

from ..errors import ConfigError
from .catalog_cache import CatalogCache
from .contributors import Contributor, check_contributors
from .credentials import StoreChoice, TokenStore
from .hooks import Approver, AuthorizationHandler, ElicitationHandler, OnProgress
from .server import (
    ELICITATION_POLICIES,
    RESOURCE_TOOL_NAMES,
    TOOL_SEARCH,
    BindingPolicy,
    BuiltinTool,
    ElicitationPolicy,
    ServerConfig,
    non_negative,
)
from .toml import read_toml

__all__ = ["ConfigWarning", "HostConfig", "Loaded", "load_toml", "parse_toml"]


class ConfigWarning(UserWarning):
    """A configuration setting that is accepted but has no effect."""


@attrs.frozen
class HostConfig:
    servers: Mapping[str, ServerConfig] = attrs.field(factory=dict)
    max_name_length: int = DEFAULT_MAX_NAME_LENGTH
    binding_policy: BindingPolicy = "revalidate"
    builtins: tuple[BuiltinTool, ...] = ()
    reconnect_initial_sec: float = attrs.field(
        default=0.5, validator=non_negative("reconnect_initial_sec")
    )
    reconnect_max_sec: float = attrs.field(
        default=30.0, validator=non_negative("reconnect_max_sec")
    )
    output_limit: int | None = 40_000
    """Characters of model-visible output per result; longer output is cut with a marker.
    A tool's own ``output_byte_limit``/``output_token_limit`` wins (SPEC §11.5). The
    default, 40,000 characters, is about 10,000 tokens: one result cannot flood the
    model's context (Codex cuts every tool output too). 0 or None: no limit."""
    image_capable: bool = False
    """The model takes images: image blocks become ``ToolResult.items`` (SPEC §8.8)."""
    resource_tools: bool = True
    """Show ``list_mcp_resources``, ``list_mcp_resource_templates`` and
    ``read_mcp_resource`` while a connected server lists resources (SPEC §11.20);
    False: never (the names are then free for builtins)."""
    elicitation: ElicitationPolicy = "decline"
    """What the host answers when a server asks the user for input (SPEC §11.10)."""
    elicitation_handler: ElicitationHandler | None = attrs.field(default=None, repr=False)
    """Asks the user when ``elicitation = "ask"``."""
    on_progress: OnProgress | None = attrs.field(default=None, repr=False)
    """Receives each progress notification of a pending call as a ``Progress``, in order
    (SPEC §8.10); a plain function or a coroutine function. A callback that raises is
    logged and changes nothing."""
    elicitation_url: bool = False
    """The handler takes URL requests (``ElicitationRequest.mode == "url"``): only then
    does the host offer servers URL-mode elicitation (SPEC §11.10). Needs ``ask``."""
    approver: Approver | None = attrs.field(default=None, repr=False)
    """Answers approval requests (SPEC §11.8); with one, every tool without a configured
    mode is gated as ``auto``. None: only tools whose server or tool config sets a mode
    are gated, and those that need asking are denied."""
    config_path: str | None = None
    """The file this config was read from (set by ``from_toml``/``load_toml``): where an
    "allow always" answer is saved. None: such answers hold for the session only."""
    contributors: tuple[Contributor, ...] = attrs.field(default=(), converter=check_contributors)
    """Extension contributors, in order (SPEC §11.11): each has a unique ``id`` and one or
    more of ``tools()``, ``actions()``, ``on_result()``, ``fragments()``."""
    defer_threshold: int | None = 100
    """Above this many model-visible tools (builtins and MCP), a step shows the builtins,
    ``tool_search`` and the MCP tools it discovered only (SPEC §11.9); None: never defer."""
    schema_limit_bytes: int | None = 5000
    """An MCP tool whose input schema's compact JSON is longer is shown with a shortened
    schema (SPEC §11.9); None: never shorten."""
    close_timeout_sec: float = attrs.field(default=5.0, validator=non_negative("close_timeout_sec"))
    """How long leaving ``Host.open`` may take to end the pending calls, deliver the
    cancellations owed and close every session gracefully (SPEC §11.14); then what is left
    is cancelled. 0 means no limit."""
    optional_startup_grace_sec: float | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(non_negative("optional_startup_grace_sec")),
    )
    """How long ``Host.open`` waits for optional servers; later ones start absent and join
    when they connect (SPEC §11.12). None: wait for each up to its startup_timeout_sec."""
    catalog_cache: CatalogCache | None = attrs.field(default=None, repr=False)
    """Where listings are cached (SPEC §11.12); None: the process-level default cache."""
    oauth_store: TokenStore | StoreChoice = "auto"
    """Where OAuth credentials are kept (SPEC §11.15): Codex's
    ``mcp_oauth_credentials_store`` (``auto``: the OS keyring when usable, else the file;
    ``keyring``; ``file``), or a :class:`~.credentials.TokenStore` of the host's own."""
    oauth_credentials_path: str | None = None
    """The credentials file; None: ``$MCPBIND_HOME/credentials.json`` (``~/.mcpbind``)."""
    oauth_handler: AuthorizationHandler | None = attrs.field(default=None, repr=False)
    """Presents an authorization URL to a person and returns the redirect's answer (SPEC
    §11.15). None (the default): a server that needs a person to authorize fails with
    ``LoginRequired`` at once ("run `mcpbind login SERVER`"), never waiting for one."""
    oauth_callback_port: int | None = None
    """Codex's ``mcp_oauth_callback_port``: the loopback port ``mcpbind login`` listens
    on; None: one the system picks."""
    oauth_callback_url: str | None = None
    """Codex's ``mcp_oauth_callback_url``: the redirect URI to register, when the browser
    is sent somewhere other than the loopback listener."""

    @classmethod
    def from_toml(
        cls, path: str | os.PathLike[str], *, approver: Approver | None = None
    ) -> HostConfig:
        """Read a Codex-compatible ``config.toml`` (docs/configuration.md); the
        result remembers ``path`` as its ``config_path``.

        Raises ConfigError naming the file, table and key; a Codex key mcpbind does not act
        on is reported as a :class:`ConfigWarning`."""
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
        if not isinstance(self.elicitation_url, bool):
            raise ConfigError(
                f"elicitation_url must be true or false, got {self.elicitation_url!r}"
            )
        if self.elicitation_url and self.elicitation != "ask":
            raise ConfigError(
                "elicitation_url = true needs elicitation = 'ask' and an elicitation_handler "
                "that shows the URL to the user"
            )
        for flag in ("image_capable", "resource_tools"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(f"{flag} must be true or false, got {getattr(self, flag)!r}")
        for name, server in self.servers.items():
            if not isinstance(name, str) or not name:
                raise ConfigError(f"server names must be non-empty strings, got {name!r}")
            if not isinstance(server, ServerConfig):
                raise ConfigError(f"server {name!r}: expected a ServerConfig, got {server!r}")
        if self.output_limit is not None and (
            isinstance(self.output_limit, bool)
            or not isinstance(self.output_limit, int)
            or 0 < self.output_limit < 100
            or self.output_limit < 0
        ):
            raise ConfigError(
                f"output_limit must be 0 (no limit) or an integer >= 100, got {self.output_limit!r}"
            )
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
        if self.catalog_cache is not None and not isinstance(self.catalog_cache, CatalogCache):
            raise ConfigError(f"catalog_cache must be a CatalogCache, got {self.catalog_cache!r}")
        if self.approver is not None and not callable(self.approver):
            raise ConfigError(f"approver must be an async callable, got {self.approver!r}")
        seen: set[str] = set()
        for tool in self.builtins:
            if tool.name == TOOL_SEARCH and self.defer_threshold is not None:
                raise ConfigError(
                    f"builtin tool {TOOL_SEARCH!r} is reserved while defer_threshold is set "
                    "(SPEC §11.9): rename the builtin or set defer_threshold = None"
                )
            if tool.name in RESOURCE_TOOL_NAMES and self.resource_tools:
                raise ConfigError(
                    f"builtin tool {tool.name!r} is reserved while resource_tools is on "
                    "(SPEC §11.20): rename the builtin or set resource_tools = False"
                )
            if tool.name in seen:
                raise ConfigError(f"builtin tool {tool.name!r} is defined twice")
            seen.add(tool.name)


@attrs.frozen
class Loaded:
    """A configuration read from TOML, and the warnings about keys it does not act on."""

    config: HostConfig
    warnings: tuple[str, ...]


def parse_toml(
    text: str, *, path: str = "<string>", environ: Mapping[str, str] | None = None
) -> Loaded:
    """Parse TOML text; raise ConfigError (naming ``path``) on any problem."""
    read = read_toml(text, path=path, environ=os.environ if environ is None else environ)
    try:
        config = HostConfig(servers=read.servers, **read.settings)
    except ConfigError as error:
        raise ConfigError(f"{path}: [mcpbind]: {error}") from None
    return Loaded(config, read.warnings)


def load_toml(path: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> Loaded:
    """Read a config file; raise ConfigError naming it on any problem."""
    location = pathlib.Path(path)
    try:
        text = location.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{location}: cannot read: {error.strerror}") from None
    loaded = parse_toml(text, path=str(location), environ=environ)
    # Remembered for "allow always" (SPEC §11.8), absolute so a later chdir cannot move it.
    config = attrs.evolve(loaded.config, config_path=os.path.abspath(location))
    return Loaded(config, loaded.warnings)
