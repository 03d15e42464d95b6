"""Where the configuration comes from (walking up from the working directory), how
fixtures are named in reports, and reports set in the configuration."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zeroclaw_eval.config import load_config
from zeroclaw_eval.testing import fixture, write_fixture

from .cli_process import assert_clean_errors, json_report
from .conftest import PROJECT, zeroclaw


def case(name: str, needle: str = "done") -> dict[str, object]:
    return fixture({"response_contains": [needle]}, name=name)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``project/zeroclaw.toml`` names the suite ``cases``; ``project/a/b`` is deep inside."""
    root = tmp_path / "project"
    write_fixture(root / "cases", case("green"), "green.json")
    (root / "zeroclaw.toml").write_text('[eval]\nsuite_dir = "cases"\n', encoding="utf-8")
    (root / "a" / "b").mkdir(parents=True)
    return root


def test_config_is_found_by_walking_up_and_its_paths_are_relative_to_it(project: Path) -> None:
    run = zeroclaw("eval", "run", "--format", "json", cwd=project / "a" / "b")
    assert run.returncode == 0, run.stderr
    document = json_report(run)
    # Named from the configuration's directory, not the working directory.
    assert document["suite"] == "cases"
    assert [c["source"] for c in document["cases"]] == ["cases/green.json"]
    loaded = load_config(cwd=project / "a" / "b")
    assert (loaded.path, loaded.base_dir) == (project / "zeroclaw.toml", project)


def test_the_nearest_configuration_wins(project: Path) -> None:
    write_fixture(project / "a" / "red", case("red", "nope"), "red.json")
    (project / "a" / "zeroclaw.toml").write_text('[eval]\nsuite_dir = "red"\n', encoding="utf-8")
    run = zeroclaw("eval", "run", cwd=project / "a" / "b")
    assert run.returncode == 1
    assert "✗ red (red/red.json)" in run.stdout  # relative to the configuration that named it


def test_a_pyproject_without_the_table_is_passed_over(project: Path) -> None:
    (project / "a" / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    assert load_config(cwd=project / "a" / "b").path == project / "zeroclaw.toml"
    (project / "a" / "pyproject.toml").write_text(
        '[tool.zeroclaw.eval]\nsuite_dir = "../cases"\nformat = "json"\n', encoding="utf-8"
    )
    loaded = load_config(cwd=project / "a" / "b")
    assert (loaded.path, loaded.table) == (project / "a" / "pyproject.toml", "tool.zeroclaw.eval")
    run = zeroclaw("eval", "run", cwd=project / "a" / "b")
    # Outside the configuration's directory (and no work tree): the normalized path.
    assert json_report(run)["cases"][0]["source"] == str(project / "cases" / "green.json")


def test_without_any_configuration_the_defaults_apply_from_the_working_directory(
    tmp_path: Path,
) -> None:
    loaded = load_config(cwd=tmp_path)
    assert loaded.path is None and loaded.base_dir == tmp_path
    run = zeroclaw("eval", "run", cwd=tmp_path)
    assert run.returncode == 1
    assert assert_clean_errors(run.stderr) == ["Error: suite evals/regression: no such directory"]


def test_a_bad_configuration_found_above_is_named(project: Path) -> None:
    (project / "zeroclaw.toml").write_text('[eval]\nsuite_dri = "cases"\n', encoding="utf-8")
    run = zeroclaw("eval", "run", cwd=project / "a")
    assert run.returncode == 1
    assert f"{project / 'zeroclaw.toml'}: eval.suite_dri=" in run.stderr
    assert "unknown key" in run.stderr


def test_sources_are_relative_to_the_work_tree(project: Path) -> None:
    (project / ".git").mkdir()  # the top of a checkout; the config lives below it
    inner = project / "evals"
    write_fixture(inner / "suite", case("inner"), "inner.json")
    (inner / "zeroclaw.toml").write_text('[eval]\nsuite_dir = "suite"\n', encoding="utf-8")
    for cwd in (inner, inner / "suite"):
        document = json_report(zeroclaw("eval", "run", "--format", "json", cwd=cwd))
        assert document["suite"] == "evals/suite"
        assert document["cases"][0]["source"] == "evals/suite/inner.json"
    # A worktree's .git is a file; it marks the top just the same.
    (project / ".git").rmdir()
    (project / ".git").write_text("gitdir: /elsewhere\n", encoding="utf-8")
    run = zeroclaw("eval", "run", "suite/inner.json", "--format", "json", cwd=inner)
    assert json_report(run)["cases"][0]["source"] == "evals/suite/inner.json"


@pytest.mark.parametrize("cwd", ["evals", "evals/regression"])
def test_this_repository_runs_its_gate_from_a_subdirectory(cwd: str) -> None:
    run = zeroclaw("eval", "run", "--format", "json", "-k", "unicode", cwd=PROJECT / cwd)
    assert run.returncode == 0, run.stderr
    document = json_report(run)
    assert document["suite"] == "evals/regression"
    assert document["passed"] == 3
    assert all(c["source"].startswith("evals/regression/unicode_") for c in document["cases"])


def test_check_names_fixtures_the_same_way(project: Path) -> None:
    vacuous = fixture({"response_not_contains": ["rm"]}, name="vacuous")
    write_fixture(project / "cases", vacuous, "vacuous.json")
    run = zeroclaw("eval", "check", cwd=project / "a")
    assert run.returncode == 1
    assert run.stderr.startswith("Error: cases/vacuous.json: expects: vacuous")


# --- reports set in the configuration, and FORMAT:- ------------------------------


def test_reports_from_the_configuration_are_relative_to_it(project: Path) -> None:
    (project / "zeroclaw.toml").write_text(
        '[eval]\nsuite_dir = "cases"\nreport = ["json:out/report.json", "text:report.txt"]\n',
        encoding="utf-8",
    )
    (project / "out").mkdir()
    run = zeroclaw("eval", "run", cwd=project / "a" / "b")
    assert run.returncode == 0, run.stderr
    written = json.loads((project / "out" / "report.json").read_text(encoding="utf-8"))
    assert written["passed"] == 1
    assert (project / "report.txt").read_text(encoding="utf-8") == run.stdout
    assert not (project / "a" / "b" / "out").exists()
    # --report replaces the configured reports.
    (project / "report.txt").unlink()
    flag = zeroclaw("eval", "run", "--report", "json:here.json", cwd=project / "a")
    assert flag.returncode == 0
    assert (project / "a" / "here.json").is_file() and not (project / "report.txt").exists()


def test_a_bad_configured_report_names_the_file_and_key(project: Path) -> None:
    (project / "zeroclaw.toml").write_text(
        '[eval]\nsuite_dir = "cases"\nreport = ["xml:out.xml"]\n', encoding="utf-8"
    )
    run = zeroclaw("eval", "run", cwd=project)
    assert run.returncode == 1
    [line] = assert_clean_errors(run.stderr)
    assert line.startswith(f"Error: {project / 'zeroclaw.toml'}: eval.report: 'xml:")
    assert "unknown format 'xml'" in line


def test_report_dash_means_stdout(project: Path) -> None:
    run = zeroclaw("eval", "run", "--report", "json:-", "--report", "text:t.txt", cwd=project)
    assert run.returncode == 0
    assert json_report(run)["passed"] == 1  # stdout holds the JSON and nothing else
    assert not (project / "-").exists()
    assert (project / "t.txt").read_text(encoding="utf-8").endswith("1/1 cases passed\n")


def test_report_dash_from_the_configuration(project: Path) -> None:
    (project / "zeroclaw.toml").write_text(
        '[eval]\nsuite_dir = "cases"\nreport = ["json:-"]\n', encoding="utf-8"
    )
    run = zeroclaw("eval", "run", cwd=project / "a")
    assert run.returncode == 0, run.stderr
    assert json_report(run)["cases"][0]["source"] == "cases/green.json"
    assert not (project / "-").exists() and not (project / "a" / "-").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--report", "json:-", "--format", "text"], "--format text and --report json:- both"),
        (["--report", "json:-", "--report", "text:-"], "'text:-': - is also the target of"),
    ],
)
def test_two_reports_on_stdout_are_a_usage_error(
    project: Path, args: list[str], message: str
) -> None:
    run = zeroclaw("eval", "run", *args, cwd=project)
    assert run.returncode == 2
    assert message in run.stderr


