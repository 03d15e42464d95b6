"""Each guard of the verdict, on hand-built reports: ``CaseReport.passed``,
``SuiteReport.all_passed`` and ``SuiteReport.exit_code``.

Admission and the runner already keep most of these states away from the verdict
(no case without checks is admitted, a refused suite runs no case); these guards
are the second line, and each one is pinned here on its own, so that dropping any
single condition turns a test red. The merge tests run the real console script:
a merged report is where a hand-edited or foreign shard reaches the exit code.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport

from .cli_process import json_report
from .conftest import PROJECT, zeroclaw

PASS = CheckResult('response_contains: "hi"', True, "found")
FAIL = CheckResult('response_contains: "bye"', False, "not found")


def case(*checks: CheckResult, error: str | None = None, ran: bool = True) -> CaseReport:
    return CaseReport("case", "case.json", tuple(checks), error, ran=ran)


# --- CaseReport.passed ----------------------------------------------------------------


def test_a_case_whose_checks_all_passed_passes() -> None:
    assert case(PASS, PASS).passed is True


def test_one_failed_check_fails_the_case_wherever_it_is() -> None:
    assert case(FAIL, PASS).passed is False
    assert case(PASS, FAIL).passed is False


def test_a_case_with_no_checks_never_passes() -> None:
    assert case().passed is False


def test_a_case_that_never_ran_never_passes_whatever_its_checks_say() -> None:
    assert case(PASS, ran=False).passed is False


def test_a_run_error_fails_the_case_even_when_every_check_passed() -> None:
    assert case(PASS, error="the model bridge went away").passed is False


def test_a_repeated_case_passes_only_when_every_attempt_passed() -> None:
    attempts = (case(PASS), case(PASS), case(PASS))
    assert CaseReport.of_attempts(attempts).passed is True
    flaky = CaseReport.of_attempts((case(PASS), case(FAIL), case(PASS)))
    assert flaky.passed is False
    assert (flaky.runs, flaky.passes, flaky.flaky) == (3, 2, True)


def test_a_repeated_case_is_judged_by_its_attempts_not_by_its_own_checks() -> None:
    # Its own checks are those of one attempt; with none of its own, the attempts decide.
    repeated = CaseReport("case", "case.json", attempts=(case(PASS), case(PASS)))
    assert repeated.passed is True
    failed = CaseReport("case", "case.json", (PASS,), attempts=(case(PASS), case(FAIL)))
    assert failed.passed is False


# --- SuiteReport.all_passed and exit_code ---------------------------------------------


def suite(*cases: CaseReport, **fields: object) -> SuiteReport:
    return SuiteReport("suite", tuple(cases), **fields)  # type: ignore[arg-type]


def test_a_suite_whose_cases_all_passed_is_green_and_exits_0() -> None:
    report = suite(case(PASS), case(PASS))
    assert (report.passed_count, report.all_passed, report.exit_code()) == (2, True, 0)


def test_one_failed_case_makes_the_suite_red() -> None:
    report = suite(case(PASS), case(FAIL), case(PASS))
    assert (report.passed_count, report.all_passed, report.exit_code()) == (2, False, 1)


def test_a_suite_with_no_cases_is_never_green() -> None:
    report = suite()
    assert (report.all_passed, report.exit_code()) == (False, 1)


def test_a_suite_error_makes_it_red_even_when_every_case_passed() -> None:
    report = suite(case(PASS), errors=("suite/bad.json: expects: declares no expectation",))
    assert (report.all_passed, report.exit_code()) == (False, 1)


def test_an_interrupted_suite_exits_as_the_signal_did_even_when_every_case_passed() -> None:
    for name, code in (("SIGINT", 130), ("SIGTERM", 143)):
        report = suite(case(PASS), interrupted=name)
        assert (report.all_passed, report.exit_code()) == (False, code)


def test_an_interruption_wins_over_a_non_gating_suite() -> None:
    assert suite(case(FAIL), gating=False, interrupted="SIGINT").exit_code() == 130


def test_an_unknown_signal_name_exits_1_not_0_nor_a_crash() -> None:
    # A merged report is read from files; the name there is not necessarily a signal.
    report = suite(case(PASS), interrupted="SIGNOTASIGNAL")
    assert (report.all_passed, report.exit_code()) == (False, 1)


def test_a_non_gating_suite_exits_0_on_failed_checks() -> None:
    report = suite(case(FAIL), case(PASS), gating=False)
    assert (report.all_passed, report.exit_code()) == (False, 0)


def test_a_non_gating_suite_exits_1_on_a_suite_error() -> None:
    assert suite(case(PASS), gating=False, errors=("refused",)).exit_code() == 1


def test_a_non_gating_suite_exits_1_when_a_case_hit_a_run_error() -> None:
    report = suite(case(PASS), case(PASS, error="timed out"), gating=False)
    assert (report.run_errors, report.exit_code()) == (1, 1)


def test_a_case_that_never_ran_is_not_a_run_error() -> None:
    # -x stopped the run before it: it failed, but it measured nothing wrong.
    skipped = case(error="not run: -x stopped the run", ran=False)
    report = suite(case(PASS), skipped, gating=False)
    assert (report.run_errors, report.exit_code()) == (0, 0)
    assert suite(case(PASS), skipped).exit_code() == 1


def test_run_errors_count_each_case_that_ran_into_one() -> None:
    report = suite(case(error="a"), case(PASS), case(error="b"), case(error="c", ran=False))
    assert report.run_errors == 2
    assert report.passed_count == 1


# --- the same guards through `zeroclaw eval merge` ------------------------------------


def shard_run(root: Path, shard: str, refused: bool) -> Path:
    """Run one shard of a copy of the shipped suite; the refused copy has a bad fixture."""
    suite_dir = root / "suite"
    shutil.copytree(PROJECT / "evals" / "regression", suite_dir)
    if refused:
        bad = {
            "model_name": "bad",
            "turns": [
                {"user_input": "hi", "steps": [{"response": {"type": "text", "content": "hi"}}]}
            ],
            "expects": {"max_tool_calls": -1},
        }
        (suite_dir / "zz_bad.json").write_text(json.dumps(bad), encoding="utf-8")
    report = root / "shard.json"
    result = zeroclaw(
        "eval", "run", "--suite", "suite", "--shard", shard, "--report", f"json:{report}", cwd=root
    )
    assert result.returncode == (1 if refused else 0), result.stderr
    return report


def test_merging_a_shard_that_refused_a_fixture_with_a_green_shard_exits_1(tmp_path: Path) -> None:
    refused = shard_run(tmp_path / "one", "1/2", refused=True)
    green = shard_run(tmp_path / "two", "2/2", refused=False)

    result = zeroclaw("eval", "merge", refused, green, "--format", "json")

    document = json_report(result)
    assert result.returncode == 1
    assert document["all_passed"] is False
    assert document["cases"] and all(case["passed"] for case in document["cases"])
    assert document["errors"][-1] == (
        f"shard 1/2 ({refused}): suite/zz_bad.json: expects.max_tool_calls=-1: "
        "input should be greater than or equal to 0"
    )


@pytest.mark.parametrize(("name", "code"), [("SIGNOTASIGNAL", 1), ("SIGTERM", 143)])
def test_a_merged_shard_interrupted_by_any_name_exits_non_zero(
    tmp_path: Path, name: str, code: int
) -> None:
    first = shard_run(tmp_path / "one", "1/2", refused=False)
    second = shard_run(tmp_path / "two", "2/2", refused=False)
    document = json.loads(second.read_text(encoding="utf-8"))
    document.update(interrupted=name, errors=[f"interrupted by {name}"], all_passed=False)
    second.write_text(json.dumps(document), encoding="utf-8")

    result = zeroclaw("eval", "merge", first, second, "--format", "json")

    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    assert json_report(result)["interrupted"] == name


UNDECIDED = CheckResult.not_decided("max_output_tokens: 10", "n/a: turn 0 request 0: no usage")


def test_an_undecided_check_fails_a_gating_suite_and_not_a_measuring_one() -> None:
    undecided = case(PASS, UNDECIDED)

    assert not undecided.passed and undecided.undecided
    # A passed case is not undecided: False itself, as the JSON report writes it.
    assert case(PASS).undecided is False
    assert SuiteReport("s", (undecided,)).exit_code() == 1
    assert SuiteReport("s", (undecided,), gating=False).exit_code() == 0
    assert SuiteReport("s", (undecided, case(PASS))).undecided_count == 1


def test_a_case_is_undecided_only_when_every_check_it_missed_is_undecided() -> None:
    assert not case(FAIL, UNDECIDED).undecided  # a failure is a failure
    assert not case(PASS).undecided
    assert not case(UNDECIDED, error="boom").undecided  # a run error measured nothing
    assert not case(UNDECIDED, ran=False).undecided
    assert not case().undecided


def test_a_repeated_case_is_undecided_only_when_each_attempt_it_missed_was() -> None:
    undecided, failed, passed = case(UNDECIDED), case(FAIL), case(PASS)

    assert CaseReport.of_attempts([passed, undecided]).undecided
    assert not CaseReport.of_attempts([undecided, failed]).undecided
    assert not CaseReport.of_attempts([passed, passed]).undecided
