"""``--shard K/N`` with a run history: shards balanced by the recorded durations.

The history is seeded with whole runs of skewed durations; the shards are real
``zeroclaw eval run`` processes appending to that same history as they finish.
"""

from __future__ import annotations

from pathlib import Path

from zeroclaw_eval.history.store import RunInfo, open_history
from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport
from zeroclaw_eval.testing import fixture, write_fixture

from .cli_process import json_report
from .conftest import zeroclaw

NAMES = [f"case-{i}" for i in range(6)]


def suite_of_six(directory: Path) -> Path:
    for index, name in enumerate(NAMES):
        case = fixture({"response_contains": ["done"]}, name=name)
        write_fixture(directory, case, f"c{index}.json")
    return directory


def seed(history: Path, suite: Path, runs: list[dict[str, float]], mode: str = "replay") -> None:
    """Append one run per ``runs`` entry: each listed case with that duration."""
    with open_history(history) as opened:
        for number, seconds in enumerate(runs):
            cases = tuple(
                CaseReport(
                    name,
                    str(suite / f"c{NAMES.index(name)}.json"),
                    (CheckResult("response_contains: done", True, "found"),),
                    duration_s=duration,
                )
                for name, duration in seconds.items()
            )
            report = SuiteReport(str(suite), cases, mode, config_digest="d", agent="reference")
            info = RunInfo(f"2026-01-0{number + 1}T00:00:00Z", 1.0, suite=str(suite.resolve()))
            opened.append(report, info)


def shard_names(suite: Path, count: int, *history: str | Path) -> list[list[str]]:
    """The cases each of ``count`` shard processes ran, one after the other."""
    shards = []
    for index in range(1, count + 1):
        result = zeroclaw(
            "eval", "run", "--suite", suite, "--shard", f"{index}/{count}", "--format", "json",
            *history,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        shards.append([case["name"] for case in json_report(result)["cases"]])
    return shards


def test_shards_follow_the_median_recorded_durations(tmp_path: Path) -> None:
    suite = suite_of_six(tmp_path / "suite")
    history = tmp_path / "history.sqlite"
    quick = dict.fromkeys(NAMES, 1.0)
    seed(
        history,
        suite,
        [
            {**quick, "case-0": 50.0, "case-1": 40.0},
            {**quick, "case-0": 60.0, "case-1": 50.0},
            # One slow outlier: the median ignores it (a mean would make case-5 the longest).
            {**quick, "case-0": 55.0, "case-1": 45.0, "case-5": 1000.0},
        ],
    )
    # Shards of earlier runs (fewer cases than the suite) and live runs are not the
    # durations of a whole replay run: neither counts, however many there are.
    seed(history, suite, [{"case-2": 10_000.0}] * 4)
    seed(history, suite, [{**quick, "case-3": 10_000.0}] * 4, mode="live")

    shards = shard_names(suite, 2, "--history", history)
    # case-0 (55 s) alone balances the other five together (45 + 4 x 1 s).
    assert shards == [["case-0"], ["case-1", "case-2", "case-3", "case-4", "case-5"]]
    # The first shard appended its run before the second started: the cut held.
    assert sorted(name for piece in shards for name in piece) == NAMES


def test_without_a_history_shards_follow_the_count(tmp_path: Path) -> None:
    suite = suite_of_six(tmp_path / "suite")
    shards = shard_names(suite, 2, "--no-history")
    assert shards == [NAMES[:3], NAMES[3:]]


def test_a_history_without_runs_of_the_suite_leaves_the_count(tmp_path: Path) -> None:
    suite = suite_of_six(tmp_path / "suite")
    history = tmp_path / "history.sqlite"
    seed(history, tmp_path / "another-suite", [{**dict.fromkeys(NAMES, 1.0), "case-0": 99.0}])
    shards = shard_names(suite, 2, "--history", history)
    assert shards == [NAMES[:3], NAMES[3:]]
