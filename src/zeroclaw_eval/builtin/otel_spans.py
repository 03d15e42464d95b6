"""A traced run as OpenTelemetry spans, and those spans as OTLP.

Imported only when an ``otel`` report is written (:mod:`zeroclaw_eval.builtin.otel`):
it needs the ``otel`` extra (``pip install 'zeroclaw-eval[otel]'``), the official
SDK's span type and its OTLP encoder, so that what a backend receives is encoded
by OpenTelemetry's own code.

The spans, all in the run's one trace:

- the run (``zeroclaw eval run``): ``test.suite.name``, ``test.suite.run.status``
  and the run's counts and settings under ``zeroclaw_eval.*``;
- one per case attempt (``case NAME``), a child of the run's: ``test.case.name``,
  ``test.case.result.status`` (``pass`` or ``fail``), and each check as a
  ``gen_ai.evaluation.result`` event (``gen_ai.evaluation.name``, the family;
  ``gen_ai.evaluation.score.value`` 1 or 0 and ``.label`` ``pass`` or ``fail``;
  ``gen_ai.evaluation.explanation``, what was observed);
- one per model request (``chat MODEL``, kind client), a child of its attempt's
  (or of the agent's own span that made it, when the request carried it in a
  ``traceparent`` header in this trace),
  with the GenAI attributes the run has for it (``gen_ai.operation.name``,
  ``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.response.model``,
  ``gen_ai.usage.*_tokens``, ``gen_ai.response.finish_reasons``) and, when the
  content is asked for, a ``gen_ai.client.inference.operation.details`` event with
  the input and output messages, the system instructions and the tool definitions,
  in the conventions' JSON shapes.

Every time is one the run recorded (:mod:`zeroclaw_eval.report.trace`); the text
went through the run's redaction of the provider's key with the rest of the report.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext as OtelSpanContext
from opentelemetry.trace import SpanKind, Status, StatusCode, TraceFlags

from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport
from zeroclaw_eval.report.trace import AttemptTrace, Exchange, RunTrace, SpanContext
from zeroclaw_eval.version import __version__

SCOPE = InstrumentationScope("zeroclaw_eval", __version__)
"""The instrumentation scope every span is reported under."""

EVALUATION_EVENT = "gen_ai.evaluation.result"
DETAILS_EVENT = "gen_ai.client.inference.operation.details"

#: The Chat Completions finish reasons as the conventions' output messages name them.
_FINISH = {"tool_calls": "tool_call", "stop": "stop", "length": "length"}


def run_spans(report: SuiteReport, *, content: bool, service_name: str) -> list[ReadableSpan]:
    """Every span of ``report``'s run, the run's first; ``content`` adds each model
    request's messages and tools (opt-in: they may hold what users typed)."""
    run = report.trace or _untraced()
    resource = Resource.create({"service.name": service_name, "service.version": __version__})
    spans = [_run_span(report, run, resource)]
    for case in report.cases:
        for number, attempt in enumerate(case.attempts or (case,), 1):
            spans.extend(_attempt_spans(report, run, attempt, number, case.runs, resource, content))
    return spans


def _untraced() -> RunTrace:
    """A run that kept no times (it stopped before any case ran): a span at now."""
    now = time.time_ns()
    return RunTrace(SpanContext.root(), now, now)


def _context(span: SpanContext) -> OtelSpanContext:
    return OtelSpanContext(
        int(span.trace_id, 16), int(span.span_id, 16), False, TraceFlags(TraceFlags.SAMPLED)
    )


