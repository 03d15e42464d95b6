"""What the importer finds in spans, whichever convention wrote them.

A :class:`ModelCall` is one request to the model and its reply: the request's
messages in the Chat Completions shape the harness normalises requests in (so
that a stored request compares with a replay's, see
:mod:`zeroclaw_eval.grading.requests`), the tools it offered when the span says,
its settings, and the reply as a :class:`~zeroclaw_eval.protocol.ModelReply`. A
:class:`ToolRun` is one tool execution a span shows, with its result. A
:class:`Refused` is a span that looked like one of them and could not be read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zeroclaw_eval.protocol import ModelReply
from zeroclaw_eval.traces.otlp import Span


@dataclass(frozen=True)
class ModelCall:
    """One model request and its reply, as a span recorded them."""

    span: Span
    messages: Sequence[Mapping[str, Any]]
    reply: ModelReply
    tools: Sequence[Mapping[str, Any]] | None = None
    """The offered tools (``name``, ``description``, ``parameters``), or ``None`` when
    the span does not show them."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    session: str | None = None


@dataclass(frozen=True)
class ToolRun:
    """A tool executed: which call it answered, and what it returned."""

    span: Span
    call_id: str
    name: str
    result: str | None
    error: bool = False
    session: str | None = None


@dataclass(frozen=True)
class Refused:
    """A span the importer cannot read, and why."""

    span: Span
    reason: str
    spoils: bool = True
    """Whether the conversation the span belongs to is refused with it: a step the
    importer could not read leaves a script with a hole. A model call that failed
    (and that the agent retried, or gave up on) is no step, and spoils nothing."""

    def __str__(self) -> str:
        return f"{self.span.label()} ({self.span.name!r}): {self.reason}"


class Unreadable(ValueError):
    """Raised inside a convention's reader; becomes a :class:`Refused`."""

    def __init__(self, reason: str, *, spoils: bool = True) -> None:
        super().__init__(reason)
        self.spoils = spoils


#: Why a model call that failed is no step of its conversation.
FAILED_CALL = "the model call failed (status ERROR): no reply, so no step; skipped"


def parsed_json(value: Any, what: str) -> Any:
    """``value`` parsed when it is JSON text (attributes hold structures as text), as it
    is otherwise. Raises :class:`Unreadable` naming ``what``."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        raise Unreadable(f"{what} is not JSON ({exc})") from None
    except RecursionError:
        raise Unreadable(f"{what} is JSON nested too deeply to read") from None


def chat_call(call_id: str, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A tool call as an assistant message of a Chat Completions request holds it
    (``arguments`` as JSON text), whichever convention the span was written in."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def read_span(
    span: Span,
    is_tool_run: bool,
    tool_run: Callable[[Span], ToolRun],
    model_call: Callable[[Span], ModelCall],
) -> ModelCall | ToolRun | Refused:
    """``span`` read by a convention's ``tool_run`` or ``model_call`` reader, or the
    :class:`Refused` its :class:`Unreadable` became."""
    try:
        return tool_run(span) if is_tool_run else model_call(span)
    except Unreadable as exc:
        return Refused(span, str(exc), exc.spoils)


def token_count(value: Any) -> int:
    """A usage attribute as a token count (0 when it is missing or no count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def text_of(value: Any) -> str:
    """A tool result or response as the text a model was shown."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
