"""The exit-code contract and the configuration, through real runs of the ``zeroclaw`` script.

Each scenario is one suite on disk, run once as text and once as JSON; the tests
then read those runs. 0 means every case passed, and nothing else does.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import EvalConfig, Registry

from .conftest import PROJECT, echo_case, zeroclaw, zeroclaw_all

Run = subprocess.CompletedProcess[str]

TOOL_STEP = echo_case()["turns"][0]["steps"][0]
TEXT_STEP = echo_case()["turns"][0]["steps"][1]


def scripted(name: str, steps: list[dict[str, Any]], **expects: Any) -> dict[str, Any]:
    """A one-turn case with the given steps; ``expects`` defaults to one that cannot be vacuous."""
    return echo_case(
        model_name=name,
        turns=[{"user_input": "Echo hello", "steps": steps}],
        expects=expects or {"response_contains": ["hello"]},
    )


FAILING = echo_case(
    model_name="wants-goodbye",
    expects={"response_contains": ["goodbye"], "exact_tool_calls": 1},
)

# scenario -> fixtures (file name -> data or raw text); None: the suite directory is missing
SCENARIOS: dict[str, dict[str, Any] | None] = {
    "all_pass": {"a.json": echo_case(), "b.json": echo_case(model_name="echo-again")},
    "failing_check": {"a.json": echo_case(), "b.json": FAILING},
    "under_scripted": {"a.json": scripted("under", [TOOL_STEP]), "b.json": echo_case()},
    "over_scripted": {"a.json": scripted("over", [TEXT_STEP, TEXT_STEP]), "b.json": echo_case()},
    "iteration_limit": {
        "a.json": scripted("loops", [TOOL_STEP] * 11 + [TEXT_STEP], exact_tool_calls=11),
        "b.json": echo_case(),
    },
    "admission_failure": {"a.json": echo_case(), "b.json": echo_case(expects={})},
    # Not recursive: a fixture in a subdirectory and other files do not make a case.
    "empty_suite": {"README.md": "# no cases", "nested/case.json": echo_case()},
    "missing_suite": None,
}

EXPECTED_STDERR = {
    "all_pass": [],
    "failing_check": [],
    "under_scripted": [],
    "over_scripted": [],
    "iteration_limit": [],
    "admission_failure": [
        "Error: suite admission_failure: 1 fixture refused (of 2); no case was run",
        "Error: admission_failure/b.json: expects: declares no expectation: "
        "a case must assert something",
    ],
    "empty_suite": ["Error: suite empty_suite: no *.json fixtures: an empty suite is never green"],
    "missing_suite": ["Error: suite missing_suite: no such directory"],
}

# scenario -> (the failing case's name, its run error)
RUN_ERRORS = {
    "under_scripted": (
        "under",
        "case 'under': turn 0, step 1: the agent requested more responses than scripted "
        "(1 step scripted for this turn)",
    ),
    "over_scripted": (
        "over",
        "case 'over': turn 0, step 1: 1 scripted step left unused after the turn ended: "
        "the fixture over-specifies the turn",
    ),
    "iteration_limit": (
        "loops",
        "case 'loops': turn 0: the model asked for tools more than "
        "max_tool_iterations=10 times in one turn",
    ),
}


def write_suite(directory: Path, fixtures: dict[str, Any]) -> None:
    for name, data in fixtures.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Run]:
    """Every scenario run once per format, from the suites' parent directory."""
    root = tmp_path_factory.mktemp("scenarios")
    for name, fixtures in SCENARIOS.items():
        if fixtures is not None:
            (root / name).mkdir()
            write_suite(root / name, fixtures)
    results = zeroclaw_all(
        {
            f"{name}:{fmt}": (("eval", "run", "--suite", name, "--format", fmt), root)
            for name in SCENARIOS
            for fmt in ("text", "json")
        }
    )
    return {tuple(key.split(":")): run for key, run in results.items()}  # type: ignore[misc]


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_exit_code_is_0_only_when_every_case_passed(
    scenario: str, fmt: str, runs: dict[tuple[str, str], Run]
) -> None:
    run = runs[scenario, fmt]
    assert run.returncode == (0 if scenario == "all_pass" else 1), run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert run.stderr.splitlines() == EXPECTED_STDERR[scenario]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_json_stdout_is_exactly_one_document_in_every_case(
    scenario: str, runs: dict[tuple[str, str], Run]
) -> None:
    run = runs[scenario, "json"]
    document = json.loads(run.stdout)  # refuses anything before or after the document
    assert document["schema_version"] == 1
    assert document["all_passed"] is (scenario == "all_pass")
    # The errors that stopped the suite are in the document, as on stderr.
    assert document["errors"] == [line.removeprefix("Error: ") for line in run.stderr.splitlines()]
    if scenario in RUN_ERRORS:
        errors = {case["source"]: case["error"] for case in document["cases"]}
        assert errors == {f"{scenario}/a.json": RUN_ERRORS[scenario][1], f"{scenario}/b.json": None}


