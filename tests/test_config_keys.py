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
from types import MappingProxyType
from typing import Any

import attrs
import pytest
from mcp.server import MCPServer

from mcpbind.impl import ConfigError, HostConfig, ServerConfig
from mcpbind.impl.config import toml_values
from mcpbind.impl.config.host import parse_toml
from mcpbind.impl.config.oauth import GRANTS, AssertionFile, AssertionValue, OAuthConfig

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


# --- every malformed value: its one-line error, exactly ------------------------------------

S, H, OWN = "[mcp_servers.s]", "[mcp_servers.h]", "[mcpbind]"
A_URL_SERVERS_KEY = "applies to 'url' servers only"
A_PORT = "must be a port number, 1..65535"
A_LIMIT = "must be an integer >= 1"
MODES = "must be one of auto, prompt, writes, approve"
# (where the line goes, the line, the error after "<string>: ")
ERRORS: list[tuple[str, str, str]] = [
    (
        "s",
        "startup_timeout_sec = true",
        f"{S} key 'startup_timeout_sec': must be a number, got bool",
    ),
    ("s", 'startup_timeout_sec = "9"', f"{S} key 'startup_timeout_sec': must be a number, got str"),
    ("s", "startup_timeout_ms = -1", f"{S} key 'startup_timeout_ms': must be >= 0"),
    ("s", "tool_timeout_sec = -0.5", f"{S} key 'tool_timeout_sec': must be >= 0"),
    ("s", "enabled = 1", f"{S} key 'enabled': must be true or false, got int"),
    ("s", 'required = "yes"', f"{S} key 'required': must be true or false, got str"),
    (
        "s",
        "supports_parallel_tool_calls = 0",
        f"{S} key 'supports_parallel_tool_calls': must be true or false, got int",
    ),
    ("s", 'enabled_tools = "a"', f"{S} key 'enabled_tools': must be a list of strings"),
    ("s", "disabled_tools = [1]", f"{S} key 'disabled_tools': must be a list of strings"),
    ("s", 'args = ["a", 2]', f"{S} key 'args': must be a list of strings"),
    ("s", "cwd = 1", f"{S} key 'cwd': must be a string, got int"),
    ("s", "env = 1", f"{S} key 'env': must be a table of strings"),
    ("s", "env = { A = 1 }", f"{S} key 'env.A': must be a string (value not shown)"),
    ("s", 'default_tools_approval_mode = "x"', f"{S} key 'default_tools_approval_mode': {MODES}"),
    ("s", "tools = 1", f"{S} key 'tools': must be a table of tools"),
    ("s", "tools.t = 1", "[mcp_servers.s.tools.t]: must be a table"),
    ("s", 'tools.t.approval_mode = "x"', f"[mcp_servers.s.tools.t] key 'approval_mode': {MODES}"),
    (
        "s",
        "tools.t.output_token_limit = true",
        f"[mcp_servers.s.tools.t] key 'output_token_limit': {A_LIMIT}",
    ),
    (
        "s",
        "tools.t.output_byte_limit = 0",
        f"[mcp_servers.s.tools.t] key 'output_byte_limit': {A_LIMIT}",
    ),
    (
        "s",
        "tools.t.output_byte_limit = 1.5",
        f"[mcp_servers.s.tools.t] key 'output_byte_limit': {A_LIMIT}",
    ),
    (
        "s",
        'tools.t.output_byte_limit = "2"',
        f"[mcp_servers.s.tools.t] key 'output_byte_limit': {A_LIMIT}",
    ),
    (
        "s",
        "tools.t.limit = 1",
        "[mcp_servers.s.tools.t] key 'limit': unknown key; known keys: approval_mode, "
        "output_byte_limit, output_token_limit",
    ),
    (
        "s",
        'url = "https://x.example"',
        f"{S}: has both 'command' and 'url'; a server is one or the other",
    ),
    ("s", 'bearer_token_env_var = "TOKEN"', f"{S} key 'bearer_token_env_var': {A_URL_SERVERS_KEY}"),
    ("s", "http_headers = {}", f"{S} key 'http_headers': {A_URL_SERVERS_KEY}"),
    ("s", "env_http_headers = {}", f"{S} key 'env_http_headers': {A_URL_SERVERS_KEY}"),
    ("s", "scopes = []", f"{S} key 'scopes': {A_URL_SERVERS_KEY}"),
    ("s", 'oauth_resource = "r"', f"{S} key 'oauth_resource': {A_URL_SERVERS_KEY}"),
    ("s", "oauth = {}", f"{S} key 'oauth': {A_URL_SERVERS_KEY}"),
    ("h", "args = []", f"{H} key 'args': applies to 'command' servers only"),
    ("h", "env = {}", f"{H} key 'env': applies to 'command' servers only"),
    ("h", 'cwd = "/"', f"{H} key 'cwd': applies to 'command' servers only"),
    (
        "h",
        "http_headers = { X = 1 }",
        f"{H} key 'http_headers.X': must be a string (value not shown)",
    ),
    ("h", 'env_http_headers = "X"', f"{H} key 'env_http_headers': must be a table of strings"),
    ("h", "bearer_token_env_var = 1", f"{H} key 'bearer_token_env_var': must be a string, got int"),
    ("h", 'scopes = "a"', f"{H} key 'scopes': must be a list of strings"),
    ("h", "oauth_resource = 1", f"{H} key 'oauth_resource': must be a string, got int"),
    ("h", "oauth = 1", f"{H} key 'oauth': must be a table"),
    (
        "h",
        "oauth.client_id = 1",
        "[mcp_servers.h.oauth] key 'client_id': must be a string, got int",
    ),
    ("h", "oauth.callback_port = 0", f"[mcp_servers.h.oauth] key 'callback_port': {A_PORT}"),
    ("h", "oauth.callback_port = 65536", f"[mcp_servers.h.oauth] key 'callback_port': {A_PORT}"),
    ("h", "oauth.callback_port = true", f"[mcp_servers.h.oauth] key 'callback_port': {A_PORT}"),
    ("h", 'oauth.callback_port = "1"', f"[mcp_servers.h.oauth] key 'callback_port': {A_PORT}"),
    (
        "h",
        "oauth.client = 1",
        "[mcp_servers.h.oauth] key 'client': unknown key; did you mean 'client_id'?",
    ),
    (
        "top",
        'mcp_oauth_credentials_store = "vault"',
        "[top level] key 'mcp_oauth_credentials_store': must be one of auto, keyring, file",
    ),
    ("top", "mcp_oauth_callback_port = 0", f"[top level] key 'mcp_oauth_callback_port': {A_PORT}"),
    (
        "top",
        "mcp_oauth_callback_port = 65536",
        f"[top level] key 'mcp_oauth_callback_port': {A_PORT}",
    ),
    (
        "top",
        "mcp_oauth_callback_port = true",
        f"[top level] key 'mcp_oauth_callback_port': {A_PORT}",
    ),
    (
        "top",
        "mcp_oauth_callback_port = 1.5",
        f"[top level] key 'mcp_oauth_callback_port': {A_PORT}",
    ),
    (
        "top",
        "mcp_oauth_callback_url = 1",
        "[top level] key 'mcp_oauth_callback_url': must be a string, got int",
    ),
    (
        "mcpbind",
        "binding_policy = 1",
        f"{OWN} key 'binding_policy': must be 'frozen' or 'revalidate'",
    ),
    ("mcpbind", "image_capable = 1", f"{OWN} key 'image_capable': must be true or false"),
    ("mcpbind", 'resource_tools = "no"', f"{OWN} key 'resource_tools': must be true or false"),
    ("mcpbind", "close_timeout_sec = -1", f"{OWN} key 'close_timeout_sec': must be >= 0"),
    (
        "mcpbind",
        'optional_startup_grace_sec = "1"',
        f"{OWN} key 'optional_startup_grace_sec': must be a number, got str",
    ),
    (
        "mcpbind",
        "oauth_credentials_path = 1",
        f"{OWN} key 'oauth_credentials_path': must be a string, got int",
    ),
    ("mcpbind", "max_name_length = true", f"{OWN} key 'max_name_length': must be an integer"),
    ("mcpbind", "output_limit = 1.5", f"{OWN} key 'output_limit': must be an integer"),
    (
        "mcpbind",
        'defer_threshold = "3"',
        f"{OWN} key 'defer_threshold': must be an integer or false",
    ),
    (
        "mcpbind",
        "schema_limit_bytes = true",
        f"{OWN} key 'schema_limit_bytes': must be an integer or false",
    ),
    ("mcpbind", "startup = 1", f"{OWN} key 'startup': must be a table of server names"),
    (
        "mcpbind",
        'startup.x = "eager"',
        "[mcpbind.startup] key 'x': names no server of [mcp_servers]",
    ),
    (
        "mcpbind",
        'startup.s = "lazy"',
        "[mcpbind.startup] key 's': must be one of eager, lazy_when_cached",
    ),
    ("mcpbind", "idle_timeout = 1", f"{OWN} key 'idle_timeout': must be a table of server names"),
    (
        "mcpbind",
        "idle_timeout.x = 1",
        "[mcpbind.idle_timeout] key 'x': names no server of [mcp_servers]",
    ),
    ("mcpbind", "idle_timeout.s = -1", "[mcpbind.idle_timeout] key 's': must be >= 0"),
    (
        "mcpbind",
        "idle_timeout.s = 300",
        "[mcpbind.idle_timeout] key 's': an idle timeout needs 0 < tool_timeout_sec < "
        "tool_max_sec, got tool_timeout_sec = 300, tool_max_sec = 300; the cap is what ends "
        "a call that keeps reporting progress",
    ),
    ("mcpbind", "oauth = 1", f"{OWN} key 'oauth': must be a table of server names"),
    ("mcpbind", "oauth.x = {}", "[mcpbind.oauth] key 'x': names no server of [mcp_servers]"),
    ("mcpbind", "oauth.s = {}", "[mcpbind.oauth.s]: must be a table, for a url server"),
    (
        "mcpbind",
        "oauth.s = { dpop = true }",
        "[mcpbind.oauth.s]: must be a table, for a url server",
    ),
    ("mcpbind", "oauth.h = 1", "[mcpbind.oauth.h]: must be a table, for a url server"),
    (
        "mcpbind.oauth.h",
        "enabled = 1",
        "[mcpbind.oauth.h] key 'enabled': must be true or false, got int",
    ),
    (
        "mcpbind.oauth.h",
        'dpop = "yes"',
        "[mcpbind.oauth.h] key 'dpop': must be true or false, got str",
    ),
    (
        "mcpbind.oauth.h",
        "dpop_required = 0",
        "[mcpbind.oauth.h] key 'dpop_required': must be true or false, got int",
    ),
    ("mcpbind.oauth.h", "issuer = 1", "[mcpbind.oauth.h] key 'issuer': must be a string, got int"),
    (
        "mcpbind.oauth.h",
        "assertion_file = 1",
        "[mcpbind.oauth.h] key 'assertion_file': must be a string, got int",
    ),
    (
        "mcpbind.oauth.h",
        'assertion_env_var = "UNSET"',
        "[mcpbind.oauth.h] key 'assertion_env_var': environment variable 'UNSET' is not set",
    ),
    (
        "mcpbind.oauth.h",
        'client_secret_env_var = "UNSET"',
        "[mcpbind.oauth.h] key 'client_secret_env_var': environment variable 'UNSET' is not set",
    ),
    (
        "mcpbind.oauth.h",
        'private_key_file = "/nonexistent/key.pem"',
        "[mcpbind.oauth.h] key 'private_key_file': cannot read /nonexistent/key.pem: "
        "No such file or directory",
    ),
    (
        "mcpbind.oauth.h",
        f'assertion_file = "{KEY_FILE}"\nassertion_env_var = "KEY"',
        "[mcpbind.oauth.h]: give one of assertion_file and assertion_env_var",
    ),
    (
        "mcpbind.oauth.h",
        'idp_token_endpoint = "https://idp.example/token"',
        "[mcpbind.oauth.h]: an identity provider needs idp_client_id, id_token_env_var as well",
    ),
    (
        "mcpbind.oauth.h",
        'idp_client_id = "host"\nid_token_env_var = "TOKEN"',
        "[mcpbind.oauth.h]: an identity provider needs idp_token_endpoint as well",
    ),
    (
        "mcpbind.oauth.h",
        "grantt = 1",
        "[mcpbind.oauth.h] key 'grantt': unknown key; did you mean 'grant'?",
    ),
]


