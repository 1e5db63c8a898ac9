"""OAuth for streamable-HTTP servers (issue 19, SPEC §11.15), against the tests' own
authorization and resource server (``testservers/oauth_server.py``, loopback only, built
with the SDK's server-side auth): a host with no person fails fast with a typed error
naming ``mcpbind login``; a host with a handler logs in; stored tokens are reused and
refreshed across hosts; a refresh token that stopped working asks for a login again;
``mcpbind login`` works end to end through a browser-less redirect; tokens, secrets and
codes never appear in any output, log or error.

The server is a real process, so its tokens expire in wall-clock time: the refresh tests
sleep for real. They run on trio alone, under pytest-trio (what is checked is the
authorization, not the backend); logging in through a handler runs on both backends.
"""

from __future__ import annotations

import json
import logging
import os
import pathlib
import re
import stat
import subprocess
import sys
from typing import Any

import attrs
import httpx2
import pytest
import trio
from cli_runner import mcpbind
from testservers.oauth_server import Served, require_write, revoke_refresh, serving
from testservers.processes import http_server

from mcpbind.impl import (
    AuthorizationFailed,
    AuthorizationRequest,
    AuthorizationResponse,
    CredentialsError,
    FileTokenStore,
    Host,
    HostConfig,
    IdentityProvider,
    LoginRequired,
    MemoryTokenStore,
    OAuthConfig,
    ScopeRequired,
    ServerConfig,
    ServerStartupError,
    response_from_redirect,
)
from mcpbind.impl.config.credentials import Credentials, store_key
from mcpbind.impl.config.host import parse_toml
from mcpbind.impl.config.oauth import AssertionFile, AssertionValue, TokenAuthMethod
from mcpbind.impl.wire.oauth import Authorizer
from mcpbind.model import texts


@pytest.fixture
async def served(tmp_path: pathlib.Path) -> Any:
    async with serving(tmp_path / "server.log") as found:
        yield found


@pytest.fixture
async def short_lived(tmp_path: pathlib.Path) -> Any:
    async with serving(tmp_path / "server.log", token_seconds=1) as found:
        yield found


async def approve(request: AuthorizationRequest) -> AuthorizationResponse:
    """A browser stand-in: the test server approves a GET of its authorization URL."""
    async with httpx2.AsyncClient() as http:
        answer = await http.get(request.url, follow_redirects=False)
    assert answer.status_code == 302, answer.text
    return response_from_redirect(request.server, answer.headers["location"])


def host_config(served: Served, store: Any, handler: Any = None, **server: Any) -> HostConfig:
    return HostConfig(
        servers={"notes": ServerConfig(target=served.url, required=True, **server)},
        oauth_store=store,
        oauth_handler=handler,
    )


async def whoami(config: HostConfig) -> str:
    async with Host.open(config) as host:
        step = host.sample()
        result = await host.call(step, "c1", "mcp__notes__whoami", {})
    assert result.status == "ok", result.output
    return result.output


def kinds(served: Served) -> list[str]:
    """The grants' events: not the requests to ``/mcp``, not each token request as it
    arrives, not each DPoP proof checked."""
    return [
        e["event"] for e in served.events() if e["event"] not in ("mcp", "token-request", "dpop")
    ]


def token_requests(served: Served) -> list[dict[str, Any]]:
    return [e for e in served.events() if e["event"] == "token-request"]


@pytest.mark.trio
async def test_a_host_with_no_person_fails_the_server_with_a_typed_error_naming_the_login(
    served: Served,
) -> None:
    config = host_config(served, MemoryTokenStore())
    with pytest.raises(ServerStartupError) as caught:
        async with Host.open(config):
            pass
    assert isinstance(caught.value.__cause__, LoginRequired)
    assert "run `mcpbind login notes`" in str(caught.value)
    assert "startup_timeout_sec" not in str(caught.value)  # it did not wait for anyone
    assert "authorize" not in kinds(served)


@pytest.mark.trio
async def test_an_optional_server_that_needs_a_login_starts_absent_and_says_so(
    served: Served,
) -> None:
    config = host_config(served, MemoryTokenStore())
    optional = {"notes": ServerConfig(target=served.url, startup_timeout_sec=5)}
    async with Host.open(HostConfig(servers=optional, oauth_store=MemoryTokenStore())) as host:
        [status] = host.server_status()
    assert not status.connected
    assert "mcpbind login notes" in (status.error or "")
    assert config.servers["notes"].oauth is not None


async def test_a_host_with_a_handler_logs_in_and_calls_with_the_token(served: Served) -> None:
    store = MemoryTokenStore()
    asked: list[AuthorizationRequest] = []

    async def handler(request: AuthorizationRequest) -> AuthorizationResponse:
        asked.append(request)
        return await approve(request)

    output = await whoami(host_config(served, store, handler))
    assert "notes:read" in output
    [request] = asked
    assert request.server == "notes"
    assert request.url.startswith(f"http://127.0.0.1:{served.port}/authorize?")
    assert "code_challenge_method=S256" in request.url
    assert kinds(served)[:3] == ["register", "authorize", "token"]
    [token] = [e for e in served.events() if e["event"] == "token"]
    assert token["resource"] == served.url  # RFC 8707: the token is for this server


@pytest.mark.trio
async def test_configured_scopes_are_requested_with_the_resource(served: Served) -> None:
    oauth = OAuthConfig(scopes=("notes:read", "notes:write"))
    await whoami(host_config(served, MemoryTokenStore(), approve, oauth=oauth))
    [authorized] = [e for e in served.events() if e["event"] == "authorize"]
    assert authorized["scopes"] == ["notes:read", "notes:write"]


STEP_UP = texts.SCOPE_REQUIRED.format(
    server="notes", scope="notes:read notes:write", scopes="notes:read notes:write"
)
"""What a call to ``publish`` with a ``notes:read`` token ends with in a host with no
person (the test server's challenge names both scopes)."""


