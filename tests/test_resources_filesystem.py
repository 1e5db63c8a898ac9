"""SPEC §11.20 against ``@modelcontextprotocol/server-filesystem`` (npm, over stdio, a
temporary directory its root): it lists no resources, so a step shows its tools without
the three resource tools; the one resource its tools return is embedded in
``read_media_file``'s result (a blob, no ``resource_link``), and the model cannot read it
as a resource: ``read_mcp_resource`` is not a tool of that step."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from mcp import StdioServerParameters
from testservers.filesystem import install

from mcpbind.impl import Host, HostConfig, ServerConfig
from mcpbind.model import texts

RESOURCE_TOOLS = {"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"}
READ_TEXT = "mcp__files__read_text_file"
READ_MEDIA = "mcp__files__read_media_file"


@pytest.fixture
def files(tmp_path: Path) -> tuple[StdioServerParameters, Path]:
    """The server's stdio command over a fresh directory, and that directory."""
    node, entry = install()
    root = tmp_path.resolve()
    command = StdioServerParameters(
        command=str(node), args=[str(entry), str(root)], env={"PATH": os.environ["PATH"]}
    )
    return command, root


def open_host(command: StdioServerParameters) -> Host:
    return Host.open(HostConfig(servers={"files": ServerConfig(target=command, required=True)}))


async def test_server_filesystem_lists_no_resources_so_its_tools_come_without_the_resource_tools(
    files: tuple[StdioServerParameters, Path],
) -> None:
    command, root = files
    (root / "note.txt").write_text("first line\nsecond line\n")
    async with open_host(command) as host:
        with anyio.fail_after(20):
            while READ_TEXT not in host.sample().names:
                await anyio.sleep(0.05)
        step = host.sample()
        assert READ_MEDIA in step.names
        assert not RESOURCE_TOOLS & set(step.names)
        read = await host.call(step, "c1", READ_TEXT, {"path": str(root / "note.txt")})
        assert read.status == "ok", read.output
        # §8.8: its structuredContent, the text block that merely repeats it left out
        assert json.loads(read.output.partition("\n")[2]) == {
            "content": "first line\nsecond line\n"
        }


async def test_server_filesystems_embedded_file_resource_is_a_blob_note_not_a_readable_resource(
    files: tuple[StdioServerParameters, Path],
) -> None:
    command, root = files
    (root / "data.bin").write_bytes(bytes(range(256)) * 3)
    uri = (root / "data.bin").as_uri()
    async with open_host(command) as host:
        with anyio.fail_after(20):
            while READ_MEDIA not in host.sample().names:
                await anyio.sleep(0.05)
        step = host.sample()
        media = await host.call(step, "c1", READ_MEDIA, {"path": str(root / "data.bin")})
        assert media.status == "ok", media.output
        assert "[1024 base64 characters omitted]" in media.output  # §8.8: no bytes as text
        assert media.output.endswith(f"\n[resource omitted: {uri}]")
        follow = await host.call(step, "c2", "read_mcp_resource", {"server": "files", "uri": uri})
        assert follow.status == "unsupported"
        assert follow.output == texts.UNSUPPORTED.format(name="read_mcp_resource")
        assert not RESOURCE_TOOLS & set(host.sample().names)
