"""Scripted tool results (``tool_results``): admitted like scripted steps, played call by call.

Through the reference loop here; through an agent served its tools over MCP in
tests/test_served_tools.py.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval.testing import run_cli

from .bridged_helpers import write_suite
from .conftest import echo_case, zeroclaw


def weather_case(*results: dict[str, Any], calls: int = 1) -> dict[str, Any]:
    """The model asks ``weather`` ``calls`` times (one step each), then answers."""
    steps: list[dict[str, Any]] = [
        {
            "response": {
                "type": "tool_calls",
                "tool_calls": [{"id": f"w{n}", "name": "weather", "arguments": {"city": "Oslo"}}],
            }
        }
        for n in range(calls)
    ]
    steps.append({"response": {"type": "text", "content": "Done."}})
    return {
        "model_name": "weather",
        "tool_results": {"weather": list(results)},
        "turns": [{"user_input": "Weather in Oslo?", "steps": steps}],
        "expects": {"tool_results_contain": [{"tool": "weather", "needle": "Oslo"}]},
    }


def run_case(tmp_path: Path, case: dict[str, Any], *args: str) -> Any:
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    return run_cli(["eval", "run", str(path), "--format", "json", *args])


def test_a_scripted_tool_returns_its_script_and_its_error_flag(tmp_path: Path) -> None:
    case = weather_case(
        {"result": "Oslo: 3 C, snow"}, {"result": "Oslo: service down", "error": True}, calls=2
    )
    case["expects"] = {
        "tool_results_contain": [
            {"tool": "weather", "needle": "3 C, snow", "call_index": 0},
            {
                "tool": "weather",
                "needle": "tool 'weather' failed: Oslo: service down",
                "call_index": 1,
            },
        ],
        "all_tools_succeeded": False,
        "exact_tool_calls": 2,
    }
    result = run_case(tmp_path, case)
    assert result.exit_code == 0, result.stdout
    checks = json.loads(result.stdout)["cases"][0]["checks"]
    assert all(check["passed"] for check in checks) and len(checks) == 4


def test_a_scripted_result_takes_the_place_of_a_registered_tool(tmp_path: Path) -> None:
    case = echo_case(tool_results={"echo": [{"result": "not what echo says"}]})
    case["expects"]["tool_results_contain"] = [{"tool": "echo", "needle": "not what echo says"}]
    assert run_case(tmp_path, case).exit_code == 0


def test_a_call_beyond_the_script_is_a_run_error_naming_turn_and_call(tmp_path: Path) -> None:
    result = run_case(tmp_path, weather_case({"result": "Oslo: 3 C"}, calls=2))
    assert result.exit_code == 1
    error = json.loads(result.stdout)["cases"][0]["error"]
    assert error == (
        "case 'weather': turn 0: call 1 to 'weather' has no scripted result "
        "(tool_results.weather scripts 1 result)"
    )


def refusal(tmp_path: Path, case: dict[str, Any], *args: str) -> str:
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    result = run_cli(["eval", "check", str(path), *args])
    assert result.exit_code != 0
    lines = [
        line
        for line in result.stderr.splitlines()
        if "case.json: " in line and "refused" not in line
    ]
    assert len(lines) == 1, result.stderr
    return lines[0].split("case.json: ", 1)[1]


def with_results(results: Any, **expects: Any) -> dict[str, Any]:
    case = weather_case({"result": "Oslo: 3 C"})
    case["tool_results"] = results
    case["expects"].update(expects)
    return case


def without_boundary(case: dict[str, Any]) -> dict[str, Any]:
    """``case`` graded on its answer only: no family naming the tool's calls."""
    del case["expects"]["tool_results_contain"]
    case["expects"]["response_contains"] = ["Done"]
    return case


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (
            with_results({"weather": [{"result": "x", "eror": True}]}),
            "tool_results.weather[0].eror=true: unknown key",
        ),
        (
            with_results({"weather": []}),
            "tool_results.weather: scripts no result: give at least one, or drop the tool",
        ),
        (
            with_results({"weather": [{"result": "", "error": True}]}),
            'tool_results.weather[0].result="": a scripted error needs its text: it is all the '
            "model is told",
        ),
        (
            with_results({"weather": [{"result": "a"}, {"result": "b"}]}),
            "tool_results.weather[1]: no scripted call reaches this result: the "
            "steps call 'weather' 1 time",
        ),
        (
            with_results({"weather": [{"result": "a"}], "clock": [{"result": "noon"}]}),
            "tool_results.clock[0]: no scripted call reaches this result: the "
            "steps call 'clock' 0 times",
        ),
        (
            without_boundary(
                with_results({"weather": [{"result": "a"}]}, tools_not_used=["weather"])
            ),
            "tool_results.weather: contradicts tools_not_used naming 'weather'",
        ),
        (
            with_results({"weather": [{"result": "a", "error": True}]}, all_tools_succeeded=True),
            "tool_results.weather[0].error=true: contradicts all_tools_succeeded=true: this "
            "call is scripted to fail",
        ),
    ],
    ids=[
        "unknown-key",
        "empty",
        "error-without-text",
        "unreachable",
        "never-called",
        "tools-not-used",
        "all-tools-succeeded",
    ],
)
def test_admission_refuses_a_script_that_cannot_play_as_written(
    tmp_path: Path, case: dict[str, Any], message: str
) -> None:
    assert refusal(tmp_path, copy.deepcopy(case)) == message