@pytest.mark.trio
async def test_a_step_up_with_no_person_ends_the_call_naming_the_scope_and_the_login(
    served: Served,
) -> None:
    """SPEC §11.15: the 403 ``insufficient_scope`` ends that call ``failed`` with
    ``ScopeRequired``'s text; the session lives on and the stored tokens are kept."""
    store = MemoryTokenStore()
    await whoami(host_config(served, store, approve))
    async with Host.open(host_config(served, store)) as host:  # no person
        step = host.sample()
        refused = await host.call(step, "c1", "mcp__notes__publish", {"text": "x"})
        added = await host.call(step, "c2", "mcp__notes__add", {"text": "y"})
        [status] = host.server_status()
    assert (refused.status, refused.output) == ("failed", STEP_UP)
    assert added.status == "ok"
    assert "added: y" in added.output
    assert status.connected
    assert kinds(served).count("authorize") == 1  # no authorization was tried for it
    assert (await store.load(store_key("notes", served.url))).tokens is not None
    error = ScopeRequired("notes", "notes:read notes:write", ("notes:read", "notes:write"))
    assert str(error) == STEP_UP


@pytest.mark.trio
async def test_a_listing_refused_for_want_of_a_scope_is_a_rejected_refresh_naming_the_login(
    served: Served,
) -> None:
    """SPEC §11.15: any request, not only a call, fails alone; the session lives on."""
    store = MemoryTokenStore()
    await whoami(host_config(served, store, approve))
    async with Host.open(host_config(served, store)) as host:
        await require_write(served.port)
        outcome = await host.refresh("notes")
        step = host.sample()
        added = await host.call(step, "c1", "mcp__notes__add", {"text": "y"})
    assert (outcome.status, outcome.kind) == ("rejected", "list_failed")
    assert outcome.reason is not None
    assert STEP_UP in outcome.reason
    assert added.status == "ok"


@pytest.mark.trio
async def test_stored_tokens_are_reused_by_the_next_host_without_a_login(
    served: Served, tmp_path: pathlib.Path
) -> None:
    store = FileTokenStore(tmp_path / "credentials.json")
    await whoami(host_config(served, store, approve))
    before = kinds(served)
    await whoami(host_config(served, FileTokenStore(tmp_path / "credentials.json")))  # no person
    assert kinds(served) == before  # no new registration, authorization or token
    mode = stat.S_IMODE(os.stat(tmp_path / "credentials.json").st_mode)
    assert mode == 0o600


@pytest.mark.trio
async def test_an_expired_token_is_refreshed_by_the_next_host_without_a_login(
    short_lived: Served, tmp_path: pathlib.Path
) -> None:
    path = tmp_path / "credentials.json"
    await whoami(host_config(short_lived, FileTokenStore(path), approve))
    await trio.sleep(1.5)  # the server's clock, not ours: its access token expires
    await whoami(host_config(short_lived, FileTokenStore(path)))
    assert kinds(short_lived).count("authorize") == 1
    assert "refresh" in kinds(short_lived)


@pytest.mark.trio
async def test_a_token_that_expires_while_the_host_runs_is_refreshed_before_the_next_call(
    short_lived: Served,
) -> None:
    async with Host.open(host_config(short_lived, MemoryTokenStore(), approve)) as host:
        step = host.sample()
        first = await host.call(step, "c1", "mcp__notes__add", {"text": "one"})
        await trio.sleep(1.5)
        second = await host.call(step, "c2", "mcp__notes__add", {"text": "two"})
    assert (first.status, second.status) == ("ok", "ok"), second.output
    assert kinds(short_lived).count("authorize") == 1
    assert "refresh" in kinds(short_lived)


@pytest.mark.trio
async def test_a_refresh_token_that_no_longer_works_asks_for_a_new_login(
    short_lived: Served, tmp_path: pathlib.Path
) -> None:
    path = tmp_path / "credentials.json"
    await whoami(host_config(short_lived, FileTokenStore(path), approve))
    assert await revoke_refresh(short_lived.port) == 1
    await trio.sleep(1.5)
    config = host_config(short_lived, FileTokenStore(path))
    with pytest.raises(ServerStartupError) as caught:
        async with Host.open(config):
            pass
    assert isinstance(caught.value.__cause__, LoginRequired)
    authorizer = Authorizer(FileTokenStore(path))
    assert await authorizer.status("notes", config.servers["notes"]) == "none"  # forgotten
    # ... and a login brings it back.
    await whoami(host_config(short_lived, FileTokenStore(path), approve))


@pytest.mark.trio
# The failed authorization ends the session while the SDK reads a response as an SSE
# stream: the SDK leaves that stream's async generators to be collected unexhausted on
# trio (ResourceWarnings; the same as tests/backends.py's TRANSPORTS_WITH_PROGRESS).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_login_that_expires_while_the_host_runs_fails_fast_and_says_to_log_in(
    short_lived: Served,
) -> None:
    """The access token expires and its refresh token no longer works, mid-session: the
    next call fails at once (nothing waits for a person) and the server's error names
    the login."""
    store = MemoryTokenStore()
    async with Host.open(host_config(short_lived, store, approve)):
        pass  # logged in: the store has the tokens
    config = host_config(short_lived, store)
    async with Host.open(config) as host:
        step = host.sample()
        assert (await host.call(step, "c1", "mcp__notes__add", {"text": "a"})).status == "ok"
        await revoke_refresh(short_lived.port)
        await trio.sleep(1.5)
        failed = await host.call(step, "c2", "mcp__notes__add", {"text": "b"})
        assert failed.status == "failed"
        with trio.fail_after(10):
            while "mcpbind login notes" not in (host.server_status()[0].error or ""):
                await trio.sleep(0.05)
    assert kinds(short_lived).count("authorize") == 1


@pytest.mark.trio
async def test_an_error_answer_from_the_authorization_server_fails_with_its_reason(
    served: Served,
) -> None:
    async def refuse(request: AuthorizationRequest) -> AuthorizationResponse:
        return response_from_redirect(request.server, "http://x/cb?error=access_denied")

    with pytest.raises(ServerStartupError) as caught:
        async with Host.open(host_config(served, MemoryTokenStore(), refuse)):
            pass
    assert isinstance(caught.value.__cause__, AuthorizationFailed)
    assert "the authorization server answered access_denied" in str(caught.value)


@pytest.mark.trio
async def test_a_server_with_a_bearer_token_header_is_not_authorized_by_oauth(
    served: Served,
) -> None:
    config = host_config(served, MemoryTokenStore(), headers={"Authorization": "Bearer nope"})
    authorizer = Authorizer.for_host(config)
    assert authorizer.auth("notes", config.servers["notes"]) is None
    assert await authorizer.status("notes", config.servers["notes"]) == "bearer_token"