def test_text_report_shape(runs: dict[tuple[str, str], Run]) -> None:
    assert runs["all_pass", "text"].stdout.splitlines() == [
        "✓ echo-hello (all_pass/a.json): 3/3 checks",
        "✓ echo-again (all_pass/b.json): 3/3 checks",
        "2/2 cases passed",
    ]
    assert runs["failing_check", "text"].stdout.splitlines() == [
        "✓ echo-hello (failing_check/a.json): 3/3 checks",
        "✗ wants-goodbye (failing_check/b.json): 1/2 checks",
        '    ✗ response_contains: "goodbye": not found: '
        'the final response is "The echo said: hello"',
        "short summary: 1 failed case",
        'FAILED wants-goodbye (failing_check/b.json): response_contains: "goodbye": not found: '
        'the final response is "The echo said: hello"',
        "1/2 cases passed",
    ]


@pytest.mark.parametrize("scenario", RUN_ERRORS)
def test_a_run_error_fails_its_case_and_the_suite_goes_on(
    scenario: str, runs: dict[tuple[str, str], Run]
) -> None:
    name, error = RUN_ERRORS[scenario]
    assert runs[scenario, "text"].stdout.splitlines() == [
        f"✗ {name} ({scenario}/a.json): error: {error}",
        f"✓ echo-hello ({scenario}/b.json): 3/3 checks",
        "short summary: 1 failed case",
        f"ERROR {name} ({scenario}/a.json): {error.removeprefix(f'case {name!r}: ')}",
        "1/2 cases passed",
    ]


def test_unknown_format_is_a_usage_error_listing_the_known_ones(
    tmp_path: Path, registry: Registry
) -> None:
    run = zeroclaw("eval", "run", "--format", "xml", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stdout == ""
    known = ", ".join(sorted(registry.formatters))  # json, text and any installed plugin's
    assert {"json", "text"} <= set(registry.formatters)
    assert f"Error: Invalid value for '--format': unknown format 'xml' (known: {known})" in (
        run.stderr
    )


# --- eval check -------------------------------------------------------------------


def test_check_names_a_vacuous_fixture(tmp_path: Path) -> None:
    vacuous = echo_case(
        model_name="says-nothing", expects={"max_tool_calls": 0, "response_not_contains": ["rm"]}
    )
    write_suite(tmp_path / "suite", {"a.json": echo_case(), "b.json": vacuous})
    run = zeroclaw("eval", "check", "--suite", "suite", cwd=tmp_path)
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        "Error: suite/b.json: expects: vacuous: a run that does nothing passes all 2 checks "
        '(max_tool_calls: 0, response_not_contains: "rm"); add an expectation that only '
        "the intended behaviour satisfies",
        "Error: suite/b.json: expects.max_tool_calls=0: the script makes 1 tool call: "
        "can never pass",
        "1 of 2 fixtures is vacuous",
        "1 of 2 fixtures has expectations the script can never satisfy",
    ]


