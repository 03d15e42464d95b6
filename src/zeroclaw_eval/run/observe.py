"""Each model exchange of a case attempt, timed, for a report that traces the run.

:class:`ObservedProvider` stands between the agent and the mode's provider: every
request reaches the provider as before, and its wall-clock times, what was sent
and what came back are kept as an :class:`~zeroclaw_eval.report.trace.Exchange`.
The runner wraps the provider only when a report asked for a trace
(:attr:`~zeroclaw_eval.report.formatter.Formatter.traces`), so a plain run pays
nothing. Whatever the agent kind (the reference loop calls the provider itself, a
bridged agent reaches it through the model bridge), each request the agent makes
is one call of :meth:`respond`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from zeroclaw_eval.grading.record import ModelRequest
from zeroclaw_eval.modes.base import CaseProvider
from zeroclaw_eval.protocol import Message, ModelReply, Tool, finish_reason, tool_call_entries
from zeroclaw_eval.report.trace import AttemptTrace, Exchange, SpanContext


class ObservedProvider(CaseProvider):
    """``provider``, with each exchange kept (:attr:`exchanges`, in order)."""

    def __init__(self, provider: CaseProvider) -> None:
        self._provider = provider
        self._lock = threading.Lock()  # a bridged agent's requests arrive on the server's threads
        self._exchanges: list[Exchange] = []

    def begin_turn(self, turn: int) -> None:
        self._provider.begin_turn(turn)

    def end_turn(self, turn: int) -> None:
        self._provider.end_turn(turn)

    def respond(self, messages: Sequence[Message], tools: Sequence[Tool]) -> ModelReply:
        sent = [dict(message) for message in messages]
        offered = [
            {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
            for tool in tools
        ]
        started = time.time_ns()

        def keep(**answered: Any) -> None:
            exchange = Exchange(started, time.time_ns(), sent, offered, **answered)
            with self._lock:
                self._exchanges.append(exchange)

        try:
            reply = self._provider.respond(messages, tools)
        except BaseException as exc:
            keep(error=f"{type(exc).__name__}: {exc}")
            raise
        keep(
            response_model=reply.model,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            content=reply.content,
            tool_calls=tool_call_entries(reply),
            finish_reason=finish_reason(reply),
        )
        return reply

    def exchanges(self, requests: Sequence[ModelRequest]) -> tuple[Exchange, ...]:
        """The exchanges so far, each with what the agent's request said of itself
        (the wire it came over, the model it named) when ``requests`` are the
        agent's recorded requests, one per exchange, in the same order."""
        with self._lock:
            kept = tuple(self._exchanges)
        if len(requests) != len(kept):  # an agent that records none, or a failed turn
            return kept
        return tuple(
            replace(
                exchange,
                api=request.api,
                request_model=_model(request.settings),
                parent=SpanContext.of_traceparent(request.traceparent),
            )
            for exchange, request in zip(kept, requests, strict=True)
        )


def _model(settings: Mapping[str, Any]) -> str | None:
    model = settings.get("model")
    return model if isinstance(model, str) and model else None


class AttemptTracing:
    """One case attempt being traced: its ``span``, when it began, and the provider
    watched for it. :meth:`finish` makes the attempt's
    :class:`~zeroclaw_eval.report.trace.AttemptTrace`."""

    def __init__(self, span: SpanContext) -> None:
        self.span = span
        self.started_ns = time.time_ns()
        self._observed: ObservedProvider | None = None

    def observe(self, provider: CaseProvider) -> CaseProvider:
        """``provider``, watched: its exchanges become this attempt's."""
        self._observed = ObservedProvider(provider)
        return self._observed

    def finish(self, requests: Sequence[ModelRequest]) -> AttemptTrace:
        """The attempt's trace, ending now; ``requests`` are those the agent recorded."""
        exchanges = self._observed.exchanges(requests) if self._observed is not None else ()
        return AttemptTrace(self.span, self.started_ns, time.time_ns(), exchanges)
