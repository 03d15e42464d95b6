"""Faults while running: each is contained, reported, and never green.

The faults come from a real plugin package (``tests/plugins/faulty``), pip-installed
once into a temporary directory. The CLI runs with that directory on PYTHONPATH,
so its entry point is found and loaded exactly as a user's plugin would be, while
the in-process registry of the other tests never sees it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import EvalConfig, SuiteReport
from zeroclaw_eval.config import load_config
from zeroclaw_eval.errors import ConfigError
from zeroclaw_eval.util import regexsearch

from .cli_process import assert_clean_errors, json_report
from .conftest import TESTS, ZEROCLAW, echo_case, zeroclaw

FAULTY = TESTS / "plugins" / "faulty"


@pytest.fixture(scope="module")
def faulty_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment under which ``zeroclaw`` loads the faulty plugin."""
    work = tmp_path_factory.mktemp("faulty")
    source = work / "src"
    shutil.copytree(FAULTY, source)  # builds write into the source tree: not into tests/
    site = work / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--target", str(site), str(source)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    # Before any path already there: under tools/mutate.py, the mutated package's.
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


def call_case(name: str, tool: str, expects: dict[str, Any], final: str = "done") -> dict[str, Any]:
    """A one-turn case that calls ``tool`` once, then answers ``final``."""
    return echo_case(
        model_name=name,
        turns=[
            {
                "user_input": f"use {tool}",
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [{"id": "c1", "name": tool, "arguments": {}}],
                        }
                    },
                    {"response": {"type": "text", "content": final}},
                ],
            }
        ],
        expects=expects,
    )


def answer_case(name: str, final: str, expects: dict[str, Any]) -> dict[str, Any]:
    """A one-turn case whose scripted model answers ``final`` straight away."""
    return echo_case(
        model_name=name,
        turns=[{"user_input": "hi", "steps": [{"response": {"type": "text", "content": final}}]}],
        expects=expects,
    )


def write_suite(directory: Path, cases: dict[str, dict[str, Any]]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, case in cases.items():
        (directory / f"{name}.json").write_text(json.dumps(case), encoding="utf-8")
    return directory


def config_file(directory: Path, **table: Any) -> Path:
    lines = ["[eval]", *(f"{key} = {json.dumps(value)}" for key, value in table.items())]
    path = directory / "zeroclaw.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


CATASTROPHIC = "(a+)+$"

# One suite, every fault of a run in it; the last case is healthy and must pass.
FAULT_SUITE = {
    "a_hang": call_case("hang", "hang", {"exact_tool_calls": 1}),
    "b_spin": call_case("spin", "spin", {"exact_tool_calls": 1}),
    "c_boom": call_case(
        "boom",
        "boom",
        {
            "all_tools_succeeded": False,
            "tool_results_contain": [
                {
                    "tool": "boom",
                    "needle": "tool 'boom' raised RuntimeError: the boom tool exploded",
                }
            ],
        },
    ),
    "d_number": call_case(
        "number",
        "number",
        {
            "all_tools_succeeded": False,
            "tool_results_contain": [
                {"tool": "number", "needle": "tool 'number' returned int, not text"}
            ],
        },
    ),
    "e_bad_output": call_case(
        "bad-output",
        "bad_output",
        {
            "all_tools_succeeded": False,
            "tool_results_contain": [
                {"tool": "bad_output", "needle": "tool 'bad_output' returned bytes, not text"}
            ],
        },
    ),
    "f_exit": call_case("exit", "exit", {"exact_tool_calls": 1}),
    "g_grader_raises": answer_case(
        "grader-raises", "fine", {"response_contains": ["fine"], "explodes_when_graded": True}
    ),
    "h_grader_hangs": answer_case(
        "grader-hangs", "fine", {"response_contains": ["fine"], "hangs_when_graded": True}
    ),
    "z_healthy": echo_case(model_name="healthy"),
}
# Its own run, under the default case_timeout_s: within the 1 s above, the case
# would time out (failing all the same) before the regex search did.
REGEX_SUITE = {
    "i_regex": answer_case(
        "catastrophic-regex",
        "a" * 40 + "!",
        {"response_matches": [CATASTROPHIC, "^a+"], "response_contains": ["!"]},
    ),
}

TIMEOUT_S = 1


@pytest.fixture(scope="module")
def fault_run(
    tmp_path_factory: pytest.TempPathFactory, faulty_env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], dict[str, dict[str, Any]]]:
    """``zeroclaw eval run --format json`` over the fault suite, and its cases by name."""
    work = tmp_path_factory.mktemp("faults")
    suite = write_suite(work / "suite", FAULT_SUITE)
    config = config_file(work, case_timeout_s=TIMEOUT_S)
    result = zeroclaw(
        "eval", "run", "--suite", suite, "--format", "json", "--config", config, env=faulty_env
    )
    cases = {case["name"]: case for case in json_report(result)["cases"]}
    return result, cases


