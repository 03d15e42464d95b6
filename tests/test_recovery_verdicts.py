"""The exact verdicts of ``max_model_requests``, ``tool_calls_answered`` and
``retry_after_respected``, graded in process over hand-built model requests, each
with its whole detail; and the faults a request records from the reply to it."""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_eval import Registry
from zeroclaw_eval.grading.record import ModelRequest, RunRecord
from zeroclaw_eval.protocol import HttpError, ModelReply, ToolCallRequest
from zeroclaw_eval.report.model import CheckResult


def grade(registry: Registry, family: str, params: Any, *requests: ModelRequest) -> list[Any]:
    found = registry.families[family].obj
    checks: list[CheckResult] = found.grade(
        found.adapter.validate_python(params), RunRecord(requests=list(requests))
    )
    return [(check.check, check.passed, check.detail) for check in checks]


def request(turn: int, step: int, *messages: dict[str, Any], **more: Any) -> ModelRequest:
    return ModelRequest(turn, step, list(messages), [], **more)


def result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


USER = {"role": "user", "content": "hi"}

# --- max_model_requests ----------------------------------------------------------------


def test_max_model_requests_counts_the_case_and_its_busiest_turn(registry: Registry) -> None:
    made = [request(0, 0), request(0, 1), request(1, 0), request(1, 1), request(1, 2)]
    assert grade(registry, "max_model_requests", {"per_case": 5, "per_turn": 3}, *made) == [
        ("max_model_requests: at most 5 per case", True, "5 requests made"),
        ("max_model_requests: at most 3 per turn", True, "at most 3 requests in a turn (turn 1)"),
    ]
    assert grade(registry, "max_model_requests", {"per_case": 4, "per_turn": 2}, *made) == [
        ("max_model_requests: at most 4 per case", False, "5 requests made"),
        ("max_model_requests: at most 2 per turn", False, "at most 3 requests in a turn (turn 1)"),
    ]


def test_max_model_requests_names_the_first_of_the_busiest_turns(registry: Registry) -> None:
    made = [request(0, 0), request(0, 1), request(1, 0), request(1, 1)]
    assert grade(registry, "max_model_requests", {"per_turn": 1}, *made) == [
        ("max_model_requests: at most 1 per turn", False, "at most 2 requests in a turn (turn 0)")
    ]


def test_max_model_requests_over_no_request(registry: Registry) -> None:
    assert grade(registry, "max_model_requests", {"per_case": 2, "per_turn": 1}) == [
        ("max_model_requests: at most 2 per case", True, "0 requests made"),
        ("max_model_requests: at most 1 per turn", True, "no request made"),
    ]


# --- tool_calls_answered ---------------------------------------------------------------


def test_every_call_answered_in_a_later_request(registry: Registry) -> None:
    made = [
        request(0, 0, USER, calls_sent=("call_1", "call_2")),
        request(0, 1, USER, result("call_1"), calls_sent=("call_3",)),
        request(0, 2, USER, result("call_1"), result("call_3"), result("call_2")),
    ]
    assert grade(registry, "tool_calls_answered", True, *made) == [
        (
            "tool_calls_answered: every tool call answered",
            True,
            "3 calls handed over, each answered",
        )
    ]


def test_a_call_never_answered_is_named_with_its_turn_and_step(registry: Registry) -> None:
    made = [
        request(0, 0, USER, calls_sent=("call_1", "call_2")),
        request(0, 1, USER, result("call_1")),
        request(1, 0, USER, result("call_1"), calls_sent=("call_9",)),
    ]
    assert grade(registry, "tool_calls_answered", True, *made) == [
        (
            "tool_calls_answered: every tool call answered",
            False,
            "no later request showed the model a result for call_2 (turn 0 step 0), "
            "call_9 (turn 1 step 0) (3 calls handed over)",
        )
    ]


def test_a_reused_id_needs_a_result_of_its_own(registry: Registry) -> None:
    """``call_1`` in every turn: the second needs a second result, not the first one."""
    made = [
        request(0, 0, USER, calls_sent=("call_1",)),
        request(0, 1, USER, result("call_1")),
        request(1, 0, USER, result("call_1"), calls_sent=("call_1",)),
        request(1, 1, USER, result("call_1")),
    ]
    [(_, passed, detail)] = grade(registry, "tool_calls_answered", True, *made)
    assert (passed, detail) == (
        False,
        "no later request showed the model a result for call_1 (turn 1 step 0) "
        "(2 calls handed over)",
    )
    made[-1] = request(1, 1, USER, result("call_1"), result("call_1"))
    assert grade(registry, "tool_calls_answered", True, *made)[0][1] is True


