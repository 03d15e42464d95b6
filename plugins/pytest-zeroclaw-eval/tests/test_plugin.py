"""The plugin through real pytest runs, each a subprocess in a throwaway project.

Each run is the installed pytest with the installed plugin (its ``pytest11`` entry
point) and the installed zeroclaw-eval: collection, -k, -x, --lf, --junitxml,
pytest-xdist, the [eval] configuration and plugin blocking, as a user gets them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

import pytest

ZEROCLAW = Path(sys.executable).with_name("zeroclaw")


@pytest.fixture(autouse=True, scope="module")
def installed() -> None:
    """The runs below load the plugin through its pytest11 entry point, so it must be
    installed with its test extra: fail in CI, skip elsewhere."""
    missing = []
    for name in ("pytest-zeroclaw-eval", "pytest-xdist"):
        try:
            distribution(name)
        except PackageNotFoundError:
            missing.append(name)
    if missing:
        install = "pip install -e 'plugins/pytest-zeroclaw-eval[test]'"
        message = f"not installed: {', '.join(missing)}: {install}"
        if os.environ.get("CI") or os.environ.get("ZEROCLAW_EVAL_REQUIRE_PLUGINS"):
            pytest.fail(message)
        pytest.skip(message)


def echo_case(name: str, needle: str = "hello", **expects: Any) -> dict[str, Any]:
    """A one-turn case that echoes "hello"; it passes iff ``needle`` is in the reply."""
    return {
        "model_name": name,
        "turns": [
            {
                "user_input": "Echo hello",
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [
                                {"id": "c1", "name": "echo", "arguments": {"message": "hello"}}
                            ],
                        }
                    },
                    {"response": {"type": "text", "content": "The echo said: hello"}},
                ],
            }
        ],
        "expects": expects
        or {
            "response_contains": [needle],
            "exact_tool_calls": 1,
            "tool_results_contain": [{"tool": "echo", "needle": "hello"}],
        },
    }


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A checkout with a red suite: three green cases, two red ones."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    suite = root / "evals" / "regression"
    for stem in ("a_green", "b_green", "d_green"):
        write(suite / f"{stem}.json", echo_case(f"case-{stem}"))
    write(suite / "c_red.json", echo_case("case-c-red", needle="absent"))
    write(suite / "e_red.json", echo_case("case-e-red", needle="missing"))
    write(suite / "notes" / "nested.json", echo_case("nested", needle="never collected"))
    return root


def pytest_run(
    root: Path, *args: str, env: dict[str, str] | None = None, cache: bool = False
) -> subprocess.CompletedProcess[str]:
    """``python -m pytest ARGS`` in ``root``, as a user would run it."""
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "ZEROCLAW_EVAL_DISABLE"))
    }
    environ.update(env or {})
    command = [sys.executable, "-m", "pytest", *args]
    if not cache:
        command += ["-p", "no:cacheprovider"]
    return subprocess.run(
        command, cwd=root, env=environ, capture_output=True, text=True, timeout=180, check=False
    )


def junit(root: Path, *args: str, **kwargs: Any) -> tuple[int, dict[str, str], str]:
    """Run with --junitxml: (exit code, testcase name -> outcome, stdout)."""
    result = pytest_run(root, *args, "--junitxml=report.xml", **kwargs)
    outcomes = {}
    tree = ET.parse(root / "report.xml").getroot()
    for case in tree.iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[case.get("name", "")] = kinds[0] if kinds else "passed"
    return result.returncode, outcomes, result.stdout


SERIAL = {
    "a_green": "passed",
    "b_green": "passed",
    "c_red": "failure",
    "d_green": "passed",
    "e_red": "failure",
}


def test_each_case_is_an_item_named_after_its_file(project: Path) -> None:
    code, outcomes, stdout = junit(project, "--zeroclaw-suite", "evals/regression")
    assert code == 1, stdout
    assert outcomes == SERIAL  # nested/ is not a case: loading is not recursive
    assert "zeroclaw-eval: suites evals/regression; mode replay" in stdout
    assert "evals/regression/c_red.json::c_red" in stdout


def test_a_failed_case_lists_its_failed_checks_as_the_text_report_does(project: Path) -> None:
    result = pytest_run(project, "--zeroclaw-suite", "evals/regression")
    text = subprocess.run(
        [str(ZEROCLAW), "eval", "run", "evals/regression"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    red = lines.index(next(line for line in lines if "case-c-red" in line))
    failure = lines[red : red + 2]
    assert failure == [
        "✗ case-c-red (evals/regression/c_red.json): 2/3 checks",
        '    ✗ response_contains: "absent": not found: '
        'the final response is "The echo said: hello"',
    ]
    assert "\n".join(failure) in result.stdout


def test_a_refused_fixture_is_a_collection_error_naming_file_and_field(project: Path) -> None:
    bad = echo_case("bad", exact_tool_calls=1, min_tool_calls=0)
    write(project / "evals" / "regression" / "f_bad.json", bad)
    result = pytest_run(project, "--zeroclaw-suite", "evals/regression")
    assert result.returncode == 2, result.stdout  # interrupted: errors during collection
    assert "ERROR collecting evals/regression/f_bad.json" in result.stdout
    assert "zeroclaw-eval: evals/regression/f_bad.json: expects.min_tool_calls=0: " in result.stdout
    assert "Traceback" not in result.stdout
    assert "passed" not in result.stdout.splitlines()[-1]  # nothing ran


def test_a_vacuous_fixture_is_a_collection_error_as_the_gate_refuses_it(project: Path) -> None:
    # A run that does nothing passes it: it cannot join the gate, through pytest either.
    vacuous = echo_case("vacuous", max_tool_calls=0)
    vacuous["turns"][0]["steps"] = [{"response": {"type": "text", "content": "hi"}}]
    write(project / "evals" / "regression" / "f_vacuous.json", vacuous)
    result = pytest_run(project, "--zeroclaw-suite", "evals/regression")
    assert result.returncode == 2, result.stdout
    assert "ERROR collecting evals/regression/f_vacuous.json" in result.stdout
    assert (
        "zeroclaw-eval: evals/regression/f_vacuous.json: expects: vacuous: a run that does "
        "nothing passes all 1 check (max_tool_calls: 0)"
    ) in result.stdout


@pytest.mark.parametrize(
    ("expression", "selected"),
    [
        ("green and not d_", {"a_green", "b_green"}),
        ("red", {"c_red", "e_red"}),
        ("case-e-red", {"e_red"}),  # the case's own name matches too
    ],
)
def test_k_selects_by_name(project: Path, expression: str, selected: set[str]) -> None:
    code, outcomes, _ = junit(project, "--zeroclaw-suite", "evals/regression", "-k", expression)
    assert set(outcomes) == selected
    assert code == (1 if any("red" in name for name in selected) else 0)


def test_x_stops_at_the_first_failed_case(project: Path) -> None:
    result = pytest_run(project, "--zeroclaw-suite", "evals/regression", "-x")
    assert result.returncode == 1
    assert "stopping after 1 failures" in result.stdout
    assert "1 failed, 2 passed" in result.stdout  # e_red never ran


def test_lf_runs_only_the_cases_that_failed_last(project: Path) -> None:
    first = pytest_run(project, "--zeroclaw-suite", "evals/regression", cache=True)
    assert first.returncode == 1
    code, outcomes, stdout = junit(
        project, "--zeroclaw-suite", "evals/regression", "--lf", cache=True
    )
    assert code == 1
    assert outcomes == {"c_red": "failure", "e_red": "failure"}, stdout
    assert "run-last-failure: rerun previous 2 failures" in stdout


def test_junit_xml_names_each_case_and_carries_its_failure(project: Path) -> None:
    pytest_run(project, "--zeroclaw-suite", "evals/regression", "--junitxml=report.xml")
    root = ET.parse(project / "report.xml").getroot()
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert cases["c_red"].get("classname") == "evals.regression.c_red.json"
    failure = cases["c_red"].find("failure")
    assert failure is not None
    assert 'response_contains: "absent": not found' in (failure.text or "")
    properties = {p.get("name"): p.get("value") for p in cases["a_green"].iter("property")}
    assert properties == {"zeroclaw_checks": "3/3"}


def test_xdist_runs_the_cases_on_two_workers(project: Path) -> None:
    for stem in range(20):  # enough cases for both workers to get some
        write(project / "evals" / "regression" / f"g{stem:02}.json", echo_case(f"g{stem}"))
    expected = {**SERIAL, **{f"g{stem:02}": "passed" for stem in range(20)}}
    code, outcomes, stdout = junit(project, "--zeroclaw-suite", "evals/regression", "-n", "2", "-v")
    assert "created: 2/2 workers" in stdout
    assert code == 1
    assert outcomes == expected
    # Both workers ran cases ("[gw0] [ 4%] PASSED evals/regression/a_green.json::a_green").
    ran_on = {line.split("]")[0] for line in stdout.splitlines() if line.startswith("[gw")}
    assert ran_on == {"[gw0", "[gw1"}, stdout


def test_the_ini_option_collects_the_suite_where_pytest_walks(project: Path) -> None:
    write(
        project / "pytest.ini",
        "[pytest]\ntestpaths = evals/regression\nzeroclaw_suite = evals/regression\n",
    )
    code, outcomes, _ = junit(project)
    assert (code, outcomes) == (1, SERIAL)


def test_without_a_suite_json_files_are_not_collected(project: Path) -> None:
    write(project / "evals" / "test_plain.py", "def test_plain():\n    assert True\n")
    code, outcomes, _ = junit(project, "evals")
    assert (code, outcomes) == (0, {"test_plain": "passed"})


def test_the_eval_configuration_applies(project: Path) -> None:
    # One tool round trip allowed per turn: a case that needs two is a run error,
    # in pytest as in zeroclaw eval run.
    two_calls = echo_case("two-calls", exact_tool_calls=2)
    steps = two_calls["turns"][0]["steps"]
    steps.insert(1, json.loads(json.dumps(steps[0])))
    write(project / "evals" / "regression" / "h_two_calls.json", two_calls)
    write(project / "zeroclaw.toml", "[eval]\nmax_tool_iterations = 1\n")
    code, outcomes, stdout = junit(project, "--zeroclaw-suite", "evals/regression", "-k", "two")
    assert (code, outcomes) == (1, {"h_two_calls": "failure"})
    assert "max_tool_iterations=1" in stdout, stdout

    write(project / "zeroclaw.toml", "[eval]\nmax_tool_iteration = 1\n")
    result = pytest_run(project, "--zeroclaw-suite", "evals/regression")
    assert result.returncode == 4  # a usage error
    assert "zeroclaw.toml: eval.max_tool_iteration=1: unknown key" in result.stderr


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--zeroclaw-disable-plugin", "response"], {}),
        ([], {"ZEROCLAW_EVAL_DISABLE_PLUGINS": "response"}),
    ],
)
def test_a_blocked_plugin_takes_its_families_away(
    project: Path, args: list[str], env: dict[str, str]
) -> None:
    result = pytest_run(project, "--zeroclaw-suite", "evals/regression", *args, env=env)
    assert result.returncode == 2
    assert "expects.response_contains: unknown key: no such expectation family" in result.stdout


def test_a_missing_suite_is_a_usage_error(project: Path) -> None:
    result = pytest_run(project, "--zeroclaw-suite", "evals/nothing")
    assert result.returncode == 4
    assert "zeroclaw-eval: suite" in result.stderr and "no such directory" in result.stderr


HANG_PLUGIN = """
import threading

