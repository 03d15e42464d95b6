"""The OpenAI Responses API on the model bridge, driven by the official ``openai`` SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_bridge import LONG_TEXT, Script, client_for
from zeroclaw_eval.bridge.server import ModelBridge
from zeroclaw_eval.bridge.wire import CODE_SCRIPT_EXHAUSTED
from zeroclaw_eval.protocol import ModelReply, ToolCallRequest

ECHO = {
    "type": "function",
    "name": "echo",
    "description": "Echo back the given message.",
    "parameters": {"type": "object", "properties": {"message": {"type": "string"}}},
}
CHAT_ECHO = {
    "type": "function",
    "function": {key: ECHO[key] for key in ("name", "description", "parameters")},
}


@pytest.fixture
def bridge() -> Iterator[ModelBridge]:
    with ModelBridge() as running:
        yield running


def calls_reply() -> ModelReply:
    return ModelReply(
        None,
        (
            ToolCallRequest("call_a1", "echo", {"message": "héllo, a message longer than a piece"}),
            ToolCallRequest("call_b2", "echo", {"message": "two"}),
        ),
        input_tokens=9,
        output_tokens=4,
    )


def test_a_text_reply_is_a_response_with_output_text(bridge: ModelBridge) -> None:
    script = Script(ModelReply("hello back", (), input_tokens=12, output_tokens=3))
    with bridge.open_route("text", script) as route:
        response = client_for(route).responses.create(
            model="gpt-test", instructions="Be brief.", input="Say hello"
        )

    assert response.id.startswith("resp_")
    assert (response.object, response.status, response.model) == (
        "response",
        "completed",
        "gpt-test",
    )
    assert response.output_text == "hello back"
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 3)
    assert response.usage.total_tokens == 15
    [request] = route.requests
    assert (request.api, request.stream) == ("responses", False)
    assert request.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Say hello"},
    ]
    assert route.errors == []


def test_function_calls_and_their_outputs_become_chat_tool_calls_and_tool_messages(
    bridge: ModelBridge,
) -> None:
    script = Script(calls_reply(), ModelReply("done", ()))
    with bridge.open_route("calls", script) as route:
        client = client_for(route)
        first = client.responses.create(
            model="m", input=[{"role": "user", "content": "Echo"}], tools=[ECHO]
        )
        calls = [item for item in first.output if item.type == "function_call"]
        assert [(c.call_id, c.name) for c in calls] == [("call_a1", "echo"), ("call_b2", "echo")]
        assert [json.loads(c.arguments) for c in calls] == [
            {"message": "héllo, a message longer than a piece"},
            {"message": "two"},
        ]
        # A stateless agent sends the whole conversation back, calls included.
        follow_up: list[Any] = [
            {"role": "user", "content": "Echo"},
            *[call.model_dump(exclude_none=True) for call in calls],
            {"type": "function_call_output", "call_id": "call_a1", "output": "héllo"},
            {
                "type": "function_call_output",
                "call_id": "call_b2",
                "output": [
                    {"type": "input_text", "text": "tw"},
                    {"type": "input_text", "text": "o"},
                ],
            },
        ]
        second = client.responses.create(model="m", input=follow_up, tools=[ECHO])

    assert second.output_text == "done"
    seen = route.requests[1]
    assert seen.tools == [CHAT_ECHO]
    assert seen.messages[1]["role"] == "assistant"
    assert [c["id"] for c in seen.messages[1]["tool_calls"]] == ["call_a1", "call_b2"]
    assert all(isinstance(c["function"]["arguments"], str) for c in seen.messages[1]["tool_calls"])
    assert seen.messages[2:] == [
        {"role": "tool", "tool_call_id": "call_a1", "content": "héllo"},
        {"role": "tool", "tool_call_id": "call_b2", "content": "two"},
    ]
    assert route.errors == []


def test_previous_response_id_continues_the_stored_conversation(bridge: ModelBridge) -> None:
    script = Script(calls_reply(), ModelReply("done", ()))
    with bridge.open_route("chained", script) as route:
        client = client_for(route)
        first = client.responses.create(model="m", input="Echo twice", tools=[ECHO])
        outputs = [
            {"type": "function_call_output", "call_id": item.call_id, "output": "echoed"}
            for item in first.output
            if item.type == "function_call"
        ]
        second = client.responses.create(
            model="m", input=outputs, previous_response_id=first.id, tools=[ECHO]
        )
        with pytest.raises(openai.BadRequestError) as unknown:
            client.responses.create(model="m", input="more", previous_response_id="resp_nope")

    assert second.output_text == "done"
    messages = route.requests[1].messages
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["call_a1", "call_b2"]
    assert unknown.value.code == "previous_response_not_found"
    assert route.errors == [
        "malformed request: previous_response_id 'resp_nope' is no response of this case"
    ]


def test_streamed_text_and_calls_are_reassembled_by_the_stream_helper(bridge: ModelBridge) -> None:
    script = Script(calls_reply(), ModelReply(LONG_TEXT, (), input_tokens=2, output_tokens=5))
    with bridge.open_route("stream", script) as route:
        client = client_for(route)
        with client.responses.stream(model="m", input="Echo", tools=[ECHO]) as stream:
            done = [
                (event.name, event.arguments)
                for event in stream
                if event.type == "response.function_call_arguments.done"
            ]
            calls = stream.get_final_response()
        with client.responses.stream(model="m", input="Say it") as stream:
            deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
            text = stream.get_final_response()

    assert done == [
        ("echo", '{"message": "héllo, a message longer than a piece"}'),
        ("echo", '{"message": "two"}'),
    ]
    assert [item.call_id for item in calls.output if item.type == "function_call"] == [
        "call_a1",
        "call_b2",
    ]
    assert "".join(deltas) == LONG_TEXT and len(deltas) > 1
    assert text.output_text == LONG_TEXT
    assert text.usage is not None and text.usage.total_tokens == 7
    assert all(request.stream for request in route.requests)


def test_stream_true_yields_the_api_events_in_order(bridge: ModelBridge) -> None:
    with bridge.open_route("events", Script(ModelReply("hi", ()))) as route:
        events = list(client_for(route).responses.create(model="m", input="x", stream=True))

    assert [event.type for event in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [event.sequence_number for event in events] == list(range(len(events)))


@pytest.mark.parametrize("stream", [False, True])
def test_an_exhausted_script_is_a_400_not_retried(bridge: ModelBridge, stream: bool) -> None:
    script = Script()
    route = bridge.open_route("dry", script)
    with route, pytest.raises(openai.BadRequestError) as raised:
        client_for(route, max_retries=4).responses.create(model="m", input="x", stream=stream)
    assert raised.value.code == CODE_SCRIPT_EXHAUSTED
    assert len(script.seen) == 1
    assert route.errors == ["turn 0: the agent requested more responses than scripted"]


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (
            {"input": "x", "tools": [{"type": "web_search"}]},
            "malformed request: tools[0] is a web_search tool; "
            "the bridge carries function tools only",
        ),
        (
            {"input": [{"type": "computer_call", "id": "c"}]},
            "malformed request: input[0] is a computer_call item; the bridge cannot carry it",
        ),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
            "malformed request: input[0].content[0] is a input_image part; "
            "the bridge carries text parts only",
        ),
    ],
)
def test_what_the_bridge_cannot_carry_is_refused_and_recorded(
    bridge: ModelBridge, options: dict[str, Any], error: str
) -> None:
    script = Script(ModelReply("never", ()))
    route = bridge.open_route("refused", script)
    with route, pytest.raises(openai.BadRequestError) as raised:
        client_for(route).responses.create(model="m", **options)
    assert raised.value.message.endswith(error)
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
        ToolCallRequest(f"call_{index}", "echo", arguments) for index, arguments in enumerate(calls)
    )
    reply = ModelReply(text, requests, input_tokens=3, output_tokens=len(text))
    with ModelBridge() as running, running.open_route("any", Script(reply)) as route:
        manager = client_for(route).responses.stream(model="m", input="x")
        with manager as stream:
            final = stream.get_final_response()

    texts = [item for item in final.output if item.type == "message"]
    if text or not calls:
        assert final.output_text == text and len(texts) == 1
    else:
        assert texts == []
    streamed = [
        (item.call_id, json.loads(item.arguments))
        for item in final.output
        if item.type == "function_call"
    ]
    assert streamed == [(call.call_id, call.arguments) for call in requests]
    assert final.usage is not None and final.usage.output_tokens == len(text)
