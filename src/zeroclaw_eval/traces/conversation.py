"""Spans become conversations: the model calls of one trace (or one session) in
order, cut into the turns of a user, with each tool call's result.

A call starts a new turn when its request holds more user messages than the
previous call's (an agent that carries its history), or when its last user
message differs from the turn's (one that does not). The calls of a turn are its
steps; a tool call's result is the ``execute_tool`` / ``TOOL`` span that answered
it, else the tool message that a later request carries for its id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from zeroclaw_eval.traces import genai, openinference
from zeroclaw_eval.traces.calls import ModelCall, Refused, ToolRun
from zeroclaw_eval.traces.otlp import Span

Grouping = Literal["trace", "session"]


@dataclass(frozen=True)
class Result:
    """A tool call's result as the trace shows it."""

    name: str
    text: str
    error: bool = False


@dataclass
class Turn:
    """A user message and the model calls that answered it, in order."""

    user_input: str
    calls: list[ModelCall] = field(default_factory=list)


@dataclass
class Conversation:
    """One conversation: its key (a trace or session id), turns, tool results by call
    id, the tool offer when a span shows it, and the instrumentations it came from."""

    key: str
    turns: list[Turn]
    results: dict[str, Result]
    tools: list[Mapping[str, Any]] | None
    sources: list[str]

    @property
    def calls(self) -> list[ModelCall]:
        """Every model call, in order."""
        return [call for turn in self.turns for call in turn.calls]


@dataclass
class Found:
    """What :func:`conversations` found: the conversations, a line for each span or
    conversation it could not read, and how many spans were neither a model call nor
    a tool execution (an agent's own spans, HTTP spans: nothing to script)."""

    conversations: list[Conversation] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    other_spans: int = 0


def conversations(spans: Iterable[Span], by: Grouping = "trace") -> Found:
    """The conversations in ``spans``, one per trace or per session (``by``); a trace
    with no session id is a session of its own."""
    found = Found()
    read: list[ModelCall | ToolRun] = []
    spoiled: dict[str, Refused] = {}  # trace id -> its first span that spoils it
    sessions: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for span in spans:
        if (span.trace_id, span.span_id) in seen:
            continue  # the same span exported twice
        seen.add((span.trace_id, span.span_id))
        session = span.attributes.get(genai.SESSION) or span.attributes.get(openinference.SESSION)
        if isinstance(session, str) and session:
            sessions.setdefault(span.trace_id, session)
        if genai.claims(span):
            item = genai.read(span)
        elif openinference.claims(span):
            item = openinference.read(span)
        else:
            found.other_spans += 1
            continue
        if isinstance(item, Refused):
            found.refused.append(str(item))
            if item.spoils:
                spoiled.setdefault(span.trace_id, item)
        else:
            read.append(item)
    groups: dict[str, list[ModelCall | ToolRun]] = {}
    for item in read:
        key = item.span.trace_id
        if by == "session":
            key = item.session or sessions.get(item.span.trace_id) or key
        groups.setdefault(key, []).append(item)
    for key, items in groups.items():
        hole = next((spoiled[i.span.trace_id] for i in items if i.span.trace_id in spoiled), None)
        if hole is not None:
            found.refused.append(
                f"{by} {key}: not written: its span {hole.span.span_id} could not be read, "
                "and a script without that step would not be the conversation"
            )
            continue
        built = _conversation(key, items, f"{by} {key}")
        if isinstance(built, str):
            found.refused.append(built)
        else:
            found.conversations.append(built)
    return found


def _conversation(key: str, items: list[ModelCall | ToolRun], name: str) -> Conversation | str:
    """The conversation of ``items``, or a line saying why they make none (``name``
    says which, where no span does)."""
    items.sort(key=lambda item: item.span.start_ns)
    calls = [item for item in items if isinstance(item, ModelCall)]
    runs = {item.call_id: item for item in items if isinstance(item, ToolRun)}
    if not calls:
        return f"{name}: tool executions but no model call: nothing to script"
    turns: list[Turn] = []
    previous: ModelCall | None = None
    for call in calls:
        users = [m for m in call.messages if m.get("role") == "user"]
        if not users:
            return f"{call.span.label()}: the request holds no user message"
        last = users[-1].get("content")
        if not isinstance(last, str) or not last:
            return f"{call.span.label()}: the request's last user message has no text"
        before = (
            0 if previous is None else sum(1 for m in previous.messages if m.get("role") == "user")
        )
        if previous is None or len(users) > before or last != turns[-1].user_input:
            if previous is not None and previous.reply.tool_calls:
                return (
                    f"{previous.span.label()}: turn {len(turns) - 1} ends on tool calls: "
                    "the trace holds no model answer after their results"
                )
            turns.append(Turn(last))
        turns[-1].calls.append(call)
        previous = call
    assert previous is not None
    if previous.reply.tool_calls:
        return (
            f"{previous.span.label()}: the last turn ends on tool calls: the trace holds "
            "no model answer after their results"
        )
    results = _results(calls, runs)
    tools = next((list(call.tools) for call in calls if call.tools is not None), None)
    sources = list(dict.fromkeys(item.span.scope for item in items if item.span.scope))
    return Conversation(key, turns, results, tools, sources)


def _results(calls: list[ModelCall], runs: Mapping[str, ToolRun]) -> dict[str, Result]:
    names = {request.call_id: request.name for call in calls for request in call.reply.tool_calls}
    results: dict[str, Result] = {}
    for call_id, run in runs.items():
        if call_id in names and run.result is not None:
            results[call_id] = Result(names[call_id], run.result, run.error)
    for call in calls:
        for message in call.messages:
            answered = message.get("tool_call_id")
            if not isinstance(answered, str) or message.get("role") != "tool":
                continue
            if answered in names and answered not in results:
                content = message.get("content")
                text = content if isinstance(content, str) else ""
                results[answered] = Result(names[answered], text)
    return results
