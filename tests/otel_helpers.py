"""Reading an ``otel`` report back with OpenTelemetry's own protobuf types."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.json_format import ParseDict  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span


def read_otlp_json(path: Path) -> list[ExportTraceServiceRequest]:
    """Each line of an OTLP/JSON file as the export request it is. The parse is the
    protobuf JSON mapping, strict (an unknown field fails), after turning the hex
    ids OTLP/JSON specifies back into the mapping's base64."""
    requests = []
    for line in path.read_text(encoding="utf-8").splitlines():
        document = json.loads(line)
        for resource_spans in document["resourceSpans"]:
            for scope_spans in resource_spans["scopeSpans"]:
                for span in scope_spans["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            assert len(span[key]) in (16, 32) and span[key] == span[key].lower()
                            span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        requests.append(ParseDict(document, ExportTraceServiceRequest()))
    return requests


def spans_of(*requests: ExportTraceServiceRequest) -> Iterator[Span]:
    for request in requests:
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                yield from scope_spans.spans


def plain(value: AnyValue) -> Any:
    """An OTLP value as plain Python data."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [plain(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {item.key: plain(item.value) for item in value.kvlist_value.values}
    return getattr(value, kind)


def attributes(item: Any) -> dict[str, Any]:
    """A span's or an event's attributes, as plain data."""
    return {attribute.key: plain(attribute.value) for attribute in item.attributes}


@dataclass(frozen=True)
class Tree:
    """A run's spans: the run's, each case attempt's, each model request's by its attempt."""

    run: Span
    cases: dict[str, Span]
    requests: dict[str, list[Span]]

    @classmethod
    def of(cls, spans: list[Span]) -> Tree:
        (run,) = [span for span in spans if not span.parent_span_id]
        below_run = [span for span in spans if span.parent_span_id == run.span_id]
        cases = {attributes(span)["test.case.name"]: span for span in below_run}
        requests = {
            name: sorted(
                (s for s in spans if s.parent_span_id == case.span_id),
                key=lambda s: s.start_time_unix_nano,
            )
            for name, case in cases.items()
        }
        assert len(spans) == 1 + len(cases) + sum(map(len, requests.values()))
        return cls(run, cases, requests)
