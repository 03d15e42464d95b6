"""Run modes: what plays the model's side of the loop for a case.

``replay`` answers from the fixture's scripted steps; other modes (a live
provider, say) are registered the same way through
``zeroclaw_eval_register_modes``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from zeroclaw_eval.protocol import Message, ModelReply, Tool

if TYPE_CHECKING:
    from zeroclaw_eval.case.fixture import LlmTrace
    from zeroclaw_eval.config import EvalConfig
    from zeroclaw_eval.grading.family import Problem
    from zeroclaw_eval.plugins.registry import Registry


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

    def admit(self, trace: LlmTrace) -> Iterable[Problem]:
        """Mode-specific admission rules for a well-formed trace (paths from its root)."""
        return ()

    def check_config(self, config: EvalConfig, registry: Registry) -> None:  # noqa: B027
        """Refuse, before any case runs, a configuration this mode cannot run with.

        Raise :class:`~zeroclaw_eval.errors.ConfigError` naming the key. Does nothing
        by default.
        """

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
