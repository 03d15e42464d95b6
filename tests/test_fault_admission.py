"""Admission of scripted faults and of the recovery families: each refusal whole.

A fault is admitted like any step, and refused at its key when no server would
send it or no client could meet it with what the script has left; a recovery
family is refused where the replayed script settles it either way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import AdmissionError, AgentUnderTest, Registry, RunMode
from zeroclaw_eval.case.admission import admit_data

SOURCE = "suite/case.json"
ECHO = {"id": "call_1", "name": "echo", "arguments": {"message": "hello"}}


def case(*steps: dict[str, Any], **expects: Any) -> dict[str, Any]:
    return {
        "model_name": "faults",
        "turns": [{"user_input": "Echo hello", "steps": list(steps)}],
        "expects": expects or {"response_contains": ["done"]},
    }


def error(status: int, **more: Any) -> dict[str, Any]:
    return {"response": {"type": "http_error", "status": status, **more}}


def calls(*tool_calls: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"response": {"type": "tool_calls", "tool_calls": list(tool_calls), **more}}


TEXT = {"response": {"type": "text", "content": "done"}}

REFUSED = {
    "retry_after_on_a_400": (
        case(error(400, retry_after=5), TEXT),
        "turns[0].steps[0].response.retry_after=5: no client retries a 400, so a Retry-After "
        "on it is never read (statuses retried: 408, 409, 429, 5xx)",
    ),
    "a_status_that_is_no_error": (
        case(error(302), TEXT),
        "turns[0].steps[0].response.status=302: input should be greater than or equal to 400",
    ),
    "a_negative_retry_after": (
        case(error(429, retry_after=-1), TEXT),
        "turns[0].steps[0].response.retry_after=-1: input should be greater than or equal to 0",
    ),
    "a_fractional_retry_after": (
        case(error(429, retry_after=0.5), TEXT),
        "turns[0].steps[0].response.retry_after=0.5: must be an integer, not a number",
    ),
    "a_negative_delay": (
        case({**TEXT, "delay_s": -1}),
        "turns[0].steps[0].delay_s=-1: input should be greater than 0",
    ),
    "a_delay_past_a_minute": (
        case({**TEXT, "delay_s": 61}),
        "turns[0].steps[0].delay_s=61: input should be less than or equal to 60",
    ),
    "arguments_text_that_is_json": (
        case(calls({"id": "c", "name": "echo", "arguments_text": '{"a": 1}'}), TEXT),
        'turns[0].steps[0].response.tool_calls[0].arguments_text="{\\"a\\": 1}": is a valid '
        "JSON object: script it as arguments (arguments_text is for arguments that are not "
        "valid JSON)",
    ),
    "both_forms_of_arguments": (
        case(calls({**ECHO, "arguments_text": "{"}), TEXT),
        "turns[0].steps[0].response.tool_calls[0]: give arguments, or arguments_text for "
        "arguments that are not valid JSON (not both)",
    ),
    "no_arguments_at_all": (
        case(calls({"id": "c", "name": "echo"}), TEXT),
        "turns[0].steps[0].response.tool_calls[0]: arguments is required (or arguments_text)",
    ),
    "a_lone_429_ends_the_turn": (
        case(TEXT, error(429)),
        "turns[0].steps[1].response: a client retries this fault, and the turn has no step "
        "left to answer the retry: script the reply after it (or the run of faults an agent "
        "gives up after)",
    ),
    "a_lone_drop_ends_the_turn": (
        case(calls(ECHO, dropped=True)),
        "turns[0].steps[0].response: a client retries this fault, and the turn has no step "
        "left to answer the retry: script the reply after it (or the run of faults an agent "
        "gives up after)",
    ),
    "max_model_requests_at_the_script": (
        case(error(500), TEXT, max_model_requests={"per_case": 2}),
        "expects.max_model_requests.per_case=2: could not fail: the script answers 2 requests "
        "in its longest case, and one more is already a run error (mode 'replay' replays the "
        "script)",
    ),
    "max_model_requests_under_the_script": (
        case(error(500), TEXT, max_model_requests={"per_turn": 1}),
        "expects.max_model_requests.per_turn=1: could never pass: each of the script's 2 steps "
        "in its longest turn answers one request (mode 'replay' replays the script)",
    ),
    "max_model_requests_with_no_bound": (
        case(TEXT, max_model_requests={}),
        "expects.max_model_requests: give per_case, per_turn or both",
    ),
    "max_model_requests_per_turn_past_per_case": (
        case(TEXT, max_model_requests={"per_case": 3, "per_turn": 3}),
        "expects.max_model_requests.per_turn=3: a turn over 3 requests is a case over "
        "per_case=3: the per-turn bound could never fail alone",
    ),
    "max_model_requests_of_zero": (
        case(TEXT, max_model_requests={"per_case": 0}),
        "expects.max_model_requests.per_case=0: input should be greater than 0",
    ),
    "tool_calls_answered_without_calls": (
        case(TEXT, tool_calls_answered=True),
        "expects.tool_calls_answered=true: could never pass: the script hands the agent no "
        "tool call (mode 'replay' replays the script)",
    ),
    "tool_calls_answered_false": (
        case(calls(ECHO), TEXT, tool_calls_answered=False),
        "expects.tool_calls_answered=false: input should be True",
    ),
    "tool_calls_answered_only_on_a_dropped_reply": (
        case(calls(ECHO, dropped=True), TEXT, tool_calls_answered=True),
        "expects.tool_calls_answered=true: could never pass: the script hands the agent no "
        "tool call (mode 'replay' replays the script)",
    ),
    "retry_after_respected_without_one": (
        case(error(500), TEXT, retry_after_respected=True),
        "expects.retry_after_respected=true: could never pass: no step but a turn's last is "
        "an HTTP error with a retry_after, so no retry after one is ever answered (mode "
        "'replay' replays the script)",
    ),
    "retry_after_respected_of_zero": (
        case(error(429, retry_after=0), TEXT, retry_after_respected=True),
        "expects.retry_after_respected=true: could not fail: every retry_after of the script "
        "is 0 (mode 'replay' replays the script)",
    ),
}


def scripted(*results: dict[str, Any], **expects: Any) -> dict[str, Any]:
    """A case calling ``echo`` once per result, with ``results`` scripted for it."""
    steps = [calls({**ECHO, "id": f"call_{n}"}) for n in range(len(results))]
    return {**case(*steps, TEXT, **expects), "tool_results": {"echo": list(results)}}


REFUSED.update(
    {
        # Every step and every call is read, whatever comes before it.
        "a_call_without_arguments_after_an_error": (
            case(error(500), calls({"id": "c1", "name": "echo"}), TEXT),
            "turns[0].steps[1].response.tool_calls[0]: arguments is required (or arguments_text)",
        ),
        "a_second_call_without_arguments": (
            case(calls(ECHO, {"id": "c2", "name": "echo"}), TEXT),
            "turns[0].steps[0].response.tool_calls[1]: arguments is required (or arguments_text)",
        ),
        "a_result_and_a_fault": (
            scripted({"result": "ok", "dropped": True}),
            "tool_results.echo[0]: give exactly one of result, jsonrpc_error, dropped, hang "
            "(given: result, dropped)",
        ),
        "no_outcome": (
            scripted({"delay_s": 1}),
            "tool_results.echo[0]: give exactly one of result, jsonrpc_error, dropped, hang",
        ),
        "an_error_flag_on_a_hang": (
            scripted({"hang": True, "error": True}),
            "tool_results.echo[0]: error marks a result: give its result",
        ),
        "a_jsonrpc_error_without_message": (
            scripted({"jsonrpc_error": {"code": -32603, "message": ""}}),
            'tool_results.echo[0].jsonrpc_error.message="": must not be empty',
        ),
        "a_zero_tool_delay": (
            scripted({"result": "ok", "delay_s": 0}),
            "tool_results.echo[0].delay_s=0: input should be greater than 0",
        ),
        "a_hang_beside_all_tools_succeeded": (
            scripted({"hang": True}, response_contains=["done"], all_tools_succeeded=True),
            "tool_results.echo[0].hang=true: contradicts all_tools_succeeded=true: this call is "
            "scripted to fail",
        ),
    }
)


@pytest.mark.parametrize(("fixture", "line"), REFUSED.values(), ids=REFUSED.keys())
def test_each_refusal_names_the_file_the_field_and_why(
    fixture: dict[str, Any], line: str, registry: Registry, replay: RunMode
) -> None:
    with pytest.raises(AdmissionError) as refused:
        admit_data(fixture, registry, replay, source=SOURCE)
    assert str(refused.value) == f"{SOURCE}: {line}"


ADMITTED = {
    "a_fault_of_each_kind": case(
        error(429, retry_after=1),
        {**error(500, message="boom"), "delay_s": 0.5},
        calls(ECHO, dropped=True),
        calls({"id": "c2", "name": "echo", "arguments_text": '{"message": "hel'}),
        {"response": {"type": "text", "content": "do", "finish": "length"}},
        tool_calls_answered=True,
        retry_after_respected=True,
    ),
    "a_run_of_faults_ends_the_turn": case(error(500), error(500), error(503)),
    "a_400_ends_the_turn": case(error(400)),
    "a_retry_after_on_a_503": case(error(503, retry_after=2), TEXT),
    # No fault: an agent that never answers its call is tool_calls_answered's to catch.
    "a_turn_ending_on_tool_calls": case(calls(ECHO), tool_calls_answered=True),
    # A Retry-After on any step but the turn's last can be waited for, the first or not.
    "a_retry_after_after_a_call": case(
        calls(ECHO), error(429, retry_after=1), TEXT, retry_after_respected=True
    ),
    # One wait of 0 among others: the others can still be cut short.
    "one_retry_after_of_zero": case(
        error(429, retry_after=0), error(503, retry_after=1), TEXT, retry_after_respected=True
    ),
}


@pytest.mark.parametrize("fixture", ADMITTED.values(), ids=ADMITTED.keys())
def test_faults_a_server_sends_and_a_client_meets_are_admitted(
    fixture: dict[str, Any], registry: Registry, replay: RunMode
) -> None:
    admitted = admit_data(fixture, registry, replay, source=SOURCE)
    assert admitted.trace.turns[0].steps is not None


def test_max_model_requests_is_admitted_where_no_script_settles_it(registry: Registry) -> None:
    live = registry.modes["live"].obj
    fixture = {
        "model_name": "budget",
        "turns": [{"user_input": "hi"}],
        "expects": {"max_model_requests": {"per_case": 2, "per_turn": 1}},
    }
    admitted = admit_data(fixture, registry, live, source=SOURCE)
    [expectation] = admitted.expectations
    assert expectation.name == "max_model_requests"


def test_eval_check_reads_a_script_with_faults_as_the_agent_meets_it(tmp_path: Path) -> None:
    """A dropped reply's calls are never made, and a turn ended by an HTTP error or a
    cut text is the agent's to word: none of them is "can never pass"."""
    from zeroclaw_eval.testing import run_cli

    suite = tmp_path / "suite"
    suite.mkdir()
    fixtures = {
        "dropped": case(
            calls(ECHO, dropped=True), calls({**ECHO, "id": "call_2"}), TEXT, exact_tool_calls=1
        ),
        "cut": case(
            {"response": {"type": "text", "content": "do", "finish": "length"}},
            response_contains=["cut at the model's output limit"],
        ),
        "ended-by-an-error": {
            **case(TEXT, response_contains=["HTTP 400"]),
            "turns": [
                {"user_input": "hi", "steps": [TEXT]},
                {"user_input": "again", "steps": [error(400)]},
            ],
        },
    }
    for name, fixture in fixtures.items():
        (suite / f"{name}.json").write_text(json.dumps(fixture), encoding="utf-8")
    result = run_cli(["eval", "check", "--strict", "--suite", str(suite)])
    assert result.exit_code == 0, result.stderr
    assert "can never pass" not in result.stderr


