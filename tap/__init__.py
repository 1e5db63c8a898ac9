"""``mcpbind tap``: a relay between any MCP host and one server that records the wire
(SPEC §14.6): :mod:`.stdio` reads the messages and writes the records, and relays a stdio
server; :mod:`.http` is the streamable-HTTP reverse proxy. ``mcpbind model-stub`` (SPEC
§14.7), the scripted model that drives a host from the other side, lives beside them:
:mod:`.scenario` (sans-IO) and :mod:`.model_http` (its HTTP server), under the same
contract.

A relay, not a host: it imports nothing of the runtime (``mcpbind.impl``) and nothing of
the SDK (``mcp``, ``mcp_types``), so a host that starts its server through the tap waits
for no more than the interpreter, anyio and the trace format (the HTTP proxy adds h11 and
the SDK's HTTP client, ``httpx2``, to reach its upstream). Checked by a contract of
``pyproject.toml`` (SPEC §11.1).
"""
