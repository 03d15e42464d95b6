"""The run's trace context, handed to the agent under test when a report traces the run.

``--report otel:...`` gives each case attempt a span (:mod:`zeroclaw_eval.report.trace`);
for the agent's own spans to land under it, the agent is told its
``traceparent``: a command agent in the ``TRACEPARENT`` environment variable
(:mod:`zeroclaw_eval.agents.command`, OpenTelemetry's convention for the
environment as a carrier), and an in-process factory agent as OpenTelemetry's
current context on the thread that makes it and runs its turns (:func:`attached`),
which its instrumentation reads like any parent span.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def attached(traceparent: str | None) -> Iterator[None]:
    """``traceparent`` as OpenTelemetry's current context on this thread, meanwhile.

    Nothing is done when it is ``None`` (no report traces the run) or when
    OpenTelemetry's API is not installed: an agent without it has no spans to join.
    """
    if traceparent is None:
        yield
        return
    try:
        from opentelemetry import context
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
    except ImportError:
        yield
        return
    # The W3C propagator itself, not the global one a team may have set to another format.
    carried = TraceContextTextMapPropagator().extract({"traceparent": traceparent})
    token = context.attach(carried)
    try:
        yield
    finally:
        context.detach(token)
