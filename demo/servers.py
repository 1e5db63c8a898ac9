"""The demo servers: ``python -m mcpbind.demo.servers git.hub|git_hub|notes``.

* ``git.hub`` — ``search`` (read-only), ``create-issue`` (a name that needs sanitising),
  ``build`` (slow), ``deploy`` (fails with ``isError``);
* ``git_hub`` — its name sanitises like ``git.hub``'s, so its ``search`` collides and is
  renamed; ``status`` (read-only);
* ``notes`` — ``add``, ``list`` (read-only), and ``learn``, which adds a tool to the
  server's catalog and announces ``list_changed``.
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)
ISSUES = ["login fails on Safari", "crash when saving a note", "slow search on large repos"]


def git_hub_dotted() -> MCPServer:
    server = MCPServer("git.hub", log_level="ERROR")

    @server.tool(description="Search the issues of the demo repository", annotations=READ_ONLY)
    def search(query: str) -> list[str]:
        return [issue for issue in ISSUES if query.lower() in issue.lower()]

    @server.tool(name="create-issue", description="Open an issue (its name needs sanitising)")
    def create_issue(title: str) -> str:
        return f"opened issue #{len(ISSUES) + 1}: {title}"

    @server.tool(description="Run the build; takes a few seconds")
    async def build(seconds: float = 3.0) -> str:
        await anyio.sleep(seconds)
        return f"build passed in {seconds:g} s"

    @server.tool(description="Deploy; the demo server always refuses")
    def deploy(environment: str = "production") -> str:
        raise ToolError(f"deploy to {environment} refused: the build is not signed")

    _ = (search, create_issue, build, deploy)
    return server


def git_hub_underscored() -> MCPServer:
    server = MCPServer("git_hub", log_level="ERROR")

    @server.tool(description="Search the pull requests (collides with git.hub's search)")
    def search(query: str) -> list[str]:
        return [f"PR: fix {issue}" for issue in ISSUES if query.lower() in issue.lower()]

    @server.tool(description="Status of the default branch", annotations=READ_ONLY)
    def status() -> str:
        return "main: 3 commits ahead, checks passing"

    _ = (search, status)
    return server


def notes() -> MCPServer:
    server = MCPServer("notes", log_level="ERROR")
    saved: list[str] = []

    @server.tool(description="Save a note")
    def add(text: str) -> str:
        saved.append(text)
        return f"saved note {len(saved)}"

    @server.tool(name="list", description="List the saved notes", annotations=READ_ONLY)
    def list_notes() -> list[str]:
        return saved

    @server.tool(description="Teach the server a new tool; it announces list_changed")
    async def learn(tool: str, ctx: Context) -> str:
        async def learned() -> str:
            return f"{tool} ran"

        server.add_tool(learned, name=tool, description=f"learned at run time: {tool}")
        await ctx.notify_tools_changed()
        return f"learned {tool}; the catalog changed"

    _ = (add, list_notes, learn)
    return server


SERVERS = {"git.hub": git_hub_dotted, "git_hub": git_hub_underscored, "notes": notes}


def main() -> None:
    if len(sys.argv) != 2 or sys.argv[1] not in SERVERS:
        sys.exit(f"usage: python -m mcpbind.demo.servers {{{'|'.join(SERVERS)}}}")
    SERVERS[sys.argv[1]]().run()


if __name__ == "__main__":
    main()
