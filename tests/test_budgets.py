"""Budgets in replay, the rates table, and the undecided outcome in reports and the gate.

Replay grades only what the agent controls: the size of the requests it sent
(``max_request_chars``, ``max_total_request_chars``); a token or cost budget
would grade the script's counts, so replay refuses it at admission with the
reason. The live side is tests/test_budgets_live.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import CaseReport, CheckResult, SuiteReport

from .cli_process import assert_clean_errors, json_report
from .conftest import echo_case, zeroclaw
from .test_families import USAGE_FAMILIES


def write(tmp_path: Path, expects: dict[str, Any], name: str = "case.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(echo_case(expects=expects)), encoding="utf-8")
    return path


@pytest.mark.parametrize("family", sorted(USAGE_FAMILIES))
def test_replay_refuses_a_token_or_cost_budget_saying_why(tmp_path: Path, family: str) -> None:
    case = write(tmp_path, {"response_contains": ["hello"], family: 100})

    result = zeroclaw("eval", "run", case, "--no-history", cwd=tmp_path)

    assert result.returncode == 1
    lines = assert_clean_errors(result.stderr)
    assert lines[-1] == (
        f"Error: {case.name}: expects.{family}=100: mode 'replay' cannot certify this family: "
        "replay serves the script's token counts, so a token or cost budget would grade "
        "the fixture, not the agent, and could never fail: bound what the agent sends "
        "instead (max_request_chars, max_total_request_chars), and run token and cost "
        "budgets in live mode"
    )


# The echo case's requests: "Echo hello" (10 characters) and the echo tool offered
# (its name, description and compact schema), then the same with the call and its
# result; measured by the run itself, and pinned here by what each bound does.
def request_sizes(tmp_path: Path) -> list[int]:
    case = write(tmp_path, {"response_contains": ["hello"], "max_request_chars": 100_000})
    result = zeroclaw("eval", "run", case, "--no-history", "-v", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(line for line in result.stdout.splitlines() if "max_request_chars" in line)
    largest = int(line.split(": ")[-1].split()[0])
    total_case = write(tmp_path, {"response_contains": ["hello"], "max_total_request_chars": 10**6})
    result = zeroclaw("eval", "run", total_case, "--no-history", "-v", cwd=tmp_path)
    line = next(line for line in result.stdout.splitlines() if "max_total_request_chars" in line)
    total = int(line.split(": ")[-1].split()[0])
    return [largest, total]


def test_replay_grades_the_size_of_the_requests_the_agent_sent(tmp_path: Path) -> None:
    largest, total = request_sizes(tmp_path)
    assert 0 < largest < total  # two requests, the second the larger

    within = write(
        tmp_path,
        {
            "response_contains": ["hello"],
            "max_request_chars": largest,
            "max_total_request_chars": total,
        },
        "within.json",
    )
    over = write(
        tmp_path,
        {
            "response_contains": ["hello"],
            "max_request_chars": largest - 1,
            "max_total_request_chars": total - 1,
        },
        "over.json",
    )

    passed = zeroclaw("eval", "run", within, "--no-history", cwd=tmp_path)
    failed = zeroclaw("eval", "run", over, "--no-history", "--format", "json", cwd=tmp_path)

    assert passed.returncode == 0, passed.stdout
    assert failed.returncode == 1
    checks = json_report(failed)["cases"][0]["checks"]
    assert checks[1:] == [
        {
            "check": f"max_request_chars: {largest - 1}",
            "passed": False,
            "undecided": False,
            "detail": f"1 request over {largest - 1} characters (turn 0 request 1: {largest})",
        },
        {
            "check": f"max_total_request_chars: {total - 1}",
            "passed": False,
            "undecided": False,
            "detail": f"{total} characters over 2 requests, more than {total - 1}",
        },
    ]


@pytest.mark.parametrize(
    ("family", "value", "message"),
    [
        ("max_request_chars", 0, "input should be greater than 0"),
        ("max_total_request_chars", "100", "must be an integer, not a string"),
    ],
)
def test_a_bad_size_budget_is_refused_naming_the_field(
    tmp_path: Path, family: str, value: Any, message: str
) -> None:
    case = write(tmp_path, {"response_contains": ["hello"], family: value})

    result = zeroclaw("eval", "run", case, "--no-history", cwd=tmp_path)

    assert result.returncode == 1
    assert_clean_errors(result.stderr)
    assert f"expects.{family}={json.dumps(value)}: " in result.stderr
    assert message in result.stderr.lower()


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            'input = 1\noutput = 2\nchecked = "2026-02-30"',
            'eval.rates.gpt-x.checked="2026-02-30": must be a date, YYYY-MM-DD',
        ),
        (
            'input = 1\noutput = 2\nchecked = "2999-01-01"',
            'eval.rates.gpt-x.checked="2999-01-01": is in the future',
        ),
        ("input = 1\noutput = 2", "eval.rates.gpt-x.checked: required key is missing"),
        (
            'input = 1\noutput = 2\ncached = 1\nchecked = "2026-01-01"',
            "eval.rates.gpt-x.cached=1: unknown key (known keys: input, output, cached_input, "
            "cache_write_input, checked)",
        ),
        (
            'input = -1\noutput = 2\nchecked = "2026-01-01"',
            "eval.rates.gpt-x.input=-1: input should be greater than or equal to 0",
        ),
        (
            'input = "1"\noutput = 2\nchecked = "2026-01-01"',
            'eval.rates.gpt-x.input="1": ',
        ),
    ],
)
def test_a_bad_rate_is_one_line_naming_the_file_and_the_field(
    tmp_path: Path, table: str, message: str
) -> None:
    config = tmp_path / "zeroclaw.toml"
    config.write_text(f'[eval.rates."gpt-x"]\n{table}\n', encoding="utf-8")

    result = zeroclaw("eval", "run", "--no-history", cwd=tmp_path)

    assert result.returncode == 1
    assert result.stderr.startswith(f"Error: {config}: {message}")
    assert result.stderr.count("\n") == 1


def test_a_toml_date_is_as_good_as_a_quoted_one(tmp_path: Path) -> None:
    (tmp_path / "zeroclaw.toml").write_text(
        '[eval.rates."gpt-x"]\ninput = 1\noutput = 2\nchecked = 2026-01-15\n', encoding="utf-8"
    )
    case = write(tmp_path, {"response_contains": ["hello"]})

    result = zeroclaw("eval", "run", case, "--no-history", cwd=tmp_path)

    assert result.returncode == 0, result.stderr


UNDECIDED = CheckResult.not_decided("max_output_tokens: 10", "n/a: turn 0 request 0: no usage")
PASSED = CheckResult('response_contains: "hi"', True, "found")


def test_merge_reads_the_undecided_outcome_back_and_refuses_an_undecided_pass(
    tmp_path: Path,
) -> None:
    case = CaseReport("c", "c.json", (PASSED, UNDECIDED))
    from zeroclaw_eval.report.document import report_document

    document = report_document(SuiteReport("s", (case,), gating=False))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(document), encoding="utf-8")
    document["cases"][0]["checks"][1]["passed"] = True
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(document), encoding="utf-8")

    merged = zeroclaw("eval", "merge", good, "--format", "json", cwd=tmp_path)
    refused = zeroclaw("eval", "merge", edited, cwd=tmp_path)

    assert json_report(merged)["undecided"] == 1
    assert json_report(merged)["cases"][0]["checks"][1]["undecided"] is True
    assert refused.returncode == 1
    assert_clean_errors(refused.stderr)
    assert "cases[0].checks[1].undecided=true: contradicts its passed (true)" in refused.stderr
