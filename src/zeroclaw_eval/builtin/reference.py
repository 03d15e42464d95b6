"""The ``reference`` agent: the harness's own loop (:class:`zeroclaw_eval.agents.loop.Agent`).

Registered like any third-party agent. It dispatches the model's tool calls to
the harness's tools itself, so every fact the families read is observed at the
dispatch boundary: it refuses nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from zeroclaw_eval.agents.base import AgentSession, AgentUnderTest, ModelSide
from zeroclaw_eval.agents.loop import Agent
from zeroclaw_eval.grading.record import ModelRequest, RunRecord
from zeroclaw_eval.hookspecs import hookimpl


class ReferenceSession(AgentSession):
    """One fresh reference loop, its history and its record, for one case."""

    def __init__(self, side: ModelSide) -> None:
        self.agent = Agent(side.provider, dict(side.tools), side.max_tool_iterations)

    def run_turn(self, turn: int, user_input: str) -> str:
        return self.agent.run_turn(turn, user_input)

    def record(self) -> RunRecord:
        return self.agent.record

    def requests_so_far(self) -> Sequence[ModelRequest]:
        return self.agent.record.requests


class ReferenceAgent(AgentUnderTest):
    """The built-in agent loop, calling the mode's provider and the registered tools."""

    name = "reference"
    description = "the built-in agent loop, dispatching to the registered tools"
    passes_replies_through = True

    def start(self, side: ModelSide) -> ReferenceSession:
        return ReferenceSession(side)


@hookimpl
def zeroclaw_eval_register_agents(register: Callable[[AgentUnderTest], None]) -> None:
    register(ReferenceAgent())