@pytest.mark.parametrize(
    ("where", "line", "message"),
    [pytest.param(*row, id=f"{row[0]}:{row[1]}") for row in ERRORS],
)
def test_a_malformed_value_is_refused_with_its_exact_one_line_error(where, line, message):
    with pytest.raises(ConfigError) as caught:
        build(toml(where, line))
    assert str(caught.value) == f"<string>: {message}"
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("mcp_servers = 1", "[mcp_servers]: must be a table of servers"),
        ("[mcp_servers]\ns = 1", "[mcp_servers.s]: must be a table"),
        (
            "[mcp_servers.s]\nenabled = true",
            "[mcp_servers.s]: needs 'command' (stdio) or 'url' (streamable HTTP)",
        ),
        (
            "[mcp_servers.s]\ncommand = 1",
            "[mcp_servers.s] key 'command': must be a string, got int",
        ),
        ("[mcp_servers.s]\nurl = 1", "[mcp_servers.s] key 'url': must be a string, got int"),
        (
            '[mcp_servers.s]\nurl = "ftp://x"',
            "[mcp_servers.s] key 'url': must start with http:// or https://",
        ),
        ("mcpbind = 1", "[mcpbind]: must be a table"),
    ],
)
def test_a_malformed_table_is_refused_with_its_exact_one_line_error(text, message):
    with pytest.raises(ConfigError) as caught:
        build(text)
    assert str(caught.value) == f"<string>: {message}"


