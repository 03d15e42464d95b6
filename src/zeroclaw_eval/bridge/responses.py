"""The OpenAI Responses API on the model bridge: ``POST {base_url}/responses``.

A request's ``instructions`` and ``input`` items become the chat-completions
messages the answering provider reads (one shape for every wire format):

- ``instructions`` -> a ``system`` message; a string ``input`` -> a ``user`` message;
- a ``message`` item -> a message of its role, its text parts joined;
- ``function_call`` items -> ``tool_calls`` of an ``assistant`` message (joined to
  the assistant message just before them, if any), ``call_id`` as the call's id;
- a ``function_call_output`` item -> a ``role: "tool"`` message with its
  ``call_id`` as ``tool_call_id``;
- ``reasoning`` items are skipped; any other item is refused.

With ``previous_response_id`` the conversation of that earlier response on the
same route comes first, as the API's stored responses do. Function ``tools``
become chat-completions ``tools``; other tool types are refused.

The reply is a ``response`` object whose ``output`` holds a ``message`` item (the
text) and one ``function_call`` item per tool call; with ``stream: true``, the
API's server-sent events from ``response.created`` to ``response.completed``.
"""

from __future__ import annotations

import json
import secrets
import time
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
from zeroclaw_eval.protocol import ModelReply, call_arguments, tool_call_entries

MESSAGE_ROLES = ("user", "system", "developer", "assistant")


def serve_responses(
    route: BridgeRoute, endpoint: str, raw: bytes, traceparent: str | None = None
) -> Served:
    """Answer ``POST /v1/responses`` on ``route``."""
    if endpoint != "responses":
        raise Refusal(404, f"the bridge does not serve POST /v1/{endpoint}", "unknown_url")
    body = decode_object(raw)
    history = _previous(route, body.get("previous_response_id"))
    request = BridgeRequest(
        api="responses",
        model=model_name(body),
        messages=history + _messages(body),
        tools=_tools(body.get("tools")),
        stream=flag(body, "stream"),
        body=body,
        traceparent=traceparent,
    )
    reply = ask(route, request)
    response = _response(body, request.model, reply)
    if reply.dropped:  # never delivered: no response to continue from
        if not request.stream:
            return 200, Dropped(response)
        events = list(_events(response))
        return 200, Dropped(cut_events(events, "call_id", reply.tool_calls[-1].call_id))
    route.memory[response["id"]] = [*request.messages, _assistant_message(reply)]
    if not request.stream:
        return 200, response
    return 200, list(_events(response))


def _previous(route: BridgeRoute, previous_id: Any) -> list[dict[str, Any]]:
    if previous_id is None:
        return []
    stored = route.memory.get(previous_id) if isinstance(previous_id, str) else None
    if stored is None:
        raise Refusal(
            400,
            f"malformed request: previous_response_id {previous_id!r} is no response of this case",
            "previous_response_not_found",
        )
    return list(stored)


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if instructions is not None:
        if not isinstance(instructions, str):
            raise Refusal(400, "malformed request: instructions must be a string", None)
        messages.append({"role": "system", "content": instructions})
    items = body.get("input")
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
        return messages
    if not isinstance(items, list) or not items:
        raise Refusal(400, "malformed request: input must be a string or a non-empty list", None)
    for index, item in enumerate(items):
        _add_item(messages, f"input[{index}]", item)
    return messages


def _add_item(messages: list[dict[str, Any]], where: str, item: Any) -> None:
    if not isinstance(item, dict):
        raise Refusal(400, f"malformed request: {where} is not an object", None)
    kind = item.get("type", "message")
    if kind == "message":
        role = item.get("role")
        if role not in MESSAGE_ROLES:
            raise Refusal(
                400, f"malformed request: {where}.role must be one of {MESSAGE_ROLES}", None
            )
        messages.append(
            {"role": role, "content": text_content(f"{where}.content", item.get("content"))}
        )
    elif kind == "function_call":
        call = {
            "id": string_field(item, "call_id", where),
            "type": "function",
            "function": {
                "name": string_field(item, "name", where),
                "arguments": string_field(item, "arguments", where),
            },
        }
        if messages and messages[-1]["role"] == "assistant":
            messages[-1].setdefault("tool_calls", []).append(call)
        else:
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
    elif kind == "function_call_output":
        output = text_content(f"{where}.output", item.get("output"))
        messages.append(
            {
                "role": "tool",
                "tool_call_id": string_field(item, "call_id", where),
                "content": output or "",
            }
        )
    elif kind != "reasoning":
        raise Refusal(
            400, f"malformed request: {where} is a {kind!s} item; the bridge cannot carry it", None
        )


