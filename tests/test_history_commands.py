"""``zeroclaw eval history`` and ``zeroclaw eval compare`` on histories built through
the library, read back through the installed console script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_process import assert_clean_errors
from tests.conftest import zeroclaw
from zeroclaw_eval.history.store import RunInfo, open_history
from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport
from zeroclaw_eval.util.stats import fisher_exact, wilson_interval


def add_run(
    path: Path,
    cases: dict[str, list[bool]],
    suite: str = "evals/capability",
    digest: str = "d1",
    commit: str | None = "0123456789abcdef",
    folder: str = "",
) -> int:
    """Append a run in which each case's attempts passed or failed as listed, filed
    (as ``zeroclaw eval run`` files it) under the suite's absolute path, here
    beside the history."""
    reports = []
    for name, outcomes in cases.items():
        attempts = [
            CaseReport(
                name,
                f"{folder}{name}.json",
                (CheckResult('response_contains: "ok"', ok, 'observed "nope"'),),
                None,
                0.01,
            )
            for ok in outcomes
        ]
        reports.append(CaseReport.of_attempts(attempts))
    repeats = max(len(outcomes) for outcomes in cases.values())
    report = SuiteReport(suite, tuple(reports), config_digest=digest, repeats=repeats)
    info = RunInfo(
        "2026-12-01T10:00:00Z",
        1.5,
        suite=str(path.parent / suite),
        git_commit=commit,
        git_dirty=False,
    )
    with open_history(path) as history:
        return history.append(report, info)


def runs_cli(*args: object) -> tuple[int, str, str]:
    """``zeroclaw eval ARGS`` in the directory of the history (the ``--history`` argument)."""
    history = Path(str(args[list(args).index("--history") + 1]))
    result = zeroclaw("eval", *map(str, args), cwd=history.parent)
    return result.returncode, result.stdout, result.stderr


@pytest.fixture
def history(tmp_path: Path) -> Path:
    return tmp_path / "history.sqlite"


def test_history_lists_the_latest_runs_newest_first(history: Path) -> None:
    add_run(history, {"a": [True], "b": [False]})
    add_run(history, {"x": [True]}, suite="evals/live", commit=None)
    add_run(history, {"a": [True, True], "b": [True, False]})
    code, out, err = runs_cli("history", "--history", history)
    assert code == 0, err
    lines = out.splitlines()
    header = ["run", "started", "(UTC)", "commit", "cases", "attempts", "verdict", "suite"]
    assert lines[0].split() == header
    assert [line.split()[0] for line in lines[1:]] == ["3", "2", "1"]
    low, high = wilson_interval(3, 4)
    assert lines[1].split()[2:] == [
        "0123456789",
        "1/2",
        "3/4",
        f"[{low:.2f},",
        f"{high:.2f}]",
        "failed",
        "evals/capability",
        "(replay",
        "x2)",
    ]
    assert lines[2].split()[2:5] == ["-", "1/1", "1/1"]
    assert lines[2].split()[-3:] == ["passed", "evals/live", "(replay)"]
    # One suite: its pass rate over the runs listed, attempts from every run.
    code, out, _ = runs_cli("history", "--history", history, "--suite", "evals/capability")
    low, high = wilson_interval(4, 6)
    assert out.splitlines()[-1] == (
        f"pass rate over these 2 runs: 0.67 (4/6 attempts), 95 % Wilson interval "
        f"[{low:.2f}, {high:.2f}]"
    )
    code, out, _ = runs_cli(
        "history",
        "--history",
        history,
        "--suite",
        "evals/capability",
        "--limit",
        "1",
        "--format",
        "json",
    )
    document = json.loads(out)
    (run,) = document["runs"]
    suite = str(history.parent / "evals" / "capability")
    assert (run["id"], run["suite"], run["repeats"], run["total"], run["passed"]) == (
        3,
        suite,
        2,
        2,
        1,
    )
    assert (run["attempts"], run["attempts_passed"], run["pass_rate"]) == (4, 3, 0.75)
    assert run["wilson_95"] == pytest.approx(list(wilson_interval(3, 4)))
    assert (document["suite"], document["attempts"], document["attempts_passed"]) == (suite, 4, 3)
    assert (run["config_digest"], run["verdict"], run["git_commit"]) == (
        "d1",
        "failed",
        "0123456789abcdef",
    )


def test_a_cases_outcomes_and_its_wilson_interval(history: Path) -> None:
    add_run(history, {"a": [True, True, True]})
    add_run(history, {"a": [True, False, True], "b": [True]})
    add_run(history, {"a": [False, False, False]})
    code, out, err = runs_cli("history", "--history", history, "--case", "a")
    assert code == 0, err
    low, high = wilson_interval(5, 9)
    lines = out.splitlines()
    assert lines[0] == "case a (a.json): the last 3 runs with it"
    assert lines[1].startswith("✗ run    3") and "0/3 passed" in lines[1]
    assert "attempt" not in lines[1] and 'response_contains: "ok": observed "nope"' in lines[1]
    assert "1/3" not in lines[2] and "2/3 passed  flaky" in lines[2]
    assert lines[3].startswith("✓ run    1") and "3/3 passed" in lines[3]
    assert lines[4] == f"pass rate 0.56 (5/9), 95 % Wilson interval [{low:.2f}, {high:.2f}]"
    code, out, _ = runs_cli("history", "--history", history, "--case", "a", "--format", "json")
    document = json.loads(out)
    assert (document["passes"], document["attempts"]) == (5, 9)
    assert document["wilson_95"] == pytest.approx([low, high])
    assert [row["flaky"] for row in document["runs"]] == [False, True, False]


def test_a_name_two_suites_share_is_told_apart_by_its_fixture(history: Path) -> None:
    """Fixtures of two suites with one ``model_name``: never pooled into one pass rate."""
    for _ in range(2):
        add_run(history, {"a": [True]}, suite="evals/one", folder="evals/one/")
        add_run(history, {"a": [False]}, suite="evals/two", folder="evals/two/")
    code, _, err = runs_cli("history", "--history", history, "--case", "a")
    assert code == 1
    assert assert_clean_errors(err) == [
        f"Error: {history}: case 'a' is the name of 2 fixtures: evals/one/a.json, "
        "evals/two/a.json; give one of them with --case FIXTURE"
    ]
    code, out, err = runs_cli("history", "--history", history, "--case", "evals/two/a.json")
    assert code == 0, err
    assert out.splitlines()[0] == "case a (evals/two/a.json): the last 2 runs with it"
    assert out.splitlines()[-1].startswith("pass rate 0.00 (0/2)")
    # One suite holds one fixture of that name: --suite is enough.
    code, out, err = runs_cli(
        "history", "--history", history, "--suite", "evals/one", "--case", "a"
    )
    assert code == 0, err
    assert out.splitlines()[-1].startswith("pass rate 1.00 (2/2)")


def test_an_unknown_case_or_a_missing_history_is_an_error(history: Path) -> None:
    code, _, err = runs_cli("history", "--history", history)
    assert code == 1
    assert assert_clean_errors(err) == [
        f"Error: {history}: no run history here (zeroclaw eval run writes one)"
    ]
    assert not history.exists()
    add_run(history, {"a": [True]})
    code, _, err = runs_cli("history", "--history", history, "--case", "zz")
    assert code == 1
    assert assert_clean_errors(err) == [f"Error: {history}: case 'zz' is in none of the last 1 run"]


def regression_history(history: Path) -> None:
    add_run(
        history,
        {
            "steady": [True] * 10,
            "got-worse": [True] * 10,
            "got-better": [False] * 10,
            "noisy": [True] * 5 + [False] * 5,
            "retired": [True],
        },
    )
    add_run(history, {"other-suite": [True]}, suite="evals/live")
    add_run(
        history,
        {
            "steady": [True] * 10,
            "got-worse": [True] * 2 + [False] * 8,
            "got-better": [True] * 10,
            "noisy": [True] * 6 + [False] * 4,
            "brand-new": [False],
        },
    )


def test_compare_defaults_to_the_latest_run_and_the_one_before_it_of_its_suite(
    history: Path,
) -> None:
    regression_history(history)
    code, out, err = runs_cli("compare", "--history", history)
    assert code == 0, err  # without --fail-on-regression, a regression is reported only
    worse = fisher_exact(10, 0, 2, 8)
    better = fisher_exact(0, 10, 10, 0)
    noise = fisher_exact(5, 5, 6, 4)
    assert out.splitlines() == [
        "base: run 1 of evals/capability (2026-12-01T10:00:00Z, 0123456789)",
        "head: run 3 of evals/capability (2026-12-01T10:00:00Z, 0123456789)",
        "newly failing (1):",
        f"  got-worse: 10/10 -> 2/10 passed (Fisher p={worse:.3g}, REGRESSION, significant)",
        "newly passing (1):",
        f"  got-better: 0/10 -> 10/10 passed (Fisher p={better:.3g}, significant)",
        "pass rate moved (1):",
        f"  noisy: 5/10 -> 6/10 passed (Fisher p={noise:.3g}, not significant)",
        "new (1):",
        "  brand-new: 0/1 passed",
        "removed (1):",
        "  retired: 1/1 passed",
        "unchanged: 1 case",
        "1 significant regression (alpha=0.05)",
    ]
    code, _, _ = runs_cli("compare", "--history", history, "--fail-on-regression")
    assert code == 1


def test_compare_as_json(history: Path) -> None:
    regression_history(history)
    code, out, _ = runs_cli("compare", "1", "3", "--history", history, "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert (document["base"]["id"], document["head"]["id"]) == (1, 3)
    assert document["same_settings"] is True
    assert document["regressions"] == ["got-worse"]
    by_name = {case["name"]: case for case in document["cases"]}
    assert by_name["got-worse"] == {
        "name": "got-worse",
        "change": "newly_failing",
        "base": {"passes": 10, "attempts": 10},
        "head": {"passes": 2, "attempts": 10},
        "p_value": pytest.approx(fisher_exact(10, 0, 2, 8)),
        "significant": True,
        "regressed": True,
        # Replayed runs: their scripted counts are never shown as spend.
        "base_spend": None,
        "head_spend": None,
    }
    assert (document["base_spend"], document["head_spend"]) == (None, None)
    assert by_name["noisy"]["change"] == "rate_moved" and not by_name["noisy"]["significant"]
    assert by_name["brand-new"]["base"] is None and by_name["retired"]["head"] is None
    assert by_name["steady"]["change"] == "unchanged"


def test_noise_and_single_attempts_are_not_regressions(history: Path) -> None:
    add_run(history, {"noisy": [True] * 5 + [False] * 5, "once": [True]})
    add_run(history, {"noisy": [True] * 3 + [False] * 7, "once": [False]}, digest="d2")
    code, out, _ = runs_cli("compare", "--history", history, "--fail-on-regression")
    assert code == 0
    assert "note: the runs used different settings (config digest d1 vs d2)" in out
    assert "  once: 1/1 -> 0/1 passed (Fisher p=1, not significant)" in out
    assert out.splitlines()[-1] == "0 significant regressions (alpha=0.05)"
    # A looser significance level turns the same fall into a regression.
    code, _, _ = runs_cli(
        "compare", "--history", history, "--fail-on-regression", "--alpha", "0.99"
    )
    assert code == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["7", "1"], "no run 7"),
        (["1", "9"], "no run 9"),
        ([], "run 1 is the first of evals/capability: nothing to compare it with"),
    ],
)
def test_compare_errors_name_the_history(history: Path, args: list[str], message: str) -> None:
    add_run(history, {"a": [True]})
    code, out, err = runs_cli("compare", *args, "--history", history)
    assert code == 1 and out == ""
    assert assert_clean_errors(err) == [f"Error: {history}: {message}"]


def test_compare_picks_the_suite_asked_for(history: Path) -> None:
    regression_history(history)
    add_run(history, {"other-suite": [False]}, suite="evals/live")  # the latest run of all
    code, out, _ = runs_cli("compare", "--history", history, "--format", "json")
    document = json.loads(out)
    assert code == 0
    assert (document["base"]["id"], document["head"]["id"]) == (2, 4)
    code, out, _ = runs_cli(
        "compare", "--history", history, "--suite", "evals/capability", "--format", "json"
    )
    document = json.loads(out)
    assert code == 0
    assert (document["base"]["id"], document["head"]["id"]) == (1, 3)


def test_a_page_that_cannot_be_written_is_an_error_naming_it(history: Path) -> None:
    add_run(history, {"a": [True]})
    target = history.parent / "missing" / "trend.html"
    code, out, err = runs_cli("history", "--history", history, "--html", target)
    assert code == 1 and out == ""
    (line,) = assert_clean_errors(err)
    assert line.startswith(f"Error: {target}: cannot write the page: ")


def test_more_runs_than_one_query_takes(history: Path) -> None:
    """1,200 runs in one listing: more than older SQLite take as query parameters."""
    report = SuiteReport("s", (CaseReport("a", "a.json", (CheckResult("c", True, "ok"),)),))
    with open_history(history) as store:
        for _ in range(1200):
            store.append(report, RunInfo("2026-12-01T10:00:00Z", 0.1))
    code, out, err = runs_cli(
        "history", "--history", history, "--limit", "1200", "--format", "json"
    )
    assert code == 0, err
    runs = json.loads(out)["runs"]
    assert len(runs) == 1200
    assert all((run["attempts"], run["attempts_passed"]) == (1, 1) for run in runs)
