"""response_json: admitted like a built-in family, graded against the final response."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import zeroclaw_eval_json_response

from zeroclaw_eval import AdmissionError, RunRecord, vacuity
from zeroclaw_eval.testing import admit, fixture, run_cli, run_zeroclaw, write_fixture

PLUGIN = zeroclaw_eval_json_response
ORDER = json.dumps({"status": "ok", "items": [{"id": 7, "a/b": True}], "note": ""})


def refused(expects: dict[str, Any]) -> AdmissionError:
    with pytest.raises(AdmissionError) as caught:
        admit(fixture(expects, response=ORDER), PLUGIN)
    return caught.value


@pytest.mark.parametrize(
    ("expects", "field", "message"),
    [
        ({"response_json": {}}, "expects.response_json", "must not be empty"),
        (
            {"response_json": ["/status"]},
            "expects.response_json",
            "must be an object, not an array",
        ),
        (
            {"response_json": {"status": "ok"}},
            'expects.response_json.status="ok"',
            'must start with "/"',
        ),
        ({"response_json": {"": 1}}, 'expects.response_json[""]=1', 'must start with "/"'),
        (
            {"response_json": {"/a~2b": 1}},
            "expects.response_json./a~2b=1",
            '"~" must be followed by 0 or 1',
        ),
        ({"response_jsn": {"/status": "ok"}}, "expects.response_jsn", "unknown key"),
    ],
)
def test_bad_parameters_are_refused_with_file_and_field(
    expects: dict[str, Any], field: str, message: str
) -> None:
    error = refused(expects)
    assert error.source == "case.json"
    assert error.field == field
    assert message in error.message


def test_empty_strings_are_legitimate_expected_values() -> None:
    case = admit(fixture({"response_json": {"/note": ""}}, response=ORDER), PLUGIN)
    run = RunRecord(responses=[ORDER])
    assert [c.passed for c in case.grade(run)] == [True]
    assert [c.passed for c in case.grade(RunRecord(responses=['{"note": "x"}']))] == [False]


def test_every_check_fails_on_an_empty_run_so_no_case_is_vacuous() -> None:
    case = admit(fixture({"response_json": {"/status": "ok", "/note": ""}}), PLUGIN)
    checks = case.grade(RunRecord())
    assert [(c.passed, c.detail) for c in checks] == [(False, "there is no final response")] * 2
    assert vacuity(case) is None


def grade(response: str, expects: dict[str, Any]) -> list[tuple[bool, str]]:
    case = admit(fixture({"response_json": expects}), PLUGIN)
    return [(c.passed, c.detail) for c in case.grade(RunRecord(responses=[response]))]


def test_pointers_follow_rfc_6901() -> None:
    results = grade(ORDER, {"/status": "ok", "/items/0/id": 7, "/items/0/a~1b": True})
    assert [passed for passed, _ in results] == [True, True, True]


def test_json_equality_is_strict_about_types() -> None:
    results = grade(ORDER, {"/items/0/id": 7.0, "/items/0/a~1b": 1, "/status": ["ok"]})
    assert results == [
        (True, "/items/0/id is 7"),
        (False, "expected 1, found true"),
        (False, 'expected ["ok"], found "ok"'),
    ]


def test_missing_values_say_what_exists() -> None:
    results = grade(ORDER, {"/missing": 1, "/items/3": 1, "/status/x": 1, "/items/01": 1})
    assert results == [
        (False, 'not found: the document has no key "missing" (keys: "items", "note", "status")'),
        (False, "not found: /items is an array of 1 items; no item '3'"),
        (False, 'not found: /status is "ok", not an object or an array'),
        (False, "not found: /items is an array of 1 items; no item '01'"),
    ]


def test_the_first_fenced_json_block_is_read_when_the_response_is_prose() -> None:
    response = 'Here it is:\n```json\n{"status": "ok"}\n```\nand\n```json\n{"status": "no"}\n```'
    assert grade(response, {"/status": "ok"}) == [(True, '/status is "ok"')]


def test_unreadable_responses_fail_every_check_with_the_reason() -> None:
    (prose,) = grade("All good!", {"/status": "ok"})
    assert not prose[0]
    assert "is not JSON" in prose[1] and "no ```json block" in prose[1]
    (broken,) = grade('```json\n{"status": \n```', {"/status": "ok"})
    assert not broken[0]
    assert "first ```json block" in broken[1]
    (duplicate,) = grade('{"status": "ok", "status": "no"}', {"/status": "ok"})
    assert not duplicate[0]
    assert "duplicate key" in duplicate[1]


def test_through_the_cli_in_process(tmp_path: Path) -> None:
    write_fixture(tmp_path, fixture({"response_json": {"/status": "ok"}}, response=ORDER))
    result = run_cli(["eval", "run", "--suite", str(tmp_path)], PLUGIN)
    assert result.exit_code == 0, result.stderr
    assert "1/1 cases passed" in result.stdout
    write_fixture(tmp_path, fixture({"response_json": {"status": "ok"}}), "bad.json")
    result = run_cli(["eval", "run", "--suite", str(tmp_path)], PLUGIN)
    assert result.exit_code == 1
    assert f'{tmp_path / "bad.json"}: expects.response_json.status="ok"' in result.stderr


def test_installed_entry_point_runs_end_to_end(tmp_path: Path) -> None:
    """As pip installed it: the console script finds, admits and grades the family."""
    listed = json.loads(run_zeroclaw(["eval", "plugins", "--json"]).stdout)
    rows = {row["name"]: row for row in listed["plugins"]}
    assert rows["response_json"]["distribution"] == "zeroclaw-eval-json-response"
    assert rows["response_json"]["provides"]["families"] == ["response_json"]

    write_fixture(tmp_path, fixture({"response_json": {"/status": "ok"}}, response=ORDER))
    assert run_zeroclaw(["eval", "run", "--suite", str(tmp_path)]).exit_code == 0
    write_fixture(tmp_path, fixture({"response_json": {"/status": "no"}}, response=ORDER), "x.json")
    result = run_zeroclaw(["eval", "run", "--suite", str(tmp_path)])
    assert result.exit_code == 1
    assert 'response_json: /status: expected "no", found "ok"' in result.stdout
