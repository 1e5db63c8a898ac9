"""The runtime on anyio: the same public API on trio and asyncio (SPEC §11.13)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

ASYNCIO_HOST = textwrap.dedent(
    """
    import asyncio, sys
    from mcp.server.mcpserver import MCPServer
    from mcpbind.impl import Host, HostConfig, ServerConfig

    server = MCPServer("fs")

    @server.tool(description="Read a file")
    async def read(path: str) -> str:
        return f"contents of {path}"

    async def main():
        config = HostConfig(servers={"fs": ServerConfig(target=server)})
        async with Host.open(config) as host:
            step = host.sample()
            calls = [host.call(step, f"c{i}", "mcp__fs__read", {"path": str(i)}) for i in range(3)]
            results = await asyncio.gather(*calls)
            print(sorted(r.status for r in results))

    asyncio.run(main())
    print("trio" in sys.modules)
    """
)


def test_a_host_on_asyncio_never_imports_trio():
    """An asyncio agent host that uses mcpbind.impl does not load trio at all."""
    done = subprocess.run(
        [sys.executable, "-c", ASYNCIO_HOST],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['ok',", "'ok',", "'ok']", "False"]
