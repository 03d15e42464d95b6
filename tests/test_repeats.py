"""Repeats: every case run N times, each attempt fresh; passes out of N, pass@k and
pass^k, flaky cases, and the gate (a case passes only if every attempt passed)."""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.chat_server import ChatServer, Reply, Request, conversations, text
from tests.conftest import echo_case, zeroclaw
from tests.live_helpers import live_case, write_config
from tests.live_helpers import zeroclaw as live_zeroclaw
from zeroclaw_eval import hookimpl
from zeroclaw_eval.protocol import Tool, ToolResult
from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport
from zeroclaw_eval.testing import run_cli


class CoinPlugin:
    """A ``coin`` tool that lands heads on every other flip: a case that flips once
    and needs heads passes one attempt in two. Counts the tools it made (every
    attempt of every case gets its own)."""

    def __init__(self) -> None:
        self.made = 0
        self._flips: Iterator[int] = itertools.count()

    @hookimpl
    def zeroclaw_eval_register_tools(self, register: Callable[[str, Callable[[], Tool]], None]):
        plugin = self

        class Coin:
            name = "coin"
            description = "flips a coin"
            parameters: ClassVar[dict[str, Any]] = {"type": "object"}

            def __init__(self) -> None:
                plugin.made += 1

            def run(self, arguments: dict[str, Any]) -> ToolResult:
                return ToolResult("heads" if next(plugin._flips) % 2 == 0 else "tails")

        register("coin", Coin)


def coin_case() -> dict[str, Any]:
    case = echo_case(model_name="coin-lands-heads")
    case["turns"][0]["steps"][0]["response"]["tool_calls"] = [
        {"id": "c1", "name": "coin", "arguments": {}}
    ]
    case["expects"] = {"tool_results_contain": [{"tool": "coin", "needle": "heads"}]}
    return case


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    directory = tmp_path / "suite"
    directory.mkdir()
    (directory / "a_echo.json").write_text(json.dumps(echo_case()), encoding="utf-8")
    (directory / "b_coin.json").write_text(json.dumps(coin_case()), encoding="utf-8")
    return directory


def test_a_flaky_case_fails_the_gate_and_is_named_flaky(suite: Path) -> None:
    coin = CoinPlugin()
    result = run_cli(["eval", "run", "--suite", str(suite), "--repeat", "4", "--k", "1,2"], coin)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("✓ echo-hello (")
    assert lines[0].endswith(": 4/4 attempts passed; pass@1 1.00; pass@2 1.00, pass^2 1.00")
    assert lines[1].startswith("✗ coin-lands-heads (")
    # pass@2 = 1 - C(2,2)/C(4,2) = 5/6; pass^2 = C(2,2)/C(4,2) = 1/6
    assert lines[1].endswith(": 2/4 attempts passed, flaky; pass@1 0.50; pass@2 0.83, pass^2 0.17")
    assert lines[2:4] == [
        f'    attempt {n}: ✗ tool_results_contain: coin "heads": not found in the result: '
        'observed "tails"'
        for n in (2, 4)
    ]
    assert "1/2 cases passed" in lines
    assert lines[-1].endswith("flaky: coin-lands-heads")
    assert coin.made == 2 * 4  # a fresh tool for every attempt of every case


def test_without_gating_a_flaky_case_is_reported_and_exits_0(suite: Path) -> None:
    result = run_cli(
        ["eval", "run", "--suite", str(suite), "--repeat", "2", "--no-gate"], CoinPlugin()
    )
    assert result.exit_code == 0
    assert "1/2 attempts passed, flaky; pass@1 0.50; pass@2 1.00, pass^2 0.00" in result.stdout


