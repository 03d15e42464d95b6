"""Argument matchers (``util/jsonmatch.py``): each matcher's verdict, each refusal,
and the words of a difference.

A plain value (no ``$`` key anywhere) must match exactly as ``jsonvalue`` compares
it, so that a fixture written before matchers keeps its verdict.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zeroclaw_eval.util import jsonmatch, jsonvalue
from zeroclaw_eval.util.jsonmatch import IGNORED, PatternError, compile_pattern, matches

# (expected, actual, direction, verdict)
VERDICTS: list[tuple[Any, Any, str, bool]] = [
    ({"$regex": "^San"}, "San Francisco", "exact", True),
    ({"$regex": "^San"}, "Los Angeles, San", "exact", False),
    ({"$regex": "Fran"}, "San Francisco", "exact", True),  # a search, not a full match
    ({"$regex": "^1"}, 1, "exact", False),  # a regex meets strings only
    ({"$contains": "Fran"}, "San Francisco", "exact", True),
    ({"$contains": "fran"}, "San Francisco", "exact", False),
    ({"$contains": "a"}, ["a"], "exact", False),
    ({"$icase": "paris"}, "PARIS", "exact", True),
    ({"$icase": "straße"}, "STRASSE", "exact", True),  # case folded, not lowered
    ({"$icase": "paris"}, "pari", "exact", False),
    ({"$approx": 3.14, "$tol": 0.01}, 3.149, "exact", True),
    ({"$approx": 3.14, "$tol": 0.01}, 3.16, "exact", False),
    ({"$approx": 3, "$tol": 0}, 3.0, "exact", True),
    ({"$approx": 1, "$tol": 0.5}, True, "exact", False),  # true is not 1
    ({"$approx": 1, "$tol": 0.5}, "1", "exact", False),
    ({"$one_of": ["SF", "San Francisco"]}, "SF", "exact", True),
    ({"$one_of": ["SF", "San Francisco"]}, "LA", "exact", False),
    ({"$one_of": [1, {"$icase": "one"}]}, "ONE", "exact", True),
    ({"$one_of": [1]}, True, "exact", False),
    ({"$one_of": [{"a": 1}]}, {"a": 1, "b": 2}, "partial", True),  # the direction goes down
    ({"$one_of": [{"a": 1}]}, {"a": 1, "b": 2}, "exact", False),
    ({"$type": "string"}, "", "exact", True),
    ({"$type": "string"}, 1, "exact", False),
    ({"$type": "number"}, 1, "exact", True),
    ({"$type": "number"}, 1.5, "exact", True),
    ({"$type": "number"}, False, "exact", False),
    ({"$type": "integer"}, 2.0, "exact", True),  # JSON has one number type
    ({"$type": "integer"}, 2.5, "exact", False),
    ({"$type": "integer"}, True, "exact", False),
    ({"$type": "boolean"}, False, "exact", True),
    ({"$type": "boolean"}, 0, "exact", False),
    ({"$type": "null"}, None, "exact", True),
    ({"$type": "null"}, "null", "exact", False),
    ({"$type": "object"}, {}, "exact", True),
    ({"$type": "object"}, [], "exact", False),
    ({"$type": "array"}, [], "exact", True),
    ({"$type": "array"}, {}, "exact", False),
    ({"$gt": 100}, 101, "exact", True),
    ({"$gt": 100}, 100, "exact", False),
    ({"$gte": 100}, 100, "exact", True),
    ({"$gte": 100}, 99.5, "exact", False),
    ({"$lt": 100}, 99, "exact", True),
    ({"$lt": 100}, 100, "exact", False),
    ({"$lte": 100}, 100, "exact", True),
    ({"$lte": 100}, 100.5, "exact", False),
    ({"$gt": 0}, True, "exact", False),  # true is not 1
    ({"$gt": 0}, "5", "exact", False),
    ({"$gt": 0, "$lte": 10}, 10, "exact", True),
    ({"$gt": 0, "$lte": 10}, 0, "exact", False),
    ({"$gt": 0, "$lte": 10}, 11, "exact", False),
    ({"$regex": "^a", "$contains": "z"}, "abc", "exact", False),  # every key must hold
    ({"$literal": {"$set": 1}}, {"$set": 1}, "exact", True),
    ({"$literal": {"$set": 1}}, {"$set": 2}, "exact", False),
    ({"$literal": {"$set": 1}}, {"$set": 1, "x": 0}, "partial", True),
    ({"q": {"$regex": "^c"}, "n": 1}, {"q": "cats", "n": 1}, "exact", True),
    ({"q": {"$regex": "^c"}, "n": 1}, {"q": "cats", "n": 1, "x": 0}, "exact", False),
    ({"q": {"$regex": "^c"}}, {"q": "cats", "n": 1}, "partial", True),
    ({"q": {"$regex": "^c"}}, {"n": 1}, "partial", False),
    ({"q": "cats", "n": 1}, {"q": "cats"}, "subset", True),
    ({"q": "cats", "n": 1}, {}, "subset", True),
    ({"q": "cats", "n": 1}, {"q": "cats", "x": 0}, "subset", False),
    ({"q": "cats", "n": 1}, {"q": "dogs"}, "subset", False),
    ({"o": {"a": 1, "b": 2}}, {"o": {"a": 1}}, "subset", True),  # the direction goes down
    ({"o": {"a": 1}}, {"o": {"a": 1, "b": 2}}, "subset", False),
    ({"a": [{"$type": "string"}, 2]}, {"a": ["x", 2]}, "exact", True),
    ({"a": [{"$type": "string"}, 2]}, {"a": ["x"]}, "exact", False),
    ({"a": {"$type": "string"}}, {"a": ["x"]}, "exact", False),
    ({"a": 1}, [1], "exact", False),
]


@pytest.mark.parametrize(("expected", "actual", "direction", "verdict"), VERDICTS)
def test_each_matcher_meets_what_it_says(
    expected: Any, actual: Any, direction: str, verdict: bool
) -> None:
    assert matches(compile_pattern(expected), actual, direction) is verdict  # type: ignore[arg-type]


def test_a_matcher_never_meets_an_absent_value() -> None:
    for raw in ({"$type": "array"}, {"$type": "object"}, {"$gt": 0}, {"$regex": "."}):
        assert not matches(compile_pattern(raw), jsonvalue.MISSING, "exact")


def test_an_ignored_key_may_be_anything_or_absent_and_nothing_else_changes() -> None:
    pattern = jsonmatch.ignoring(compile_pattern({"q": "cats", "m": {"a": 1}}), ("m", "ts"))
    pattern = jsonmatch.ignoring(pattern, ("id",))
    assert pattern == {"q": "cats", "m": {"a": 1, "ts": IGNORED}, "id": IGNORED}
    assert matches(pattern, {"q": "cats", "m": {"a": 1}}, "exact")
    assert matches(pattern, {"q": "cats", "m": {"a": 1, "ts": 5}, "id": "r-1"}, "exact")
    assert not matches(pattern, {"q": "cats", "m": {"a": 1, "ts": 5}, "x": 1}, "exact")
    assert not matches(pattern, {"q": "dogs", "m": {"a": 1}, "id": "r-1"}, "exact")
    assert list(jsonmatch.differences(pattern, {"q": "cats", "m": {"a": 1}}, "exact")) == []


# (expected, path of the key at fault, what the message says)
REFUSALS: list[tuple[Any, tuple[Any, ...], str]] = [
    ({"$regx": "a"}, ("$regx",), "unknown matcher '$regx' (known: $regex, $contains,"),
    (
        {"$regex": "a", "city": "x"},
        ("city",),
        "an object with a key beginning with '$' is a matcher, and matcher keys cannot be "
        'mixed with argument keys; a literal object is written {"$literal": {...}}',
    ),
    ({"$regex": "("}, ("$regex",), "not a valid regular expression: missing ), unterminated"),
    ({"$regex": ""}, ("$regex",), "$regex takes a non-empty string"),
    ({"$contains": 1}, ("$contains",), "$contains takes a non-empty string"),
    ({"$icase": None}, ("$icase",), "$icase takes a non-empty string"),
    ({"$approx": 1}, ("$approx",), "$approx needs $tol, the largest difference allowed"),
    ({"$approx": 1, "$tol": -0.1}, ("$tol",), "$tol takes a number of 0 or more"),
    ({"$approx": 1, "$tol": True}, ("$tol",), "$tol takes a number of 0 or more"),
    ({"$approx": "1", "$tol": 1}, ("$approx",), "$approx takes a number"),
    ({"$tol": 1}, ("$tol",), "$tol applies only beside $approx"),
    ({"$one_of": []}, ("$one_of",), "$one_of takes a non-empty array"),
    ({"$one_of": "SF"}, ("$one_of",), "$one_of takes a non-empty array"),
    ({"$one_of": ["a", {"$nope": 1}]}, ("$one_of", 1, "$nope"), "unknown matcher '$nope'"),
    ({"$type": "str"}, ("$type",), "$type takes one of string, number, integer, boolean"),
    ({"$gt": "5"}, ("$gt",), "$gt takes a number"),
    ({"$lte": False}, ("$lte",), "$lte takes a number"),
    ({"$gt": 5, "$lt": 3}, ("$lt",), "no number is > 5 and < 3"),
    ({"$gte": 5, "$lt": 5}, ("$lt",), "no number is >= 5 and < 5"),
    ({"$gt": 5, "$lte": 5}, ("$lte",), "no number is > 5 and <= 5"),
    ({"$literal": 1, "$type": "string"}, ("$literal",), "$literal stands alone"),
    ({"a": [0, {"b": {"$gt": None}}]}, ("a", 1, "b", "$gt"), "$gt takes a number"),
]


@pytest.mark.parametrize(("expected", "at", "says"), REFUSALS)
def test_a_malformed_matcher_is_refused_at_its_key(
    expected: Any, at: tuple[Any, ...], says: str
) -> None:
    with pytest.raises(PatternError) as refused:
        compile_pattern(expected)
    assert refused.value.at == at
    assert refused.value.message.startswith(says)


def test_an_equal_range_with_inclusive_bounds_is_one_number() -> None:
    assert matches(compile_pattern({"$gte": 5, "$lte": 5}), 5, "exact")


@pytest.mark.parametrize(
    ("tokens", "says"),
    [
        ((), "the whole arguments cannot be ignored"),
        (("meta", "ts"), "can never exist: the step's arguments have no /meta"),
        (("q", "x"), "can never exist: the step's arguments give /q a value that is not an object"),
        (("q",), "the step's arguments give /q a value: ignoring it contradicts them"),
    ],
)
def test_an_ignored_pointer_that_can_never_matter_is_refused(
    tokens: tuple[str, ...], says: str
) -> None:
    with pytest.raises(PatternError) as refused:
        jsonmatch.ignoring({"q": "cats"}, tokens)
    assert says in refused.value.message


# (expected, actual, direction, the differences)
DIFFERENCES: list[tuple[Any, Any, str, list[str]]] = [
    (
        {"city": {"$regex": "^San"}},
        {"city": "Paris"},
        "exact",
        ['/city: expected a string matching /^San/, got "Paris"'],
    ),
    (
        {"n": {"$approx": 3.14, "$tol": 0.01}, "c": {"$one_of": ["SF", "San Francisco"]}},
        {"n": 3.2, "c": "LA"},
        "exact",
        [
            "/n: expected 3.14 ± 0.01, got 3.2",
            '/c: expected one of "SF", "San Francisco", got "LA"',
        ],
    ),
    (
        {"amount": {"$gt": 0, "$lte": 100}, "who": {"$icase": "ann"}},
        {"amount": 150, "who": "bob"},
        "exact",
        [
            "/amount: expected a number > 0 and a number <= 100, got 150",
            '/who: expected "ann" in any case, got "bob"',
        ],
    ),
    (
        {"t": {"$type": "integer"}, "s": {"$contains": "x"}},
        {"s": "y", "z": 1},
        "exact",
        [
            "/t: missing (expected any integer)",
            '/s: expected a string containing "x", got "y"',
            "/z: not expected (got 1)",
        ],
    ),
    (
        {"q": "cats", "n": 1},
        {"q": "dogs", "x": 0},
        "subset",
        [
            '/q: expected "cats", got "dogs"',
            "/x: not expected (got 0)",
        ],
    ),
    ({"q": "cats", "n": 1}, {"q": "cats", "x": 0}, "partial", ["/n: missing (expected 1)"]),
    ({"a": [1, {"$gt": 1}]}, {"a": [1]}, "exact", ['/a: expected [1,{"$gt":1}], got [1]']),
    ({"$literal": {"$set": 1}}, {"$set": 2}, "exact", ["/$set: expected 1, got 2"]),
]


@pytest.mark.parametrize(("expected", "actual", "direction", "found"), DIFFERENCES)
def test_a_difference_names_the_pointer_and_both_values(
    expected: Any, actual: Any, direction: str, found: list[str]
) -> None:
    pattern = compile_pattern(expected)
    assert list(jsonmatch.differences(pattern, actual, direction)) == found  # type: ignore[arg-type]
    assert matches(pattern, actual, direction) is (not found)  # type: ignore[arg-type]


# --- plain values keep their verdict ---------------------------------------------

_scalars = st.one_of(st.booleans(), st.integers(-2, 2), st.sampled_from([1.0, 2.5, "a", None]))
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("xy"), inner),
    max_leaves=5,
)


@given(_values, _values)
def test_a_plain_value_matches_as_jsonvalue_compares_it(expected: Any, actual: Any) -> None:
    assert not jsonmatch.has_matchers(expected)
    pattern = compile_pattern(expected)
    assert pattern == expected
    assert matches(pattern, actual, "exact") is jsonvalue.equal(expected, actual)
    assert matches(pattern, actual, "partial") is jsonvalue.contains(expected, actual)
    assert matches(pattern, actual, "exact") is not any(
        jsonmatch.differences(pattern, actual, "exact")
    )
    # subset is partial the other way round, for objects at every depth
    if isinstance(expected, dict) and isinstance(actual, dict):
        assert matches(pattern, actual, "subset") is matches(actual, expected, "partial")


def test_a_long_pattern_is_cut_to_sixty_characters() -> None:
    shown = jsonmatch.show_pattern({"message": "x" * 100})
    assert len(shown) == 60
    assert shown.endswith("...")
    assert jsonmatch.show_pattern({"m": "x" * 49}) == '{"m":"' + "x" * 49 + '"}'


def test_has_matchers_finds_a_dollar_key_at_any_depth() -> None:
    assert jsonmatch.has_matchers({"a": [{"b": {"$gt": 1}}]})
    assert jsonmatch.has_matchers({"a": [{"b": {"gt$": 1}}]}) is False
    assert jsonmatch.has_matchers("$regex") is False


def test_a_regex_that_backtracks_forever_fails_the_value_within_the_search_limit() -> None:
    """``(a+)+$`` over 40 ``a`` and a ``b`` would hold the interpreter for ages; the
    search runs in the time-limited worker, so the value simply does not match."""
    from zeroclaw_eval.util import regexsearch

    pattern = compile_pattern({"q": {"$regex": "(a+)+$"}})
    started = time.monotonic()
    assert not matches(pattern, {"q": "a" * 40 + "b"}, "exact")
    assert time.monotonic() - started < regexsearch.TIMEOUT_S + 20
    assert matches(pattern, {"q": "aaa"}, "exact")  # a new worker answers the next one
