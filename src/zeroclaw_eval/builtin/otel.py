"""The ``otel`` formatter: the run's verdicts and model requests as OpenTelemetry traces.

``--report otel:PATH`` writes OTLP/JSON (one export request a line, the format of
the OpenTelemetry Collector's file exporter); ``--report otel:URL`` sends the same
spans to an OTLP/HTTP endpoint (``http://127.0.0.1:4318/v1/traces``, the URL used
as given) as protobuf, the encoding every OTLP receiver accepts. Headers for the
endpoint (an API key, a project) come from the environment, as OpenTelemetry's
exporters read them: ``OTEL_EXPORTER_OTLP_TRACES_HEADERS``, else
``OTEL_EXPORTER_OTLP_HEADERS`` (``key=value`` pairs, comma-separated, values
URL-encoded); they are never written anywhere. The spans are described in
:mod:`zeroclaw_eval.builtin.otel_spans`.

Asking for this report is what makes a run keep its trace
(:attr:`~zeroclaw_eval.report.formatter.Formatter.traces`); nothing of
OpenTelemetry is imported unless it is asked for, and then it needs the ``otel``
extra. It is set up as OpenTelemetry's own instrumentations are, from the
environment: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` adds the
model requests' messages and tools (opt-in), ``OTEL_SERVICE_NAME`` names the
service (default ``zeroclaw-eval``), ``OTEL_RESOURCE_ATTRIBUTES`` adds to the
resource. Every variable is checked before any case runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from zeroclaw_eval.errors import ConfigError, ReportError
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.formatter import Formatter
from zeroclaw_eval.report.model import SuiteReport

if TYPE_CHECKING:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

HEADERS_ENV = ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
"""Where the endpoint's headers are read from, the first one set: OpenTelemetry's names."""

EXTRA = "pip install 'zeroclaw-eval[otel]'"


CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""Set to ``true`` to add each model request's input and output messages, system
instructions and tool definitions (a ``gen_ai.client.inference.operation.details``
event): the variable OpenTelemetry's GenAI instrumentations read. Off by default,
as the conventions ask: they hold what the fixtures and the agent wrote."""

SERVICE_ENV = "OTEL_SERVICE_NAME"
DEFAULT_SERVICE = "zeroclaw-eval"

TIMEOUT_S = 10.0
"""How long sending to an endpoint may take before the report fails."""

RETRYABLE = frozenset({429, 502, 503, 504})
"""The statuses the OTLP/HTTP specification says a client retries (with the wait a
``Retry-After`` asks for, else an exponential backoff)."""

ATTEMPTS = 4
"""How many times the spans are sent to an endpoint that answers a retryable status."""

MAX_WAIT_S = 5.0
"""The longest wait between attempts: an endpoint that asks for more is not waited
for (the run would hang on its report), and the report fails saying so."""


def capture_content(environ: Mapping[str, str]) -> bool:
    """Whether :data:`CONTENT_ENV` asks for the content. Raises
    :class:`~zeroclaw_eval.errors.ConfigError` for a value that is neither
    ``true`` nor ``false`` (any case; unset or empty is ``false``)."""
    value = environ.get(CONTENT_ENV, "").strip().lower()
    if value not in ("", "true", "false"):
        raise ConfigError(f"{CONTENT_ENV}={environ[CONTENT_ENV]!r}: expected true or false")
    return value == "true"


class OtelFormatter(Formatter):
    """The run as OpenTelemetry spans: OTLP/JSON in a file, or OTLP/HTTP to an endpoint."""

    name = "otel"
    description = "OpenTelemetry traces: OTLP/JSON to a file, or OTLP/HTTP to an endpoint URL"
    machine_readable = True
    traces = True
    sends = True

    def check(self) -> None:
        """The ``otel`` extra is installed, and every variable read is well formed."""
        try:
            import zeroclaw_eval.builtin.otel_spans  # noqa: F401 - importable is the check
        except ImportError as exc:
            raise ConfigError(
                f"the otel report needs OpenTelemetry ({exc.name} is missing): {EXTRA}"
            ) from None
        capture_content(os.environ)
        endpoint_headers(os.environ)

    def render(self, report: SuiteReport) -> str:
        request = self._request(report)  # first: it says when the extra is missing
        from zeroclaw_eval.builtin.otel_spans import otlp_json

        return otlp_json(request) + "\n"

    def send(self, report: SuiteReport, url: str) -> None:
        try:
            headers = endpoint_headers(os.environ)
        except ConfigError as exc:
            raise ReportError(str(exc)) from None
        body = self._request(report).SerializeToString()
        post(url, body, headers, TIMEOUT_S)

    def _request(self, report: SuiteReport) -> ExportTraceServiceRequest:
        try:
            from zeroclaw_eval.builtin.otel_spans import export_request, run_spans
        except ImportError as exc:
            raise ReportError(
                f"the otel report needs OpenTelemetry ({exc.name} is missing): {EXTRA}"
            ) from None
        try:
            content = capture_content(os.environ)
        except ConfigError as exc:
            raise ReportError(str(exc)) from None
        service = os.environ.get(SERVICE_ENV, "").strip() or DEFAULT_SERVICE
        return export_request(run_spans(report, content=content, service_name=service))


