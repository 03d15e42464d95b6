"""Expected JSON values that may hold matchers in place of literals.

An expected value is decoded JSON in which an object whose keys begin with ``$``
is a *matcher*, not a literal object: ``{"$regex": "^San"}`` stands for any string
the regular expression finds a match in. The keys:

================== ==========================================================
``$regex``         a string the (Python) regular expression finds a match in
``$contains``      a string containing this text
``$icase``         a string equal to this one, case folded
``$approx``        a number within ``$tol`` (required, 0 or more) of this one
``$one_of``        any of these expected values (each may be a matcher)
``$type``          any value of this JSON type: string, number, integer,
                   boolean, null, object or array
``$gt`` ``$gte``   a number above (or at least) this one
``$lt`` ``$lte``   a number below (or at most) this one
``$literal``       this value exactly as written, never read as a matcher
================== ==========================================================

Several keys in one matcher must all hold (``{"$gt": 0, "$lte": 100}``). No
literal argument is lost: an object whose keys begin with ``$`` (a query
language's ``{"$set": ...}``) is written ``{"$literal": {"$set": ...}}``. A
matcher never takes a boolean for a number (JSON's ``true`` is not ``1``).

:func:`compile_pattern` turns the fixture's value into a pattern (plain dicts and
lists whose matchers are :class:`Matcher` objects), refusing a malformed one with
:class:`PatternError` at the key at fault; :func:`matches` and :func:`differences`
compare a pattern with an actual value in one of three directions: ``exact`` (the
same keys), ``partial`` (the actual value may have more keys) and ``subset`` (it
may have fewer).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zeroclaw_eval.util import regexsearch
from zeroclaw_eval.util.jsonvalue import MISSING, equal, pointer, show

if TYPE_CHECKING:
    from typing import Literal

    Direction = Literal["exact", "partial", "subset"]
    Test = Callable[[Any, Direction], bool]
    Where = tuple[str | int, ...]

TYPES = ("string", "number", "integer", "boolean", "null", "object", "array")
"""The JSON types ``$type`` names."""

_BOUNDS: dict[str, tuple[str, Callable[[float, float], bool]]] = {
    "$gt": (">", lambda actual, bound: actual > bound),
    "$gte": (">=", lambda actual, bound: actual >= bound),
    "$lt": ("<", lambda actual, bound: actual < bound),
    "$lte": ("<=", lambda actual, bound: actual <= bound),
}

KEYS = (
    "$regex",
    "$contains",
    "$icase",
    "$approx",
    "$tol",
    "$one_of",
    "$type",
    *_BOUNDS,
    "$literal",
)
"""Every key a matcher may have."""


class PatternError(ValueError):
    """A malformed expected value: ``at`` is the path of the key at fault, inside the value."""

    def __init__(self, at: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.at = at
        self.message = message


IGNORED: Any = object()
"""Stands for an object key whose value, or absence, does not matter (``ignore`` pointers)."""


@dataclass(frozen=True, eq=False)
class Matcher:
    """A compiled matcher: every test must hold. ``raw`` is the object as written."""

    raw: dict[str, Any]
    tests: tuple[Callable[[Any, Direction], bool], ...]
    phrase: str

    def test(self, actual: Any, direction: Direction) -> bool:
        """Whether ``actual`` meets every key of the matcher."""
        return all(test(actual, direction) for test in self.tests)


def is_number(value: Any) -> bool:
    """A JSON number: an int or float, never a boolean."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def has_matchers(value: Any) -> bool:
    """Whether any object inside ``value`` has a key beginning with ``$``."""
    if isinstance(value, dict):
        return any(key[:1] == "$" for key in value) or any(map(has_matchers, value.values()))
    if isinstance(value, list):
        return any(map(has_matchers, value))
    return False


def compile_pattern(value: Any, at: tuple[str | int, ...] = ()) -> Any:
    """The pattern of an expected value; raises :class:`PatternError` at the key at fault."""
    if isinstance(value, dict):
        if any(key[:1] == "$" for key in value):
            return _matcher(value, at)
        return {key: compile_pattern(item, (*at, key)) for key, item in value.items()}
    if isinstance(value, list):
        return [compile_pattern(item, (*at, index)) for index, item in enumerate(value)]
    return value


