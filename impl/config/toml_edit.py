"""Saving an "allow always" answer into the config file it came from (SPEC §11.8).

The edit sets ``[mcp_servers.<server>.tools.<tool>] approval_mode = "approve"`` with
``tomlkit``, which keeps the rest of the file as it was: comments, order, quoting,
blank lines. Before anything is written, the edited text is read back with ``tomllib``
and must equal the old data plus that one key; a layout the structured edit gets wrong
(servers defined with dotted keys) falls back to appending the table at the end, which
is checked the same way. The file is replaced atomically, keeping its permissions.
"""

from __future__ import annotations

import copy
import json
import os
import pathlib
import re
import tempfile
import tomllib
from typing import Any

import tomlkit
from tomlkit.items import InlineTable, Table

from ..errors import LocalError

__all__ = ["ApprovalNotSaved", "approve_always_text", "save_approve_always"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class ApprovalNotSaved(LocalError):
    """Why the file was left unchanged (the caller reports it; the session keeps going)."""


def _key(name: str) -> str:
    # A TOML basic string accepts JSON's escapes when non-ASCII is written as is.
    return name if _BARE_KEY.fullmatch(name) else json.dumps(name, ensure_ascii=False)


def _expected(data: dict[str, Any], server: str, tool: str) -> dict[str, Any]:
    expected = copy.deepcopy(data)
    servers = expected.get("mcp_servers")
    if not isinstance(servers, dict) or not isinstance(servers.get(server), dict):
        raise ApprovalNotSaved(f"the file no longer defines [mcp_servers.{_key(server)}]")
    tools = servers[server].setdefault("tools", {})
    if not isinstance(tools, dict) or not isinstance(tools.setdefault(tool, {}), dict):
        raise ApprovalNotSaved(f"its tools table for {tool!r} is not a table")
    tools[tool]["approval_mode"] = "approve"
    return expected


def _structured(text: str, server: str, tool: str) -> str:
    document = tomlkit.parse(text)
    entry: Any = document["mcp_servers"][server]  # present: checked by _expected
    if "tools" not in entry:
        proper = isinstance(entry, Table)
        entry["tools"] = tomlkit.table(is_super_table=True) if proper else tomlkit.inline_table()
    tools = entry["tools"]
    if tool in tools:
        tools[tool]["approval_mode"] = "approve"
    elif isinstance(tools, InlineTable):
        tools[tool] = tomlkit.inline_table()
        tools[tool]["approval_mode"] = "approve"
    else:
        table = tomlkit.table()
        table.add("approval_mode", "approve")
        table.add(tomlkit.nl())  # a blank line before whatever table follows
        tools[tool] = table
    return tomlkit.dumps(document)


def _appended(text: str, server: str, tool: str) -> str:
    separator = "" if not text or text.endswith("\n") else "\n"
    header = f"[mcp_servers.{_key(server)}.tools.{_key(tool)}]"
    return f'{text}{separator}\n{header}\napproval_mode = "approve"\n'


def approve_always_text(text: str, server: str, tool: str) -> str:
    """``text`` with the tool's ``approval_mode = "approve"``; nothing else changes.

    Raises :class:`ApprovalNotSaved` when no edit can be shown to do exactly that."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ApprovalNotSaved(f"it is no longer valid TOML ({error})") from None
    expected = _expected(data, server, tool)
    for edit in (_structured, _appended):
        try:
            candidate = edit(text, server, tool)
            if tomllib.loads(candidate) == expected:
                return candidate
        except Exception:  # a failed strategy just tries the next one
            continue
    raise ApprovalNotSaved("its layout cannot be edited without changing other settings")


def save_approve_always(path: str, server: str, tool: str) -> None:
    """Rewrite the file at ``path`` in place (blocking: run it in a thread).

    Raises :class:`ApprovalNotSaved` (or ``OSError``) and leaves the file unchanged."""
    location = pathlib.Path(path)
    text = location.read_bytes().decode("utf-8")  # newlines kept as they are
    new = approve_always_text(text, server, tool)
    mode = location.stat().st_mode
    descriptor, temporary = tempfile.mkstemp(dir=location.parent, prefix=f".{location.name}.")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as out:
            out.write(new)
        os.chmod(temporary, mode & 0o7777)
        os.replace(temporary, location)
    except BaseException:
        pathlib.Path(temporary).unlink(missing_ok=True)
        raise