def _run_span(report: SuiteReport, run: RunTrace, resource: Resource) -> ReadableSpan:
    failed = len(report.cases) - report.passed_count
    attributes: dict[str, Any] = {
        "test.suite.name": report.suite,
        "test.suite.run.status": _suite_status(report),
        "zeroclaw_eval.mode": report.mode,
        "zeroclaw_eval.gating": report.gating,
        "zeroclaw_eval.cases": len(report.cases),
        "zeroclaw_eval.passed": report.passed_count,
        "zeroclaw_eval.failed": failed,
        "zeroclaw_eval.repeats": report.repeats,
        "zeroclaw_eval.exit_code": report.exit_code(),
    }
    if report.agent:
        attributes["zeroclaw_eval.agent"] = report.agent
    if report.config_digest:
        attributes["zeroclaw_eval.config_digest"] = report.config_digest
    if report.errors:
        attributes["zeroclaw_eval.errors"] = list(report.errors)
    if report.all_passed:
        status = Status(StatusCode.OK)
    elif report.errors:
        status = Status(StatusCode.ERROR, report.errors[0])
    else:
        status = Status(StatusCode.ERROR, f"{failed} of {len(report.cases)} cases failed")
    return ReadableSpan(
        "zeroclaw eval run",
        context=_context(run.span),
        resource=resource,
        attributes=attributes,
        kind=SpanKind.INTERNAL,
        instrumentation_scope=SCOPE,
        status=status,
        start_time=run.started_ns,
        end_time=run.ended_ns,
    )


def _suite_status(report: SuiteReport) -> str:
    if report.interrupted is not None:
        return "aborted"
    return "success" if report.all_passed else "failure"


def _attempt_spans(
    report: SuiteReport,
    run: RunTrace,
    attempt: CaseReport,
    number: int,
    runs: int,
    resource: Resource,
    content: bool,
) -> Iterator[ReadableSpan]:
    # An attempt abandoned at its time limit, or never begun, kept no times of its own.
    trace = attempt.trace or AttemptTrace(run.span.child(), run.started_ns, run.ended_ns)
    attributes: dict[str, Any] = {
        "test.case.name": attempt.name,
        "test.case.result.status": "pass" if attempt.passed else "fail",
        "zeroclaw_eval.case.source": attempt.source,
        "zeroclaw_eval.case.attempt": number,
        "zeroclaw_eval.case.attempts": runs,
        "zeroclaw_eval.case.ran": attempt.ran,
    }
    if attempt.error is not None:
        attributes["zeroclaw_eval.case.error"] = attempt.error
    if attempt.warnings:
        attributes["zeroclaw_eval.case.warnings"] = list(attempt.warnings)
    if attempt.input_tokens is not None:
        attributes["gen_ai.usage.input_tokens"] = attempt.input_tokens
    if attempt.output_tokens is not None:
        attributes["gen_ai.usage.output_tokens"] = attempt.output_tokens
    failed = attempt.failed_checks
    if attempt.passed:
        status = Status(StatusCode.OK)
    elif attempt.error is not None:
        status = Status(StatusCode.ERROR, attempt.error)
    elif failed:
        status = Status(StatusCode.ERROR, f"{len(failed)} of {len(attempt.checks)} checks failed")
    else:
        status = Status(StatusCode.ERROR, "no check ran")
    yield ReadableSpan(
        f"case {attempt.name}",
        context=_context(trace.span),
        parent=_context(run.span),
        resource=resource,
        attributes=attributes,
        events=[_evaluation(check, trace.ended_ns) for check in attempt.checks],
        kind=SpanKind.INTERNAL,
        instrumentation_scope=SCOPE,
        status=status,
        start_time=trace.started_ns,
        end_time=trace.ended_ns,
    )
    for exchange in trace.exchanges:
        yield _request_span(report, trace, exchange, resource, content)


def _evaluation(check: CheckResult, at_ns: int) -> Event:
    """A check as the conventions' evaluation result: named by its family."""
    family = check.check.split(":", 1)[0].strip() or check.check
    return Event(
        EVALUATION_EVENT,
        {
            "gen_ai.evaluation.name": family,
            "gen_ai.evaluation.score.value": 1.0 if check.passed else 0.0,
            "gen_ai.evaluation.score.label": "pass" if check.passed else "fail",
            "gen_ai.evaluation.explanation": check.detail,
            "zeroclaw_eval.check": check.check,
        },
        timestamp=at_ns,
        limit=None,
    )


