"""A live run's generation settings, readable in its JSON report and its history row.

The live run is a real ``zeroclaw`` process against a loopback chat server; the
history is migrated from the schema before the settings had a column.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from zeroclaw_eval.history.store import MIGRATIONS, SCHEMA_VERSION, RunInfo, open_history
from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport

from .chat_server import ChatServer, text
from .live_helpers import KEY_ENV, live_case, zeroclaw

SETTINGS = {
    "model": "example-model",
    "temperature": 0.7,
    "max_tokens": 256,
    "seed": 42,
    "stop": ["END", "###"],
    "extra_body": {"top_k": 40, "repeat_penalty": 1.1},
}


def live_project(directory: Path, base_url: str) -> Path:
    (directory / "suite").mkdir(parents=True)
    case = live_case(["Say hi"], {"response_contains": ["hi"]}, name="live-greeting")
    (directory / "suite" / "greeting.json").write_text(json.dumps(case), encoding="utf-8")
    (directory / "zeroclaw.toml").write_text(
        "[eval.live]\n"
        f'base_url = "{base_url}"\n'
        'model = "example-model"\n'
        f'api_key_env = "{KEY_ENV}"\n'
        "temperature = 0.7\n"
        "max_tokens = 256\n"
        "seed = 42\n"
        'stop = ["END", "###"]\n'
        "extra_body = { top_k = 40, repeat_penalty = 1.1 }\n",
        encoding="utf-8",
    )
    return directory


def test_a_live_run_records_its_generation_settings_in_report_and_history(
    tmp_path: Path,
) -> None:
    with ChatServer() as server:
        server.add([text("hi there")])
        project = live_project(tmp_path, server.url)
        history = tmp_path / "history.sqlite"
        live = zeroclaw(
            "eval", "run", "--mode", "live", "--suite", "suite", "--format", "json",
            "--history", str(history), cwd=project,
        )  # fmt: skip
        # What the report says is what was sent.
        (request,) = server.requests
    assert live.returncode == 0, live.stderr
    assert json.loads(live.stdout)["live_settings"] == SETTINGS
    assert {key: request.body[key] for key in ("temperature", "max_tokens", "seed", "stop")} == {
        "temperature": 0.7,
        "max_tokens": 256,
        "seed": 42,
        "stop": ["END", "###"],
    }

    replay = zeroclaw(
        "eval", "run", "--format", "json", "--history", str(history),
        str(Path(__file__).parent.parent / "evals" / "regression" / "greeting_no_tool_calls.json"),
        cwd=project,
    )  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    assert json.loads(replay.stdout)["live_settings"] is None

    shown = zeroclaw("eval", "history", "--history", str(history), "--format", "json", cwd=project)
    assert shown.returncode == 0, shown.stderr
    runs = json.loads(shown.stdout)["runs"]
    assert [(run["mode"], run["live_settings"]) for run in runs] == [
        ("replay", None),
        ("live", SETTINGS),
    ]


def test_a_history_of_schema_2_migrates_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "v2.sqlite"
    with sqlite3.connect(path) as db:
        for statement in (*MIGRATIONS[0], *MIGRATIONS[1]):
            db.execute(statement)
        db.execute("PRAGMA user_version = 2")
        db.execute(
            "INSERT INTO runs (started_at, suite, mode, agent, config_digest, plugins, "
            "duration_s, verdict, gating, repeats, total, passed) "
            "VALUES ('2026-01-01T00:00:00Z', 's', 'live', 'reference', 'd', '[]', 1, "
            "'passed', 1, 1, 1, 1)"
        )
    assert SCHEMA_VERSION == 4
    case = CaseReport("c", "c.json", (CheckResult("response_contains: hi", True, "found"),))
    report = SuiteReport("s", (case,), "live", config_digest="e", live_settings=SETTINGS)
    with open_history(path, writable=True) as history:
        (old,) = history.runs()
        assert (old.id, old.mode, old.live_settings) == (1, "live", None)
        history.append(report, RunInfo("2026-01-02T00:00:00Z", 1.0))
        new, _ = history.runs()
        assert new.live_settings == SETTINGS
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        stored = db.execute("SELECT live_settings FROM runs ORDER BY id").fetchall()
    # Readable as it stands in the file, without the configuration.
    assert stored[0][0] is None
    assert json.loads(stored[1][0]) == SETTINGS
