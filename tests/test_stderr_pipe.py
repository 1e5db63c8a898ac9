"""A stdio server's stderr and its stray stdout lines (``impl/wire/stderr.py``), through
a real OS pipe and the SDK's own logger: every line reaches the callback whole, the last
one too when the server ends it without a newline; a log record about anything else is
left to the log. Mutation testing (issue 33) found these statements run by no sampled
test."""

from __future__ import annotations

import logging

import pytest

from mcpbind.impl.wire.stderr import StderrPipe, stdout_lines_to


@pytest.mark.parametrize(
    ("written", "lines"),
    [
        ("one\ntwo\n", ["one", "two"]),
        ("one\ntwo", ["one", "two"]),  # the last line, unended, still comes
        ("crlf\r\n", ["crlf"]),
        ("", []),
        ("\n", [""]),
        ("caf\udce9\n", ["caf\ufffd"]),  # not UTF-8: replaced, never an error
    ],
)
def test_each_line_a_server_writes_to_stderr_reaches_the_callback(written, lines):
    seen: list[str] = []
    pipe = StderrPipe(seen.append)
    pipe.writer.buffer.write(written.encode("utf-8", "surrogateescape"))
    pipe.spawned()  # as the child would, the write end closes: the stream ends
    pipe.finish()
    assert seen == lines


def test_a_log_record_of_the_sdk_about_anything_else_stays_in_the_log(caplog):
    seen: list[str] = []
    logger = logging.getLogger("mcp.client.stdio")
    with caplog.at_level(logging.WARNING, logger="mcp.client.stdio"), stdout_lines_to(seen.append):
        logger.warning("the server went away")
        error = ValueError("not json at all")
        logger.error("Failed to parse JSONRPC message", exc_info=(ValueError, error, None))
    assert [r.getMessage() for r in caplog.records] == ["the server went away"]
    assert seen == ["(stdout, not JSON-RPC, skipped) not json at all"]


def test_outside_a_servers_session_the_sdks_log_is_left_alone(caplog):
    logger = logging.getLogger("mcp.client.stdio")
    with caplog.at_level(logging.WARNING, logger="mcp.client.stdio"):
        logger.warning("Failed to parse JSONRPC message from server")
    assert [r.getMessage() for r in caplog.records] == [
        "Failed to parse JSONRPC message from server"
    ]
