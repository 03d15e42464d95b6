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


def test_the_pre_commit_hook_checks_strictly() -> None:
    hooks = (Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text("utf-8")
    entries = [line.strip() for line in hooks.splitlines() if line.strip().startswith("entry:")]
    assert entries == ["entry: zeroclaw eval check --strict"]


def test_all_tools_succeeded_false_needs_a_scripted_call() -> None:
    """``false`` asks for a failed call: a script that calls no tool can never
    give one; ``true`` holds for no call, and a script with calls settles nothing."""
    from zeroclaw_eval.builtin.tools import AllToolsSucceeded
    from zeroclaw_eval.grading.script import Finding, Script, ScriptedCall

    family = AllToolsSucceeded()
    silent = Script(calls=(), replies=("hi",), final_response="hi")
    calling = Script(calls=(ScriptedCall(0, "echo"),), replies=("hi",), final_response="hi")
    assert list(family.consistency(False, silent)) == [
        Finding((), "false needs a failed call, and the script calls no tool: can never pass")
    ]
    assert list(family.consistency(True, silent)) == []
    assert list(family.consistency(False, calling)) == []


def test_response_contains_for_an_agent_that_writes_its_own_text() -> None:
    """With no final text known (an agent other than the reference loop), a needle
    no scripted reply holds is only a warning; one some reply holds is nothing."""
    from zeroclaw_eval.builtin.response import ResponseContains
    from zeroclaw_eval.grading.script import Finding, Script

    family = ResponseContains()
    own = Script(calls=(), replies=("thinking", "the answer is 42"), final_response=None)
    assert list(family.consistency(["42", "seven"], own)) == [
        Finding(
            (1,),
            "no scripted reply contains it: passes only if the agent writes it itself",
            error=False,
        )
    ]
    through = Script(calls=(), replies=("the answer is 42",), final_response="the answer is 42")
    assert list(family.consistency(["42"], through)) == []


def test_a_boundary_entry_without_call_index_is_settled_by_any_scripted_call() -> None:
    from zeroclaw_eval.builtin.dispatch import BoundaryEntry, ToolArgumentsContain
    from zeroclaw_eval.grading.script import Finding, Script, ScriptedCall

    family = ToolArgumentsContain()
    script = Script(calls=(ScriptedCall(0, "echo"),), replies=(), final_response=None)
    assert list(family.consistency([BoundaryEntry(tool="echo", needle="hi")], script)) == []
    late = BoundaryEntry(tool="echo", needle="hi", call_index=1)
    assert list(family.consistency([late], script)) == [
        Finding((0, "call_index"), "the script calls 'echo' 1 time: can never pass")
    ]


def test_response_not_contains_settles_nothing_without_a_known_final_text() -> None:
    from zeroclaw_eval.builtin.response import ResponseNotContains
    from zeroclaw_eval.grading.script import Script

    family = ResponseNotContains()
    own = Script(calls=(), replies=("deleted /srv",), final_response=None)
    assert list(family.consistency(["deleted"], own)) == []


def test_a_sequence_step_the_script_never_calls_in_its_turn_is_an_error(tmp_path: Path) -> None:
    case = echo_case(
        expects={
            "tool_sequence": [
                {"mode": "in_order", "steps": [{"tool": "echo"}], "turn": 0},
                {"mode": "in_order", "steps": [{"tool": "e*"}, {"tool": "echo"}], "turn": 1},
                {"mode": "exact", "steps": [{"tool": "echo"}, {"tool": "echo", "optional": True}]},
            ]
        }
    )
    case["turns"].append(
        {"user_input": "And then?", "steps": [{"response": {"type": "text", "content": "Done."}}]}
    )
    (tmp_path / "zeroclaw.toml").write_text('[eval]\nsuite_dir = "suite"\n', encoding="utf-8")
    write_suite(tmp_path / "suite", case)
    status, lines = check(tmp_path)
    assert status == 1
    # Turn 1 makes no call: both of its required steps are reported, nothing else is.
    assert [line for line in lines if line.startswith("Error: suite/case0.json")] == [
        f'Error: suite/case0.json: expects.tool_sequence[1].steps[{n}].tool="{tool}": the '
        f"script never calls {tool!r} in turn 1: this step can never pair, so the entry can "
        "never pass"
        for n, tool in enumerate(["e*", "echo"])
    ]


def test_a_required_step_of_the_whole_case_is_reported_and_an_optional_one_is_not(
    tmp_path: Path,
) -> None:
    case = echo_case(
        expects={
            "tool_sequence": [
                {
                    "mode": "calls_only_among",
                    "steps": [{"tool": "echo"}, {"tool": "echo", "optional": True}],
                }
            ]
        }
    )
    case["turns"][0]["steps"] = [{"response": {"type": "text", "content": "No tool today."}}]
    (tmp_path / "zeroclaw.toml").write_text('[eval]\nsuite_dir = "suite"\n', encoding="utf-8")
    write_suite(tmp_path / "suite", case)
    status, lines = check(tmp_path)
    assert status == 1
    assert [line for line in lines if line.startswith("Error: suite/case0.json")] == [
        'Error: suite/case0.json: expects.tool_sequence[0].steps[0].tool="echo": the script '
        "never calls 'echo': this step can never pair, so the entry can never pass"
    ]
