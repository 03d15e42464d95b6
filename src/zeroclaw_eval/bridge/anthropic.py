"""The Anthropic Messages API on the model bridge: ``POST {root_url}/v1/messages``.

The Anthropic SDKs add ``/v1`` themselves, so an agent on them is given the
route's :attr:`~zeroclaw_eval.bridge.wire.BridgeRoute.root_url` as its base URL; the
route's key goes in ``x-api-key`` (the SDK's default) or as a bearer token.

A request's ``system`` and ``messages`` become the chat-completions messages the
answering provider reads (one shape for every wire format):

- ``system`` (a string or text blocks) -> a ``system`` message;
- a ``user`` message -> one ``role: "tool"`` message per ``tool_result`` block
  (its ``tool_use_id`` as ``tool_call_id``, its text as content), then a
  ``user`` message of its text blocks, if any;
- an ``assistant`` message -> an ``assistant`` message: its text blocks joined,
  its ``tool_use`` blocks as ``tool_calls`` with the ``input`` as a JSON string;
- ``thinking`` blocks are skipped; images, documents and other blocks are refused.

Tools (``name``, ``description``, ``input_schema``) become chat-completions
function tools. The reply is a ``message`` with a ``text`` block and one
``tool_use`` block per tool call (``stop_reason`` ``end_turn`` or ``tool_use``);
with ``stream: true``, the API's events from ``message_start`` to ``message_stop``.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Mapping
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
    string_field,
    text_content,
)
from zeroclaw_eval.protocol import ModelReply, arguments_text


def serve_messages(
    route: BridgeRoute, endpoint: str, raw: bytes, traceparent: str | None = None
) -> Served:
    """Answer ``POST /v1/messages`` on ``route``."""
    if endpoint != "messages":
        raise Refusal(404, f"the bridge does not serve POST /v1/{endpoint}", "unknown_url")
    body = decode_object(raw)
    request = BridgeRequest(
        api="anthropic.messages",
        model=model_name(body),
        messages=_messages(body),
        tools=_tools(body.get("tools")),
        stream=flag(body, "stream"),
        body=body,
        traceparent=traceparent,
    )
    reply = ask(route, request)
    message = _message(request.model, reply)
    if reply.dropped:
        if not request.stream:
            return 200, Dropped(message)
        events = list(_events(message))
        return 200, Dropped(cut_events(events, "id", reply.tool_calls[-1].call_id))
    if not request.stream:
        return 200, message
    return 200, list(_events(message))


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system is not None:
        messages.append({"role": "system", "content": text_content("system", system)})
    given = body.get("messages")
    if not isinstance(given, list) or not given:
        raise Refusal(400, "malformed request: messages must be a non-empty list", None)
    for index, message in enumerate(given):
        where = f"messages[{index}]"
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise Refusal(400, f"malformed request: {where}.role must be user or assistant", None)
        content = message.get("content")
        if isinstance(content, str):
            messages.append({"role": message["role"], "content": content})
        elif isinstance(content, list):
            add = _user_blocks if message["role"] == "user" else _assistant_blocks
            add(messages, f"{where}.content", content)
        else:
            raise Refusal(400, f"malformed request: {where}.content must be text or blocks", None)
    return messages


def _user_blocks(messages: list[dict[str, Any]], where: str, blocks: list[Any]) -> None:
    texts: list[str] = []
    for index, block in enumerate(blocks):
        kind = _kind(f"{where}[{index}]", block)
        if kind == "tool_result":
            result = text_content(f"{where}[{index}].content", block.get("content"))
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": string_field(block, "tool_use_id", f"{where}[{index}]"),
                    "content": result or "",
                }
            )
        elif kind == "text":
            texts.append(string_field(block, "text", f"{where}[{index}]"))
        else:
            _refuse_block(f"{where}[{index}]", kind)
    if texts:
        messages.append({"role": "user", "content": "".join(texts)})


def _assistant_blocks(messages: list[dict[str, Any]], where: str, blocks: list[Any]) -> None:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        kind = _kind(f"{where}[{index}]", block)
        if kind == "text":
            texts.append(string_field(block, "text", f"{where}[{index}]"))
        elif kind == "tool_use":
            arguments = block.get("input", {})
            if not isinstance(arguments, dict):
                raise Refusal(
                    400, f"malformed request: {where}[{index}].input must be an object", None
                )
            calls.append(
                {
                    "id": string_field(block, "id", f"{where}[{index}]"),
                    "type": "function",
                    "function": {
                        "name": string_field(block, "name", f"{where}[{index}]"),
                        "arguments": arguments_text(arguments),
                    },
                }
            )
        elif kind not in ("thinking", "redacted_thinking"):
            _refuse_block(f"{where}[{index}]", kind)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    else:
        message["content"] = message["content"] or ""
    messages.append(message)


def _kind(where: str, block: Any) -> str:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise Refusal(400, f"malformed request: {where} is not a content block", None)
    kind: str = block["type"]
    return kind


def _refuse_block(where: str, kind: str) -> None:
    raise Refusal(
        400, f"malformed request: {where} is a {kind} block; the bridge cannot carry it", None
    )


def _tools(value: Any) -> list[dict[str, Any]]:
    """Anthropic client tools in the chat-completions shape."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Refusal(400, "malformed request: tools must be a list", None)
    tools = []
    for index, tool in enumerate(value):
        if not isinstance(tool, dict) or "input_schema" not in tool:
            raise Refusal(
                400,
                f"malformed request: tools[{index}] is not a client tool with an input_schema; "
                "the bridge carries client tools only",
                None,
            )
        function = {key: tool[key] for key in ("name", "description") if key in tool}
        function["parameters"] = tool["input_schema"]
        tools.append({"type": "function", "function": function})
    return tools


