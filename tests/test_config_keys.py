"""Every documented TOML key means something (docs/configuration.md, SPEC §11): set to a
value other than its default, it changes the :class:`HostConfig` a file builds.

Mutation testing (issue 33) found ``callback_port`` of ``[mcp_servers.x.oauth]`` read and
then dropped with no test failing. The rows below name each key as the configuration
reference does; the reference's tables must list exactly the keys the reader accepts
(an undocumented key fails), and every documented key must have a row here whose value
reaches the built configuration (a key read and ignored fails).
"""

from __future__ import annotations

import pathlib
import re
import tomllib
from collections.abc import Callable
from typing import Any

import pytest

from mcpbind.impl import ConfigError, HostConfig
from mcpbind.impl.config import toml_values
from mcpbind.impl.config.host import parse_toml
from mcpbind.impl.config.oauth import AssertionFile, AssertionValue

REFERENCE = pathlib.Path(__file__).parent.parent / "docs" / "configuration.md"
ENVIRON = {"TOKEN": "secret-token", "KEY": "header-key", "SECRET": "client-secret"}
KEY_FILE = "/dev/null"  # private_key_file: any readable file; its text is the key


def documented_keys() -> dict[str, set[str]]:
    """The keys of the reference's three tables, by table (``server``, ``top``,
    ``mcpbind``); ``oauth.<server>.*`` expands to the keys its meaning names."""
    heads = {
        "key in `[mcp_servers.<name>]`": "server",
        "top-level key (Codex's)": "top",
        "key in `[mcpbind]`": "mcpbind",
    }
    found: dict[str, set[str]] = {table: set() for table in heads.values()}
    table = None
    for line in REFERENCE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            table = None
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0] in heads:
            table = heads[cells[0]]
            continue
        if table is None or set(cells[0]) <= {"-"}:
            continue
        for key in re.findall(r"`([a-z_][a-z_.<>*]*)`", cells[0]):
            if key.endswith(".*"):  # the keys the meaning lists, outside its parentheses
                meaning = cells[1]
                while re.search(r"\([^()]*\)", meaning):
                    meaning = re.sub(r"\([^()]*\)", "", meaning)
                names = re.findall(r"`([a-z_]+)(?: = [a-z]+)?`", meaning)
                found[table].update(key[:-1] + name for name in names)
            else:
                found[table].add(key)
    return found


def reader_keys() -> dict[str, set[str]]:
    """The keys the reader accepts (``impl/config/toml_values.py``), named as above."""
    v = toml_values
    server = set(v.SERVER_KEYS - {"oauth", "tools"})
    server |= {f"oauth.{key}" for key in v.OAUTH_KEYS}
    server |= {f"tools.<tool>.{key}" for key in v.TOOL_KEYS}
    own = set(v.MCPBIND_KEYS - {"oauth", "idle_timeout", "startup"})
    own |= {"idle_timeout.<server>", "startup.<server>"}
    own |= {f"oauth.<server>.{key}" for key in v.MCPBIND_OAUTH_KEYS}
    return {"server": server, "top": set(v.TOP_LEVEL_KEYS), "mcpbind": own}


def toml(table: str = "", line: str = "") -> str:
    """A file with a stdio server ``s`` and an HTTP server ``h``; ``line`` goes into
    ``table``: ``top``, ``s``, ``h``, ``mcpbind`` or ``mcpbind.oauth.h`` (where the
    server ``h`` gets a client id, which a grant or a secret needs)."""
    parts = {"top": "", "s": 'command = "srv"\n', "h": 'url = "https://h.example/mcp"\n'}
    parts["mcpbind"] = parts["mcpbind.oauth.h"] = ""
    if table:
        parts[table] += line + "\n"
    if table == "mcpbind.oauth.h":
        parts["h"] += 'oauth.client_id = "me"\n'
    text = parts["top"]
    text += f"[mcp_servers.s]\n{parts['s']}[mcp_servers.h]\n{parts['h']}"
    if parts["mcpbind"]:
        text += f"[mcpbind]\n{parts['mcpbind']}"
    if parts["mcpbind.oauth.h"]:
        text += f"[mcpbind.oauth.h]\n{parts['mcpbind.oauth.h']}"
    return text


def build(text: str) -> HostConfig:
    return parse_toml(text, environ=ENVIRON).config


def s(config: HostConfig) -> Any:
    return config.servers["s"]


def h(config: HostConfig) -> Any:
    return config.servers["h"]


