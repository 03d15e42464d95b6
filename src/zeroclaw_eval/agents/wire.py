"""Evidence from the wire: the recorded calls of an agent reached through the model bridge.

The harness cannot see a bridged agent's tools; it sees what crosses the wire.
A tool call the model side sent the agent, and the ``role: "tool"`` message with
the same ``tool_call_id`` in one of the agent's later requests, make one
:class:`~zeroclaw_eval.grading.record.RecordedCall`: the call's name and arguments as
they were sent, the result as the agent reported it. A call whose result never
comes back is a failed call.

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

from zeroclaw_eval.grading.record import RecordedCall
from zeroclaw_eval.protocol import Message, ModelReply


@dataclass(frozen=True)
class Exchange:
    """One request of a bridged agent and the reply it got, in turn ``turn``."""

    turn: int
    messages: Sequence[Message]
    reply: ModelReply


@dataclass
class _Sent:
    turn: int
    call_id: str
    name: str
    arguments: dict[str, Any]
    occurrence: int  # how many calls with this id were sent before it
    result: str | None = None


def calls_from_wire(exchanges: Iterable[Exchange]) -> list[RecordedCall]:
    """The recorded calls that ``exchanges`` (in the order they happened) show.

    Calls are listed in the order they were sent to the agent.
    """
    sent: list[_Sent] = []
    ids: Counter[str] = Counter()
    for exchange in exchanges:
        waiting = [call for call in sent if call.result is None]
        if waiting:
            results = _tool_results(exchange.messages)
            for call in waiting:
                returned = results.get(call.call_id, [])
                if len(returned) > call.occurrence:
                    call.result = returned[call.occurrence]
        for request in exchange.reply.tool_calls:
            sent.append(
                _Sent(
                    exchange.turn,
                    request.call_id,
                    request.name,
                    dict(request.arguments),
                    ids[request.call_id],
                )
            )
            ids[request.call_id] += 1
    return [_recorded(call) for call in sent]


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


def _recorded(call: _Sent) -> RecordedCall:
    if call.result is not None:
        return RecordedCall(call.turn, call.call_id, call.name, call.arguments, call.result, True)
    missing = (
        f"tool '{call.name}': no result came back: the agent sent no role \"tool\" message "
        f"with tool_call_id {call.call_id!r} after the call"
    )
    return RecordedCall(call.turn, call.call_id, call.name, call.arguments, missing, False)
