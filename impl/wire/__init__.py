"""The wire (SPEC §11.2, §11.15, §11.16): the seam a runtime talks to a server through
(``seam``), and its production side over the official ``mcp`` SDK: the adapter, the
connector, the tasks protocol, HTTP and OAuth, a stdio server's stderr. The only wing
that imports ``mcp``, its types or its HTTP client; the SDK's private names are in
``sdk`` alone.

Imports the ``config`` wing."""
