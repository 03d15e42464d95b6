"""The trajectory score of ``tool_sequence``: how close the calls came to the steps,
from 0 to 1, beside the verdict and never deciding it; in the JSON report, kept in
the history, and drawn on the trend page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import RecordedCall, Registry, RunMode, RunRecord
from zeroclaw_eval.case.admission import admit_data
from zeroclaw_eval.history.store import open_history
from zeroclaw_eval.history.trend import page_data

from .conftest import echo_case, zeroclaw

SCRIPTED = ("echo", "search", "file_write")


def scored(
    registry: Registry, replay: RunMode, entry: dict[str, Any], *names: str
) -> tuple[bool, float | None]:
    case = echo_case(expects={"tool_sequence": [entry]})
    calls = [{"id": f"c{n}", "name": name, "arguments": {}} for n, name in enumerate(SCRIPTED)]
    case["turns"][0]["steps"][0]["response"]["tool_calls"] = calls
    admitted = admit_data(case, registry, replay, source="case.json")
    recorded = [
        RecordedCall(0, f"c{n}", name, {"q": n}, "ok", True, 0) for n, name in enumerate(names)
    ]
    (check,) = admitted.grade(RunRecord(responses=["ok"], calls=recorded))
    return check.passed, check.score


def steps(mode: str, *tools: str, **step: Any) -> dict[str, Any]:
    return {"mode": mode, "steps": [{"tool": tool, **step} for tool in tools]}


@pytest.mark.parametrize(
    ("entry", "calls", "verdict", "score"),
    [
        # The longest common subsequence in the ordered modes: 1 of 2 steps, of 2 calls.
        (steps("in_order", "echo", "search"), ("search", "echo"), False, 0.5),
        (steps("exact", "echo", "search"), ("echo", "search"), True, 1.0),
        # One step more than calls: 2 pairs of 3 steps and 2 calls.
        (steps("exact", "echo", "search", "file_write"), ("echo", "search"), False, 0.8),
        # Any order in the unordered modes: a largest matching.
        (steps("unordered", "echo", "search"), ("search", "echo"), True, 1.0),
        # A pass that is not the whole story: the score says how much more there was.
        (steps("calls_include", "echo"), ("echo", "search", "file_write"), True, 0.5),
        # A call whose arguments differ does not pair, and counts for nothing.
        (steps("in_order", "echo", arguments={"q": 7}), ("echo",), False, 0.0),
        (steps("in_order", "echo"), (), False, 0.0),
    ],
    ids=["out_of_order", "exact", "missing_step", "unordered", "extra_calls", "arguments", "none"],
)
def test_the_score_is_the_f1_of_what_pairs_whatever_the_verdict(
    registry: Registry,
    replay: RunMode,
    entry: dict[str, Any],
    calls: tuple[str, ...],
    verdict: bool,
    score: float,
) -> None:
    assert scored(registry, replay, entry, *calls) == (verdict, score)


def test_the_score_reaches_the_report_the_history_and_the_trend_page(tmp_path: Path) -> None:
    case = echo_case(
        expects={"tool_sequence": [{"mode": "calls_include", "steps": [{"tool": "echo"}]}]}
    )
    case["turns"][0]["steps"][0]["response"]["tool_calls"].append(
        {"id": "c9", "name": "echo", "arguments": {"message": "again"}}
    )
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "case.json").write_text(json.dumps(case), encoding="utf-8")
    history = tmp_path / "history.sqlite"
    result = zeroclaw(
        "eval", "run", "--suite", suite, "--format", "json", "--history", history, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr  # the score never gates
    (check,) = json.loads(result.stdout)["cases"][0]["checks"]
    assert check["passed"] is True
    assert check["score"] == pytest.approx(2 / 3, abs=1e-4)
    with open_history(history) as store:
        runs = store.runs()
        attempts = store.attempts([run.id for run in runs])
    assert [attempt.scores for attempt in attempts] == [(round(2 / 3, 4),)]
    data = page_data("suite", runs, attempts)
    assert [row["score"] for row in data["runs"]] == [round(2 / 3, 4)]


def test_a_check_without_a_score_writes_none(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "case.json").write_text(json.dumps(echo_case()), encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "json", "--no-history")
    assert result.returncode == 0, result.stderr
    checks = json.loads(result.stdout)["cases"][0]["checks"]
    assert checks and all("score" not in check for check in checks)