from zeroclaw_eval import hookimpl


class Hang:
    name = "hang"
    description = "never returns"
    parameters = {"type": "object"}

    def run(self, arguments):
        threading.Event().wait()


@hookimpl
def zeroclaw_eval_register_tools(register):
    register("hang", Hang)
"""


def test_a_hung_case_fails_at_its_time_limit_and_the_session_goes_on(
    project: Path, tmp_path: Path
) -> None:
    # A zeroclaw-eval plugin installed the way pip lays one out: module + dist-info.
    site = tmp_path / "site"
    write(site / "zeroclaw_eval_hang.py", HANG_PLUGIN)
    info = site / "zeroclaw_eval_hang-0.1.dist-info"
    write(info / "METADATA", "Metadata-Version: 2.1\nName: zeroclaw-eval-hang\nVersion: 0.1\n")
    write(info / "entry_points.txt", "[zeroclaw_eval]\nhang = zeroclaw_eval_hang\n")
    hung = echo_case("hung", exact_tool_calls=1)
    hung["turns"][0]["steps"][0]["response"]["tool_calls"][0]["name"] = "hang"
    write(project / "evals" / "regression" / "b_hung.json", hung)
    write(project / "zeroclaw.toml", "[eval]\ncase_timeout_s = 1\n")
    code, outcomes, stdout = junit(
        project, "--zeroclaw-suite", "evals/regression", "-k", "not red",
        env={"PYTHONPATH": str(site)},
    )  # fmt: skip
    assert code == 1
    assert outcomes == {
        "a_green": "passed",
        "b_green": "passed",
        "b_hung": "failure",
        "d_green": "passed",  # the cases after it ran, on a fresh worker
    }
    assert "case 'hung': did not finish within case_timeout_s=1 s: abandoned" in stdout


def test_repeats_from_the_configuration_run_each_case_that_many_times(project: Path) -> None:
    write(project / "zeroclaw.toml", "[eval]\nrepeats = 3\n")
    pytest_run(project, "--zeroclaw-suite", "evals/regression", "--junitxml=report.xml")
    root = ET.parse(project / "report.xml").getroot()
    properties = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in root.iter("testcase")
    }
    assert properties["a_green"] == {"zeroclaw_checks": "3/3", "zeroclaw_passes": "3/3"}
    assert properties["c_red"] == {"zeroclaw_checks": "2/3", "zeroclaw_passes": "0/3"}


@pytest.mark.parametrize(
    ("named", "selected"),
    [
        ("evals/regression/c_red.json::c_red", {"c_red"}),
        ("evals/regression/a_green.json", {"a_green"}),
    ],
)
def test_a_node_id_in_the_suite_narrows_it(project: Path, named: str, selected: set[str]) -> None:
    code, outcomes, _ = junit(project, "--zeroclaw-suite", "evals/regression", named)
    assert set(outcomes) == selected
    assert code == (1 if "red" in named else 0)
