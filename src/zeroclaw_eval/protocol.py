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

from zeroclaw_eval.util.frozen import quick_frozen

#: Default cap on model round trips that ask for tools within one turn.
DEFAULT_MAX_TOOL_ITERATIONS = 10

Message = dict[str, Any]
"""A chat message in the OpenAI chat-completions shape (``role``, ``content``...)."""


#: HTTP statuses a client retries (as the OpenAI and Anthropic SDKs do): a request
#: timeout, a conflict, too many requests, and any server error.
RETRYABLE_STATUSES = frozenset({408, 409, 429, *range(500, 600)})


@quick_frozen
class ToolCallRequest:
    """A tool call the model asked for.

    ``arguments_text`` is the model's own text for the arguments when it is not a
    JSON object (a scripted fault); ``arguments`` is then empty, and the call must
    not run: nobody can say what it was asked.
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    arguments_text: str | None = None


@dataclass(frozen=True)
class HttpError:
    """An HTTP error the model's server answers with instead of a reply.

    ``message`` is the error's text, ``retry_after`` the seconds its
    ``Retry-After`` header asks a client to wait, when it has one.
    """

    status: int
    message: str
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        """Whether a client retries it (:data:`RETRYABLE_STATUSES`)."""
        return self.status in RETRYABLE_STATUSES


@dataclass(frozen=True)
class Usage:
    """The tokens a provider said one reply cost, kind by kind; ``None``: not reported.

    ``input_tokens`` counts the whole prompt, its cached part included
    (``cached_input_tokens``: read from the provider's prompt cache;
    ``cache_write_input_tokens``: written to it, which some providers bill above
    plain input); ``output_tokens`` counts the whole reply, its reasoning included
    (``reasoning_tokens``). A kind the provider did not report stays ``None``,
    never 0: a budget over it cannot be decided.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    cache_write_input_tokens: int | None = None


@quick_frozen
class ModelReply:
    """One model response: text (``tool_calls`` empty) or a request for tool calls.

    ``content`` may accompany tool calls too (a model thinking aloud); ``refusal``
    is the API's separate refusal text; ``model`` is the model the server said
    answered, when it said. ``input_tokens``/``output_tokens`` are what the agent is
    told (0 when unknown: a wire needs a number); ``usage`` is what the provider
    reported, ``None`` when it reported nothing (a scripted reply, or a server that
    sends no ``usage``): the accounting reads ``usage`` only.

    A scripted fault rides on the reply: ``error``, an HTTP error served instead
    of it; ``finish`` ``"length"``, a text cut at the output limit; ``dropped``,
    a connection that drops in the middle of the last tool call, so the client
    never gets the reply whole.
    """

    content: str | None = None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    refusal: str | None = None
    model: str | None = None
    usage: Usage | None = None
    error: HttpError | None = None
    finish: str = "stop"
    dropped: bool = False

    @property
    def fault(self) -> str | None:
        """The kind of scripted fault the reply is, as the record keeps it
        (``http_error``, ``dropped``, ``length``, ``invalid_arguments``), or ``None``."""
        if self.error is not None:
            return "http_error"
        if self.dropped:
            return "dropped"
        if self.finish == "length":
            return "length"
        for call in self.tool_calls:  # a loop, not any(): on the path of every reply
            if call.arguments_text is not None:
                return "invalid_arguments"
        return None


@quick_frozen
class ToolResult:
    """What a tool returned: its output text, and whether it succeeded.

    For a failed call ``output`` is the error text the model will see.
    """

    output: str
    success: bool = True


class ToolFault(Exception):
    """A scripted fault of a tool's side, raised by its ``run`` instead of a result.

    ``kind`` is ``jsonrpc_error`` (the tool server answers the call with a JSON-RPC
    error ``code`` and ``message``), ``dropped`` (it drops the connection before
    answering) or ``hang`` (it never answers: the agent must give up on the call).
    Over MCP each is served as it says; the reference loop, which calls its tools
    in-process, takes each as the failed call it would meet (a hang as its timeout
    expiring, without the wait).
    """

    def __init__(self, kind: str, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.code = code

    def describe(self, tool: str) -> str:
        """What the model is told of the call when the loop meets the fault."""
        if self.kind == "jsonrpc_error":
            return f"tool '{tool}' failed: JSON-RPC error {self.code}: {self.message}"
        if self.kind == "dropped":
            return f"tool '{tool}' failed: the connection dropped before its result"
        return f"tool '{tool}' was cancelled: it gave no result in time"


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
                "arguments": call_arguments(call),
            },
        }
        for call in reply.tool_calls
    ]


def call_arguments(call: ToolCallRequest) -> str:
    """The arguments of ``call`` as the model sent them: its own text when it is not
    valid JSON, else the JSON string of its arguments."""
    if call.arguments_text is not None:
        return call.arguments_text
    return arguments_text(call.arguments)


def finish_reason(reply: ModelReply) -> str:
    """Why the model stopped, as the Chat Completions API says it: ``length`` for a
    reply cut at the output limit (a scripted fault), ``tool_calls`` for a reply
    asking for tools, else ``stop``."""
    if reply.finish == "length":
        return "length"
    return "tool_calls" if reply.tool_calls else "stop"


# json.dumps(..., ensure_ascii=False) builds an encoder on every call; the loop
# writes every tool call's arguments into the history it sends the model.
_encode = json.JSONEncoder(ensure_ascii=False).encode


def arguments_text(arguments: Mapping[str, Any]) -> str:
    """Tool-call arguments as the JSON string the OpenAI APIs send."""
    return _encode(arguments)
