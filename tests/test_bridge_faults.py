"""Scripted model faults on every wire of the bridge, as the official SDKs meet them.

Each test replays a fixture's steps (the real ``replay`` provider) through a real
:class:`ModelBridge`, and talks to it with an unmodified ``openai`` or ``anthropic``
client: an HTTP error in the provider's own shape (status, body, ``Retry-After``),
which the SDK retries by itself, asking for the next step; a reply cut for length;
arguments that are not JSON; a connection that drops in the middle of a tool call;
a slow reply that meets the client's timeout. None is a failure of the route.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import anthropic
import openai
import pytest

from zeroclaw_eval.bridge.server import ModelBridge
from zeroclaw_eval.bridge.wire import BridgeRequest, BridgeRoute
from zeroclaw_eval.builtin.replay import ReplayProvider
from zeroclaw_eval.case.fixture import LlmTrace
from zeroclaw_eval.protocol import ModelReply

USER = [{"role": "user", "content": "Echo hello"}]
ECHO = {"id": "call_1", "name": "echo", "arguments": {"message": "hello, a message long enough"}}
TEXT = {"response": {"type": "text", "content": "done"}}


@pytest.fixture
def bridge() -> Iterator[ModelBridge]:
    with ModelBridge() as running:
        yield running


def replay(*steps: dict[str, Any]) -> Any:
    """The replay provider of a one-turn case scripting ``steps``, as a route's answer."""
    trace = LlmTrace.model_validate(
        {
            "model_name": "faults",
            "turns": [{"user_input": "Echo hello", "steps": list(steps)}],
            "expects": {"response_contains": ["x"]},
        }
    )
    provider = ReplayProvider(trace)
    provider.begin_turn(0)

    def answer(request: BridgeRequest) -> ModelReply:
        return provider.respond(request.messages, [])

    return answer


def chat(route: BridgeRoute, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=route.base_url, api_key=route.api_key, **options)


def claude(route: BridgeRoute, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=route.root_url, api_key=route.api_key, **options)


