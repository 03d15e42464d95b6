"""The exact verdicts of ``model_saw``, ``model_never_saw`` and ``tools_offered``.

Graded in process over hand-built model requests, so that each decision (the
scope a needle is looked in, a role, the offered tools' schemas, exact against
at-least, a required parameter) is pinned with its whole detail, and each rule
that refuses an entry with its whole message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from zeroclaw_eval import AdmissionError, Registry, RunMode
from zeroclaw_eval.case.admission import admit_data
from zeroclaw_eval.case.schema import fixture_schema
from zeroclaw_eval.grading.record import ModelRequest, RunRecord

from .conftest import echo_case

SOURCE = "suite/case.json"


@dataclass(frozen=True)
class OfferedTool:
    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict)


def request(turn: int, step: int, *messages: dict[str, Any], tools: Any = ()) -> ModelRequest:
    return ModelRequest(turn, step, list(messages), list(tools))


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def tool(text: str) -> dict[str, Any]:
    return {"role": "tool", "content": text}


def asked(arguments: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "function": {"name": "echo", "arguments": arguments}}],
    }


ECHO = OfferedTool("echo", "Echo a message", {"type": "object", "required": ["message"]})
CLOCK = OfferedTool("clock", "Tell the time", {"type": "object"})


def run(*requests: ModelRequest) -> RunRecord:
    return RunRecord(requests=list(requests))


def grade(
    registry: Registry, family: str, params: Any, record: RunRecord
) -> list[tuple[str, bool, str]]:
    entry = registry.family(family)
    assert entry is not None
    obj = entry.obj
    checks = obj.grade(obj.adapter.validate_python(params, strict=True), record)
    return [(check.check, check.passed, check.detail) for check in checks]


def two_turns(**entries: Any) -> dict[str, Any]:
    """The echo case, then a second turn answered in text: entries may name turn 1."""
    case = echo_case(expects=entries)
    second = {"response": {"type": "text", "content": "Nothing more."}}
    case["turns"].append({"user_input": "And then?", "steps": [second]})
    return case


def refusal(registry: Registry, replay: RunMode, **entries: Any) -> str:
    with pytest.raises(AdmissionError) as refused:
        admit_data(two_turns(**entries), registry, replay, source=SOURCE)
    return str(refused.value)


def admits(registry: Registry, replay: RunMode, **entries: Any) -> None:
    admit_data(two_turns(**entries), registry, replay, source=SOURCE)


TWO_TURNS = run(
    request(0, 0, user("Echo hello"), tools=[ECHO]),
    request(0, 1, user("Echo hello"), asked('{"message": "hello"}'), tool("hello"), tools=[ECHO]),
    request(1, 0, user("Echo hello"), user("And then?"), tools=[ECHO, CLOCK]),
)


# --- model_saw ---------------------------------------------------------------------


def test_model_saw_passes_at_the_first_request_that_shows_the_needle(registry: Registry) -> None:
    assert grade(registry, "model_saw", ["hello"], TWO_TURNS) == [
        ('model_saw: "hello"', True, "shown at turn 0 step 0")
    ]
    assert grade(registry, "model_saw", ["And then"], TWO_TURNS) == [
        ('model_saw: "And then"', True, "shown at turn 1 step 0")
    ]


def test_model_saw_narrowed_to_a_turn_step_and_role(registry: Registry) -> None:
    needle = {"needle": "hello", "turn": 0, "step": 1, "role": "tool"}
    assert grade(registry, "model_saw", [needle], TWO_TURNS) == [
        ('model_saw: "hello" at turn 0 step 1 role tool', True, "shown at turn 0 step 1")
    ]
    needle = {"needle": "hello", "turn": 0, "step": 0, "role": "tool"}
    assert grade(registry, "model_saw", [needle], TWO_TURNS) == [
        (
            'model_saw: "hello" at turn 0 step 0 role tool',
            False,
            "never shown in 1 request; the last (turn 0 step 0) ended with: nothing",
        )
    ]


def test_model_saw_fails_naming_the_last_texts_of_the_last_request(registry: Registry) -> None:
    assert grade(registry, "model_saw", [{"needle": "goodbye", "turn": 0}], TWO_TURNS) == [
        (
            'model_saw: "goodbye" at turn 0',
            False,
            "never shown in 2 requests; the last (turn 0 step 1) ended with: "
            + '"Echo hello"; "{\\"message\\": \\"hello\\"}"; "hello"',
        )
    ]
    only_first = {"needle": "goodbye", "turn": 1}
    first = run(request(1, 0, user("one"), user("two"), user("three"), user("four")))
    assert grade(registry, "model_saw", [only_first], first)[0][2] == (
        'never shown in 1 request; the last (turn 1 step 0) ended with: "two"; "three"; "four"'
    )


def test_model_saw_looks_in_the_offered_tools_only_without_a_role(registry: Registry) -> None:
    for needle in ("clock", "Tell the time", '"required": ["message"]'):
        assert grade(registry, "model_saw", [needle], TWO_TURNS)[0][1:] == (
            True,
            "shown at turn 1 step 0"
            if needle != '"required": ["message"]'
            else "shown at turn 0 step 0",
        )
    assert (
        grade(registry, "model_saw", [{"needle": "clock", "role": "user"}], TWO_TURNS)[0][1]
        is False
    )


def test_model_saw_reads_the_assistants_tool_call_arguments(registry: Registry) -> None:
    assert grade(
        registry, "model_saw", [{"needle": "message", "role": "assistant"}], TWO_TURNS
    ) == [('model_saw: "message" at role assistant', True, "shown at turn 0 step 1")]


def test_model_saw_over_no_requests_fails(registry: Registry) -> None:
    assert grade(registry, "model_saw", ["hello"], run()) == [
        (
            'model_saw: "hello"',
            False,
            "no model request was recorded (the agent made none, or records none)",
        )
    ]
    assert grade(registry, "model_saw", [{"needle": "hello", "turn": 2}], TWO_TURNS) == [
        (
            'model_saw: "hello" at turn 2',
            False,
            "no model request at turn 2 (recorded: 3 requests)",
        )
    ]


def test_model_saw_grades_every_needle(registry: Registry) -> None:
    assert [
        passed for _, passed, _ in grade(registry, "model_saw", ["hello", "nope"], TWO_TURNS)
    ] == [
        True,
        False,
    ]


# --- model_never_saw -------------------------------------------------------------------


def test_model_never_saw_passes_over_requests_that_never_show_it(registry: Registry) -> None:
    assert grade(registry, "model_never_saw", ["secret"], TWO_TURNS) == [
        ('model_never_saw: "secret"', True, "not shown in 3 requests")
    ]


def test_model_never_saw_fails_at_the_first_request_showing_it(registry: Registry) -> None:
    assert grade(registry, "model_never_saw", ["And then"], TWO_TURNS) == [
        ('model_never_saw: "And then"', False, 'shown at turn 1 step 0: "And then?"')
    ]
    assert grade(registry, "model_never_saw", ["Tell the"], TWO_TURNS) == [
        ('model_never_saw: "Tell the"', False, 'shown at turn 1 step 0: "Tell the time"')
    ]


def test_model_never_saw_in_scope_only(registry: Registry) -> None:
    assert grade(registry, "model_never_saw", [{"needle": "And then", "turn": 0}], TWO_TURNS) == [
        ('model_never_saw: "And then" at turn 0', True, "not shown in 2 requests")
    ]
    assert grade(registry, "model_never_saw", [{"needle": "clock", "role": "user"}], TWO_TURNS) == [
        ('model_never_saw: "clock" at role user', True, "not shown in 3 requests")
    ]


def test_model_never_saw_over_no_requests_fails(registry: Registry) -> None:
    assert grade(registry, "model_never_saw", ["secret"], run()) == [
        (
            'model_never_saw: "secret"',
            False,
            "no model request was recorded (the agent made none, or records none)",
        )
    ]
    assert (
        grade(registry, "model_never_saw", [{"needle": "secret", "step": 5}], TWO_TURNS)[0][1]
        is False
    )


def test_model_never_saw_grades_every_needle(registry: Registry) -> None:
    checks = grade(registry, "model_never_saw", ["secret", "hello"], TWO_TURNS)
    assert [passed for _, passed, _ in checks] == [True, False]


def test_never_saw_contradicting_saw_is_refused(registry: Registry, replay: RunMode) -> None:
    message = refusal(registry, replay, model_saw=["hello world"], model_never_saw=["x", "hello"])
    assert message == (
        'suite/case.json: expects.model_never_saw[1]="hello": contradicts model_saw '
        "'hello world', which requires the model to be shown it"
    ), message
    message = refusal(
        registry,
        replay,
        model_saw=[{"needle": "hello", "turn": 1, "role": "tool"}],
        model_never_saw=[{"needle": "hello", "turn": 1}],
    )
    assert "expects.model_never_saw[0]" in message, message
    assert message.endswith(
        ": contradicts model_saw 'hello' at turn 1 role tool, "
        "which requires the model to be shown it"
    ), message


def test_never_saw_beside_saw_elsewhere_is_admitted(registry: Registry, replay: RunMode) -> None:
    # Another turn, another step, another role, or a longer forbidden needle: no contradiction.
    admits(
        registry,
        replay,
        model_saw=[{"needle": "hello", "turn": 0}],
        model_never_saw=[{"needle": "hello", "turn": 1}],
    )
    admits(
        registry,
        replay,
        model_saw=[{"needle": "hello", "step": 0}],
        model_never_saw=[{"needle": "hello", "step": 1}],
    )
    admits(
        registry,
        replay,
        model_saw=[{"needle": "hello", "role": "tool"}],
        model_never_saw=[{"needle": "hello", "role": "user"}],
    )
    admits(registry, replay, model_saw=["hello"], model_never_saw=["hello world"])
    admits(registry, replay, model_never_saw=["hello"])


# --- tools_offered -----------------------------------------------------------------


def test_tools_offered_exactly(registry: Registry) -> None:
    assert grade(registry, "tools_offered", {"exactly": ["echo"], "turn": 0}, TWO_TURNS) == [
        ("tools_offered: exactly echo at turn 0", True, "as offered in 2 requests")
    ]
    assert grade(registry, "tools_offered", {"exactly": ["echo"]}, TWO_TURNS) == [
        (
            "tools_offered: exactly echo",
            False,
            "turn 1 step 0 offered echo, clock: also offered clock",
        )
    ]
    assert grade(
        registry, "tools_offered", {"exactly": ["echo", "clock", "web"], "turn": 1}, TWO_TURNS
    ) == [
        (
            "tools_offered: exactly echo, clock, web at turn 1",
            False,
            "turn 1 step 0 offered echo, clock: missing web",
        )
    ]
    assert grade(
        registry, "tools_offered", {"exactly": ["clock", "web"], "turn": 0}, TWO_TURNS
    ) == [
        (
            "tools_offered: exactly clock, web at turn 0",
            False,
            "turn 0 step 0 offered echo: missing clock, web; also offered echo",
        )
    ]


def test_tools_offered_exactly_none(registry: Registry) -> None:
    bare = run(request(0, 0, user("hi")))
    assert grade(registry, "tools_offered", {"exactly": []}, bare) == [
        ("tools_offered: exactly none", True, "as offered in 1 request")
    ]
    assert grade(registry, "tools_offered", {"exactly": ["echo"]}, bare) == [
        ("tools_offered: exactly echo", False, "turn 0 step 0 offered no tool: missing echo")
    ]


def test_tools_offered_at_least(registry: Registry) -> None:
    assert grade(registry, "tools_offered", {"at_least": ["echo"]}, TWO_TURNS) == [
        ("tools_offered: at least echo", True, "as offered in 3 requests")
    ]
    assert grade(registry, "tools_offered", {"at_least": ["clock"]}, TWO_TURNS) == [
        ("tools_offered: at least clock", False, "turn 0 step 0 offered echo: missing clock")
    ]


def test_tools_offered_over_no_requests_fails(registry: Registry) -> None:
    params = {"at_least": ["echo"], "required": {"echo": ["message"]}}
    assert grade(registry, "tools_offered", params, run()) == [
        (
            "tools_offered: at least echo",
            False,
            "no model request was recorded (the agent made none, or records none)",
        ),
        (
            "tools_offered: echo requires message",
            False,
            "no model request was recorded (the agent made none, or records none)",
        ),
    ]
    assert grade(registry, "tools_offered", {**params, "turn": 4}, TWO_TURNS) == [
        (
            "tools_offered: at least echo at turn 4",
            False,
            "no model request in scope (recorded: 3 requests)",
        ),
        (
            "tools_offered: echo requires message",
            False,
            "no model request in scope (recorded: 3 requests)",
        ),
    ]


def test_tools_offered_required(registry: Registry) -> None:
    params = {
        "at_least": ["echo", "clock"],
        "required": {"echo": ["message"], "clock": ["zone", "x"]},
        "turn": 1,
    }
    assert grade(registry, "tools_offered", params, TWO_TURNS) == [
        ("tools_offered: at least echo, clock at turn 1", True, "as offered in 1 request"),
        ("tools_offered: echo requires message", True, "required in 1 request"),
        (
            "tools_offered: clock requires zone, x",
            False,
            "turn 1 step 0: the schema of clock does not require zone, x (required: none)",
        ),
    ]
    params = {"at_least": ["clock"], "required": {"clock": ["zone"]}}
    assert grade(registry, "tools_offered", params, TWO_TURNS)[1] == (
        "tools_offered: clock requires zone",
        False,
        "turn 0 step 0 did not offer clock",
    )


def test_tools_offered_required_reads_the_schemas_required_list(registry: Registry) -> None:
    odd = OfferedTool("echo", "", {"type": "object", "required": "message"})
    listed = OfferedTool("echo", "", {"type": "object", "required": ["message", 3]})
    params = {"at_least": ["echo"], "required": {"echo": ["message", "other"]}}
    assert grade(registry, "tools_offered", params, run(request(0, 0, tools=[odd])))[1][1:] == (
        False,
        "turn 0 step 0: the schema of echo does not require message, other (required: none)",
    )
    assert grade(registry, "tools_offered", params, run(request(0, 0, tools=[listed])))[1][1:] == (
        False,
        "turn 0 step 0: the schema of echo does not require other (required: message, 3)",
    )


@pytest.mark.parametrize(
    ("entry", "field", "detail"),
    [
        (
            {"exactly": ["echo"], "at_least": ["echo"]},
            "tools_offered",
            "give exactly one of exactly and at_least",
        ),
        ({}, "tools_offered", "give exactly one of exactly and at_least"),
        ({"at_least": []}, "tools_offered.at_least", "an empty at_least asserts nothing"),
        ({"exactly": ["echo", "clock", "echo"]}, "tools_offered.exactly[2]", "names 'echo' twice"),
        ({"at_least": ["echo", "echo"]}, "tools_offered.at_least[1]", "names 'echo' twice"),
        (
            {"at_least": ["echo"], "required": {"clock": ["x"]}},
            "tools_offered.required.clock",
            "'clock' is not among the tools of at_least",
        ),
        (
            {"exactly": ["echo"], "required": {"clock": ["x"]}},
            "tools_offered.required.clock",
            "'clock' is not among the tools of exactly",
        ),
        (
            {"exactly": ["echo"], "required": {"echo": []}},
            "tools_offered.required.echo",
            "an empty list asserts nothing",
        ),
        ({"at_least": [""]}, "tools_offered.at_least[0]", None),
        ({"exactly": ["echo"], "turn": -1}, "tools_offered.turn", None),
        ({"exactly": ["echo"], "required": {"": ["x"]}}, "tools_offered.required", None),
        ({"exactly": ["echo"], "required": {"echo": [""]}}, "tools_offered.required.echo[0]", None),
    ],
)
def test_a_tools_offered_that_cannot_fail_is_refused(
    registry: Registry, replay: RunMode, entry: dict[str, Any], field: str, detail: str | None
) -> None:
    message = refusal(registry, replay, tools_offered=entry)
    assert f"expects.{field}" in message, message
    if detail is not None:
        assert message.endswith(f": {detail}"), message


def test_a_sound_tools_offered_is_admitted(registry: Registry, replay: RunMode) -> None:
    admits(registry, replay, tools_offered={"exactly": []})
    admits(
        registry,
        replay,
        tools_offered={"exactly": ["echo", "clock"], "required": {"echo": ["message"]}, "turn": 0},
    )
    admits(
        registry, replay, tools_offered={"at_least": ["echo"], "required": {"echo": ["message"]}}
    )


@pytest.mark.parametrize(
    "needle",
    [
        "",
        {"needle": ""},
        {"needle": "x", "turn": -1},
        {"needle": "x", "step": -1},
        {"needle": "x", "role": "robot"},
    ],
)
def test_a_needle_that_cannot_be_looked_for_is_refused(
    registry: Registry, replay: RunMode, needle: Any
) -> None:
    assert "expects.model_saw[0]" in refusal(registry, replay, model_saw=[needle])


@pytest.mark.parametrize("role", ["system", "developer", "user", "assistant", "tool"])
def test_a_needle_may_name_every_role_a_message_has(
    registry: Registry, replay: RunMode, role: str
) -> None:
    admits(registry, replay, model_saw=[{"needle": "hello", "role": role}])
    shown = run(request(0, 0, {"role": role, "content": "the needle"}))
    assert grade(registry, "model_saw", [{"needle": "needle", "role": role}], shown)[0][1:] == (
        True,
        "shown at turn 0 step 0",
    )


def test_the_published_schema_of_a_needle_takes_a_string_or_an_object(registry: Registry) -> None:
    entry = registry.family("model_saw")
    assert entry is not None
    needle = entry.obj.adapter.json_schema()["$defs"]["Needle"]
    bare, full = needle["anyOf"]
    assert bare == {"type": "string", "minLength": 1}
    assert full["required"] == ["needle"]
    assert sorted(full["properties"]) == ["needle", "role", "step", "turn"]


def test_the_offered_schemas_are_searched_as_written(registry: Registry) -> None:
    # Non-ASCII text as itself, and a value JSON has no form for by its text.
    weather = OfferedTool(
        "weather",
        None,  # type: ignore[arg-type]  # an agent may offer a tool with no description
        {"properties": {"unit": {"description": "Température"}}, "x-seen": {"tag"}},
    )
    shown = run(request(0, 0, user("hi"), tools=[weather]))
    assert grade(registry, "model_saw", ["Température"], shown)[0][1] is True
    assert grade(registry, "model_saw", ["{'tag'}"], shown)[0][1] is True
    assert grade(registry, "model_never_saw", ["XX"], shown)[0][1] is True


def test_the_last_texts_of_a_failed_model_saw_are_cut_at_80_characters(registry: Registry) -> None:
    long = "x" * 100
    shown = run(request(0, 0, user(long)))
    assert grade(registry, "model_saw", ["needle"], shown)[0][2] == (
        "never shown in 1 request; the last (turn 0 step 0) ended with: " + '"' + "x" * 75 + '..."'
    )


def test_the_published_schema_describes_each_family_for_fixture_authors(registry: Registry) -> None:
    described = fixture_schema(registry)["properties"]["expects"]["properties"]
    assert described["model_saw"]["description"] == (
        "the model was shown the needle (optionally at a turn, a step, in messages of a role) "
        "[plugin: model_side]"
    )
    assert described["model_never_saw"]["description"] == (
        "the model was never shown the needle (in any request made, or those in scope) "
        "[plugin: model_side]"
    )
    assert described["tools_offered"]["description"] == (
        "every model request offered exactly / at least these tools, "
        "optionally with schema properties required [plugin: model_side]"
    )


def test_the_published_schema_refuses_empty_names_and_negative_turns(registry: Registry) -> None:
    # An editor validating against the schema refuses what admission refuses.
    schema = fixture_schema(registry)["$defs"]
    offer = schema["ToolsOffer"]["properties"]
    non_empty = {"minLength": 1, "type": "string"}
    assert offer["exactly"]["items"] == non_empty
    assert offer["at_least"]["items"] == non_empty
    assert offer["required"]["propertyNames"] == {"minLength": 1}
    assert offer["required"]["additionalProperties"]["items"] == non_empty
    assert offer["turn"]["minimum"] == 0
    needle = schema["Needle"]["anyOf"][1]["properties"]
    assert needle["needle"]["minLength"] == 1
    assert needle["turn"]["minimum"] == 0
    assert needle["step"]["minimum"] == 0
    roles = needle["role"]["anyOf"][0]["enum"]
    assert roles == ["system", "developer", "user", "assistant", "tool"]
