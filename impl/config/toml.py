"""Codex-compatible TOML configuration (docs/configuration.md, SPEC §11.4).

An existing Codex ``config.toml`` works unchanged: servers are ``[mcp_servers.<name>]``
tables with Codex's keys; mcpbind's own settings live in ``[mcpbind]``; every other
table is ignored. Inside those tables a key that neither Codex nor mcpbind defines is an
error naming the file, the table, the key and the closest known key; a Codex key that
mcpbind does not act on is accepted with a warning. Values of ``env``, ``http_headers``,
``env_http_headers`` and the bearer token never appear in messages.

This module reads a file into plain values (:func:`read_toml`); :mod:`.config` builds the
``HostConfig`` from them (``parse_toml``, ``load_toml``, ``HostConfig.from_toml``), so the
reader imports nothing of the host's configuration.
"""

from __future__ import annotations

import pathlib
import tomllib
from collections.abc import Mapping
from typing import Any

import attrs

from mcpbind.model import texts

from ..errors import ConfigError
from .credentials import STORE_CHOICES
from .oauth import AssertionFile, AssertionValue, IdentityProvider, OAuthConfig
from .server import STARTUP_POLICIES, ServerConfig, StdioTarget, ToolConfig
from .toml_values import (
    CODEX_ONLY_KEYS,
    MCPBIND_KEYS,
    MCPBIND_OAUTH_KEYS,
    OAUTH_KEYS,
    SECRET_VARIABLE_KEYS,
    SERVER_KEYS,
    SWITCHABLE_KEYS,
    TOOL_KEYS,
    Values,
)

__all__ = ["TomlSettings", "read_toml"]


@attrs.frozen
class TomlSettings:
    """What a file says: its servers, its ``[mcpbind]`` settings (keyword arguments of
    ``HostConfig``) and the warnings about Codex keys mcpbind does not act on."""

    servers: Mapping[str, ServerConfig]
    settings: Mapping[str, Any]
    warnings: tuple[str, ...]


