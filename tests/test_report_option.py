"""``zeroclaw eval run --report FORMAT:PATH``: extra reports in files, checked up front."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from zeroclaw_eval import Formatter, SuiteReport, hookimpl
from zeroclaw_eval.testing import fixture, run_cli, run_zeroclaw, write_fixture

from .conftest import zeroclaw


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """One passing case, one failing case."""
    directory = tmp_path / "suite"
    write_fixture(directory, fixture({"response_contains": ["done"]}, name="ok"), "a.json")
    write_fixture(directory, fixture({"response_contains": ["nope"]}, name="bad"), "b.json")
    return directory


def run(suite: Path, *args: str) -> tuple[int, str, str]:
    result = run_cli(["eval", "run", "--suite", str(suite), *args])
    return result.exit_code, result.stdout, result.stderr


def test_reports_go_to_files_while_format_goes_to_stdout(suite: Path, tmp_path: Path) -> None:
    as_json, as_text = tmp_path / "report.json", tmp_path / "report.txt"
    code, stdout, _ = run(suite, "--report", f"json:{as_json}", "--report", f"text:{as_text}")
    assert code == 1
    assert stdout.endswith("1/2 cases passed\n")
    assert as_text.read_text(encoding="utf-8") == stdout
    document = json.loads(as_json.read_text(encoding="utf-8"))
    assert (document["total"], document["passed"], document["all_passed"]) == (2, 1, False)
    printed = json.loads(run(suite, "--format", "json")[1])
    # The same report as --format json prints, but for the run times.
    for doc in (document, printed):
        for case in doc["cases"]:
            del case["duration_s"]
            for attempt in case["attempts"]:
                del attempt["duration_s"]
    assert document == printed


def test_an_existing_report_is_replaced(suite: Path, tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("stale", encoding="utf-8")
    run(suite, "--report", f"json:{target}")
    assert json.loads(target.read_text(encoding="utf-8"))["total"] == 2


@pytest.mark.parametrize(
    "blocker",
    ["a-directory", "a-file/report.xml", "a-file/deeper/report.xml"],
)
def test_an_unwritable_path_fails_before_any_case_runs(
    suite: Path, tmp_path: Path, blocker: str
) -> None:
    (tmp_path / "a-directory").mkdir()
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    good, bad = tmp_path / "good.json", tmp_path / blocker
    code, stdout, stderr = run(suite, "--report", f"json:{good}", "--report", f"json:{bad}")
    assert code == 1
    assert stdout == ""  # nothing ran, nothing was reported
    assert stderr.startswith(f"Error: --report json:{bad}: cannot write {bad}: ")
    assert stderr.count("\n") == 1
    assert not good.exists()  # the probe leaves no file behind


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("junit-typo:r.xml", "unknown format 'junit-typo' (known: github, json, otel, text)"),
        ("report.xml", "expected FORMAT:PATH"),
        ("json:", "expected FORMAT:PATH"),
        (":r.json", "expected FORMAT:PATH"),
    ],
)
def test_bad_report_values_are_usage_errors(suite: Path, spec: str, message: str) -> None:
    code, stdout, stderr = run(suite, "--report", spec)
    assert code == 2
    assert stdout == ""
    assert message in stderr


def test_the_same_path_twice_is_refused(suite: Path, tmp_path: Path) -> None:
    target = tmp_path / "r"
    code, _, stderr = run(suite, "--report", f"json:{target}", "--report", f"text:{target}")
    assert code == 2
    assert "is also the target of" in stderr


def test_reports_are_written_when_the_suite_fails_to_load(tmp_path: Path) -> None:
    """CI always gets its report file, carrying the load errors."""
    broken = tmp_path / "suite"
    write_fixture(broken, fixture({"response_contains": [""]}))
    target = tmp_path / "report.json"
    result = run_zeroclaw(["eval", "run", "--suite", str(broken), "--report", f"json:{target}"])
    assert result.exit_code == 1
    document = json.loads(target.read_text(encoding="utf-8"))
    assert document["all_passed"] is False
    assert document["errors"][0].endswith("1 fixture refused (of 1); no case was run")
    assert "expects.response_contains[0]" in document["errors"][1]
    assert "Traceback" not in result.stderr


class Broken(Formatter):
    """A formatter whose plugin has a bug."""

    name = "broken"

    def render(self, report: SuiteReport) -> str:
        raise ValueError("kaput")


class BrokenPlugin:
    __name__ = "broken-plugin"  # the name pluggy registers it under

    @hookimpl
    def zeroclaw_eval_register_formatters(self, register: Callable[[Formatter], None]) -> None:
        register(Broken())


@pytest.mark.parametrize("loads", [True, False], ids=["after-the-run", "suite-fails-to-load"])
def test_a_report_formatter_that_raises_is_an_error_naming_it(
    suite: Path, tmp_path: Path, loads: bool
) -> None:
    if not loads:
        (suite / "c.json").write_text("{", encoding="utf-8")
    target = tmp_path / "broken.txt"
    result = run_cli(
        ["eval", "run", "--suite", str(suite), "--report", f"broken:{target}"], BrokenPlugin()
    )
    assert result.exit_code == 1
    assert (
        "Error: formatter 'broken' of plugin 'broken-plugin' raised ValueError: kaput"
        in result.stderr.splitlines()
    )
    assert "Traceback" not in result.stderr
    if not loads:  # the load error is not hidden by the formatter's
        assert "c.json: not valid JSON" in result.stderr


def test_the_readme_report_setting_works_from_a_fresh_directory(tmp_path: Path) -> None:
    """``report = ["junit:out/report.xml"]``: the missing ``out/`` is created, as
    pytest's ``--junitxml`` creates its directory, beside the configuration file."""
    project = tmp_path / "project"
    write_fixture(project / "evals", fixture({"response_contains": ["done"]}), "a.json")
    (project / "zeroclaw.toml").write_text(
        '[eval]\nsuite_dir = "evals"\nreport = ["junit:out/report.xml"]\n', encoding="utf-8"
    )
    result = zeroclaw("eval", "run", "--no-history", cwd=project)
    assert (result.returncode, result.stderr) == (0, "")
    assert (project / "out" / "report.xml").read_text(encoding="utf-8").startswith("<?xml")
    nested = tmp_path / "a" / "b" / "report.json"
    result = zeroclaw("eval", "run", "--no-history", "--report", f"json:{nested}", cwd=project)
    assert result.returncode == 0
    assert json.loads(nested.read_text(encoding="utf-8"))["passed"] == 1


def test_an_unwritable_report_names_the_setting_it_came_from(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_fixture(project / "evals", fixture({"response_contains": ["done"]}), "a.json")
    (project / "blocker").write_text("a file, not a directory", encoding="utf-8")
    config = project / "zeroclaw.toml"
    config.write_text(
        '[eval]\nsuite_dir = "evals"\nreport = ["junit:blocker/report.xml"]\n',
        encoding="utf-8",
    )
    result = zeroclaw("eval", "run", "--no-history", cwd=project)
    assert result.returncode == 1
    target = project / "blocker" / "report.xml"
    assert result.stderr.startswith(
        f"Error: {config}: eval.report junit:{target}: cannot write {target}: "
    )
    result = zeroclaw("eval", "run", "--no-history", "--report", "junit:blocker/x.xml", cwd=project)
    assert result.stderr.startswith("Error: --report junit:blocker/x.xml: cannot write ")
