"""Drift: the agent asked the model something other than what the recording answered.

A recorded step stores the request it answered (``turns[i].steps[j].request``,
written by ``zeroclaw eval record``). Replaying the case, the agent's live request
for that step is normalised the same way and compared with it; the paths of
``[eval] drift_ignore`` and of the fixture's ``drift_ignore`` are left out of both.
``[eval] drift`` says what a difference does: ``fail`` adds a failed check per
distinct change (naming every step it reached), whose detail says what changed, path
by path
(:mod:`~zeroclaw_eval.grading.request_diff`: the agent ran, and it changed: not a
run error); ``warn`` leaves the verdict alone and puts that among the case's
warnings; ``off`` compares nothing. Cases whose steps store no request
(hand-written fixtures) are never compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zeroclaw_eval.grading.record import ModelRequest, RunRecord
from zeroclaw_eval.report.model import CheckResult, plural

if TYPE_CHECKING:
    from zeroclaw_eval.case.fixture import LlmTrace
    from zeroclaw_eval.config import EvalConfig


@dataclass(frozen=True)
class Drift:
    """One step whose live request differs from the stored one: ``diff`` says how (its
    first line on its own, then a line per change)."""

    turn: int
    step: int
    diff: str

    @property
    def where(self) -> str:
        return f"turn {self.turn}, step {self.step}"


def _grouped(drifts: Sequence[Drift]) -> list[tuple[str, str]]:
    """``(where, diff)`` once per distinct diff, in order: a system prompt changed once
    shows in every step's request, and is said once, naming every step it reached
    (``turn 0, steps 0 and 1; turn 1, step 0``)."""
    places: dict[str, dict[int, list[int]]] = {}
    for drift in drifts:
        places.setdefault(drift.diff, {}).setdefault(drift.turn, []).append(drift.step)
    grouped = []
    for diff, turns in places.items():
        parts = []
        for turn, steps in turns.items():
            listed = [str(step) for step in steps]
            words = listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} and {listed[-1]}"
            parts.append(f"turn {turn}, {'step' if len(steps) == 1 else 'steps'} {words}")
        grouped.append(("; ".join(parts), diff))
    return grouped


def find_drift(
    trace: LlmTrace, run: RunRecord, ignored: Sequence[str] = ()
) -> tuple[int, list[Drift]]:
    """How many stored requests were compared with the live ones, and those that differ."""
    stored = trace.stored_requests()
    if all(request is None for _, _, request in stored):
        return 0, []
    from zeroclaw_eval.grading.request_diff import describe
    from zeroclaw_eval.grading.requests import expand, without

    recorded = expand(request for _, _, request in stored)
    live: dict[tuple[int, int], ModelRequest] = {}
    for request in run.requests:
        live.setdefault((request.turn, request.step), request)
    compared = 0
    drifts: list[Drift] = []
    for (turn, step, _), expected in zip(stored, recorded, strict=True):
        if expected is None:
            continue
        compared += 1
        made = live.get((turn, step))
        if made is None:
            drifts.append(
                Drift(
                    turn,
                    step,
                    "no live request was recorded for this step (the agent records none)",
                )
            )
            continue
        before = without(expected, ignored)
        after = without(made.normalised(), ignored)
        if before != after:
            drifts.append(Drift(turn, step, describe(before, after)))
    return compared, drifts


def drift_outcome(
    trace: LlmTrace, run: RunRecord, config: EvalConfig
) -> tuple[tuple[CheckResult, ...], tuple[str, ...]]:
    """The checks (under ``fail``) and the warnings (under ``warn``) drift adds to a case."""
    if config.drift == "off":
        return (), ()
    ignored: list[Any] = [*config.drift_ignore, *(trace.drift_ignore or ())]
    compared, drifts = find_drift(trace, run, ignored)
    if not compared:
        return (), ()
    if config.drift == "warn":
        return (), tuple(f"drift at {where}: {diff}" for where, diff in _grouped(drifts))
    if not drifts:
        check = f"drift: {plural(compared, 'recorded request')}"
        return (CheckResult(check, True, "every live request is as recorded"),), ()
    # The title says it is a drift and where; the detail, what changed.
    return tuple(
        CheckResult(f"drift: {where}", False, diff) for where, diff in _grouped(drifts)
    ), ()
