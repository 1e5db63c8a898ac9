"""The order in which pytest-xdist hands out the test modules (``scheduling.py``)."""

from __future__ import annotations

import pathlib

from scheduling import PER_TEST, WEIGHTS, HeaviestFirst

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_every_weighed_module_exists_so_a_renamed_one_is_not_left_behind():
    missing = [module for module in WEIGHTS if not (ROOT / module).is_file()]
    assert missing == []


def test_the_queue_hands_out_the_heaviest_module_first_and_unlisted_ones_by_their_tests():
    heavy, light = sorted(WEIGHTS, key=WEIGHTS.__getitem__)[-1], "tests/test_unlisted.py"
    many = int(WEIGHTS[heavy] / PER_TEST) + 10
    queue = HeaviestFirst()
    queue["tests/test_few.py"] = {"a": False}
    queue[heavy] = {"b": False}
    queue[light] = {f"t{n}": False for n in range(many)}
    assert [queue.popitem(last=False)[0] for _ in range(3)] == [
        light,
        heavy,
        "tests/test_few.py",
    ]
    assert queue == {}


def test_the_queue_is_otherwise_the_ordered_dict_it_was():
    queue = HeaviestFirst(a={}, b={})
    queue.move_to_end("a")
    assert queue.popitem() == ("a", {})
    assert list(queue) == ["b"]