FaultRun = tuple[subprocess.CompletedProcess[str], dict[str, dict[str, Any]]]


def test_a_suite_with_faults_runs_every_case_and_exits_1(fault_run: FaultRun) -> None:
    result, cases = fault_run
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    document = json_report(result)
    assert document["total"] == len(FAULT_SUITE)
    assert document["all_passed"] is False
    assert cases["healthy"]["passed"] is True  # after every fault, the rest still ran


@pytest.mark.parametrize("name", ["hang", "spin"])
def test_a_hung_tool_is_a_run_error_after_case_timeout_s(fault_run: FaultRun, name: str) -> None:
    case = fault_run[1][name]
    assert case["passed"] is False
    assert case["checks"] == []
    assert f"did not finish within case_timeout_s={TIMEOUT_S} s" in case["error"]


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("boom", "tool 'boom' raised RuntimeError: the boom tool exploded"),
        ("number", "tool 'number' returned int, not text"),
        ("bad-output", "tool 'bad_output' returned bytes, not text"),
    ],
    ids=["raises", "returns-int", "returns-bytes"],
)
def test_a_tool_that_raises_or_returns_no_text_is_a_recorded_failed_call(
    fault_run: FaultRun, name: str, error: str
) -> None:
    # The check passes only if the loop recorded the call as failed, with that
    # error text (naming the tool) as its result.
    case = fault_run[1][name]
    assert case["error"] is None
    assert case["passed"] is True, case["checks"]
    tool = error.split("'")[1]
    assert f"tool_results_contain: {tool} {json.dumps(error)}" in [
        check["check"] for check in case["checks"]
    ]


def test_a_tool_calling_sys_exit_fails_its_case_instead_of_ending_the_run(
    fault_run: FaultRun,
) -> None:
    case = fault_run[1]["exit"]
    assert case["passed"] is False
    assert "unexpected SystemExit" in case["error"]


def test_a_family_that_raises_while_grading_is_a_failed_check_naming_plugin_and_family(
    fault_run: FaultRun,
) -> None:
    case = fault_run[1]["grader-raises"]
    assert case["error"] is None
    assert case["passed"] is False
    by_check = {check["check"]: check for check in case["checks"]}
    failed = by_check["explodes_when_graded"]
    assert failed["passed"] is False
    assert failed["detail"] == (
        "family 'explodes_when_graded' of plugin 'faulty' raised ValueError: a bug in the grader"
    )
    assert by_check['response_contains: "fine"']["passed"] is True  # graded all the same


def test_a_family_that_hangs_while_grading_is_a_run_error(fault_run: FaultRun) -> None:
    case = fault_run[1]["grader-hangs"]
    assert case["passed"] is False
    assert f"did not finish within case_timeout_s={TIMEOUT_S} s" in case["error"]


def test_a_family_whose_admission_rules_raise_refuses_the_fixture_naming_plugin_and_family(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    suite = write_suite(
        tmp_path / "suite", {"bad": answer_case("rules", "x", {"explodes_when_admitted": True})}
    )
    result = zeroclaw("eval", "run", "--suite", suite, env=faulty_env)
    assert result.returncode == 1
    assert assert_clean_errors(result.stderr)[1] == (
        f"Error: {suite / 'bad.json'}: expects.explodes_when_admitted: family "
        "'explodes_when_admitted' of plugin 'faulty' failed during admission: "
        "KeyError: 'a bug in the rules'"
    )


def test_a_catastrophic_regex_fails_its_check_without_hanging_the_run(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path / "suite", REGEX_SUITE)
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "json")
    assert result.returncode == 1
    (case,) = json_report(result)["cases"]
    assert case["error"] is None
    checks = {check["check"]: check for check in case["checks"]}
    stuck = checks[f"response_matches: {json.dumps(CATASTROPHIC)}"]
    assert stuck["passed"] is False
    assert f"did not finish within {regexsearch.TIMEOUT_S:g} s" in stuck["detail"]
    # The next search in the same run worked: the stuck worker was replaced.
    assert checks['response_matches: "^a+"']["passed"] is True
    assert checks['response_contains: "!"']["passed"] is True