def _message(model: str, reply: ModelReply) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.content or not reply.tool_calls:
        content.append({"type": "text", "text": reply.content or ""})
    content.extend(
        {
            "type": "tool_use",
            "id": call.call_id,
            "name": call.name,
            # Arguments that are not JSON: the API streams them as they are; whole,
            # it has no way to carry them but as text.
            "input": call.arguments_text
            if call.arguments_text is not None
            else dict(call.arguments),
        }
        for call in reply.tool_calls
    )
    return {
        "id": f"msg_{secrets.token_hex(12)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "max_tokens"
        if reply.finish == "length"
        else "tool_use"
        if reply.tool_calls
        else "end_turn",
        "stop_sequence": None,
        "usage": _usage(reply),
    }


def _usage(reply: ModelReply) -> dict[str, int]:
    """Usage as the Messages API words it: ``input_tokens`` leaves out the cache, which
    is counted apart, when the provider said how much of the prompt it held."""
    usage = {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens}
    reported = reply.usage
    if reported is None or reported.cached_input_tokens is None:
        return usage
    written = reported.cache_write_input_tokens or 0
    cached = reported.cached_input_tokens
    usage["input_tokens"] = max(0, reply.input_tokens - cached - written)
    usage["cache_read_input_tokens"] = cached
    usage["cache_creation_input_tokens"] = written
    return usage


def _events(message: dict[str, Any]) -> Iterator[bytes]:
    """The message as the Messages API streams it, one server-sent event at a time."""

    def event(kind: str, **fields: Any) -> bytes:
        data = json.dumps({"type": kind, **fields}, ensure_ascii=False)
        return f"event: {kind}\ndata: {data}\n\n".encode()

    usage = message["usage"]
    started = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {**usage, "output_tokens": 0},
    }
    yield event("message_start", message=started)
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield event("content_block_start", index=index, content_block={**block, "text": ""})
            for piece in pieces(block["text"]):
                yield event(
                    "content_block_delta", index=index, delta={"type": "text_delta", "text": piece}
                )
        else:
            yield event("content_block_start", index=index, content_block={**block, "input": {}})
            given = block["input"]
            text = given if isinstance(given, str) else arguments_text(given)
            for piece in pieces(text):
                yield event(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": piece},
                )
        yield event("content_block_stop", index=index)
    yield event(
        "message_delta",
        delta={"stop_reason": message["stop_reason"], "stop_sequence": None},
        usage={"output_tokens": usage["output_tokens"]},
    )
    yield event("message_stop")
