"""The model bridge, driven by the official ``openai`` SDK over real loopback HTTP.

Every test starts a real :class:`ModelBridge` on 127.0.0.1 and talks to it as an
agent would: through an unmodified ``openai.OpenAI`` client (or raw
``http.client`` where the point is a request no SDK would send).
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zeroclaw_eval.bridge import server as bridge_module
from zeroclaw_eval.bridge.chat import DEFAULT_MODEL
from zeroclaw_eval.bridge.server import ModelBridge
from zeroclaw_eval.bridge.wire import (
    CODE_RUN_ERROR,
    CODE_SCRIPT_EXHAUSTED,
    STREAM_PIECE_CHARS,
    BridgeRequest,
    BridgeRoute,
)
from zeroclaw_eval.errors import RunError
from zeroclaw_eval.protocol import ModelReply, ToolCallRequest

USER = [{"role": "user", "content": "Echo hello"}]
ECHO_TOOL = {
    "type": "function",
    "function": {
        "name": "echo",
        "description": "Echo back the given message.",
        "parameters": {"type": "object", "properties": {"message": {"type": "string"}}},
    },
}
LONG_TEXT = "The echo tool said: héllo wörld — 你好, 👋🏽 and a sentence long enough to stream."


class Script:
    """Answers from a list of replies; one more request is a :class:`RunError`, as in replay."""

    def __init__(self, *replies: ModelReply) -> None:
        self.replies = list(replies)
        self.seen: list[BridgeRequest] = []

    def __call__(self, request: BridgeRequest) -> ModelReply:
        self.seen.append(request)
        if not self.replies:
            raise RunError("turn 0: the agent requested more responses than scripted")
        return self.replies.pop(0)


@pytest.fixture
def bridge() -> Iterator[ModelBridge]:
    with ModelBridge() as running:
        yield running


def client_for(route: BridgeRoute, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=route.base_url, api_key=route.api_key, **options)


def two_echo_calls() -> ModelReply:
    return ModelReply(
        None,
        (
            ToolCallRequest("call_a1", "echo", {"message": "héllo, a message longer than a piece"}),
            ToolCallRequest("call_b2", "echo", {"message": "two", "n": [1, 2]}),
            ToolCallRequest("call_c3", "shell", {}),
        ),
        input_tokens=11,
        output_tokens=7,
    )


def test_plain_text_reply_is_a_chat_completion(bridge: ModelBridge) -> None:
    script = Script(ModelReply("hello back", (), input_tokens=12, output_tokens=3))
    with bridge.open_route("greeting", script) as route:
        completion = client_for(route).chat.completions.create(model="gpt-test", messages=USER)

    assert completion.id.startswith("chatcmpl-")
    assert completion.object == "chat.completion"
    assert completion.model == "gpt-test"
    choice = completion.choices[0]
    assert (choice.message.role, choice.message.content) == ("assistant", "hello back")
    assert choice.message.tool_calls is None
    assert choice.finish_reason == "stop"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (12, 3)
    assert completion.usage.total_tokens == 15
    [request] = route.requests
    assert (request.api, request.model, request.stream) == ("chat.completions", "gpt-test", False)
    assert request.messages == USER
    assert request.tools == []
    assert route.errors == []


def test_several_tool_calls_keep_their_ids_and_string_arguments(bridge: ModelBridge) -> None:
    script = Script(two_echo_calls(), ModelReply("done", ()))
    with bridge.open_route("tools", script) as route:
        client = client_for(route)
        first = client.chat.completions.create(model="m", messages=USER, tools=[ECHO_TOOL])
        message = first.choices[0].message
        assert first.choices[0].finish_reason == "tool_calls"
        assert message.tool_calls is not None
        calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls]
        assert [call[:2] for call in calls] == [
            ("call_a1", "echo"),
            ("call_b2", "echo"),
            ("call_c3", "shell"),
        ]
        assert [json.loads(call[2]) for call in calls] == [
            {"message": "héllo, a message longer than a piece"},
            {"message": "two", "n": [1, 2]},
            {},
        ]
        # The agent sends the results back, one as a list of text parts.
        follow_up = [
            *USER,
            message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": "call_a1", "content": "héllo"},
            {
                "role": "tool",
                "tool_call_id": "call_b2",
                "content": [{"type": "text", "text": "tw"}, {"type": "text", "text": "o"}],
            },
            {"role": "tool", "tool_call_id": "call_c3", "content": "unknown tool"},
        ]
        second = client.chat.completions.create(model="m", messages=follow_up, tools=[ECHO_TOOL])

    assert second.choices[0].message.content == "done"
    seen = route.requests[1]
    assert seen.tools == [ECHO_TOOL]
    assistant = seen.messages[1]
    assert [call["id"] for call in assistant["tool_calls"]] == ["call_a1", "call_b2", "call_c3"]
    assert all(isinstance(call["function"]["arguments"], str) for call in assistant["tool_calls"])
    assert [(m["tool_call_id"], m["content"]) for m in seen.messages[2:]] == [
        ("call_a1", "héllo"),
        ("call_b2", "two"),
        ("call_c3", "unknown tool"),
    ]
    assert route.errors == []


def test_streamed_text_is_reassembled_by_iterating_the_sdk_stream(bridge: ModelBridge) -> None:
    script = Script(ModelReply(LONG_TEXT, (), input_tokens=4, output_tokens=9))
    with bridge.open_route("stream-text", script) as route:
        stream = client_for(route).chat.completions.create(model="m", messages=USER, stream=True)
        chunks = list(stream)

    pieces = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert "".join(pieces) == LONG_TEXT
    assert len(pieces) == -(-len(LONG_TEXT) // STREAM_PIECE_CHARS)  # really streamed in pieces
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert all(c.usage is None for c in chunks)  # no include_usage, no usage chunk
    assert route.requests[0].stream is True


def test_streamed_tool_calls_are_reassembled_by_the_stream_helper(bridge: ModelBridge) -> None:
    script = Script(two_echo_calls())
    with bridge.open_route("stream-tools", script) as route:
        manager = client_for(route).chat.completions.stream(
            model="m",
            messages=USER,
            tools=[ECHO_TOOL],
            stream_options={"include_usage": True},
        )
        with manager as stream:
            done = [
                (event.name, event.arguments)
                for event in stream
                if event.type == "tool_calls.function.arguments.done"
            ]
            final = stream.get_final_completion()

    assert done == [
        ("echo", '{"message": "héllo, a message longer than a piece"}'),
        ("echo", '{"message": "two", "n": [1, 2]}'),
        ("shell", "{}"),
    ]
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls is not None
    assert [call.id for call in choice.message.tool_calls] == ["call_a1", "call_b2", "call_c3"]
    assert final.usage is not None
    assert (final.usage.prompt_tokens, final.usage.completion_tokens) == (11, 7)
    assert route.errors == []


def test_streamed_text_with_usage_through_the_stream_helper(bridge: ModelBridge) -> None:
    script = Script(ModelReply(LONG_TEXT, (), input_tokens=21, output_tokens=8))
    with bridge.open_route("stream-usage", script) as route:
        manager = client_for(route).chat.completions.stream(
            model="m", messages=USER, stream_options={"include_usage": True}
        )
        with manager as stream:
            deltas = [event.delta for event in stream if event.type == "content.delta"]
            final = stream.get_final_completion()

    assert "".join(deltas) == LONG_TEXT
    assert final.choices[0].message.content == LONG_TEXT
    assert final.choices[0].finish_reason == "stop"
    assert final.usage is not None
    assert final.usage.total_tokens == 29


def test_streamed_text_before_tool_calls_keeps_both(bridge: ModelBridge) -> None:
    calls = (ToolCallRequest("call_9", "echo", {"message": "x" * 70}),)
    script = Script(ModelReply("Let me echo that for you first.", calls))
    with bridge.open_route("stream-both", script) as route:
        manager = client_for(route).chat.completions.stream(model="m", messages=USER)
        with manager as stream:
            final = stream.get_final_completion()

    message = final.choices[0].message
    assert message.content == "Let me echo that for you first."
    assert message.tool_calls is not None
    assert [(c.id, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        ("call_9", {"message": "x" * 70})
    ]
    assert final.choices[0].finish_reason == "tool_calls"


def test_models_lists_the_default_then_the_models_asked_for(bridge: ModelBridge) -> None:
    with bridge.open_route("models", Script(ModelReply("a", ()))) as route:
        client = client_for(route)
        before = [model.id for model in client.models.list()]
        client.chat.completions.create(model="gpt-4o-mini", messages=USER)
        after = [model.id for model in client.models.list()]
        retrieved = client.models.retrieve("gpt-4o-mini")

    assert before == [DEFAULT_MODEL]
    assert after == ["gpt-4o-mini"]
    assert retrieved.id == "gpt-4o-mini"


def test_a_wrong_key_is_a_401_the_sdk_raises_on(bridge: ModelBridge) -> None:
    script = Script(ModelReply("never sent", ()))
    with bridge.open_route("auth", script) as route:
        # The route's own path: the wrong key is recorded on the route it names.
        client = openai.OpenAI(base_url=f"{bridge.url}/r/{route.token}/v1", api_key="zc-x-y")
        with pytest.raises(openai.AuthenticationError) as raised:
            client.chat.completions.create(model="m", messages=USER)
        status, reply = raw_post(route, b"{}", authorization=None)

    assert raised.value.status_code == 401
    assert raised.value.code == "invalid_api_key"
    assert (status, reply["error"]["code"]) == (401, "invalid_api_key")  # no key at all
    assert script.seen == []
    assert (
        route.errors == ["a request with a missing or wrong API key (use the route's api_key)"] * 2
    )


def test_another_routes_key_does_not_open_a_route(bridge: ModelBridge) -> None:
    with (
        bridge.open_route("one", Script(ModelReply("one", ()))) as one,
        bridge.open_route("two", Script(ModelReply("two", ()))) as two,
    ):
        crossed = openai.OpenAI(base_url=f"{bridge.url}/r/{one.token}/v1", api_key=two.api_key)
        with pytest.raises(openai.AuthenticationError):
            crossed.chat.completions.create(model="m", messages=USER)
        assert one.requests == [] and two.requests == []
        # On the run's base URL, the key is the route: two's key reaches two alone.
        assert one.base_url == two.base_url == f"{bridge.url}/v1"
        shared = openai.OpenAI(base_url=one.base_url, api_key="unused")
        reply = shared.with_options(api_key=two.api_key).chat.completions.create(
            model="m", messages=USER
        )
    assert reply.choices[0].message.content == "two"
    assert one.requests == [] and len(two.requests) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_an_exhausted_script_is_a_400_recorded_and_not_retried(
    bridge: ModelBridge, stream: bool
) -> None:
    script = Script()
    with bridge.open_route("exhausted", script) as route:
        client = client_for(route, max_retries=5)
        with pytest.raises(openai.BadRequestError) as raised:
            client.chat.completions.create(model="m", messages=USER, stream=stream)

    message = "turn 0: the agent requested more responses than scripted"
    assert raised.value.status_code == 400
    assert raised.value.code == CODE_SCRIPT_EXHAUSTED
    assert raised.value.type == "invalid_request_error"
    assert raised.value.body == {
        "message": message,
        "type": "invalid_request_error",
        "param": None,
        "code": CODE_SCRIPT_EXHAUSTED,
    }
    assert len(script.seen) == 1  # asked once: the SDK did not retry
    assert route.errors == [message]
    assert len(route.requests) == 1


def test_an_answer_that_crashes_is_a_recorded_400_not_a_retried_500(bridge: ModelBridge) -> None:
    calls = 0

    def broken(request: BridgeRequest) -> ModelReply:
        nonlocal calls
        calls += 1
        raise KeyError("steps")

    route = bridge.open_route("crash", broken)
    with route, pytest.raises(openai.BadRequestError) as raised:
        client_for(route, max_retries=3).chat.completions.create(model="m", messages=USER)

    assert raised.value.code == CODE_RUN_ERROR
    assert calls == 1
    assert route.errors == ["answering failed: KeyError: 'steps'"]


def raw_post(
    route: BridgeRoute, body: bytes, *, authorization: str | None = "route"
) -> tuple[int, Any]:
    """POST ``body`` as is to the route's chat completions, on its own path; the status
    and decoded reply.

    ``authorization`` is the route's key by default, ``None`` for no header at all.
    """
    host, port = route.base_url.split("//")[1].split("/")[0].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        prefix = f"/r/{route.token}/v1"
        headers = {"Content-Type": "application/json"}
        if authorization is not None:
            headers["Authorization"] = f"Bearer {route.api_key}"
        connection.request("POST", prefix + "/chat/completions", body, headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"{not json", "malformed request: the body is not JSON"),
        (b"[1, 2]", "malformed request: the body is not a JSON object"),
        (b'{"model": "m"}', "malformed request: messages must be a non-empty list"),
        (b'{"messages": [{"role": "user", "content": "x"}]}', "malformed request: model must be"),
        (b'{"model": "m", "messages": [{"content": "x"}]}', "malformed request: messages[0].role"),
        (
            b'{"model": "m", "messages": [{"role": "tool", "content": "x"}]}',
            "malformed request: messages[0].tool_call_id is missing",
        ),
        (
            b'{"model": "m", "messages": [{"role": "user", "content": '
            b'[{"type": "image_url", "image_url": {"url": "x"}}]}]}',
            "malformed request: messages[0].content[0] is a image_url part",
        ),
        (
            b'{"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"id": "c", '
            b'"type": "function", "function": {"name": "echo", "arguments": {}}}]}]}',
            "malformed request: messages[0].tool_calls[0].function.arguments must be a string",
        ),
        (
            b'{"model": "m", "messages": [{"role": "user"}], "stream": "yes"}',
            "malformed request: stream must be true or false",
        ),
    ],
)
def test_a_malformed_request_is_refused_and_recorded(
    bridge: ModelBridge, body: bytes, error: str
) -> None:
    script = Script(ModelReply("never", ()))
    with bridge.open_route("malformed", script) as route:
        status, reply = raw_post(route, body)

    assert status == 400
    assert reply["error"]["type"] == "invalid_request_error"
    assert reply["error"]["message"].startswith(error)
    assert script.seen == []
    assert len(route.errors) == 1 and route.errors[0].startswith(error)


def test_an_unknown_endpoint_on_a_route_is_a_recorded_404(bridge: ModelBridge) -> None:
    route = bridge.open_route("embeddings", Script())
    with route, pytest.raises(openai.NotFoundError):
        client_for(route).embeddings.create(model="m", input="x")
    assert route.errors == ["the bridge does not serve POST /v1/embeddings"]


def test_unknown_and_closed_routes_are_404_and_never_hang(bridge: ModelBridge) -> None:
    unknown = openai.OpenAI(base_url=f"{bridge.url}/r/0123456789abcdef/v1", api_key="k")
    with pytest.raises(openai.NotFoundError) as raised:
        unknown.chat.completions.create(model="m", messages=USER)
    assert raised.value.code == "unknown_route"
    for key in ("k", f"zc-{'0' * 16}-{'1' * 32}"):  # no route's key, or an unknown route's
        outside = openai.OpenAI(base_url=f"{bridge.url}/v1", api_key=key)
        with pytest.raises(openai.AuthenticationError) as refused:
            outside.models.list()
        assert "opens no route of the bridge" in refused.value.message

    route = bridge.open_route("late", Script(ModelReply("never", ())))
    route.close()
    route.close()  # idempotent
    with pytest.raises(openai.NotFoundError) as closed:
        client_for(route, timeout=5).chat.completions.create(model="m", messages=USER)
    assert "'late'" in closed.value.message
    assert route.errors == [
        "the agent made a request after the case's route was closed: /v1/chat/completions"
    ]
    assert route.requests == []


def test_two_routes_used_from_threads_never_cross(bridge: ModelBridge) -> None:
    rounds = 40

    def echo_label(label: str) -> Any:
        def answer(request: BridgeRequest) -> ModelReply:
            asked = request.messages[-1]["content"]
            return ModelReply(f"{label}:{asked}", ())

        return answer

    routes = [bridge.open_route(label, echo_label(label)) for label in ("left", "right")]
    answers: dict[str, list[str]] = {"left": [], "right": []}
    failures: list[BaseException] = []

    def agent(route: BridgeRoute) -> None:
        try:
            client = client_for(route)
            for index in range(rounds):
                message = [{"role": "user", "content": f"{route.label}-{index}"}]
                stream = index % 2 == 1
                if stream:
                    chunks = client.chat.completions.create(
                        model="m", messages=message, stream=True
                    )
                    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
                else:
                    reply = client.chat.completions.create(model="m", messages=message)
                    text = reply.choices[0].message.content or ""
                answers[route.label].append(text)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=agent, args=(route,)) for route in routes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert failures == []
    for route in routes:
        label = route.label
        assert answers[label] == [f"{label}:{label}-{index}" for index in range(rounds)]
        asked = [request.messages[-1]["content"] for request in route.requests]
        assert asked == [f"{label}-{index}" for index in range(rounds)]
        assert route.errors == []
        route.close()


def bridge_threads() -> list[threading.Thread]:
    return [
        thread for thread in threading.enumerate() if thread.name.startswith("zeroclaw-eval-bridge")
    ]


def test_close_frees_the_port_and_joins_every_thread_even_with_idle_connections() -> None:
    before = bridge_threads()
    bridge = ModelBridge()
    bridge.start()
    port = int(bridge.url.rsplit(":", 1)[1])
    route = bridge.open_route("idle", Script(ModelReply("hi", ())))
    client = client_for(route)
    client.chat.completions.create(model="m", messages=USER)  # leaves a keep-alive connection
    assert len(bridge_threads()) > len(before)

    bridge.close()
    bridge.close()  # idempotent

    assert bridge_threads() == before
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 1):
        pass
    client.close()


def test_the_bridge_never_writes_to_stderr(
    bridge: ModelBridge, capfd: pytest.CaptureFixture[str]
) -> None:
    with bridge.open_route("quiet", Script()) as route:
        raw_post(route, b"{broken")
        with pytest.raises(openai.BadRequestError):
            client_for(route).chat.completions.create(model="m", messages=USER)
        # A client that hangs up before reading its reply.
        host, port = bridge.url.split("//")[1].split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(b"POST /r/x/v1/chat/completions HTTP/1.1\r\nContent-Length: 5\r\n\r\n")
    captured = capfd.readouterr()
    assert captured.err == ""
    assert captured.out == ""


def test_requests_on_one_route_are_answered_one_at_a_time(bridge: ModelBridge) -> None:
    inside = 0
    overlaps: list[int] = []
    lock = threading.Lock()

    def slow(request: BridgeRequest) -> ModelReply:
        nonlocal inside
        with lock:
            inside += 1
            overlaps.append(inside)
        time.sleep(0.02)  # long enough for the other requests to arrive meanwhile
        with lock:
            inside -= 1
        return ModelReply(request.messages[-1]["content"], ())

    with bridge.open_route("serial", slow) as route:
        client = client_for(route)

        def ask(index: int) -> str:
            message = [{"role": "user", "content": f"q{index}"}]
            reply = client.chat.completions.create(model="m", messages=message)
            return reply.choices[0].message.content or ""

        with ThreadPoolExecutor(6) as pool:
            answers = list(pool.map(ask, range(6)))

    assert answers == [f"q{index}" for index in range(6)]
    assert overlaps == [1] * 6  # never two at once: a provider is a per-case object
    assert len(route.requests) == 6


@settings(max_examples=30, deadline=None)
@given(
    text=st.text(max_size=120),
    calls=st.lists(
        st.tuples(
            st.text(alphabet=st.characters(categories=("L", "N")), min_size=1, max_size=12),
            st.dictionaries(st.text(max_size=8), st.text(max_size=40), max_size=3),
        ),
        max_size=3,
    ),
)
def test_any_reply_streams_back_to_exactly_itself(
    text: str, calls: list[tuple[str, dict[str, str]]]
) -> None:
    requests = tuple(
        ToolCallRequest(f"call_{index}", name, arguments)
        for index, (name, arguments) in enumerate(calls)
    )
    reply = ModelReply(text, requests, input_tokens=len(text), output_tokens=len(calls))
    with ModelBridge() as running, running.open_route("any", Script(reply)) as route:
        manager = client_for(route).chat.completions.stream(
            model="m", messages=USER, stream_options={"include_usage": True}
        )
        with manager as stream:
            final = stream.get_final_completion()

    message = final.choices[0].message
    assert (message.content or "") == text
    streamed = [
        (call.id, call.function.name, json.loads(call.function.arguments))
        for call in message.tool_calls or []
    ]
    assert streamed == [(call.call_id, call.name, call.arguments) for call in requests]
    assert final.usage is not None
    assert (final.usage.prompt_tokens, final.usage.completion_tokens) == (len(text), len(calls))


def test_a_chunked_request_body_is_read_whole(bridge: ModelBridge) -> None:
    script = Script(ModelReply("chunked ok", ()))
    with bridge.open_route("chunked", script) as route:
        port = int(bridge.url.rsplit(":", 1)[1])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        body = json.dumps({"model": "m", "messages": USER}).encode()
        pieces = iter([body[:7], body[7:20], body[20:]])
        connection.request(
            "POST",
            f"/r/{route.token}/v1/chat/completions",
            pieces,
            {"Authorization": f"Bearer {route.api_key}", "Content-Type": "application/json"},
            encode_chunked=True,
        )
        response = connection.getresponse()
        reply = json.loads(response.read())
        connection.close()

    assert response.status == 200
    assert reply["choices"][0]["message"]["content"] == "chunked ok"
    assert route.requests[0].messages == USER


def test_an_oversized_body_is_refused_before_it_is_read(bridge: ModelBridge) -> None:
    with bridge.open_route("huge", Script()) as route:
        host, port = bridge.url.split("//")[1].split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(
                f"POST /r/{route.token}/v1/chat/completions HTTP/1.1\r\n"
                f"Host: x\r\nAuthorization: Bearer {route.api_key}\r\n"
                f"Content-Length: {64 * 1024 * 1024}\r\n\r\n".encode()
            )
            answer = sock.recv(4096).decode()
    assert answer.startswith("HTTP/1.1 413 ")
    assert "Connection: close" in answer
    assert '"message": "a request body of 67108864 bytes is too large"' in answer


def test_a_failure_inside_the_bridge_is_a_recorded_400_not_a_dropped_connection(
    bridge: ModelBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(route: BridgeRoute, endpoint: str, raw: bytes, traceparent: Any) -> Any:
        raise ValueError("a translation bug")

    monkeypatch.setitem(bridge_module.ENDPOINTS, ("POST", "chat"), broken)
    script = Script(ModelReply("never", ()))
    route = bridge.open_route("bug", script)
    with route, pytest.raises(openai.BadRequestError) as raised:
        client_for(route, max_retries=3).chat.completions.create(model="m", messages=USER)

    assert raised.value.code == CODE_RUN_ERROR
    assert route.errors == [
        "the bridge could not serve this request: ValueError: a translation bug"
    ]


def test_connection_workers_are_reused_when_the_sdk_drops_each_streamed_connection(
    bridge: ModelBridge,
) -> None:
    # The openai SDK stops reading a stream at ``[DONE]`` and closes its connection,
    # so every streamed request arrives on a new one; a worker serves the next.
    replies = [ModelReply(f"reply {index}", ()) for index in range(12)]
    seen: set[threading.Thread] = set()  # every connection worker alive after a request
    with bridge.open_route("streams", Script(*replies)) as route:
        client = client_for(route)
        texts = []
        for _ in replies:
            stream = client.chat.completions.create(model="m", messages=USER, stream=True)
            texts.append("".join(chunk.choices[0].delta.content or "" for chunk in stream))
            time.sleep(0.02)  # the worker is back to idle, or has ended
            seen.update(t for t in bridge_threads() if t.name == "zeroclaw-eval-bridge-connection")
        client.close()
    assert texts == [f"reply {index}" for index in range(12)]
    # A thread per connection would show a new worker after each request. A
    # connection that arrives while the previous worker is still winding down may
    # start another, so under load there can be a few: never one for each.
    assert 1 <= len(seen) <= len(replies) // 3


def raw_exchange(bridge: ModelBridge, head: bytes) -> str:
    """Send ``head`` on a fresh connection; what the bridge answers before it closes."""
    host, port = bridge.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(head)
        sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received.decode("latin-1")


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"GARBAGE\r\n\r\n", "400"),
        (b"GET /r/x/v1/models\r\n\r\n", "400"),  # HTTP/0.9: not served
        (b"GET /r/x/v1/models HTTP/one\r\n\r\n", "400"),
        (b"GET /r/x/v1/models HTTP/2.0\r\n\r\n", "505"),
        (b"GET /r/x/v1/models HTTP/1.1\r\nX: " + b"y" * 70000 + b"\r\n\r\n", "431"),
        (b"GET /r/x/v1/models HTTP/1.1\r\n" + b"X-A: b\r\n" * 101 + b"\r\n", "431"),
    ],
)
def test_a_malformed_request_head_is_refused_with_the_stdlib_status(
    bridge: ModelBridge, head: bytes, status: str
) -> None:
    assert raw_exchange(bridge, head).startswith(f"HTTP/1.1 {status} ")


def test_headers_are_read_whatever_their_case_and_expect_100_continue_is_honoured(
    bridge: ModelBridge,
) -> None:
    body = json.dumps({"model": "m", "messages": USER}).encode()
    with bridge.open_route("head", Script(ModelReply("case-blind", ()))) as route:
        answer = raw_exchange(
            bridge,
            f"POST /r/{route.token}/v1/chat/completions HTTP/1.1\r\n"
            f"host: x\r\nAUTHORIZATION: bearer {route.api_key}\r\n"
            f"content-LENGTH: {len(body)}\r\nexpect: 100-continue\r\n"
            "connection: close\r\n\r\n".encode()
            + body,
        )
    assert answer.startswith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")
    assert "Connection: close" in answer
    assert '"content": "case-blind"' in answer
    assert route.errors == []
