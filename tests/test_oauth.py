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
import stat
import subprocess
import sys
from typing import Any

import httpx2
import pytest
import trio
from cli_runner import mcpbind
from testservers.oauth_server import Served, revoke_refresh, serving

from mcpbind.impl import (
    AuthorizationFailed,
    AuthorizationRequest,
    AuthorizationResponse,
    CredentialsError,
    FileTokenStore,
    Host,
    HostConfig,
    LoginRequired,
    MemoryTokenStore,
    OAuthConfig,
    ServerConfig,
    ServerStartupError,
    response_from_redirect,
)
from mcpbind.impl.config.credentials import Credentials, store_key
from mcpbind.impl.config.host import parse_toml
from mcpbind.impl.wire.oauth import Authorizer


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
    return [e["event"] for e in served.events() if e["event"] != "mcp"]


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


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[mcp_servers.s]\ncommand = "x"\nscopes = ["a"]', "applies to 'url' servers only"),
        ('[mcp_servers.s]\nurl = "http://h/"\n[mcp_servers.s.oauth]\nsecret = "x"', "unknown key"),
        ('mcp_oauth_credentials_store = "vault"', "must be one of auto, keyring, file"),
        (
            '[mcp_servers.s]\nurl = "http://h/"\n[mcpbind.oauth.s]\ngrant = "client_credentials"',
            "needs a client_id",
        ),
    ],
)
def test_bad_oauth_settings_are_config_errors_naming_the_key(text: str, message: str) -> None:
    from mcpbind.impl import ConfigError

    with pytest.raises(ConfigError, match=message):
        parse_toml(text, path="c.toml")


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
