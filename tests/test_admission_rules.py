"""Each admission rule, shown refusing one hostile fixture with the file and the field.

One row per rule of the contract (SPEC section 7) and per refusal the replay mode
adds: a fixture that is valid but for one thing, and the start of the one-line
error it must get. Wording after the field may be improved freely; the file, the
field and the fact of the refusal may not.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from zeroclaw_eval import AdmissionError, Registry, RunMode
from zeroclaw_eval.admission import admit_text

from .conftest import echo_case

SOURCE = "evals/hostile.json"


def response(step: int = 1, **fields: Any) -> dict[str, Any]:
    """A case whose scripted response ``step`` (0: tool calls, 1: text) has ``fields`` set."""
    case = echo_case()
    case["turns"][0]["steps"][step]["response"].update(fields)
    return case


def expects(**families: Any) -> dict[str, Any]:
    return echo_case(expects=families)


ECHO = {"tool": "echo", "needle": "hello"}

RULES: list[tuple[str, str | dict[str, Any], str]] = [
    # 1. not JSON, duplicate keys, non-finite numbers, wrong types, negative counts
    ("invalid-json", '{"model_name": ', "not valid JSON"),
    (
        "duplicate-key",
        json.dumps(echo_case()).replace('"model_name"', '"model_name": "x", "model_name"'),
        'model_name: duplicate key "model_name"',
    ),
    (
        "nan",
        json.dumps(response(input_tokens=1)).replace('"input_tokens": 1', '"input_tokens": NaN'),
        "turns[0].steps[1].response.input_tokens: non-finite number NaN",
    ),
    (
        "overflow",
        json.dumps(response(input_tokens=1)).replace('"input_tokens": 1', '"input_tokens": 1e999'),
        "turns[0].steps[1].response.input_tokens: number 1e999 is too large",
    ),
    ("count-as-string", expects(exact_tool_calls="1"), 'expects.exact_tool_calls="1": '),
    ("count-as-bool", expects(exact_tool_calls=True), "expects.exact_tool_calls=true: "),
    ("count-as-float", expects(exact_tool_calls=1.0), "expects.exact_tool_calls=1.0: "),
    ("negative-count", expects(max_tool_calls=-1), "expects.max_tool_calls=-1: "),
    (
        "negative-tokens",
        response(output_tokens=-5),
        "turns[0].steps[1].response.output_tokens=-5: ",
    ),
    ("model-name-as-number", echo_case(model_name=7), "model_name=7: "),
    # 2. unknown keys at every level
    ("unknown-top-level-key", echo_case(extra=1), "extra=1: unknown key"),
    (
        "unknown-family",
        expects(response_contain=["hello"]),
        "expects.response_contain: unknown key: no such expectation family",
    ),
    ("unknown-nested-key", response(colour="red"), 'turns[0].steps[1].response.colour="red": '),
    (
        "unknown-entry-key",
        expects(tool_results_contain=[{**ECHO, "neede": "x"}]),
        'expects.tool_results_contain[0].neede="x": unknown key',
    ),
    # 3. no turns
    ("no-turns", echo_case(turns=[]), "turns: "),
    ("turns-missing", {k: v for k, v in echo_case().items() if k != "turns"}, "turns: "),
    # 4. nothing that could fail
    ("expects-missing", {k: v for k, v in echo_case().items() if k != "expects"}, "expects: "),
    ("expects-empty", expects(), "expects: declares no expectation"),
    (
        "expects-all-empty-lists",
        expects(response_contains=[], tools_used=[]),
        "expects: declares nothing that would produce a check",
    ),
    # 5. zero-length entries in string families
    ("empty-response-needle", expects(response_contains=[""]), 'expects.response_contains[0]="": '),
    (
        "empty-forbidden",
        expects(response_not_contains=[""]),
        'expects.response_not_contains[0]="": ',
    ),
    ("empty-regex", expects(response_matches=[""]), 'expects.response_matches[0]="": '),
    ("empty-tool-name", expects(tools_used=[""]), 'expects.tools_used[0]="": '),
    ("empty-unused-tool", expects(tools_not_used=[""]), 'expects.tools_not_used[0]="": '),
    # 6. boundary entries with an empty tool or needle
    (
        "empty-boundary-tool",
        expects(tool_arguments_contain=[{**ECHO, "tool": ""}]),
        'expects.tool_arguments_contain[0].tool="": ',
    ),
    (
        "empty-boundary-needle",
        expects(tool_results_contain=[{**ECHO, "needle": ""}]),
        'expects.tool_results_contain[0].needle="": ',
    ),
    # 7. a tautological lower bound
    ("min-zero", expects(min_tool_calls=0), "expects.min_tool_calls=0: a lower bound of 0"),
    # 8. contradictory bounds
    (
        "min-above-max",
        expects(min_tool_calls=3, max_tool_calls=1),
        "expects.max_tool_calls=1: contradicts min_tool_calls",
    ),
    (
        "exact-above-max",
        expects(exact_tool_calls=2, max_tool_calls=1),
        "expects.exact_tool_calls=2: contradicts max_tool_calls=1",
    ),
    (
        "unreachable-call-index",
        expects(exact_tool_calls=1, tool_results_contain=[{**ECHO, "call_index": 3}]),
        "expects.exact_tool_calls=1: contradicts tool_results_contain echo[3]",
    ),
    (
        "forbidden-and-required",
        expects(response_contains=["hello"], response_not_contains=["hell"]),
        'expects.response_not_contains[0]="hell": contradicts response_contains',
    ),
    # 9. a regex that does not compile
    (
        "bad-regex",
        expects(response_matches=["(unclosed"]),
        'expects.response_matches[0]="(unclosed": not a valid regular expression',
    ),
    (
        "regex-repeat-too-large",
        expects(response_matches=["a{99999999999}"]),
        'expects.response_matches[0]="a{99999999999}": not a valid regular expression: '
        "the repetition number is too large",
    ),
    (
        "regex-nested-too-deeply",
        expects(response_matches=["(" * 2000 + "a" + ")" * 2000]),
        'expects.response_matches[0]="' + "(" * 55 + '...": not a valid regular expression',
    ),
    # replay: every turn needs its script
    (
        "turn-without-steps",
        echo_case(turns=[{"user_input": "hi"}]),
        "turns[0].steps: replay needs at least one scripted step",
    ),
    ("empty-tool-calls", response(0, tool_calls=[]), "turns[0].steps[0].response.tool_calls"),
    ("unknown-response-type", response(type="image"), "turns[0].steps[1].response"),
    ("not-an-object", "[1, 2]", "a fixture must be a JSON object"),
]


@pytest.mark.parametrize(("fixture", "expected"), [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_admission_refuses_naming_the_file_and_the_field(
    fixture: str | dict[str, Any], expected: str, registry: Registry, replay: RunMode
) -> None:
    text = fixture if isinstance(fixture, str) else json.dumps(fixture)
    with pytest.raises(AdmissionError) as refused:
        admit_text(text, registry, replay, source=SOURCE)
    message = str(refused.value)
    assert message.startswith(f"{SOURCE}: {expected}"), message
    assert len(message.splitlines()) == 1
