"""The junit formatter, read back the way CI reads it: a strict XML parser and junitparser."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import junitparser
import pytest
import zeroclaw_eval_junit
from zeroclaw_eval_junit import JunitFormatter, xml_safe

from zeroclaw_eval import CaseReport, CheckResult, SuiteReport
from zeroclaw_eval.testing import fixture, run_cli, run_zeroclaw, write_fixture

ECHO_HELLO = [("echo", {"message": "hello"})]


@pytest.fixture
def mixed_suite(tmp_path: Path) -> Path:
    """Two passing cases, one with two failing checks, one run error."""
    suite = tmp_path / "suite"
    write_fixture(
        suite,
        fixture({"tools_used": ["echo"]}, tool_calls=ECHO_HELLO, name="passes"),
        "a_pass.json",
    )
    write_fixture(suite, fixture({"response_contains": ["done"]}, name="passes too"), "b_pass.json")
    failing = fixture(
        {"response_contains": ["goodbye", "farewell"], "exact_tool_calls": 1},
        tool_calls=ECHO_HELLO,
        response="hello",
        name="fails twice",
    )
    write_fixture(suite, failing, "c_fail.json")
    runs_dry = fixture({"tools_used": ["echo"]}, name="runs dry")
    # Scripted a tool call and no reply after it: the agent asks for more.
    del runs_dry["turns"][0]["steps"][-1]
    runs_dry["turns"][0]["steps"].append(
        {
            "response": {
                "type": "tool_calls",
                "tool_calls": [{"id": "c", "name": "echo", "arguments": {}}],
            }
        }
    )
    write_fixture(suite, runs_dry, "d_error.json")
    return suite


def junit(suite: Path, *extra: str) -> tuple[int, str]:
    result = run_cli(
        ["eval", "run", "--suite", str(suite), "--format", "junit", *extra], zeroclaw_eval_junit
    )
    return result.exit_code, result.stdout


def json_report(suite: Path) -> dict[str, object]:
    result = run_cli(["eval", "run", "--suite", str(suite), "--format", "json"])
    document: dict[str, object] = json.loads(result.stdout)
    return document


def test_counts_equal_the_suite_report_for_strict_xml_and_junitparser(mixed_suite: Path) -> None:
    code, xml = junit(mixed_suite)
    assert code == 1
    expected = json_report(mixed_suite)
    assert (expected["total"], expected["passed"]) == (4, 2)

    root = ET.fromstring(xml.encode("utf-8"))
    (suite,) = root.findall("testsuite")
    for element in (root, suite):
        assert element.get("tests") == "4"
        assert element.get("failures") == "1"
        assert element.get("errors") == "1"

    parsed = junitparser.JUnitXml.fromstring(xml)
    (ci_suite,) = list(parsed)
    assert (ci_suite.tests, ci_suite.failures, ci_suite.errors) == (4, 1, 1)
    by_name = {case.name: case for case in ci_suite}
    assert sorted(by_name) == ["fails twice", "passes", "passes too", "runs dry"]
    assert by_name["passes"].is_passed
    # Classname: the suite directory, dotted, so viewers never show a class named "json".
    assert by_name["passes"].classname == ".".join(
        part.replace(".", "_") for part in mixed_suite.parts[1:]
    )
    files = {case.get("name"): case.get("file") for case in root.iter("testcase")}
    assert files["passes"] == str(mixed_suite / "a_pass.json")
    (failure,) = by_name["fails twice"].result
    assert isinstance(failure, junitparser.Failure)
    assert failure.message.startswith('response_contains: "goodbye": not found')
    # The body lists every failing check, with its detail.
    assert len(failure.text.splitlines()) == 2
    assert 'response_contains: "farewell": not found' in failure.text
    assert "exact_tool_calls" not in failure.text  # that check passed
    (error,) = by_name["runs dry"].result
    assert isinstance(error, junitparser.Error)
    assert "requested more responses than scripted" in error.message


def test_counts_agree_with_the_text_report(mixed_suite: Path) -> None:
    text = run_cli(["eval", "run", "--suite", str(mixed_suite)]).stdout
    passed, total = map(int, re.search(r"(\d+)/(\d+) cases passed", text).groups())  # type: ignore[union-attr]
    root = ET.fromstring(junit(mixed_suite)[1])
    failed = int(root.get("failures", "")) + int(root.get("errors", ""))
    assert (int(root.get("tests", "")), total - passed) == (total, failed)


def test_a_green_suite_is_green_in_junit(tmp_path: Path) -> None:
    write_fixture(tmp_path, fixture({"response_contains": ["done"]}))
    code, xml = junit(tmp_path)
    assert code == 0
    (suite,) = junitparser.JUnitXml.fromstring(xml)
    assert (suite.tests, suite.failures, suite.errors) == (1, 0, 0)


def test_a_suite_that_fails_to_load_is_one_erroring_testcase(tmp_path: Path) -> None:
    write_fixture(tmp_path, fixture({"response_contains": [""]}))
    code, xml = junit(tmp_path)
    assert code == 1
    (suite,) = junitparser.JUnitXml.fromstring(xml)
    assert (suite.tests, suite.errors) == (1, 1)
    (case,) = suite
    (error,) = case.result
    assert "1 fixture refused" in error.message
    assert "expects.response_contains[0]" in error.text


def test_characters_xml_forbids_are_replaced_and_the_document_parses(tmp_path: Path) -> None:
    name = "bell\u0007 escape\u001b nul\u0000 fffe\ufffe"
    write_fixture(tmp_path, json.dumps(fixture({"response_contains": ["absent"]}, name=name)))
    code, xml = junit(tmp_path)
    assert code == 1
    case = ET.fromstring(xml).find("testsuite/testcase")
    assert case is not None
    assert case.get("name") == r"bell\x07 escape\x1b nul\x00 fffe\ufffe"
    assert junitparser.JUnitXml.fromstring(xml)


def test_newlines_in_attributes_survive_parsing() -> None:
    detail = 'line one\nline two\r\n\ttabbed & <tagged> "quoted" \u001b \ud800'
    report = SuiteReport(
        "suite",
        (CaseReport("multi\nline", "x.json", (CheckResult("family: entry", False, detail),)),),
    )
    xml = JunitFormatter().render(report)
    assert all("\n" not in tag for tag in re.findall(r"<[^>]*>", xml))  # only &#10; in tags
    failure = ET.fromstring(xml).find("testsuite/testcase/failure")
    assert failure is not None
    assert xml_safe(detail).endswith(r" \x1b \ud800")
    assert failure.get("message") == f"family: entry: {xml_safe(detail)}"
    assert failure.text == f"family: entry: {xml_safe(detail)}"
    case = ET.fromstring(xml).find("testsuite/testcase")
    assert case is not None and case.get("name") == "multi\nline"


def test_report_file_beside_text_on_stdout(mixed_suite: Path, tmp_path: Path) -> None:
    target = tmp_path / "out" / "junit.xml"
    target.parent.mkdir()
    result = run_cli(
        ["eval", "run", "--suite", str(mixed_suite), "--report", f"junit:{target}"],
        zeroclaw_eval_junit,
    )
    assert result.exit_code == 1
    assert "2/4 cases passed" in result.stdout
    (suite,) = junitparser.JUnitXml.fromfile(str(target))
    assert (suite.tests, suite.failures, suite.errors) == (4, 1, 1)


def test_installed_entry_point_formats_through_the_console_script(mixed_suite: Path) -> None:
    """The package as pip installed it: the real console script finds the entry point."""
    listed = run_zeroclaw(["eval", "plugins", "--json"])
    rows = {row["name"]: row for row in json.loads(listed.stdout)["plugins"]}
    assert rows["junit"]["distribution"] == "zeroclaw-eval-junit"
    assert rows["junit"]["provides"]["formatters"] == ["junit"]

    result = run_zeroclaw(["eval", "run", "--suite", str(mixed_suite), "--format", "junit"])
    assert result.exit_code == 1
    assert result.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    (suite,) = junitparser.JUnitXml.fromstring(result.stdout)
    assert (suite.tests, suite.failures, suite.errors) == (4, 1, 1)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("evals/regression/greeting.json", "evals.regression"),
        ("evals\\regression\\greeting.json", "evals.regression"),
        ("suites/v1.2/case.json", "suites.v1_2"),
        ("/abs/suite/case.json", "abs.suite"),
        ("../up/case.json", "up"),
        ("case.json", "zeroclaw-eval"),
    ],
)
def test_classname_is_the_dotted_directory(source: str, expected: str) -> None:
    assert zeroclaw_eval_junit.classname(source) == expected


def test_the_shipped_suite_splits_into_package_and_class() -> None:
    project = Path(__file__).resolve().parents[3]
    result = run_zeroclaw(
        ["eval", "run", "--format", "junit", "-k", "greeting"], cwd=project / "evals"
    )
    assert result.exit_code == 0, result.stderr
    (suite,) = junitparser.JUnitXml.fromstring(result.stdout)
    cases = list(suite)
    assert cases
    for case in cases:
        package, _, cls = case.classname.rpartition(".")
        assert (package, cls) == ("evals", "regression")
    files = [case.get("file", "") for case in ET.fromstring(result.stdout).iter("testcase")]
    assert len(files) == len(cases)
    assert all(file.startswith("evals/regression/") for file in files)
