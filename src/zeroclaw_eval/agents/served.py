"""The case's tools served to a bridged agent over MCP, and both sides of the boundary, paired.

With ``[eval.agent] tools = "served"`` a bridged agent takes its tools from the
run's MCP tool server: each case attempt opens a route serving the case's tools
(the registered ones under the tool offer, and the fixture's scripted results),
and every ``tools/call`` the agent makes runs here, on the harness's side, and is
recorded with the arguments the agent really dispatched, the result and the
error flag. Those dispatches are the case's recorded calls, the one canonical
fact the families grade: ``tool_arguments_contain`` reads dispatched arguments,
``all_tools_succeeded`` the tools' own error flags.

The model's side (what the bridge sent the agent, what the agent sent back) is
paired with them: within a turn, the n-th call the model asked for of a tool
with the n-th dispatch of that tool (a dispatch with the very arguments asked
for is paired first, so tools an agent runs concurrently pair as asked). The run
brings four checks of the ``served_tools`` family, graded beside the fixture's:

- ``served_tools: requested calls dispatched``: no call the model asked for is
  missing from the dispatches;
- ``served_tools: dispatches requested``: the agent dispatched nothing the model
  did not ask for;
- ``served_tools: arguments as requested``: each dispatch carried the arguments
  the model asked for;
- ``served_tools: results sent back``: the tool message the agent sent the model
  holds the text the tool returned.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zeroclaw_eval.agents.base import ModelSide
from zeroclaw_eval.agents.loop import run_tool
from zeroclaw_eval.errors import RunError
from zeroclaw_eval.grading.record import RecordedCall, RunRecord
from zeroclaw_eval.protocol import ToolResult, arguments_text
from zeroclaw_eval.report.model import CheckResult, plural

#: The most characters one tool result may carry to the agent.
MAX_RESULT_CHARS = 1_000_000

#: The family name of the checks a served run brings.
FAMILY = "served_tools"

#: How many discrepancies a check's detail lists before it counts the rest.
SHOWN = 3


@dataclass(frozen=True)
class Dispatch:
    """One ``tools/call`` the agent made, as the tool ran it."""

    turn: int
    name: str
    arguments: dict[str, Any]
    result: str
    succeeded: bool


@dataclass
class ServedRecord(RunRecord):
    """A run record whose calls are the dispatches, with the checks of the pairing."""

    pairing: tuple[CheckResult, ...] = field(default_factory=tuple)

    def certified_checks(self) -> tuple[CheckResult, ...]:
        return self.pairing


class ServedTools:
    """One case attempt's tools on the MCP tool server: its route and its dispatches.

    ``turn`` tells the turn the case is in, so that each dispatch is recorded in it.
    """

    def __init__(self, side: ModelSide, turn: Callable[[], int]) -> None:
        if side.tool_server is None:
            raise RunError("an agent served its tools needs the MCP tool server; none was started")
        self._tools = dict(side.tools)
        self._turn = turn
        self.ended = False
        self.dispatches: list[Dispatch] = []
        self.route = side.tool_server.open_route(side.case, side.tools, self._dispatch, self._where)

    def _where(self) -> str:
        return "after the last turn" if self.ended else f"turn {self._turn()}"

    def _dispatch(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if self.ended:
            raise RunError(f"the agent called {name!r} over MCP after its case's last turn ended")
        # The tool's own text: over MCP the error flag travels beside it.
        result = run_tool(self._tools[name], arguments, name_failure=False)
        if len(result.output) > MAX_RESULT_CHARS:
            raise RunError(
                f"tool {name!r} returned {len(result.output)} characters, more than the "
                f"{MAX_RESULT_CHARS} a served result may carry: it was not sent"
            )
        self.dispatches.append(
            Dispatch(self._turn(), name, dict(arguments), result.output, result.success)
        )
        return result

    def error(self) -> RunError | None:
        """The first failure on the route, if any, once the call in flight is settled."""
        self.route.settle()
        return RunError(self.route.errors[0]) if self.route.errors else None

    def record(self, wire: RunRecord) -> ServedRecord:
        """The record of the case: the dispatches as its calls, and the pairing's checks.

        ``wire`` is the record the model side shows: its calls are those the model
        sent the agent, each with the result the agent sent back
        (:func:`~zeroclaw_eval.agents.wire.calls_from_wire`).
        """
        pairs, unrequested, undispatched = pair(wire.calls, self.dispatches)
        by_dispatch = {id(dispatch): request for request, dispatch in pairs}
        calls = [
            RecordedCall(
                dispatch.turn,
                by_dispatch[id(dispatch)].call_id
                if id(dispatch) in by_dispatch
                else f"mcp_{index}",
                dispatch.name,
                dispatch.arguments,
                dispatch.result,
                dispatch.succeeded,
            )
            for index, dispatch in enumerate(self.dispatches)
        ]
        return ServedRecord(
            list(wire.responses),
            calls,
            wire.input_tokens,
            wire.output_tokens,
            list(wire.requests),  # what the model was asked: a recording stores it
            pairing=pairing_checks(pairs, unrequested, undispatched),
        )

    def close(self) -> None:
        self.route.close()


Pair = tuple[RecordedCall, Dispatch]


def pair(
    requested: Sequence[RecordedCall], dispatched: Sequence[Dispatch]
) -> tuple[list[Pair], list[Dispatch], list[RecordedCall]]:
    """Pair each requested call with a dispatch of the same tool in the same turn.

    Returns the pairs (in request order), the dispatches nobody asked for and the
    requests never dispatched. Within a turn and a tool, a dispatch with exactly
    the requested arguments is paired first, then the rest in order.
    """
    pairs: list[Pair] = []
    unrequested: list[Dispatch] = []
    undispatched: list[RecordedCall] = []
    keys = {(call.turn, call.name) for call in requested}
    keys |= {(dispatch.turn, dispatch.name) for dispatch in dispatched}
    for turn, name in sorted(keys):
        asked = [call for call in requested if (call.turn, call.name) == (turn, name)]
        ran = [
            dispatch for dispatch in dispatched if (dispatch.turn, dispatch.name) == (turn, name)
        ]
        left: list[RecordedCall] = []
        for call in asked:
            same = next((d for d in ran if d.arguments == call.arguments), None)
            if same is None:
                left.append(call)
            else:
                ran.remove(same)
                pairs.append((call, same))
        for call, dispatch in zip(left, ran, strict=False):
            pairs.append((call, dispatch))
        undispatched.extend(left[len(ran) :])
        unrequested.extend(ran[len(left) :])
    order = {id(call): index for index, call in enumerate(requested)}
    pairs.sort(key=lambda found: order[id(found[0])])
    return pairs, unrequested, undispatched


def pairing_checks(
    pairs: Sequence[Pair], unrequested: Sequence[Dispatch], undispatched: Sequence[RecordedCall]
) -> tuple[CheckResult, ...]:
    """The four ``served_tools`` checks of a pairing."""
    rewritten = [
        f"{_call(call)}: the model asked {arguments_text(call.arguments)}, the agent "
        f"dispatched {arguments_text(dispatch.arguments)}"
        for call, dispatch in pairs
        if call.arguments != dispatch.arguments
    ]
    misreported = [finding for call, dispatch in pairs if (finding := _misreport(call, dispatch))]
    return (
        _check(
            "requested calls dispatched",
            [f"{_call(call)} was never dispatched" for call in undispatched],
            f"{plural(len(pairs), 'requested call')} dispatched",
        ),
        _check(
            "dispatches requested",
            [
                f"turn {d.turn}: the agent dispatched {d.name!r} "
                f"{arguments_text(d.arguments)}, which the model never asked for"
                for d in unrequested
            ],
            "every dispatch was asked for",
        ),
        _check("arguments as requested", rewritten, "every dispatch carried the model's arguments"),
        _check("results sent back", misreported, "every result reached the model as returned"),
    )


def _misreport(call: RecordedCall, dispatch: Dispatch) -> str | None:
    if not call.succeeded:  # calls_from_wire: no tool message came back for it
        return f"{_call(call)}: the agent sent the model no result for it"
    if dispatch.result in call.result:
        return None
    flag = " (an error)" if not dispatch.succeeded else ""
    return (
        f"{_call(call)}: the tool returned{flag} {_quote(dispatch.result)}, "
        f"the agent sent the model {_quote(call.result)}"
    )


def _call(call: RecordedCall) -> str:
    return f"turn {call.turn}: {call.name!r} call {call.call_id!r}"


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _check(what: str, findings: Iterable[str], fine: str) -> CheckResult:
    listed = list(findings)
    if not listed:
        return CheckResult(f"{FAMILY}: {what}", True, fine)
    shown = "; ".join(listed[:SHOWN])
    more = f"; and {len(listed) - SHOWN} more" if len(listed) > SHOWN else ""
    return CheckResult(f"{FAMILY}: {what}", False, shown + more)
