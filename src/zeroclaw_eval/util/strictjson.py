"""JSON parsing that refuses what ``json.loads`` lets through silently.

Duplicate keys (the last one would win, hiding the first), non-finite numbers
(``NaN``, ``Infinity``, or ``1e999``, which overflows to infinity), integers too
long for Python to convert, and strings holding a lone surrogate (``"\\ud800"``:
not Unicode, so no report could print it) are refused with the path of the
offending value, so the error can name the field.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterator
from typing import Any

# A \u escape in the surrogate range, and a surrogate itself (in text that was
# never UTF-8): the two ways a lone surrogate gets into a parsed document.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class StrictJSONError(ValueError):
    """The text is not JSON, or holds something strict JSON refuses.

    ``path`` locates the offending value (empty when the text itself is broken).
    """

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(message)


class _Refused:
    """Left in the parsed tree where a refused value stood, to locate it afterwards.

    ``of_object``: the fault is the object's that holds it (a key given twice), so
    the error names that object, not the key's value.
    """

    __slots__ = ("message", "of_object")

    def __init__(self, message: str, *, of_object: bool = False) -> None:
        self.message = message
        self.of_object = of_object


class _Parse(threading.local):
    """Whether the parse running on this thread refused a value: the hooks below say
    so here, so that one decoder, made once, serves every parse."""

    refused = False


_parse = _Parse()


def _pairs(items: list[tuple[str, Any]]) -> dict[Any, Any]:
    obj: dict[Any, Any] = dict(items)
    if len(obj) != len(items):
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                _parse.refused = True
                name = json.dumps(key, ensure_ascii=False)
                obj[key] = _Refused(f"duplicate key {name}", of_object=True)
                break
            seen.add(key)
    return obj


def _constant(name: str) -> _Refused:
    _parse.refused = True
    return _Refused(f"non-finite number {name} is not allowed")


def _number(literal: str) -> float | _Refused:
    value = float(literal)
    if math.isfinite(value):
        return value
    _parse.refused = True
    return _Refused(f"number {literal} is too large (overflows to infinity)")


def _integer(literal: str) -> int | _Refused:
    try:
        return int(literal)
    except ValueError:  # more digits than int() converts (sys.int_info)
        _parse.refused = True
        return _Refused(f"integer with {len(literal)} digits is too large")


# json.loads with hooks builds a decoder on every call; a suite parses thousands.
_decoder = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_number, parse_int=_integer
)


def loads(text: str) -> Any:
    """Parse ``text`` as strict JSON. Raises :class:`StrictJSONError`."""
    _parse.refused = False
    try:
        data = _decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise StrictJSONError(
            (), f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise StrictJSONError((), "not valid JSON: nested too deeply") from None
    # A lone surrogate comes from a \u escape, or from text that was never UTF-8
    # (a str handed in directly); only then is the parsed tree searched. The cheap
    # tests first: a substring search, and isascii(), which reads a flag of the str.
    if ("\\u" in text and _SURROGATE_ESCAPE.search(text)) or (
        not text.isascii() and _SURROGATE.search(text)
    ):
        _refuse_lone_surrogates(data)  # first: later messages may quote keys
    if _parse.refused:
        path, marker = _find_refused(data)
        if not marker.of_object:
            raise StrictJSONError(path, marker.message)
        # "expects: duplicate key "expects"" would read as a key inside expects.
        where = path[:-1]
        raise StrictJSONError(where, marker.message + ("" if where else " at the top level"))
    return data


Path = tuple[str | int, ...]


def _nodes(data: Any) -> Iterator[tuple[Path, Any, bool]]:
    """``(path, node, is_key)`` for every value and key, in document order.

    Depth-first; an object's keys come right after the object itself, with its
    path, before any of its values.
    """
    stack: list[tuple[Any, Path]] = [(data, ())]
    while stack:
        current, where = stack.pop()
        yield where, current, False
        if isinstance(current, dict):
            yield from ((where, key, True) for key in current)
            stack.extend(reversed([(child, (*where, key)) for key, child in current.items()]))
        elif isinstance(current, list):
            stack.extend(reversed([(child, (*where, i)) for i, child in enumerate(current)]))


def _refuse_lone_surrogates(data: Any) -> None:
    """Raise for the first string (key or value) that still holds a surrogate.

    Escaped pairs (``"\\ud83d\\ude00"``) decode to one character; what is left in
    the surrogate range is a lone half, which no UTF-8 report can carry. Keys are
    checked before their values, so a path never holds a surrogate itself.
    """
    for where, node, is_key in _nodes(data):
        found = _SURROGATE.search(node) if isinstance(node, str) else None
        if found is None:
            continue
        if is_key:
            raise StrictJSONError(where, f"key {json.dumps(node)} holds a lone surrogate")
        raise StrictJSONError(where, f"string holds a lone surrogate \\u{ord(found[0]):04x}")


def _find_refused(data: Any) -> tuple[Path, _Refused]:
    """The first refused value in document order."""
    for where, node, _ in _nodes(data):
        if isinstance(node, _Refused):
            return where, node
    raise AssertionError("a refused value was flagged but not found")  # pragma: no cover
