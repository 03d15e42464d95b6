"""The reference agent loop under test, and the protocols of its two sides.

Per turn: append the user message, ask the model; while the reply carries tool
calls, dispatch each (in order) to its tool, record it, feed the results back and
ask again; a text reply ends the turn. History carries across the turns of one
agent. Unknown tools and tools that raise or report failure become recorded
failed calls whose error text is fed back to the model; they never crash the loop.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from zeroclaw_eval.errors import RunError
from zeroclaw_eval.run_record import RecordedCall, RunRecord

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


@dataclass
class Agent:
    """One agent: its provider, its tools, its history and the record of its calls.

    Make one per case, so no history or tool state leaks between cases.
    """

    provider: Provider
    tools: Mapping[str, Tool]
    max_tool_iterations: int = DEFAULT_MAX_TOOL_ITERATIONS
    history: list[Message] = field(default_factory=list)
    record: RunRecord = field(default_factory=RunRecord)

    def run_turn(self, turn: int, user_input: str) -> str:
        """Run one conversation turn and return the agent's final text for it.

        Raises :class:`RunError` when the model keeps asking for tools beyond
        ``max_tool_iterations`` round trips in this turn.
        """
        self.history.append({"role": "user", "content": user_input})
        offered = list(self.tools.values())
        iterations = 0
        while True:
            reply = self.provider.respond(self.history, offered)
            self.record.input_tokens += reply.input_tokens
            self.record.output_tokens += reply.output_tokens
            if not reply.tool_calls:
                # A refusal sent in its own field, with no content, is the answer.
                text = reply.content or reply.refusal or ""
                message: Message = {"role": "assistant", "content": text}
                if reply.refusal is not None:
                    message["refusal"] = reply.refusal
                self.history.append(message)
                self.record.responses.append(text)
                return text
            iterations += 1
            if iterations > self.max_tool_iterations:
                raise RunError(
                    f"turn {turn}: the model asked for tools more than "
                    f"max_tool_iterations={self.max_tool_iterations} times in one turn"
                )
            self.history.append(_assistant_tool_message(reply))
            for request in reply.tool_calls:
                call = self._dispatch(turn, request)
                self.record.calls.append(call)
                self.history.append(
                    {"role": "tool", "tool_call_id": call.call_id, "content": call.result}
                )

    def _dispatch(self, turn: int, request: ToolCallRequest) -> RecordedCall:
        tool = self.tools.get(request.name)
        if tool is None:
            result = ToolResult(f"unknown tool '{request.name}'", success=False)
        else:
            result = _run_tool(tool, request.arguments)
        return RecordedCall(
            turn=turn,
            call_id=request.call_id,
            name=request.name,
            arguments=request.arguments,
            result=result.output,
            succeeded=result.success,
        )


def _run_tool(tool: Tool, arguments: dict[str, Any]) -> ToolResult:
    """Call a tool, turning whatever goes wrong into a failed result naming it."""
    try:
        result = tool.run(dict(arguments))
    except Exception as exc:  # a tool's failure is data for the model, not a crash
        return ToolResult(f"tool '{tool.name}' raised {type(exc).__name__}: {exc}", success=False)
    if isinstance(result, str):
        return ToolResult(result)
    if not isinstance(result, ToolResult) or not isinstance(result.output, str):
        kind = type(result.output if isinstance(result, ToolResult) else result).__name__
        return ToolResult(f"tool '{tool.name}' returned {kind}, not text", success=False)
    if not result.success and f"'{tool.name}'" not in result.output:
        return ToolResult(f"tool '{tool.name}' failed: {result.output}", success=False)
    return result


def _assistant_tool_message(reply: ModelReply) -> Message:
    return {"role": "assistant", "content": reply.content, "tool_calls": tool_call_entries(reply)}


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


def arguments_text(arguments: Mapping[str, Any]) -> str:
    """Tool-call arguments as the JSON string the OpenAI APIs send."""
    return json.dumps(arguments, ensure_ascii=False)
