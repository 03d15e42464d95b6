"""The ``github`` formatter, through the real CLI: annotations GitHub can place, and a
Markdown summary appended to ``GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import CaseReport, CheckResult, SuiteReport
from zeroclaw_eval.builtin.github import GithubFormatter, command, escape_property

from .conftest import echo_case, zeroclaw

COMMAND = re.compile(r"::(?P<name>\w+)(?: (?P<props>[^:]*))?::(?P<message>.*)")


def unescape(text: str) -> str:
    """The inverse of the workflow-command escapes, as GitHub's runner reads them."""
    for escaped, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, char)
    return text


def commands(stdout: str) -> list[dict[str, Any]]:
    """Every workflow command on stdout, parsed as GitHub parses it."""
    found = []
    for line in stdout.splitlines():
        match = COMMAND.fullmatch(line)
        if match is None:
            assert not line.startswith("::"), line
            continue
        props = dict(
            (key, unescape(value))
            for key, value in (p.split("=", 1) for p in (match["props"] or "").split(",") if p)
        )
        found.append({"command": match["name"], **props, "message": unescape(match["message"])})
    return found


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A work tree holding a red suite: one passing case, one with two failing checks
    whose texts hold every character the workflow commands must escape."""
    suite = tmp_path / "evals" / "suite"
    suite.mkdir(parents=True)
    (tmp_path / ".git").mkdir()  # a checkout, as actions/checkout leaves it
    (suite / "a_green.json").write_text(json.dumps(echo_case()), encoding="utf-8")
    red = echo_case(
        model_name="red, case: 100%",
        expects={
            "response_contains": ["50% off,\nnow: today"],
            "exact_tool_calls": 3,
            "tools_used": ["echo"],
        },
    )
    (suite / "b_red.json").write_text(json.dumps(red, indent=2), encoding="utf-8")
    return tmp_path


def test_failed_checks_are_annotated_on_their_fixture(workspace: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    result = zeroclaw(
        "eval",
        "run",
        "--suite",
        "suite",
        "--format",
        "github",
        cwd=workspace / "evals",  # not the work tree: paths must still be relative to it
        env={"GITHUB_WORKSPACE": str(workspace), "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.returncode == 1, result.stderr
    annotations = commands(result.stdout)
    lines = (workspace / "evals/suite/b_red.json").read_text().splitlines()

    def line_of(key: str) -> str:
        return str(next(i for i, text in enumerate(lines, 1) if f'"{key}"' in text))

    assert annotations == [
        {
            "command": "error",
            "file": "evals/suite/b_red.json",
            "line": line_of("response_contains"),
            "title": "zeroclaw eval: red, case: 100%",
            "message": 'response_contains: "50% off,\\nnow: today": not found: '
            'the final response is "The echo said: hello"',
        },
        {
            "command": "error",
            "file": "evals/suite/b_red.json",
            "line": line_of("exact_tool_calls"),
            "title": "zeroclaw eval: red, case: 100%",
            "message": "exact_tool_calls: 3: observed 1 call: echo",
        },
    ]
    assert result.stdout.splitlines()[-1] == "1/2 cases passed"
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### ❌ zeroclaw eval: ")  # appended, not truncated
    assert "**1/2 cases passed**" in text
    rows = [
        line for line in text.splitlines() if line.startswith("| ✅") or line.startswith("| ❌")
    ]
    assert rows[0].startswith("| ✅ | echo-hello | evals/suite/a_green.json | 3/3 |")
    assert rows[1].startswith("| ❌ | red, case: 100% | evals/suite/b_red.json | 1/3 |")
    assert "exact_tool_calls: 3: observed 1 call: echo" in rows[1]


def test_a_refused_fixture_is_annotated_with_its_file(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # the work tree, found without GITHUB_WORKSPACE
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "bad.json").write_text(
        json.dumps(echo_case(expects={"min_tool_calls": 0})), encoding="utf-8"
    )
    (suite / "good.json").write_text(json.dumps(echo_case()), encoding="utf-8")
    result = zeroclaw(
        "eval", "run", "--suite", suite, "--format", "github", env={"GITHUB_WORKSPACE": ""}
    )  # run from elsewhere, with an absolute --suite
    assert result.returncode == 1
    suite_line, refusal = commands(result.stdout)
    # The first line is about the whole suite: no file.
    assert suite_line["title"] == "zeroclaw eval"
    assert "file" not in suite_line
    assert "1 fixture refused (of 2)" in suite_line["message"]
    assert refusal["file"] == "suite/bad.json"
    assert refusal["title"] == "zeroclaw eval: fixture refused"
    assert refusal["message"].startswith("expects.min_tool_calls=0: ")


def test_a_green_suite_has_no_annotation_and_a_green_summary(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "case.json").write_text(json.dumps(echo_case()), encoding="utf-8")
    summary = tmp_path / "summary.md"
    result = zeroclaw(
        "eval",
        "run",
        "--suite",
        suite,
        "--format",
        "github",
        "--report",
        f"github:{tmp_path / 'copy.txt'}",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.returncode == 0, result.stderr
    assert commands(result.stdout) == []
    assert result.stdout == "1/1 cases passed\n"
    # Rendered twice (stdout and --report), summarized once.
    assert summary.read_text(encoding="utf-8").count("### ✅ zeroclaw eval") == 1


def test_a_non_gating_suite_is_annotated_with_warnings() -> None:
    failed = CaseReport("c", "suite/c.json", (CheckResult("tools_used: echo", False, "none"),))
    report = SuiteReport("suite", (failed,), gating=False)
    assert [c["command"] for c in commands(GithubFormatter().render(report))] == ["warning"]


def test_a_run_error_is_one_annotation() -> None:
    failed = CaseReport("c", "suite/c.json", error="case 'c': requested more\nresponses")
    annotations = commands(GithubFormatter().render(SuiteReport("suite", (failed,))))
    assert annotations == [
        {
            "command": "error",
            "file": "suite/c.json",
            "title": "zeroclaw eval: c",
            "message": "case 'c': requested more\nresponses",
        }
    ]


@pytest.mark.parametrize(
    ("text", "escaped"),
    [("a%b", "a%25b"), ("a\r\nb", "a%0D%0Ab"), ("k: v, w", "k%3A v%2C w"), ("%0A", "%250A")],
)
def test_properties_are_escaped_by_the_workflow_command_rules(text: str, escaped: str) -> None:
    assert escape_property(text) == escaped
    assert command("error", text, title=text) == f"::error title={escaped}::" + escaped.replace(
        "%3A", ":"
    ).replace("%2C", ",")
