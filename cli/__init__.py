"""mcpbind.cli."""
