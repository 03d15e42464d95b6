"""Admission of a fixture's scripted faults: the rules their models cannot say alone.

A fault is a step like any other (a retry asks for the next one), so what is
refused here is a fault no real server would send, or one no sane client could
meet with the steps scripted after it:

- a ``Retry-After`` on a status no client retries (only 408, 409, 429 and 5xx are);
- a tool call with both ``arguments`` and ``arguments_text``, or neither;
- ``arguments_text`` that is a valid JSON object (that is ``arguments``, no fault);
- a turn that ends on a lone fault a client retries (a 429, a 5xx, a dropped
  reply): every client asks again, and the turn has no step to answer it. A run
  of such faults may end a turn: that scripts the retries an agent gives up after.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from zeroclaw_eval.case.fixture import HttpErrorResponse, LlmTrace, ToolCallsResponse
from zeroclaw_eval.grading.family import Problem
from zeroclaw_eval.protocol import RETRYABLE_STATUSES


def admit_faults(trace: LlmTrace) -> Iterator[Problem]:
    """The problems of ``trace``'s scripted faults (paths from the fixture's root).

    On the path of every replay: a step that is no fault costs one comparison."""
    for number, turn in enumerate(trace.turns):
        steps = turn.steps
        if not steps:
            continue
        for index, step in enumerate(steps):
            response = step.response
            if response.type == "text":
                continue
            if isinstance(response, HttpErrorResponse):
                if response.retry_after is not None and not _retried(response):
                    yield Problem(
                        _response_path(number, index, "retry_after"),
                        f"no client retries a {response.status}, so a Retry-After on it "
                        "is never read (statuses retried: 408, 409, 429, 5xx)",
                    )
                continue
            for position, call in enumerate(response.tool_calls):
                given = "arguments" in call.__pydantic_fields_set__
                if given and call.arguments_text is None:
                    continue  # the common case: arguments, and no text of them
                # The first "tool_calls" is the union tag, as pydantic has it.
                at = _response_path(number, index, "tool_calls", "tool_calls", position)
                if call.arguments_text is None:
                    yield Problem(at, "arguments is required (or arguments_text)")
                elif given:
                    yield Problem(
                        at,
                        "give arguments, or arguments_text for arguments that are not valid "
                        "JSON (not both)",
                    )
                elif _is_object(call.arguments_text):
                    yield Problem(
                        (*at, "arguments_text"),
                        "is a valid JSON object: script it as arguments (arguments_text "
                        "is for arguments that are not valid JSON)",
                    )
        last = steps[-1].response
        if (
            last.type != "text"
            and _retried(last)
            and (len(steps) == 1 or not _retried(steps[-2].response))
        ):
            yield Problem(
                _response_path(number, len(steps) - 1),
                "a client retries this fault, and the turn has no step left to answer the "
                "retry: script the reply after it (or the run of faults an agent gives up "
                "after)",
            )


def _response_path(turn: int, step: int, *rest: str | int) -> tuple[str | int, ...]:
    """The path of a step's response, and of ``rest`` inside it, from the fixture's
    root. Made only for a problem: a step that has none builds no path."""
    return ("turns", turn, "steps", step, "response", *rest)


def _retried(response: object) -> bool:
    """Whether a client asks again after ``response``: a retryable HTTP error, a drop."""
    if isinstance(response, HttpErrorResponse):
        return response.status in RETRYABLE_STATUSES
    return isinstance(response, ToolCallsResponse) and response.dropped


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False
