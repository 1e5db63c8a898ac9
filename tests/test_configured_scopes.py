"""The scopes an OAuth login asks for (SPEC §11.15): the configured words stay first and
are kept whatever a server's challenge adds; the challenge's own words follow, each once."""

from __future__ import annotations

import pytest

from mcpbind.impl.wire.oauth_providers import ConfiguredScopes

ROWS = [
    ("a b", "b c", "a b c"),
    ("a b", "c a d", "a b c d"),
    ("a b", None, "a b"),
    ("a b", "", "a b"),
    ("a b", "a b", "a b"),
    (None, "x y", "x y"),
    (None, None, None),
    ("", "x", "x"),
]


@pytest.mark.parametrize(("configured", "assigned", "requested"), ROWS)
def test_a_challenge_adds_its_scopes_after_the_configured_ones(configured, assigned, requested):
    metadata = ConfiguredScopes(
        configured=configured,
        redirect_uris=["http://127.0.0.1:1/callback"],
        scope=configured,
    )
    metadata.scope = assigned  # as the SDK assigns it on a step-up (SEP-2350)
    assert metadata.scope == requested
