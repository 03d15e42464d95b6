"""JSON parsing that refuses what ``json.loads`` lets through silently.

Duplicate keys (the last one would win, hiding the first), non-finite numbers
(``NaN``, ``Infinity``, or ``1e999``, which overflows to infinity), integers too
long for Python to convert, and strings holding a lone surrogate (``"\\ud800"``:
not Unicode text, and unprintable as UTF-8) are refused with the path of the
offending value, so the error can name the field.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# A lone surrogate in the parsed tree comes from a ``\\uD800``-``\\uDFFF`` escape
# or from the text itself (not when it was decoded from UTF-8, which refuses them):
# only then is the tree searched.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class StrictJSONError(ValueError):
    """The text is not JSON, or holds something strict JSON refuses.

    ``path`` locates the offending value (empty when the text itself is broken).
    """

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(message)


class _Refused:
    """Left in the parsed tree where a refused value stood, to locate it afterwards."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


def loads(text: str) -> Any:
    """Parse ``text`` as strict JSON. Raises :class:`StrictJSONError`."""
    refused = False

    def pairs(items: list[tuple[str, Any]]) -> dict[Any, Any]:
        nonlocal refused
        obj: dict[Any, Any] = dict(items)
        if len(obj) != len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    refused = True
                    obj[key] = _Refused(f"duplicate key {json.dumps(key, ensure_ascii=False)}")
                    break
                seen.add(key)
        return obj

    def constant(name: str) -> _Refused:
        nonlocal refused
        refused = True
        return _Refused(f"non-finite number {name} is not allowed")

    def number(literal: str) -> float | _Refused:
        value = float(literal)
        if math.isfinite(value):
            return value
        nonlocal refused
        refused = True
        return _Refused(f"number {literal} is too large (overflows to infinity)")

    def integer(literal: str) -> int | _Refused:
        try:
            return int(literal)
        except ValueError:  # longer than sys.get_int_max_str_digits()
            nonlocal refused
            refused = True
            return _Refused(f"integer of {len(literal)} digits is too large")

    try:
        data = json.loads(
            text,
            object_pairs_hook=pairs,
            parse_constant=constant,
            parse_float=number,
            parse_int=integer,
        )
    except json.JSONDecodeError as exc:
        raise StrictJSONError(
            (), f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise StrictJSONError((), "not valid JSON: nested too deeply") from None
    if refused:
        path, marker = _find_refused(data, ())
        raise StrictJSONError(path, marker.message)
    if _SURROGATE_ESCAPE.search(text) or not _is_text(text):
        _refuse_lone_surrogates(data)
    return data


def _refuse_lone_surrogates(data: Any) -> None:
    """Raise for the first string (key or value) that is not valid Unicode text."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while stack:
        current, where = stack.pop()
        children: list[tuple[Any, tuple[str | int, ...]]] = []
        if isinstance(current, dict):
            for key, child in current.items():
                if not _is_text(key):
                    raise StrictJSONError(where, "a key holds a lone surrogate (not Unicode text)")
                children.append((child, (*where, key)))
        elif isinstance(current, list):
            children = [(child, (*where, index)) for index, child in enumerate(current)]
        elif isinstance(current, str) and not _is_text(current):
            raise StrictJSONError(where, "holds a lone surrogate (not Unicode text)")
        stack.extend(reversed(children))


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _find_refused(
    value: Any, path: tuple[str | int, ...]
) -> tuple[tuple[str | int, ...], _Refused]:
    """The first refused value in document order (depth-first)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, path)]
    while stack:
        current, where = stack.pop()
        if isinstance(current, _Refused):
            return where, current
        children: list[tuple[Any, tuple[str | int, ...]]] = []
        if isinstance(current, dict):
            children = [(child, (*where, key)) for key, child in current.items()]
        elif isinstance(current, list):
            children = [(child, (*where, index)) for index, child in enumerate(current)]
        stack.extend(reversed(children))
    raise AssertionError("a refused value was flagged but not found")  # pragma: no cover
