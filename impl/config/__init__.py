"""What a host is built from (SPEC §11.4): the values (``HostConfig``, ``ServerConfig``,
``OAuthConfig``), the Codex-compatible TOML reader and its one writer, and the hooks a
host application plugs in (approver, elicitation handler, progress callback, OAuth
handler and credentials stores, recorder, contributors, catalog cache).

A leaf: imports only ``impl.errors`` and ``impl.values``."""
