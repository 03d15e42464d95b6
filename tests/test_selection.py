"""Choosing cases: ``-k EXPR`` (pytest's grammar), ``PATH...`` arguments, ``-V`` and ``-h``."""

from __future__ import annotations

from pathlib import Path

import pytest

from zeroclaw_eval.selection.keyword import Expression, ExpressionError, substring_matcher
from zeroclaw_eval.testing import fixture, write_fixture

from .cli_process import assert_clean_errors, json_report
from .conftest import zeroclaw

NAMES = {"alpha_one", "alpha_two", "beta_one", "Gamma"}


def matches(expression: str, *names: str) -> bool:
    return Expression.compile(expression).evaluate(substring_matcher(*names))


@pytest.mark.parametrize(
    ("expression", "selected"),
    [
        ("alpha", {"alpha_one", "alpha_two"}),
        ("ALPHA", {"alpha_one", "alpha_two"}),  # case-insensitive, as in pytest
        ("one", {"alpha_one", "beta_one"}),
        ("alpha and one", {"alpha_one"}),
        ("alpha or beta", {"alpha_one", "alpha_two", "beta_one"}),
        ("not alpha", {"beta_one", "Gamma"}),
        ("not not alpha", {"alpha_one", "alpha_two"}),
        ("one and not (alpha or gamma)", {"beta_one"}),
        ("(alpha or beta) and not two", {"alpha_one", "beta_one"}),
        ("alpha or beta and two", {"alpha_one", "alpha_two"}),  # and binds tighter
        ("gam", {"Gamma"}),
        ("ha_o", {"alpha_one"}),
    ],
)
def test_expressions_select_as_pytest_does(expression: str, selected: set[str]) -> None:
    assert {name for name in NAMES if matches(expression, name)} == selected


def test_identifiers_take_pytest_characters() -> None:
    assert matches("suite/case[1].json", "suite/case[1].json")
    assert matches("a-b:c+d", "xa-b:c+dx")
    assert not matches("or_not", "or")  # a keyword only when it stands alone


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (
            "alpha and",
            "at column 10: expected not or left parenthesis or identifier; got end of input",
        ),
        ("(alpha", "at column 7: expected right parenthesis; got end of input"),
        ("alpha beta", "at column 7: expected end of input; got identifier 'beta'"),
        ("and alpha", "at column 1: expected not or left parenthesis or identifier; got 'and'"),
        ("alpha)", "at column 6: expected end of input; got right parenthesis"),
        ("alpha & beta", "at column 7: unexpected character '&'"),
    ],
)
def test_a_bad_expression_says_where_and_what_was_expected(expression: str, message: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        Expression.compile(expression)
    assert str(caught.value) == message


def test_an_expression_cannot_run_code() -> None:
    assert not matches("__import__", "x")
    with pytest.raises(ExpressionError):
        Expression.compile("__import__('os').system('true')")


# --- through the real CLI ---------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    write_fixture(suite, fixture({"response_contains": ["done"]}, name="alpha-one"), "a1.json")
    write_fixture(suite, fixture({"response_contains": ["done"]}, name="alpha-two"), "a2.json")
    write_fixture(suite, fixture({"response_contains": ["nope"]}, name="beta-red"), "b.json")
    other = tmp_path / "other"
    write_fixture(other, fixture({"response_contains": ["done"]}, name="gamma"), "unicode_g.json")
    return tmp_path


def names(run: object) -> list[str]:
    return [case["name"] for case in json_report(run)["cases"]]  # type: ignore[arg-type]


def test_k_selects_cases_by_name_and_skips_the_red_one(project: Path) -> None:
    run = zeroclaw("eval", "run", "--suite", "suite", "-k", "alpha and not two", cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "alpha-one" in run.stdout and "beta-red" not in run.stdout
    assert run.stdout.endswith("1/1 cases passed (2 of 3 deselected)\n")
    red = zeroclaw("eval", "run", "--suite", "suite", "-k", "BETA", "--format", "json", cwd=project)
    assert red.returncode == 1
    assert names(red) == ["beta-red"]
    assert json_report(red)["suite_total"] == 3


def test_k_matches_the_fixture_file_name_too(project: Path) -> None:
    run = zeroclaw("eval", "run", "other", "-k", "unicode_g", "--format", "json", cwd=project)
    assert run.returncode == 0
    assert names(run) == ["gamma"]


def test_k_that_matches_nothing_is_an_error_never_green(project: Path) -> None:
    run = zeroclaw(
        "eval", "run", "--suite", "suite", "-k", "delta", "--format", "json", cwd=project
    )
    assert run.returncode == 1
    assert json_report(run)["all_passed"] is False
    assert assert_clean_errors(run.stderr) == [
        "Error: -k 'delta' matched none of the 3 cases: a run of no cases is never green"
    ]


def test_a_bad_k_expression_is_a_one_line_usage_error(project: Path) -> None:
    run = zeroclaw("eval", "run", "--suite", "suite", "-k", "alpha or", cwd=project)
    assert run.returncode == 2
    assert (
        "Error: Invalid value for '-k': 'alpha or': at column 9: expected not or left "
        "parenthesis or identifier; got end of input" in run.stderr.splitlines()
    )
    assert "Traceback" not in run.stderr


def test_paths_name_fixture_files_and_suites(project: Path) -> None:
    run = zeroclaw(
        "eval", "run", "suite/a2.json", "other", "suite/a2.json", "--format", "json", cwd=project
    )
    assert run.returncode == 0, run.stderr
    assert names(run) == ["alpha-two", "gamma"]  # in argument order, each file once
    document = json_report(run)
    assert document["suite"] == "suite/a2.json other suite/a2.json"
    assert [case["source"] for case in document["cases"]] == [
        "suite/a2.json",
        "other/unicode_g.json",
    ]


def test_a_refused_file_named_as_a_path_is_refused(project: Path) -> None:
    bad = write_fixture(project / "loose", fixture({}), "bad.fixture")
    run = zeroclaw("eval", "run", str(bad.relative_to(project)), "suite/a1.json", cwd=project)
    assert run.returncode == 1
    assert "loose/bad.fixture: expects: declares no expectation" in run.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json"], "Error: missing.json: no such file or directory"),
        (["empty"], "Error: suite empty: no *.json fixtures: an empty suite is never green"),
    ],
)
def test_a_path_that_names_no_fixture_is_an_error(
    project: Path, args: list[str], message: str
) -> None:
    (project / "empty").mkdir()
    run = zeroclaw("eval", "run", *args, cwd=project)
    assert run.returncode == 1
    assert assert_clean_errors(run.stderr) == [message]


