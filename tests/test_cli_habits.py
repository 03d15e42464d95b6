"""The habits of a CLI user: -x, -q, -v, every problem of a refused fixture printed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import CheckResult, Family, Registry, RunRecord, hookimpl
from zeroclaw_eval.run.exitfirst import NOT_RUN
from zeroclaw_eval.testing import fixture, run_cli, write_fixture

from .cli_process import assert_clean_errors, json_report
from .conftest import zeroclaw


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """a passes, b fails, c passes, d fails."""
    directory = tmp_path / "suite"
    for name, needle in (("a", "done"), ("b", "nope"), ("c", "done"), ("d", "nope")):
        write_fixture(
            directory, fixture({"response_contains": [needle]}, name=name), f"{name}.json"
        )
    return tmp_path


def test_exitfirst_stops_after_the_first_failure_and_lists_the_rest_as_not_run(
    suite: Path,
) -> None:
    for flag in ("-x", "--exitfirst"):
        run = zeroclaw("eval", "run", "--suite", "suite", flag, "--format", "json", cwd=suite)
        assert run.returncode == 1
        cases = {case["name"]: case for case in json_report(run)["cases"]}
        assert list(cases) == ["a", "b", "c", "d"]  # nothing silently missing
        assert cases["a"]["passed"] and cases["a"]["checks"]
        assert not cases["b"]["passed"] and cases["b"]["error"] is None  # ran, and failed
        for name in ("c", "d"):  # c would pass: it did not run, so it is not green
            assert (cases[name]["passed"], cases[name]["error"]) == (False, NOT_RUN)
            assert cases[name]["checks"] == []


def test_exitfirst_on_a_green_suite_runs_everything(suite: Path) -> None:
    run = zeroclaw("eval", "run", "--suite", "suite", "-x", "-k", "a or c", cwd=suite)
    assert run.returncode == 0
    assert run.stdout.endswith("2/2 cases passed (2 of 4 deselected)\n")


def test_exitfirst_is_not_green_even_when_not_gating(suite: Path) -> None:
    run = zeroclaw("eval", "run", "--suite", "suite", "-x", "--no-gate", cwd=suite)
    assert run.returncode == 0  # not gating: failures are reported, not gated
    assert "✗ c (suite/c.json): error: " + NOT_RUN in run.stdout
    assert "1/4 cases passed" in run.stdout


def test_quiet_leaves_passing_cases_out(suite: Path) -> None:
    run = zeroclaw("eval", "run", "--suite", "suite", "-q", cwd=suite)
    assert run.returncode == 1
    assert run.stdout.splitlines() == [
        "✗ b (suite/b.json): 0/1 checks",
        '    ✗ response_contains: "nope": not found: the final response is "done"',
        "✗ d (suite/d.json): 0/1 checks",
        '    ✗ response_contains: "nope": not found: the final response is "done"',
        "short summary: 2 failed cases",
        'FAILED b (suite/b.json): response_contains: "nope": not found: the final response is '
        '"done"',
        'FAILED d (suite/d.json): response_contains: "nope": not found: the final response is '
        '"done"',
        "2/4 cases passed",
    ]


def test_verbose_lists_every_check(suite: Path) -> None:
    run = zeroclaw("eval", "run", "--suite", "suite", "-v", "-k", "a or b", cwd=suite)
    assert run.stdout.splitlines() == [
        "✓ a (suite/a.json): 1/1 checks",
        '    ✓ response_contains: "done": found',
        "✗ b (suite/b.json): 0/1 checks",
        '    ✗ response_contains: "nope": not found: the final response is "done"',
        "short summary: 1 failed case",
        'FAILED b (suite/b.json): response_contains: "nope": not found: the final response is '
        '"done"',
        "1/2 cases passed (2 of 4 deselected)",
    ]


def test_quiet_and_verbose_leave_machine_formats_alone(suite: Path) -> None:
    plain = zeroclaw("eval", "run", "--suite", "suite", "--format", "json", cwd=suite)
    quiet = zeroclaw("eval", "run", "--suite", "suite", "--format", "json", "-q", cwd=suite)
    assert [c["name"] for c in json_report(quiet)["cases"]] == ["a", "b", "c", "d"]
    assert json_report(quiet)["passed"] == json_report(plain)["passed"]


def test_quiet_with_verbose_is_a_usage_error(suite: Path) -> None:
    run = zeroclaw("eval", "run", "--suite", "suite", "-q", "-v", cwd=suite)
    assert run.returncode == 2
    assert "-q and -v contradict each other" in run.stderr


def test_every_problem_of_a_refused_fixture_is_printed(tmp_path: Path) -> None:
    case = fixture({"tool_arguments_contain": [{"tool": "echo", "needel": "x"}]})
    case["turns"][0]["user_inptu"] = case["turns"][0].pop("user_input")
    write_fixture(tmp_path / "suite", case, "typos.json")
    run = zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path)
    assert run.returncode == 1
    assert "more problem" not in run.stderr
    assert assert_clean_errors(run.stderr) == [
        "Error: suite suite: 1 fixture refused (of 1); no case was run",
        "Error: suite/typos.json: turns[0].user_input: required key is missing",
        'Error: suite/typos.json: turns[0].user_inptu="Go": unknown key '
        "(did you mean 'user_input'?)",
    ]


def test_a_typo_in_a_family_parameter_shows_beside_the_missing_key(tmp_path: Path) -> None:
    case = fixture({"tool_arguments_contain": [{"tool": "echo", "needel": "x"}]})
    write_fixture(tmp_path / "suite", case, "typo.json")
    run = zeroclaw("eval", "run", "--suite", "suite", "--format", "json", cwd=tmp_path)
    errors = json_report(run)["errors"]
    assert errors[1:] == [
        "suite/typo.json: expects.tool_arguments_contain[0].needle: required key is missing",
        'suite/typo.json: expects.tool_arguments_contain[0].needel="x": unknown key '
        "(did you mean 'needle'?)",
    ]
    assert json.dumps(errors).count("typo.json") == 2


def test_plugins_shows_what_each_family_formatter_and_mode_does(registry: Registry) -> None:
    text, as_json = zeroclaw("eval", "plugins"), zeroclaw("eval", "plugins", "--json")
    assert text.returncode == as_json.returncode == 0
    rows = {row["name"]: row for row in json.loads(as_json.stdout)["plugins"]}
    tables = {"families": registry.families, "formatters": registry.formatters}
    tables["modes"] = registry.modes
    for kind, table in tables.items():
        for name, entry in table.items():
            description = entry.obj.description
            assert description, f"{kind} {name} has no description"
            assert f"\n        {name}: {description}\n" in text.stdout
            assert rows[entry.plugin]["descriptions"][kind][name] == description
    assert "response_contains: the final response contains each substring" in text.stdout


class _GradesNothing(Family[list[str]]):
    name = "grades_nothing"
    params = list[str]
    description = "a broken family: returns no check"

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        return []


class _GradeRaises(Family[list[str]]):
    name = "grade_raises"
    params = list[str]
    description = "a broken family: grade() raises on an empty run"

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        if run.final_response is None:
            raise KeyError("final_response")
        return [CheckResult(self.name, True, "ok") for _ in params]


class _BrokenFamilies:
    def __init__(self) -> None:
        self.__name__ = "broken_families"  # the plugin's name in messages

    @hookimpl
    def zeroclaw_eval_register_families(self, register: Callable[[Family[Any]], None]) -> None:
        register(_GradesNothing())
        register(_GradeRaises())


@pytest.mark.parametrize(
    ("expects", "line"),
    [
        (
            {"grades_nothing": ["x"], "response_contains": ["done"]},
            "Error: suite/case.json: expects.grades_nothing: family 'grades_nothing' of plugin "
            "'broken_families' returned no check for a declared entry: a defect of that plugin "
            "(grade() must return one check per entry), not of this fixture",
        ),
        (
            {"grade_raises": ["x"]},
            "Error: suite/case.json: expects.grade_raises: family 'grade_raises' of plugin "
            "'broken_families' failed during admission: KeyError: 'final_response'",
        ),
    ],
)
def test_a_family_that_breaks_its_contract_is_blamed_at_admission(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expects: dict[str, Any], line: str
) -> None:
    write_fixture(tmp_path / "suite", fixture(expects))
    monkeypatch.chdir(tmp_path)
    result = run_cli(["eval", "run", "--suite", "suite"], _BrokenFamilies())
    assert result.exit_code == 1
    assert assert_clean_errors(result.stderr)[1:] == [line]