def test_regex_search_outcomes_and_recovery_after_a_timeout() -> None:
    stuck = regexsearch.search(CATASTROPHIC, "a" * 40 + "!", timeout_s=0.5)
    assert stuck == regexsearch.TimedOut(0.5)
    assert regexsearch.search(r"\d+", "ticket 42") == regexsearch.Found("42")
    assert regexsearch.search(r"\d+", "none here") == regexsearch.NotFound()
    # Lone surrogates and megabytes cross the pipe unchanged.
    assert regexsearch.search("x$", "\ud800" + "y" * 2_000_000 + "x") == regexsearch.Found("x")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "greater than 0"),
        ("-1", "greater than 0"),
        ('"5"', "must be a number, not a string"),
        ("true", "must be a number, not a boolean"),
        ("inf", "finite number"),
        ("nan", "finite number"),
    ],
    ids=["zero", "negative", "string", "bool", "inf", "nan"],
)
def test_case_timeout_s_refuses_values_that_are_not_a_positive_duration(
    tmp_path: Path, value: str, message: str
) -> None:
    path = tmp_path / "zeroclaw.toml"
    path.write_text(f"[eval]\ncase_timeout_s = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"eval\.case_timeout_s") as error:
        load_config(path)
    assert message in str(error.value).lower()


def test_case_timeout_s_is_read_from_the_eval_table(tmp_path: Path) -> None:
    assert load_config(config_file(tmp_path, case_timeout_s=2.5)).config.case_timeout_s == 2.5
    assert EvalConfig().case_timeout_s == 300


def test_a_formatter_that_raises_exits_1_naming_it(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    suite = write_suite(tmp_path / "suite", {"ok": echo_case()})
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "explode", env=faulty_env)
    assert result.returncode == 1
    assert assert_clean_errors(result.stderr) == [
        "Error: formatter 'explode' of plugin 'faulty' raised RuntimeError: the formatter exploded"
    ]
    assert result.stdout == ""


def test_a_formatter_that_returns_no_text_exits_1_naming_it(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    suite = write_suite(tmp_path / "suite", {"ok": echo_case()})
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "not_text", env=faulty_env)
    assert result.returncode == 1
    assert assert_clean_errors(result.stderr) == [
        "Error: formatter 'not_text' returned NoneType, not text"
    ]


def test_a_formatter_that_raises_on_a_refused_suite_loses_neither_error(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    suite = write_suite(tmp_path / "suite", {"bad": echo_case(expects={})})
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "explode", env=faulty_env)
    assert result.returncode == 1
    lines = assert_clean_errors(result.stderr)
    assert lines[0].startswith("Error: formatter 'explode' of plugin 'faulty' raised")
    assert any(line.startswith(f"Error: {suite / 'bad.json'}: expects: ") for line in lines)


# --- interruption ------------------------------------------------------------------


def start_interruptible(
    tmp_path: Path, faulty_env: dict[str, str], *args: str
) -> subprocess.Popen[str]:
    """Start a run of: a passing case, a case that hangs, a case after it. Return once
    the run is inside the hanging case."""
    suite = write_suite(
        tmp_path / "suite",
        {
            "a_first": echo_case(model_name="first"),
            "b_hang": call_case("hang", "hang", {"exact_tool_calls": 1}),
            "c_after": echo_case(model_name="after"),
        },
    )
    marker = tmp_path / "hanging"
    process = subprocess.Popen(
        [ZEROCLAW, "eval", "run", "--suite", str(suite), *args],
        env={**os.environ, **faulty_env, "ZEROCLAW_FAULTY_MARKER": str(marker)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the run never reached the hanging case: {process.communicate()}")
        time.sleep(0.05)
    return process


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        stdout, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return process.returncode, stdout, stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_mid_suite_prints_a_partial_report_marked_interrupted_and_exits_130(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    process = start_interruptible(tmp_path, faulty_env, "--format", "json")
    process.send_signal(signal.SIGINT)
    code, stdout, stderr = finish(process)
    assert code == 130
    assert "Traceback" not in stderr
    document = json.loads(stdout)
    assert document["interrupted"] == "SIGINT"
    assert document["all_passed"] is False
    assert document["errors"] == ["interrupted by SIGINT after 1 of 3 cases: 2 did not finish"]
    assert [(c["name"], c["passed"], c["error"]) for c in document["cases"]] == [
        ("first", True, None),
        ("hang", False, "interrupted by SIGINT before it finished"),
        ("after", False, "not run"),
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_mid_repeats_reports_every_attempt_and_records_the_run(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    history = tmp_path / "history.sqlite"
    args = ("--format", "json", "--repeat", "2", "--history", str(history))
    process = start_interruptible(tmp_path, faulty_env, *args)
    process.send_signal(signal.SIGINT)
    code, stdout, stderr = finish(process)
    assert code == 130, stderr
    document = json.loads(stdout)
    assert document["errors"] == ["interrupted by SIGINT after 2 of 6 attempts: 4 did not finish"]
    first, hang, after = document["cases"]
    assert (first["name"], first["passes"], first["runs"]) == ("first", 2, 2)
    assert [a["error"] for a in hang["attempts"]] == [
        "interrupted by SIGINT before it finished",
        "not run",
    ]
    assert [a["error"] for a in after["attempts"]] == ["not run", "not run"]
    with sqlite3.connect(history) as db:
        verdicts = db.execute("SELECT verdict, total, passed FROM runs").fetchall()
        attempts = db.execute("SELECT count(*) FROM attempts").fetchone()[0]
    assert (verdicts, attempts) == ([("interrupted", 3, 1)], 6)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigint_under_exitfirst_prints_the_same_partial_report(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    process = start_interruptible(tmp_path, faulty_env, "--format", "json", "-x")
    process.send_signal(signal.SIGINT)
    code, stdout, stderr = finish(process)
    assert (code, stderr) == (130, "")
    document = json.loads(stdout)
    assert document["errors"] == ["interrupted by SIGINT after 1 of 3 cases: 2 did not finish"]
    assert [(c["name"], c["passed"], c["error"]) for c in document["cases"]] == [
        ("first", True, None),
        ("hang", False, "interrupted by SIGINT before it finished"),
        ("after", False, "not run"),
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_mid_suite_prints_a_partial_report_and_exits_143(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    process = start_interruptible(tmp_path, faulty_env)
    process.terminate()
    code, stdout, stderr = finish(process)
    assert code == 143
    assert "Traceback" not in stderr
    lines = stdout.splitlines()
    assert lines[0] == "error: interrupted by SIGTERM after 1 of 3 cases: 2 did not finish"
    assert lines[1].startswith("✓ first ")
    assert lines[2].endswith("error: interrupted by SIGTERM before it finished")
    assert lines[3].endswith("error: not run")
    assert lines[-1] == "1/3 cases passed"


def test_an_interrupted_report_is_never_green_even_if_every_finished_case_passed() -> None:
    from zeroclaw_eval import CaseReport, CheckResult

    passed = CaseReport("a", "a.json", (CheckResult("c", True, "ok"),))
    for name, code in (("SIGINT", 130), ("SIGTERM", 143)):
        report = SuiteReport("s", (passed,), interrupted=name)
        assert report.all_passed is False
        assert report.exit_code() == code
    assert SuiteReport("s", (passed,)).exit_code() == 0


def start_loading(
    tmp_path: Path, faulty_env: dict[str, str], *args: str, family: str = "hangs_when_admitted"
) -> subprocess.Popen[str]:
    """Start ``zeroclaw eval <args>`` on a suite that never finishes loading (a family's
    admission blocks: ``family``); return once admission is stuck there."""
    write_suite(
        tmp_path / "suite",
        {
            "a_first": echo_case(model_name="first"),
            "b_stuck": echo_case(
                model_name="stuck",
                expects={"response_contains": ["hello"], family: True},
            ),
        },
    )
    marker = tmp_path / "admitting"
    process = subprocess.Popen(
        [ZEROCLAW, "eval", *args, "--suite", "suite"],
        cwd=tmp_path,
        env={**os.environ, **faulty_env, "ZEROCLAW_FAULTY_MARKER": str(marker)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the run never reached the stuck admission: {process.communicate()}")
        time.sleep(0.05)
    return process


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_the_suite_loads_gives_an_interrupted_report_and_exits_130(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    process = start_loading(
        tmp_path, faulty_env, "run", "--format", "json", "--report", "text:out.txt"
    )
    process.send_signal(signal.SIGINT)
    code, stdout, stderr = finish(process)

    assert code == 130
    assert "Aborted!" not in stderr and "Traceback" not in stderr
    document = json.loads(stdout)
    assert document["interrupted"] == "SIGINT"
    assert document["errors"] == ["interrupted by SIGINT while the suite loaded: no case was run"]
    assert document["cases"] == []
    written = (tmp_path / "out.txt").read_text(encoding="utf-8")
    assert written == (
        "error: interrupted by SIGINT while the suite loaded: no case was run\n0/0 cases passed\n"
    )
    # Nothing else, and nothing half-written, is left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["admitting", "out.txt", "suite"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_check_loads_is_one_line_and_exit_130(
    tmp_path: Path, faulty_env: dict[str, str]
) -> None:
    process = start_loading(tmp_path, faulty_env, "check")
    process.send_signal(signal.SIGINT)
    code, stdout, stderr = finish(process)

    assert code == 130
    assert stdout == ""
    assert stderr == "Error: interrupted by SIGINT\n"
