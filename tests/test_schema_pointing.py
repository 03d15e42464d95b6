"""The fixture schema points an editor at the bad key, not at the array around it.

A discriminated union (a response's ``type``) used to be a ``oneOf`` under an
``anyOf`` with null, so a typo anywhere in a step was reported on the whole
``turns/0/steps`` array as "not valid under any of the given schemas". Checked
with ``jsonschema``'s best match, as editors pick the error to underline.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest

from .conftest import zeroclaw

TOOL_STEP = {
    "response": {
        "type": "tool_calls",
        "tool_calls": [{"id": "call_1", "name": "echo", "arguments": {"message": "hi"}}],
    }
}
TEXT_STEP = {"response": {"type": "text", "content": "The echo said: hi"}}
CASE = {
    "model_name": "typos",
    "turns": [{"user_input": "Echo hi", "steps": [TOOL_STEP, TEXT_STEP]}],
    "expects": {"response_contains": ["hi"]},
}


def renamed(path: tuple[Any, ...], old: str, new: str) -> Callable[[dict[str, Any]], None]:
    def change(case: dict[str, Any]) -> None:
        node: Any = case
        for part in path:
            node = node[part]
        node[new] = node.pop(old)

    return change


def set_to(path: tuple[Any, ...], key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(case: dict[str, Any]) -> None:
        node: Any = case
        for part in path:
            node = node[part]
        node[key] = value

    return change


RESPONSE_0 = ("turns", 0, "steps", 0, "response")
RESPONSE_1 = ("turns", 0, "steps", 1, "response")

# typo -> (where the best error is, words of its message)
TYPOS = {
    "argumnets": (
        renamed((*RESPONSE_0, "tool_calls", 0), "arguments", "argumnets"),
        "turns/0/steps/0/response/tool_calls/0",
        "'argumnets' was unexpected",
    ),
    "type txt": (
        set_to(RESPONSE_1, "type", "txt"),
        "turns/0/steps/1/response/type",
        "'txt' is not one of ['http_error', 'text', 'tool_calls']",
    ),
    "contnet": (
        renamed(RESPONSE_1, "content", "contnet"),
        "turns/0/steps/1/response",
        "'contnet' was unexpected",
    ),
    "tool_call": (
        renamed(RESPONSE_0, "tool_calls", "tool_call"),
        "turns/0/steps/0/response",
        "'tool_call' was unexpected",
    ),
    "tokens as text": (
        set_to(RESPONSE_1, "input_tokens", "12"),
        "turns/0/steps/1/response/input_tokens",
        "'12' is not of type 'integer'",
    ),
    "stpes": (renamed(("turns", 0), "steps", "stpes"), "turns/0", "'stpes' was unexpected"),
}


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    result = zeroclaw("eval", "schema")
    assert result.returncode == 0, result.stderr
    return jsonschema.Draft202012Validator(json.loads(result.stdout))


def test_the_typo_free_case_is_valid(validator: jsonschema.protocols.Validator) -> None:
    assert list(validator.iter_errors(CASE)) == []


@pytest.mark.parametrize("typo", sorted(TYPOS))
def test_a_typo_is_reported_at_its_key(
    validator: jsonschema.protocols.Validator, typo: str
) -> None:
    change, where, message = TYPOS[typo]
    case = copy.deepcopy(CASE)
    change(case)
    error = jsonschema.exceptions.best_match(validator.iter_errors(case))
    assert error is not None
    assert "/".join(map(str, error.absolute_path)) == where
    assert message in error.message
