"""mcpbind.impl."""