def test_only_a_tool_message_answers_a_call(registry: Registry) -> None:
    # The id alone is not an answer: an assistant or user message carrying it shows
    # the model no result.
    made = [
        request(0, 0, USER, calls_sent=("call_1",)),
        request(0, 1, USER, {"role": "user", "tool_call_id": "call_1", "content": "ok"}),
    ]
    assert grade(registry, "tool_calls_answered", True, *made) == [
        (
            "tool_calls_answered: every tool call answered",
            False,
            "no later request showed the model a result for call_1 (turn 0 step 0) "
            "(1 call handed over)",
        )
    ]


def test_no_call_handed_over_certifies_nothing(registry: Registry) -> None:
    assert grade(registry, "tool_calls_answered", True, request(0, 0, USER)) == [
        (
            "tool_calls_answered: every tool call answered",
            False,
            "no tool call was handed to the agent",
        )
    ]


# --- retry_after_respected -------------------------------------------------------------


def test_a_retry_no_sooner_than_asked_passes(registry: Registry) -> None:
    made = [
        request(0, 0, received=10.0, retry_after=2, replied=10.5),
        request(0, 1, received=12.5),
    ]
    assert grade(registry, "retry_after_respected", True, *made) == [
        ("retry_after_respected: waited as asked", True, "turn 0 step 0: waited 2.00s")
    ]


def test_a_retry_sooner_than_asked_fails(registry: Registry) -> None:
    made = [
        request(0, 0, received=10.0, retry_after=2, replied=10.5),
        request(0, 1, received=12.4),
        request(0, 2, received=13.0, retry_after=1, replied=13.0),
        request(0, 3, received=14.0),
    ]
    assert grade(registry, "retry_after_respected", True, *made) == [
        (
            "retry_after_respected: waited as asked",
            False,
            "turn 0 step 0: waited 1.90s of the 2s asked",
        )
    ]


def test_every_error_of_the_run_is_waited_for_not_only_the_first_request(
    registry: Registry,
) -> None:
    made = [
        request(0, 0, received=9.0),  # no Retry-After here: the errors come after it
        request(0, 1, received=10.0, retry_after=2, replied=10.0),
        request(0, 2, received=11.0, retry_after=3, replied=11.0),
        request(0, 3, received=12.5),
    ]
    assert grade(registry, "retry_after_respected", True, *made) == [
        (
            "retry_after_respected: waited as asked",
            False,
            "turn 0 step 1: waited 1.00s of the 2s asked; "
            "turn 0 step 2: waited 1.50s of the 3s asked",
        )
    ]
    made[-1] = request(0, 3, received=14.0)
    made[-2] = request(0, 2, received=12.0, retry_after=2, replied=12.0)
    assert grade(registry, "retry_after_respected", True, *made) == [
        (
            "retry_after_respected: waited as asked",
            True,
            "turn 0 step 1: waited 2.00s; turn 0 step 2: waited 2.00s",
        )
    ]


def test_a_request_of_the_next_turn_is_no_retry(registry: Registry) -> None:
    made = [
        request(0, 0, received=10.0, retry_after=2, replied=10.0),
        request(1, 0, received=10.1),
    ]
    assert grade(registry, "retry_after_respected", True, *made) == [
        (
            "retry_after_respected: waited as asked",
            False,
            "no request followed an error with Retry-After",
        )
    ]


# --- what a request keeps of the reply ---------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "fault", "retry_after", "sent"),
    [
        (ModelReply("hi"), None, None, ()),
        (ModelReply(error=HttpError(429, "slow down", 3)), "http_error", 3, ()),
        (ModelReply(error=HttpError(500, "boom")), "http_error", None, ()),
        (ModelReply("cut", finish="length"), "length", None, ()),
        (
            ModelReply(None, (ToolCallRequest("c1", "echo", {}),), dropped=True),
            "dropped",
            None,
            (),
        ),
        (
            ModelReply(None, (ToolCallRequest("c1", "echo", {}, "{"),)),
            "invalid_arguments",
            None,
            ("c1",),
        ),
        (
            ModelReply(None, (ToolCallRequest("c1", "echo", {}), ToolCallRequest("c2", "x", {}))),
            None,
            None,
            ("c1", "c2"),
        ),
    ],
)
def test_a_request_keeps_the_fault_and_the_calls_of_its_reply(
    reply: ModelReply, fault: str | None, retry_after: float | None, sent: tuple[str, ...]
) -> None:
    answered = request(0, 0).answered(reply)
    assert (answered.fault, answered.retry_after, answered.calls_sent) == (fault, retry_after, sent)
    assert (answered.replied > 0) == (fault is not None)