def test_without_an_idle_timeout_a_tool_timeout_may_pass_the_idle_timeouts_cap():
    """``tool_max_sec`` caps a call only under an idle timeout: a plain ``tool_timeout_sec``
    longer than its default (3600) is taken as it is (issue 33: the check's condition
    negated, refusing it, survived)."""
    config = build(toml("s", "tool_timeout_sec = 7200"))
    assert (s(config).idle_timeout, s(config).tool_timeout_sec) == (False, 7200.0)
    assert s(config).tool_max_sec == 3600.0
    capped = build(toml("s", "tool_timeout_sec = 60") + "[mcpbind.idle_timeout]\ns = 120\n")
    assert (s(capped).idle_timeout, s(capped).tool_max_sec) == (True, 120.0)


def test_a_servers_description_names_its_target_and_nothing_else():
    config = build(toml("s", 'args = ["-v", "--root", "/srv"]\nenv = { A = "secret-value" }'))
    assert s(config).describe() == "stdio: srv -v --root /srv"
    assert h(config).describe() == "streamable HTTP https://h.example/mcp"
    assert build(toml()).servers["s"].describe() == "stdio: srv"
    assert ServerConfig(target=MCPServer("x")).describe() == "in-process MCPServer"


# --- HostConfig from Python: each setting's bounds, both sides --------------------------

