"""Replay, then live: the first turns of a case from its script, the rest from a real model.

``zeroclaw eval record --replay-until N`` runs each case's turns ``0 .. N-1`` on
the replay mode's provider (its scripted steps, as written) and turns ``N`` on
the live mode's, in one agent session: the live model is asked with the history
the replayed turns built, exactly as the agent sends it. That reproduces a
regression that appears at turn ``N`` without paying for, or depending on, the
live answers to the turns before it; ``record`` then writes the whole
conversation as a replay fixture.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from zeroclaw_eval.grading.family import Problem
from zeroclaw_eval.modes.base import CaseProvider, RunMode
from zeroclaw_eval.protocol import Message, ModelReply, Tool
from zeroclaw_eval.report.model import plural

if TYPE_CHECKING:
    from zeroclaw_eval.case.fixture import LlmTrace
    from zeroclaw_eval.config import EvalConfig


class SplicedProvider(CaseProvider):
    """``replayed`` answers the turns before ``until``, ``live`` the others."""

    def __init__(self, replayed: CaseProvider, live: CaseProvider, until: int) -> None:
        self.replayed = replayed
        self.live = live
        self.until = until
        self._current = replayed

    def begin_turn(self, turn: int) -> None:
        self._current = self.replayed if turn < self.until else self.live
        self._current.begin_turn(turn)

    def respond(self, messages: Sequence[Message], tools: Sequence[Tool]) -> ModelReply:
        return self._current.respond(messages, tools)

    def end_turn(self, turn: int) -> None:
        self._current.end_turn(turn)


class SplicedMode(RunMode):
    """``live`` for everything (its tools, settings, concurrency), but each case's
    first ``until`` turns replayed from its script by ``replay``."""

    def __init__(self, replay: RunMode, live: RunMode, until: int) -> None:
        self.replay = replay
        self.live = live
        self.until = until
        self.name = live.name  # type: ignore[misc]
        self.talks_to_provider = True  # type: ignore[misc]

    def admit(self, trace: LlmTrace) -> Iterable[Problem]:
        if self.until >= len(trace.turns):
            yield Problem(
                ("turns",),
                f"--replay-until {self.until}: the case has {plural(len(trace.turns), 'turn')}, "
                "so none would run live",
            )
        for index, turn in enumerate(trace.turns[: self.until]):
            if not turn.steps:
                yield Problem(
                    ("turns", index, "steps"),
                    f"--replay-until {self.until} replays this turn, and it has no scripted steps",
                )
        yield from self.live.admit(trace)

    def check_config(self, config: EvalConfig, tools: Collection[str]) -> None:
        self.live.check_config(config, tools)

    def generation_settings(self, config: EvalConfig) -> Mapping[str, Any] | None:
        return self.live.generation_settings(config)

    def tools(self, available: Mapping[str, Tool], config: EvalConfig) -> Mapping[str, Tool]:
        return self.live.tools(available, config)

    def concurrency(self, config: EvalConfig) -> int:
        return self.live.concurrency(config)

    def provider(self, trace: LlmTrace, config: EvalConfig) -> SplicedProvider:
        return SplicedProvider(
            self.replay.provider(trace, config), self.live.provider(trace, config), self.until
        )