def test_check_counts_every_vacuous_and_impossible_fixture_and_takes_paths(
    tmp_path: Path,
) -> None:
    says_nothing = {"max_tool_calls": 0, "response_not_contains": ["rm"]}
    vacuous = {name: echo_case(model_name=name, expects=says_nothing) for name in ("b", "c")}
    write_suite(tmp_path / "suite", {"a.json": echo_case(), "b.json": vacuous["b"]})
    write_suite(tmp_path / "more", {"c.json": vacuous["c"]})
    run = zeroclaw("eval", "check", "suite", "more/c.json", cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.splitlines()[-2:] == [
        "2 of 3 fixtures are vacuous",
        "2 of 3 fixtures have expectations the script can never satisfy",
    ]
    assert [line.split(":")[1] for line in run.stderr.splitlines()[:-2]] == [
        " suite/b.json",
        " more/c.json",
        " suite/b.json",
        " more/c.json",
    ]
    only = zeroclaw("eval", "check", "suite/a.json", cwd=tmp_path)
    assert (only.returncode, only.stderr) == (0, "")
    assert only.stdout == "1 fixture admitted; none is satisfied by an empty run\n"


def test_shipped_suite_passes_check_and_run_with_the_default_configuration() -> None:
    done = zeroclaw_all({"check": (("eval", "check"), PROJECT), "run": (("eval", "run"), PROJECT)})
    assert done["check"].returncode == 0, done["check"].stderr
    assert done["check"].stdout.endswith("fixtures admitted; none is satisfied by an empty run\n")
    assert done["run"].returncode == 0, done["run"].stdout
    lines = done["run"].stdout.splitlines()
    assert all(line.startswith("✓ ") for line in lines[:-1])
    assert lines[-1] == f"{len(lines) - 1}/{len(lines) - 1} cases passed"
    assert all("(evals/regression/" in line for line in lines[:-1])


# --- configuration ----------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A directory with a passing suite ``good`` and a failing one ``bad``."""
    write_suite(tmp_path / "good", {"a.json": echo_case()})
    write_suite(tmp_path / "bad", {"a.json": FAILING})
    return tmp_path


def test_configuration_sources_and_precedence(project: Path) -> None:
    work = project / "work"
    work.mkdir()
    conf = project / "conf" / "nested"
    conf.mkdir(parents=True)
    # --config: suite_dir is relative to the file's directory; from the cwd it names nothing.
    (conf / "eval.toml").write_text('[eval]\nsuite_dir = "../../good"\nformat = "json"\n')
    assert not (work / "../../good").exists()
    # zeroclaw.toml in the cwd wins over pyproject.toml there.
    (work / "zeroclaw.toml").write_text('[eval]\nsuite_dir = "../bad"\n')
    (work / "pyproject.toml").write_text('[tool.zeroclaw.eval]\nsuite_dir = "../good"\n')
    only_pyproject = project / "only_pyproject"
    only_pyproject.mkdir()
    (only_pyproject / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.zeroclaw.eval]\nsuite_dir = "../good"\nformat = "json"\n'
    )
    done = zeroclaw_all(
        {
            "config": (("eval", "run", "--config", conf / "eval.toml"), work),
            "zeroclaw_toml": (("eval", "run"), work),
            "pyproject": (("eval", "run"), only_pyproject),
            "flags_win": (
                ("eval", "run", "--config", conf / "eval.toml", "--format", "text",
                 "--suite", "../bad"),
                work,
            ),
        }
    )  # fmt: skip
    config = done["config"]
    assert config.returncode == 0, config.stderr
    # Outside the configuration's directory and any work tree: the path, normalized.
    assert json.loads(config.stdout)["cases"][0]["source"] == str(project / "good" / "a.json")

    from_cwd = done["zeroclaw_toml"]
    assert from_cwd.returncode == 1
    assert from_cwd.stdout.splitlines()[0] == "✗ wants-goodbye (../bad/a.json): 1/2 checks"

    pyproject = done["pyproject"]
    assert pyproject.returncode == 0, pyproject.stderr
    assert json.loads(pyproject.stdout)["all_passed"] is True

    flags = done["flags_win"]
    assert flags.returncode == 1
    assert flags.stdout.splitlines()[0] == "✗ wants-goodbye (../bad/a.json): 1/2 checks"