class _Reader(Values):
    def server(self, name: str, raw: Any) -> ServerConfig:
        table = f"mcp_servers.{name}"
        if not isinstance(raw, dict):
            raise self.error(table, None, "must be a table")
        for key in raw:
            if key in CODEX_ONLY_KEYS:
                self.warnings.append(
                    f"{self.path}: [{table}] key {key!r} is a Codex setting mcpbind does not "
                    "act on yet; it is ignored"
                )
            elif key not in SERVER_KEYS:
                raise self.unknown(table, key, SERVER_KEYS | CODEX_ONLY_KEYS)
        has_command, has_url = "command" in raw, "url" in raw
        if has_command and has_url:
            raise self.error(
                table, None, "has both 'command' and 'url'; a server is one or the other"
            )
        if not has_command and not has_url:
            raise self.error(table, None, "needs 'command' (stdio) or 'url' (streamable HTTP)")
        if has_command:
            for key in (
                "bearer_token_env_var",
                "http_headers",
                "env_http_headers",
                "scopes",
                "oauth_resource",
                "oauth",
            ):
                if key in raw:
                    raise self.error(table, key, "applies to 'url' servers only")
            target: Any = StdioTarget(
                command=self.string(table, "command", raw["command"]),
                args=self.strings(table, "args", raw.get("args", [])),
                env=self.secret_table(table, "env", raw["env"]) if "env" in raw else None,
                cwd=self.string(table, "cwd", raw["cwd"]) if "cwd" in raw else None,
            )
            headers: dict[str, str] = {}
            unusable: str | None = None
        else:
            for key in ("args", "env", "cwd"):
                if key in raw:
                    raise self.error(table, key, "applies to 'command' servers only")
            target = self.string(table, "url", raw["url"])
            if not target.startswith(("http://", "https://")):
                raise self.error(table, "url", "must start with http:// or https://")
            headers, unusable = self.headers(name, table, raw)
        timeouts: dict[str, Any] = {}
        if "startup_timeout_ms" in raw:
            timeouts["startup_timeout_sec"] = (
                self.number(table, "startup_timeout_ms", raw["startup_timeout_ms"]) / 1000
            )
        for key in ("startup_timeout_sec", "tool_timeout_sec"):
            if key in raw:
                timeouts[key] = self.number(table, key, raw[key])
        flags: dict[str, Any] = {
            key: self.boolean(table, key, raw[key])
            for key in ("enabled", "required", "supports_parallel_tool_calls")
            if key in raw
        }
        lists: dict[str, Any] = {
            key: self.strings(table, key, raw[key])
            for key in ("enabled_tools", "disabled_tools")
            if key in raw
        }
        approval: dict[str, Any] = {}
        if "default_tools_approval_mode" in raw:
            approval["default_tools_approval_mode"] = self.mode(
                table, "default_tools_approval_mode", raw["default_tools_approval_mode"]
            )
        tools = self.tools(table, raw.get("tools", {}))
        oauth: dict[str, Any] = {}
        if has_url:
            oauth["oauth"] = self.oauth(table, raw)
        return ServerConfig(
            target=target,
            headers=headers,
            unusable=unusable,
            tools=tools,
            **timeouts,
            **flags,
            **lists,
            **approval,
            **oauth,
        )

    def oauth(self, table: str, raw: Mapping[str, Any]) -> OAuthConfig:
        """Codex's ``scopes``, ``oauth_resource`` and ``[<table>.oauth]`` (SPEC §11.15)."""
        values: dict[str, Any] = {}
        if "scopes" in raw:
            values["scopes"] = self.strings(table, "scopes", raw["scopes"])
        if "oauth_resource" in raw:
            values["resource"] = self.string(table, "oauth_resource", raw["oauth_resource"])
        given = raw.get("oauth", {})
        where = f"{table}.oauth"
        if not isinstance(given, dict):
            raise self.error(table, "oauth", "must be a table")
        for key, value in given.items():
            if key not in OAUTH_KEYS:
                raise self.unknown(where, key, OAUTH_KEYS)
            if key == "callback_port":
                if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 65536:
                    raise self.error(where, key, "must be a port number, 1..65535")
                values[key] = value
            else:
                values[key] = self.string(where, key, value)
        try:
            return OAuthConfig(**values)
        except ConfigError as error:
            raise self.error(table, "oauth", str(error)) from None

    def own_oauth(self, raw: Any, servers: dict[str, ServerConfig]) -> dict[str, ServerConfig]:
        """``[mcpbind.oauth.<server>]``: what Codex's config has no key for (a grant for
        machines, a client secret or key kept outside the file, the issuer, DPoP, a
        workload's assertion), or ``enabled = false``."""
        if not isinstance(raw, dict):
            raise self.error("mcpbind", "oauth", "must be a table of server names")
        updated = dict(servers)
        for name, given in raw.items():
            where = f"mcpbind.oauth.{name}"
            if name not in servers:
                raise self.error("mcpbind.oauth", name, "names no server of [mcp_servers]")
            current = servers[name].oauth  # a stdio server's default too: not None
            if current is None or not servers[name].over_http or not isinstance(given, dict):
                raise self.error(where, None, "must be a table, for a url server")
            values: dict[str, Any] = {}
            for key, value in given.items():
                if key not in MCPBIND_OAUTH_KEYS:
                    raise self.unknown(where, key, MCPBIND_OAUTH_KEYS)
                if key in ("enabled", "dpop", "dpop_required"):
                    values[key] = self.boolean(where, key, value)
                elif key == "assertion_file":
                    values["assertion"] = AssertionFile(self.string(where, key, value))
                elif key == "assertion_env_var":
                    variable = self.string(where, key, value)
                    assertion = self.environ.get(variable, "").strip()
                    if not assertion:
                        raise self.error(
                            where, key, f"environment variable {variable!r} is not set"
                        )
                    values["assertion"] = AssertionValue(assertion)
                elif key in SECRET_VARIABLE_KEYS:
                    variable = self.string(where, key, value)
                    secret = self.environ.get(variable)
                    if not secret:
                        raise self.error(
                            where, key, f"environment variable {variable!r} is not set"
                        )
                    values[SECRET_VARIABLE_KEYS[key]] = secret
                elif key == "private_key_file":
                    location = self.string(where, key, value)
                    try:
                        values["private_key"] = pathlib.Path(location).read_text(encoding="utf-8")
                    except OSError as error:
                        raise self.error(
                            where, key, f"cannot read {location}: {error.strerror}"
                        ) from None
                else:
                    values[key] = self.string(where, key, value)
            if "assertion_file" in given and "assertion_env_var" in given:
                raise self.error(where, None, "give one of assertion_file and assertion_env_var")
            if values.pop("enabled", True) is False:
                updated[name] = attrs.evolve(servers[name], oauth=None)
                continue
            provider = self.identity_provider(where, values)
            if provider is not None:
                values["identity_provider"] = provider
            try:
                oauth = attrs.evolve(current, **values)
            except ConfigError as error:
                raise self.error(where, None, str(error)) from None
            updated[name] = attrs.evolve(servers[name], oauth=oauth)
        return updated

    def identity_provider(self, where: str, values: dict[str, Any]) -> IdentityProvider | None:
        """The identity-assertion grant's ``idp_*`` and ``id_token_env_var`` keys, taken
        out of ``values`` (SEP-990: where the ID token is exchanged for an ID-JAG)."""
        given = {
            key: values.pop(key)
            for key in ("idp_token_endpoint", "idp_client_id", "idp_client_secret", "id_token")
            if key in values
        }
        if not given:
            return None
        missing = [
            key
            for key, field in (
                ("idp_token_endpoint", "idp_token_endpoint"),
                ("idp_client_id", "idp_client_id"),
                ("id_token_env_var", "id_token"),
            )
            if field not in given
        ]
        if missing:
            raise self.error(
                where, None, f"an identity provider needs {', '.join(missing)} as well"
            )
        return IdentityProvider(
            token_endpoint=given["idp_token_endpoint"],
            client_id=given["idp_client_id"],
            id_token=given["id_token"],
            client_secret=given.get("idp_client_secret"),
        )

    def tools(self, table: str, raw: Any) -> dict[str, ToolConfig]:
        """``[<table>.tools.<tool>]``: per-tool settings keyed by the raw tool name."""
        if not isinstance(raw, dict):
            raise self.error(table, "tools", "must be a table of tools")
        tools: dict[str, ToolConfig] = {}
        for tool, settings in raw.items():
            where = f"{table}.tools.{tool}"
            if not isinstance(settings, dict):
                raise self.error(where, None, "must be a table")
            values: dict[str, Any] = {}
            for key, value in settings.items():
                if key not in TOOL_KEYS:
                    raise self.unknown(where, key, TOOL_KEYS)
                if key == "approval_mode":
                    values[key] = self.mode(where, key, value)
                elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise self.error(where, key, "must be an integer >= 1")
                else:
                    values[key] = value
            tools[tool] = ToolConfig(**values)
        return tools

    def headers(
        self, name: str, table: str, raw: Mapping[str, Any]
    ) -> tuple[dict[str, str], str | None]:
        """The headers, and why the server cannot start (or None). As Codex does (SPEC
        §11.4): a variable of ``env_http_headers`` that is unset or blank leaves its header
        out; an unset or empty ``bearer_token_env_var`` fails this server alone, when it
        starts; for a disabled server, which never starts, it is no error at all."""
        headers = self.secret_table(table, "http_headers", raw.get("http_headers", {}))
        from_env = self.secret_table(table, "env_http_headers", raw.get("env_http_headers", {}))
        variable = None
        if "bearer_token_env_var" in raw:
            variable = self.string(table, "bearer_token_env_var", raw["bearer_token_env_var"])
        for header, source in from_env.items():
            value = self.environ.get(source)
            if value is not None and value.strip():
                headers[header] = value
        if variable is None:
            return headers, None
        token = self.environ.get(variable)
        if not token and raw.get("enabled", True) is False:
            return headers, None  # never started: nothing to fail
        if not token:
            state = "is not set" if token is None else "is empty"
            return headers, texts.ENV_VAR_UNSET.format(variable=variable, server=name, state=state)
        headers["Authorization"] = f"Bearer {token}"
        return headers, None

    def host(self, data: Mapping[str, Any]) -> tuple[dict[str, ServerConfig], dict[str, Any]]:
        servers_raw = data.get("mcp_servers", {})
        if not isinstance(servers_raw, dict):
            raise self.error("mcp_servers", None, "must be a table of servers")
        servers = {name: self.server(name, raw) for name, raw in servers_raw.items()}
        own = data.get("mcpbind", {})
        if not isinstance(own, dict):
            raise self.error("mcpbind", None, "must be a table")
        settings: dict[str, Any] = self.top_level(data)
        for key, value in own.items():
            if key not in MCPBIND_KEYS:
                raise self.unknown("mcpbind", key, MCPBIND_KEYS)
            if key == "binding_policy":  # pragma: no mutate - no known key sorts before it
                if value not in ("frozen", "revalidate"):
                    raise self.error("mcpbind", key, "must be 'frozen' or 'revalidate'")
                settings[key] = value
            elif key in SWITCHABLE_KEYS and value is False:
                settings[key] = None
            elif key in ("image_capable", "resource_tools"):
                if not isinstance(value, bool):
                    raise self.error("mcpbind", key, "must be true or false")
                settings[key] = value
            elif key == "elicitation":
                if value not in ("decline", "never_ask"):
                    problem = "must be 'decline' or 'never_ask'"
                    if value == "ask":
                        problem += (
                            " in a file ('ask' needs an elicitation_handler, which only the "
                            "library can give: HostConfig(elicitation='ask', "
                            "elicitation_handler=...))"
                        )
                    raise self.error("mcpbind", key, problem)
                settings[key] = value
            elif key in ("optional_startup_grace_sec", "close_timeout_sec"):
                settings[key] = self.number("mcpbind", key, value)
            elif key == "startup":
                servers = self.startup(value, servers)
            elif key == "idle_timeout":
                servers = self.idle_timeout(value, servers)
            elif key == "oauth":
                servers = self.own_oauth(value, servers)
            elif key == "oauth_credentials_path":
                settings[key] = self.string("mcpbind", key, value)
            else:
                if isinstance(value, bool) or not isinstance(value, int):
                    off = " or false" if key in SWITCHABLE_KEYS else ""
                    raise self.error("mcpbind", key, f"must be an integer{off}")
                settings[key] = value
        return servers, settings

    def top_level(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """Codex's top-level OAuth keys (SPEC §11.15); other top-level keys are Codex's
        own and ignored."""
        settings: dict[str, Any] = {}
        store = data.get("mcp_oauth_credentials_store")
        if store is not None:
            if store not in STORE_CHOICES:
                raise self.error(
                    "top level",
                    "mcp_oauth_credentials_store",
                    f"must be one of {', '.join(STORE_CHOICES)}",
                )
            settings["oauth_store"] = store
        port = data.get("mcp_oauth_callback_port")
        if port is not None:
            if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
                raise self.error(
                    "top level", "mcp_oauth_callback_port", "must be a port number, 1..65535"
                )
            settings["oauth_callback_port"] = port
        url = data.get("mcp_oauth_callback_url")
        if url is not None:
            settings["oauth_callback_url"] = self.string("top level", "mcp_oauth_callback_url", url)
        return settings

    def startup(self, raw: Any, servers: dict[str, ServerConfig]) -> dict[str, ServerConfig]:
        """``[mcpbind.startup]``: server name -> ``eager`` or ``lazy_when_cached``."""
        if not isinstance(raw, dict):
            raise self.error("mcpbind", "startup", "must be a table of server names")
        updated = dict(servers)
        for name, policy in raw.items():
            if name not in servers:
                raise self.error("mcpbind.startup", name, "names no server of [mcp_servers]")
            if policy not in STARTUP_POLICIES:
                raise self.error(
                    "mcpbind.startup", name, f"must be one of {', '.join(STARTUP_POLICIES)}"
                )
            updated[name] = attrs.evolve(servers[name], startup=policy)
        return updated

    def idle_timeout(self, raw: Any, servers: dict[str, ServerConfig]) -> dict[str, ServerConfig]:
        """``[mcpbind.idle_timeout]``: server name -> the cap (seconds) on a call's whole
        time; the server's tool timeout becomes an idle timeout that progress re-arms."""
        table = "mcpbind.idle_timeout"
        if not isinstance(raw, dict):
            raise self.error("mcpbind", "idle_timeout", "must be a table of server names")
        updated = dict(servers)
        for name, cap in raw.items():
            if name not in servers:
                raise self.error(table, name, "names no server of [mcp_servers]")
            seconds = self.number(table, name, cap)
            try:
                updated[name] = attrs.evolve(servers[name], idle_timeout=True, tool_max_sec=seconds)
            except ConfigError as error:
                raise self.error(table, name, str(error)) from error
        return updated


def read_toml(text: str, *, path: str, environ: Mapping[str, str]) -> TomlSettings:
    """Read TOML text; raise ConfigError (naming ``path``) on any problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    reader = _Reader(path, environ)
    servers, settings = reader.host(data)
    return TomlSettings(servers, settings, tuple(reader.warnings))