def _matcher(raw: dict[str, Any], at: tuple[str | int, ...]) -> Any:
    for key in raw:
        if key not in KEYS:
            why = (
                f"unknown matcher {key!r} (known: {', '.join(KEYS)})"
                if key[:1] == "$"
                else "an object with a key beginning with '$' is a matcher, and matcher keys "
                "cannot be mixed with argument keys"
            )
            raise PatternError(
                (*at, key), f'{why}; a literal object is written {{"$literal": {{...}}}}'
            )
    if "$literal" in raw:
        if len(raw) > 1:
            raise PatternError((*at, "$literal"), "$literal stands alone: no other key beside it")
        return raw["$literal"]  # a plain value: nothing inside it is read as a matcher
    tests: list[Test] = []
    phrases: list[str] = []
    for key, operand in raw.items():
        if key == "$tol":
            if "$approx" not in raw:
                raise PatternError((*at, key), "$tol applies only beside $approx")
            continue  # read beside $approx
        test, phrase = _KEYS[key](operand, raw, (*at, key))
        tests.append(test)
        phrases.append(phrase)
    _check_range(raw, at)
    return Matcher(raw, tuple(tests), " and ".join(phrases))


def _text(key: str, operand: Any, where: Where) -> str:
    if not isinstance(operand, str) or not operand:
        raise PatternError(where, f"{key} takes a non-empty string")
    return operand


def _regex(operand: Any, raw: dict[str, Any], where: Where) -> tuple[Test, str]:
    try:
        re.compile(_text("$regex", operand, where))
    except re.error as exc:
        raise PatternError(where, f"not a valid regular expression: {exc}") from None

    def test(actual: Any, direction: Direction) -> bool:
        # In the time-limited worker, as response_matches searches: a pattern that
        # backtracks forever fails the step (a search cut short is no match).
        found = isinstance(actual, str) and regexsearch.search(operand, actual)
        return isinstance(found, regexsearch.Found)

    return test, f"a string matching /{operand}/"


def _contains(operand: Any, raw: dict[str, Any], where: Where) -> tuple[Test, str]:
    needle = _text("$contains", operand, where)
    return (lambda a, _: isinstance(a, str) and needle in a), f"a string containing {show(needle)}"


def _icase(operand: Any, raw: dict[str, Any], where: Where) -> tuple[Test, str]:
    folded = _text("$icase", operand, where).casefold()
    return (
        lambda a, _: isinstance(a, str) and a.casefold() == folded
    ), f"{show(operand)} in any case"


def _type(operand: Any, raw: dict[str, Any], where: Where) -> tuple[Test, str]:
    if operand not in TYPES:
        raise PatternError(where, f"$type takes one of {', '.join(TYPES)}")
    if operand == "number":  # an integer is a number too
        return (lambda a, _: is_number(a)), "any number"
    return (lambda a, _: type_of(a) == operand), f"any {operand}"


def _bound(operand: Any, raw: dict[str, Any], where: Where) -> tuple[Test, str]:
    key = str(where[-1])
    if not is_number(operand):
        raise PatternError(where, f"{key} takes a number")
    sign, holds = _BOUNDS[key]
    return (lambda a, _: is_number(a) and holds(a, operand)), f"a number {sign} {show(operand)}"


def _approx(target: Any, raw: dict[str, Any], where: Where) -> tuple[Test, str]:
    tolerance = raw.get("$tol", MISSING)
    if not is_number(target):
        raise PatternError(where, "$approx takes a number")
    if tolerance is MISSING:
        raise PatternError(where, "$approx needs $tol, the largest difference allowed")
    if not is_number(tolerance) or tolerance < 0:
        raise PatternError((*where[:-1], "$tol"), "$tol takes a number of 0 or more")
    test: Test = lambda a, _: is_number(a) and math.fabs(a - target) <= tolerance  # noqa: E731
    return test, f"{show(target)} ± {show(tolerance)}"


def _one_of(choices: Any, raw: dict[str, Any], where: Where) -> tuple[Test, str]:
    if not isinstance(choices, list) or not choices:
        raise PatternError(where, "$one_of takes a non-empty array of expected values")
    compiled = [compile_pattern(choice, (*where, index)) for index, choice in enumerate(choices)]

    def test(actual: Any, direction: Direction) -> bool:
        return any(matches(choice, actual, direction) for choice in compiled)

    return test, "one of " + ", ".join(map(show_pattern, compiled))


_KEYS: dict[str, Callable[[Any, dict[str, Any], Where], tuple[Test, str]]] = {
    "$regex": _regex,
    "$contains": _contains,
    "$icase": _icase,
    "$approx": _approx,
    "$one_of": _one_of,
    "$type": _type,
    **dict.fromkeys(_BOUNDS, _bound),
}


def _check_range(raw: dict[str, Any], at: Where) -> None:
    """Refuse bounds no number meets (``{"$gt": 5, "$lt": 3}``): such a matcher never passes."""
    lows = [(raw[k], k) for k in ("$gt", "$gte") if k in raw]
    highs = [(raw[k], k) for k in ("$lt", "$lte") if k in raw]
    for low, low_key in lows:
        for high, high_key in highs:
            strict = low_key == "$gt" or high_key == "$lt"
            if low > high or (low == high and strict):
                raise PatternError(
                    (*at, high_key),
                    f"no number is {_BOUNDS[low_key][0]} {show(low)} and "
                    f"{_BOUNDS[high_key][0]} {show(high)}",
                )