def test_paths_and_suite_together_are_a_usage_error(project: Path) -> None:
    run = zeroclaw("eval", "run", "other", "--suite", "suite", cwd=project)
    assert run.returncode == 2
    assert "give PATH arguments or --suite, not both" in run.stderr


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_on_the_group(flag: str) -> None:
    from importlib.metadata import version

    run = zeroclaw(flag)
    assert run.returncode == 0
    assert run.stdout == f"zeroclaw, version {version('zeroclaw-eval')}\n"


@pytest.mark.parametrize(
    "command",
    [[], ["eval"], ["eval", "run"], ["eval", "check"], ["eval", "plugins"], ["eval", "record"]],
)
def test_h_is_help_on_every_command(command: list[str]) -> None:
    short, long = zeroclaw(*command, "-h"), zeroclaw(*command, "--help")
    assert short.returncode == 0
    assert short.stdout == long.stdout
    assert short.stdout.startswith("Usage: zeroclaw")


def test_an_empty_k_selects_everything_as_in_pytest(project: Path) -> None:
    run = zeroclaw("eval", "run", "--suite", "suite", "-k", " ", "--format", "json", cwd=project)
    assert names(run) == ["alpha-one", "alpha-two", "beta-red"]
    assert json_report(run)["suite_total"] == 3


def test_check_takes_paths_as_a_pre_commit_hook_passes_them(project: Path) -> None:
    vacuous = fixture({"response_not_contains": ["rm"]}, name="vacuous")
    write_fixture(project / "suite", vacuous, "v.json")
    good = zeroclaw("eval", "check", "suite/a1.json", "other", cwd=project)
    assert good.returncode == 0, good.stderr
    assert good.stdout == "2 fixtures admitted; none is satisfied by an empty run\n"
    bad = zeroclaw("eval", "check", "suite/a1.json", "suite/v.json", cwd=project)
    assert bad.returncode == 1
    assert bad.stderr.startswith("Error: suite/v.json: expects: vacuous")
    both = zeroclaw("eval", "check", "other", "--suite", "suite", cwd=project)
    assert both.returncode == 2
