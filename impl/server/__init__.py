"""One server's life (SPEC §11.3, §11.12): its runtime task, its sessions and reconnects,
its refresh runs, its first start and phase, the order first catalogs install in.

Imports the ``calls``, ``catalog``, ``wire`` and ``config`` wings, never the host above it."""
