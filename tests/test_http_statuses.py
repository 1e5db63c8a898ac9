"""What a streamable-HTTP server's failed answer at connect becomes (SPEC §11.2,
§11.15): each status, with or without a text of its own, as the exact startup error a
required server fails with, and the type of its cause. Against the tests' HTTP server
(``testservers/stdio_server.py`` over HTTP on 127.0.0.1) told to answer every request
with the row's status."""

from __future__ import annotations

from typing import Any

import pytest
from testservers.processes import http_server

from mcpbind.impl import CredentialsRequired, Host, HostConfig, ServerConfig, ServerStartupError
from mcpbind.impl.errors import HttpStatusError
from mcpbind.impl.wire.http import BODY_BYTES
from mcpbind.model import texts

SCOPE_CHALLENGE = 'Bearer error="insufficient_scope", scope="notes:write"'


def no_oauth(status: str) -> str:
    return texts.CREDENTIALS_REQUIRED_NO_OAUTH.format(server="s", status=status)


ROWS: list[tuple[str, dict[str, str], Any, type[Exception]]] = [
    # status, the server's settings, why (a function of the URL), the cause's type
    ("404", {}, lambda url: texts.HTTP_NOT_FOUND.format(url=url), HttpStatusError),
    ("401", {}, lambda url: no_oauth("401 Unauthorized"), CredentialsRequired),
    (
        "403",
        {"MCPBIND_TEST_HTTP_CHALLENGE": SCOPE_CHALLENGE},
        lambda url: no_oauth("403 Forbidden"),
        CredentialsRequired,
    ),
    (
        "403",
        {},
        lambda url: texts.HTTP_STATUS_TEXT.format(status="403 Forbidden", text="no entry"),
        HttpStatusError,
    ),
    (
        "500",
        {},
        lambda url: texts.HTTP_STATUS_TEXT.format(
            status="500 Internal Server Error", text="no entry"
        ),
        HttpStatusError,
    ),
    (  # sent without a length: read, and cut to 199 characters and an ellipsis
        "503",
        {"MCPBIND_TEST_HTTP_BODY": "x" * (BODY_BYTES + 1)},
        lambda url: texts.HTTP_STATUS_TEXT.format(
            status="503 Service Unavailable", text="x" * 199 + "\u2026"
        ),
        HttpStatusError,
    ),
]


@pytest.mark.parametrize(
    ("status", "env", "why", "cause"),
    ROWS,
    ids=["404", "401", "403-insufficient-scope", "403", "500", "503-long-text"],
)
async def test_a_failed_answer_at_connect_fails_the_start_with_the_rows_exact_text(
    tmp_path, status, env, why, cause
):
    async with http_server(
        tmp_path, listening=True, MCPBIND_TEST_HTTP_STATUS=status, **env
    ) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        config = ServerConfig(target=url, required=True)
        with pytest.raises(ServerStartupError) as raised:
            async with Host.open(HostConfig(servers={"s": config})):
                pass
    assert str(raised.value) == texts.STARTUP_FAILED.format(server="s", why=why(url))
    assert type(raised.value.__cause__) is cause