ONE = {"s": ServerConfig(target="http://127.0.0.1:1/mcp")}


async def _approve(request: Any) -> Any:
    return None


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"binding_policy": "loose"},
            "binding_policy must be 'frozen' or 'revalidate', got 'loose'",
        ),
        ({"max_name_length": 23}, "max_name_length must be an integer >= 24, got 23"),
        ({"max_name_length": "64"}, "max_name_length must be an integer >= 24, got '64'"),
        ({"elicitation": "yes"}, "elicitation must be one of decline, never_ask, ask, got 'yes'"),
        ({"elicitation_url": 1}, "elicitation_url must be true or false, got 1"),
        (
            {"elicitation_url": True},
            "elicitation_url = true needs elicitation = 'ask' and an elicitation_handler "
            "that shows the URL to the user",
        ),
        ({"image_capable": 1}, "image_capable must be true or false, got 1"),
        ({"resource_tools": None}, "resource_tools must be true or false, got None"),
        ({"servers": {"": ONE["s"]}}, "server names must be non-empty strings, got ''"),
        ({"servers": {1: ONE["s"]}}, "server names must be non-empty strings, got 1"),
        ({"servers": {"s": "http://x"}}, "server 's': expected a ServerConfig, got 'http://x'"),
        *(
            (
                {"output_limit": bad},
                f"output_limit must be 0 (no limit) or an integer >= 100, got {bad!r}",
            )
            for bad in (1, 99, -1, True, 100.0)
        ),
        ({"defer_threshold": -1}, "defer_threshold must be an integer >= 0 or None (off), got -1"),
        (
            {"defer_threshold": False},
            "defer_threshold must be an integer >= 0 or None (off), got False",
        ),
        (
            {"schema_limit_bytes": 0},
            "schema_limit_bytes must be an integer >= 1 or None (off), got 0",
        ),
        (
            {"schema_limit_bytes": 2.0},
            "schema_limit_bytes must be an integer >= 1 or None (off), got 2.0",
        ),
        ({"catalog_cache": {}}, "catalog_cache must be a CatalogCache, got {}"),
        ({"approver": "yes"}, "approver must be an async callable, got 'yes'"),
        ({"close_timeout_sec": -1}, "close_timeout_sec must be a number >= 0, got -1"),
        (
            {"optional_startup_grace_sec": -0.5},
            "optional_startup_grace_sec must be a number >= 0, got -0.5",
        ),
    ],
)
def test_a_host_setting_out_of_bounds_is_refused_naming_it(settings, message):
    with pytest.raises(ConfigError) as caught:
        HostConfig(**{"servers": ONE, **settings})
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "settings",
    [
        {"max_name_length": 24},
        {"output_limit": 0},
        {"output_limit": None},
        {"output_limit": 100},
        {"defer_threshold": 0},
        {"defer_threshold": None},
        {"schema_limit_bytes": 1},
        {"schema_limit_bytes": None},
        {"close_timeout_sec": 0},
        {"optional_startup_grace_sec": 0.0},
        {"approver": _approve},
        {"servers": {}},
    ],
)
def test_a_host_setting_at_its_bound_is_taken_as_given(settings):
    config = HostConfig(**{"servers": ONE, **settings})
    for key, value in settings.items():
        assert getattr(config, key) == value


