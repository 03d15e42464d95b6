"""``zeroclaw eval check`` finds fixtures whose script can never satisfy their expects.

Beside the empty-run vacuity check: a count bound the scripted calls cannot meet,
a tool named that the script never calls, a response needle the scripted final
text lacks when the agent passes it through. Each is reported naming the file
and the field; for the reference loop in a gating suite it is an error (exit 1),
otherwise a warning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .bridged_helpers import configure, factory, write_suite
from .conftest import echo_case, zeroclaw


def check(root: Path, *args: str) -> tuple[int, list[str]]:
    result = zeroclaw("eval", "check", *args, cwd=root)
    assert "Traceback" not in result.stderr
    return result.returncode, result.stderr.splitlines()


def project(tmp_path: Path, expects: dict[str, Any], config: str = "") -> Path:
    (tmp_path / "zeroclaw.toml").write_text(
        f'[eval]\nsuite_dir = "suite"\n{config}', encoding="utf-8"
    )
    write_suite(tmp_path / "suite", echo_case(expects=expects))
    return tmp_path


NEVER = [
    (
        {"min_tool_calls": 2},
        "expects.min_tool_calls=2: the script makes 1 tool call: can never pass",
    ),
    (
        {"exact_tool_calls": 3},
        "expects.exact_tool_calls=3: the script makes 1 tool call: can never pass",
    ),
    (
        {"tools_used": ["echo", "shell"]},
        "expects.tools_used[1]=\"shell\": the script never calls 'shell': can never pass",
    ),
    (
        {"tools_not_used": ["echo"]},
        "expects.tools_not_used[0]=\"echo\": the script calls 'echo' in turn 0: can never pass",
    ),
    (
        {"tool_results_contain": [{"tool": "shell", "needle": "ok"}]},
        "expects.tool_results_contain[0].tool=\"shell\": the script never calls 'shell': "
        "can never pass",
    ),
    (
        {"tool_arguments_contain": [{"tool": "echo", "needle": "hello", "call_index": 1}]},
        "expects.tool_arguments_contain[0].call_index=1: the script calls 'echo' 1 time: "
        "can never pass",
    ),
    (
        {"tool_call_status": [{"tool": "echo", "status": "succeeded", "call_index": 1}]},
        "expects.tool_call_status[0].call_index=1: the script calls 'echo' 1 time: can never pass",
    ),
    (
        {"response_contains": ["goodbye"]},
        'expects.response_contains[0]="goodbye": the agent passes the script\'s text '
        'through, and the last turn\'s scripted text "The echo said: hello" lacks it: '
        "can never pass",
    ),
    (
        {"response_not_contains": ["echo said"]},
        'expects.response_not_contains[0]="echo said": the agent passes the script\'s text '
        'through, and the last turn\'s scripted text "The echo said: hello" contains it: '
        "can never pass",
    ),
]


@pytest.mark.parametrize(("expects", "line"), NEVER, ids=[next(iter(e)) for e, _ in NEVER])
def test_an_expectation_the_script_can_never_meet_is_an_error(
    tmp_path: Path, expects: dict[str, Any], line: str
) -> None:
    status, lines = check(project(tmp_path, expects))
    assert status == 1
    assert f"Error: suite/case0.json: {line}" in lines
    assert "1 of 1 fixture has expectations the script can never satisfy" in lines


def test_a_consistent_fixture_passes(tmp_path: Path) -> None:
    expects = {
        "exact_tool_calls": 1,
        "tools_used": ["echo"],
        "tool_results_contain": [{"tool": "echo", "needle": "hello", "call_index": 0}],
        "response_contains": ["echo said"],
        "response_not_contains": ["goodbye"],
    }
    status, lines = check(project(tmp_path, expects))
    assert (status, lines) == (0, [])


def test_a_non_gating_suite_only_warns(tmp_path: Path) -> None:
    status, lines = check(project(tmp_path, {"exact_tool_calls": 3}, "gating = false\n"))
    assert status == 0
    assert lines == [
        "Warning: suite/case0.json: expects.exact_tool_calls=3: the script makes 1 tool call: "
        "can never pass (--strict fails on it)"
    ]


def test_for_an_agent_that_writes_its_own_text_a_needle_no_reply_holds_is_a_warning(
    tmp_path: Path,
) -> None:
    config = configure(tmp_path, factory("echo_agent:make_agent"), suite_dir="suite")
    write_suite(tmp_path / "suite", echo_case(expects={"response_contains": ["goodbye"]}))
    status, lines = check(tmp_path, "--config", str(config))
    assert status == 0
    assert lines == [
        'Warning: suite/case0.json: expects.response_contains[0]="goodbye": no scripted '
        "reply contains it: passes only if the agent writes it itself (depends on the agent)"
    ]
    # Not even --strict fails on it: a correct agent may write it.
    assert check(tmp_path, "--config", str(config), "--strict") == (0, lines)


def test_strict_fails_on_what_can_never_pass_for_a_bridged_agent_and_a_non_gating_suite(
    tmp_path: Path,
) -> None:
    config = configure(tmp_path, factory("echo_agent:make_agent"), suite_dir="suite")
    write_suite(tmp_path / "suite", echo_case(expects={"exact_tool_calls": 2}))
    line = (
        "suite/case0.json: expects.exact_tool_calls=2: the script makes 1 tool call: can never pass"
    )
    assert check(tmp_path, "--config", str(config)) == (
        0,
        [f"Warning: {line} (--strict fails on it)"],
    )
    assert check(tmp_path, "--config", str(config), "--strict") == (
        1,
        [f"Error: {line}", "1 of 1 fixture has expectations the script can never satisfy"],
    )
    (tmp_path / "capability").mkdir()
    non_gating = project(tmp_path / "capability", {"exact_tool_calls": 3}, "gating = false\n")
    assert check(non_gating, "--strict")[0] == 1


SHELL = {"shell": {"description": "Run a command.", "input_schema": {"type": "object"}}}


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        (
            {"mode": "in_order", "steps": [{"tool": "echo"}, {"tool": "shell"}]},
            "expects.tool_sequence[0].steps[1].tool=\"shell\": the script never calls 'shell': "
            "this step can never pair, so the entry can never pass",
        ),
        (
            {"mode": "in_order", "turn": 0, "steps": [{"tool": "sh*"}]},
            "expects.tool_sequence[0].steps[0].tool=\"sh*\": the script never calls 'sh*' in "
            "turn 0: this step can never pair, so the entry can never pass",
        ),
    ],
    ids=["a-step-never-called", "in-its-turn"],
)
def test_a_sequence_step_for_an_offered_tool_the_script_never_calls_can_never_pass(
    tmp_path: Path, entry: dict[str, Any], line: str
) -> None:
    # shell is offered (its definition), never called: only a step needing it fails.
    (tmp_path / "zeroclaw.toml").write_text('[eval]\nsuite_dir = "suite"\n', encoding="utf-8")
    case = echo_case(tool_definitions=SHELL, expects={"tool_sequence": [entry]})
    write_suite(tmp_path / "suite", case)
    status, lines = check(tmp_path)
    assert status == 1
    assert f"Error: suite/case0.json: {line}" in lines


def test_a_sequence_step_that_fits_a_call_in_its_turn_or_is_optional_is_consistent(
    tmp_path: Path,
) -> None:
    (tmp_path / "zeroclaw.toml").write_text('[eval]\nsuite_dir = "suite"\n', encoding="utf-8")
    entry = {
        "mode": "exact",
        "turn": 0,
        "steps": [{"tool": "ec*"}, {"tool": "shell", "optional": True}],
    }
    write_suite(
        tmp_path / "suite",
        echo_case(tool_definitions=SHELL, expects={"tool_sequence": [entry]}),
    )
    assert check(tmp_path) == (0, [])
