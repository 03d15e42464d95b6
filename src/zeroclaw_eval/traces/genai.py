"""The OTel GenAI semantic conventions: model calls and tool executions from spans.

Read as the current conventions write them: an inference span
(``gen_ai.operation.name`` ``chat``, ``text_completion`` or ``generate_content``)
holds ``gen_ai.input.messages``, ``gen_ai.output.messages``,
``gen_ai.system_instructions`` and ``gen_ai.tool.definitions`` (JSON, as the
official ``opentelemetry-instrumentation-openai-v2`` writes them with content
capture on), or carries them on its ``gen_ai.client.inference.operation.details``
event; an ``execute_tool`` span holds ``gen_ai.tool.name``, ``gen_ai.tool.call.id``
and ``gen_ai.tool.call.result``. A message is a role and parts (``text``,
``tool_call``, ``tool_call_response``; ``reasoning`` is skipped: a replay never
sends it back). ``gen_ai.conversation.id`` names the session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zeroclaw_eval.protocol import ModelReply, ToolCallRequest
from zeroclaw_eval.traces.calls import (
    FAILED_CALL,
    ModelCall,
    Refused,
    ToolRun,
    Unreadable,
    chat_call,
    parsed_json,
    read_span,
    text_of,
    token_count,
)
from zeroclaw_eval.traces.otlp import Span

#: The operations that are one request to a model.
INFERENCE = frozenset({"chat", "text_completion", "generate_content"})

#: The event the conventions may carry a call's content on instead of the span.
DETAILS_EVENT = "gen_ai.client.inference.operation.details"

#: ``gen_ai.request.*`` attributes and the request settings they were.
SETTINGS = {
    "gen_ai.request.model": "model",
    "gen_ai.request.temperature": "temperature",
    "gen_ai.request.top_p": "top_p",
    "gen_ai.request.max_tokens": "max_tokens",
    "gen_ai.request.frequency_penalty": "frequency_penalty",
    "gen_ai.request.presence_penalty": "presence_penalty",
    "gen_ai.request.seed": "seed",
    "gen_ai.request.stop_sequences": "stop",
}

SESSION = "gen_ai.conversation.id"


def claims(span: Span) -> bool:
    """Whether ``span`` is a GenAI model call or tool execution."""
    operation = span.attributes.get("gen_ai.operation.name")
    return operation in INFERENCE or operation == "execute_tool"


def read(span: Span) -> ModelCall | ToolRun | Refused:
    """The model call or tool run ``span`` records (see :func:`claims`)."""
    tool = span.attributes.get("gen_ai.operation.name") == "execute_tool"
    return read_span(span, tool, _tool_run, _model_call)


def _content(span: Span) -> dict[str, Any]:
    attributes = dict(span.attributes)
    for event in span.events:
        if event.name == DETAILS_EVENT:
            attributes.update(event.attributes)
    return attributes


def _model_call(span: Span) -> ModelCall:
    attributes = _content(span)
    if "gen_ai.output.messages" not in attributes:
        if span.error:
            raise Unreadable(FAILED_CALL, spoils=False)
        raise Unreadable(
            "no gen_ai.output.messages: the span holds no content (capture it with "
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY)"
        )
    if "gen_ai.input.messages" not in attributes:
        raise Unreadable("no gen_ai.input.messages: the request is not in the span")
    outputs = parsed_json(attributes["gen_ai.output.messages"], "gen_ai.output.messages")
    if not isinstance(outputs, list) or not outputs:
        raise Unreadable("gen_ai.output.messages holds no message")
    inputs = parsed_json(attributes["gen_ai.input.messages"], "gen_ai.input.messages")
    if not isinstance(inputs, list):
        raise Unreadable("gen_ai.input.messages is not a list of messages")
    messages: list[dict[str, Any]] = []
    for index, message in enumerate(inputs):
        messages.extend(_chat_messages(message, f"gen_ai.input.messages[{index}]"))
    system = attributes.get("gen_ai.system_instructions")
    if system is not None and not any(m["role"] == "system" for m in messages):
        # Instrumentations that keep the instructions apart sent them first.
        parts = parsed_json(system, "gen_ai.system_instructions")
        text = _texts(parts if isinstance(parts, list) else [parts], "gen_ai.system_instructions")
        messages.insert(0, {"role": "system", "content": text})
    model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
    reply = _reply(outputs[0], model if isinstance(model, str) else None, attributes)
    settings = {
        name: attributes[key] for key, name in SETTINGS.items() if attributes.get(key) is not None
    }
    tools = None
    if "gen_ai.tool.definitions" in attributes:
        tools = _tools(
            parsed_json(attributes["gen_ai.tool.definitions"], "gen_ai.tool.definitions")
        )
    session = attributes.get(SESSION)
    return ModelCall(
        span, messages, reply, tools, settings, session if isinstance(session, str) else None
    )


def _parts(message: Any, where: str) -> tuple[str, list[Mapping[str, Any]]]:
    if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
        raise Unreadable(f"{where} is not a message with a role")
    parts = message.get("parts")
    if not isinstance(parts, list):
        raise Unreadable(f"{where}.parts is not a list")
    kept = []
    for number, part in enumerate(parts):
        if not isinstance(part, Mapping):
            raise Unreadable(f"{where}.parts[{number}] is not an object")
        kind = part.get("type")
        if kind == "reasoning":
            continue
        if kind not in ("text", "tool_call", "tool_call_response"):
            raise Unreadable(f"{where}.parts[{number}].type={kind!r}: a part no fixture holds")
        kept.append(part)
    return message["role"], kept


def _texts(parts: list[Any], where: str) -> str:
    texts = []
    for number, part in enumerate(parts):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping) and part.get("type") == "text":
            texts.append(str(part.get("content", "")))
        elif not (isinstance(part, Mapping) and part.get("type") == "reasoning"):
            raise Unreadable(f"{where}[{number}] is not a text part")
    return "".join(texts)


def _chat_messages(message: Any, where: str) -> list[dict[str, Any]]:
    role, parts = _parts(message, where)
    if role == "tool":
        results = []
        for part in parts:
            if part.get("type") != "tool_call_response":
                continue
            results.append(
                {
                    "role": "tool",
                    "content": text_of(part.get("response", "")),
                    "tool_call_id": str(part.get("id", "")),
                }
            )
        return results
    text = "".join(str(part.get("content", "")) for part in parts if part.get("type") == "text")
    calls = [_call(part, where) for part in parts if part.get("type") == "tool_call"]
    shaped: dict[str, Any] = {"role": role, "content": text}
    if calls:
        shaped["content"] = text or None
        shaped["tool_calls"] = [
            chat_call(call.call_id, call.name, call.arguments) for call in calls
        ]
    return [shaped]


def _call(part: Mapping[str, Any], where: str) -> ToolCallRequest:
    name = part.get("name")
    if not isinstance(name, str) or not name:
        raise Unreadable(f"{where}: a tool_call part without a name")
    arguments = parsed_json(part.get("arguments") or {}, f"{where}: {name}'s arguments")
    if not isinstance(arguments, dict):
        raise Unreadable(f"{where}: {name}'s arguments are not a JSON object")
    call_id = part.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise Unreadable(f"{where}: the tool_call part for {name!r} has no id")
    return ToolCallRequest(call_id, name, arguments)


def _reply(message: Any, model: str | None, attributes: Mapping[str, Any]) -> ModelReply:
    role, parts = _parts(message, "gen_ai.output.messages[0]")
    if role != "assistant":
        raise Unreadable(f"gen_ai.output.messages[0].role={role!r}, not the assistant's")
    text = "".join(str(part.get("content", "")) for part in parts if part.get("type") == "text")
    calls = tuple(
        _call(part, "gen_ai.output.messages[0]")
        for part in parts
        if part.get("type") == "tool_call"
    )
    return ModelReply(
        content=text if text or not calls else None,
        tool_calls=calls,
        input_tokens=token_count(attributes.get("gen_ai.usage.input_tokens")),
        output_tokens=token_count(attributes.get("gen_ai.usage.output_tokens")),
        model=model,
    )


def _tools(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise Unreadable("gen_ai.tool.definitions is not a list")
    tools = []
    for index, entry in enumerate(value):
        # The conventions' flat shape, or Chat Completions' nested one.
        function = entry.get("function") if isinstance(entry, Mapping) else None
        source = function if isinstance(function, Mapping) else entry
        if not isinstance(source, Mapping) or not isinstance(source.get("name"), str):
            raise Unreadable(f"gen_ai.tool.definitions[{index}] has no name")
        parameters = source.get("parameters")
        tools.append(
            {
                "name": source["name"],
                "description": str(source.get("description") or ""),
                "parameters": dict(parameters) if isinstance(parameters, Mapping) else {},
            }
        )
    return tools


def _tool_run(span: Span) -> ToolRun:
    attributes = span.attributes
    name = attributes.get("gen_ai.tool.name")
    call_id = attributes.get("gen_ai.tool.call.id")
    if not isinstance(name, str) or not name:
        raise Unreadable("an execute_tool span without gen_ai.tool.name")
    if not isinstance(call_id, str) or not call_id:
        raise Unreadable(f"the execute_tool span of {name!r} has no gen_ai.tool.call.id")
    result = attributes.get("gen_ai.tool.call.result")
    error = span.error or attributes.get("error.type") is not None
    session = attributes.get(SESSION)
    return ToolRun(
        span,
        call_id,
        name,
        None if result is None else text_of(result),
        error,
        session if isinstance(session, str) else None,
    )
