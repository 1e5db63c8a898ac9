"""The keys a ``config.toml`` may hold and the checks of single values (SPEC §11.4): each
error names the file, the table and the key, and never quotes a secret."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from .server import APPROVAL_MODES

__all__ = [
    "CODEX_ONLY_KEYS",
    "MCPBIND_KEYS",
    "MCPBIND_OAUTH_KEYS",
    "OAUTH_KEYS",
    "SECRET_VARIABLE_KEYS",
    "SERVER_KEYS",
    "SWITCHABLE_KEYS",
    "TOOL_KEYS",
    "TOP_LEVEL_KEYS",
    "Values",
]

#: Keys of ``[mcp_servers.<name>]`` that mcpbind acts on.
SERVER_KEYS = frozenset(
    {
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "bearer_token_env_var",
        "http_headers",
        "env_http_headers",
        "enabled",
        "required",
        "startup_timeout_sec",
        "startup_timeout_ms",
        "tool_timeout_sec",
        "enabled_tools",
        "disabled_tools",
        "supports_parallel_tool_calls",
        "default_tools_approval_mode",
        "tools",
        "scopes",
        "oauth_resource",
        "oauth",
    }
)
#: Keys of ``[mcp_servers.<name>.oauth]`` (Codex's).
OAUTH_KEYS = frozenset({"client_id", "callback_port", "callback_url"})
#: Keys of ``[mcpbind.oauth.<name>]``: mcpbind's own, so Codex's tables stay Codex's.
MCPBIND_OAUTH_KEYS = frozenset(
    {
        "enabled",
        "grant",
        "client_secret_env_var",
        "private_key_file",
        "signing_algorithm",
        "issuer",
        "client_metadata_url",
        "token_endpoint_auth_method",
        "dpop",
        "dpop_required",
        "assertion_file",
        "assertion_env_var",
        # The identity-assertion grant's identity provider (SEP-990, RFC 8693).
        "idp_token_endpoint",
        "idp_client_id",
        "idp_client_secret_env_var",
        "id_token_env_var",
    }
)
#: ``[mcpbind.oauth.<name>]`` keys naming an environment variable that holds a secret.
SECRET_VARIABLE_KEYS = {
    "client_secret_env_var": "client_secret",
    "idp_client_secret_env_var": "idp_client_secret",
    "id_token_env_var": "id_token",
}
#: Top-level Codex keys mcpbind reads (SPEC §11.15); other top-level keys are Codex's.
TOP_LEVEL_KEYS = frozenset(
    {"mcp_oauth_credentials_store", "mcp_oauth_callback_port", "mcp_oauth_callback_url"}
)
#: Keys of ``[mcp_servers.<name>.tools.<tool>]``.
TOOL_KEYS = frozenset({"approval_mode", "output_token_limit", "output_byte_limit"})
#: Codex keys accepted with a warning: mcpbind does not act on them (yet).
CODEX_ONLY_KEYS = frozenset({"env_vars"})
MCPBIND_KEYS = frozenset(
    {
        "max_name_length",
        "binding_policy",
        "output_limit",
        "defer_threshold",
        "schema_limit_bytes",
        "image_capable",
        "resource_tools",
        "elicitation",
        # Fast start (SPEC §11.12): mcpbind's own, so Codex's server tables stay as Codex
        # defines them; ``[mcpbind.startup]`` maps a server name to its startup policy.
        "optional_startup_grace_sec",
        "startup",
        "close_timeout_sec",
        # Idle timeouts (SPEC §8.11): ``[mcpbind.idle_timeout]`` maps a server name to the
        # cap, in seconds, on a call whose progress keeps re-arming its tool timeout.
        "idle_timeout",
        # OAuth (SPEC §11.15): ``[mcpbind.oauth.<server>]`` and the credentials file.
        "oauth",
        "oauth_credentials_path",
    }
)
#: ``[mcpbind]`` keys that ``false`` turns off (TOML has no null).
SWITCHABLE_KEYS = frozenset({"defer_threshold", "schema_limit_bytes"})


class Values:
    """Reads single values of one file, and collects the warnings about it."""

    def __init__(self, path: str, environ: Mapping[str, str]) -> None:
        self.path = path
        self.environ = environ
        self.warnings: list[str] = []

    def error(self, table: str, key: str | None, problem: str) -> ConfigError:
        where = f"[{table}]" + (f" key {key!r}" if key else "")
        return ConfigError(f"{self.path}: {where}: {problem}")

    def unknown(self, table: str, key: str, known: frozenset[str]) -> ConfigError:
        import difflib  # noqa: PLC0415 - only for a bad key: not on every command's start-up

        # n=1: only the best match, close[0], is read; any larger n gives the same one
        close = difflib.get_close_matches(key, sorted(known), n=1)  # pragma: no mutate
        hint = (
            f"; did you mean {close[0]!r}?"
            if close
            else f"; known keys: {', '.join(sorted(known))}"
        )
        return self.error(table, key, f"unknown key{hint}")

    def number(self, table: str, key: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            raise self.error(table, key, f"must be a number, got {type(value).__name__}")
        if value < 0:
            raise self.error(table, key, "must be >= 0")
        return float(value)

    def boolean(self, table: str, key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.error(table, key, f"must be true or false, got {type(value).__name__}")
        return value

    def string(self, table: str, key: str, value: Any) -> str:
        if not isinstance(value, str):
            raise self.error(table, key, f"must be a string, got {type(value).__name__}")
        return value

    def strings(self, table: str, key: str, value: Any) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(table, key, "must be a list of strings")
        return list(value)

    def secret_table(self, table: str, key: str, value: Any) -> dict[str, str]:
        """A table of strings whose values are secrets: never quoted back."""
        if not isinstance(value, dict):
            raise self.error(table, key, "must be a table of strings")
        for name, item in value.items():
            if not isinstance(item, str):
                raise self.error(table, f"{key}.{name}", "must be a string (value not shown)")
        return dict(value)

    def mode(self, table: str, key: str, value: Any) -> str:
        if value not in APPROVAL_MODES:
            raise self.error(table, key, f"must be one of {', '.join(APPROVAL_MODES)}")
        return str(value)
