"""Evidence from the wire: the recorded calls of an agent reached through the model bridge.

The harness cannot see a bridged agent's tools; it sees what crosses the wire,
read the way the agent's :class:`~zeroclaw_eval.agents.dialect.Dialect` says it
talks. A tool call the model side sent the agent, and what the agent then showed
the model for it, make one :class:`WireCall`:

- in a dialect of tool messages (the default), the ``role: "tool"`` message with
  the same ``tool_call_id`` in one of the agent's later requests;
- in a flattening dialect (smolagents), the whole text of the first ``user``
  message after the last assistant message of the agent's next request: the
  results of the step that asked for the call, shown together.

A call to the dialect's answer tool (``final_answer``) is the turn's answer, not a
call. For an agent whose tools are its own, each :class:`WireCall` becomes a
:class:`~zeroclaw_eval.grading.record.RecordedCall` (:func:`calls_from_wire`): the
call's name and arguments as they were sent, the result as the agent reported it,
its framing taken off. A call whose result never comes back is a failed call.

When a fixture reuses a call id (``call_1`` in every turn), the n-th call sent
with that id is paired with the n-th ``tool`` message carrying it in a later
request, since a chat-completions agent sends its whole conversation each time.
A tool's own success flag never crosses the wire, so ``succeeded`` here means
only that the result came back; the families that would read more into it are
refused at admission for bridged agents (:mod:`zeroclaw_eval.agents.bridged`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from zeroclaw_eval.agents.dialect import CHAT, Dialect
from zeroclaw_eval.grading.record import RecordedCall
from zeroclaw_eval.protocol import Message, ModelReply


@dataclass(frozen=True)
class Exchange:
    """One request of a bridged agent and the reply it got, in turn ``turn``."""

    turn: int
    messages: Sequence[Message]
    reply: ModelReply


@dataclass
class WireCall:
    """One tool call the model side sent the agent, and what the agent showed the
    model for it.

    ``step`` is the index of the exchange whose reply asked for it; ``shown`` the
    text the agent sent back for it (its tool message, or in a flattening dialect the
    whole message holding its step's results), ``None`` while none came back.
    """

    turn: int
    step: int
    call_id: str
    name: str
    arguments: dict[str, Any]
    occurrence: int  # how many calls with this id were sent before it
    shown: str | None = None


def wire_calls(exchanges: Iterable[Exchange], dialect: Dialect = CHAT) -> list[WireCall]:
    """The calls that ``exchanges`` (in the order they happened) show, in the order they
    were sent to the agent, each with what the agent showed the model for it."""
    sent: list[WireCall] = []
    ids: Counter[str] = Counter()
    for index, exchange in enumerate(exchanges):
        waiting = [call for call in sent if call.shown is None]
        if waiting and dialect.flattens:
            shown = _flattened_results(exchange.messages)
            for call in waiting:
                if call.step == index - 1:
                    call.shown = shown
        elif waiting:
            results = _tool_results(exchange.messages)
            for call in waiting:
                returned = results.get(call.call_id, [])
                if len(returned) > call.occurrence:
                    call.shown = returned[call.occurrence]
        for request in exchange.reply.tool_calls:
            if request.name == dialect.answer_tool:
                continue  # the turn's answer, given the stack's way: not a tool call
            sent.append(
                WireCall(
                    exchange.turn,
                    index,
                    request.call_id,
                    request.name,
                    dict(request.arguments),
                    ids[request.call_id],
                )
            )
            ids[request.call_id] += 1
    return sent


def calls_from_wire(exchanges: Iterable[Exchange], dialect: Dialect = CHAT) -> list[RecordedCall]:
    """The recorded calls of an agent with tools of its own, read off ``exchanges``.

    Calls are listed in the order they were sent to the agent.
    """
    calls = wire_calls(exchanges, dialect)
    per_step = Counter(call.step for call in calls)
    return [_recorded(call, dialect, per_step[call.step]) for call in calls]


def _tool_results(messages: Sequence[Message]) -> dict[str, list[str]]:
    """The text of each ``role: "tool"`` message, by ``tool_call_id``, in order."""
    results: dict[str, list[str]] = {}
    for message in messages:
        if message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str):
            content = message.get("content")
            results.setdefault(message["tool_call_id"], []).append(
                content if isinstance(content, str) else ""
            )
    return results


def _flattened_results(messages: Sequence[Message]) -> str | None:
    """The text of the first ``user`` message after the last assistant message: where a
    flattening agent shows the model the results of the step it answers. With no
    assistant message (smolagents keeps none for a step whose tool failed, and merges
    the error into the task's message), the last user message."""
    last = max(
        (index for index, message in enumerate(messages) if message.get("role") == "assistant"),
        default=None,
    )
    for message in reversed(messages) if last is None else messages[last + 1 :]:
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else ""
    return None


def _recorded(call: WireCall, dialect: Dialect, in_step: int) -> RecordedCall:
    if call.shown is not None:
        if dialect.flattens:
            alone = (call.call_id, call.name) if in_step == 1 else None
            result = dialect.read_block(call.shown, alone)
        else:
            result = dialect.read_result(call.shown, call.call_id, call.name)
        return RecordedCall(
            call.turn, call.call_id, call.name, call.arguments, result, True, call.step
        )
    where = (
        "showed the model no result for it in its next request"
        if dialect.flattens
        else f'sent no role "tool" message with tool_call_id {call.call_id!r} after the call'
    )
    missing = f"tool '{call.name}': no result came back: the agent {where}"
    return RecordedCall(
        call.turn, call.call_id, call.name, call.arguments, missing, False, call.step
    )