def _tools(value: Any) -> list[dict[str, Any]]:
    """Responses function tools in the chat-completions shape."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Refusal(400, "malformed request: tools must be a list", None)
    tools = []
    for index, tool in enumerate(value):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            kind = tool.get("type") if isinstance(tool, dict) else type(tool).__name__
            raise Refusal(
                400,
                f"malformed request: tools[{index}] is a {kind!s} tool; "
                "the bridge carries function tools only",
                None,
            )
        function = {key: tool[key] for key in ("name", "description", "parameters") if key in tool}
        tools.append({"type": "function", "function": function})
    return tools


def _assistant_message(reply: ModelReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = tool_call_entries(reply)
    else:
        message["content"] = reply.content or ""
    return message


def _response(body: Mapping[str, Any], model: str, reply: ModelReply) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    # A reply cut at the output limit is an incomplete response, as the API says it.
    cut = reply.finish == "length"
    status = "incomplete" if cut else "completed"
    if reply.content or not reply.tool_calls:
        output.append(
            {
                "type": "message",
                "id": f"msg_{secrets.token_hex(12)}",
                "status": status,
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": reply.content or "",
                        "annotations": [],
                        "logprobs": [],
                    }
                ],
            }
        )
    for call in reply.tool_calls:
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{secrets.token_hex(12)}",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call_arguments(call),
                "status": "completed",
            }
        )
    return {
        "id": f"resp_{secrets.token_hex(12)}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": reply.input_tokens,
            # The API's schema requires both details (SDKs validate them): the
            # provider's figures when it reported them, else 0.
            "input_tokens_details": {"cached_tokens": _reported(reply, "cached_input_tokens")},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": _reported(reply, "reasoning_tokens")},
            "total_tokens": reply.input_tokens + reply.output_tokens,
        },
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "instructions": body.get("instructions"),
        "metadata": body.get("metadata") or {},
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
    }


def _reported(reply: ModelReply, kind: str) -> int:
    """A detail of the provider's usage, 0 when it reported none."""
    value = getattr(reply.usage, kind, None) if reply.usage is not None else None
    return value if isinstance(value, int) else 0


def _events(response: dict[str, Any]) -> Iterator[bytes]:
    """The response as the Responses API streams it, one server-sent event at a time."""
    sequence = 0

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal sequence
        document = {"type": kind, "sequence_number": sequence, **fields}
        sequence += 1
        data = json.dumps(document, ensure_ascii=False)
        return f"event: {kind}\ndata: {data}\n\n".encode()

    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    yield event("response.created", response=pending)
    yield event("response.in_progress", response=pending)
    for index, item in enumerate(response["output"]):
        if item["type"] == "message":
            yield from _message_events(event, index, item)
        else:
            yield from _call_events(event, index, item)
    done = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    yield event(done, response=response)


def _message_events(event: Any, index: int, item: dict[str, Any]) -> Iterator[bytes]:
    part = item["content"][0]
    where = {"item_id": item["id"], "output_index": index}
    yield event(
        "response.output_item.added",
        output_index=index,
        item={**item, "status": "in_progress", "content": []},
    )
    empty = {**part, "text": ""}
    yield event("response.content_part.added", **where, content_index=0, part=empty)
    for piece in pieces(part["text"]):
        yield event(
            "response.output_text.delta", **where, content_index=0, delta=piece, logprobs=[]
        )
    yield event(
        "response.output_text.done", **where, content_index=0, text=part["text"], logprobs=[]
    )
    yield event("response.content_part.done", **where, content_index=0, part=part)
    yield event("response.output_item.done", output_index=index, item=item)


def _call_events(event: Any, index: int, item: dict[str, Any]) -> Iterator[bytes]:
    where = {"item_id": item["id"], "output_index": index}
    yield event(
        "response.output_item.added",
        output_index=index,
        item={**item, "arguments": "", "status": "in_progress"},
    )
    for piece in pieces(item["arguments"]):
        yield event("response.function_call_arguments.delta", **where, delta=piece)
    yield event(
        "response.function_call_arguments.done",
        **where,
        name=item["name"],
        arguments=item["arguments"],
    )
    yield event("response.output_item.done", output_index=index, item=item)