# --- secrets: in the built configuration, never in its repr ------------------------------

SECRET = "sk-7f3e9a1c0b2d-SECRET"
SECRET_ROWS = [
    ("s", f'env = {{ A = "{SECRET}" }}'),
    ("h", f'http_headers = {{ "X-Key" = "{SECRET}" }}'),
    ("h", 'env_http_headers = { "X-Key" = "SECRET_VAR" }'),
    ("h", 'bearer_token_env_var = "SECRET_VAR"'),
    ("mcpbind.oauth.h", 'client_secret_env_var = "SECRET_VAR"'),
    (
        "mcpbind.oauth.h",
        'grant = "jwt_bearer"\nissuer = "https://a"\nassertion_env_var = "SECRET_VAR"',
    ),
    ("mcpbind.oauth.h", "private_key_file = 'KEY_PATH'"),
    (
        "mcpbind.oauth.h",
        IDENTITY_PROVIDER.replace('"KEY"', '"SECRET_VAR"').replace('"TOKEN"', '"SECRET_VAR"'),
    ),
]


@pytest.mark.parametrize(("where", "line"), SECRET_ROWS, ids=[r[1][:30] for r in SECRET_ROWS])
def test_a_secret_reaches_the_configuration_but_never_its_repr(where, line, tmp_path):
    """SPEC §11.4: values of ``env``, headers, tokens, client secrets, keys and assertions
    never appear in output; a ``repr`` is output (issue 33: ``repr=False`` made true on
    each secret field survived, only ``slow`` tests looked)."""
    key = tmp_path / "key.pem"
    key.write_text(SECRET)
    text = toml(where, line.replace("KEY_PATH", str(key)))
    config = parse_toml(text, environ={**ENVIRON, "SECRET_VAR": SECRET}).config
    built = list(parts(config))
    assert any(SECRET in repr(attrs.asdict(part, recurse=True)) for part in built)
    for part in built:
        assert SECRET not in repr(part), type(part).__name__


