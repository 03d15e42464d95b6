"""How a strict-validation error reads: one phrase shared by fixtures and configuration.

Strict mode never coerces, so a type error always means the file holds the wrong
kind of value; saying which kind was expected and which was found is clearer
than pydantic's generic wording. Used by admission (fixtures) and by
configuration (the ``[eval]`` table), so the two speak alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic_core import ErrorDetails

MISSING: Any = object()
"""Stands for a value absent from the document (a missing key)."""

_PHRASES = {
    "extra_forbidden": "unknown key",
    "missing": "required key is missing",
    "union_tag_not_found": "required key 'type' is missing ('text' or 'tool_calls')",
}

_EXPECTED_KIND = {
    "int_type": "an integer",
    "bool_type": "a boolean (true or false)",
    "string_type": "a string",
    "float_type": "a number",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dataclass_type": "an object",
}


def describe(error: ErrorDetails, value: Any) -> str:
    """What is wrong, for one pydantic error about ``value`` (or :data:`MISSING`)."""
    kind = error["type"]
    if kind in _EXPECTED_KIND and value is not MISSING:
        return f"must be {_EXPECTED_KIND[kind]}, not {kind_of(value)}"
    if kind in ("too_short", "string_too_short") and value in ([], {}, ""):
        return "must not be empty"
    if kind == "value_error" and "error" in error.get("ctx", {}):
        return str(error["ctx"]["error"])  # a validator's own sentence, without pydantic's prefix
    phrase = _PHRASES.get(kind)
    if phrase is not None:
        return phrase
    message = error["msg"]
    return message[:1].lower() + message[1:]


def shown(value: Any) -> str | None:
    """The value for ``field=value``: scalars as JSON, cut short; containers are not shown."""
    if value is MISSING or isinstance(value, (dict, list)):
        return None
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:56] + '..."'


def kind_of(value: Any) -> str:
    """The JSON kind of a parsed value, with its article: ``an array``, ``null``."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def dotted(path: Iterable[str | int]) -> str:
    """A field path as messages write it: ``expects.tool_arguments_contain[1].needle``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not _plain_key(part):
            # Quoted, so that an empty key stays visible and a newline in a key
            # cannot break the one-line message.
            text += f"[{json.dumps(part, ensure_ascii=not part.isprintable())}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _plain_key(key: str) -> bool:
    return bool(key) and key.isprintable() and not any(c in key for c in ' .[]="\\:')
