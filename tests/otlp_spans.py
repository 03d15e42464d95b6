"""Hand-made OTLP JSON: spans written as the OTel GenAI conventions and OpenInference
write them, for the importer's tests of what no instrumentation emits on demand (a
broken span, a secret, a session across traces)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_SPAN_IDS = itertools.count(1)


def value(item: Any) -> dict[str, Any]:
    """``item`` as an OTLP ``AnyValue``."""
    if isinstance(item, bool):
        return {"boolValue": item}
    if isinstance(item, int):
        return {"intValue": str(item)}  # OTLP JSON writes 64-bit integers as text
    if isinstance(item, float):
        return {"doubleValue": item}
    if isinstance(item, (list, tuple)):
        return {"arrayValue": {"values": [value(entry) for entry in item]}}
    return {"stringValue": str(item)}


def span(
    trace_id: str,
    name: str,
    attributes: Mapping[str, Any],
    *,
    start: int,
    error: bool = False,
    span_id: str | None = None,
) -> dict[str, Any]:
    """One span of trace ``trace_id`` (32 hex digits) starting at ``start`` ns."""
    return {
        "traceId": trace_id,
        "spanId": span_id or f"{next(_SPAN_IDS):016x}",
        "name": name,
        "kind": 3,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1000),
        "attributes": [{"key": key, "value": value(item)} for key, item in attributes.items()],
        "status": {"code": 2} if error else {},
    }


def export(spans: Sequence[dict[str, Any]], scope: str = "hand-made", version: str = "1.0"):
    """An ``ExportTraceServiceRequest`` holding ``spans``."""
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": value("shop")}]},
                "scopeSpans": [{"scope": {"name": scope, "version": version}, "spans": spans}],
            }
        ]
    }


def write_lines(path: Path, *requests: dict[str, Any]) -> Path:
    """``requests`` as the OTel file exporter writes them: one JSON object per line."""
    path.write_text("".join(json.dumps(request) + "\n" for request in requests), "utf-8")
    return path


# --- the OTel GenAI conventions ----------------------------------------------------


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def calls(*entries: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
            for call_id, name, arguments in entries
        ],
    }


def results(*entries: tuple[str, str]) -> dict[str, Any]:
    return {
        "role": "tool",
        "parts": [
            {"type": "tool_call_response", "id": call_id, "response": response}
            for call_id, response in entries
        ],
    }


def chat(
    trace_id: str,
    inputs: Sequence[dict[str, Any]],
    output: dict[str, Any],
    *,
    start: int,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A GenAI inference span, content captured on the span."""
    return span(
        trace_id,
        "chat gpt-4o-mini",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
            "gen_ai.usage.input_tokens": 40,
            "gen_ai.usage.output_tokens": 9,
            "gen_ai.input.messages": json.dumps(list(inputs)),
            "gen_ai.output.messages": json.dumps([output]),
            **(extra or {}),
        },
        start=start,
    )


def execute_tool(
    trace_id: str, call_id: str, name: str, result: str, *, start: int, error: bool = False
) -> dict[str, Any]:
    """A GenAI ``execute_tool`` span."""
    return span(
        trace_id,
        f"execute_tool {name}",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.call.arguments": "{}",
            "gen_ai.tool.call.result": result,
        },
        start=start,
        error=error,
    )


WEATHER_TOOL = {
    "type": "function",
    "name": "weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
