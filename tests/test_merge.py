"""``zeroclaw eval merge``: shard reports of one run become one verdict, or an error.

The shard documents here are cut from a real run's JSON report (the cases dealt
out, the counts recomputed); tests/test_shard_merge.py runs real shards.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from .cli_process import assert_clean_errors, json_report
from .conftest import PROJECT, echo_case, zeroclaw

REGRESSION = PROJECT / "evals" / "regression"


def suite_copy(tmp_path: Path, red: bool) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(REGRESSION, suite)
    if red:
        failing = echo_case(model_name="red-case", expects={"response_contains": ["absent"]})
        (suite / "m_red.json").write_text(json.dumps(failing), encoding="utf-8")
    return suite


def whole_run(suite: Path) -> tuple[dict[str, Any], int]:
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "json")
    return json_report(result), result.returncode


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, tuple[dict[str, Any], int]]:
    """The whole-run document and exit code of a green and of a red suite (by ``red``)."""
    return {
        red: whole_run(suite_copy(tmp_path_factory.mktemp("red" if red else "green"), red))
        for red in (False, True)
    }


def recount(doc: dict[str, Any]) -> dict[str, Any]:
    passed = sum(1 for case in doc["cases"] if case["passed"])
    doc.update(
        total=len(doc["cases"]),
        passed=passed,
        failed=len(doc["cases"]) - passed,
        all_passed=not doc["errors"] and bool(doc["cases"]) and passed == len(doc["cases"]),
    )
    return doc


def shard_documents(whole: dict[str, Any], count: int) -> list[dict[str, Any]]:
    """The run's document dealt into ``count`` shard documents, round-robin."""
    shards = []
    for index in range(1, count + 1):
        doc = copy.deepcopy(whole)
        doc["cases"] = doc["cases"][index - 1 :: count]
        doc["shard"] = {"index": index, "count": count}
        doc["suite_total"] = len(whole["cases"])
        shards.append(recount(doc))
    return shards


def write_all(tmp_path: Path, docs: list[dict[str, Any]]) -> list[Path]:
    paths = []
    for number, doc in enumerate(docs, 1):
        path = tmp_path / f"shard-{number}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        paths.append(path)
    return paths


def verdict(doc: dict[str, Any]) -> dict[str, Any]:
    """What must not change between a whole run and its merged shards."""
    return {
        "suite": doc["suite"],
        "all_passed": doc["all_passed"],
        "counts": (doc["total"], doc["passed"], doc["failed"]),
        "digest": doc["config_digest"],
        "cases": [
            (case["name"], case["source"], case["passed"], case["error"], case["checks"])
            for case in doc["cases"]
        ],
    }


@pytest.mark.parametrize("red", [False, True], ids=["green", "red"])
def test_merged_shards_equal_the_whole_run(
    red: bool, tmp_path: Path, runs: dict[bool, tuple[dict[str, Any], int]]
) -> None:
    whole, code = runs[red]
    assert code == (1 if red else 0)
    paths = write_all(tmp_path, shard_documents(whole, 4)[::-1])  # any order
    result = zeroclaw("eval", "merge", *paths, "--format", "json")
    assert result.returncode == code, result.stderr
    merged = json_report(result)
    assert verdict(merged) == verdict(whole)
    assert merged.get("shard") is None  # the merge is the whole suite

    text = zeroclaw("eval", "merge", *paths)  # the configured format: text
    assert text.returncode == code
    assert text.stdout.splitlines()[-1] == f"{whole['passed']}/{whole['total']} cases passed"