@pytest.mark.parametrize(
    ("file", "text", "key", "typo"),
    [
        ("zeroclaw.toml", '[eval]\nsuite = "good"\n', 'eval.suite="good"', ""),
        (
            "pyproject.toml",
            "[tool.zeroclaw.eval]\nformats = 1\n",
            "tool.zeroclaw.eval.formats=1",
            " (did you mean 'format'?)",
        ),
        ("custom.toml", '[eval]\nsuite_dir = "good"\ntimeout = 3\n', "eval.timeout=3", ""),
    ],
)
def test_unknown_config_key_names_key_and_file(
    file: str, text: str, key: str, typo: str, project: Path
) -> None:
    (project / file).write_text(text)
    args = ("eval", "run", "--config", file) if file == "custom.toml" else ("eval", "run")
    run = zeroclaw(*args, cwd=project)
    assert run.returncode == 1
    assert run.stdout == ""
    where = file if file == "custom.toml" else str(project / file)
    known = ", ".join(EvalConfig.model_fields)
    assert {"suite_dir", "mode", "format", "max_tool_iterations"} <= set(EvalConfig.model_fields)
    assert run.stderr == f"Error: {where}: {key}: unknown key{typo} (known keys: {known})\n"


def test_max_tool_iterations_from_the_config_file(project: Path) -> None:
    two_rounds = scripted("two-rounds", [TOOL_STEP, TOOL_STEP, TEXT_STEP], exact_tool_calls=2)
    write_suite(project / "loops", {"a.json": two_rounds})
    (project / "zeroclaw.toml").write_text('[eval]\nsuite_dir = "loops"\nmax_tool_iterations = 1\n')
    run = zeroclaw("eval", "run", cwd=project)
    assert run.returncode == 1
    assert run.stdout.splitlines()[0] == (
        "✗ two-rounds (loops/a.json): error: case 'two-rounds': turn 0: the model asked for "
        "tools more than max_tool_iterations=1 times in one turn"
    )


def test_an_unknown_mode_is_named_where_it_was_given(project: Path, registry: Registry) -> None:
    known = ", ".join(sorted(registry.modes))
    flag = zeroclaw("eval", "run", "--suite", "good", "--mode", "nope", cwd=project)
    assert flag.returncode == 2
    assert flag.stdout == ""
    assert f"Error: Invalid value for '--mode': unknown mode 'nope' (known: {known})" in (
        flag.stderr
    )
    (project / "zeroclaw.toml").write_text('[eval]\nsuite_dir = "good"\nmode = "nope"\n')
    for command in ("run", "check"):
        from_file = zeroclaw("eval", command, cwd=project)
        assert from_file.returncode == 1
        assert from_file.stderr == (
            f"Error: {project / 'zeroclaw.toml'}: eval.mode='nope': unknown mode (known: {known})\n"
        )


def test_python_dash_m_runs_the_same_command_as_the_script(tmp_path: Path) -> None:
    import os
    import sys

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "case.json").write_text(json.dumps(echo_case()), encoding="utf-8")
    failing = echo_case(model_name="failing")
    failing["expects"] = {"response_contains": ["absent"]}
    (suite / "failing.json").write_text(json.dumps(failing), encoding="utf-8")
    module = subprocess.run(
        [sys.executable, "-m", "zeroclaw_eval", "eval", "run", "--suite", str(suite)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ""},
        timeout=120,
    )
    script = zeroclaw("eval", "run", "--suite", suite)
    assert module.returncode == script.returncode == 1
    assert module.stdout == script.stdout
    assert "1/2 cases passed" in module.stdout
    usage = subprocess.run(
        [sys.executable, "-m", "zeroclaw_eval", "eval", "nonsense"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert usage.returncode == 2
    assert "Usage: zeroclaw eval" in usage.stderr
