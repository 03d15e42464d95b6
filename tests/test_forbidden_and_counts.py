"""``tool_calls_forbidden`` and ``tool_call_counts``: each passes and fails where
it should through a real ``zeroclaw eval run``, admission refuses the entries no
correct agent could pass (or no agent fail), and ``eval check`` finds those the
script can never satisfy.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import AdmissionError, Registry, RunMode, admit_file

from .bridged_helpers import command, configure, run, write_suite
from .cli_process import json_report
from .conftest import echo_case, zeroclaw
from .test_sequence import Call, case, echo

REFUND_OVER_100 = {"tool": "refund", "arguments": {"amount": {"$gt": 100}}}
DELETE_AFTER_SEARCH = {"tool": "delete", "after": {"tool": "search"}}

# id -> (turns, expects, {check: (passed, detail)})
VERDICTS: dict[str, tuple[list[list[list[Call]]], dict[str, Any], dict[str, tuple[bool, str]]]] = {
    "refund_over_the_limit": (
        [[[("refund", {"amount": 150, "reason": "late"}), ("refund", {"amount": 50})]]],
        {"tool_calls_forbidden": [REFUND_OVER_100], "tools_used": ["refund"]},
        {
            'tool_calls_forbidden: refund {"amount":{"$gt":100}}': (
                False,
                "1 forbidden call: refund[0] (turn 0, call 0) with /amount 150 "
                "(forbidden: a number > 100)",
            )
        },
    ),
    "refund_within_the_limit": (
        [[[("refund", {"amount": 100}), ("refund", {"amount": 99.5, "note": "x"})]]],
        {"tool_calls_forbidden": [REFUND_OVER_100], "tools_used": ["refund"]},
        {
            'tool_calls_forbidden: refund {"amount":{"$gt":100}}': (
                True,
                "2 calls to refund, none forbidden",
            )
        },
    ),
    "refund_amount_true_is_not_a_number": (
        [[[("refund", {"amount": True})]]],
        {"tool_calls_forbidden": [REFUND_OVER_100], "tools_used": ["refund"]},
        {
            'tool_calls_forbidden: refund {"amount":{"$gt":100}}': (
                True,
                "1 call to refund, none forbidden",
            )
        },
    ),
    "delete_after_search": (
        [[[("search", {"q": "a"})], [("delete", {"id": 1})]]],
        {"tool_calls_forbidden": [DELETE_AFTER_SEARCH], "min_tool_calls": 1},
        {
            "tool_calls_forbidden: delete after search": (
                False,
                "1 forbidden call: delete[0] (turn 0, call 1) (after search[0] (turn 0, call 0))",
            )
        },
    ),
    "delete_before_search": (
        [[[("delete", {"id": 1})], [("search", {"q": "a"})]]],
        {"tool_calls_forbidden": [DELETE_AFTER_SEARCH], "min_tool_calls": 1},
        {
            "tool_calls_forbidden: delete after search": (
                True,
                "1 call to delete, none forbidden after it",
            )
        },
    ),
    "delete_between_two_searches": (
        [[[("search", {"q": "a"})], [("delete", {"id": 1})], [("search", {"q": "b"})]]],
        {"tool_calls_forbidden": [DELETE_AFTER_SEARCH], "min_tool_calls": 1},
        {
            "tool_calls_forbidden: delete after search": (
                False,
                "1 forbidden call: delete[0] (turn 0, call 1) (after search[0] (turn 0, call 0))",
            )
        },
    ),
    "delete_after_another_search": (
        [[[("search", {"q": "a"})], [("delete", {"id": 1})]]],
        {
            "tool_calls_forbidden": [
                {"tool": "delete", "after": {"tool": "search", "arguments": {"q": "x"}}}
            ],
            "min_tool_calls": 1,
        },
        {
            'tool_calls_forbidden: delete after search {"q":"x"}': (
                True,
                'no call like search {"q":"x"}',
            )
        },
    ),
    "delete_after_a_search_in_another_turn": (
        [[[("search", {"q": "a"})]], [[("delete", {"id": 1})]]],
        {
            "tool_calls_forbidden": [{**DELETE_AFTER_SEARCH, "turn": 1}, DELETE_AFTER_SEARCH],
            "min_tool_calls": 1,
        },
        {
            "tool_calls_forbidden: delete after search in turn 1": (
                True,
                "no call like search in turn 1",
            ),
            "tool_calls_forbidden: delete after search": (
                False,
                "1 forbidden call: delete[0] (turn 1, call 1) (after search[0] (turn 0, call 0))",
            ),
        },
    ),
    "shell_outright": (
        [[[echo("a"), ("shell", {"cmd": "ls"})]]],
        {"tool_calls_forbidden": [{"tool": "sh*"}], "tools_used": ["echo"]},
        {"tool_calls_forbidden: sh*": (False, "1 forbidden call: shell[0] (turn 0, call 1)")},
    ),
    "counts": (
        [[[echo("a"), echo("b"), ("search", {"q": 1})]]],
        {
            "tool_call_counts": {
                "echo": {"max": 1},
                "search": {"min": 2},
                "ech*": {"min": 1, "max": 3},
            }
        },
        {
            "tool_call_counts: echo at most 1": (
                False,
                "2 calls to echo (3 calls: echo, echo, search)",
            ),
            "tool_call_counts: search at least 2": (
                False,
                "1 call to search (3 calls: echo, echo, search)",
            ),
            "tool_call_counts: ech* 1 to 3": (
                True,
                "2 calls to ech* (3 calls: echo, echo, search)",
            ),
        },
    ),
    "counts_at_the_bounds": (
        [[[echo("a"), ("search", {"q": 1}), ("search", {"q": 2})]]],
        {"tool_call_counts": {"echo": {"min": 1, "max": 1}, "search": {"max": 2, "min": 2}}},
        {
            "tool_call_counts: echo exactly 1": (
                True,
                "1 call to echo (3 calls: echo, search, search)",
            ),
            "tool_call_counts: search exactly 2": (
                True,
                "2 calls to search (3 calls: echo, search, search)",
            ),
        },
    ),
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The JSON report of one ``zeroclaw eval run`` over every case above."""
    suite = tmp_path_factory.mktemp("bounds") / "suite"
    suite.mkdir()
    for name, (turns, expects, _) in VERDICTS.items():
        data = case(name.replace("_", "-"), turns, expects)
        (suite / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "json", "--no-history")
    assert result.returncode == 1, result.stderr
    reported = json_report(result)
    assert reported["errors"] == []
    return {c["name"]: c for c in reported["cases"]}


