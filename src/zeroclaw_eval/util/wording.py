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


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``" (did you mean 'response_contains'?)"`` when ``word`` is close to one of
    ``known`` (a misspelt key), else ``""``. For error messages only: it imports
    :mod:`difflib`, which no valid file needs."""
    from difflib import get_close_matches

    close = get_close_matches(word, [str(key) for key in known], n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def model_keys(root: Any, path: Iterable[str | int]) -> list[str]:
    """The keys the model found by following ``path`` (a validation error's location,
    union tags included) from the type ``root`` accepts: the keys an unknown key at
    ``path`` could have been meant as. Empty when the path leads to no model."""
    import typing

    from pydantic import BaseModel

    current: Any = root
    for part in path:
        current = _model_of(current, part, typing)
        if current is None:
            return []
    while True:  # the model itself may sit under Annotated or Optional
        inner = _unwrapped(current, typing)
        if inner is current:
            break
        current = inner
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _unwrapped(kind: Any, typing: Any) -> Any:
    """``kind`` without ``Annotated`` and without a ``None`` alternative."""
    origin = typing.get_origin(kind)
    if origin is typing.Annotated:
        return typing.get_args(kind)[0]
    if origin in (typing.Union, _union_type()):
        options = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        if len(options) == 1:
            return options[0]
    return kind


def _union_type() -> Any:
    import types

    return getattr(types, "UnionType", None)


def _model_of(kind: Any, part: str | int, typing: Any) -> Any:
    """The type one step of a location leads to from ``kind``, or ``None``."""
    from pydantic import BaseModel

    while (inner := _unwrapped(kind, typing)) is not kind:
        kind = inner
    origin = typing.get_origin(kind)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        field = kind.model_fields.get(str(part))
        return None if field is None else field.annotation
    if origin in (list, tuple) and isinstance(part, int):
        args = typing.get_args(kind)
        return args[0] if args else None
    if origin in (typing.Union, _union_type()):
        # The location names the member: by its tag (a discriminated union on
        # ``type``), else by its class name.
        for option in typing.get_args(kind):
            option = _unwrapped(option, typing)
            if isinstance(option, type) and issubclass(option, BaseModel):
                tag = option.model_fields.get("type")
                if option.__name__ == part or (
                    tag is not None and part in typing.get_args(tag.annotation)
                ):
                    return option
    return None


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
