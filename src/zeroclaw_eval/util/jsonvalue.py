"""JSON values compared as JSON: equality, partial containment, RFC 6901 pointers.

Values are compared after decoding, never as text: key order and spacing do not
matter, ``1`` equals ``1.0`` (JSON has one number type), and ``true`` is not ``1``
(Python's ``True == 1`` is not JSON's).
"""

from __future__ import annotations

import json
from typing import Any

MISSING: Any = object()
"""Stands for a value a pointer does not reach (a missing key or index)."""


def equal(expected: Any, actual: Any) -> bool:
    """Whether two decoded JSON values are the same JSON value."""
    # Python's own comparison rejects almost every mismatch at C speed; only a
    # value it calls equal is walked again, to tell booleans from numbers.
    return bool(expected == actual) and _same_kinds(expected, actual)


def _same_kinds(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b)
    if isinstance(a, dict):
        return all(_same_kinds(value, b[key]) for key, value in a.items())
    if isinstance(a, list):
        return all(_same_kinds(x, y) for x, y in zip(a, b, strict=True))
    return True


def contains(expected: Any, actual: Any) -> bool:
    """Partial match: every key of an expected object is in the actual one with a
    value that partially matches, recursively; arrays match element by element and
    must have the same length; anything else must be :func:`equal`."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and contains(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(contains(x, y) for x, y in zip(expected, actual, strict=True))
        )
    return equal(expected, actual)


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """The reference tokens of a JSON pointer (RFC 6901). Raises :class:`ValueError`
    saying what is wrong: a pointer is ``""`` or starts with ``/``, and ``~`` is only
    ever followed by ``0`` or ``1``."""
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise ValueError(f"{pointer!r} is not a JSON pointer: it must start with '/'")
    tokens = pointer[1:].split("/")
    for token in tokens:
        # Each '~' begins an escape, read left to right: in "~~01" the first '~' is
        # followed by '~', which deleting "~0" and "~1" first would hide.
        if any(escape[:1] not in ("0", "1") for escape in token.split("~")[1:]):
            raise ValueError(
                f"{pointer!r} is not a JSON pointer: '~' must be followed by 0 or 1 ('~0', '~1')"
            )
    return tuple(token.replace("~1", "/").replace("~0", "~") for token in tokens)


def resolve(document: Any, tokens: tuple[str, ...]) -> Any:
    """The value ``tokens`` point at in ``document``, or :data:`MISSING`."""
    current = document
    for token in tokens:
        if isinstance(current, dict):
            current = current.get(token, MISSING)
        elif isinstance(current, list) and _is_index(token) and int(token) < len(current):
            current = current[int(token)]
        else:
            return MISSING
        if current is MISSING:
            return MISSING
    return current


def _is_index(token: str) -> bool:
    return token.isdigit() and token.isascii() and (token == "0" or not token.startswith("0"))


def follow(document: Any, path: tuple[str | int, ...]) -> Any:
    """The value at a path of keys and indexes, or :data:`MISSING`."""
    current = document
    for part in path:
        if isinstance(current, dict) and isinstance(part, str):
            current = current.get(part, MISSING)
        elif isinstance(current, list) and isinstance(part, int) and part < len(current):
            current = current[part]
        else:
            return MISSING
        if current is MISSING:
            return MISSING
    return current


def scalar_key(value: Any) -> Any:
    """A hashable key under which two scalars are :func:`equal` exactly when their
    keys are equal (a boolean is kept apart from the number it equals in Python);
    ``None`` for a value that is not a scalar."""
    if isinstance(value, (dict, list)) or value is MISSING:
        return None
    return (type(value) is bool, value)


def pointer(tokens: tuple[str | int, ...]) -> str:
    """The JSON pointer of a path of keys and indexes."""
    return "".join("/" + str(token).replace("~", "~0").replace("/", "~1") for token in tokens)


def show(value: Any, limit: int = 60) -> str:
    """A value as a detail quotes it: compact JSON, cut short."""
    if value is MISSING:
        return "nothing"
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."
