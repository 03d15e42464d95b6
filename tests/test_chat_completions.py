"""Mapping chat-completions replies, and reading ``Retry-After``: the pure parts of live mode."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any

import pytest

from zeroclaw_eval import ModelReply, RunError, ToolCallRequest
from zeroclaw_eval.builtin.live_client import _parse_retry_after, parse_reply
from zeroclaw_eval.protocol import Usage


def reply(message: dict[str, Any], usage: Any = None) -> dict[str, Any]:
    document: dict[str, Any] = {"choices": [{"index": 0, "message": message}]}
    if usage is not None:
        document["usage"] = usage
    return document


def call(arguments: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "echo", "arguments": arguments}, **extra}


def test_text_reply_with_usage() -> None:
    mapped = parse_reply(
        reply({"content": "hi"}, {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9})
    )
    assert mapped == ModelReply("hi", (), 7, 2, usage=Usage(input_tokens=7, output_tokens=2))


def test_tool_calls_are_decoded_and_missing_pieces_defaulted() -> None:
    mapped = parse_reply(
        reply(
            {
                "content": None,
                "tool_calls": [
                    call('{"message": "é"}', id="c1"),
                    call(""),  # no id, empty arguments: some local servers send these
                    call({"message": "already an object"}, id="c3"),
                ],
            }
        )
    )
    assert mapped == ModelReply(
        None,
        (
            ToolCallRequest("c1", "echo", {"message": "é"}),
            ToolCallRequest("call_2", "echo", {}),
            ToolCallRequest("c3", "echo", {"message": "already an object"}),
        ),
        0,
        0,
    )


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"choices": "nope"}, "the reply has no choices[0]"),
        ({"choices": [{"text": "legacy"}]}, "no choices[0].message object"),
        (reply({"content": ["parts"]}), "choices[0].message.content is list, not text"),
        (reply({"tool_calls": {"id": "x"}}), "tool_calls is not a list"),
        (reply({"tool_calls": [{"id": "x"}]}), "tool_calls[0].function is missing"),
        (reply({"tool_calls": [call("[1, 2]")]}), "arguments that are not a JSON object"),
        (reply({"tool_calls": [call("{oops")]}), "arguments that are not valid JSON"),
    ],
)
def test_malformed_replies_are_run_errors(document: dict[str, Any], message: str) -> None:
    with pytest.raises(RunError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_reply(document)


def test_nonsense_usage_is_not_reported_never_zero() -> None:
    mapped = parse_reply(reply({"content": "x"}, {"prompt_tokens": -1, "completion_tokens": "3"}))
    # The agent is told 0 (its wire needs a number); the accounting reads no usage.
    assert (mapped.input_tokens, mapped.output_tokens) == (0, 0)
    assert mapped.usage is None


def test_retry_after_seconds_date_and_garbage() -> None:
    assert _parse_retry_after("2") == 2.0
    assert _parse_retry_after(None) is None
    assert _parse_retry_after("soon") is None
    assert _parse_retry_after("nan") is None
    in_a_minute = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=60), usegmt=True)
    assert 55 <= (_parse_retry_after(in_a_minute) or 0) <= 60
    past = format_datetime(datetime.now(timezone.utc) - timedelta(hours=1), usegmt=True)
    assert _parse_retry_after(past) == 0.0


def test_a_refusal_text_and_the_reported_model_are_kept() -> None:
    document = reply({"content": None, "refusal": "I can't help with that."})
    document["model"] = "/models/small.gguf"
    mapped = parse_reply(document)
    assert mapped == ModelReply(
        None, (), 0, 0, refusal="I can't help with that.", model="/models/small.gguf"
    )


def test_text_beside_tool_calls_is_kept() -> None:
    mapped = parse_reply(reply({"content": "Let me look.", "tool_calls": [call("{}", id="c1")]}))
    assert mapped.content == "Let me look."
    assert mapped.tool_calls == (ToolCallRequest("c1", "echo", {}),)


def test_ids_for_calls_without_one_come_from_the_caller() -> None:
    made = iter(["generated_call_7", "generated_call_8"])
    mapped = parse_reply(reply({"tool_calls": [call("{}"), call("{}")]}), lambda _: next(made))
    assert [c.call_id for c in mapped.tool_calls] == ["generated_call_7", "generated_call_8"]


def test_two_calls_with_one_id_are_a_run_error() -> None:
    with pytest.raises(RunError, match=r"tool_calls\[1\]\.id='c1': the same id as tool_calls\[0\]"):
        parse_reply(reply({"tool_calls": [call("{}", id="c1"), call("{}", id="c1")]}))
