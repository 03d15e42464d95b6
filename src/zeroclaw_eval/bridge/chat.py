"""The OpenAI Chat Completions API on the model bridge, and ``GET /models``.

- ``POST {base_url}/chat/completions``: non-streaming, or ``stream: true`` as
  server-sent events (a role delta, text deltas, tool-call deltas carrying
  ``index``, ``id``, ``type`` and pieces of the function's name and ``arguments``
  string, a chunk with ``finish_reason``, a usage chunk when
  ``stream_options.include_usage``, then ``data: [DONE]``);
- ``GET {base_url}/models`` and ``GET /models/{id}``: the models the route has
  been asked for, or :data:`DEFAULT_MODEL`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

from zeroclaw_eval.bridge.wire import (
    BridgeRequest,
    BridgeRoute,
    Dropped,
    Refusal,
    Served,
    ask,
    cut_events,
    decode_object,
    flag,
    model_name,
    pieces,
    sse,
    text_content,
)
from zeroclaw_eval.protocol import (
    ModelReply,
    call_arguments,
    finish_reason,
    tool_call_entries,
)

#: The model ``GET /models`` lists before any request named one.
DEFAULT_MODEL = "zeroclaw-eval-bridge"


def serve_chat_completions(
    route: BridgeRoute, endpoint: str, raw: bytes, traceparent: str | None = None
) -> Served:
    if endpoint != "chat/completions":
        raise Refusal(404, f"the bridge does not serve POST /v1/{endpoint}", "unknown_url")
    body = decode_object(raw)
    request = BridgeRequest(
        api="chat.completions",
        model=model_name(body),
        messages=_chat_messages(body.get("messages")),
        tools=_tools(body.get("tools")),
        stream=flag(body, "stream"),
        body=body,
        traceparent=traceparent,
    )
    reply = ask(route, request)
    completion_id = f"chatcmpl-{secrets.token_hex(12)}"
    created = int(time.time())
    if not request.stream:
        document = _completion(completion_id, created, request.model, reply)
        return 200, Dropped(document) if reply.dropped else document
    options = body.get("stream_options")
    usage = isinstance(options, dict) and options.get("include_usage") is True
    events = list(_completion_events(completion_id, created, request.model, reply, usage))
    if reply.dropped:
        return 200, Dropped(cut_events(events, "id", reply.tool_calls[-1].call_id))
    return 200, events


def _tools(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(tool, dict) for tool in value):
        raise Refusal(400, "malformed request: tools must be a list of objects", None)
    return value


def _chat_messages(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise Refusal(400, "malformed request: messages must be a non-empty list", None)
    return [_chat_message(index, message) for index, message in enumerate(value)]


def _chat_message(index: int, message: Any) -> dict[str, Any]:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise Refusal(400, f"malformed request: {where} is not an object", None)
    role = message.get("role")
    if not isinstance(role, str) or not role:
        raise Refusal(400, f"malformed request: {where}.role is missing", None)
    shaped = dict(message)
    if "content" in message:
        shaped["content"] = text_content(f"{where}.content", message["content"])
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        raise Refusal(400, f"malformed request: {where}.tool_call_id is missing", None)
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise Refusal(400, f"malformed request: {where}.tool_calls is not a list", None)
        for position, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(call, dict) or not isinstance(call.get("id"), str):
                raise Refusal(
                    400, f"malformed request: {where}.tool_calls[{position}].id is missing", None
                )
            if not isinstance(function, dict) or not isinstance(function.get("arguments"), str):
                raise Refusal(
                    400,
                    f"malformed request: {where}.tool_calls[{position}].function.arguments "
                    "must be a string",
                    None,
                )
    return shaped


def _usage(reply: ModelReply) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }
    # The provider's details passed on as it reported them, and only then: an agent
    # that meters its own runs must not read an unreported figure as 0.
    reported = reply.usage
    if reported is not None and reported.cached_input_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": reported.cached_input_tokens}
    if reported is not None and reported.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reported.reasoning_tokens}
    return usage


def _completion(completion_id: str, created: int, model: str, reply: ModelReply) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.content if reply.tool_calls else (reply.content or ""),
        "refusal": None,
    }
    if reply.tool_calls:
        message["tool_calls"] = tool_call_entries(reply)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish_reason(reply),
            }
        ],
        "usage": _usage(reply),
        "system_fingerprint": None,
    }


def _completion_events(
    completion_id: str, created: int, model: str, reply: ModelReply, include_usage: bool
) -> Iterator[bytes]:
    """The reply as ``chat.completion.chunk`` server-sent events, as OpenAI streams them."""

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        chunk: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if include_usage:
            chunk["usage"] = None
        return sse(chunk)

    text = reply.content or ""
    first: dict[str, Any] = {"role": "assistant", "content": None if reply.tool_calls else ""}
    for piece in pieces(text):
        yield event(first)
        first = {"content": piece}
    for index, call in enumerate(reply.tool_calls):
        # OpenAI opens a tool call with its id, type and name, then streams the
        # arguments; with no text before it, in the chunk that carries the role.
        first["tool_calls"] = [
            {
                "index": index,
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
        ]
        yield event(first)
        first = {}
        for piece in pieces(call_arguments(call)):
            yield event({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    if first:
        yield event(first)
    yield event({}, finish_reason(reply))
    if include_usage:
        yield sse(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": None,
                "choices": [],
                "usage": _usage(reply),
            }
        )
    yield b"data: [DONE]\n\n"


def serve_models(
    route: BridgeRoute, endpoint: str, raw: bytes, traceparent: str | None = None
) -> Served:
    names = list(route.models) or [DEFAULT_MODEL]
    if endpoint == "models":
        return 200, {"object": "list", "data": [_model_entry(name) for name in names]}
    return 200, _model_entry(endpoint.split("/", 1)[1])


def _model_entry(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "zeroclaw-eval"}