def test_merge_writes_report_files_in_any_format(
    tmp_path: Path, runs: dict[bool, tuple[dict[str, Any], int]]
) -> None:
    whole, _ = runs[True]
    paths = write_all(tmp_path, shard_documents(whole, 2))
    summary = tmp_path / "summary.md"
    result = zeroclaw(
        "eval",
        "merge",
        *paths,
        "--format",
        "github",
        "--report",
        f"json:{tmp_path / 'merged.json'}",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.returncode == 1
    assert result.stdout.startswith("::error file=")
    assert "red-case" in result.stdout
    assert verdict(json.loads((tmp_path / "merged.json").read_text())) == verdict(whole)
    assert f"**{whole['passed']}/{whole['total']} cases passed**" in summary.read_text()


@pytest.fixture
def shards(runs: dict[bool, tuple[dict[str, Any], int]]) -> list[dict[str, Any]]:
    whole, _ = runs[False]
    return shard_documents(whole, 4)


def refused(tmp_path: Path, docs: list[dict[str, Any]], *extra: Path) -> list[str]:
    """Merge ``docs``: it must fail with clean ``Error:`` lines; return them."""
    result = zeroclaw("eval", "merge", *write_all(tmp_path, docs), *extra)
    assert result.returncode == 1
    assert result.stdout == ""
    return assert_clean_errors(result.stderr)


def test_a_missing_shard_is_an_error(tmp_path: Path, shards: list[dict[str, Any]]) -> None:
    errors = refused(tmp_path, shards[:2] + shards[3:])
    assert "Error: shard 3/4 is missing: every shard must be merged" in errors


def test_a_shard_given_twice_is_an_error(tmp_path: Path, shards: list[dict[str, Any]]) -> None:
    errors = refused(tmp_path, [*shards, shards[1]])
    assert any("shard 2/4 is given more than once" in line for line in errors)
    assert any("is in both" in line and "shard-2.json" in line for line in errors)


def test_a_case_in_two_shards_is_an_error(tmp_path: Path, shards: list[dict[str, Any]]) -> None:
    moved = shards[0]["cases"][0]
    shards[1]["cases"].append(moved)
    shards[1]["suite_total"] = shards[0]["suite_total"]
    recount(shards[1])
    errors = refused(tmp_path, shards)
    assert any(
        f"case {moved['name']!r} ({moved['source']}) is in both" in line for line in errors
    ), errors


def test_shards_that_do_not_hold_the_whole_suite_are_an_error(
    tmp_path: Path, shards: list[dict[str, Any]]
) -> None:
    dropped = shards[2]["cases"].pop()
    recount(shards[2])
    errors = refused(tmp_path, shards)
    total = shards[0]["suite_total"]
    assert any(f"the shards hold {total - 1} cases but the suite has {total}" in e for e in errors)
    assert dropped["name"]


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("suite", "evals/other", "reports of different suites"),
        ("config_digest", "0123456789abcdef", "the shards ran under different settings"),
        ("mode", "live", "ran in mode='replay'"),
        ("agent", "factory:my_pkg.agent:make_agent", "reports of different agents"),
        ("keyword", "echo", "shards of different -k selections"),
    ],
)
def test_reports_of_different_runs_are_an_error(
    key: str, value: str, says: str, tmp_path: Path, shards: list[dict[str, Any]]
) -> None:
    shards[3][key] = value
    errors = refused(tmp_path, shards)
    assert any(says in line and "shard-4.json" in line for line in errors), errors


def test_shards_of_different_counts_are_an_error(
    tmp_path: Path, shards: list[dict[str, Any]]
) -> None:
    shards[3]["shard"] = {"index": 4, "count": 5}
    assert any("shards of different counts" in line for line in refused(tmp_path, shards))


def test_an_unsharded_report_among_shards_is_an_error(
    tmp_path: Path, shards: list[dict[str, Any]]
) -> None:
    shards[0]["shard"] = None
    errors = refused(tmp_path, shards)
    assert any('shard-1.json: not a shard report ("shard" is null)' in e for e in errors)
    assert "Error: shard 1/4 is missing: every shard must be merged" in errors


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda doc: doc["cases"][0].update(passed=False), "cases[0].passed=false: contradicts"),
        (lambda doc: doc.update(passed=0), "passed=0: the cases say"),
        (lambda doc: doc.update(all_passed=False), "all_passed=false: the cases say true"),
        (lambda doc: doc["cases"][0].update(checks="x"), 'cases[0].checks="x": must be an array'),
        (lambda doc: doc.update(schema_version=2), "schema_version=2: this version reads"),
        (lambda doc: doc.update(shard={"index": 0, "count": 4}), "shard.index=0:"),
        (lambda doc: doc.pop("suite"), "suite: required key is missing"),
    ],
)
def test_a_damaged_report_is_refused_naming_file_and_field(
    edit: Any, says: str, tmp_path: Path, shards: list[dict[str, Any]]
) -> None:
    edit(shards[1])
    errors = refused(tmp_path, shards)
    assert any("shard-2.json: " + says in line for line in errors), errors


def test_unreadable_reports_are_each_named(tmp_path: Path, shards: list[dict[str, Any]]) -> None:
    not_json = tmp_path / "junit.xml"
    not_json.write_text("<testsuites/>", encoding="utf-8")
    errors = refused(tmp_path, shards, not_json, tmp_path / "absent.json")
    assert any(f"{not_json}: not a JSON report" in line for line in errors)
    assert f"Error: {tmp_path / 'absent.json'}: no such report" in errors


def test_a_failed_merge_still_writes_a_red_machine_readable_report(
    tmp_path: Path, shards: list[dict[str, Any]]
) -> None:
    paths = write_all(tmp_path, shards[:3])
    result = zeroclaw("eval", "merge", *paths, "--format", "json")
    assert result.returncode == 1
    document = json_report(result)
    assert document["all_passed"] is False
    assert "shard 4/4 is missing: every shard must be merged" in document["errors"]
    assert document["suite"] == shards[0]["suite"]


