"""The Anthropic Messages API on the model bridge, driven by the official ``anthropic`` SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_bridge import LONG_TEXT, Script
from zeroclaw_eval.bridge.server import ModelBridge
from zeroclaw_eval.bridge.wire import BridgeRoute
from zeroclaw_eval.protocol import ModelReply, ToolCallRequest

ECHO = {
    "name": "echo",
    "description": "Echo back the given message.",
    "input_schema": {"type": "object", "properties": {"message": {"type": "string"}}},
}
USER = [{"role": "user", "content": "Echo hello"}]


@pytest.fixture
def bridge() -> Iterator[ModelBridge]:
    with ModelBridge() as running:
        yield running


def client_for(route: BridgeRoute, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=route.root_url, api_key=route.api_key, **options)


def calls_reply() -> ModelReply:
    return ModelReply(
        None,
        (
            ToolCallRequest(
                "toolu_a1", "echo", {"message": "héllo, a message longer than a piece"}
            ),
            ToolCallRequest("toolu_b2", "echo", {"message": "two"}),
        ),
        input_tokens=9,
        output_tokens=4,
    )


def test_a_text_reply_is_a_message_with_a_text_block(bridge: ModelBridge) -> None:
    script = Script(ModelReply("hello back", (), input_tokens=12, output_tokens=3))
    with bridge.open_route("text", script) as route:
        message = client_for(route).messages.create(
            model="claude-test", max_tokens=64, system="Be brief.", messages=USER
        )

    assert message.id.startswith("msg_")
    assert (message.type, message.role, message.model) == ("message", "assistant", "claude-test")
    assert [(block.type, getattr(block, "text", None)) for block in message.content] == [
        ("text", "hello back")
    ]
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (12, 3)
    [request] = route.requests
    assert (request.api, request.stream) == ("anthropic.messages", False)
    assert request.messages == [{"role": "system", "content": "Be brief."}, *USER]
    assert route.errors == []


def test_tool_use_and_tool_result_blocks_become_chat_tool_calls_and_tool_messages(
    bridge: ModelBridge,
) -> None:
    script = Script(calls_reply(), ModelReply("done", ()))
    with bridge.open_route("tools", script) as route:
        client = client_for(route)
        first = client.messages.create(model="m", max_tokens=64, messages=USER, tools=[ECHO])
        uses = [block for block in first.content if block.type == "tool_use"]
        assert first.stop_reason == "tool_use"
        assert [(use.id, use.name, use.input) for use in uses] == [
            ("toolu_a1", "echo", {"message": "héllo, a message longer than a piece"}),
            ("toolu_b2", "echo", {"message": "two"}),
        ]
        follow_up: list[Any] = [
            *USER,
            {"role": "assistant", "content": [use.model_dump(exclude_none=True) for use in uses]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a1", "content": "héllo"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_b2",
                        "content": [{"type": "text", "text": "two"}],
                    },
                    {"type": "text", "text": "Thanks."},
                ],
            },
        ]
        second = client.messages.create(model="m", max_tokens=64, messages=follow_up, tools=[ECHO])

    assert [block.type for block in second.content] == ["text"]
    seen = route.requests[1]
    assert seen.tools == [
        {
            "type": "function",
            "function": {
                "name": "echo",
                "description": ECHO["description"],
                "parameters": ECHO["input_schema"],
            },
        }
    ]
    calls = seen.messages[1]["tool_calls"]
    assert [call["id"] for call in calls] == ["toolu_a1", "toolu_b2"]
    assert [json.loads(call["function"]["arguments"]) for call in calls] == [
        {"message": "héllo, a message longer than a piece"},
        {"message": "two"},
    ]
    assert seen.messages[2:] == [
        {"role": "tool", "tool_call_id": "toolu_a1", "content": "héllo"},
        {"role": "tool", "tool_call_id": "toolu_b2", "content": "two"},
        {"role": "user", "content": "Thanks."},
    ]
    assert route.errors == []


def test_streamed_text_and_tool_use_are_reassembled_by_the_stream_helper(
    bridge: ModelBridge,
) -> None:
    script = Script(calls_reply(), ModelReply(LONG_TEXT, (), input_tokens=2, output_tokens=5))
    with bridge.open_route("stream", script) as route:
        client = client_for(route)
        with client.messages.stream(
            model="m", max_tokens=64, messages=USER, tools=[ECHO]
        ) as stream:
            json_pieces = [e.partial_json for e in stream if e.type == "input_json"]
            calls = stream.get_final_message()
        with client.messages.stream(model="m", max_tokens=64, messages=USER) as stream:
            texts = list(stream.text_stream)
            text = stream.get_final_message()

    assert len(json_pieces) > 2  # the arguments really arrived in pieces
    assert [(b.id, b.input) for b in calls.content if b.type == "tool_use"] == [
        ("toolu_a1", {"message": "héllo, a message longer than a piece"}),
        ("toolu_b2", {"message": "two"}),
    ]
    assert calls.stop_reason == "tool_use"
    assert "".join(texts) == LONG_TEXT and len(texts) > 1
    assert [getattr(block, "text", None) for block in text.content] == [LONG_TEXT]
    assert (text.usage.input_tokens, text.usage.output_tokens) == (2, 5)
    assert text.stop_reason == "end_turn"
    assert all(request.stream for request in route.requests)


@pytest.mark.parametrize("stream", [False, True])
def test_an_exhausted_script_is_a_400_in_anthropic_shape_not_retried(
    bridge: ModelBridge, stream: bool
) -> None:
    script = Script()
    route = bridge.open_route("dry", script)
    with route, pytest.raises(anthropic.BadRequestError) as raised:
        client_for(route, max_retries=4).messages.create(
            model="m", max_tokens=64, messages=USER, stream=stream
        )
    message = "turn 0: the agent requested more responses than scripted"
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
    }
    assert len(script.seen) == 1
    assert route.errors == [message]


def test_a_wrong_key_is_a_401(bridge: ModelBridge) -> None:
    script = Script(ModelReply("never", ()))
    with bridge.open_route("auth", script) as route:
        client = anthropic.Anthropic(base_url=route.root_url, api_key="sk-ant-wrong")
        with pytest.raises(anthropic.AuthenticationError):
            client.messages.create(model="m", max_tokens=64, messages=USER)
    assert script.seen == []


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        (
            [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": "AA=="},
                        }
                    ],
                }
            ],
            "malformed request: messages[0].content[0] is a image block; "
            "the bridge cannot carry it",
        ),
        (
            [{"role": "system", "content": "x"}],
            "malformed request: messages[0].role must be user or assistant",
        ),
    ],
)
def test_what_the_bridge_cannot_carry_is_refused_and_recorded(
    bridge: ModelBridge, messages: list[Any], error: str
) -> None:
    script = Script(ModelReply("never", ()))
    route = bridge.open_route("refused", script)
    with route, pytest.raises(anthropic.BadRequestError):
        client_for(route).messages.create(model="m", max_tokens=64, messages=messages)
    assert script.seen == []
    assert route.errors == [error]


@settings(max_examples=20, deadline=None)
@given(
    text=st.text(max_size=100),
    calls=st.lists(
        st.dictionaries(st.text(max_size=8), st.text(max_size=40), max_size=3), max_size=3
    ),
)
def test_any_reply_streams_back_to_exactly_itself(text: str, calls: list[dict[str, str]]) -> None:
    requests = tuple(
        ToolCallRequest(f"toolu_{index}", "echo", arguments)
        for index, arguments in enumerate(calls)
    )
    reply = ModelReply(text, requests, input_tokens=3, output_tokens=len(text))
    with ModelBridge() as running, running.open_route("any", Script(reply)) as route:
        manager = client_for(route).messages.stream(model="m", max_tokens=64, messages=USER)
        with manager as stream:
            final = stream.get_final_message()

    texts = [block.text for block in final.content if block.type == "text"]
    assert texts == ([text] if text or not calls else [])
    uses = [(block.id, block.input) for block in final.content if block.type == "tool_use"]
    assert uses == [(call.call_id, call.arguments) for call in requests]
    assert final.stop_reason == ("tool_use" if calls else "end_turn")
    assert final.usage.output_tokens == len(text)