def test_a_scripted_tool_outside_the_offer_is_refused(tmp_path: Path) -> None:
    case = echo_case(tool_results={"echo": [{"result": "hello"}]})
    config = tmp_path / "zeroclaw.toml"
    config.write_text("[eval.live]\nallowed_tools = []\n", encoding="utf-8")
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "case.json").write_text(json.dumps(case), encoding="utf-8")
    result = run_cli(["eval", "check", "--config", str(config), "--suite", str(tmp_path / "suite")])
    assert result.exit_code != 0
    assert (
        "case.json: tool_results.echo: scripts results for 'echo', which is registered but "
        "not offered to the agent (eval.live.allowed_tools: none)"
    ) in result.stderr


# --- tool_definitions: how a recorded tool was offered ---------------------------------


def defined_fixture(**extra: Any) -> dict[str, Any]:
    call = {"id": "c1", "name": "forecast", "arguments": {"city": "Oslo"}}
    return {
        "model_name": "defined",
        "turns": [
            {
                "user_input": "Forecast?",
                "steps": [
                    {"response": {"type": "tool_calls", "tool_calls": [call]}},
                    {"response": {"type": "text", "content": "Snow."}},
                ],
            }
        ],
        "expects": {"tool_results_contain": [{"tool": "forecast", "needle": "snow"}]},
        **extra,
    }


SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (
            {
                "tool_results": {"forecast": [{"result": "snow"}]},
                "tool_definitions": {"forecast": {"input_schema": {"type": "array"}}},
            },
            'tool_definitions.forecast.input_schema.type="array": must be "object"',
        ),
        (
            {"tool_definitions": {"forecast": {"input_schema": SCHEMA}}},
            "tool_definitions.forecast: the steps call 'forecast', but tool_results scripts "
            "no result for it",
        ),
        (
            {
                "tool_results": {"forecast": [{"result": "snow"}]},
                "tool_definitions": {"forecast": {"schema": SCHEMA}},
            },
            "tool_definitions.forecast",
        ),
    ],
    ids=["not-an-object-schema", "called-without-a-result", "unknown-key"],
)
def test_a_tool_definition_that_cannot_hold_is_refused_with_file_and_field(
    tmp_path: Path, extra: dict[str, Any], error: str
) -> None:
    suite = write_suite(tmp_path / "suite", defined_fixture(**extra))
    result = zeroclaw("eval", "check", "--suite", suite, cwd=tmp_path)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "case0.json" in result.stderr and error in result.stderr, result.stderr


def test_a_defined_tool_is_offered_as_defined_and_the_schema_describes_the_key(
    tmp_path: Path,
) -> None:
    fixture = defined_fixture(
        tool_results={"forecast": [{"result": "snow"}]},
        tool_definitions={
            "forecast": {"description": "The forecast.", "input_schema": SCHEMA},
            "count": {"input_schema": {"type": "object"}},  # offered, never called
        },
    )
    suite = write_suite(tmp_path / "suite", fixture)
    (tmp_path / "zeroclaw.toml").write_text('[eval]\nreport_requests = "all"\n', "utf-8")
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    tools = json.loads(result.stdout)["cases"][0]["model_requests"][0]["tools"]
    assert tools["forecast"] == {"description": "The forecast.", "parameters": SCHEMA}
    assert tools["count"] == {"description": "", "parameters": {"type": "object"}}
    schema = json.loads(zeroclaw("eval", "schema", cwd=tmp_path).stdout)
    assert schema["properties"]["tool_definitions"]["additionalProperties"] == {
        "$ref": "#/$defs/ToolDefinition"
    }
    definition = schema["$defs"]["ToolDefinition"]
    assert definition["required"] == ["input_schema"]
    assert definition["properties"]["input_schema"]["properties"]["type"] == {"const": "object"}
    assert definition["properties"]["input_schema"]["required"] == ["type"]


def test_a_defined_tool_counts_as_offered_to_the_expectations_that_name_it(
    tmp_path: Path,
) -> None:
    # "count" is offered (defined) and never called: a closed sequence may allow it,
    # as tools_used may name it, rather than be refused as naming no offered tool.
    fixture = defined_fixture(
        tool_results={"forecast": [{"result": "snow"}]},
        tool_definitions={"count": {"input_schema": {"type": "object"}}},
    )
    fixture["expects"]["tool_sequence"] = [
        {
            "mode": "calls_only_among",
            "steps": [{"tool": "forecast"}, {"tool": "count", "optional": True}],
        }
    ]
    suite = write_suite(tmp_path / "suite", fixture)
    result = zeroclaw("eval", "run", "--suite", suite, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_live_case_scripts_no_arguments_to_match_its_results_by() -> None:
    """In live mode the model decides the calls: no turn has steps, nothing is asked."""
    from zeroclaw_eval.case.fixture import LlmTrace
    from zeroclaw_eval.case.scripted import scripted_arguments

    live = {
        "model_name": "live",
        "tool_results": {"weather": [{"result": "sunny"}]},
        "turns": [{"user_input": "Weather?"}],
        "expects": {"tools_used": ["weather"]},
    }
    assert scripted_arguments(LlmTrace.model_validate(live)) == {}
    scripted = copy.deepcopy(live)
    scripted["turns"] = [echo_case()["turns"][0], {"user_input": "And now?"}]
    assert scripted_arguments(LlmTrace.model_validate(scripted)) == {"echo": [{"message": "hello"}]}