def test_max_model_requests_per_turn_is_held_to_the_longest_turn(
    registry: Registry, replay: RunMode
) -> None:
    fixture = {
        "model_name": "two-turns",
        "turns": [
            {"user_input": "hi", "steps": [TEXT]},
            {"user_input": "again", "steps": [error(500), error(500), TEXT]},
        ],
        "expects": {"response_contains": ["done"], "max_model_requests": {"per_turn": 2}},
    }
    with pytest.raises(AdmissionError) as refused:
        admit_data(fixture, registry, replay, source=SOURCE)
    assert str(refused.value) == (
        f"{SOURCE}: expects.max_model_requests.per_turn=2: could never pass: each of the "
        "script's 3 steps in its longest turn answers one request (mode 'replay' replays "
        "the script)"
    )


class Blind(AgentUnderTest):
    """An agent that cannot show what ``missing`` names (kind -> reason)."""

    name = "blind"

    def __init__(self, missing: dict[str, str]) -> None:
        self.missing = missing

    @property
    def unobservable(self) -> Mapping[str, str]:
        return self.missing

    def start(self, side: Any) -> Any:
        raise AssertionError("admission never starts an agent")


RECOVERY = {
    "max_model_requests": {"per_case": 2},
    "tool_calls_answered": True,
    "retry_after_respected": True,
}