def test_a_corrupt_credentials_file_is_a_typed_error_and_is_left_as_it_is(
    tmp_path: pathlib.Path,
) -> None:
    path = tmp_path / "credentials.json"
    path.write_text("{not json")
    store = FileTokenStore(path)
    with pytest.raises(CredentialsError, match="not valid JSON"):
        trio.run(store.save, "k", Credentials("s", "http://x"))
    assert path.read_text() == "{not json"


def test_codex_oauth_keys_are_read_from_the_config_file() -> None:
    text = """
    mcp_oauth_credentials_store = "file"
    mcp_oauth_callback_port = 8765
    [mcp_servers.notes]
    url = "http://127.0.0.1:1/mcp"
    scopes = ["notes:read"]
    oauth_resource = "http://127.0.0.1:1/mcp"
    [mcp_servers.notes.oauth]
    client_id = "registered"
    [mcpbind.oauth.notes]
    issuer = "http://127.0.0.1:1"
    """
    config = parse_toml(text, path="c.toml").config
    oauth = config.servers["notes"].oauth
    assert oauth == OAuthConfig(
        scopes=("notes:read",),
        resource="http://127.0.0.1:1/mcp",
        client_id="registered",
        issuer="http://127.0.0.1:1",
    )
    assert (config.oauth_store, config.oauth_callback_port) == ("file", 8765)


def test_a_client_secret_comes_from_the_environment_and_is_never_shown() -> None:
    text = """
    [mcp_servers.ci]
    url = "http://127.0.0.1:1/mcp"
    [mcp_servers.ci.oauth]
    client_id = "robot"
    [mcpbind.oauth.ci]
    grant = "client_credentials"
    client_secret_env_var = "ROBOT_SECRET"
    issuer = "http://127.0.0.1:1"
    """
    loaded = parse_toml(text, path="c.toml", environ={"ROBOT_SECRET": "s3cr3t-value"})
    oauth = loaded.config.servers["ci"].oauth
    assert oauth is not None
    assert oauth.client_secret == "s3cr3t-value"
    assert "s3cr3t-value" not in repr(loaded.config)


IDENTITY_ASSERTION = """
[mcp_servers.crm]
url = "http://127.0.0.1:1/mcp"
[mcp_servers.crm.oauth]
client_id = "crm-client"
[mcpbind.oauth.crm]
grant = "identity_assertion"
client_secret_env_var = "CRM_SECRET"
issuer = "http://127.0.0.1:2"
idp_token_endpoint = "http://127.0.0.1:3/token"
idp_client_id = "host-at-idp"
id_token_env_var = "ID_TOKEN"
"""


def test_the_identity_assertion_grant_is_configured_in_toml_with_its_identity_provider() -> None:
    """SEP-990 from a file: the ID token comes from the environment and is never shown
    (the conformance suite's cross-app-access scenario runs it end to end, CLI mode)."""
    environ = {"CRM_SECRET": "crm-secret-value", "ID_TOKEN": "id-token-value"}
    loaded = parse_toml(IDENTITY_ASSERTION, path="c.toml", environ=environ)
    oauth = loaded.config.servers["crm"].oauth
    assert oauth is not None
    assert (oauth.grant, oauth.client_id, oauth.issuer) == (
        "identity_assertion",
        "crm-client",
        "http://127.0.0.1:2",
    )
    assert oauth.identity_provider == IdentityProvider(
        token_endpoint="http://127.0.0.1:3/token",
        client_id="host-at-idp",
        id_token="id-token-value",
    )
    assert "id-token-value" not in repr(loaded.config)
    assert "crm-secret-value" not in repr(loaded.config)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            IDENTITY_ASSERTION.replace('idp_client_id = "host-at-idp"\n', ""),
            "an identity provider needs idp_client_id as well",
        ),
        (
            IDENTITY_ASSERTION.split("idp_token_endpoint", maxsplit=1)[0],
            "needs client_id, client_secret, issuer and an assertion provider",
        ),
        ('[mcp_servers.s]\ncommand = "x"\nscopes = ["a"]', "applies to 'url' servers only"),
        ('[mcp_servers.s]\nurl = "http://h/"\n[mcp_servers.s.oauth]\nsecret = "x"', "unknown key"),
        ('mcp_oauth_credentials_store = "vault"', "must be one of auto, keyring, file"),
        (
            '[mcp_servers.s]\nurl = "http://h/"\n[mcpbind.oauth.s]\ngrant = "client_credentials"',
            "needs a client_id",
        ),
        (
            '[mcp_servers.s]\nurl = "http://h/"\noauth.client_id = "w"\n[mcpbind.oauth.s]\n'
            'grant = "jwt_bearer"\nassertion_file = "/dev/null"',
            "needs client_id, issuer and an assertion",
        ),
        (
            '[mcp_servers.s]\nurl = "http://h/"\n[mcpbind.oauth.s]\nassertion_env_var = "UNSET_X"',
            "environment variable 'UNSET_X' is not set",
        ),
        (
            '[mcp_servers.s]\nurl = "http://h/"\n[mcpbind.oauth.s]\ndpop = "yes"',
            "must be true or false",
        ),
    ],
)
def test_bad_oauth_settings_are_config_errors_naming_the_key(text: str, message: str) -> None:
    from mcpbind.impl import ConfigError

    environ = {"CRM_SECRET": "s", "ID_TOKEN": "t"}
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_toml(text, path="c.toml", environ=environ)


def test_login_logout_and_catalog_end_to_end_through_a_browser_less_redirect(
    tmp_path: pathlib.Path,
) -> None:
    """``mcpbind login`` prints the URL, receives the redirect on its loopback port, and
    stores the tokens; ``catalog`` then connects with them and says ``OAuth``; ``logout``
    forgets them. The "browser" is this test: it GETs the URL and follows the redirect."""
    trio.run(_login_logout_and_catalog, tmp_path)