@pytest.mark.parametrize("name", VERDICTS.keys())
def test_each_verdict_and_its_detail(report: dict[str, dict[str, Any]], name: str) -> None:
    reported = report[name.replace("_", "-")]
    assert reported["error"] is None
    checks = {c["check"]: (c["passed"], c["detail"]) for c in reported["checks"]}
    expected = VERDICTS[name][2]
    assert {check: checks[check] for check in expected} == expected


# --- admission ---------------------------------------------------------------


def expects(**families: Any) -> dict[str, Any]:
    fixture = echo_case(expects=families)
    calls = fixture["turns"][0]["steps"][0]["response"]["tool_calls"]
    for number, tool in enumerate(["refund", "search", "delete"]):
        calls.append({"id": f"x{number}", "name": tool, "arguments": {"amount": 1}})
    return fixture


FORBID = "expects.tool_calls_forbidden[0]"
COUNTS = "expects.tool_call_counts"
SEQ_STEP = {"tool": "refund", "arguments": {"amount": 500}}

# id -> (fixture, field, what the message says)
REFUSALS: dict[str, tuple[dict[str, Any], str, str]] = {
    "forbidden_bad_regex": (
        expects(tool_calls_forbidden=[{"tool": "echo", "arguments": {"m": {"$regex": "["}}}]),
        f'{FORBID}.arguments.m.$regex="["',
        "not a valid regular expression",
    ),
    "forbidden_after_bad_matcher": (
        expects(
            tool_calls_forbidden=[
                {"tool": "delete", "after": {"tool": "search", "arguments": {"q": {"$x": 1}}}}
            ]
        ),
        f"{FORBID}.after.arguments.q.$x=1",
        "unknown matcher '$x'",
    ),
    "forbidden_implied_by_a_required_step": (
        expects(
            tool_calls_forbidden=[REFUND_OVER_100],
            tool_sequence=[{"mode": "calls_include", "steps": [SEQ_STEP]}],
        ),
        f'{FORBID}.tool="refund"',
        "contradicts tool_sequence[0].steps[0], a required step only a forbidden call can pair",
    ),
    "forbidden_pair_implied_by_ordered_steps": (
        expects(
            tool_calls_forbidden=[DELETE_AFTER_SEARCH],
            tool_sequence=[
                {
                    "mode": "in_order",
                    "steps": [{"tool": "search"}, {"tool": "echo"}, {"tool": "delete"}],
                }
            ],
        ),
        f'{FORBID}.tool="delete"',
        "contradicts tool_sequence[0].steps[2]",
    ),
    "forbidden_contradicts_tools_used": (
        expects(tool_calls_forbidden=[{"tool": "refund"}], tools_used=["refund"]),
        f'{FORBID}.tool="refund"',
        "contradicts tools_used naming 'refund'",
    ),
    "forbidden_contradicts_a_count_min": (
        expects(tool_calls_forbidden=[{"tool": "ref*"}], tool_call_counts={"refund": {"min": 1}}),
        f'{FORBID}.tool="ref*"',
        "contradicts a tool_call_counts min naming 'refund'",
    ),
    "forbidden_turn_past_the_last": (
        expects(tool_calls_forbidden=[{"tool": "refund", "turn": 3}]),
        f"{FORBID}.turn=3",
        "no run reaches turn 3",
    ),
    "forbidden_tool_never_offered": (
        expects(tool_calls_forbidden=[{"tool": "rm_rf"}]),
        f'{FORBID}.tool="rm_rf"',
        "names no tool the agent is offered",
    ),
    "counts_min_above_max": (
        expects(tool_call_counts={"echo": {"min": 3, "max": 1}}),
        f"{COUNTS}.echo.min=3",
        "is above max=1: no count meets both",
    ),
    "counts_nothing": (
        expects(tool_call_counts={"echo": {}}),
        f"{COUNTS}.echo",
        "needs min, max or both",
    ),
    "counts_min_zero": (
        expects(tool_call_counts={"echo": {"min": 0}}),
        f"{COUNTS}.echo.min=0",
        "a lower bound of 0 asserts nothing",
    ),
    "counts_negative": (
        expects(tool_call_counts={"echo": {"max": -1}}),
        f"{COUNTS}.echo.max=-1",
        "greater than or equal to 0",
    ),
    "counts_unknown_key": (
        expects(tool_call_counts={"echo": {"maximum": 1}}),
        f"{COUNTS}.echo.maximum=1",
        "unknown key",
    ),
    "counts_max_below_required_steps": (
        expects(
            tool_call_counts={"ech*": {"max": 1}},
            tool_sequence=[{"mode": "in_order", "steps": [{"tool": "echo"}, {"tool": "echo"}]}],
        ),
        f"{COUNTS}.ech*.max=1",
        "contradicts tool_sequence[0], which needs at least 2 calls to ech*",
    ),
    "counts_max_below_a_call_index": (
        expects(
            tool_call_counts={"echo": {"max": 1}},
            tool_arguments_contain=[{"tool": "echo", "needle": "h", "call_index": 1}],
        ),
        f"{COUNTS}.echo.max=1",
        "contradicts tool_arguments_contain echo, which needs at least 2 calls to echo",
    ),
    "counts_max_below_the_largest_need": (
        expects(
            tool_call_counts={"echo": {"max": 1}},
            tools_used=["echo"],
            tool_sequence=[{"mode": "in_order", "steps": [{"tool": "echo"}, {"tool": "echo"}]}],
        ),
        f"{COUNTS}.echo.max=1",
        "contradicts tool_sequence[0], which needs at least 2 calls to echo",
    ),
    "counts_max_zero_beside_tools_used": (
        expects(tool_call_counts={"echo": {"max": 0}}, tools_used=["echo"]),
        f"{COUNTS}.echo.max=0",
        "contradicts tools_used, which needs at least 1 call to echo",
    ),
    "counts_min_above_max_tool_calls": (
        expects(tool_call_counts={"echo": {"min": 3}}, max_tool_calls=2),
        f"{COUNTS}.echo.min=3",
        "is above max_tool_calls=2",
    ),
    "counts_min_beside_tools_not_used": (
        expects(tool_call_counts={"echo": {"min": 1}}, tools_not_used=["echo"]),
        f"{COUNTS}.echo.min=1",
        "contradicts tools_not_used naming 'echo'",
    ),
    "counts_tool_never_offered": (
        expects(tool_call_counts={"rm_rf": {"max": 1}}),
        f'{COUNTS}.rm_rf="rm_rf"',
        "names no tool the agent is offered",
    ),
}


