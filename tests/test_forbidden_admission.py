"""When a forbidden pattern contradicts a required step, and when it does not.

A required ``tool_sequence`` step *implies* a forbidden call when every call it
can pair with fits the pattern: a plain tool name the pattern accepts, and
arguments the step fixes (exactly, or as a floor the pattern's own ``partial``
or ``paths`` comparison cannot escape) that the pattern accepts. Anything less
certain is admitted: the agent can pass both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import AdmissionError, Registry, RunMode
from zeroclaw_eval.builtin.forbidden import ToolCallsForbidden
from zeroclaw_eval.case.admission import admit_data

from .conftest import echo_case, zeroclaw

OVER_100 = {"tool": "refund", "arguments": {"amount": {"$gt": 100}}}


def fixture(forbidden: list[dict[str, Any]], *sequences: dict[str, Any]) -> dict[str, Any]:
    case = echo_case(expects={"tool_calls_forbidden": forbidden, "tool_sequence": list(sequences)})
    calls = case["turns"][0]["steps"][0]["response"]["tool_calls"]
    for number, tool in enumerate(["refund", "search", "delete", "refresh"]):
        calls.append({"id": f"x{number}", "name": tool, "arguments": {"amount": 1}})
    return case


def among(mode: str, *steps: dict[str, Any], **entry: Any) -> dict[str, Any]:
    return {"mode": mode, "steps": list(steps), **entry}


def refund(arguments: dict[str, Any], **step: Any) -> dict[str, Any]:
    return {"tool": "refund", "arguments": arguments, **step}


# id -> (forbidden, sequence entry, the step the refusal names or None: admitted)
CASES: dict[str, tuple[list[dict[str, Any]], dict[str, Any], int | None]] = {
    "exact_step_over_the_limit": (
        [OVER_100],
        among("calls_include", refund({"amount": 500})),
        0,
    ),
    "exact_step_within_the_limit": (
        [OVER_100],
        among("calls_include", refund({"amount": 50})),
        None,
    ),
    "partial_step_over_the_limit": (
        [OVER_100],
        among("in_order", {"tool": "echo"}, refund({"amount": 500}, match="partial")),
        1,
    ),
    "exact_step_ignoring_a_key_over_the_limit": (
        [OVER_100],
        among("calls_include", refund({"amount": 500}, ignore=["/ts"])),
        0,
    ),
    "partial_step_against_an_exact_pattern": (
        [refund({"amount": 500}, match="exact")],
        among("calls_include", refund({"amount": 500}, match="partial")),
        None,
    ),
    "exact_step_against_an_exact_pattern": (
        [refund({"amount": 500}, match="exact")],
        among("calls_include", refund({"amount": 500})),
        0,
    ),
    "partial_step_against_a_paths_pattern": (
        [refund({"amount": 500}, match="paths", paths=["/amount"])],
        among("calls_include", refund({"amount": 500, "to": "x"}, match="partial")),
        0,
    ),
    "step_with_a_matcher": (
        [OVER_100],
        among("calls_include", refund({"amount": {"$gt": 500}})),
        None,
    ),
    "step_by_pattern": ([{"tool": "refund"}], among("calls_include", {"tool": "ref*"}), None),
    "pattern_fits_the_step": ([{"tool": "ref*"}], among("calls_include", {"tool": "refund"}), 0),
    "step_without_arguments_against_arguments": (
        [OVER_100],
        among("calls_include", {"tool": "refund"}),
        None,
    ),
    "optional_step": (
        [{"tool": "refund"}],
        among("calls_only_among", {"tool": "echo"}, {"tool": "refund", "optional": True}),
        None,
    ),
    "forbidden_in_one_turn_step_anywhere": (
        [{"tool": "refund", "turn": 0}],
        among("calls_include", {"tool": "refund"}),
        None,
    ),
    "forbidden_anywhere_step_in_one_turn": (
        [{"tool": "refund"}],
        among("calls_include", {"tool": "refund"}, turn=0),
        0,
    ),
    "forbidden_and_step_in_the_same_turn": (
        [{"tool": "refund", "turn": 0}],
        among("calls_include", {"tool": "refund"}, turn=0),
        0,
    ),
    "pair_in_order": (
        [{"tool": "delete", "after": {"tool": "search"}}],
        among("in_order", {"tool": "search"}, {"tool": "echo"}, {"tool": "delete"}),
        2,
    ),
    "pair_in_the_other_order": (
        [{"tool": "delete", "after": {"tool": "search"}}],
        among("exact", {"tool": "delete"}, {"tool": "search"}, {"tool": "echo"}),
        None,
    ),
    "pair_unordered": (
        [{"tool": "delete", "after": {"tool": "search"}}],
        among("unordered", {"tool": "search"}, {"tool": "delete"}, {"tool": "echo"}),
        None,
    ),
    "pair_with_an_optional_first": (
        [{"tool": "delete", "after": {"tool": "search"}}],
        among("exact", {"tool": "search", "optional": True}, {"tool": "delete"}, {"tool": "echo"}),
        None,
    ),
}


@pytest.mark.parametrize(("forbidden", "sequence", "step"), CASES.values(), ids=CASES.keys())
def test_a_forbidden_call_a_required_step_implies_is_refused(
    registry: Registry,
    replay: RunMode,
    forbidden: list[dict[str, Any]],
    sequence: dict[str, Any],
    step: int | None,
) -> None:
    data = fixture(forbidden, sequence)
    if step is None:
        admit_data(data, registry, replay, source="case.json")
        return
    with pytest.raises(AdmissionError) as refused:
        admit_data(data, registry, replay, source="case.json")
    assert refused.value.field.startswith("expects.tool_calls_forbidden[0].tool=")
    assert refused.value.message == (
        f"contradicts tool_sequence[0].steps[{step}], a required step only a forbidden call "
        "can pair with"
    )


def test_the_second_sequence_entry_is_read_too(registry: Registry, replay: RunMode) -> None:
    data = fixture(
        [{"tool": "refund"}],
        among("calls_include", {"tool": "echo"}),
        among("calls_include", {"tool": "refund"}),
    )
    with pytest.raises(AdmissionError, match=r"contradicts tool_sequence\[1\]\.steps\[0\]"):
        admit_data(data, registry, replay, source="case.json")


def test_evidence_names_arguments_when_any_pattern_compares_them() -> None:
    family = ToolCallsForbidden()
    params = family.adapter.validate_python
    assert family.evidence(params([{"tool": "a"}])) == {"calls"}
    assert family.evidence(params([{"tool": "a"}, OVER_100])) == {"calls", "arguments"}
    after = [{"tool": "a", "after": {"tool": "b", "arguments": {"x": 1}}}]
    assert family.evidence(params(after)) == {"calls", "arguments"}


def test_the_schema_says_partial_is_the_default_here() -> None:
    schema = json.loads(zeroclaw("eval", "schema").stdout)
    match = schema["$defs"]["ForbiddenCall"]["properties"]["match"]
    assert match["description"] == (
        "how the arguments are compared: partial (the default with arguments: the call's "
        "arguments include these), exact, subset, ignore (the default without), paths"
    )


def test_an_after_tool_outside_the_offer_is_refused(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    data = echo_case(
        expects={
            "tool_calls_forbidden": [{"tool": "echo", "after": {"tool": "rm_rf"}}],
            "tools_used": ["echo"],
        }
    )
    (suite / "case.json").write_text(json.dumps(data), encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite, "--no-history")
    assert result.returncode == 1
    assert (
        f'{suite / "case.json"}: expects.tool_calls_forbidden[0].after.tool="rm_rf": names no '
        "tool the agent is offered"
    ) in result.stderr


def test_eval_check_reads_names_only_where_the_patterns_ignore_arguments(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    data = fixture(
        [
            # The script's arguments are not known here: no finding either way.
            {"tool": "delete", "after": {"tool": "refund", "arguments": {"amount": 1}}},
            {"tool": "refund", "arguments": {"amount": 1}},
            # Names alone settle this one, after the two above.
            {"tool": "delete", "after": {"tool": "search"}},
        ]
    )
    data["expects"]["tool_sequence"] = [among("calls_include", {"tool": "echo"})]
    (suite / "case.json").write_text(json.dumps(data), encoding="utf-8")
    result = zeroclaw("eval", "check", "--suite", suite)
    assert result.returncode == 1
    output = result.stdout + result.stderr
    assert "tool_calls_forbidden[0]" not in output
    assert "tool_calls_forbidden[1]" not in output
    assert (
        "expects.tool_calls_forbidden[2].tool=\"delete\": the script calls 'delete' after "
        "'search' in turn 0: can never pass"
    ) in output
