"""The vocabulary of an agent loop: what the model replies, what a tool is and returns.

Both sides of every loop speak it: the reference loop (:mod:`zeroclaw_eval.agents.loop`),
the modes that play the model (``replay``, ``live``), the model bridge that carries
a team's own agent's requests, and the tools plugins register. Messages are in the
OpenAI chat-completions shape, the one shape every wire format is read into.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

#: Default cap on model round trips that ask for tools within one turn.
DEFAULT_MAX_TOOL_ITERATIONS = 10

Message = dict[str, Any]
"""A chat message in the OpenAI chat-completions shape (``role``, ``content``...)."""


@dataclass(frozen=True)
class ToolCallRequest:
    """A tool call the model asked for."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ModelReply:
    """One model response: text (``tool_calls`` empty) or a request for tool calls.

    ``content`` may accompany tool calls too (a model thinking aloud); ``refusal``
    is the API's separate refusal text; ``model`` is the model the server said
    answered, when it said.
    """

    content: str | None = None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    refusal: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned: its output text, and whether it succeeded.

    For a failed call ``output`` is the error text the model will see.
    """

    output: str
    success: bool = True


@runtime_checkable
class Tool(Protocol):
    """A tool the agent can dispatch to.

    ``parameters`` is the JSON schema of its arguments, offered to real models.
    ``run`` may raise: the loop turns that into a failed call.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]

    def run(self, arguments: dict[str, Any]) -> ToolResult: ...


class Provider(Protocol):
    """The model side of the loop: given the conversation so far, reply."""

    def respond(self, messages: Sequence[Message], tools: Sequence[Tool]) -> ModelReply: ...


def tool_call_entries(reply: ModelReply) -> list[dict[str, Any]]:
    """The reply's tool calls as a chat-completions assistant message carries them:
    ids kept, ``arguments`` as a JSON string."""
    return [
        {
            "id": call.call_id,
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": arguments_text(call.arguments),
            },
        }
        for call in reply.tool_calls
    ]


def finish_reason(reply: ModelReply) -> str:
    """Why the model stopped, as the Chat Completions API says it: ``tool_calls`` for
    a reply asking for tools, else ``stop``."""
    return "tool_calls" if reply.tool_calls else "stop"


def arguments_text(arguments: Mapping[str, Any]) -> str:
    """Tool-call arguments as the JSON string the OpenAI APIs send."""
    return json.dumps(arguments, ensure_ascii=False)
