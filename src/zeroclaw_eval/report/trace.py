"""What a run observed for a tracing backend: its trace context, and each model exchange.

Kept only when a report asks for it (a formatter whose
:attr:`~zeroclaw_eval.report.formatter.Formatter.traces` is true, the ``otel``
one): then the run gets a W3C trace context before any case starts, each case
attempt a span of its own in it (handed to the agent under test, so that the
agent's own spans join the trace), and each model request the agent made is kept
with its wall-clock times and what the model side answered. A plain run keeps
none of it and pays nothing for it.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

TRACEPARENT_ENV = "TRACEPARENT"
"""The environment variable a command agent finds the trace context of its case in:
the OpenTelemetry convention for carrying ``traceparent`` through the environment."""


@dataclass(frozen=True)
class SpanContext:
    """A span's place in a trace: ``trace_id`` (32 hex digits) and ``span_id`` (16),
    both lower-case and never all zeros, as W3C Trace Context requires."""

    trace_id: str
    span_id: str

    @classmethod
    def root(cls) -> SpanContext:
        """A new trace, and the id of its first span."""
        return cls(_random_hex(16), _random_hex(8))

    @classmethod
    def of_traceparent(cls, header: str | None) -> SpanContext | None:
        """The span a ``traceparent`` header names (version ``00``), or ``None`` for
        a header that is absent or not one, which W3C Trace Context says to ignore."""
        found = _TRACEPARENT.fullmatch(header.strip()) if header else None
        if found is None or not found["trace"].strip("0") or not found["span"].strip("0"):
            return None
        return cls(found["trace"], found["span"])

    def child(self) -> SpanContext:
        """A new span in the same trace."""
        return SpanContext(self.trace_id, _random_hex(8))

    @property
    def traceparent(self) -> str:
        """The ``traceparent`` header value naming this span as the parent, sampled."""
        return f"00-{self.trace_id}-{self.span_id}-01"


_TRACEPARENT = re.compile(r"00-(?P<trace>[0-9a-f]{32})-(?P<span>[0-9a-f]{16})-[0-9a-f]{2}")


def _random_hex(size: int) -> str:
    while True:
        value = secrets.token_hex(size)
        if value.strip("0"):  # an all-zero id is invalid
            return value


@dataclass(frozen=True)
class Exchange:
    """One model request as the run saw it: when it was asked and answered
    (``started_ns``, ``ended_ns``: nanoseconds since the epoch), what was sent
    (``messages`` in the chat-completions shape, ``tools`` as name, description and
    parameters, ``request_model`` when the request named one, ``api`` the wire it
    came over) and what the model side answered (``response_model`` when it said,
    the tokens it counted, the reply's text and tool calls, ``finish_reason``).
    ``error`` is the failure of a request that got no answer. ``parent`` is the
    agent's span that made the request, when the request said so (its
    ``traceparent`` header): its span then nests under it."""

    started_ns: int
    ended_ns: int
    messages: Sequence[Mapping[str, Any]] = ()
    tools: Sequence[Mapping[str, Any]] = ()
    request_model: str | None = None
    api: str = "in-process"
    response_model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    content: str | None = None
    tool_calls: Sequence[Mapping[str, Any]] = ()
    finish_reason: str | None = None
    error: str | None = None
    parent: SpanContext | None = None


@dataclass(frozen=True)
class AttemptTrace:
    """One case attempt's span (``span``, a child of the run's), when the attempt
    began and ended (nanoseconds since the epoch), and its model exchanges in order."""

    span: SpanContext
    started_ns: int
    ended_ns: int
    exchanges: tuple[Exchange, ...] = field(default=())


@dataclass(frozen=True)
class RunTrace:
    """The run's span (the root of its trace) and when the run began and ended."""

    span: SpanContext
    started_ns: int
    ended_ns: int


__all__ = ["TRACEPARENT_ENV", "AttemptTrace", "Exchange", "RunTrace", "SpanContext"]
