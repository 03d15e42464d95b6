"""Token and cost budgets in live mode, against a real chat-completions server on 127.0.0.1.

The honest-accounting rule at its boundary: usage is what the provider reported,
kept per request in the report; a budget over a figure it never sent is undecided
(``n/a``, naming the request or the model), which fails a gating run and never
passes; what was reported and is already over the budget fails it.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval.history.recorder import NO_HISTORY_ENV

from .chat_server import ChatServer, Reply, shaped, text, tool_calls
from .live_helpers import live_case, write_config, zeroclaw

WITH_HISTORY = {NO_HISTORY_ENV: ""}

RATES = """
[eval.rates."example-model"]
input = 2.0
cached_input = 0.5
output = 8.0
checked = "2026-01-15"
"""


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as running:
        yield running


def run_live(
    tmp_path: Path,
    server: ChatServer,
    expects: dict[str, Any],
    *extra: str,
    rates: str = "",
    history: bool = False,
) -> subprocess.CompletedProcess[str]:
    suite = tmp_path / "suite"
    suite.mkdir(exist_ok=True)
    case = live_case(["Echo hello"], {"response_contains": ["hello"], **expects}, name="budget")
    (suite / "00.json").write_text(json.dumps(case), encoding="utf-8")
    config = write_config(tmp_path, server.url)
    config.write_text(config.read_text(encoding="utf-8") + rates, encoding="utf-8")
    return zeroclaw(
        "eval",
        "run",
        "--mode",
        "live",
        "--suite",
        "suite",
        *extra,
        cwd=tmp_path,
        env_extra=WITH_HISTORY if history else None,
    )


def echo_then_text(**usage: Any) -> list[Reply]:
    """The model calls echo, then answers: two requests, each with ``usage`` when given."""
    call = tool_calls(("call_1", "echo", {"message": "hello"}))
    answer = text("The echo said: hello")
    if usage:
        return [shaped(call, usage=usage["first"]), shaped(answer, usage=usage["second"])]
    return [call, answer]


def no_usage(reply: Reply) -> Reply:
    return shaped(reply, drop=("usage",))


def test_a_server_that_omits_usage_leaves_the_budget_undecided_and_the_gate_red(
    tmp_path: Path, server: ChatServer
) -> None:
    server.add([no_usage(reply) for reply in echo_then_text()])

    result = run_live(tmp_path, server, {"max_output_tokens": 1000}, "--report", "json:out.json")

    assert result.returncode == 1, result.stdout + result.stderr
    assert "? budget (suite/00.json): 1/2 checks" in result.stdout
    assert (
        "? max_output_tokens: 1000: n/a: turn 0 request 0: no usage reported; turn 0 "
        "request 1: no usage reported (the rest reported 0 output tokens)"
    ) in result.stdout
    assert "1 undecided" in result.stdout
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    case = report["cases"][0]
    budget = case["checks"][1]
    assert budget["passed"] is False and budget["undecided"] is True
    assert report["undecided"] == 1
    attempt = case["attempts"][0]
    # A missing figure is never summed as 0.
    assert attempt["input_tokens"] is None and attempt["output_tokens"] is None
    assert [entry["output_tokens"] for entry in attempt["usage"]] == [None, None]


def test_an_undecided_budget_does_not_fail_a_non_gating_run_and_is_shown_as_na(
    tmp_path: Path, server: ChatServer
) -> None:
    server.add([no_usage(reply) for reply in echo_then_text()])

    result = run_live(tmp_path, server, {"max_total_tokens": 1000}, "--no-gate")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "? max_total_tokens: 1000: n/a: turn 0 request 0: no usage reported" in result.stdout


def test_reported_usage_within_the_budget_passes_and_is_kept_per_request(
    tmp_path: Path, server: ChatServer
) -> None:
    server.add(
        echo_then_text(
            first={
                "prompt_tokens": 120,
                "completion_tokens": 30,
                "prompt_tokens_details": {"cached_tokens": 100},
                "completion_tokens_details": {"reasoning_tokens": 20},
            },
            second={
                "prompt_tokens": 160,
                "completion_tokens": 10,
                "prompt_tokens_details": {"cached_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
        )
    )

    result = run_live(
        tmp_path,
        server,
        {
            "max_input_tokens": 280,
            "max_output_tokens": 40,
            "max_cached_input_tokens": 100,
            "max_reasoning_tokens": 20,
            "max_total_tokens": 320,
            "max_cost": 0.001,
        },
        "-v",
        "--report",
        "json:out.json",
        rates=RATES,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "✓ max_input_tokens: 280: 280 input tokens over 2 requests" in result.stdout
    assert "✓ max_reasoning_tokens: 20: 20 reasoning tokens over 2 requests" in result.stdout
    # (20 + 160) uncached at 2.0, 100 cached at 0.5, 40 output at 8.0, per million
    assert "✓ max_cost: 0.001: 0.00073 over 2 requests" in result.stdout
    attempt = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["cases"][0][
        "attempts"
    ][0]
    assert attempt["usage"][0] == {
        "turn": 0,
        "step": 0,
        "model": "example-model",
        "input_tokens": 120,
        "cached_input_tokens": 100,
        "reasoning_tokens": 20,
        "output_tokens": 30,
        "cache_write_input_tokens": None,
        "cost": pytest.approx((20 * 2.0 + 100 * 0.5 + 30 * 8.0) / 1e6),
    }
    assert (attempt["input_tokens"], attempt["output_tokens"]) == (280, 40)
    assert (attempt["cached_input_tokens"], attempt["reasoning_tokens"]) == (100, 20)
    assert attempt["cost"] == pytest.approx(0.00073)


def test_usage_over_the_budget_fails_even_when_another_request_reported_none(
    tmp_path: Path, server: ChatServer
) -> None:
    call, answer = echo_then_text()
    server.add(
        [shaped(call, usage={"prompt_tokens": 900, "completion_tokens": 5}), no_usage(answer)]
    )

    result = run_live(tmp_path, server, {"max_input_tokens": 500}, "--report", "junit:out.xml")

    assert result.returncode == 1
    assert (
        "✗ max_input_tokens: 500: 900 input tokens over 2 requests, more than 500 input tokens "
        "already (turn 0 request 1: no usage reported)"
    ) in result.stdout
    failure = ET.parse(tmp_path / "out.xml").getroot().find("testsuite/testcase/failure")
    assert failure is not None and failure.get("type") == "check"


def test_the_junit_report_marks_an_undecided_case_with_its_own_failure_type(
    tmp_path: Path, server: ChatServer
) -> None:
    server.add([no_usage(reply) for reply in echo_then_text()])

    result = run_live(tmp_path, server, {"max_output_tokens": 100}, "--report", "junit:out.xml")

    assert result.returncode == 1
    failure = ET.parse(tmp_path / "out.xml").getroot().find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("type") == "undecided"
    assert (failure.get("message") or "").startswith("max_output_tokens: 100: n/a: turn 0")


def test_a_model_without_a_rate_leaves_the_cost_undecided_naming_the_model(
    tmp_path: Path, server: ChatServer
) -> None:
    call, answer = echo_then_text()
    server.add(
        [
            shaped(call, model="example-model-2026-01-01"),
            shaped(answer, model="example-model-2026-01-01"),
        ]
    )

    result = run_live(tmp_path, server, {"max_cost": 1.0}, rates=RATES)

    assert result.returncode == 1
    assert (
        "? max_cost: 1: n/a: turn 0 request 0: no rate for model 'example-model-2026-01-01'"
        in result.stdout
    )


def test_cached_tokens_without_a_cached_rate_leave_the_cost_undecided(
    tmp_path: Path, server: ChatServer
) -> None:
    usage = {
        "prompt_tokens": 50,
        "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 40},
    }
    server.add(echo_then_text(first=usage, second=usage))
    rates = RATES.replace("cached_input = 0.5\n", "")

    result = run_live(tmp_path, server, {"max_cost": 1.0}, rates=rates)

    assert result.returncode == 1
    assert (
        "n/a: turn 0 request 0 (example-model): 40 cached input tokens and no cached_input rate"
        in result.stdout
    )


def test_a_cost_known_only_as_a_range_across_the_budget_is_undecided(
    tmp_path: Path, server: ChatServer
) -> None:
    usage = {"prompt_tokens": 100_000, "completion_tokens": 10_000}
    server.add(echo_then_text(first=usage, second=usage))

    result = run_live(tmp_path, server, {"max_cost": 0.5}, rates=RATES)

    assert result.returncode == 1
    # Not told how much was cached: 0.2 (all at 0.5) to 0.56 (all at 2.0), over the budget
    # only at the most, so it is not decided either way.
    assert "? max_cost: 0.5: n/a: between 0.26 and 0.56" in result.stdout


def test_a_cost_whose_least_is_over_the_budget_fails(tmp_path: Path, server: ChatServer) -> None:
    usage = {"prompt_tokens": 100_000, "completion_tokens": 10_000}
    server.add(echo_then_text(first=usage, second=usage))

    result = run_live(tmp_path, server, {"max_cost": 0.2}, rates=RATES)

    assert result.returncode == 1
    assert "✗ max_cost: 0.2: 0.26 over 2 requests, more than 0.2 already (at the least)" in (
        result.stdout
    )


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (  # the Responses API's shape
            {
                "input_tokens": 70,
                "output_tokens": 9,
                "input_tokens_details": {"cached_tokens": 64},
                "output_tokens_details": {"reasoning_tokens": 4},
            },
            (70, 64, 4, 9, None),
        ),
        (  # Anthropic's: input_tokens leaves the cache out
            {
                "input_tokens": 6,
                "cache_read_input_tokens": 64,
                "cache_creation_input_tokens": 10,
                "output_tokens": 9,
            },
            (80, 64, None, 9, 10),
        ),
        (  # chat completions without the details: the cached and reasoning parts unknown
            {"prompt_tokens": 70, "completion_tokens": 9},
            (70, None, None, 9, None),
        ),
    ],
)
def test_each_shape_of_usage_is_read_kind_by_kind(
    tmp_path: Path, server: ChatServer, usage: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    server.add([shaped(text("hello"), usage=usage)])

    result = run_live(tmp_path, server, {"max_total_tokens": 1000}, "--report", "json:out.json")

    assert result.returncode == 0, result.stdout + result.stderr
    entry = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["cases"][0]["attempts"][
        0
    ]["usage"][0]
    kinds = (
        "input_tokens",
        "cached_input_tokens",
        "reasoning_tokens",
        "output_tokens",
        "cache_write_input_tokens",
    )
    assert tuple(entry[kind] for kind in kinds) == expected


def test_a_reasoning_budget_over_a_provider_that_reports_no_reasoning_is_undecided(
    tmp_path: Path, server: ChatServer
) -> None:
    server.add([shaped(text("hello"), usage={"prompt_tokens": 7, "completion_tokens": 2})])

    result = run_live(tmp_path, server, {"max_reasoning_tokens": 100})

    assert result.returncode == 1
    assert "n/a: turn 0 request 0: no reasoning tokens reported" in result.stdout


def test_the_history_keeps_what_live_runs_spent_and_compare_and_the_trend_show_it(
    tmp_path: Path, server: ChatServer
) -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    server.add(echo_then_text(first=usage, second=usage))
    server.add([no_usage(reply) for reply in echo_then_text()])
    first, second = (
        run_live(
            tmp_path, server, {"max_total_tokens": 1000}, "--no-gate", rates=RATES, history=True
        )
        for _ in range(2)
    )
    assert (first.returncode, second.returncode) == (0, 0), first.stdout + second.stdout

    compared = zeroclaw("eval", "compare", "--format", "json", cwd=tmp_path)
    text_compared = zeroclaw("eval", "compare", cwd=tmp_path)
    page = zeroclaw("eval", "history", "--html", "trend.html", cwd=tmp_path)

    assert compared.returncode == 0, compared.stderr
    document = json.loads(compared.stdout)
    assert document["base_spend"] == {
        "attempts": 1,
        "input_tokens": 200,
        "output_tokens": 20,
        "cached_input_tokens": 0,
        "reasoning_tokens": 0,
        "cost": pytest.approx((200 * 2.0 + 20 * 8.0) / 1e6),
    }
    # The second run's server sent no usage: n/a, never 0.
    assert document["head_spend"] == {
        "attempts": 1,
        "input_tokens": None,
        "output_tokens": None,
        "cached_input_tokens": None,
        "reasoning_tokens": None,
        "cost": None,
    }
    assert document["cases"][0]["head_spend"]["input_tokens"] is None
    assert (
        "spent: base 200 input / 20 output tokens, cost 0.00056; "
        "head n/a input / n/a output tokens, cost n/a"
    ) in text_compared.stdout
    assert page.returncode == 0, page.stderr
    trend = (tmp_path / "trend.html").read_text(encoding="utf-8")
    data = json.loads(trend.split('type="application/json">')[1].split("</script>")[0])
    assert [run["spend"]["input_tokens"] for run in data["runs"]] == [200, None]
    assert 'id="spend"' in trend


def test_a_replay_run_is_never_shown_as_spending(tmp_path: Path) -> None:
    case = tmp_path / "suite"
    case.mkdir()
    from .conftest import echo_case

    (case / "00.json").write_text(json.dumps(echo_case()), encoding="utf-8")
    for _ in range(2):
        ran = zeroclaw("eval", "run", "--suite", "suite", cwd=tmp_path, env_extra=WITH_HISTORY)
        assert ran.returncode == 0

    compared = zeroclaw("eval", "compare", "--format", "json", cwd=tmp_path)

    document = json.loads(compared.stdout)
    assert (document["base_spend"], document["head_spend"]) == (None, None)
    assert "spent:" not in zeroclaw("eval", "compare", cwd=tmp_path).stdout