Observe = Callable[[HostConfig], Any]
IDENTITY_PROVIDER = "\n".join(
    [
        'grant = "identity_assertion"',
        'client_secret_env_var = "SECRET"',
        'issuer = "https://auth.example.com"',
        'idp_token_endpoint = "https://idp.example/token"',
        'idp_client_id = "host"',
        'idp_client_secret_env_var = "KEY"',
        'id_token_env_var = "TOKEN"',
    ]
)
"""An identity-assertion grant whose identity provider sets every ``idp_*`` key."""
# (table of the reference, key as it names it, where the line goes, the line, what it sets)
ROWS: list[tuple[str, str, str, str, Observe, Any]] = [
    ("server", "command", "s", "", lambda c: s(c).target.command, "srv"),
    ("server", "args", "s", 'args = ["-v"]', lambda c: s(c).target.args, ("-v",)),
    ("server", "env", "s", 'env = { A = "1" }', lambda c: s(c).target.env, {"A": "1"}),
    ("server", "cwd", "s", 'cwd = "/tmp"', lambda c: s(c).target.cwd, "/tmp"),
    ("server", "url", "h", "", lambda c: h(c).target, "https://h.example/mcp"),
    (
        "server",
        "bearer_token_env_var",
        "h",
        'bearer_token_env_var = "TOKEN"',
        lambda c: h(c).headers.get("Authorization"),
        "Bearer secret-token",
    ),
    (
        "server",
        "http_headers",
        "h",
        'http_headers = { "X-Team" = "core" }',
        lambda c: dict(h(c).headers),
        {"X-Team": "core"},
    ),
    (
        "server",
        "env_http_headers",
        "h",
        'env_http_headers = { "X-Key" = "KEY" }',
        lambda c: dict(h(c).headers),
        {"X-Key": "header-key"},
    ),
    ("server", "enabled", "s", "enabled = false", lambda c: s(c).enabled, False),
    ("server", "required", "s", "required = true", lambda c: s(c).required, True),
    (
        "server",
        "startup_timeout_sec",
        "s",
        "startup_timeout_sec = 7",
        lambda c: s(c).startup_timeout_sec,
        7.0,
    ),
    (
        "server",
        "startup_timeout_ms",
        "s",
        "startup_timeout_ms = 7500",
        lambda c: s(c).startup_timeout_sec,
        7.5,
    ),
    (
        "server",
        "tool_timeout_sec",
        "s",
        "tool_timeout_sec = 9",
        lambda c: s(c).tool_timeout_sec,
        9.0,
    ),
    (
        "server",
        "enabled_tools",
        "s",
        'enabled_tools = ["a"]',
        lambda c: s(c).enabled_tools,
        frozenset({"a"}),
    ),
    (
        "server",
        "disabled_tools",
        "s",
        'disabled_tools = ["b"]',
        lambda c: s(c).disabled_tools,
        frozenset({"b"}),
    ),
    (
        "server",
        "supports_parallel_tool_calls",
        "s",
        "supports_parallel_tool_calls = true",
        lambda c: s(c).supports_parallel_tool_calls,
        True,
    ),
    (
        "server",
        "default_tools_approval_mode",
        "s",
        'default_tools_approval_mode = "approve"',
        lambda c: s(c).default_tools_approval_mode,
        "approve",
    ),
    (
        "server",
        "tools.<tool>.approval_mode",
        "s",
        'tools.t.approval_mode = "approve"',
        lambda c: s(c).tools["t"].approval_mode if "t" in s(c).tools else None,
        "approve",
    ),
    (
        "server",
        "tools.<tool>.output_token_limit",
        "s",
        "tools.t.output_token_limit = 30",
        lambda c: s(c).tools["t"].output_token_limit if "t" in s(c).tools else None,
        30,
    ),
    (
        "server",
        "tools.<tool>.output_byte_limit",
        "s",
        "tools.t.output_byte_limit = 200",
        lambda c: s(c).tools["t"].output_byte_limit if "t" in s(c).tools else None,
        200,
    ),
    ("server", "scopes", "h", 'scopes = ["a:read"]', lambda c: h(c).oauth.scopes, ("a:read",)),
    (
        "server",
        "oauth_resource",
        "h",
        'oauth_resource = "https://r.example/mcp"',
        lambda c: h(c).oauth.resource,
        "https://r.example/mcp",
    ),
    (
        "server",
        "oauth.client_id",
        "h",
        'oauth.client_id = "me"',
        lambda c: h(c).oauth.client_id,
        "me",
    ),
    (
        "server",
        "oauth.callback_port",
        "h",
        "oauth.callback_port = 8765",
        lambda c: h(c).oauth.callback_port,
        8765,
    ),
    (
        "server",
        "oauth.callback_url",
        "h",
        'oauth.callback_url = "http://127.0.0.1:8765/cb"',
        lambda c: h(c).oauth.callback_url,
        "http://127.0.0.1:8765/cb",
    ),
    (
        "top",
        "mcp_oauth_credentials_store",
        "top",
        'mcp_oauth_credentials_store = "file"',
        lambda c: c.oauth_store,
        "file",
    ),
    (
        "top",
        "mcp_oauth_callback_port",
        "top",
        "mcp_oauth_callback_port = 8766",
        lambda c: c.oauth_callback_port,
        8766,
    ),
    (
        "top",
        "mcp_oauth_callback_url",
        "top",
        'mcp_oauth_callback_url = "http://127.0.0.1:8766/cb"',
        lambda c: c.oauth_callback_url,
        "http://127.0.0.1:8766/cb",
    ),
    (
        "mcpbind",
        "max_name_length",
        "mcpbind",
        "max_name_length = 40",
        lambda c: c.max_name_length,
        40,
    ),
    (
        "mcpbind",
        "binding_policy",
        "mcpbind",
        'binding_policy = "frozen"',
        lambda c: c.binding_policy,
        "frozen",
    ),
    ("mcpbind", "output_limit", "mcpbind", "output_limit = 500", lambda c: c.output_limit, 500),
    (
        "mcpbind",
        "defer_threshold",
        "mcpbind",
        "defer_threshold = 5",
        lambda c: c.defer_threshold,
        5,
    ),
    (
        "mcpbind",
        "schema_limit_bytes",
        "mcpbind",
        "schema_limit_bytes = false",
        lambda c: c.schema_limit_bytes,
        None,
    ),
    (
        "mcpbind",
        "image_capable",
        "mcpbind",
        "image_capable = true",
        lambda c: c.image_capable,
        True,
    ),
    (
        "mcpbind",
        "resource_tools",
        "mcpbind",
        "resource_tools = false",
        lambda c: c.resource_tools,
        False,
    ),
    (
        "mcpbind",
        "elicitation",
        "mcpbind",
        'elicitation = "never_ask"',
        lambda c: c.elicitation,
        "never_ask",
    ),
    (
        "mcpbind",
        "optional_startup_grace_sec",
        "mcpbind",
        "optional_startup_grace_sec = 1.5",
        lambda c: c.optional_startup_grace_sec,
        1.5,
    ),
    (
        "mcpbind",
        "close_timeout_sec",
        "mcpbind",
        "close_timeout_sec = 2",
        lambda c: c.close_timeout_sec,
        2.0,
    ),
    (
        "mcpbind",
        "idle_timeout.<server>",
        "mcpbind",
        "idle_timeout.s = 1800",
        lambda c: (s(c).idle_timeout, s(c).tool_max_sec),
        (True, 1800.0),
    ),
    (
        "mcpbind",
        "startup.<server>",
        "mcpbind",
        'startup.s = "lazy_when_cached"',
        lambda c: s(c).startup,
        "lazy_when_cached",
    ),
    (
        "mcpbind",
        "oauth_credentials_path",
        "mcpbind",
        'oauth_credentials_path = "/tmp/credentials.json"',
        lambda c: c.oauth_credentials_path,
        "/tmp/credentials.json",
    ),
    (
        "mcpbind",
        "oauth.<server>.enabled",
        "mcpbind.oauth.h",
        "enabled = false",
        lambda c: h(c).oauth,
        None,
    ),
    (
        "mcpbind",
        "oauth.<server>.grant",
        "mcpbind.oauth.h",
        'grant = "client_credentials"\nclient_secret_env_var = "SECRET"',
        lambda c: h(c).oauth.grant,
        "client_credentials",
    ),
    (
        "mcpbind",
        "oauth.<server>.client_secret_env_var",
        "mcpbind.oauth.h",
        'client_secret_env_var = "SECRET"',
        lambda c: h(c).oauth.client_secret,
        "client-secret",
    ),
    (
        "mcpbind",
        "oauth.<server>.private_key_file",
        "mcpbind.oauth.h",
        f'private_key_file = "{KEY_FILE}"',
        lambda c: h(c).oauth.private_key,
        "",
    ),
    (
        "mcpbind",
        "oauth.<server>.signing_algorithm",
        "mcpbind.oauth.h",
        'signing_algorithm = "RS256"',
        lambda c: h(c).oauth.signing_algorithm,
        "RS256",
    ),
    (
        "mcpbind",
        "oauth.<server>.issuer",
        "mcpbind.oauth.h",
        'issuer = "https://auth.example.com"',
        lambda c: h(c).oauth.issuer,
        "https://auth.example.com",
    ),
    (
        "mcpbind",
        "oauth.<server>.client_metadata_url",
        "mcpbind.oauth.h",
        'client_metadata_url = "https://me.example/client.json"',
        lambda c: h(c).oauth.client_metadata_url,
        "https://me.example/client.json",
    ),
    (
        "mcpbind",
        "oauth.<server>.token_endpoint_auth_method",
        "mcpbind.oauth.h",
        'token_endpoint_auth_method = "client_secret_post"',
        lambda c: h(c).oauth.token_endpoint_auth_method,
        "client_secret_post",
    ),
    (
        "mcpbind",
        "oauth.<server>.dpop",
        "mcpbind.oauth.h",
        "dpop = true",
        lambda c: h(c).oauth.dpop,
        True,
    ),
    (
        "mcpbind",
        "oauth.<server>.dpop_required",
        "mcpbind.oauth.h",
        "dpop_required = true",
        lambda c: h(c).oauth.dpop_required,
        True,
    ),
    (
        "mcpbind",
        "oauth.<server>.assertion_file",
        "mcpbind.oauth.h",
        f'grant = "jwt_bearer"\nissuer = "https://a.example"\nassertion_file = "{KEY_FILE}"',
        lambda c: h(c).oauth.assertion,
        AssertionFile(KEY_FILE),
    ),
    (
        "mcpbind",
        "oauth.<server>.assertion_env_var",
        "mcpbind.oauth.h",
        'grant = "jwt_bearer"\nissuer = "https://a.example"\nassertion_env_var = "KEY"',
        lambda c: h(c).oauth.assertion,
        AssertionValue("header-key"),
    ),
    *(
        (
            "mcpbind",
            f"oauth.<server>.{key}",
            "mcpbind.oauth.h",
            IDENTITY_PROVIDER,
            lambda c, field=field: getattr(h(c).oauth.identity_provider, field, None),
            value,
        )
        for key, field, value in (
            ("idp_token_endpoint", "token_endpoint", "https://idp.example/token"),
            ("idp_client_id", "client_id", "host"),
            ("idp_client_secret_env_var", "client_secret", "header-key"),
            ("id_token_env_var", "id_token", "secret-token"),
        )
    ),
]
# Keys every file sets (a server is stdio or HTTP): their row checks the value arrives.
ALWAYS_SET = {("server", "command"), ("server", "url")}


