"""mcpbind.properties."""
