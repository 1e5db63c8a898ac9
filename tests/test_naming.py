"""SPEC §6: public names. The function here is shared by the model and the runtime."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpbind.model.naming import (
    HASH_LENGTH,
    NameCollision,
    assign_names,
    identity_hash,
    natural_name,
    sanitize,
)

VALID = re.compile(r"[A-Za-z0-9_]+")


def fresh(identities, *, max_length=64, held=None, taken=(), reserved=None, remembered=None):
    return assign_names(
        identities,
        held=held or {},
        taken=taken,
        reserved=reserved or {},
        remembered=remembered or {},
        max_length=max_length,
    )


def test_sanitize_replaces_every_character_outside_the_safe_set_and_keeps_case():
    assert sanitize("Git.Hub-v2 é") == "Git_Hub_v2__"
    assert sanitize("ok_NAME_09") == "ok_NAME_09"


def test_sanitize_never_returns_an_empty_name():
    assert sanitize("") == "_"


def test_natural_name_joins_prefix_server_and_tool():
    assert natural_name("fs", "read_file") == "mcp__fs__read_file"
    assert natural_name("git.hub", "search") == "mcp__git_hub__search"


def test_server_already_prefixed_does_not_get_a_second_prefix():
    assert natural_name("mcp__fs", "read") == "mcp__fs__read"


def test_name_over_the_limit_is_cut_and_gets_the_identity_hash():
    tool = "t" * 100
    name = natural_name("server", tool, max_length=64)
    assert len(name) == 64
    assert name.endswith("_" + identity_hash("server", tool))
    assert name.startswith("mcp__server__ttt")
    assert len(identity_hash("server", tool)) == HASH_LENGTH


def test_name_exactly_at_the_limit_is_kept_whole():
    tool = "t" * (64 - len("mcp__s__"))
    assert natural_name("s", tool, max_length=64) == "mcp__s__" + tool


def test_too_small_a_limit_is_refused():
    with pytest.raises(ValueError, match="max_length must be at least"):
        natural_name("s", "t", max_length=10)


def test_delimiter_ambiguity_gets_two_distinct_names():
    """Server a__b tool c and server a tool b__c both join to mcp__a__b__c."""
    assert natural_name("a__b", "c") == natural_name("a", "b__c") == "mcp__a__b__c"
    names = fresh([("a__b", "c"), ("a", "b__c")])
    assert isinstance(names, dict)
    assert len(set(names.values())) == 2
    # canonical order: ("a", "b__c") sorts first and keeps the natural name
    assert names[("a", "b__c")] == "mcp__a__b__c"
    assert names[("a__b", "c")] == "mcp__a__b__c_" + identity_hash("a__b", "c")


def test_incumbent_keeps_its_name_and_the_newcomer_is_renamed():
    """INV-6: the identity that already holds a name keeps it."""
    incumbent = ("a__b", "c")
    names = fresh([("a", "b__c")], taken=["mcp__a__b__c"])
    assert isinstance(names, dict)
    assert names[("a", "b__c")] == "mcp__a__b__c_" + identity_hash("a", "b__c")
    again = fresh([incumbent, ("a__b", "d")], held={incumbent: "mcp__a__b__c"})
    assert isinstance(again, dict)
    assert again[incumbent] == "mcp__a__b__c"


def test_a_name_taken_by_another_server_gets_twelve_hex_digits_as_the_readme_shows():
    """SPEC §6: the suffix of a renamed tool is part of its public name; README's
    catalog shows ``git_hub``'s ``search`` beside ``git.hub``'s."""
    names = fresh([("git_hub", "search")], taken=["mcp__git_hub__search"])
    assert names == {("git_hub", "search"): "mcp__git_hub__search_ec62fe60a615"}


def test_newcomer_whose_name_a_builtin_owns_is_a_collision():
    """INV-5: an MCP name never shadows a non-MCP source's name."""
    result = fresh([("git_hub", "admin")], reserved={"mcp__git_hub__admin": "builtin"})
    assert result == NameCollision("mcp__git_hub__admin", ("git_hub", "admin"), "builtin")


def test_remembered_name_is_reused_when_free():
    identity = ("s", "t")
    names = fresh([identity], remembered={identity: "mcp__s__t_abcdefabcdef"})
    assert names == {identity: "mcp__s__t_abcdefabcdef"}


def test_remembered_name_that_is_taken_falls_back_to_the_rules():
    identity = ("s", "t")
    names = fresh([identity], remembered={identity: "x"}, taken=["x"])
    assert names == {identity: "mcp__s__t"}


def test_rehash_with_an_attempt_counter_while_the_hashed_name_is_taken():
    identity = ("s", "t")
    first = "mcp__s__t_" + identity_hash("s", "t")
    names = fresh([identity], taken=["mcp__s__t", first])
    assert names == {identity: "mcp__s__t_" + identity_hash("s", "t", 1)}


identities = st.lists(
    st.tuples(
        st.sampled_from(["a", "a.b", "a_b", "a__b", "mcp__a", ""]),
        st.text(alphabet="ab_.-é", max_size=6),
    ),
    unique=True,
    max_size=8,
)


@given(identities, st.sampled_from([24, 32, 64]))
def test_names_are_valid_unique_within_the_limit_and_independent_of_listing_order(
    listing, max_length
):
    names = fresh(listing, max_length=max_length)
    assert isinstance(names, dict)
    assert set(names) == set(listing)
    assert len(set(names.values())) == len(listing)
    for name in names.values():
        assert VALID.fullmatch(name)
        assert len(name) <= max_length
    for permutation in itertools.islice(itertools.permutations(listing), 6):
        assert fresh(list(permutation), max_length=max_length) == names
