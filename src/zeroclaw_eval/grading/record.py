"""What a run leaves behind: the final responses and every dispatched tool call.

The list of recorded calls is the one canonical dispatch fact. Tool names, counts
and overall success are derived from it on demand, never stored beside it, so a
richer record can never disagree with a summary of itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zeroclaw_eval.report.model import CheckResult


@dataclass(frozen=True)
class RecordedCall:
    """One tool call as it crossed the dispatch boundary.

    ``arguments`` are what the agent passed to the tool; ``result`` is the text the
    tool returned, or for a failed call its error text (which names the tool).
    """

    turn: int
    call_id: str
    name: str
    arguments: dict[str, Any]
    result: str
    succeeded: bool

    @property
    def arguments_json(self) -> str:
        """The arguments as JSON text, non-ASCII kept as is: what needles are matched against."""
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass
class RunRecord:
    """Everything grading may look at after one case ran.

    ``responses`` holds the agent's final text for each turn that completed, in
    order; ``calls`` every dispatched tool call in dispatch order across all turns.
    """

    responses: list[str] = field(default_factory=list)
    calls: list[RecordedCall] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def final_response(self) -> str | None:
        """The agent's text for the last turn, or ``None`` if no turn completed."""
        return self.responses[-1] if self.responses else None

    @property
    def tool_names(self) -> list[str]:
        """Names of the dispatched calls, in dispatch order (derived)."""
        return [call.name for call in self.calls]

    @property
    def all_succeeded(self) -> bool:
        """Whether every dispatched call succeeded (derived; true for no calls)."""
        return all(call.succeeded for call in self.calls)

    def calls_to(self, tool: str) -> list[RecordedCall]:
        """The calls to ``tool``, in dispatch order: what ``call_index`` counts in."""
        return [call for call in self.calls if call.name == tool]

    def certified_checks(self) -> tuple[CheckResult, ...]:
        """Checks the run itself brings, graded beside the fixture's expectations.

        None by default; an agent that sees both sides of a boundary (the tools it
        was served over MCP, and the model's side) brings the checks that the two
        agree (:mod:`zeroclaw_eval.agents.served`).
        """
        return ()


def empty_run() -> RunRecord:
    """A run that produced nothing: no response, no calls, no tokens.

    Grading a case against it finds the vacuous ones: a case that certifies a
    behaviour must fail at least one check here.
    """
    return RunRecord()
