"""The run history: what ``zeroclaw eval run`` appends, where, with which schema, and
how it fails (corrupt, newer, unwritable, foreign) — always naming the file, and
``--no-history`` always runs. Several real processes appending at once lose nothing.
"""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import subprocess
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests.cli_process import assert_clean_errors
from tests.conftest import echo_case, zeroclaw, zeroclaw_all
from zeroclaw_eval.errors import HistoryError
from zeroclaw_eval.history.recorder import NO_HISTORY_ENV
from zeroclaw_eval.history.store import MIGRATIONS, SCHEMA_VERSION, RunInfo, open_history
from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport

# The CLI's own default, as users meet it: the variable the tests set is removed.
WITH_HISTORY = {NO_HISTORY_ENV: ""}


def failing_case() -> dict[str, object]:
    case = echo_case(model_name="echo-goodbye")
    case["expects"] = {"response_contains": ["goodbye"], "exact_tool_calls": 1}
    return case


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a config file and a two-case suite (one passes, one fails)."""
    suite = tmp_path / "evals" / "capability"
    suite.mkdir(parents=True)
    (suite / "a_pass.json").write_text(json.dumps(echo_case()), encoding="utf-8")
    (suite / "b_fail.json").write_text(json.dumps(failing_case()), encoding="utf-8")
    (tmp_path / "zeroclaw.toml").write_text(
        '[eval]\nsuite_dir = "evals/capability"\ngating = false\n', encoding="utf-8"
    )
    return tmp_path


def rows(path: Path, query: str) -> list[sqlite3.Row]:
    with sqlite3.connect(path) as db:
        db.row_factory = sqlite3.Row
        return list(db.execute(query))


def test_run_appends_to_the_default_history_beside_the_config_file(project: Path) -> None:
    cwd = project / "evals"  # elsewhere: the history still goes beside the file
    config = project / "zeroclaw.toml"
    result = zeroclaw("eval", "run", "--config", config, "--repeat", "2", cwd=cwd, env=WITH_HISTORY)
    assert result.returncode == 0, result.stderr
    history = project / ".zeroclaw" / "history.sqlite"
    (run,) = rows(history, "SELECT * FROM runs")
    assert run["suite"] == str(project / "evals" / "capability")
    assert (run["mode"], run["agent"], run["verdict"]) == ("replay", "reference", "failed")
    assert (run["gating"], run["repeats"], run["total"], run["passed"]) == (0, 2, 2, 1)
    assert len(run["config_digest"]) == 16
    assert run["git_commit"] is None and run["git_dirty"] is None  # not in a work tree
    assert run["started_at"].endswith("Z") and run["duration_s"] > 0
    plugins = {p["name"]: p for p in json.loads(run["plugins"])}
    assert plugins["echo"]["distribution"] == "zeroclaw-eval"
    assert plugins["echo"]["version"] == version("zeroclaw-eval")  # the installed one
    attempts = rows(history, "SELECT * FROM attempts ORDER BY case_index, attempt")
    assert [(a["case_name"], a["attempt"], a["passed"]) for a in attempts] == [
        ("echo-hello", 0, 1),
        ("echo-hello", 1, 1),
        ("echo-goodbye", 0, 0),
        ("echo-goodbye", 1, 0),
    ]
    checks = json.loads(attempts[2]["checks"])
    assert checks[0][:2] == ['response_contains: "goodbye"', False]
    assert "not found" in checks[0][2]
    assert checks[1][:2] == ["exact_tool_calls: 1", True]
    assert attempts[0]["input_tokens"] == 0 and attempts[0]["error"] is None
    assert not (cwd / ".zeroclaw").exists()
    # Found by walking up from a subdirectory, the file keeps its history beside it.
    nested = project / "evals" / "capability"
    assert zeroclaw("eval", "run", cwd=nested, env=WITH_HISTORY).returncode == 0
    assert len(rows(history, "SELECT * FROM runs")) == 2
    assert not (nested / ".zeroclaw").exists()


def test_the_git_commit_and_dirty_flag_are_recorded(project: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.email=ci@example.com", "-c", "user.name=ci", "add", "evals", "zeroclaw.toml")
    git("-c", "user.email=ci@example.com", "-c", "user.name=ci", "commit", "-qm", "suite")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True, check=True
    ).stdout.strip()
    history = project / "h.sqlite"
    assert zeroclaw("eval", "run", "--history", history, cwd=project).returncode == 0
    (project / "evals" / "capability" / "a_pass.json").write_text(
        json.dumps(echo_case(model_name="changed")), encoding="utf-8"
    )
    assert zeroclaw("eval", "run", "--history", history, cwd=project).returncode == 0
    runs = rows(history, "SELECT git_commit, git_dirty FROM runs ORDER BY id")
    assert [tuple(r) for r in runs] == [(head, 0), (head, 1)]


def test_no_history_writes_nothing_and_the_config_key_moves_it(project: Path) -> None:
    result = zeroclaw("eval", "run", "--no-history", cwd=project, env=WITH_HISTORY)
    assert result.returncode == 0
    assert not (project / ".zeroclaw").exists()
    config = project / "zeroclaw.toml"
    config.write_text(config.read_text() + 'history = "runs/h.sqlite"\n', encoding="utf-8")
    assert zeroclaw("eval", "run", cwd=project, env=WITH_HISTORY).returncode == 0
    assert len(rows(project / "runs" / "h.sqlite", "SELECT * FROM runs")) == 1
    assert not (project / ".zeroclaw").exists()


def test_the_history_setting_does_not_change_the_digest(project: Path) -> None:
    first = zeroclaw("eval", "run", "--history", project / "a.sqlite", cwd=project)
    config = project / "zeroclaw.toml"
    config.write_text(config.read_text() + 'history = "b.sqlite"\n', encoding="utf-8")
    second = zeroclaw("eval", "run", "--format", "json", cwd=project, env=WITH_HISTORY)
    assert first.returncode == second.returncode == 0
    (a,) = rows(project / "a.sqlite", "SELECT config_digest FROM runs")
    (b,) = rows(project / "b.sqlite", "SELECT config_digest FROM runs")
    assert a[0] == b[0] == json.loads(second.stdout)["config_digest"]


def write_corrupt(path: Path) -> None:
    path.write_bytes(b"this is not a database\n" * 200)


def write_newer(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")


def write_foreign(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (text TEXT)")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (write_corrupt, "not a readable SQLite database (file is not a database)"),
        (
            write_newer,
            f"history schema version {SCHEMA_VERSION + 1} is newer than this zeroclaw-eval reads "
            f"({SCHEMA_VERSION}); upgrade zeroclaw-eval, or pass --history for another file",
        ),
        (write_foreign, "a SQLite database, but not a zeroclaw-eval history"),
        (lambda path: path.mkdir(), "cannot open the history"),
    ],
    ids=["corrupt", "newer", "foreign", "directory"],
)
def test_a_bad_history_is_an_error_naming_it_and_no_history_still_runs(
    project: Path, make: object, message: str
) -> None:
    history = project / "bad.sqlite"
    make(history)  # type: ignore[operator]
    before = history.read_bytes() if history.is_file() else None
    result = zeroclaw("eval", "run", "--history", history, "--format", "json", cwd=project)
    assert result.returncode == 1
    assert result.stdout == ""  # nothing ran
    (line,) = assert_clean_errors(result.stderr)
    assert line.startswith(f"Error: {history}: ")
    assert message in line
    if before is not None:
        assert history.read_bytes() == before  # nothing lost, nothing changed
    ran = zeroclaw("eval", "run", "--history", history, "--no-history", cwd=project)
    assert ran.returncode == 0
    assert "1/2 cases passed" in ran.stdout


def test_an_unwritable_history_is_an_error_naming_it(project: Path) -> None:
    blocker = project / "file"
    blocker.write_text("a file, not a directory", encoding="utf-8")
    history = blocker / "history.sqlite"
    result = zeroclaw("eval", "run", "--history", history, cwd=project)
    assert result.returncode == 1
    (line,) = assert_clean_errors(result.stderr)
    assert line == (
        f"Error: {history}: cannot create the history's directory: "
        f"{blocker} is a file, not a directory"
    )


def test_a_history_of_the_first_schema_is_migrated_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        for statement in MIGRATIONS[0]:
            db.execute(statement)
        db.execute("PRAGMA user_version = 1")
        db.execute(
            "INSERT INTO runs (started_at, suite, mode, agent, config_digest, plugins, "
            "duration_s, verdict, gating, repeats, total, passed) "
            "VALUES ('2026-01-01T00:00:00Z', 's', 'replay', 'reference', 'd', '[]', 1, "
            "'passed', 1, 1, 0, 0)"
        )
    with open_history(path) as history:
        (run,) = history.runs()
        assert (run.id, run.suite, run.verdict) == (1, "s", "passed")
    assert rows(path, "PRAGMA user_version")[0][0] == SCHEMA_VERSION
    indexes = {r[0] for r in rows(path, "SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"runs_by_suite", "attempts_by_case"} <= indexes
    assert rows(path, "PRAGMA journal_mode")[0][0] == "wal"


def test_reading_a_missing_history_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="no run history here"):
        open_history(tmp_path / "none.sqlite", create=False)
    assert not (tmp_path / "none.sqlite").exists()


def report_of(index: int, cases: int) -> SuiteReport:
    return SuiteReport(
        "suite",
        tuple(
            CaseReport(f"w{index}-c{n}", "x.json", (CheckResult("c", n % 2 == 0, "d"),))
            for n in range(cases)
        ),
        config_digest="d",
    )


def append_many(path: str, worker: int, runs: int, barrier: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    for run in range(runs):
        with open_history(Path(path)) as history:
            history.append(report_of(worker * 1000 + run, 50), RunInfo("2026", 0.0))


def test_processes_appending_at_once_lose_nothing(tmp_path: Path) -> None:
    """Eight processes, released together, each appending 25 runs of 50 attempts
    through fresh connections: every run and every attempt is there."""
    path = tmp_path / "h.sqlite"
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(8)
    workers = [
        context.Process(target=append_many, args=(str(path), worker, 25, barrier))
        for worker in range(8)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(120)
        assert process.exitcode == 0
    assert rows(path, "SELECT count(*) FROM runs")[0][0] == 8 * 25
    assert rows(path, "SELECT count(*) FROM attempts")[0][0] == 8 * 25 * 50
    # Each run holds its own 50 attempts, none mixed with another's.
    per_run = rows(
        path,
        "SELECT run_id, count(*), count(DISTINCT substr(case_name, 1, instr(case_name, '-')))"
        " FROM attempts GROUP BY run_id",
    )
    assert len(per_run) == 200
    assert all(r[1] == 50 and r[2] == 1 for r in per_run)


def set_up_each(paths: list[str], barrier: Any) -> None:
    try:
        for path in paths:
            barrier.wait(60)
            with open_history(Path(path)):
                pass
    except BaseException:
        barrier.abort()  # the others stop waiting for this one, and fail too
        raise


def test_processes_creating_one_history_at_once_all_succeed(tmp_path: Path) -> None:
    """Six processes, released together, set up the same new history, twenty times
    over: switching a new file to WAL needs it alone, and none may give up on it."""
    paths = [str(tmp_path / f"h{round_}.sqlite") for round_ in range(20)]
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(6)
    workers = [context.Process(target=set_up_each, args=(paths, barrier)) for _ in range(6)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(120)
        assert process.exitcode == 0
    for path in paths:
        assert rows(Path(path), "PRAGMA journal_mode")[0][0] == "wal"


def test_console_scripts_run_side_by_side_into_one_history(project: Path) -> None:
    """Parallel CI jobs on one machine: six real ``zeroclaw eval run`` at once."""
    history = project / "shared" / "history.sqlite"
    runs = {
        f"job{n}": (["eval", "run", "--history", str(history), "--repeat", "3"], project)
        for n in range(6)
    }
    results = zeroclaw_all(runs)
    assert all(result.returncode == 0 for result in results.values()), [
        result.stderr for result in results.values()
    ]
    assert rows(history, "SELECT count(*) FROM runs")[0][0] == 6
    assert rows(history, "SELECT count(*) FROM attempts")[0][0] == 6 * 2 * 3


def test_a_run_is_filed_under_its_suite_directory_however_it_was_named(project: Path) -> None:
    history = project / "h.sqlite"
    suite = project / "evals" / "capability"
    runs = [
        ("eval", "run", "--history", history),  # the configured suite_dir
        ("eval", "run", "--history", history, "--suite", "evals/capability"),
        ("eval", "run", "--history", history, "capability"),  # a PATH, from evals/
        ("eval", "run", "--history", history, "capability/a_pass.json"),
    ]
    cwds = (project, project, project / "evals", project / "evals")
    for cwd, args in zip(cwds, runs, strict=True):
        assert zeroclaw(*args, cwd=cwd).returncode == 0
    filed = [r[0] for r in rows(history, "SELECT suite FROM runs ORDER BY id")]
    # Named fixtures: as the report names them (relative to the configuration).
    assert filed == [str(suite)] * 3 + ["evals/capability/a_pass.json"]


def test_a_history_of_the_third_schema_gains_the_spend_columns_and_keeps_its_attempts(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        for migration in MIGRATIONS[:3]:
            for statement in migration:
                db.execute(statement)
        db.execute("PRAGMA user_version = 3")
        db.execute(
            "INSERT INTO runs (started_at, suite, mode, agent, config_digest, plugins, "
            "duration_s, verdict, gating, repeats, total, passed) "
            "VALUES ('2026-01-01T00:00:00Z', 's', 'live', 'reference', 'd', '[]', 1, "
            "'passed', 1, 1, 1, 1)"
        )
        db.execute(
            "INSERT INTO attempts (run_id, case_index, case_name, source, attempt, passed, "
            "error, checks, duration_s, input_tokens, output_tokens) "
            "VALUES (1, 0, 'c', 'c.json', 0, 1, NULL, '[]', 0.5, 0, 0)"
        )
    with open_history(path) as history:
        (attempt,) = history.attempts([1])
    # Written before usage was metered: its 0 tokens are not read as a spend.
    assert (attempt.metered, attempt.cost, attempt.cached_input_tokens) == (False, None, None)
    assert rows(path, "PRAGMA user_version")[0][0] == SCHEMA_VERSION