def test_errors_a_shard_reported_make_the_merge_red(
    tmp_path: Path, shards: list[dict[str, Any]]
) -> None:
    shards[2].update(interrupted="SIGTERM", errors=["interrupted by SIGTERM after 1 of 6 cases"])
    recount(shards[2])
    result = zeroclaw("eval", "merge", *write_all(tmp_path, shards), "--format", "json")
    assert result.returncode == 143  # as the interrupted shard itself exited
    document = json_report(result)
    assert document["errors"] == [
        f"shard 3/4 ({tmp_path / 'shard-3.json'}): interrupted by SIGTERM after 1 of 6 cases"
    ]
    assert document["interrupted"] == "SIGTERM"


def test_one_unsharded_report_is_re_rendered(
    tmp_path: Path, runs: dict[bool, tuple[dict[str, Any], int]]
) -> None:
    whole, code = runs[True]
    [path] = write_all(tmp_path, [whole])
    result = zeroclaw("eval", "merge", path, "--format", "json")
    assert result.returncode == code == 1
    assert verdict(json_report(result)) == verdict(whole)


def test_a_report_to_stdout_takes_the_place_of_format(
    tmp_path: Path, runs: dict[bool, tuple[dict[str, Any], int]]
) -> None:
    whole, code = runs[True]
    paths = write_all(tmp_path, shard_documents(whole, 2))
    result = zeroclaw("eval", "merge", *paths, "--report", "json:-", cwd=tmp_path)
    assert result.returncode == code
    assert verdict(json_report(result)) == verdict(whole)
    assert not (tmp_path / "-").exists()
    both = zeroclaw("eval", "merge", *paths, "--report", "json:-", "--format", "text")
    assert both.returncode == 2
    assert "both write stdout" in both.stderr


def test_a_shard_whose_suite_was_refused_leaves_the_others_totals(
    tmp_path: Path, shards: list[dict[str, Any]]
) -> None:
    # The first shard's suite failed to load: it ran and counted nothing.
    refused_shard = shards[0]
    refused_shard.update(cases=[], config_digest="", suite_total=0, selected_total=0)
    refused_shard["errors"] = ["evals/x.json: expects: must not be empty"]
    recount(refused_shard)
    result = zeroclaw("eval", "merge", *write_all(tmp_path, shards))
    assert result.returncode == 1
    held = sum(len(shard["cases"]) for shard in shards)
    assert f"{held}/{held} cases passed\n" in result.stdout  # nothing "deselected"
    assert (
        json_report(zeroclaw("eval", "merge", *write_all(tmp_path, shards), "--format", "json"))[
            "suite_total"
        ]
        == shards[1]["suite_total"]
    )


def forge_red_case(doc: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The red shard's failed case edited into a pass that never ran, counts made to agree."""
    case = next(case for case in doc["cases"] if not case["passed"])
    case.update({"passed": True, "passes": 1, **fields})
    for check in case["checks"]:
        check["passed"] = True
    for attempt in case.get("attempts", []):
        attempt.update({"passed": True, **{k: v for k, v in fields.items() if k != "passes"}})
        for check in attempt["checks"]:
            check["passed"] = True
    return recount(doc)


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"ran": False}, "ran=false: contradicts its passed (true)"),
        ({"ran": False, "passed": False, "passes": 0}, "ran=false: contradicts its checks"),
        (
            {"ran": False, "passed": False, "passes": 0, "checks": []},
            "contradicts its error (null)",
        ),
    ],
    ids=["passed", "graded", "no-error"],
)
def test_a_case_that_never_ran_yet_says_it_passed_or_was_graded_is_refused(
    fields: dict[str, Any], says: str, tmp_path: Path, runs: dict[bool, tuple[dict[str, Any], int]]
) -> None:
    whole, _ = runs[True]
    docs = shard_documents(whole, 2)
    red = next(doc for doc in docs if not doc["all_passed"])
    checks = fields.pop("checks", None)
    forge_red_case(red, **fields)
    if checks is not None:
        for case in red["cases"]:
            if not case.get("ran", True):
                case["checks"] = checks
                for attempt in case.get("attempts", []):
                    attempt["checks"] = checks
    result = zeroclaw("eval", "merge", *write_all(tmp_path, docs), "--format", "json")
    assert result.returncode == 1, result.stdout
    assert says in result.stderr, result.stderr
    assert "cases[" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("format_name", ["text", "github"])
def test_a_merge_red_only_for_a_shards_error_says_so_last(
    format_name: str, tmp_path: Path, shards: list[dict[str, Any]]
) -> None:
    refused_shard = shards[0]
    refused_shard.update(cases=[], config_digest="", suite_total=0, selected_total=0)
    refused_shard["errors"] = ["evals/x.json: expects: must not be empty"]
    recount(refused_shard)
    result = zeroclaw("eval", "merge", *write_all(tmp_path, shards), "--format", format_name)
    assert result.returncode == 1
    last = result.stdout.splitlines()[-1]
    assert last == (
        f"red: an error outside the cases, first: shard 1/4 ({tmp_path / 'shard-1.json'}): "
        "evals/x.json: expects: must not be empty"
    )