def test_the_json_report_lists_every_attempt_and_the_figures(suite: Path) -> None:
    args = ["eval", "run", "--suite", str(suite), "--repeat", "4", "--format", "json"]
    result = run_cli(args, CoinPlugin())
    document = json.loads(result.stdout)
    assert document["repeats"] == 4
    assert document["pass_k"] == [1, 4]
    assert document["flaky"] == 1
    assert (document["passed"], document["failed"]) == (1, 1)
    echo, coin = document["cases"]
    assert (echo["runs"], echo["passes"], echo["flaky"], echo["passed"]) == (4, 4, False, True)
    assert (coin["runs"], coin["passes"], coin["flaky"], coin["passed"]) == (4, 2, True, False)
    assert [attempt["passed"] for attempt in coin["attempts"]] == [True, False, True, False]
    assert coin["pass_at_k"] == {"1": 0.5, "4": 1.0}
    assert coin["pass_hat_k"] == {"1": 0.5, "4": 0.0}
    assert coin["checks"] == coin["attempts"][1]["checks"]  # the first failed attempt's
    assert coin["attempts"][0]["output_tokens"] == 0
    assert echo["attempts"][0]["input_tokens"] == 0


def test_repeats_come_from_the_configuration(suite: Path, tmp_path: Path) -> None:
    config = tmp_path / "zeroclaw.toml"
    config.write_text("[eval]\nrepeats = 3\npass_k = [2]\n", encoding="utf-8")
    args = ["eval", "run", "--suite", str(suite), "--config", str(config), "--format", "json"]
    document = json.loads(run_cli(args, CoinPlugin()).stdout)
    assert document["repeats"] == 3
    # heads, tails, heads: pass@2 = 1 - C(1, 2) / C(3, 2) = 1
    assert document["cases"][1]["pass_at_k"] == {"2": pytest.approx(1.0)}
    assert document["cases"][1]["pass_hat_k"] == {"2": pytest.approx(1 / 3)}
    assert document["cases"][1]["passes"] == 2