def test_the_configuration_reference_documents_exactly_the_keys_the_reader_accepts():
    assert documented_keys() == reader_keys()


def test_every_documented_key_has_a_row_here():
    rows: dict[str, set[str]] = {"server": set(), "top": set(), "mcpbind": set()}
    for table, key, *_ in ROWS:
        rows[table].add(key)
    assert rows == documented_keys()


def test_every_documented_default_is_what_a_file_without_the_key_builds():
    """The reference's ``key (default)`` of ``[mcp_servers.<name>]`` and ``[mcpbind]`` is
    what a file that leaves the key out gets (mutation testing found
    ``close_timeout_sec``'s default of 5 changeable with no test failing)."""
    config = parse_toml('[mcp_servers.s]\ncommand = "x"\n', environ=ENVIRON).config
    owners = {"key in `[mcp_servers.<name>]`": config.servers["s"], "key in `[mcpbind]`": config}
    checked: dict[str, Any] = {}
    owner = None
    for line in REFERENCE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if not line.startswith("|") or cells[0] in owners:
            owner = owners.get(cells[0]) if line.startswith("|") else None
            continue
        for key, default in re.findall(r"`([a-z_]+)` \((`[^`]*`|[0-9a-z]+)\)", cells[0]):
            if owner is not None:
                checked[key] = tomllib.loads(f"v = {default.strip('`')}")["v"]
                assert getattr(owner, key) == checked[key], key
    assert sorted(checked) == [
        "binding_policy",
        "close_timeout_sec",
        "defer_threshold",
        "elicitation",
        "enabled",
        "image_capable",
        "max_name_length",
        "output_limit",
        "required",
        "resource_tools",
        "schema_limit_bytes",
        "startup_timeout_sec",
        "supports_parallel_tool_calls",
        "tool_timeout_sec",
    ]


