"""The protected gate: the shipped suite passes whole, and none of it is vacuous."""

from __future__ import annotations

from pathlib import Path

import pytest

from zeroclaw_eval import EvalConfig, Registry, RunMode, load_suite, run_suite, vacuity
from zeroclaw_eval.config import DEFAULT_SUITE_DIR

from .conftest import PROJECT, TESTS

# The default suite comes from the config model, not from a second literal.
REGRESSION = PROJECT / EvalConfig().suite_dir
VERSIONED_SUITES = [REGRESSION, *sorted((TESTS / "conformance").iterdir())]


def test_default_suite_is_the_config_models_default() -> None:
    assert EvalConfig().suite_dir == DEFAULT_SUITE_DIR
    assert REGRESSION.is_dir()


def test_regression_suite_passes_whole(registry: Registry) -> None:
    report = run_suite(REGRESSION, registry=registry)
    failures = [
        (case.source, case.error, case.failed_checks) for case in report.cases if not case.passed
    ]
    assert failures == []
    assert len(report.cases) >= 20
    assert report.exit_code() == 0


@pytest.mark.parametrize("suite", VERSIONED_SUITES, ids=lambda p: p.name)
def test_no_versioned_fixture_is_satisfied_by_an_empty_run(
    suite: Path, registry: Registry, replay: RunMode
) -> None:
    cases = load_suite(suite, registry, replay)
    assert cases
    assert [str(found) for case in cases if (found := vacuity(case))] == []


@pytest.mark.parametrize("suite", sorted((TESTS / "conformance").iterdir()), ids=lambda p: p.name)
def test_conformance_fixtures_replay_green_unchanged(suite: Path, registry: Registry) -> None:
    report = run_suite(suite, registry=registry)
    assert [c.source for c in report.cases if not c.passed] == []
    assert report.exit_code() == 0


def test_conformance_corpus_is_complete() -> None:
    fixtures = list((TESTS / "conformance").glob("*/*.json"))
    assert len(fixtures) == 30


VACUOUS = (
    '{"model_name": "vacuous", "turns": [{"user_input": "Hi", "steps": [{"response": '
    '{"type": "text", "content": "hello"}}]}], "expects": {"max_tool_calls": 0}}'
)


def test_a_gating_run_refuses_a_vacuous_fixture_and_a_non_gating_one_says_so(
    tmp_path: Path,
) -> None:
    import json

    from .conftest import zeroclaw

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "vacuous.json").write_text(VACUOUS, encoding="utf-8")
    gated = zeroclaw("eval", "run", "--suite", suite, "--no-history", cwd=tmp_path)
    assert gated.returncode == 1
    assert "suite/vacuous.json: expects: vacuous: a run that does nothing passes all 1 check" in (
        gated.stderr
    )
    assert "1/1 cases passed" not in gated.stdout
    measured = zeroclaw(
        "eval", "run", "--suite", suite, "--no-history", "--no-gate", "--format", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert measured.returncode == 0, measured.stderr
    [case] = json.loads(measured.stdout)["cases"]
    assert case["warnings"] == [
        "suite/vacuous.json: expects: vacuous: a run that does nothing passes all 1 check "
        "(max_tool_calls: 0); add an expectation that only the intended behaviour satisfies"
    ]