def _request_span(
    report: SuiteReport,
    attempt: AttemptTrace,
    exchange: Exchange,
    resource: Resource,
    content: bool,
) -> ReadableSpan:
    attributes = _request_attributes(report, exchange)
    events = []
    if content:
        details = {**attributes, **_details(exchange)}
        events.append(Event(DETAILS_EVENT, details, timestamp=exchange.ended_ns, limit=None))
    model = exchange.request_model or exchange.response_model
    # Under the agent's span that made the request, when it said so and is in this trace.
    parent = exchange.parent
    if parent is None or parent.trace_id != attempt.span.trace_id:
        parent = attempt.span
    return ReadableSpan(
        f"chat {model}" if model else "chat",
        context=_context(attempt.span.child()),
        parent=_context(parent),
        resource=resource,
        attributes=attributes,
        events=events,
        kind=SpanKind.CLIENT,
        instrumentation_scope=SCOPE,
        status=Status(StatusCode.ERROR, exchange.error)
        if exchange.error is not None
        else Status(StatusCode.UNSET),
        start_time=exchange.started_ns,
        end_time=exchange.ended_ns,
    )


def _request_attributes(report: SuiteReport, exchange: Exchange) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        # Who answered: the run's mode (the fixture's script in replay, a real model live).
        "gen_ai.provider.name": f"zeroclaw_eval.{report.mode}",
        "zeroclaw_eval.api": exchange.api,
    }
    if exchange.request_model is not None:
        attributes["gen_ai.request.model"] = exchange.request_model
    if exchange.response_model is not None:
        attributes["gen_ai.response.model"] = exchange.response_model
    if exchange.error is not None:
        attributes["error.type"] = exchange.error.split(":", 1)[0]
        return attributes
    if exchange.input_tokens or exchange.output_tokens:  # a reply that counted none said nothing
        attributes["gen_ai.usage.input_tokens"] = exchange.input_tokens
        attributes["gen_ai.usage.output_tokens"] = exchange.output_tokens
    if exchange.finish_reason is not None:
        attributes["gen_ai.response.finish_reasons"] = [exchange.finish_reason]
    return attributes


def _details(exchange: Exchange) -> dict[str, Any]:
    """The opt-in content of the details event, in the conventions' JSON shapes."""
    system = [
        {"type": "text", "content": _text(message.get("content"))}
        for message in exchange.messages
        if message.get("role") in ("system", "developer")
    ]
    details: dict[str, Any] = {
        "gen_ai.input.messages": [
            _message(message)
            for message in exchange.messages
            if message.get("role") not in ("system", "developer")
        ],
        "gen_ai.tool.definitions": [
            {
                "type": "function",
                "name": tool.get("name"),
                "description": tool.get("description"),
                "parameters": tool.get("parameters"),
            }
            for tool in exchange.tools
        ],
    }
    if system:
        details["gen_ai.system_instructions"] = system
    if exchange.error is None:
        output = _message(
            {"role": "assistant", "content": exchange.content, "tool_calls": exchange.tool_calls}
        )
        output["finish_reason"] = _FINISH.get(exchange.finish_reason or "", "stop")
        details["gen_ai.output.messages"] = [output]
    return details


def _message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A chat-completions message as the conventions' message: a role and its parts."""
    role = message.get("role")
    parts: list[dict[str, Any]] = []
    if role == "tool":
        parts.append(
            {
                "type": "tool_call_response",
                "id": message.get("tool_call_id"),
                "response": _text(message.get("content")),
            }
        )
    elif message.get("content") not in (None, ""):
        parts.append({"type": "text", "content": _text(message.get("content"))})
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": _arguments(function.get("arguments")),
            }
        )
    return {"role": role, "parts": parts}


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def _arguments(arguments: Any) -> Any:
    """Tool-call arguments as the object they are, when their JSON text parses."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def export_request(spans: Sequence[ReadableSpan]) -> ExportTraceServiceRequest:
    """``spans`` as one OTLP export request, by the official encoder."""
    return encode_spans(spans)


def otlp_json(request: ExportTraceServiceRequest) -> str:
    """``request`` as OTLP/JSON, one line: what the OpenTelemetry Collector's file
    exporter writes, and an OTLP/HTTP JSON body. The JSON mapping of protobuf, with
    the differences OTLP specifies: trace and span ids in hex, not base64, and enum
    values as integers."""
    document = MessageToDict(request, use_integers_for_enums=True)
    for resource_spans in document.get("resourceSpans", ()):
        for scope_spans in resource_spans.get("scopeSpans", ()):
            for span in scope_spans.get("spans", ()):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _hex(span[key])
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def _hex(base64_text: str) -> str:
    import base64

    return base64.b64decode(base64_text).hex()