@pytest.mark.parametrize(
    ("where", "line", "observe", "expected", "always"),
    [
        pytest.param(where, line, observe, value, (table, key) in ALWAYS_SET, id=f"{table}:{key}")
        for table, key, where, line, observe, value in ROWS
    ],
)
def test_a_documented_key_set_to_a_non_default_value_changes_the_built_configuration(
    where, line, observe, expected, always
):
    baseline = build(toml())
    if always:
        assert observe(baseline) == expected
        return
    changed = build(toml(where, line))
    assert observe(changed) == expected
    assert observe(baseline if where != "mcpbind.oauth.h" else build(toml(where))) != expected
    assert changed != baseline


@pytest.mark.parametrize(("value", "hint"), [("ask", True), ("accept", False), ("yes", False)])
def test_only_elicitation_ask_in_a_file_is_told_it_needs_the_librarys_handler(value, hint):
    """Any other refused policy gets the plain message (issue 33: ``== "ask"`` turned
    ``<= "ask"`` survived, giving "accept" the hint)."""
    with pytest.raises(ConfigError) as caught:
        build(toml("mcpbind", f'elicitation = "{value}"'))
    assert "must be 'decline' or 'never_ask'" in str(caught.value)
    assert ("elicitation_handler" in str(caught.value)) is hint
