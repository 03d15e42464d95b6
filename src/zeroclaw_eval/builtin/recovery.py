"""Families over how an agent meets failure: ``max_model_requests``,
``tool_calls_answered``, ``retry_after_respected``.

They grade the model requests the agent made
(:attr:`~zeroclaw_eval.grading.record.RunRecord.requests`) and what the model side
answered to each (a scripted fault, the tool calls it handed over, when):

- ``max_model_requests``: at most ``per_case`` requests in the case, at most
  ``per_turn`` in any one turn: what stops a retry storm. In a mode that replays
  a script the script already settles the count (a request past its steps is a
  run error, one fewer leaves steps unused), so there it is refused: it is the
  budget of a live or recorded run.
- ``tool_calls_answered``: every tool call the model side handed the agent had its
  result (a ``role: "tool"`` message with its id; an error or "cancelled" is an
  answer) in a later request: no call dropped when its tool failed or hung. A run
  in which no call was handed over fails: it certified nothing.
- ``retry_after_respected``: after each HTTP error that asked the agent to wait
  (``Retry-After``), the agent's next request of the turn came no sooner. A run
  with no such retry fails.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import PositiveInt

from zeroclaw_eval.grading.family import Family, Params, Problem
from zeroclaw_eval.grading.record import ModelRequest, RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import Steps

REQUESTS = frozenset({"requests"})


class RequestBudget(Params):
    """At most ``per_case`` model requests in the case, ``per_turn`` in any one turn."""

    per_case: PositiveInt | None = None
    per_turn: PositiveInt | None = None


class MaxModelRequests(Family[RequestBudget]):
    """At most N model requests per case, and per turn."""

    name = "max_model_requests"
    params = RequestBudget
    description = "at most per_case model requests in the case, per_turn in any one turn"

    def evidence(self, params: Any) -> frozenset[str]:
        return REQUESTS

    def rules(self, params: RequestBudget, expects: Mapping[str, Any]) -> Iterable[Problem]:
        if params.per_case is None and params.per_turn is None:
            yield Problem((), "give per_case, per_turn or both")
        elif (
            params.per_case is not None
            and params.per_turn is not None
            and params.per_turn >= params.per_case
        ):
            yield Problem(
                ("per_turn",),
                f"a turn over {params.per_turn} requests is a case over "
                f"per_case={params.per_case}: the per-turn bound could never fail alone",
            )

    def replay_rules(self, params: RequestBudget, steps: Steps) -> Iterable[Problem]:
        bounds = (
            ("per_case", params.per_case, sum(len(turn) for turn in steps), "case"),
            ("per_turn", params.per_turn, max((len(turn) for turn in steps), default=0), "turn"),
        )
        for key, bound, scripted, scope in bounds:
            if bound is None:
                continue
            if bound >= scripted:
                yield Problem(
                    (key,),
                    f"could not fail: the script answers {plural(scripted, 'request')} in its "
                    f"longest {scope}, and one more is already a run error",
                )
            else:
                yield Problem(
                    (key,),
                    f"could never pass: each of the script's {scripted} steps in its longest "
                    f"{scope} answers one request",
                )

    def grade(self, params: RequestBudget, run: RunRecord) -> list[CheckResult]:
        checks = []
        if params.per_case is not None:
            made = len(run.requests)
            checks.append(
                CheckResult(
                    f"{self.name}: at most {params.per_case} per case",
                    made <= params.per_case,
                    f"{plural(made, 'request')} made",
                )
            )
        if params.per_turn is not None:
            per_turn = Counter(request.turn for request in run.requests)
            turn, most = max(per_turn.items(), key=lambda item: (item[1], -item[0]), default=(0, 0))
            checks.append(
                CheckResult(
                    f"{self.name}: at most {params.per_turn} per turn",
                    most <= params.per_turn,
                    f"at most {plural(most, 'request')} in a turn (turn {turn})"
                    if per_turn
                    else "no request made",
                )
            )
        return checks


#: What tool_calls_answered reads: the requests, and the call each result answers.
ANSWERS = frozenset({"requests", "answers"})


class _Asserted(Family[Literal[True]]):
    """A family over the requests that is asserted, never denied (``true``: ``false``
    would say nothing a run could show)."""

    params = Literal[True]

    def evidence(self, params: Any) -> frozenset[str]:
        return REQUESTS


class ToolCallsAnswered(_Asserted):
    """Every tool call handed to the agent had its result shown to the model afterwards."""

    name = "tool_calls_answered"
    description = (
        "every tool call the model asked for got its result (an error or a cancellation "
        "included) back to the model in a later request"
    )

    def evidence(self, params: Any) -> frozenset[str]:
        # A result is tied to its call by the call's id: an agent whose wire shows
        # results tied to none refuses the entry (a correct one could not pass it).
        return ANSWERS

    def replay_rules(self, params: Literal[True], steps: Steps) -> Iterable[Problem]:
        if not any(step.calls for turn in steps for step in turn):
            yield Problem((), "could never pass: the script hands the agent no tool call")

    def grade(self, params: Literal[True], run: RunRecord) -> list[CheckResult]:
        check = f"{self.name}: every tool call answered"
        sent = 0
        missing: list[str] = []
        for index, request in enumerate(run.requests):
            if not request.calls_sent:
                continue
            before = _results(request)
            later = [_results(after) for after in run.requests[index + 1 :]]
            for call_id in request.calls_sent:
                sent += 1
                before[call_id] += 1  # the n-th call with this id needs its n-th result
                if not any(results[call_id] >= before[call_id] for results in later):
                    missing.append(f"{call_id} (turn {request.turn} step {request.step})")
        if not sent:
            return [CheckResult(check, False, "no tool call was handed to the agent")]
        if missing:
            return [
                CheckResult(
                    check,
                    False,
                    f"no later request showed the model a result for {', '.join(missing)} "
                    f"({plural(sent, 'call')} handed over)",
                )
            ]
        return [CheckResult(check, True, f"{plural(sent, 'call')} handed over, each answered")]


def _results(request: ModelRequest) -> Counter[str]:
    """How many ``role: "tool"`` messages ``request`` carries for each call id."""
    return Counter(
        message["tool_call_id"]
        for message in request.messages
        if message.get("role") == "tool" and isinstance(message.get("tool_call_id"), str)
    )


class RetryAfterRespected(_Asserted):
    """After an HTTP error with ``Retry-After``, the agent waited at least that long."""

    name = "retry_after_respected"
    description = (
        "after each HTTP error with a Retry-After, the agent's next request of the turn "
        "came no sooner than it asked"
    )

    def replay_rules(self, params: Literal[True], steps: Steps) -> Iterable[Problem]:
        waits = [
            step.retry_after
            for turn in steps
            for step in turn[:-1]  # a retry needs a step after it
            if step.retry_after is not None
        ]
        if not waits:
            yield Problem(
                (),
                "could never pass: no step but a turn's last is an HTTP error with a "
                "retry_after, so no retry after one is ever answered",
            )
        elif not any(waits):
            yield Problem((), "could not fail: every retry_after of the script is 0")

    def grade(self, params: Literal[True], run: RunRecord) -> list[CheckResult]:
        check = f"{self.name}: waited as asked"
        waits: list[str] = []
        early: list[str] = []
        for request, after in zip(run.requests, run.requests[1:], strict=False):
            if request.retry_after is None or after.turn != request.turn:
                continue
            waited = after.received - request.replied
            said = f"turn {request.turn} step {request.step}: waited {waited:.2f}s"
            waits.append(said)
            if waited < request.retry_after:
                early.append(f"{said} of the {request.retry_after}s asked")
        if not waits:
            return [CheckResult(check, False, "no request followed an error with Retry-After")]
        if early:
            return [CheckResult(check, False, "; ".join(early))]
        return [CheckResult(check, True, "; ".join(waits))]


FAMILIES: tuple[Callable[[], Family[Any]], ...] = (
    MaxModelRequests,
    ToolCallsAnswered,
    RetryAfterRespected,
)


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    for family in FAMILIES:
        register(family())
