"""Every field constraint of the fixture format, on every response shape that has it.

A constraint tested through one copy of a field (the text response's
``input_tokens``, say) says nothing about the other copy (the tool-calls
response's): each is pinned here on its own, with the whole one-line message a
fixture's author reads. The values at the edge of each constraint are admitted,
and an omitted field reads as its documented default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from zeroclaw_eval import AdmissionError, Registry, RunMode
from zeroclaw_eval.case.admission import Case, admit_data
from zeroclaw_eval.case.fixture import LlmTrace, TextResponse, ToolCallsResponse

from .conftest import echo_case

SOURCE = "suite/case.json"
SHAPES = {"tool_calls": 0, "text": 1}  # the echo case's step of each response shape


def response(case: dict[str, Any], shape: str) -> dict[str, Any]:
    found: dict[str, Any] = case["turns"][0]["steps"][SHAPES[shape]]["response"]
    return found


def admitted(
    registry: Registry, replay: RunMode, change: Callable[[dict[str, Any]], object]
) -> Case:
    case = echo_case()
    change(case)
    return admit_data(case, registry, replay, source=SOURCE)


def refused(registry: Registry, replay: RunMode, change: Callable[[dict[str, Any]], object]) -> str:
    with pytest.raises(AdmissionError) as error:
        admitted(registry, replay, change)
    assert error.value.more == ()
    return str(error.value)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(
    ("key", "value", "shown", "message"),
    [
        ("input_tokens", -1, "-1", "input should be greater than or equal to 0"),
        ("output_tokens", -1, "-1", "input should be greater than or equal to 0"),
        ("input_tokens", "1", '"1"', "must be an integer, not a string"),
        ("output_tokens", 1.5, "1.5", "must be an integer, not a number"),
        ("model", "", '""', "must not be empty"),
        ("bogus", 1, "1", "unknown key"),
    ],
    ids=[
        "negative-input",
        "negative-output",
        "string-count",
        "float-count",
        "empty-model",
        "extra",
    ],
)
def test_each_response_shape_refuses_a_bad_field(
    registry: Registry,
    replay: RunMode,
    shape: str,
    key: str,
    value: Any,
    shown: str,
    message: str,
) -> None:
    line = refused(registry, replay, lambda case: response(case, shape).update({key: value}))
    step = SHAPES[shape]
    assert line == f"{SOURCE}: turns[0].steps[{step}].response.{key}={shown}: {message}"


@pytest.mark.parametrize("shape", SHAPES)
def test_each_response_shape_admits_the_edges_and_defaults(
    registry: Registry, replay: RunMode, shape: str
) -> None:
    edges = {"input_tokens": 0, "output_tokens": 0, "model": "m"}
    case = admitted(registry, replay, lambda c: response(c, shape).update(edges))
    model = case.trace.turns[0].steps[SHAPES[shape]].response  # type: ignore[index]
    assert (model.input_tokens, model.output_tokens, model.model) == (0, 0, "m")

    plain = admitted(registry, replay, lambda c: None)
    default = plain.trace.turns[0].steps[SHAPES[shape]].response  # type: ignore[index]
    assert (default.input_tokens, default.output_tokens, default.model) == (0, 0, None)


def test_the_model_defaults_are_those_of_the_classes() -> None:
    text = TextResponse(type="text", content="hi")
    assert (text.input_tokens, text.output_tokens, text.model, text.refusal) == (0, 0, None, None)
    calls = ToolCallsResponse(
        type="tool_calls", tool_calls=[{"id": "c", "name": "echo", "arguments": {}}]
    )
    assert (calls.input_tokens, calls.output_tokens, calls.model, calls.content) == (
        0,
        0,
        None,
        None,
    )


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (
            lambda c: response(c, "tool_calls")["tool_calls"][0].update(id=""),
            'turns[0].steps[0].response.tool_calls[0].id="": must not be empty',
        ),
        (
            lambda c: response(c, "tool_calls")["tool_calls"][0].update(name=""),
            'turns[0].steps[0].response.tool_calls[0].name="": must not be empty',
        ),
        (
            lambda c: response(c, "tool_calls")["tool_calls"][0].update(bogus=1),
            "turns[0].steps[0].response.tool_calls[0].bogus=1: unknown key",
        ),
        (
            lambda c: response(c, "tool_calls").update(tool_calls=[]),
            "turns[0].steps[0].response.tool_calls: must not be empty",
        ),
        (lambda c: c.update(turns=[]), "turns: must not be empty"),
        (lambda c: c["turns"][0].update(bogus=1), "turns[0].bogus=1: unknown key"),
        (
            lambda c: c["turns"][0]["steps"][0].update(bogus=1),
            "turns[0].steps[0].bogus=1: unknown key",
        ),
        (lambda c: c.update(bogus=1), "bogus=1: unknown key"),
        (lambda c: c.update(model_name=""), 'model_name="": must not be empty'),
        (lambda c: c.update({"$schema": 1}), "$schema=1: must be a string (the schema's URL)"),
    ],
    ids=[
        "empty-call-id",
        "empty-call-name",
        "extra-in-call",
        "no-tool-calls",
        "no-turns",
        "extra-in-turn",
        "extra-in-step",
        "extra-at-top",
        "empty-model-name",
        "schema-not-a-string",
    ],
)
def test_the_other_models_refuse_a_bad_field(
    registry: Registry, replay: RunMode, change: Callable[[dict[str, Any]], object], line: str
) -> None:
    assert refused(registry, replay, change) == f"{SOURCE}: {line}"


def test_a_schema_url_is_admitted_and_ignored(registry: Registry, replay: RunMode) -> None:
    url = "https://example.com/fixture.schema.json"
    case = admitted(registry, replay, lambda c: c.update({"$schema": url}))
    assert case.trace == admitted(registry, replay, lambda c: None).trace


def test_an_admitted_trace_cannot_be_changed(registry: Registry, replay: RunMode) -> None:
    case = admitted(registry, replay, lambda c: None)
    with pytest.raises(ValidationError):
        case.trace.model_name = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        case.trace.turns[0].user_input = "other"  # type: ignore[misc]


def test_the_public_models_are_strict_without_being_asked() -> None:
    # Plugins and scripts validate fixtures with these models directly, not only
    # through admission (which also passes strict=True): no coercion either way.
    data = echo_case()
    data["turns"][0]["steps"][1]["response"]["input_tokens"] = "1"
    with pytest.raises(ValidationError) as refused:
        LlmTrace.model_validate(data)
    assert [error["loc"] for error in refused.value.errors()] == [
        ("turns", 0, "steps", 1, "response", "text", "input_tokens")
    ]
    with pytest.raises(ValidationError):
        TextResponse.model_validate({"type": "text", "content": 1})


REQUEST = {
    "history": 0,
    "messages": [{"role": "user", "content": "Hi"}],
    "tools": {"echo": {"description": "Echo", "parameters": {"type": "object"}}},
    "settings": {"temperature": 0},
}


def trace_with(turns: list[dict[str, Any]]) -> LlmTrace:
    return LlmTrace.model_validate({"model_name": "m", "turns": turns, "expects": {}})


def test_a_stored_request_is_read_back_as_written_and_only_where_stored() -> None:
    text = {"response": {"type": "text", "content": "hello"}}
    trace = trace_with(
        [
            {"user_input": "Hi", "steps": [{**text, "request": REQUEST}, text]},
            {"user_input": "Again", "steps": [{**text, "request": {"history": 2}}]},
            {"user_input": "Live"},  # no steps: a turn a live run answers
        ]
    )
    assert trace.stores_requests is True
    assert trace.stored_requests() == [
        (0, 0, REQUEST),
        (0, 1, None),
        (1, 0, {"history": 2, "messages": []}),  # tools and settings: the previous ones
    ]


def test_a_trace_without_stored_requests_says_so() -> None:
    text = {"response": {"type": "text", "content": "hello"}}
    trace = trace_with([{"user_input": "Hi", "steps": [text]}, {"user_input": "Live"}])
    assert trace.stores_requests is False
    assert trace.stored_requests() == [(0, 0, None)]


def test_a_stored_request_shares_no_history_unless_it_says_so() -> None:
    text = {"response": {"type": "text", "content": "hello"}}
    step = {**text, "request": {"messages": [{"role": "user", "content": "Hi"}]}}
    trace = trace_with([{"user_input": "Hi", "steps": [step]}])
    assert trace.stored_requests() == [
        (0, 0, {"history": 0, "messages": [{"role": "user", "content": "Hi"}]})
    ]


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (
            lambda case: case["turns"][0]["steps"][0].update({"request": {"history": -1}}),
            "turns[0].steps[0].request.history=-1: input should be greater than or equal to 0",
        ),
        (
            lambda case: case.update({"drift_ignore": [""]}),
            'drift_ignore[0]="": must not be empty',
        ),
    ],
    ids=["negative-history", "empty-ignored-path"],
)
def test_the_recorded_request_fields_refuse_what_cannot_be(
    registry: Registry, replay: RunMode, change: Callable[[dict[str, Any]], object], line: str
) -> None:
    assert refused(registry, replay, change) == f"{SOURCE}: {line}"


def test_a_scripted_tool_result_succeeds_unless_it_says_it_erred(
    registry: Registry, replay: RunMode
) -> None:
    case = admitted(
        registry, replay, lambda c: c.update({"tool_results": {"echo": [{"result": "hi"}]}})
    )
    (scripted,) = (case.trace.tool_results or {})["echo"]
    assert (scripted.result, scripted.error) == ("hi", False)


def test_a_scripted_tool_result_needs_a_tool_name(registry: Registry, replay: RunMode) -> None:
    line = refused(registry, replay, lambda c: c.update({"tool_results": {"": [{"result": "x"}]}}))
    assert line == f'{SOURCE}: tool_results[""]: the key should have at least 1 character'


def test_a_tool_definition_needs_a_tool_name(registry: Registry, replay: RunMode) -> None:
    definition = {"input_schema": {"type": "object"}}
    line = refused(registry, replay, lambda c: c.update({"tool_definitions": {"": definition}}))
    assert line == f'{SOURCE}: tool_definitions[""]: the key should have at least 1 character'