def type_of(value: Any) -> str:
    """The JSON type of a decoded value, ``integer`` for a number with no fraction."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "object"
    return "array" if isinstance(value, list) else "nothing"


def matches(pattern: Any, actual: Any, direction: Direction) -> bool:
    """Whether ``actual`` meets ``pattern``: objects compared key by key in ``direction``
    (``exact``: the same keys; ``partial``: the actual may have more; ``subset``: it
    may have fewer), arrays element by element (the same length), matchers by their
    tests, anything else as JSON (:func:`~zeroclaw_eval.util.jsonvalue.equal`)."""
    if type(pattern) is Matcher:
        return pattern.test(actual, direction)
    if isinstance(pattern, dict):
        if not isinstance(actual, dict):
            return False
        for key, expected in pattern.items():
            if expected is IGNORED:
                continue
            if key not in actual:
                if direction == "subset":
                    continue
                return False
            if not matches(expected, actual[key], direction):
                return False
        return direction == "partial" or all(key in pattern for key in actual)
    if isinstance(pattern, list):
        return (
            isinstance(actual, list)
            and len(pattern) == len(actual)
            and all(matches(x, y, direction) for x, y in zip(pattern, actual, strict=True))
        )
    return equal(pattern, actual)


def differences(
    pattern: Any, actual: Any, direction: Direction, at: tuple[str | int, ...] = ()
) -> Iterator[str]:
    """Where ``actual`` departs from ``pattern``, one phrase per place, with the
    pointer and both values: ``/city: expected a string matching /^San/, got "LA"``."""
    if isinstance(pattern, dict) and isinstance(actual, dict):
        for key, expected in pattern.items():
            if expected is IGNORED:
                continue
            if key in actual:
                yield from differences(expected, actual[key], direction, (*at, key))
            elif direction != "subset":
                yield f"{pointer((*at, key))}: missing (expected {show_pattern(expected)})"
        if direction != "partial":
            for key in [key for key in actual if key not in pattern]:
                yield f"{pointer((*at, key))}: not expected (got {show(actual[key])})"
    elif isinstance(pattern, list) and isinstance(actual, list) and len(pattern) == len(actual):
        for index, (x, y) in enumerate(zip(pattern, actual, strict=True)):
            yield from differences(x, y, direction, (*at, index))
    elif not matches(pattern, actual, direction):
        where = pointer(at) or "(the arguments)"
        yield f"{where}: expected {show_pattern(pattern)}, got {show(actual)}"


def show_pattern(pattern: Any, limit: int = 60) -> str:
    """A pattern as a detail quotes it: a matcher in words, anything else as compact JSON."""
    if type(pattern) is Matcher:
        return pattern.phrase
    if pattern is MISSING:
        return "nothing"
    text = json.dumps(pattern, ensure_ascii=False, separators=(",", ":"), default=_raw)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _raw(value: Any) -> Any:
    return value.raw if type(value) is Matcher else "*"


def literal_leaves(
    pattern: Any, at: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every literal scalar in a pattern with its path: a value the ``exact`` and
    ``partial`` directions require at that same path (matchers and ignored keys
    require none)."""
    if isinstance(pattern, dict):
        for key, item in pattern.items():
            yield from literal_leaves(item, (*at, key))
    elif isinstance(pattern, list):
        for index, item in enumerate(pattern):
            yield from literal_leaves(item, (*at, index))
    elif type(pattern) is not Matcher and pattern is not IGNORED:
        yield at, pattern


def ignoring(pattern: dict[str, Any], tokens: tuple[str, ...]) -> dict[str, Any]:
    """``pattern`` (an object's) with the object key at ``tokens`` ignored: its value, or its
    absence, no longer matters. Raises :class:`PatternError` (``at`` is ``()``) when
    the exact direction means no value could ever be there, or the pattern already
    says what it must be."""
    if not tokens:
        raise PatternError((), "the whole arguments cannot be ignored (use match ignore)")
    *parents, last = tokens
    copy = dict(pattern)
    node = copy
    for depth, token in enumerate(parents):
        child = node.get(token, MISSING) if isinstance(node, dict) else MISSING
        where = pointer(tuple(tokens[: depth + 1]))
        if child is MISSING:
            raise PatternError(
                (),
                f"can never exist: the step's arguments have no {where}, and the exact "
                "comparison allows no key they do not name",
            )
        if not isinstance(child, dict):
            raise PatternError(
                (),
                f"can never exist: the step's arguments give {where} a value that is not an object",
            )
        child = dict(child)
        node[token] = child
        node = child
    if last in node:
        raise PatternError(
            (),
            f"the step's arguments give {pointer(tuple(tokens))} a value: ignoring it "
            "contradicts them (drop one)",
        )
    node[last] = IGNORED
    return copy