def test_a_k_above_the_repeats_is_an_error_before_anything_runs(suite: Path) -> None:
    coin = CoinPlugin()
    result = run_cli(["eval", "run", "--suite", str(suite), "--repeat", "2", "--k", "3"], coin)
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: pass_k=3: more than repeats=2 (pass@k draws k of the attempts; "
        "run more with --repeat)\n"
    )
    assert coin.made == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "one"], "'one': a comma-separated list of whole numbers"),
        (["--k", "0,2"], "every k must be at least 1"),
        (["--repeat", "0"], "0 is not in the range x>=1"),
    ],
)
def test_bad_repeat_options_are_usage_errors(suite: Path, args: list[str], message: str) -> None:
    result = run_cli(["eval", "run", "--suite", str(suite), *args])
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_bad_repeats_key_names_the_file(suite: Path, tmp_path: Path) -> None:
    config = tmp_path / "zeroclaw.toml"
    config.write_text("[eval]\nrepeats = 0\n", encoding="utf-8")
    result = run_cli(["eval", "run", "--suite", str(suite), "--config", str(config)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {config}: eval.repeats=0: ")


def test_repeats_through_the_console_script(tmp_path: Path) -> None:
    """The installed command, as CI runs it: a deterministic suite passes every attempt."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a.json").write_text(json.dumps(echo_case()), encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite, "--repeat", "3", "--format", "json")
    assert result.returncode == 0, result.stderr
    case = json.loads(result.stdout)["cases"][0]
    assert (case["runs"], case["passes"], len(case["attempts"])) == (3, 3, 3)
    assert all(attempt["passed"] for attempt in case["attempts"])


def test_one_attempt_keeps_the_report_as_it_was(suite: Path) -> None:
    result = run_cli(["eval", "run", "--suite", str(suite)], CoinPlugin())
    assert result.exit_code == 0  # the first coin lands heads
    assert "attempts" not in result.stdout
    assert result.stdout.splitlines()[-1] == "2/2 cases passed"


def test_a_live_case_answered_differently_each_time_is_flaky(tmp_path: Path) -> None:
    """Live mode against a loopback server that answers "hi" then "bye", alternately:
    four attempts, four conversations, two passes, recorded attempt by attempt."""
    answers = itertools.cycle(["hi there", "bye"])
    lock = threading.Lock()

    def respond(request: Request) -> Reply:
        with lock:
            return text(next(answers), prompt_tokens=12, completion_tokens=3)

    suite = tmp_path / "live"
    suite.mkdir()
    greeting = live_case(["Say hi"], {"response_matches": ["^hi"]}, name="live-greeting")
    (suite / "greeting.json").write_text(json.dumps(greeting), encoding="utf-8")
    history = tmp_path / "history.sqlite"
    with ChatServer(respond) as server:
        write_config(tmp_path, server.url, eval_repeats=4)
        result = live_zeroclaw(
            "eval",
            "run",
            "--mode",
            "live",
            "--suite",
            "live",
            "--history",
            str(history),
            cwd=tmp_path,
        )
        requests = len(server.requests)
    assert result.returncode == 1, result.stderr
    assert "✗ live-greeting (live/greeting.json): 2/4 attempts passed, flaky;" in result.stdout
    assert requests == 4
    with sqlite3.connect(history) as db:
        attempts = db.execute(
            "SELECT attempt, passed, input_tokens, output_tokens FROM attempts ORDER BY attempt"
        ).fetchall()
    assert attempts == [(0, 1, 12, 3), (1, 0, 12, 3), (2, 1, 12, 3), (3, 0, 12, 3)]


def test_record_runs_each_case_once_whatever_the_repeats(tmp_path: Path) -> None:
    """A recorded fixture is one conversation, replaying to that conversation's verdict."""
    suite = tmp_path / "live"
    suite.mkdir()
    greeting = live_case(["Say hi"], {"response_matches": ["^hi"]}, name="live-greeting")
    (suite / "greeting.json").write_text(json.dumps(greeting), encoding="utf-8")
    with ChatServer(conversations({"Say hi": [text("hi there")]})) as server:
        write_config(tmp_path, server.url, eval_repeats=3, eval_pass_k=[3])
        recorded = live_zeroclaw("eval", "record", "--suite", "live", "--out", "out", cwd=tmp_path)
        requests = len(server.requests)
    assert recorded.returncode == 0, recorded.stderr
    assert requests == 1
    assert "attempts" not in recorded.stdout
    written = json.loads((tmp_path / "out" / "greeting.json").read_text(encoding="utf-8"))
    assert written["turns"][0]["steps"][0]["response"]["content"] == "hi there"


def test_exitfirst_stops_at_the_first_case_that_failed_an_attempt(suite: Path) -> None:
    (suite / "c_after.json").write_text(json.dumps(echo_case(model_name="after")), encoding="utf-8")
    args = ["eval", "run", "--suite", str(suite), "--repeat", "2", "-x", "--format", "json"]
    document = json.loads(run_cli(args, CoinPlugin()).stdout)
    assert (document["repeats"], document["pass_k"], document["flaky"]) == (2, [1, 2], 1)
    echo, coin, after = document["cases"]
    assert (echo["passes"], echo["runs"]) == (2, 2)
    assert (coin["passes"], coin["runs"], coin["flaky"]) == (1, 2, True)
    assert after["error"].startswith("not run: the run stopped after the first failure")


def test_a_run_error_in_any_attempt_is_the_cases_and_fails_even_without_gating() -> None:
    def attempt(ok: bool, error: str | None = None) -> CaseReport:
        checks = () if error else (CheckResult("c", ok, "detail"),)
        return CaseReport("x", "x.json", checks, error)

    case = CaseReport.of_attempts([attempt(True), attempt(False), attempt(False, "ran dry")])
    assert (case.passes, case.runs, case.flaky) == (1, 3, True)
    assert case.error == "ran dry"  # not the second attempt's failed check
    report = SuiteReport("s", (case,), gating=False, repeats=3)
    assert report.run_errors == 1
    assert report.exit_code() == 1
    checks_only = CaseReport.of_attempts([attempt(True), attempt(False)])
    assert checks_only.error is None and checks_only.checks[0].detail == "detail"
    assert SuiteReport("s", (checks_only,), gating=False, repeats=2).exit_code() == 0
