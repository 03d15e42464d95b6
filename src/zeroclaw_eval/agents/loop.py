"""The reference agent loop: the harness's own agent under test.

Per turn: append the user message, ask the model; while the reply carries tool
calls, dispatch each (in order) to its tool, record it, feed the results back and
ask again; a text reply ends the turn. History carries across the turns of one
agent. Unknown tools and tools that raise or report failure become recorded
failed calls whose error text is fed back to the model; they never crash the loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from zeroclaw_eval.errors import RunError
from zeroclaw_eval.grading.record import ModelRequest, RecordedCall, RunRecord
from zeroclaw_eval.protocol import (
    DEFAULT_MAX_TOOL_ITERATIONS,
    Message,
    ModelReply,
    Provider,
    Tool,
    ToolCallRequest,
    ToolResult,
    tool_call_entries,
)

#: The settings of the loop's requests: it sends none of its own (a mode's
#: provider may add its own, such as ``live``'s temperature).
NO_SETTINGS: Mapping[str, Any] = MappingProxyType({})


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
            # The evidence of what the model was shown: a copy of the history as it
            # stands (messages are never changed once appended), the tools as offered.
            self.record.requests.append(
                ModelRequest(turn, iterations, list(self.history), offered, NO_SETTINGS)
            )
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
                call = self._dispatch(turn, request, len(self.record.requests) - 1)
                self.record.calls.append(call)
                self.history.append(
                    {"role": "tool", "tool_call_id": call.call_id, "content": call.result}
                )

    def _dispatch(self, turn: int, request: ToolCallRequest, response: int) -> RecordedCall:
        tool = self.tools.get(request.name)
        if tool is None:
            result = ToolResult(f"unknown tool '{request.name}'", success=False)
        else:
            result = run_tool(tool, request.arguments)
        return RecordedCall(
            turn=turn,
            call_id=request.call_id,
            name=request.name,
            arguments=request.arguments,
            result=result.output,
            succeeded=result.success,
            response=response,
        )


def run_tool(tool: Tool, arguments: dict[str, Any], *, name_failure: bool = True) -> ToolResult:
    """Call a tool, turning whatever goes wrong into a failed result naming it.

    A result the tool itself reports failed is prefixed with the tool's name, as the
    model reads it in this loop, unless ``name_failure`` is false (over MCP the
    error flag travels beside the text, which stays the tool's own).
    """
    try:
        result = tool.run(dict(arguments))
    except Exception as exc:  # a tool's failure is data for the model, not a crash
        return ToolResult(f"tool '{tool.name}' raised {type(exc).__name__}: {exc}", success=False)
    if isinstance(result, str):
        return ToolResult(result)
    if not isinstance(result, ToolResult) or not isinstance(result.output, str):
        kind = type(result.output if isinstance(result, ToolResult) else result).__name__
        return ToolResult(f"tool '{tool.name}' returned {kind}, not text", success=False)
    if name_failure and not result.success and f"'{tool.name}'" not in result.output:
        return ToolResult(f"tool '{tool.name}' failed: {result.output}", success=False)
    return result


def _assistant_tool_message(reply: ModelReply) -> Message:
    return {"role": "assistant", "content": reply.content, "tool_calls": tool_call_entries(reply)}