#: What pydantic says itself, inside a longer message of its own.
PYDANTIC_WORDS = ("greater than or equal to 0", "unknown key")

OFFER_REFUSALS = ("forbidden_tool_never_offered", "counts_tool_never_offered")


@pytest.mark.parametrize(
    ("fixture", "field", "says"),
    [value for key, value in REFUSALS.items() if key not in OFFER_REFUSALS],
    ids=[key for key in REFUSALS if key not in OFFER_REFUSALS],
)
def test_admission_refuses_naming_file_and_field(
    fixture: dict[str, Any],
    field: str,
    says: str,
    write_case: Callable[..., Path],
    registry: Registry,
    replay: RunMode,
) -> None:
    path = write_case(fixture)
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, registry, replay)
    assert (refused.value.source, refused.value.field) == (str(path), field)
    assert refused.value.message.startswith(says) or says in PYDANTIC_WORDS
    assert says in refused.value.message


@pytest.mark.parametrize("name", OFFER_REFUSALS)
def test_a_tool_outside_the_offer_is_refused_by_a_run(name: str, tmp_path: Path) -> None:
    fixture, field, says = REFUSALS[name]
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "case.json").write_text(json.dumps(fixture), encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite, "--no-history")
    assert result.returncode == 1
    assert f"{suite / 'case.json'}: {field}: {says}" in result.stderr


