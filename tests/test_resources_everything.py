"""SPEC §11.20 against ``@modelcontextprotocol/server-everything`` (npm, over stdio): the
model sees and reads its resources through the three tools, follows a ``resource_link``
of a tool result, and a resource the server adds reaches the next step only."""

from __future__ import annotations

import json
import os

import anyio
import pytest
from mcp import StdioServerParameters
from testservers.everything import install

from mcpbind.impl import Host, HostConfig, ServerConfig

LINKS = "mcp__everything__get_resource_links"
GZIP = "mcp__everything__gzip_file_as_resource"


@pytest.fixture(scope="module")
def everything() -> StdioServerParameters:
    """The server's stdio command, installed on first use."""
    node, entry = install()
    return StdioServerParameters(
        command=str(node), args=[str(entry), "stdio"], env={"PATH": os.environ["PATH"]}
    )


def body(output: str) -> dict[str, list[dict[str, str]]]:
    return json.loads(output.partition("\n")[2])  # type: ignore[no-any-return]


async def test_the_model_lists_and_reads_server_everythings_resources_and_follows_a_link(
    everything: StdioServerParameters,
) -> None:
    server = ServerConfig(target=everything, required=True)
    async with Host.open(HostConfig(servers={"everything": server})) as host:
        with anyio.fail_after(20):  # its tools come with a list_changed after the handshake
            while GZIP not in host.sample().names:
                await anyio.sleep(0.05)
        step = host.sample()
        listed = await host.call(step, "c1", "list_mcp_resources", {"server": "everything"})
        documents = [e["uri"] for e in body(listed.output)["resources"]]
        assert documents
        assert all(uri.startswith("demo://resource/static/document/") for uri in documents)
        templates = await host.call(step, "c2", "list_mcp_resource_templates", {})
        shapes = {e["uriTemplate"] for e in body(templates.output)["resourceTemplates"]}
        assert "demo://resource/dynamic/text/{resourceId}" in shapes
        read = await host.call(
            step, "c3", "read_mcp_resource", {"server": "everything", "uri": documents[0]}
        )
        assert read.status == "ok", read.output
        links = await host.call(step, "c4", LINKS, {"count": 2})
        assert "[resource link: Text Resource 2" in links.output
        uri = links.output.split("Text Resource 2", 1)[1].split("<", 1)[1].split(">", 1)[0]
        text = await host.call(
            step, "c5", "read_mcp_resource", {"server": "everything", "uri": uri}
        )
        assert text.status == "ok", text.output
        assert "Resource 2" in text.output


async def test_a_resource_server_everything_adds_reaches_the_next_step_only(
    everything: StdioServerParameters,
) -> None:
    server = ServerConfig(target=everything, required=True)
    async with Host.open(HostConfig(servers={"everything": server})) as host:
        with anyio.fail_after(20):
            while GZIP not in host.sample().names:
                await anyio.sleep(0.05)
        before = host.sample()
        made = await host.call(
            before,
            "c1",
            GZIP,
            {
                "name": "hello.gz",
                "data": "data:text/plain;base64,aGVsbG8=",
                "outputType": "resourceLink",
            },
        )
        assert made.status == "ok", made.output
        uri = made.output.split("<", 1)[1].split(">", 1)[0]

        def lists(step_output: str) -> set[str]:
            return {e["uri"] for e in body(step_output)["resources"]}

        with anyio.fail_after(20):  # its list_changed refreshes the catalog
            for attempt in range(10**6):
                step = host.sample()
                now = await host.call(step, f"look{attempt}", "list_mcp_resources", {})
                if uri in lists(now.output):
                    break
                await anyio.sleep(0.05)
        assert step.generation > before.generation
        old = await host.call(before, "c2", "list_mcp_resources", {})
        assert uri not in lists(old.output)  # INV-2: the earlier step saw what it saw
        read = await host.call(
            step, "c3", "read_mcp_resource", {"server": "everything", "uri": uri}
        )
        assert read.status == "ok", read.output
        assert "[blob omitted: application/gzip," in read.output