def parts(value: Any) -> Any:
    """``value`` and every attrs instance inside it, however deep."""
    if attrs.has(type(value)):
        yield value
        for field in attrs.fields(type(value)):
            yield from parts(getattr(value, field.name))
    elif isinstance(value, dict | MappingProxyType):
        for item in value.values():
            yield from parts(item)
    elif isinstance(value, tuple | list):
        for item in value:
            yield from parts(item)


def test_a_library_assertion_hook_is_never_shown_by_the_configurations_repr():
    """The hook is the library's own callable: its repr may hold what it closes over."""

    class Hook:
        def __repr__(self) -> str:
            return f"Hook(token={SECRET!r})"

        async def __call__(self, issuer: str, resource: str) -> str:
            return SECRET

    oauth = OAuthConfig(
        grant="identity_assertion",
        client_id="c",
        client_secret="s",
        issuer="https://a.example",
        assertion=Hook(),
    )
    assert SECRET not in repr(oauth)
    assert SECRET not in repr(ServerConfig(target="https://h.example/mcp", oauth=oauth))


@pytest.mark.parametrize(
    ("port", "accepted"),
    [
        *[(None, True), (1, True), (8765, True), (65535, True)],
        *[(0, False), (-1, False), (65536, False), ("8765", False), (8765.0, False)],
    ],
)
def test_a_library_given_callback_port_is_a_port_number_or_refused(port, accepted):
    """``OAuthConfig`` built by a library (no TOML reader before it) checks the port
    itself, both bounds included (mutation testing, issue 33: a bound moved by one
    survived, the TOML rows stopping it earlier)."""
    if accepted:
        assert OAuthConfig(callback_port=port).callback_port == port
        return
    with pytest.raises(ConfigError) as caught:
        OAuthConfig(callback_port=port)
    assert str(caught.value) == f"oauth callback_port must be 1..65535, got {port!r}"


IDJAG = {"client_id": "c", "client_secret": "s", "issuer": "https://a.example"}
CC_NEEDS_ONE = "oauth grant 'client_credentials' needs exactly one of client_secret and private_key"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"grant": "password"}, f"oauth grant must be one of {', '.join(GRANTS)}, got 'password'"),
        (
            {"token_endpoint_auth_method": "private_key_jwt"},
            "oauth token_endpoint_auth_method must be one of none, client_secret_basic, "
            "client_secret_post",
        ),
        ({"grant": "client_credentials"}, "oauth grant 'client_credentials' needs a client_id"),
        ({"grant": "client_credentials", "client_id": "c"}, CC_NEEDS_ONE),
        (
            {
                "grant": "client_credentials",
                "client_id": "c",
                "client_secret": "s",
                "private_key": "k",
            },
            CC_NEEDS_ONE,
        ),
        (
            {
                **IDJAG,
                "grant": "identity_assertion",
                "assertion": AssertionValue("j"),
                "dpop": True,
            },
            "oauth dpop does not apply to grant 'identity_assertion' (yet)",
        ),
        (
            {
                **IDJAG,
                "grant": "identity_assertion",
                "assertion": AssertionValue("j"),
                "dpop_required": True,
            },
            "oauth dpop does not apply to grant 'identity_assertion' (yet)",
        ),
        ({"client_secret": "s"}, "an oauth client_secret needs its client_id"),
    ],
)
def test_a_library_given_oauth_configuration_is_checked_as_a_files_is(fields, message):
    """``OAuthConfig`` built by a library refuses what a file's reader would, each with
    its one line (mutation testing, issue 33: these checks ran under no sampled test)."""
    with pytest.raises(ConfigError) as caught:
        OAuthConfig(**fields)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "fields",
    [
        {"grant": "client_credentials", "client_id": "c", "client_secret": "s"},
        {"grant": "client_credentials", "client_id": "c", "private_key": "k"},
        {**IDJAG, "grant": "identity_assertion", "assertion": AssertionValue("j")},
        {
            "client_id": "c",
            "client_secret": "s",
            "token_endpoint_auth_method": "client_secret_post",
        },
    ],
)
def test_a_library_given_oauth_configuration_that_is_whole_is_accepted(fields):
    assert attrs.asdict(OAuthConfig(**fields), recurse=False).items() >= fields.items()