@pytest.mark.parametrize(
    ("missing", "refused"),
    [
        ({"requests": "it records no request"}, set(RECOVERY)),
        ({"answers": "its results name no call"}, {"tool_calls_answered"}),
    ],
    ids=["no-requests", "no-answers"],
)
def test_an_agent_that_cannot_show_what_a_recovery_family_reads_refuses_it(
    missing: dict[str, str], refused: set[str], registry: Registry
) -> None:
    # Live, where no script settles max_model_requests first.
    live = registry.modes["live"].obj
    agent = Blind(missing)
    found = set()
    for family, params in RECOVERY.items():
        fixture = {
            "model_name": "blind",
            "turns": [{"user_input": "hi"}],
            "expects": {family: params},
        }
        try:
            admit_data(fixture, registry, live, source=SOURCE, agent=agent)
        except AdmissionError as exc:
            (reason,) = missing.values()
            shown = "" if isinstance(params, dict) else "=true"
            assert str(exc) == (
                f"{SOURCE}: expects.{family}{shown}: agent 'blind' cannot certify this "
                f"family: {reason}"
            )
            found.add(family)
    assert found == refused


def test_a_fault_after_a_turn_with_no_steps_is_still_read(registry: Registry) -> None:
    # Live, where a turn may leave its replies to the model: the scripted turn after
    # it is held to the same rules.
    fixture = {
        "model_name": "mixed",
        "turns": [
            {"user_input": "a"},
            {"user_input": "b", "steps": [error(400, retry_after=5), TEXT]},
        ],
        "expects": {"response_contains": ["done"]},
    }
    with pytest.raises(AdmissionError) as refused:
        admit_data(fixture, registry, registry.modes["live"].obj, source=SOURCE)
    assert str(refused.value) == (
        f"{SOURCE}: turns[1].steps[0].response.retry_after=5: no client retries a 400, so a "
        "Retry-After on it is never read (statuses retried: 408, 409, 429, 5xx)"
    )
