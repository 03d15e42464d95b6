"""Scripted tool results, in process: what admission refuses, and how a script plays.

``admit_tool_results`` is asked directly, over fixtures built here, for the exact
problems (path and message) of each script that cannot play as written, and
for none where it can (including a live turn, where the model decides which
calls are made). :class:`ToolScript` is played call by call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from zeroclaw_eval.builtin.echo import EchoTool
from zeroclaw_eval.case.fixture import LlmTrace, ScriptedToolResult, ToolDefinition
from zeroclaw_eval.case.scripted import (
    ToolScript,
    admit_tool_definitions,
    admit_tool_results,
    scripted_calls,
)
from zeroclaw_eval.errors import RunError
from zeroclaw_eval.protocol import ToolResult


def calling(*names: str) -> dict[str, Any]:
    return {
        "response": {
            "type": "tool_calls",
            "tool_calls": [
                {"id": f"c{n}", "name": name, "arguments": {}} for n, name in enumerate(names)
            ],
        }
    }


DONE = {"response": {"type": "text", "content": "Done."}}


def trace(results: Any, *turns: list[dict[str, Any]] | None, **expects: Any) -> LlmTrace:
    return LlmTrace.model_validate(
        {
            "model_name": "scripted",
            "tool_results": results,
            "turns": [
                {"user_input": "go"} if steps is None else {"user_input": "go", "steps": steps}
                for steps in turns
            ],
            "expects": expects or {"response_contains": ["Done"]},
        }
    )


def problems(case: LlmTrace) -> list[tuple[tuple[Any, ...], str]]:
    return [(problem.path, problem.message) for problem in admit_tool_results(case)]


def test_scripted_calls_counts_every_call_of_every_step_and_turn() -> None:
    case = trace(None, [calling("a", "b"), calling("a"), DONE], [calling("a"), DONE])
    assert scripted_calls(case) == {"a": 3, "b": 1}
    assert scripted_calls(trace(None, [calling("a"), DONE], None)) is None
    assert scripted_calls(trace(None, None, [calling("a"), DONE])) is None


def test_a_script_every_call_reaches_is_admitted() -> None:
    script = {"a": [{"result": "1"}, {"result": "2", "error": True}], "b": [{"result": "x"}]}
    case = trace(script, [calling("a", "b"), DONE], [calling("a"), DONE])
    assert problems(case) == []
    assert problems(trace(None, [DONE])) == []


def test_an_empty_script_is_refused_and_nothing_more_is_said_of_it() -> None:
    # The next tool's script is still looked at.
    script = {"a": [], "b": [{"result": "x"}, {"result": "y"}]}
    case = trace(script, [calling("b"), DONE], tools_not_used=["a"])
    assert problems(case) == [
        (("tool_results", "a"), "scripts no result: give at least one, or drop the tool"),
        (
            ("tool_results", "b", 1),
            "no scripted call reaches this result: the steps call 'b' 1 time",
        ),
    ]


def test_a_script_contradicting_tools_not_used_is_refused() -> None:
    case = trace({"a": [{"result": "x"}]}, [calling("a"), DONE], tools_not_used=["b", "a"])
    assert problems(case) == [(("tool_results", "a"), "contradicts tools_not_used naming 'a'")]
    assert (
        problems(trace({"a": [{"result": "x"}]}, [calling("a"), DONE], tools_not_used=["b"])) == []
    )


def test_a_scripted_error_without_text_is_refused() -> None:
    case = trace(
        {"a": [{"result": "fine"}, {"result": "", "error": True}, {"result": ""}]},
        [calling("a", "a", "a"), DONE],
    )
    assert problems(case) == [
        (
            ("tool_results", "a", 1, "result"),
            "a scripted error needs its text: it is all the model is told",
        )
    ]


def test_a_result_no_scripted_call_reaches_is_refused_at_the_first_unreached() -> None:
    case = trace({"a": [{"result": "1"}, {"result": "2"}, {"result": "3"}]}, [calling("a"), DONE])
    assert problems(case) == [
        (
            ("tool_results", "a", 1),
            "no scripted call reaches this result: the steps call 'a' 1 time",
        )
    ]
    case = trace({"b": [{"result": "1"}]}, [calling("a"), DONE])
    assert problems(case) == [
        (
            ("tool_results", "b", 0),
            "no scripted call reaches this result: the steps call 'b' 0 times",
        )
    ]


def test_in_a_live_turn_every_result_may_be_reached() -> None:
    script = {"a": [{"result": "1"}, {"result": "2", "error": True}]}
    assert problems(trace(script, None)) == []
    assert problems(trace(script, None, all_tools_succeeded=True)) == [
        (
            ("tool_results", "a", 1, "error"),
            "contradicts all_tools_succeeded=true: this call is scripted to fail",
        )
    ]


def test_a_reached_scripted_error_contradicts_all_tools_succeeded() -> None:
    script = {"a": [{"result": "1"}, {"result": "2", "error": True}]}
    case = trace(script, [calling("a", "a"), DONE], all_tools_succeeded=True)
    assert problems(case) == [
        (
            ("tool_results", "a", 1, "error"),
            "contradicts all_tools_succeeded=true: this call is scripted to fail",
        )
    ]
    assert problems(trace(script, [calling("a", "a"), DONE], all_tools_succeeded=False)) == []


def test_an_unreached_scripted_error_is_refused_only_as_unreached() -> None:
    script = {"a": [{"result": "1"}, {"result": "2", "error": True}]}
    case = trace(script, [calling("a"), DONE], all_tools_succeeded=True)
    assert problems(case) == [
        (
            ("tool_results", "a", 1),
            "no scripted call reaches this result: the steps call 'a' 1 time",
        )
    ]


@dataclass(frozen=True)
class RealTool:
    name: str
    description: str = "the real one"
    parameters: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "required": ["x"]}
    )

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        raise AssertionError("a scripted tool never runs")


def script(**results: list[ScriptedToolResult]) -> ToolScript:
    return ToolScript(results)


def test_a_scripted_tool_keeps_a_registered_ones_offer_or_is_offered_open() -> None:
    played = script(a=[ScriptedToolResult(result="1")], b=[ScriptedToolResult(result="2")])
    tools = played.tools({"a": RealTool("a"), "c": RealTool("c")})
    assert sorted(tools) == ["a", "b", "c"]
    assert (tools["a"].description, tools["a"].parameters) == (
        "the real one",
        {"type": "object", "required": ["x"]},
    )
    assert (tools["b"].description, tools["b"].parameters) == ("", {"type": "object"})
    assert isinstance(tools["c"], RealTool)
    assert tools["a"].run({}) == ToolResult("1", success=True)


def test_each_call_gets_the_next_result_with_its_error_flag() -> None:
    played = script(a=[ScriptedToolResult(result="1"), ScriptedToolResult(result="no", error=True)])
    tool = played.tools({})["a"]
    assert tool.run({}) == ToolResult("1", success=True)
    assert tool.run({}) == ToolResult("no", success=False)
    played.check()
    played.finish()


def test_a_call_beyond_the_script_fails_and_is_a_run_error_naming_turn_and_call() -> None:
    played = script(a=[ScriptedToolResult(result="1")])
    tool = played.tools({})["a"]
    played.begin_turn(2)
    assert tool.run({}).success
    played.check()
    problem = "turn 2: call 1 to 'a' has no scripted result (tool_results.a scripts 1 result)"
    assert tool.run({}) == ToolResult(f"tool 'a': {problem}", success=False)
    tool.run({})
    with pytest.raises(RunError) as error:
        played.check()
    assert str(error.value) == problem
    with pytest.raises(RunError) as error:
        played.finish()
    assert str(error.value) == problem


def test_a_result_left_unused_is_a_run_error_at_the_end() -> None:
    played = script(
        a=[ScriptedToolResult(result="1")],
        b=[ScriptedToolResult(result="1"), ScriptedToolResult(result="2")],
    )
    tools = played.tools({})
    played.begin_turn(1)
    tools["a"].run({})
    tools["b"].run({})
    played.check()
    with pytest.raises(RunError) as error:
        played.finish()
    assert str(error.value) == (
        "after the last turn (turn 1): tool_results.b[1] left unused: the agent made "
        "1 call to 'b' of 2 scripted"
    )


# --- tool_definitions ----------------------------------------------------------------


def defined(
    results: Any, definitions: dict[str, Any], *turns: list[dict[str, Any]] | None
) -> LlmTrace:
    case = trace(results, *turns)
    return case.model_copy(
        update={
            "tool_definitions": {
                name: ToolDefinition.model_validate(entry) for name, entry in definitions.items()
            }
        }
    )


OBJECT = {"input_schema": {"type": "object"}}


def test_definitions_are_admitted_in_a_live_turn_where_no_call_is_scripted() -> None:
    case = defined(None, {"clock": OBJECT}, None)
    assert list(admit_tool_definitions(case)) == []
    called = defined(None, {"clock": OBJECT}, [calling("clock"), DONE])
    assert [problem.path for problem in admit_tool_definitions(called)] == [
        ("tool_definitions", "clock")
    ]


def test_each_definition_is_offered_unless_a_real_unscripted_tool_of_its_name_is_there() -> None:
    real = EchoTool()
    script = ToolScript(
        None,
        {
            "echo": ToolDefinition.model_validate(OBJECT),  # here for real: it runs
            "clock": ToolDefinition.model_validate({"description": "Time.", **OBJECT}),
        },
    )
    tools = script.tools({"echo": real})
    assert tools["echo"] is real
    assert (tools["clock"].description, tools["clock"].parameters) == ("Time.", {"type": "object"})


def test_a_call_to_a_tool_only_defined_fails_and_is_a_run_error() -> None:
    script = ToolScript(None, {"clock": ToolDefinition.model_validate(OBJECT)})
    result = script.tools({})["clock"].run({})
    assert not result.success
    with pytest.raises(RunError) as refused:
        script.check()
    assert str(refused.value) == (
        "turn 0: call 0 to 'clock' has no scripted result (tool_results.clock scripts 0 results)"
    )