def test_each_refused_fixture_is_one_edit_from_an_admitted_one(
    write_case: Callable[..., Path], registry: Registry, replay: RunMode
) -> None:
    admitted = expects(
        tool_calls_forbidden=[
            REFUND_OVER_100,
            {**DELETE_AFTER_SEARCH, "turn": 0},
            {
                "tool": "delete",
                "after": {"tool": "search", "arguments": {"q": {"$type": "string"}}},
            },
        ],
        tool_call_counts={"echo": {"min": 1, "max": 1}, "ech*": {"max": 1}},
        tool_sequence=[
            {"mode": "calls_include", "steps": [{"tool": "refund", "arguments": {"amount": 1}}]},
            {"mode": "in_order", "steps": [{"tool": "delete"}, {"tool": "search"}]},
        ],
        tools_used=["echo"],
    )
    admitted["turns"][0]["steps"][0]["response"]["tool_calls"].sort(
        key=lambda call: call["name"] != "delete"
    )
    case_ = admit_file(write_case(admitted), registry, replay)
    assert case_.idle_fails


def test_a_bridged_agent_refuses_forbidden_arguments_but_certifies_names(tmp_path: Path) -> None:
    config = configure(tmp_path / "project", command("echo_agent.py"))
    names = echo_case(
        expects={"tool_calls_forbidden": [{"tool": "echo", "after": {"tool": "echo"}}]}
        | {"tool_call_counts": {"echo": {"min": 1, "max": 1}}}
    )
    assert run(config, write_suite(tmp_path / "names", names)).exit_code == 0
    arguments = echo_case(
        expects={"tool_calls_forbidden": [{"tool": "echo", "arguments": {"message": "x"}}]}
        | {"tools_used": ["echo"]}
    )
    refused = run(config, write_suite(tmp_path / "arguments", arguments))
    assert refused.exit_code == 1
    assert "case0.json: expects.tool_calls_forbidden: agent 'command " in refused.stderr


def test_eval_check_finds_what_the_script_can_never_satisfy(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    fixtures = {
        "forbidden": {"tool_calls_forbidden": [{"tool": "refund"}], "tools_used": ["echo"]},
        "pair": {
            "tool_calls_forbidden": [{"tool": "delete", "after": {"tool": "refund"}}],
            "tools_used": ["echo"],
        },
        "counts": {"tool_call_counts": {"echo": {"min": 2}, "search": {"max": 0}}},
        "fine": {
            "tool_calls_forbidden": [{"tool": "refund", "after": {"tool": "delete"}}],
            "tool_call_counts": {"echo": {"max": 1}, "refund": {"min": 1}},
        },
    }
    for name, families in fixtures.items():
        (suite / f"{name}.json").write_text(json.dumps(expects(**families)), encoding="utf-8")
    result = zeroclaw("eval", "check", "--suite", suite)
    assert result.returncode == 1
    found = [
        line for line in result.stdout.splitlines() + result.stderr.splitlines() if "json: " in line
    ]
    assert any(
        'forbidden.json: expects.tool_calls_forbidden[0].tool="refund": the script calls '
        "'refund' in turn 0: can never pass" in line
        for line in found
    ), found
    assert any(
        "pair.json: expects.tool_calls_forbidden[0].tool=\"delete\": the script calls 'delete' "
        "after 'refund' in turn 0: can never pass" in line
        for line in found
    ), found
    assert any(
        "counts.json: expects.tool_call_counts.echo" in line
        and "the script calls 'echo' 1 time: can never pass" in line
        for line in found
    ), found
    assert any(
        "counts.json: expects.tool_call_counts.search" in line
        and "the script calls 'search' 1 time: can never pass" in line
        for line in found
    ), found
    assert not any("fine.json" in line for line in found), found


def test_both_families_are_in_the_schema_and_the_plugin_list() -> None:
    schema = json.loads(zeroclaw("eval", "schema").stdout)
    families = schema["properties"]["expects"]["properties"]
    assert {"tool_calls_forbidden", "tool_call_counts"} <= families.keys()
    listed = zeroclaw("eval", "plugins").stdout
    assert "tool_calls_forbidden: no call fits the pattern" in listed
    assert "tool_call_counts: the calls to each tool" in listed


def test_a_forbidden_entry_alone_is_vacuous_and_refused_by_the_gate(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    fixture = expects(tool_calls_forbidden=[{"tool": "refund"}])
    (suite / "case.json").write_text(json.dumps(fixture), encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite, "--no-history")
    assert result.returncode == 1
    assert "vacuous: a run that does nothing passes all 1 check" in result.stderr