async def _login_logout_and_catalog(tmp_path: pathlib.Path) -> None:
    async with serving(tmp_path / "server.log") as served:
        config = tmp_path / "config.toml"
        config.write_text(f'[mcp_servers.notes]\nurl = "{served.url}"\n')
        env = {**os.environ, "MCPBIND_HOME": str(tmp_path / "home")}
        env.pop("DISPLAY", None)
        args = ["login", "notes", "--config", str(config), "--no-browser", "--timeout", "60"]
        login = subprocess.Popen(
            [sys.executable, "-m", "mcpbind.cli", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert login.stdout is not None
        assert login.stdout.readline().startswith("Authorize `notes` by opening this URL")
        url = login.stdout.readline().strip()
        async with httpx2.AsyncClient() as browser:
            page = await browser.get(url, follow_redirects=True)  # to mcpbind's listener
        assert page.text.startswith("Authentication complete.")
        out, err = login.communicate(timeout=60)
        assert login.returncode == 0, err
        assert "Successfully logged in to MCP server 'notes'." in out
        credentials = json.loads((tmp_path / "home" / "credentials.json").read_text())
        [record] = credentials.values()
        secrets = [record["tokens"]["access_token"], record["tokens"]["refresh_token"]]
        shown = [out, err]

        listed = mcpbind("catalog", "--config", str(config), "--json", env=env)
        assert listed.returncode == 0, listed.stderr
        [server] = json.loads(listed.stdout)["servers"]
        assert (server["status"], server["auth"]) == ("connected", "oauth")
        shown += [listed.stdout, listed.stderr]
        table = mcpbind("catalog", "--config", str(config), env=env)
        assert "OAuth" in table.stdout
        shown += [table.stdout, table.stderr]
        called = mcpbind(
            "call", "mcp__notes__add", '{"text": "hi"}', "--config", str(config), env=env
        )
        assert called.returncode == 0, called.stderr
        assert "added: hi" in called.stdout
        shown += [called.stdout, called.stderr]

        out_ = mcpbind("logout", "notes", "--config", str(config), env=env)
        assert out_.stdout.strip() == "Removed OAuth credentials for 'notes'."
        again = mcpbind("logout", "notes", "--config", str(config), env=env)
        assert again.stdout.strip() == "No OAuth credentials stored for 'notes'."
        after = mcpbind("catalog", "--config", str(config), "--json", env=env)
        assert after.returncode == 1  # no login: the server is unavailable
        [server] = json.loads(after.stdout)["servers"]
        assert server["auth"] == "not_logged_in"
        assert "run `mcpbind login notes`" in server["error"]
        shown += [out_.stdout, again.stdout, after.stdout, after.stderr]
        # SPEC §11.15: tokens never appear in any output.
        for text in shown:
            for secret in secrets:
                assert secret not in text
        server_log = (tmp_path / "server.log").read_text()
        for secret in secrets:
            assert secret not in server_log


async def _browserless_login(config: pathlib.Path, env: dict[str, str], *extra: str) -> str:
    """``mcpbind login notes`` with this test as the browser; its stdout."""
    args = ["login", "notes", "--config", str(config), "--no-browser", "--timeout", "60"]
    login = subprocess.Popen(
        [sys.executable, "-m", "mcpbind.cli", *args, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert login.stdout is not None
    assert login.stdout.readline().startswith("Authorize `notes` by opening this URL")
    url = login.stdout.readline().strip()
    async with httpx2.AsyncClient() as browser:
        await browser.get(url, follow_redirects=True)  # to mcpbind's listener
    out, err = login.communicate(timeout=60)
    assert login.returncode == 0, err
    return out


def test_a_step_up_from_the_cli_says_which_login_grants_the_scope_and_that_login_does(
    tmp_path: pathlib.Path,
) -> None:
    """``mcpbind call`` refused for want of a scope prints one line naming the scope and
    the command (no traceback); ``mcpbind login notes --scope ...`` then asks for it, and
    the same call succeeds (SPEC §11.15)."""
    trio.run(_step_up_from_the_cli, tmp_path)


async def _step_up_from_the_cli(tmp_path: pathlib.Path) -> None:
    async with serving(tmp_path / "server.log") as served:
        config = tmp_path / "config.toml"
        config.write_text(f'[mcp_servers.notes]\nurl = "{served.url}"\n')
        env = {**os.environ, "MCPBIND_HOME": str(tmp_path / "home")}
        env.pop("DISPLAY", None)
        await _browserless_login(config, env)
        call = ["call", "mcp__notes__publish", '{"text": "hi"}', "--config", str(config)]
        refused = mcpbind(*call, env=env)
        assert refused.returncode == 1
        assert refused.stdout == f"cli-1: failed\n{STEP_UP}\n"
        assert "Traceback" not in refused.stderr
        command = STEP_UP.rsplit("run `", 1)[1].rstrip("`")
        assert command == 'mcpbind login notes --scope "notes:read notes:write"'
        await _browserless_login(config, env, "--scope", "notes:read notes:write")
        scopes = [e["scopes"] for e in served.events() if e["event"] == "authorize"]
        assert scopes[-1] == ["notes:read", "notes:write"]
        published = mcpbind(*call, env=env)
        assert published.returncode == 0, published.stderr
        assert "published: hi" in published.stdout


def test_login_refuses_a_server_it_cannot_log_in_to(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[mcp_servers.local]\ncommand = "true"\n')
    done = mcpbind("login", "local", "--config", str(config))
    assert done.returncode == 2
    assert "only supported for streamable HTTP servers" in done.stderr
    missing = mcpbind("login", "nope", "--config", str(config))
    assert missing.returncode == 2
    assert "No MCP server named 'nope' found." in missing.stderr


@pytest.mark.trio
async def test_tokens_never_reach_logs_or_errors(
    short_lived: Served, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "credentials.json"
    await whoami(host_config(short_lived, FileTokenStore(path), approve))
    await revoke_refresh(short_lived.port)
    await trio.sleep(1.5)
    record = await FileTokenStore(path).load(store_key("notes", short_lived.url))
    assert record is not None
    assert record.tokens is not None
    secrets = [record.tokens["access_token"], record.tokens["refresh_token"]]
    with pytest.raises(ServerStartupError) as caught:
        async with Host.open(host_config(short_lived, FileTokenStore(path))):
            pass
    text = caplog.text + str(caught.value) + repr(caught.value.__cause__) + repr(record)
    for secret in secrets:
        assert secret not in text


@pytest.mark.trio
async def test_a_server_that_keeps_refusing_is_not_authorized_forever() -> None:
    """SPEC §11.15: after MAX_AUTHORIZATIONS refusals with no answer in between, the
    connection fails with AuthorizationFailed instead of authorizing again (the suite's
    auth/scope-retry-limit checks the same against its own server)."""
    from mcpbind.impl.wire.oauth import MAX_AUTHORIZATIONS, LazyAuth
    from mcpbind.impl.wire.oauth_storage import Storage

    storage = Storage(MemoryTokenStore(), "s", "http://s/mcp")
    auth = LazyAuth("s", "http://s/mcp", _AlwaysRetry, storage)
    request = httpx2.Request("POST", "http://s/mcp")
    refused = httpx2.Response(401, request=request)

    async def one_request() -> None:
        flow = auth.async_auth_flow(request)
        await flow.__anext__()
        try:
            await flow.asend(refused)
        except StopAsyncIteration:
            pass
        finally:
            await flow.aclose()

    for _ in range(MAX_AUTHORIZATIONS):
        await one_request()
    with pytest.raises(AuthorizationFailed, match="refused 4 times"):
        await one_request()


@pytest.mark.parametrize(
    ("token_type", "presented", "bound"),
    [
        ("DPoP", "at-1", True),
        ("dpop", "at-1", True),  # RFC 9449 §5: the token type is case-insensitive
        ("DPoP", "at-2", False),  # not the stored token
        ("Bearer", "at-1", False),  # issued unbound while a key was kept
    ],
)
@pytest.mark.trio
async def test_only_the_stored_dpop_token_is_bound_to_the_stored_key(
    token_type: str, presented: str, bound: bool
) -> None:
    """SPEC §11.15 (RFC 9449): a request is signed with the DPoP key only when it presents
    the token stored as a DPoP one beside that key (issue 33: oauth_storage.py's ``and``
    before the token's comparison made ``or`` bound every token once a key was kept)."""
    from mcpbind.impl.wire.oauth_storage import Storage

    store = MemoryTokenStore()
    tokens = {"access_token": "at-1", "token_type": token_type}
    record = Credentials("s", "http://s/mcp", tokens=tokens, dpop_key={"kty": "EC"})
    await store.save(store_key("s", "http://s/mcp"), record)
    storage = Storage(store, "s", "http://s/mcp")
    await storage.current()  # loaded as a connection's first request loads it
    assert storage.bound(presented) is bound


class _AlwaysRetry:
    """A provider that sends the request once and gives up (stands in for the SDK's)."""

    async def async_auth_flow(self, request: Any) -> Any:
        yield request


def test_the_keyring_store_without_the_package_says_how_to_install_it(monkeypatch) -> None:
    from mcpbind.impl.config.credentials import AutoTokenStore, open_store

    monkeypatch.setitem(sys.modules, "keyring", None)  # not installed
    with pytest.raises(CredentialsError, match=r"pip install 'mcpbind\[keyring\]'"):
        trio.run(open_store("keyring").load, "k")
    assert AutoTokenStore().name == "file"  # auto: the file when no keyring is usable


# --- DPoP (RFC 9449), the JWT-bearer grant, and the credential rules (issue 31) --------


@pytest.fixture
async def dpop_served(tmp_path: pathlib.Path) -> Any:
    async with serving(tmp_path / "server.log", dpop="on") as found:
        yield found


@pytest.fixture
async def dpop_nonces(tmp_path: pathlib.Path) -> Any:
    async with serving(tmp_path / "server.log", dpop="nonce") as found:
        yield found


def proofs(served: Served) -> list[tuple[str, str, bool]]:
    """``(where, outcome, nonce)`` of each DPoP proof the server checked."""
    return [(e["where"], e["outcome"], e["nonce"]) for e in served.events() if e["event"] == "dpop"]


async def stored(path: pathlib.Path, served: Served) -> Credentials:
    record = await FileTokenStore(path).load(store_key("notes", served.url))
    assert record is not None
    assert record.tokens is not None
    return record


@pytest.mark.trio
async def test_dpop_binds_the_token_to_a_stored_key_and_proves_it_on_every_request(
    dpop_served: Served, tmp_path: pathlib.Path
) -> None:
    """The token request carries a proof, the token comes back bound (``DPoP``), every
    request to the server carries ``Authorization: DPoP`` and a fresh proof the server
    checked (signature with the header's jwk, typ, htm, htu, iat, ath, a jti never seen);
    the key is stored with the token, so the next host proves with the same key."""
    path = tmp_path / "credentials.json"
    oauth = OAuthConfig(dpop=True)
    await whoami(host_config(dpop_served, FileTokenStore(path), approve, oauth=oauth))
    record = await stored(path, dpop_served)
    assert record.tokens is not None
    assert record.tokens["token_type"] == "DPoP"
    assert record.dpop_key is not None
    assert record.dpop_key["alg"] == "ES256"
    assert "dpop_key" not in repr(record)
    assert "'d'" not in repr(record)
    await whoami(host_config(dpop_served, FileTokenStore(path), oauth=oauth))  # no person
    checked = proofs(dpop_served)
    assert checked[0] == ("token", "ok", False)
    assert {where for where, _, _ in checked} == {"token", "mcp"}
    assert all(outcome == "ok" for _, outcome, _ in checked), checked
    assert len([p for p in checked if p[0] == "mcp"]) >= 4  # two hosts, a session each
    assert kinds(dpop_served).count("authorize") == 1
    mcp = [e for e in dpop_served.events() if e["event"] == "mcp"]
    assert all(e["outcome"] == "ok" for e in mcp[1:]), mcp  # the first: no token yet


@pytest.mark.trio
async def test_dpop_nonce_challenges_of_both_servers_are_answered_by_one_retry_each(
    dpop_nonces: Served,
) -> None:
    """(With ``dpop_required``, which a server that offers DPoP satisfies.)"""
    required = OAuthConfig(dpop_required=True)
    await whoami(host_config(dpop_nonces, MemoryTokenStore(), approve, oauth=required))
    checked = proofs(dpop_nonces)
    token = [p for p in checked if p[0] == "token"]
    assert token == [("token", "use_dpop_nonce", False), ("token", "ok", True)]
    mcp = [p for p in checked if p[0] == "mcp"]
    assert mcp[0] == ("mcp", "use_dpop_nonce", False)
    assert len(mcp) > 1
    assert all(p == ("mcp", "ok", True) for p in mcp[1:]), mcp  # the nonce is kept


@pytest.mark.trio
async def test_a_refreshed_dpop_token_stays_bound_to_the_stored_key(
    tmp_path: pathlib.Path,
) -> None:
    """The server refuses to refresh a bound refresh token with a proof of another key
    (or none): the second host's refresh succeeds only with the key stored at login."""
    path = tmp_path / "credentials.json"
    oauth = OAuthConfig(dpop=True)
    async with serving(tmp_path / "server.log", token_seconds=1, dpop="on") as served:
        await whoami(host_config(served, FileTokenStore(path), approve, oauth=oauth))
        first = await stored(path, served)
        await trio.sleep(1.5)
        await whoami(host_config(served, FileTokenStore(path), oauth=oauth))
        second = await stored(path, served)
        assert kinds(served).count("authorize") == 1
        assert [e["outcome"] for e in served.events() if e["event"] == "refresh"] == ["ok"]
    assert second.dpop_key == first.dpop_key
    assert second.tokens is not None
    assert second.tokens["token_type"] == "DPoP"


@pytest.mark.trio
async def test_dpop_required_from_a_server_that_does_not_offer_it_fails_before_any_token_request(
    served: Served,
) -> None:
    oauth = OAuthConfig(dpop_required=True)
    with pytest.raises(ServerStartupError) as caught:
        async with Host.open(host_config(served, MemoryTokenStore(), approve, oauth=oauth)):
            pass
    assert isinstance(caught.value.__cause__, AuthorizationFailed)
    assert f"failed: http://127.0.0.1:{served.port} does not offer DPoP" in str(caught.value)
    assert token_requests(served) == []


@pytest.mark.trio
async def test_only_a_form_post_is_a_token_request_not_a_registration_that_reads_like_one(
    served: Served,
) -> None:
    """A token request is a form ``POST`` with ``grant_type``. The registration is a JSON
    ``POST``: even when its redirect URI's query reads ``&grant_type=`` as a form would, it
    is not a token request, so ``dpop_required`` with no DPoP offered lets it through and
    stops the flow at the token request, after the client registered and the person
    authorized."""
    callback = "http://127.0.0.1:9/callback?from=mcpbind&grant_type=code"
    oauth = OAuthConfig(dpop_required=True, callback_url=callback)
    with pytest.raises(ServerStartupError) as caught:
        async with Host.open(host_config(served, MemoryTokenStore(), approve, oauth=oauth)):
            pass
    assert isinstance(caught.value.__cause__, AuthorizationFailed)
    assert "does not offer DPoP" in str(caught.value)
    assert kinds(served)[:2] == ["register", "authorize"]
    assert token_requests(served) == []


@pytest.mark.trio
async def test_dpop_wanted_from_a_server_that_does_not_offer_it_uses_bearer_tokens(
    served: Served,
) -> None:
    await whoami(host_config(served, MemoryTokenStore(), approve, oauth=OAuthConfig(dpop=True)))
    assert proofs(served) == []


def workload_key(tmp_path: pathlib.Path) -> tuple[Any, pathlib.Path]:
    """A workload identity issuer's key pair: the private key, and the public key's PEM
    file the test server trusts."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    private = ec.generate_private_key(ec.SECP256R1())
    public = tmp_path / "workload.pem"
    public.write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


def workload_jwt(private: Any, audience: str, *, lifetime: int = 300) -> str:
    import time

    import jwt

    now = int(time.time())
    claims = {"iss": "https://ci.example", "sub": "workload", "aud": audience}
    return jwt.encode({**claims, "iat": now, "exp": now + lifetime}, private, algorithm="ES256")


@pytest.mark.trio
async def test_a_workload_trades_its_jwt_for_a_token_with_the_jwt_bearer_grant(
    tmp_path: pathlib.Path,
) -> None:
    """``grant = "jwt_bearer"`` from the config file: the assertion is read from
    ``assertion_file`` and sent, with the public client's id and the resource, to the
    configured issuer; no person, no registration, no authorization request."""
    private, public = workload_key(tmp_path)
    async with serving(tmp_path / "server.log", workload_key=public) as served:
        issuer = f"http://127.0.0.1:{served.port}"
        assertion = tmp_path / "token.jwt"
        assertion.write_text(workload_jwt(private, issuer) + "\n")
        text = f"""
        [mcp_servers.notes]
        url = "{served.url}"
        required = true
        [mcp_servers.notes.oauth]
        client_id = "workload-client"
        [mcpbind.oauth.notes]
        grant = "jwt_bearer"
        issuer = "{issuer}"
        assertion_file = "{assertion}"
        """
        config = attrs.evolve(
            parse_toml(text, path="c.toml").config, oauth_store=MemoryTokenStore()
        )
        output = await whoami(config)
        assert "workload-client" in output
        assert kinds(served) == ["token"]
        [token] = [e for e in served.events() if e["event"] == "token"]
        assert token["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
        assert token["resource"] == served.url


@pytest.mark.trio
async def test_a_refused_or_unreadable_jwt_bearer_assertion_fails_once_without_another_grant(
    tmp_path: pathlib.Path,
) -> None:
    private, public = workload_key(tmp_path)
    async with serving(tmp_path / "server.log", workload_key=public) as served:
        issuer = f"http://127.0.0.1:{served.port}"
        expired = AssertionValue(workload_jwt(private, issuer, lifetime=-60))
        oauth = OAuthConfig(
            grant="jwt_bearer", client_id="workload-client", issuer=issuer, assertion=expired
        )
        with pytest.raises(ServerStartupError) as caught:
            async with Host.open(host_config(served, MemoryTokenStore(), oauth=oauth)):
                pass
        assert isinstance(caught.value.__cause__, AuthorizationFailed)
        assert "invalid_grant" in str(caught.value)
        assert [e["grant_type"] for e in token_requests(served)] == [
            "urn:ietf:params:oauth:grant-type:jwt-bearer"
        ]
        missing = attrs.evolve(oauth, assertion=AssertionFile(str(tmp_path / "absent.jwt")))
        with pytest.raises(ServerStartupError) as caught:
            async with Host.open(host_config(served, MemoryTokenStore(), oauth=missing)):
                pass
        absent = tmp_path / "absent.jwt"
        assert f"cannot read the workload's assertion {absent}: No such file" in str(caught.value)
        assert len(token_requests(served)) == 1  # nothing sent without an assertion


@pytest.mark.trio
async def test_a_jwt_bearer_assertion_goes_to_the_configured_issuer_alone(
    tmp_path: pathlib.Path,
) -> None:
    """A server whose authorization server is not the configured ``issuer`` gets no
    grant: the workload's JWT would be given to a stranger. The login fails once, typed,
    naming both; no token request is sent (issue 33: the check's ``or`` made ``and``,
    which sent it, survived)."""
    private, public = workload_key(tmp_path)
    async with serving(tmp_path / "server.log", workload_key=public) as served:
        actual = f"http://127.0.0.1:{served.port}"
        elsewhere = "https://issuer.example"
        oauth = OAuthConfig(
            grant="jwt_bearer",
            client_id="workload-client",
            issuer=elsewhere,
            assertion=AssertionValue(workload_jwt(private, actual)),
        )
        with pytest.raises(ServerStartupError) as caught:
            async with Host.open(host_config(served, MemoryTokenStore(), oauth=oauth)):
                pass
        assert isinstance(caught.value.__cause__, AuthorizationFailed)
        said = str(caught.value)
        assert f"the workload's assertion goes to {elsewhere} alone; the server led to" in said
        assert actual in said.split("the server led to", 1)[1]
        assert token_requests(served) == []


@pytest.mark.trio
async def test_an_identity_assertion_grant_the_server_does_not_offer_fails_with_its_error(
    served: Served,
) -> None:
    """SEP-990 against an authorization server that refuses the grant: the login fails
    once, typed, with the server's error code; the provider was built from the
    configured client, secret, issuer and assertion (pinned: a provider that cannot be
    built says so instead, mutation testing's ``oauth_providers.py`` survivor)."""
    issuer = f"http://127.0.0.1:{served.port}"
    oauth = OAuthConfig(
        grant="identity_assertion",
        client_id="crm-client",
        client_secret="crm-secret-value",
        issuer=issuer,
        assertion=AssertionValue("an.id-jag.assertion"),
    )
    with pytest.raises(ServerStartupError) as caught:
        async with Host.open(host_config(served, MemoryTokenStore(), oauth=oauth)):
            pass
    assert isinstance(caught.value.__cause__, AuthorizationFailed)
    assert "unsupported_grant_type" in str(caught.value), str(caught.value)
    assert "crm-secret-value" not in str(caught.value)


@pytest.mark.trio
async def test_a_provider_that_cannot_be_built_fails_the_login_typed_naming_why(
    served: Served,
) -> None:
    """The SDK refuses a ``client_metadata_url`` that is not HTTPS when the provider is
    made, on the server's first 401: that is the server's authorization failing
    (:class:`AuthorizationFailed`, the SDK's words after the exception's name), not an
    exception out of the host."""
    oauth = OAuthConfig(client_metadata_url="http://127.0.0.1:9/client.json")
    with pytest.raises(ServerStartupError) as caught:
        async with Host.open(host_config(served, MemoryTokenStore(), approve, oauth=oauth)):
            pass
    assert isinstance(caught.value.__cause__, AuthorizationFailed)
    assert "ValueError: client_metadata_url must be a valid HTTPS URL" in str(caught.value)
    assert "authorize" not in kinds(served)


@pytest.mark.trio
async def test_a_server_that_asks_for_no_authorization_never_builds_the_oauth_provider(
    tmp_path: pathlib.Path,
) -> None:
    """OAuth is lazy: with nothing stored, requests go out untouched until the server
    refuses one, so a server that never does is reached even with an OAuth setting the
    SDK's provider would refuse (a ``client_metadata_url`` that is not HTTPS)."""
    oauth = OAuthConfig(client_metadata_url="http://127.0.0.1:9/client.json")
    async with http_server(tmp_path, listening=True) as port:
        server = ServerConfig(target=f"http://127.0.0.1:{port}/mcp", required=True, oauth=oauth)
        config = HostConfig(servers={"s": server}, oauth_store=MemoryTokenStore())
        async with Host.open(config) as host:
            result = await host.call(host.sample(), "c1", "mcp__s__echo", {"text": "hi"})
    assert result.status == "ok", result.output


@pytest.mark.trio
async def test_a_rotated_refresh_token_is_stored_and_every_token_request_names_the_resource(
    short_lived: Served, tmp_path: pathlib.Path
) -> None:
    """The server rotates refresh tokens (the old one stops working at once): the second
    refresh works only if the first one's new refresh token was stored. Every token
    request, the refreshes included, carries the RFC 8707 ``resource``."""
    path = tmp_path / "credentials.json"
    await whoami(host_config(short_lived, FileTokenStore(path), approve))
    refreshes = []
    for _ in range(2):
        before = await stored(path, short_lived)
        await trio.sleep(1.5)
        await whoami(host_config(short_lived, FileTokenStore(path)))
        after = await stored(path, short_lived)
        assert before.tokens is not None
        assert after.tokens is not None
        refreshes.append((before.tokens["refresh_token"], after.tokens["refresh_token"]))
    assert all(old != new for old, new in refreshes)
    assert [e["outcome"] for e in short_lived.events() if e["event"] == "refresh"] == ["ok", "ok"]
    assert kinds(short_lived).count("authorize") == 1
    requests = token_requests(short_lived)
    assert [e["grant_type"] for e in requests] == [
        "authorization_code",
        "refresh_token",
        "refresh_token",
    ]
    assert all(e["resource"] == short_lived.url for e in requests), requests


CALLBACK = "http://127.0.0.1:9/callback"  # never reached: approve() reads the redirect


async def registered(served: Served, method: str) -> tuple[str, str]:
    """A client registered beforehand (as an operator would) for ``method``: its id and
    secret, for ``oauth.client_id`` and ``oauth.client_secret``."""
    metadata = {
        "redirect_uris": [CALLBACK],
        "token_endpoint_auth_method": method,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "scope": "notes:read",
    }
    async with httpx2.AsyncClient() as http:
        answer = await http.post(f"http://127.0.0.1:{served.port}/register", json=metadata)
    assert answer.status_code == 201, answer.text
    client = answer.json()
    return client["client_id"], client["client_secret"]


@pytest.mark.trio
@pytest.mark.parametrize(
    ("method", "carried"), [("client_secret_post", "post"), ("client_secret_basic", "basic")]
)
async def test_a_preset_clients_secret_goes_where_its_token_endpoint_auth_method_says(
    served: Served, method: TokenAuthMethod, carried: str
) -> None:
    """Issue 33: the configured method of a client with an id and a secret was replaced
    by the default (``client_secret_basic``) when the ``or`` choosing it became ``and``;
    the server, which knows the client's method, then refused its secret."""
    client_id, secret = await registered(served, method)
    oauth = OAuthConfig(
        client_id=client_id,
        client_secret=secret,
        token_endpoint_auth_method=method,
        callback_url=CALLBACK,
    )
    output = await whoami(host_config(served, MemoryTokenStore(), approve, oauth=oauth))
    assert client_id in output
    assert [(e["grant_type"], e["client_auth"]) for e in token_requests(served)] == [
        ("authorization_code", carried)
    ]
    assert [e["event"] for e in served.events()].count("register") == 1  # ours, not the host's


@pytest.mark.trio
async def test_credentials_of_one_authorization_server_are_never_offered_to_another(
    tmp_path: pathlib.Path,
) -> None:
    """A stored record (client registration, tokens) from authorization server A for a
    server that now names authorization server B: the client registers anew at B, and B
    never sees A's client id or any refresh token (SEP-2352: the registration is bound to
    the issuer it was made at)."""
    path = tmp_path / "credentials.json"
    async with (
        serving(tmp_path / "a.log") as a,
        serving(tmp_path / "b.log") as b,
    ):
        await whoami(host_config(a, FileTokenStore(path), approve))
        record = await stored(path, a)
        assert record.client is not None
        a_client = record.client["client_id"]
        assert record.client["issuer"].rstrip("/") == f"http://127.0.0.1:{a.port}"
        moved = attrs.evolve(record, url=b.url)  # B's URL: its metadata names B alone
        await FileTokenStore(path).save(store_key("notes", b.url), moved)
        await whoami(host_config(b, FileTokenStore(path), approve))
        seen_by_b = [e for e in b.events() if e["event"] != "mcp"]
        assert kinds(b)[:3] == ["register", "authorize", "token"]
        assert all(e["client_id"] != a_client for e in seen_by_b)
        assert "refresh" not in kinds(b)
        assert [e["grant_type"] for e in token_requests(b)] == ["authorization_code"]


@pytest.mark.trio
async def test_the_test_server_refuses_proofs_that_are_wrong_so_passing_ones_mean_something(
    dpop_served: Served,
) -> None:
    """The proofs the DPoP tests pass are checked: a proof for another URL, one signed by
    a key other than its header's, one whose ``jti`` was seen already, and one whose
    ``ath`` is another token's are refused."""
    from mcpbind.impl.wire.dpop import new_key, proof

    token_url = f"http://127.0.0.1:{dpop_served.port}/token"
    key, other = new_key("ES256"), new_key("ES256")
    forged = proof(key, "POST", token_url)
    head, _, rest = forged.partition(".")
    signed_by_other = proof(other, "POST", token_url).split(".")
    replayed = proof(key, "POST", token_url)
    form = {"grant_type": "refresh_token", "refresh_token": "none", "client_id": "none"}
    outcomes = []
    async with httpx2.AsyncClient() as http:
        for sent in (
            proof(key, "POST", f"http://127.0.0.1:{dpop_served.port}/elsewhere"),
            f"{head}.{rest.partition('.')[0]}.{signed_by_other[2]}",
            replayed,
            replayed,
        ):
            answer = await http.post(token_url, data=form, headers={"DPoP": sent})
            outcomes.append((answer.status_code, answer.json()["error"]))
        wrong_ath = proof(key, "POST", dpop_served.url, access_token="another-token")
        headers = {"Authorization": "DPoP some-token", "DPoP": wrong_ath}
        answer = await http.post(dpop_served.url, json={}, headers=headers)
        assert answer.status_code == 401
    assert outcomes[0] == (400, "invalid_dpop_proof")
    assert outcomes[1] == (400, "invalid_dpop_proof")
    assert outcomes[2][1] != "invalid_dpop_proof"  # well formed: refused for its grant
    assert outcomes[3] == (400, "invalid_dpop_proof")
    assert [outcome for _, outcome, _ in proofs(dpop_served)] == [
        "htm or htu wrong",
        "bad signature",
        "ok",
        "jti missing or seen before",
        "ath wrong",
    ]


@pytest.mark.parametrize(
    ("host", "server", "redirect"),
    [
        ({}, {}, "http://127.0.0.1/callback"),
        ({"callback_port": 8765}, {}, "http://127.0.0.1:8765/callback"),
        ({"callback_port": 8765}, {"callback_port": 9000}, "http://127.0.0.1:9000/callback"),
        ({}, {"callback_url": "https://app.example/cb"}, "https://app.example/cb"),
        ({"callback_url": "https://host.example/cb"}, {}, "https://host.example/cb"),
        (
            {"callback_url": "https://host.example/cb"},
            {"callback_url": "https://app.example/cb"},
            "https://app.example/cb",
        ),
        (
            {"callback_port": 8765},
            {"callback_url": "https://app.example/cb"},
            "https://app.example/cb",
        ),
    ],
)
def test_the_redirect_uri_is_the_servers_callback_then_the_hosts_then_the_loopback(
    host, server, redirect
):
    """Codex's keys: a server's ``oauth.callback_url`` wins over the host's
    ``mcp_oauth_callback_url``, either over a callback port, a server's port over the
    host's (issue 33: the ``or`` of the two URLs made ``and`` survived)."""
    assert Authorizer(**host).redirect_uri_for(OAuthConfig(**server)) == redirect


@pytest.mark.trio
async def test_a_step_up_the_authorization_server_refuses_fails_that_call_alone(
    served: Served,
) -> None:
    """SPEC §11.15: with a person to ask, a step-up is tried; when the authorization
    server refuses the wider scope (the client was registered for ``notes:read`` only),
    that call fails with the refusal, never runs, and the session and its tokens live on."""
    store = MemoryTokenStore()
    async with Host.open(host_config(served, store, approve)) as host:
        step = host.sample()
        refused = await host.call(step, "c1", "mcp__notes__publish", {"text": "x"})
        added = await host.call(step, "c2", "mcp__notes__add", {"text": "y"})
        [status] = host.server_status()
    why = (
        "the authorization server answered invalid_scope: "
        "Client was not registered with scope notes:write"
    )
    assert (refused.status, refused.output) == ("failed", str(AuthorizationFailed("notes", why)))
    assert added.status == "ok"
    assert "added: y" in added.output
    assert status.connected
    assert kinds(served) == ["register", "authorize", "token", "authorize"]  # one step-up tried
    outcomes = [e["outcome"] for e in served.events() if e["event"] == "mcp"]
    assert outcomes.count("insufficient_scope") == 2  # refused, then sent once more as it was
    assert (await store.load(store_key("notes", served.url))).tokens is not None
