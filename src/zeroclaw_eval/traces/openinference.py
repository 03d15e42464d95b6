"""The OpenInference conventions: model calls and tool executions from spans.

An ``LLM`` span (``openinference.span.kind``) flattens its messages into indexed
attributes: ``llm.input_messages.N.message.role`` / ``.content`` (or
``.contents.M.message_content.text``), ``.tool_calls.K.tool_call.id`` /
``.function.name`` / ``.function.arguments``, ``.tool_call_id``; the reply is
``llm.output_messages.0.message.*``; the offer ``llm.tools.N.tool.json_schema``; the
settings ``llm.invocation_parameters`` (JSON); usage ``llm.token_count.prompt`` and
``.completion``. A ``TOOL`` span holds ``tool.name``, ``tool.id`` (the call it
answers) and ``output.value``. ``session.id`` names the session.
"""

from __future__ import annotations

import json
import re
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

KIND = "openinference.span.kind"
SESSION = "session.id"

#: Invocation parameters that are no setting of what the model is asked.
_TRANSPORT = frozenset({"stream", "stream_options", "messages", "tools", "input"})

_INDEXED = re.compile(r"^(\d+)\.(.+)$")


def claims(span: Span) -> bool:
    """Whether ``span`` is an OpenInference model call or tool execution."""
    return span.attributes.get(KIND) in ("LLM", "TOOL")


def read(span: Span) -> ModelCall | ToolRun | Refused:
    """The model call or tool run ``span`` records (see :func:`claims`)."""
    return read_span(span, span.attributes.get(KIND) == "TOOL", _tool_run, _model_call)


def indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The flattened list under ``prefix`` (``llm.input_messages``): one dictionary of
    its remaining keys per index, in index order."""
    found: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in attributes.items():
        if key.startswith(start):
            match = _INDEXED.match(key[len(start) :])
            if match:
                found.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [found[index] for index in sorted(found)]


def _model_call(span: Span) -> ModelCall:
    attributes = span.attributes
    outputs = indexed(attributes, "llm.output_messages")
    if not outputs:
        if span.error:
            raise Unreadable(FAILED_CALL, spoils=False)
        raise Unreadable("no llm.output_messages: the span holds no reply (hidden outputs?)")
    inputs = indexed(attributes, "llm.input_messages")
    if not inputs:
        raise Unreadable("no llm.input_messages: the request is not in the span")
    messages = [
        _message(message, f"llm.input_messages.{index}") for index, message in enumerate(inputs)
    ]
    reply_message = _message(outputs[0], "llm.output_messages.0")
    calls = tuple(
        ToolCallRequest(
            call["id"], call["function"]["name"], json.loads(call["function"]["arguments"])
        )
        for call in reply_message.get("tool_calls", ())
    )
    text = reply_message.get("content") or ""
    model = attributes.get("llm.response.model_name") or attributes.get("llm.model_name")
    reply = ModelReply(
        content=text if text or not calls else None,
        tool_calls=calls,
        input_tokens=token_count(attributes.get("llm.token_count.prompt")),
        output_tokens=token_count(attributes.get("llm.token_count.completion")),
        model=model if isinstance(model, str) else None,
    )
    settings: dict[str, Any] = {}
    if "llm.invocation_parameters" in attributes:
        parameters = parsed_json(
            attributes["llm.invocation_parameters"], "llm.invocation_parameters"
        )
        if not isinstance(parameters, Mapping):
            raise Unreadable("llm.invocation_parameters is not a JSON object")
        settings = {key: value for key, value in parameters.items() if key not in _TRANSPORT}
    if "model" not in settings and isinstance(attributes.get("llm.model_name"), str):
        settings["model"] = attributes["llm.model_name"]
    offered = indexed(attributes, "llm.tools")
    tools = [_tool(entry, index) for index, entry in enumerate(offered)] if offered else None
    session = attributes.get(SESSION)
    return ModelCall(
        span, messages, reply, tools, settings, session if isinstance(session, str) else None
    )


def _message(entry: Mapping[str, Any], where: str) -> dict[str, Any]:
    role = entry.get("message.role")
    if not isinstance(role, str):
        raise Unreadable(f"{where}.message.role is missing")
    content = entry.get("message.content")
    if content is None:
        parts = indexed(entry, "message.contents")
        texts = []
        for number, part in enumerate(parts):
            kind = part.get("message_content.type")
            if kind == "reasoning":
                continue
            if kind != "text":
                raise Unreadable(
                    f"{where}.message.contents.{number}.message_content.type={kind!r}: "
                    "a part no fixture holds"
                )
            texts.append(str(part.get("message_content.text", "")))
        content = "".join(texts) if parts else None
    shaped: dict[str, Any] = {"role": role, "content": content if content is not None else ""}
    calls = indexed(entry, "message.tool_calls")
    if calls:
        shaped["content"] = content or None
        shaped["tool_calls"] = [
            _call(call, f"{where}.message.tool_calls.{number}") for number, call in enumerate(calls)
        ]
    if role == "tool":
        call_id = entry.get("message.tool_call_id")
        if not isinstance(call_id, str):
            raise Unreadable(f"{where}.message.tool_call_id is missing")
        shaped["tool_call_id"] = call_id
    return shaped


def _call(call: Mapping[str, Any], where: str) -> dict[str, Any]:
    name = call.get("tool_call.function.name")
    call_id = call.get("tool_call.id")
    if not isinstance(name, str) or not name:
        raise Unreadable(f"{where}.tool_call.function.name is missing")
    if not isinstance(call_id, str) or not call_id:
        raise Unreadable(f"{where}.tool_call.id is missing (the call of {name!r})")
    arguments = parsed_json(call.get("tool_call.function.arguments") or "{}", f"{where} arguments")
    if not isinstance(arguments, dict):
        raise Unreadable(f"{where}.tool_call.function.arguments is not a JSON object")
    return chat_call(call_id, name, arguments)


def _tool(entry: Mapping[str, Any], index: int) -> dict[str, Any]:
    schema = parsed_json(entry.get("tool.json_schema"), f"llm.tools.{index}.tool.json_schema")
    function = schema.get("function") if isinstance(schema, Mapping) else None
    source = function if isinstance(function, Mapping) else schema
    if not isinstance(source, Mapping) or not isinstance(source.get("name"), str):
        raise Unreadable(f"llm.tools.{index}.tool.json_schema names no tool")
    parameters = source.get("parameters")
    return {
        "name": source["name"],
        "description": str(source.get("description") or ""),
        "parameters": dict(parameters) if isinstance(parameters, Mapping) else {},
    }


def _tool_run(span: Span) -> ToolRun:
    attributes = span.attributes
    name = attributes.get("tool.name")
    call_id = attributes.get("tool.id") or attributes.get("tool_call.id")
    if not isinstance(name, str) or not name:
        raise Unreadable("a TOOL span without tool.name")
    if not isinstance(call_id, str) or not call_id:
        raise Unreadable(f"the TOOL span of {name!r} has no tool.id (the call it answers)")
    result = attributes.get("output.value")
    session = attributes.get(SESSION)
    return ToolRun(
        span,
        call_id,
        name,
        None if result is None else text_of(result),
        span.error,
        session if isinstance(session, str) else None,
    )
