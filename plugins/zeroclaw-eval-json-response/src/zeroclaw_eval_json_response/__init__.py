"""The ``response_json`` expectation family: the final response, read as JSON.

``"response_json": {"/status": "ok", "/items/0/id": 7}`` passes when the final
response parses as JSON (or, failing that, its first fenced ```` ```json ````
block does) and the value at each JSON pointer (RFC 6901) equals the expected
value. Each pointer is one check. Equality is JSON's: ``true`` is not ``1``, and
``1`` equals ``1.0``.

Admission is the harness's own: the map is validated strictly, an empty map is
refused, and :meth:`ResponseJson.rules` refuses a key that is not a JSON pointer.
Expected values may be empty strings (``"/note": ""`` is a real assertion), so
this family turns off the harness's empty-string rule and checks its keys itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any

from pydantic import Field, JsonValue

from zeroclaw_eval import CheckResult, Family, Problem, RunRecord, hookimpl
from zeroclaw_eval.report.model import shorten
from zeroclaw_eval.util.strictjson import StrictJSONError, loads

__all__ = ["PointerMap", "ResponseJson", "json_equal", "parse_response", "resolve"]

PointerMap = Annotated[dict[str, JsonValue], Field(min_length=1)]
"""The parameters: JSON pointer -> expected JSON value; at least one entry."""

# The first fenced block tagged json: models often wrap JSON in prose.
_FENCE = re.compile(r"```json[ \t]*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)
_INDEX = re.compile(r"0|[1-9][0-9]*")
_BAD_ESCAPE = re.compile(r"~(?![01])")


def parse_response(text: str) -> Any:
    """The response as JSON, else its first ```` ```json ```` block as JSON.

    Strict JSON: duplicate keys and ``NaN`` are refused. Raises :class:`ValueError`
    saying why neither could be read.
    """
    try:
        return loads(text)
    except StrictJSONError as whole:
        match = _FENCE.search(text)
        if match is None:
            raise ValueError(
                f"the final response is not JSON ({whole.message}) and has no ```json block: "
                f"{shorten(text)}"
            ) from None
        try:
            return loads(match.group(1))
        except StrictJSONError as block:
            raise ValueError(
                f"the first ```json block of the final response is not JSON ({block.message}): "
                f"{shorten(match.group(1))}"
            ) from None


def resolve(document: Any, pointer: str) -> Any:
    """The value at ``pointer`` (RFC 6901). Raises :class:`LookupError` naming the
    deepest part of the pointer that does exist.
    """
    current = document
    walked = ""
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        here = walked or "the document"
        if isinstance(current, dict):
            if key not in current:
                keys = ", ".join(json.dumps(k, ensure_ascii=False) for k in sorted(current))
                raise LookupError(f"{here} has no key {json.dumps(key)} (keys: {keys or 'none'})")
            current = current[key]
        elif isinstance(current, list):
            if not _INDEX.fullmatch(key) or int(key) >= len(current):
                raise LookupError(f"{here} is an array of {len(current)} items; no item {key!r}")
            current = current[int(key)]
        else:
            raise LookupError(f"{here} is {_compact(current)}, not an object or an array")
        walked += "/" + token
    return current


def json_equal(left: Any, right: Any) -> bool:
    """Equality of JSON values: a boolean is never a number, ``1`` equals ``1.0``."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(json_equal, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    return type(left) is type(right) and left == right


def _compact(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 120 else text[:116] + "..."


class ResponseJson(Family[dict[str, Any]]):
    """Each JSON pointer into the final response holds the expected value."""

    name = "response_json"
    params = PointerMap
    description = "each JSON pointer into the final response (as JSON) holds the expected value"
    # "" is a legitimate expected value; the keys are checked by rules() instead.
    allow_empty_strings = True

    def rules(self, params: dict[str, Any], expects: Mapping[str, Any]) -> Iterable[Problem]:
        for pointer in params:
            if not pointer.startswith("/"):
                yield Problem(
                    (pointer,),
                    'not a JSON pointer: it must start with "/" (e.g. "/status")',
                )
            elif _BAD_ESCAPE.search(pointer):
                yield Problem(
                    (pointer,),
                    'not a JSON pointer: "~" must be followed by 0 or 1 ("~0" is "~", "~1" is "/")',
                )

    def grade(self, params: dict[str, Any], run: RunRecord) -> list[CheckResult]:
        checks = [f"{self.name}: {pointer}" for pointer in params]
        final = run.final_response
        if final is None:
            return [CheckResult(check, False, "there is no final response") for check in checks]
        try:
            document = parse_response(final)
        except ValueError as exc:
            return [CheckResult(check, False, str(exc)) for check in checks]
        results = []
        for check, (pointer, expected) in zip(checks, params.items(), strict=True):
            try:
                found = resolve(document, pointer)
            except LookupError as exc:
                results.append(CheckResult(check, False, f"not found: {exc}"))
                continue
            if json_equal(found, expected):
                results.append(CheckResult(check, True, f"{pointer} is {_compact(found)}"))
            else:
                detail = f"expected {_compact(expected)}, found {_compact(found)}"
                results.append(CheckResult(check, False, detail))
        return results


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    register(ResponseJson())