def endpoint_headers(environ: Mapping[str, str]) -> dict[str, str]:
    """The headers the environment gives the endpoint (see :data:`HEADERS_ENV`).

    Raises :class:`~zeroclaw_eval.errors.ConfigError` naming the variable and the
    entry's position for an entry that is not ``key=value``, never quoting a value.
    """
    for variable in HEADERS_ENV:
        text = environ.get(variable)
        if text is None or not text.strip():
            continue
        headers: dict[str, str] = {}
        for number, entry in enumerate(text.split(","), 1):
            key, equals, value = entry.partition("=")
            key = unquote(key).strip()
            if not equals or not key or any(c in key for c in " \t\r\n:"):
                raise ConfigError(
                    f"{variable}: entry {number} is not key=value (URL-encoded, comma-separated)"
                )
            value = unquote(value).strip()
            if any(c in value for c in "\r\n"):
                raise ConfigError(f"{variable}: entry {number} ({key}): a value holds a line break")
            headers[key] = value
        return headers
    return {}


def post(url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> None:
    """POST ``body`` (an OTLP protobuf export request) to ``url``, again after a
    retryable status (:data:`RETRYABLE`, up to :data:`ATTEMPTS` times). Raises
    :class:`~zeroclaw_eval.errors.ReportError` naming the URL and what went wrong: a
    status other than 2xx (with the start of the endpoint's answer), spans it said
    it rejected, or no answer at all."""
    import urllib.error

    for attempt in range(1, ATTEMPTS + 1):
        try:
            _post_once(url, body, headers, timeout_s)
            return
        except urllib.error.HTTPError as exc:
            failed = f"otel:{url}: the endpoint answered {exc.code} {exc.reason}"
            if exc.code in RETRYABLE:
                wait = _wait(exc.headers.get("Retry-After"), attempt)
                if wait > MAX_WAIT_S:
                    failed += f" (asked to wait {wait:g} s, more than the {MAX_WAIT_S:g} s waited)"
                elif attempt < ATTEMPTS:
                    time.sleep(wait)
                    continue
                else:
                    failed += f" ({attempt} attempts)"
            said = exc.read(300).decode("utf-8", "replace").strip()
            raise ReportError(failed + (f": {' '.join(said.split())}" if said else "")) from None


def _wait(retry_after: str | None, attempt: int) -> float:
    """The seconds to wait before attempt ``attempt + 1``: what ``Retry-After`` asks (in
    seconds), else 0.5 s doubled for each attempt made."""
    if retry_after is not None:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            pass  # an HTTP date: the backoff instead
    return 0.5 * 2.0 ** (attempt - 1)


def _post_once(url: str, body: bytes, headers: Mapping[str, str], timeout_s: float) -> None:
    """One POST; an HTTP error status is raised as urllib raises it."""
    import urllib.error
    import urllib.request

    from zeroclaw_eval.version import __version__

    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/x-protobuf",
            "User-Agent": f"zeroclaw-eval/{__version__}",
            **headers,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            answer = response.read()
            kind = response.headers.get("Content-Type", "")
    except urllib.error.HTTPError:
        raise
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ReportError(f"otel:{url}: could not send the spans: {reason}") from None
    rejected = _rejected(answer, kind)
    if rejected:
        raise ReportError(f"otel:{url}: the endpoint rejected {rejected}")


def _rejected(answer: bytes, kind: str) -> str:
    """What a protobuf answer's ``partial_success`` says was rejected, else ``""``."""
    if not answer or "protobuf" not in kind:
        return ""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    response = ExportTraceServiceResponse()
    try:
        response.ParseFromString(answer)
    except Exception:  # an answer that is not one says nothing of rejection
        return ""
    partial: Any = response.partial_success
    if partial.rejected_spans:
        message = f": {partial.error_message}" if partial.error_message else ""
        return f"{partial.rejected_spans} spans{message}"
    return ""


@hookimpl
def zeroclaw_eval_register_formatters(register: Callable[[Formatter], None]) -> None:
    register(OtelFormatter())
