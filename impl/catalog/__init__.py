"""Catalogs (SPEC §5-§7, §11.9): listings read, validated and named; the registry and the
one path that publishes it; step snapshots; what a step shows (exposure, shortened
schemas, ``tool_search``); output schemas.

Imports the ``wire`` (one helper of the SDK's, through ``wire.sdk``) and ``config`` wings."""
