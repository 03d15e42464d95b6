"""The ``replay`` run mode: the model's side is the fixture's scripted steps.

Each turn's steps are a FIFO queue. Asking for more responses than the turn
scripts, or ending a turn with responses left over, is a run error naming the
turn and the step (both 0-based, as in ``turns[0].steps[1]``): the next turn's
steps are never borrowed, and a fixture that over-specifies a turn is wrong, not
lucky.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

from zeroclaw_eval.case.fixture import (
    HttpErrorResponse,
    LlmTrace,
    Step,
    TextResponse,
    ToolCallsResponse,
)
from zeroclaw_eval.case.offer import check_allowed, select
from zeroclaw_eval.errors import RunError
from zeroclaw_eval.grading.family import Problem
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.modes.base import CaseProvider, RunMode, StepsLeftUnused
from zeroclaw_eval.modes.notes import case_notes
from zeroclaw_eval.protocol import HttpError, Message, ModelReply, Tool, ToolCallRequest
from zeroclaw_eval.report.model import plural

if TYPE_CHECKING:
    from zeroclaw_eval.config import EvalConfig


#: The text of a scripted HTTP error that gives none, by status (else by class).
STATUS_TEXTS = {
    400: "Bad request",
    401: "Invalid API key",
    403: "Permission denied",
    404: "Model not found",
    408: "Request timed out",
    409: "Conflict",
    413: "Request too large",
    429: "Rate limit reached; retry later",
    500: "The server had an error while processing the request",
    502: "Bad gateway",
    503: "The service is overloaded; retry later",
    529: "Overloaded",
}


def to_reply(step: Step) -> ModelReply:
    """A scripted step as the agent loop receives it."""
    response = step.response
    if isinstance(response, TextResponse):
        return ModelReply(
            response.content,
            (),
            response.input_tokens,
            response.output_tokens,
            refusal=response.refusal,
            model=response.model,
            finish=response.finish,
        )
    if isinstance(response, HttpErrorResponse):
        default = STATUS_TEXTS.get(response.status)
        if default is None:
            default = "Server error" if response.status >= 500 else "Request refused"
        return ModelReply(
            error=HttpError(response.status, response.message or default, response.retry_after)
        )
    calls = tuple(
        ToolCallRequest(c.id, c.name, c.arguments, c.arguments_text) for c in response.tool_calls
    )
    return ModelReply(
        response.content,
        calls,
        response.input_tokens,
        response.output_tokens,
        model=response.model,
        dropped=response.dropped,
    )


class ReplayProvider(CaseProvider):
    """Answers from the scripted steps, one turn's queue at a time."""

    def __init__(self, trace: LlmTrace) -> None:
        self._turns = [
            [(to_reply(step), step.delay_s) for step in turn.steps or ()] for turn in trace.turns
        ]
        self._queue: deque[tuple[ModelReply, float | None]] = deque()
        self._turn = 0
        self._scripted = 0
        self._notes = case_notes()  # the case's, whichever thread asks
        self._capture = trace.capture

    def begin_turn(self, turn: int) -> None:
        self._turn = turn
        self._queue = deque(self._turns[turn])
        self._scripted = len(self._queue)

    def respond(self, messages: Sequence[Message], tools: Sequence[Tool]) -> ModelReply:
        if not self._queue:
            raise RunError(
                f"turn {self._turn}, step {self._scripted}: the agent requested more "
                f"responses than scripted ({plural(self._scripted, 'step')} scripted for "
                "this turn)"
            )
        reply, delay_s = self._queue.popleft()
        if delay_s is not None:  # a scripted slow model: whoever asked waits, on any wire
            time.sleep(delay_s)
        self._notes.served_by(reply.model)
        return reply

    def end_turn(self, turn: int) -> None:
        if self._queue:
            first = self._scripted - len(self._queue)
            raise StepsLeftUnused(
                f"turn {turn}, step {first}: {plural(len(self._queue), 'scripted step')} "
                "left unused after the turn ended: the fixture over-specifies the turn",
                turn,
                first,
                len(self._queue),
            )
        if self._capture is not None and turn == len(self._turns) - 1:
            # Every step played: the sequence its maker observed, and no more.
            self._notes.reproduced_sequence(self._capture.summary())


class ReplayMode(RunMode):
    """Replays each fixture's scripted responses through the real agent loop."""

    name = "replay"
    description = "replay the scripted responses of each fixture (deterministic, offline)"
    replays_scripts = True
    unobservable = MappingProxyType(
        {
            "usage": "replay serves the script's token counts, so a token or cost budget "
            "would grade the fixture, not the agent, and could never fail: bound what the "
            "agent sends instead (max_request_chars, max_total_request_chars), and run "
            "token and cost budgets in live mode"
        }
    )

    def admit(self, trace: LlmTrace) -> Iterable[Problem]:
        for index, turn in enumerate(trace.turns):
            if not turn.steps:
                yield Problem(
                    ("turns", index, "steps"),
                    "replay needs at least one scripted step per turn",
                )
            for number, step in enumerate(turn.steps or ()):
                yield from _reused_ids(index, number, step)
        yield from _stored_requests(trace)

    def check_config(self, config: EvalConfig, tools: Collection[str]) -> None:
        check_allowed(config, tools)

    def tools(self, available: Mapping[str, Tool], config: EvalConfig) -> Mapping[str, Tool]:
        return select(available, config)

    def provider(self, trace: LlmTrace, config: EvalConfig) -> ReplayProvider:
        return ReplayProvider(trace)


def _stored_requests(trace: LlmTrace) -> Iterator[Problem]:
    """A stored request that leans on a previous one the fixture does not store."""
    if not trace.stores_requests:
        return  # a hand-written fixture: nothing to expand
    from zeroclaw_eval.grading.requests import StoredRequestError, expand

    stored = trace.stored_requests()

    try:
        expand(request for _, _, request in stored)
    except StoredRequestError as exc:
        turn, number, _ = stored[exc.index]
        yield Problem(("turns", turn, "steps", number, "request"), str(exc))


def _response_at(turn: int, number: int) -> tuple[str | int, ...]:
    return ("turns", turn, "steps", number, "response")


def _reused_ids(turn: int, number: int, step: Step) -> Iterator[Problem]:
    """A scripted reply giving two calls one id: no real server does, and whatever
    pairs results with calls by id (a real provider, a model bridge) cannot tell
    them apart."""
    if not isinstance(step.response, ToolCallsResponse):
        return
    first: dict[str, int] = {}
    for index, call in enumerate(step.response.tool_calls):
        earlier = first.setdefault(call.id, index)
        if earlier != index:
            yield Problem(
                # The first "tool_calls" is the union tag, as pydantic locations have it.
                (*_response_at(turn, number), "tool_calls", "tool_calls", index, "id"),
                f"step {number} of turn {turn} gives tool_calls[{earlier}] and "
                f"tool_calls[{index}] the same id {call.id!r}; each call needs its own",
            )


@hookimpl
def zeroclaw_eval_register_modes(register: Callable[[RunMode], None]) -> None:
    register(ReplayMode())
