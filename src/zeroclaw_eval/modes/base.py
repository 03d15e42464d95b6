"""Run modes: what plays the model's side of the loop for a case.

``replay`` answers from the fixture's scripted steps, ``live`` asks a real model;
both are registered like any other mode, through ``zeroclaw_eval_register_modes``.
The harness never asks a mode its name to know what it does: a mode declares
what it can do (:attr:`RunMode.replays_scripts`, :attr:`RunMode.talks_to_provider`,
:meth:`RunMode.generation_settings`), and a third-party mode gets the same
treatment as the built-ins.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from zeroclaw_eval.errors import RunError
from zeroclaw_eval.protocol import Message, ModelReply, Tool

if TYPE_CHECKING:
    from zeroclaw_eval.case.fixture import LlmTrace
    from zeroclaw_eval.config import EvalConfig
    from zeroclaw_eval.grading.family import Problem


class StepsLeftUnused(RunError):
    """A turn ended with scripted steps unused: raised by :meth:`CaseProvider.end_turn`.

    ``turn`` and ``step`` (the first unused one) are 0-based, ``count`` how many
    were left. The agent under test words the final error
    (:meth:`~zeroclaw_eval.agents.base.AgentUnderTest.steps_left_unused`): the
    reference loop always asks the model again, so there the fixture is at fault.
    """

    def __init__(self, message: str, turn: int, step: int, count: int) -> None:
        super().__init__(message)
        self.turn = turn
        self.step = step
        self.count = count


class CaseProvider(ABC):
    """The model side for one case. The runner brackets each turn with
    :meth:`begin_turn` and :meth:`end_turn`, so a provider can keep per-turn state
    and refuse a turn that ended early (raise :class:`~zeroclaw_eval.errors.RunError`).
    """

    def begin_turn(self, turn: int) -> None:  # noqa: B027 - optional, does nothing by default
        """Called before the agent sees turn ``turn`` (0-based)."""

    def end_turn(self, turn: int) -> None:  # noqa: B027 - optional, does nothing by default
        """Called after the agent finished turn ``turn``."""

    @abstractmethod
    def respond(self, messages: Sequence[Message], tools: Sequence[Tool]) -> ModelReply:
        """The model's reply to the conversation so far."""


class RunMode(ABC):
    """A way of running cases. Register one with ``zeroclaw_eval_register_modes``."""

    name: ClassVar[str]
    description: ClassVar[str] = ""

    replays_scripts: ClassVar[bool] = False
    """Whether the mode answers from the fixtures' scripted steps, as ``replay`` does.

    Such a mode waits on nothing, so the agent's own concurrency
    (:meth:`~zeroclaw_eval.agents.base.AgentUnderTest.concurrency`) stands instead of
    the mode's; and ``zeroclaw eval record`` admits the fixtures it writes with it.
    """

    talks_to_provider: ClassVar[bool] = False
    """Whether the mode asks a real model, as ``live`` does: ``zeroclaw eval record``
    runs its cases with such a mode."""

    unobservable: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """The kinds of evidence this mode cannot supply, each with the reason (kinds as
    :meth:`~zeroclaw_eval.grading.family.Family.evidence` names them): an entry whose
    family reads one is refused at admission, naming the family and the reason.
    ``replay`` cannot supply ``usage``: its token counts are the script's. None by
    default."""

    def admit(self, trace: LlmTrace) -> Iterable[Problem]:
        """Mode-specific admission rules for a well-formed trace (paths from its root)."""
        return ()

    def check_config(self, config: EvalConfig, tools: Collection[str]) -> None:  # noqa: B027
        """Refuse, before any case runs, a configuration this mode cannot run with.

        ``tools`` are the names of the registered tools. Raise
        :class:`~zeroclaw_eval.errors.ConfigError` naming the key. Does nothing by
        default.
        """

    def generation_settings(self, config: EvalConfig) -> Mapping[str, Any] | None:
        """The settings that shape what the model writes in this mode (the model,
        its temperature...), which a run's report and history record; ``None``, the
        default, for a mode that takes none (a replay's model writes nothing)."""
        return None

    def tools(self, available: Mapping[str, Tool], config: EvalConfig) -> Mapping[str, Tool]:
        """The tools one case's agent may offer and dispatch (default: every registered one).

        A call to a tool left out here is a recorded failed call, like an unknown tool.
        """
        return available

    def concurrency(self, config: EvalConfig) -> int:
        """How many cases may run at once (default 1: in order, one at a time)."""
        return 1

    @abstractmethod
    def provider(self, trace: LlmTrace, config: EvalConfig) -> CaseProvider:
        """A fresh model side for one case."""