def post(url: str, key: str, body: dict[str, Any]) -> bytes:
    """POST ``body`` to ``url`` over a raw socket and read until the server closes it:
    the bytes as sent, chunk framing included."""
    parts = urlsplit(url)
    data = json.dumps(body).encode()
    head = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nx-api-key: {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        "Connection: close\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.encode() + data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def http_error(status: int, **more: Any) -> dict[str, Any]:
    return {"response": {"type": "http_error", "status": status, **more}}


# --- HTTP errors ---------------------------------------------------------------------


def test_a_scripted_500_without_retry_after_leaves_the_retry_to_the_client(
    bridge: ModelBridge,
) -> None:
    # The OpenAI SDK retries a 500 unless told not to: a scripted one never tells it,
    # so the client's own retry logic is what the case exercises.
    with bridge.open_route("500", replay(http_error(500), TEXT)) as route:
        reply = chat(route, max_retries=1).chat.completions.create(model="m", messages=USER)
        assert route.errors == []
    assert reply.choices[0].message.content == "done"  # the retry got the next step


def test_a_429_is_the_openai_rate_limit_error_with_its_retry_after(bridge: ModelBridge) -> None:
    with bridge.open_route("429", replay(http_error(429, retry_after=7), TEXT)) as route:
        with pytest.raises(openai.RateLimitError) as raised:
            chat(route, max_retries=0).chat.completions.create(model="m", messages=USER)
        assert route.errors == []  # scripted: no failure of the route
    error = raised.value
    assert error.status_code == 429
    assert error.response.headers["retry-after"] == "7"
    assert "x-should-retry" not in error.response.headers  # the client decides
    # Nothing says it is scripted: an agent cannot tell it from a provider's own.
    assert not [name for name in error.response.headers if "zeroclaw" in name.lower()]
    assert error.body == {
        "message": "Rate limit reached; retry later",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }


def test_the_sdk_retries_a_429_after_its_retry_after_and_gets_the_next_step(
    bridge: ModelBridge,
) -> None:
    with bridge.open_route("retry", replay(http_error(429, retry_after=1), TEXT)) as route:
        started = time.monotonic()
        completion = chat(route, max_retries=2).chat.completions.create(model="m", messages=USER)
        waited = time.monotonic() - started
    assert completion.choices[0].message.content == "done"
    assert len(route.requests) == 2  # the retry asked for the next step
    assert waited >= 1.0  # the SDK honoured Retry-After


@pytest.mark.parametrize("stream", [False, True])
def test_a_500_on_the_responses_wire_is_a_server_error(bridge: ModelBridge, stream: bool) -> None:
    message = "the upstream is on fire"
    with bridge.open_route("500", replay(http_error(500, message=message), TEXT)) as route:
        client = chat(route, max_retries=0)
        with pytest.raises(openai.InternalServerError) as raised:
            client.responses.create(model="m", input="Echo hello", stream=stream)
        assert route.errors == []
    assert raised.value.status_code == 500
    assert raised.value.body == {
        "message": message,
        "type": "server_error",
        "param": None,
        "code": None,
    }


def test_a_529_is_anthropics_overloaded_error_in_its_own_shape(bridge: ModelBridge) -> None:
    route = bridge.open_route("529", replay(http_error(529, retry_after=3), TEXT))
    with route, pytest.raises(anthropic.APIStatusError) as raised:
        claude(route, max_retries=0).messages.create(model="claude", max_tokens=100, messages=USER)
    assert raised.value.status_code == 529
    assert raised.value.response.headers["retry-after"] == "3"
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_the_anthropic_sdk_retries_a_500_and_gets_the_next_step(bridge: ModelBridge) -> None:
    with bridge.open_route("retry", replay(http_error(500, retry_after=0), TEXT)) as route:
        message = claude(route, max_retries=1).messages.create(
            model="claude", max_tokens=100, messages=USER
        )
    assert [block.text for block in message.content if block.type == "text"] == ["done"]
    assert len(route.requests) == 2


# --- replies cut for length --------------------------------------------------------------

CUT = {"response": {"type": "text", "content": "The echo said hel", "finish": "length"}}


@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_cut_for_length_says_so_on_chat_completions(
    bridge: ModelBridge, stream: bool
) -> None:
    with bridge.open_route("cut", replay(CUT)) as route:
        client = chat(route, max_retries=0)
        if stream:
            chunks = list(client.chat.completions.create(model="m", messages=USER, stream=True))
            finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            completion = client.chat.completions.create(model="m", messages=USER)
            finish = completion.choices[0].finish_reason
            text = completion.choices[0].message.content or ""
    assert (finish, text) == ("length", "The echo said hel")


@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_cut_for_length_is_an_incomplete_response(
    bridge: ModelBridge, stream: bool
) -> None:
    with bridge.open_route("cut", replay(CUT)) as route:
        client = chat(route, max_retries=0)
        if stream:
            events = list(client.responses.create(model="m", input="Echo hello", stream=True))
            assert events[-1].type == "response.incomplete"
            response = events[-1].response
        else:
            response = client.responses.create(model="m", input="Echo hello")
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output_text == "The echo said hel"


@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_cut_for_length_stops_at_max_tokens_on_anthropic(
    bridge: ModelBridge, stream: bool
) -> None:
    with bridge.open_route("cut", replay(CUT)) as route:
        client = claude(route, max_retries=0)
        if stream:
            with client.messages.stream(model="c", max_tokens=5, messages=USER) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(model="c", max_tokens=5, messages=USER)
    assert message.stop_reason == "max_tokens"
    assert [block.text for block in message.content if block.type == "text"] == [
        "The echo said hel"
    ]


# --- arguments that are not JSON ------------------------------------------------------------

BROKEN = '{"message": "hel'
UNREADABLE = {
    "response": {
        "type": "tool_calls",
        "tool_calls": [{"id": "call_1", "name": "echo", "arguments_text": BROKEN}],
    }
}


@pytest.mark.parametrize("stream", [False, True])
def test_unreadable_arguments_are_sent_as_written_on_chat_completions(
    bridge: ModelBridge, stream: bool
) -> None:
    with bridge.open_route("args", replay(UNREADABLE)) as route:
        client = chat(route, max_retries=0)
        if stream:
            chunks = client.chat.completions.create(model="m", messages=USER, stream=True)
            arguments = "".join(
                call.function.arguments or ""
                for chunk in chunks
                if chunk.choices
                for call in chunk.choices[0].delta.tool_calls or ()
                if call.function is not None
            )
        else:
            completion = client.chat.completions.create(model="m", messages=USER)
            [call] = completion.choices[0].message.tool_calls or []
            arguments = call.function.arguments  # type: ignore[union-attr]
    assert arguments == BROKEN


def test_unreadable_arguments_are_sent_as_written_on_responses(bridge: ModelBridge) -> None:
    with bridge.open_route("args", replay(UNREADABLE)) as route:
        response = chat(route, max_retries=0).responses.create(model="m", input="Echo hello")
    [call] = [item for item in response.output if item.type == "function_call"]
    assert call.arguments == BROKEN  # type: ignore[union-attr]


def test_unreadable_arguments_stream_as_partial_json_on_anthropic(bridge: ModelBridge) -> None:
    with bridge.open_route("args", replay(UNREADABLE)) as route:
        body = {"model": "c", "max_tokens": 9, "messages": USER, "stream": True}
        raw = post(f"{route.root_url}/v1/messages", route.api_key, body).decode()
    deltas = [
        json.loads(line[6:])["delta"]
        for line in raw.splitlines()
        if line.startswith("data: ") and '"input_json_delta"' in line
    ]
    assert "".join(delta["partial_json"] for delta in deltas) == BROKEN


# --- a connection dropped in the middle of a tool call -----------------------------------------

DROPPED = {"response": {"type": "tool_calls", "dropped": True, "tool_calls": [ECHO]}}


@pytest.mark.parametrize("stream", [False, True])
def test_a_dropped_reply_is_a_connection_error_the_sdk_retries(
    bridge: ModelBridge, stream: bool
) -> None:
    with bridge.open_route("drop", replay(DROPPED, TEXT)) as route:
        client = chat(route, max_retries=0)
        with pytest.raises(openai.APIConnectionError):
            reply = client.chat.completions.create(model="m", messages=USER, stream=stream)
            if stream:
                list(reply)  # type: ignore[arg-type]
        assert route.errors == []
    if stream:
        return
    with bridge.open_route("drop", replay(DROPPED, TEXT)) as route:
        completion = chat(route, max_retries=1).chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "done"
    assert len(route.requests) == 2


@pytest.mark.parametrize("path", ["/v1/responses", "/v1/messages"])
def test_a_dropped_stream_ends_inside_the_tool_call_on_every_wire(
    bridge: ModelBridge, path: str
) -> None:
    body = {"model": "m", "max_tokens": 9, "input": "hi", "messages": USER, "stream": True}
    with bridge.open_route("drop", replay(DROPPED)) as route:
        received = post(route.root_url + path, route.api_key, body)
        assert route.errors == []
    text = received.decode()
    assert text.startswith("HTTP/1.1 200 OK")
    assert "call_1" in text  # the call was opened...
    assert "message_stop" not in text and "response.completed" not in text  # ...never ended
    assert not text.endswith("0\r\n\r\n")  # and the chunked body has no end


# --- a slow reply -----------------------------------------------------------------------------


def test_a_delay_meets_the_clients_timeout_and_its_retry_gets_the_next_step(
    bridge: ModelBridge,
) -> None:
    slow = {**TEXT, "delay_s": 3.0}
    fast = {"response": {"type": "text", "content": "in time"}}
    with bridge.open_route("slow", replay(slow, fast)) as route:
        # A timeout far from both the delay and an answer at once, even on a busy machine.
        client = chat(route, max_retries=1, timeout=1.5)
        completion = client.chat.completions.create(model="m", messages=USER)
    assert completion.choices[0].message.content == "in time"
    assert len(route.requests) == 2
