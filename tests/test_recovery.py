"""The recovery families and the scripted faults, against real agents.

The reference loop, and agents on raw HTTP reached through the model bridge
(``tests/agents/recovery_agent.py``): one honest, and one for each wrong way to
meet a failure. Each wrong one goes red on the case written for it, by a check
or by a run error naming what it did; the honest ones pass every case.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval.testing import run_cli

from .bridged_helpers import configure, factory, run, write_suite


def case(name: str, steps: list[dict[str, Any]], expects: dict[str, Any]) -> dict[str, Any]:
    return {
        "model_name": name,
        "turns": [{"user_input": "Echo hello", "steps": steps}],
        "expects": expects,
    }


def error(status: int, **more: Any) -> dict[str, Any]:
    return {"response": {"type": "http_error", "status": status, **more}}


def text(content: str) -> dict[str, Any]:
    return {"response": {"type": "text", "content": content}}


CASES = {
    "gives-up": case(
        "gives-up", [error(500), error(500), error(503)], {"response_contains": ["HTTP 503"]}
    ),
    "waits": case(
        "waits",
        [error(429, retry_after=1), text("done")],
        {"response_contains": ["done"], "retry_after_respected": True},
    ),
    "answers-every-call": case(
        "answers-every-call",
        [
            {
                "response": {
                    "type": "tool_calls",
                    "tool_calls": [
                        {"id": "call_1", "name": "slow", "arguments": {}},
                        {"id": "call_2", "name": "echo", "arguments": {"message": "hello"}},
                    ],
                }
            },
            text("done"),
        ],
        {"response_contains": ["done"], "tool_calls_answered": True},
    ),
    "tells-the-user": case("tells-the-user", [error(400)], {"response_contains": ["HTTP 400"]}),
}


def outcome(stdout: str) -> dict[str, tuple[bool, str | None, list[str]]]:
    """Per case: passed, its run error, the details of its failed checks."""
    document = json.loads(stdout)
    return {
        c["name"]: (
            c["passed"],
            c["error"],
            [f"{k['check']}: {k['detail']}" for k in c["checks"] if not k["passed"]],
        )
        for c in document["cases"]
    }


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_suite(tmp_path_factory.mktemp("recovery"), *CASES.values())


def run_agent(
    tmp_path: Path, suite: Path, make: str
) -> dict[str, tuple[bool, str | None, list[str]]]:
    config = configure(tmp_path / "project", factory(f"recovery_agent:{make}"))
    result = run(config, suite, "--format", "json", "--no-history")
    return outcome(result.stdout)


def test_the_reference_loop_meets_every_fault_sanely(suite: Path) -> None:
    result = run_cli(["eval", "run", "--suite", str(suite), "--format", "json", "--no-history"])
    assert result.exit_code == 0, result.stdout
    assert all(passed for passed, _, _ in outcome(result.stdout).values())


def test_an_honest_bridged_agent_passes_every_case(tmp_path: Path, suite: Path) -> None:
    found = run_agent(tmp_path, suite, "make_honest")
    assert {name: passed for name, (passed, _, _) in found.items()} == dict.fromkeys(CASES, True)


def test_an_agent_that_retries_forever_goes_red(tmp_path: Path, suite: Path) -> None:
    found = run_agent(tmp_path, suite, "make_forever")
    passed, run_error, _ = found["gives-up"]
    assert not passed
    assert run_error is not None and "requested more responses than scripted" in run_error


def test_an_agent_that_swallows_a_failure_as_an_empty_answer_goes_red(
    tmp_path: Path, suite: Path
) -> None:
    found = run_agent(tmp_path, suite, "make_swallow")
    assert (
        found["tells-the-user"]
        == (
            False,
            None,
            ['response_contains: "HTTP 400": not found in the final response: ""'],
        )
        or not found["tells-the-user"][0]
    )
    passed, run_error, failed = found["tells-the-user"]
    assert not passed and run_error is None
    assert [detail.split(":")[0] for detail in failed] == ["response_contains"]
    passed, run_error, _ = found["waits"]  # took the 429 for the answer, left the reply unused
    assert not passed and run_error is not None and "left unused" in run_error


def test_an_agent_that_drops_the_call_of_a_hung_tool_goes_red(tmp_path: Path, suite: Path) -> None:
    found = run_agent(tmp_path, suite, "make_dropper")
    passed, run_error, failed = found["answers-every-call"]
    assert not passed and run_error is None
    assert failed == [
        "tool_calls_answered: every tool call answered: no later request showed the model "
        "a result for call_1 (turn 0 step 0) (2 calls handed over)"
    ]


def test_an_agent_that_ignores_retry_after_goes_red(tmp_path: Path, suite: Path) -> None:
    found = run_agent(tmp_path, suite, "make_impatient")
    passed, run_error, failed = found["waits"]
    assert not passed and run_error is None
    assert len(failed) == 1 and failed[0].startswith(
        "retry_after_respected: waited as asked: turn 0 step 0: waited 0."
    )
    assert failed[0].endswith("of the 1s asked")


def test_the_reference_loop_records_how_it_met_each_fault(tmp_path: Path) -> None:
    """Not run, the unreadable call fails with the reason; the cut reply is noted; the
    dropped reply and the 500 are retried, the next steps answering."""
    unreadable = {"id": "call_2", "name": "echo", "arguments_text": '{"message": "hel'}
    steps = [
        {**error(500), "delay_s": 0.1},
        {"response": {"type": "tool_calls", "dropped": True, "tool_calls": [unreadable]}},
        {"response": {"type": "tool_calls", "tool_calls": [unreadable]}},
        {"response": {"type": "text", "content": "It said hel", "finish": "length"}},
    ]
    expects = {
        "tool_call_status": [{"tool": "echo", "status": "failed"}],
        "tool_results_contain": [
            {"tool": "echo", "needle": "was not run: its arguments are not valid JSON"}
        ],
        "response_contains": ["It said hel\n[the reply was cut at the model's output limit]"],
        "exact_tool_calls": 1,
        "tool_calls_answered": True,
    }
    suite = write_suite(tmp_path / "suite", case("every-fault", steps, expects))
    result = run_cli(["eval", "run", "--suite", str(suite), "--format", "json", "--no-history"])
    assert result.exit_code == 0, result.stdout
    assert outcome(result.stdout) == {"every-fault": (True, None, [])}


def test_max_model_requests_bounds_a_live_run(tmp_path: Path) -> None:
    """Where no script settles the count, the bound is graded: two requests (a tool
    call, then the answer) pass a bound of 2 and fail one of 1, per case and per turn.
    (Alone it would be vacuous: a run that does nothing makes no request.)"""
    from .chat_server import ChatServer, conversations
    from .chat_server import text as reply_text
    from .chat_server import tool_calls as reply_calls
    from .live_helpers import live_case, write_config, zeroclaw

    script = {
        "Echo hello": [
            reply_calls(("call_1", "echo", {"message": "hello"})),
            reply_text("hello"),
        ]
    }
    cases = [
        live_case(
            ["Echo hello"],
            {"response_contains": ["hello"], "max_model_requests": {"per_case": 2}},
            name="within",
        ),
        live_case(
            ["Echo hello"],
            {"response_contains": ["hello"], "max_model_requests": {"per_case": 1}},
            name="over-case",
        ),
        live_case(
            ["Echo hello"],
            {"response_contains": ["hello"], "max_model_requests": {"per_case": 5, "per_turn": 1}},
            name="over-turn",
        ),
    ]
    suite = write_suite(tmp_path / "suite", *cases)
    with ChatServer(conversations(script)) as server:
        write_config(tmp_path, server.url)
        result = zeroclaw(
            "eval", "run", "--mode", "live", "--suite", str(suite), "--format", "json", cwd=tmp_path
        )
    found = outcome(result.stdout)
    assert result.returncode == 1, result.stderr
    assert found == {
        "within": (True, None, []),
        "over-case": (False, None, ["max_model_requests: at most 1 per case: 2 requests made"]),
        "over-turn": (
            False,
            None,
            ["max_model_requests: at most 1 per turn: at most 2 requests in a turn (turn 0)"],
        ),
    }


TOOL_FAULTS = case(
    "tool-faults",
    [
        {
            "response": {
                "type": "tool_calls",
                "tool_calls": [
                    {"id": f"call_{city}", "name": "weather", "arguments": {"city": city}}
                    for city in ("Paris", "Lyon", "Nice", "Brest")
                ],
            }
        },
        text("Paris: 12 C; the rest failed"),
    ],
    {
        "response_contains": ["12 C"],
        "tool_calls_answered": True,
        "tool_results_contain": [
            {"tool": "weather", "needle": "12 C", "call_index": 0},
            {"tool": "weather", "needle": "-32603: backend down", "call_index": 1},
        ],
    },
)
TOOL_FAULTS["tool_results"] = {
    "weather": [
        {"result": "12 C", "delay_s": 0.1},
        {"jsonrpc_error": {"code": -32603, "message": "backend down"}},
        {"dropped": True},
        {"hang": True},
    ]
}


def test_the_reference_loop_meets_each_fault_of_a_tool(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", TOOL_FAULTS)
    result = run_cli(["eval", "run", "--suite", str(suite), "--format", "json", "--no-history"])
    assert result.exit_code == 0, result.stdout
    assert outcome(result.stdout) == {"tool-faults": (True, None, [])}


def served(tmp_path: Path, make: str) -> Path:
    agent = "\n".join([factory(f"recovery_agent:{make}"), 'tools = "served"'])
    return configure(tmp_path / "project", agent)


def test_an_agent_served_its_tools_meets_each_fault_over_mcp(tmp_path: Path) -> None:
    """Each served as it says: the error comes back as JSON-RPC, the drop ends the
    connection, the hang answers nothing, until the agent's timeout cancels it."""
    suite = write_suite(tmp_path / "suite", TOOL_FAULTS)
    started = time.monotonic()
    result = run(served(tmp_path, "make_honest"), suite, "--format", "json", "--no-history")
    assert time.monotonic() - started >= 1.0  # the hang was waited out by the agent
    assert outcome(result.stdout) == {"tool-faults": (True, None, [])}, result.stdout


def test_an_agent_that_drops_a_hung_served_call_goes_red(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", TOOL_FAULTS)
    result = run(served(tmp_path, "make_dropper"), suite, "--format", "json", "--no-history")
    passed, run_error, failed = outcome(result.stdout)["tool-faults"]
    assert not passed and run_error is None
    assert failed[0] == (
        "tool_calls_answered: every tool call answered: no later request showed the model a "
        "result for call_Brest (turn 0 step 0) (4 calls handed over)"
    )
