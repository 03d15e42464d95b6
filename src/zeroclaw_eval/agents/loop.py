"""The reference agent loop: the harness's own agent under test.

Per turn: append the user message, ask the model; while the reply carries tool
calls, dispatch each (in order) to its tool, record it, feed the results back and
ask again; a text reply ends the turn. History carries across the turns of one
agent. Unknown tools and tools that raise or report failure become recorded
failed calls whose error text is fed back to the model; they never crash the loop.

When the model side fails, the loop does what a careful client does:

- an HTTP error a client retries (408, 409, 429, 5xx) or a reply whose connection
  dropped: it asks again, at most :data:`MAX_MODEL_RETRIES` times in a row,
  waiting the error's ``Retry-After`` when it gives one (at most
  :data:`MAX_RETRY_WAIT_S`), else :data:`RETRY_BACKOFF_S` doubled at each retry;
- any other HTTP error, or retries used up: it ends the turn telling the user
  (``The model failed: HTTP 400: ...``), inventing no answer;
- a text cut at the output limit: the turn's answer is the text, followed by a
  note that it was cut (:data:`CUT_NOTE`);
- a tool call whose arguments are not valid JSON: it is not run; it is recorded
  as a failed call, and the model is told why, as for an unknown tool.

A scripted fault of a tool (a JSON-RPC error, a dropped connection, a hang) is a
failed call whose text says which (:meth:`~zeroclaw_eval.protocol.ToolFault.describe`):
the loop calls its tools in-process, so it meets a hang as its timeout expiring,
at once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from zeroclaw_eval.errors import RunError
from zeroclaw_eval.grading.record import ModelRequest, RecordedCall, RequestUsage, RunRecord
from zeroclaw_eval.protocol import (
    DEFAULT_MAX_TOOL_ITERATIONS,
    Message,
    ModelReply,
    Provider,
    Tool,
    ToolCallRequest,
    ToolFault,
    ToolResult,
    tool_call_entries,
)

#: How many times in a row the loop asks again after a failure it may retry (as
#: the OpenAI and Anthropic SDKs do by default).
MAX_MODEL_RETRIES = 2
#: The first wait before a retry when the error gives no ``Retry-After``; doubled
#: at each retry.
RETRY_BACKOFF_S = 0.05
#: The longest ``Retry-After`` the loop waits; a longer one is waited this long.
MAX_RETRY_WAIT_S = 10.0
#: What the loop adds to a text cut at the model's output limit.
CUT_NOTE = "[the reply was cut at the model's output limit]"

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
        step = 0
        retries = 0
        while True:
            reply = self._ask(turn, step, offered)
            step += 1
            if reply.error is not None or reply.dropped:
                said, retryable = _failure(reply)
                if retryable and retries < MAX_MODEL_RETRIES:
                    time.sleep(_wait(reply, retries))
                    retries += 1
                    continue
                return self._answer(f"The model failed: {said}", None)
            retries = 0
            if not reply.tool_calls:
                # A refusal sent in its own field, with no content, is the answer.
                text = reply.content or reply.refusal or ""
                if reply.finish == "length":
                    text = f"{text}\n{CUT_NOTE}" if text else CUT_NOTE
                return self._answer(text, reply.refusal)
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

    def _ask(self, turn: int, step: int, offered: Sequence[Tool]) -> ModelReply:
        # The evidence of what the model was shown: a copy of the history as it
        # stands (messages are never changed once appended), the tools as offered.
        request = ModelRequest(
            turn, step, list(self.history), offered, NO_SETTINGS, received=time.monotonic()
        )
        self.record.requests.append(request)
        reply = self.provider.respond(self.history, offered)
        answered = request.answered(reply)
        if answered is not request:
            self.record.requests[-1] = answered
        self.record.usage.append(RequestUsage(turn, step, reply.model, reply.usage))
        self.record.input_tokens += reply.input_tokens
        self.record.output_tokens += reply.output_tokens
        return reply

    def _answer(self, text: str, refusal: str | None) -> str:
        message: Message = {"role": "assistant", "content": text}
        if refusal is not None:
            message["refusal"] = refusal
        self.history.append(message)
        self.record.responses.append(text)
        return text

    def _dispatch(self, turn: int, request: ToolCallRequest, response: int) -> RecordedCall:
        tool = self.tools.get(request.name)
        if request.arguments_text is not None:
            result = ToolResult(_unreadable(request), success=False)
        elif tool is None:
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


def run_tool(
    tool: Tool, arguments: dict[str, Any], *, name_failure: bool = True, serve_faults: bool = False
) -> ToolResult:
    """Call a tool, turning whatever goes wrong into a failed result naming it.

    A result the tool itself reports failed is prefixed with the tool's name, as the
    model reads it in this loop, unless ``name_failure`` is false (over MCP the
    error flag travels beside the text, which stays the tool's own). A scripted
    :class:`~zeroclaw_eval.protocol.ToolFault` is a failed result too, unless
    ``serve_faults``: then it is raised, for the tool server to serve.
    """
    try:
        result = tool.run(dict(arguments))
    except ToolFault as fault:
        if serve_faults:
            raise
        return ToolResult(fault.describe(tool.name), success=False)
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


def _failure(reply: ModelReply) -> tuple[str, bool]:
    """What went wrong with ``reply`` (an HTTP error or a dropped connection) before it
    could be used, and whether a retry may mend it."""
    if reply.error is not None:
        return f"HTTP {reply.error.status}: {reply.error.message}", reply.error.retryable
    return "the connection dropped before the reply was complete", True


def _wait(reply: ModelReply, retries: int) -> float:
    """How long to wait before retry number ``retries`` (0-based) after ``reply``."""
    asked = reply.error.retry_after if reply.error is not None else None
    if asked is not None:
        return min(asked, MAX_RETRY_WAIT_S)
    return float(RETRY_BACKOFF_S * 2**retries)


def _unreadable(request: ToolCallRequest) -> str:
    """The error the model reads for a call whose arguments are not JSON."""
    try:
        json.loads(request.arguments_text or "")
    except ValueError as exc:
        why = str(exc)
    else:
        why = "not a JSON object"
    return f"tool '{request.name}' was not run: its arguments are not valid JSON ({why})"


def _assistant_tool_message(reply: ModelReply) -> Message:
    return {"role": "assistant", "content": reply.content, "tool_calls": tool_call_entries(reply)}