def test_where_reports_go_does_not_change_the_config_digest() -> None:
    from zeroclaw_eval.config import EvalConfig

    assert EvalConfig(report=["junit:out.xml"]).digest() == EvalConfig().digest()
    assert EvalConfig(gating=False).digest() != EvalConfig().digest()


def pydantic_digest(config: Any) -> str:
    """The digest as it was first written: pydantic's own JSON dump of the settings."""
    import hashlib
    import json

    settings = config.model_dump(mode="json", exclude={"format", "report", "pass_k", "history"})
    canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


@pytest.mark.parametrize(
    "table",
    [
        {},
        {"mode": "live", "case_timeout_s": 12.5, "repeats": 3, "pass_k": [1, 3]},
        {"live": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "stop": ["\n"]}},
        {"live": {"extra_body": {"top_k": 40, "nested": {"a": [1, 2.5, None, True]}}}},
        {"live": {"extra_body": {"when": datetime.date(2026, 12, 3)}}},  # no JSON form
        {"agent": {"command": ["python", "agent.py"], "env": {"K": "v"}}},
        {"agent": "reference", "gating": False},
    ],
)
def test_the_digest_is_what_pydantic_would_write(table: dict[str, Any]) -> None:
    # Runs recorded before and after must keep comparing as "same settings".
    from zeroclaw_eval.config import EvalConfig

    config = EvalConfig.model_validate(table)
    assert config.digest() == pydantic_digest(config)


def test_the_defaults_are_the_empty_table_without_building_a_validator(tmp_path: Path) -> None:
    from zeroclaw_eval.config import EvalConfig

    code = (
        "from zeroclaw_eval.config import EvalConfig, load_config\n"
        "loaded = load_config()\n"
        "digest = loaded.config.digest()\n"
        "print(EvalConfig.__pydantic_complete__, digest)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    built, digest = done.stdout.split()
    assert built == "False"  # no file was read, so no validator was needed
    assert EvalConfig.defaults() == EvalConfig()
    assert digest == EvalConfig().digest() == pydantic_digest(EvalConfig())


@settings(max_examples=300)
@given(
    root=st.sampled_from(["/", "/work/main", "/work/main/", ".", "evals", "/tmp/x"]),
    parts=st.lists(st.sampled_from(["a", "..", ".", "", "work", "main", "x.json"]), max_size=5),
    absolute=st.booleans(),
)
def test_a_fixture_is_named_as_pathlib_would_name_it(
    root: str, parts: list[str], absolute: bool
) -> None:
    # shown_from works on strings for speed; it must name every path as
    # PurePath.relative_to does, and one outside the root as given.
    import os

    from zeroclaw_eval.util.paths import shown_from

    path = Path(("/" if absolute else "") + "/".join(parts) or ".")
    base = Path(os.path.abspath(root))
    try:
        expected = Path(os.path.abspath(path)).relative_to(base).as_posix()
    except ValueError:
        expected = os.path.abspath(path) if path.is_absolute() else str(path)
    assert shown_from(Path(root))(path) == expected
