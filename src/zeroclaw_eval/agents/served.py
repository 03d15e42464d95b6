"""The case's tools served to a bridged agent over MCP, and both sides of the boundary, paired.

With ``[eval.agent] tools = "served"`` a bridged agent takes its tools from the
run's MCP tool server: each case attempt opens a route serving the case's tools
(the registered ones under the tool offer, and the fixture's scripted results),
and every ``tools/call`` the agent makes runs here, on the harness's side, in the
case's workspace, and is recorded with the arguments the agent really
dispatched, the result and the error flag. Those dispatches are the case's
recorded calls, the one canonical fact the families grade:
``tool_arguments_contain`` reads dispatched arguments, ``all_tools_succeeded`` the
tools' own error flags.

The model's side (what the bridge sent the agent, what the agent showed the
model back, read the way its :class:`~zeroclaw_eval.agents.dialect.Dialect` says:
:mod:`zeroclaw_eval.agents.wire`) is paired with them: within a turn, the n-th
call the model asked for of a tool with the n-th dispatch of that tool (a
dispatch with the very arguments asked for, compared as JSON, is paired first,
so tools an agent runs concurrently pair as asked). A call to a tool the agent
offered the model itself and the case does not serve is the agent's own
(*internal*): it is not expected over MCP, and the check says which calls were.
The run brings four checks of the ``served_tools`` family, graded beside the
fixture's:

- ``served_tools: requested calls dispatched``: no call the model asked for is
  missing from the dispatches;
- ``served_tools: dispatches requested``: the agent dispatched nothing the model
  did not ask for;
- ``served_tools: arguments as requested``: each dispatch carried the arguments
  the model asked for (compared as JSON: ``true`` is not ``1``);
- ``served_tools: results sent back``: the agent showed the model each result
  whole, in one of the forms its dialect allows for a success or for an error:
  a tool message holding exactly the text the tool returned, say, or (smolagents)
  the step's results in one ``Observation:`` message. A result cut short, one
  with text added, or an error shown as something else fails it.

For an agent whose model writes code that calls the tools (a dialect whose
``model_calls`` is false) no call crosses the model's side: the dispatches are
the calls, and the four checks do not apply; the case's report says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zeroclaw_eval.agents.base import ModelSide
from zeroclaw_eval.agents.dialect import CHAT, Dialect, Shown
from zeroclaw_eval.agents.loop import run_tool
from zeroclaw_eval.agents.wire import WireCall
from zeroclaw_eval.errors import RunError, UnknownToolError
from zeroclaw_eval.grading.record import RecordedCall, RunRecord
from zeroclaw_eval.protocol import ToolFault, ToolResult, arguments_text
from zeroclaw_eval.report.model import CheckResult, plural
from zeroclaw_eval.util.jsonvalue import equal
from zeroclaw_eval.workspace import current_workspace, entered

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
    delivered: bool = True
    """Whether the result reached the agent: not for a scripted fault (a JSON-RPC
    error, a dropped connection, a hang), whose text is the harness's own."""


#: Why the pairing does not apply to an agent whose model writes code.
CODE_CALLS = (
    f"{FAMILY}: does not apply: the agent's model writes code that calls the tools, so "
    "no tool call crosses the model's side; the MCP dispatches are the case's calls"
)


@dataclass
class ServedRecord(RunRecord):
    """A run record whose calls are the dispatches, with the checks of the pairing and
    what the report should say of it (``notes``)."""

    pairing: tuple[CheckResult, ...] = field(default_factory=tuple)
    notes: tuple[str, ...] = ()

    def certified_checks(self) -> tuple[CheckResult, ...]:
        return self.pairing

    def certified_notes(self) -> tuple[str, ...]:
        return self.notes


class ServedTools:
    """One case attempt's tools on the MCP tool server: its route and its dispatches.

    ``turn`` tells the turn the case is in, so that each dispatch is recorded in it.
    """

    def __init__(self, side: ModelSide, turn: Callable[[], int]) -> None:
        if side.tool_server is None:
            raise RunError("an agent served its tools needs the MCP tool server; none was started")
        self._tools = dict(side.tools)
        self._turn = turn
        # The tools run on the tool server's thread, in the case's workspace.
        self._workspace = current_workspace()
        self.ended = False
        self.dispatches: list[Dispatch] = []
        self.route = side.tool_server.open_route(side.case, side.tools, self._dispatch, self._where)

    def _where(self) -> str:
        return "after the last turn" if self.ended else f"turn {self._turn()}"

    def _dispatch(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if self.ended:
            raise RunError(f"the agent called {name!r} over MCP after its case's last turn ended")
        if name not in self._tools:
            # It crossed the boundary and failed there: a call like any other, failed.
            served = ", ".join(self._tools) or "none"
            unknown = UnknownToolError(f"Unknown tool: {name!r} (served: {served})")
            self.dispatches.append(
                Dispatch(self._turn(), name, dict(arguments), str(unknown), False)
            )
            raise unknown
        # The tool's own text: over MCP the error flag travels beside it.
        with entered(self._workspace):
            try:
                result = run_tool(
                    self._tools[name], arguments, name_failure=False, serve_faults=True
                )
            except ToolFault as fault:
                described = fault.describe(name)
                self.dispatches.append(
                    Dispatch(self._turn(), name, dict(arguments), described, False, False)
                )
                raise
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

    def record(
        self, wire: RunRecord, requested: Sequence[WireCall], dialect: Dialect = CHAT
    ) -> ServedRecord:
        """The record of the case: the dispatches as its calls, the wire's model
        requests, and the pairing's checks.

        ``wire`` is the record the model side shows (its responses, tokens and
        requests); ``requested`` the calls the model sent the agent, each with what
        the agent showed the model for it, read the way ``dialect`` says
        (:func:`~zeroclaw_eval.agents.wire.wire_calls`).
        """
        internal = [call for call in requested if call.name not in self._tools]
        asked = [call for call in requested if call.name in self._tools]
        pairs, unrequested, undispatched = pair(asked, self.dispatches, dialect)
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
                # The model call it answers says which reply asked for it.
                by_dispatch[id(dispatch)].step if id(dispatch) in by_dispatch else None,
            )
            for index, dispatch in as_asked(self.dispatches, pairs)
        ]
        if dialect.model_calls:
            checks = pairing_checks(pairs, unrequested, undispatched, dialect, internal)
            notes: tuple[str, ...] = ()
        else:
            checks, notes = (), (CODE_CALLS,)
        return ServedRecord(
            list(wire.responses),
            calls,
            wire.input_tokens,
            wire.output_tokens,
            # The model side's evidence is the wire's: what the agent asked the model.
            list(wire.requests),
            list(wire.usage),
            pairing=checks,
            notes=notes,
        )

    def close(self) -> None:
        self.route.close()


Pair = tuple[WireCall, Dispatch]


def pair(
    requested: Sequence[WireCall], dispatched: Sequence[Dispatch], dialect: Dialect = CHAT
) -> tuple[list[Pair], list[Dispatch], list[WireCall]]:
    """Pair each requested call with a dispatch of the same tool in the same turn.

    Returns the pairs (in request order), the dispatches nobody asked for and the
    requests never dispatched. Within a turn and a tool, a dispatch with the very
    arguments requested (the same JSON value) is paired first; then, where the agent
    ties each result to its call (not a flattening ``dialect``), a dispatch whose
    result the model was shown for that call; then the rest in order. So calls run
    side by side with arguments rewritten pair with what they dispatched whatever
    order the dispatches arrived in, and only the rewriting is reported.
    """
    pairs: list[Pair] = []
    unrequested: list[Dispatch] = []
    undispatched: list[WireCall] = []
    keys = {(call.turn, call.name) for call in requested}
    keys |= {(dispatch.turn, dispatch.name) for dispatch in dispatched}
    for turn, name in sorted(keys):
        asked = [call for call in requested if (call.turn, call.name) == (turn, name)]
        ran = [
            dispatch for dispatch in dispatched if (dispatch.turn, dispatch.name) == (turn, name)
        ]
        left = _pair_by(asked, ran, pairs, lambda call, d: equal(call.arguments, d.arguments))
        if not dialect.flattens:
            left = _pair_by(
                left,
                ran,
                pairs,
                lambda call, d: (
                    call.shown is not None and dialect.shows(call.shown, _shown(call, d))
                ),
            )
        for call, dispatch in zip(left, ran, strict=False):
            pairs.append((call, dispatch))
        undispatched.extend(left[len(ran) :])
        unrequested.extend(ran[len(left) :])
    order = {id(call): index for index, call in enumerate(requested)}
    pairs.sort(key=lambda found: order[id(found[0])])
    return pairs, unrequested, undispatched


def as_asked(dispatches: Sequence[Dispatch], pairs: Sequence[Pair]) -> list[tuple[int, Dispatch]]:
    """``dispatches`` (each with its index) with those of one model reply put in the
    order the model asked for them, in the places they took.

    An agent may run the calls of one reply side by side, so they arrive in an order
    no fixture can know; the n-th call to a tool must not change with a thread's
    timing. Across replies, and for a dispatch nobody asked for, the order is the
    dispatches' own.
    """
    asked = {id(dispatch): index for index, (_, dispatch) in enumerate(pairs)}
    reply = {id(dispatch): (call.turn, call.step) for call, dispatch in pairs}
    slots: dict[tuple[int, int], list[int]] = {}
    for index, dispatch in enumerate(dispatches):
        if id(dispatch) in reply:
            slots.setdefault(reply[id(dispatch)], []).append(index)
    placed = list(enumerate(dispatches))
    for indices in slots.values():
        ordered = sorted((dispatches[i] for i in indices), key=lambda d: asked[id(d)])
        for index, dispatch in zip(indices, ordered, strict=True):
            placed[index] = (index, dispatch)
    return placed


def _pair_by(
    calls: Sequence[WireCall],
    ran: list[Dispatch],
    pairs: list[Pair],
    fits: Callable[[WireCall, Dispatch], bool],
) -> list[WireCall]:
    """Pair each of ``calls`` with the first dispatch left in ``ran`` that ``fits`` it
    (taken out of ``ran``, the pair added to ``pairs``); the calls left unpaired."""
    left: list[WireCall] = []
    for call in calls:
        found = next((dispatch for dispatch in ran if fits(call, dispatch)), None)
        if found is None:
            left.append(call)
        else:
            ran.remove(found)
            pairs.append((call, found))
    return left


def pairing_checks(
    pairs: Sequence[Pair],
    unrequested: Sequence[Dispatch],
    undispatched: Sequence[WireCall],
    dialect: Dialect = CHAT,
    internal: Sequence[WireCall] = (),
) -> tuple[CheckResult, ...]:
    """The four ``served_tools`` checks of a pairing; ``internal`` are the calls to the
    agent's own tools (never served), named in the first check's detail."""
    rewritten = [
        f"{_call(call)}: the model asked {arguments_text(call.arguments)}, the agent "
        f"dispatched {arguments_text(dispatch.arguments)}"
        for call, dispatch in pairs
        if not equal(call.arguments, dispatch.arguments)
    ]
    dispatched = f"{plural(len(pairs), 'requested call')} dispatched"
    if internal:
        own = ", ".join(f"{call.name!r} call {call.call_id!r}" for call in internal[:SHOWN])
        more = f" and {len(internal) - SHOWN} more" if len(internal) > SHOWN else ""
        dispatched += f"; the agent ran its own tools for {own}{more} (internal, not served)"
    return (
        _check(
            "requested calls dispatched",
            [f"{_call(call)} was never dispatched" for call in undispatched],
            dispatched,
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
        _check(
            "results sent back",
            _misreports(pairs, undispatched, dialect),
            "every result reached the model whole, as returned",
        ),
    )


def _misreports(
    pairs: Sequence[Pair], undispatched: Sequence[WireCall], dialect: Dialect
) -> list[str]:
    """Each result the agent did not show the model whole, in a form ``dialect`` allows."""
    if not dialect.flattens:
        return [
            finding for call, dispatch in pairs if (finding := _misreport(call, dispatch, dialect))
        ]
    # Flattened: one message shows the results of one step together. A step with a
    # call never dispatched is reported as such; its results cannot be told apart.
    skipped = {call.step for call in undispatched}
    steps: dict[int, list[Pair]] = {}
    for found in pairs:
        steps.setdefault(found[0].step, []).append(found)
    findings = []
    for step, paired in steps.items():
        if step in skipped:
            continue
        shown = paired[0][0].shown
        calls = [_shown(call, dispatch) for call, dispatch in paired]
        named = ", ".join(f"{call.name!r} call {call.call_id!r}" for call, _ in paired)
        if shown is None:
            findings.append(
                f"turn {paired[0][0].turn}: {named}: the agent showed the model no result "
                "for it in its next request"
            )
        elif not dialect.shows_block(shown, calls):
            returned = "; ".join(
                f"{_flag(dispatch)}{_quote(dispatch.result, shown)}" for _, dispatch in paired
            )
            sent = _quote(shown, dialect.block_form(calls))
            findings.append(
                f"turn {paired[0][0].turn}: {named}: the tool returned {returned}, the "
                f"agent showed the model {sent}"
            )
    return findings


def _misreport(call: WireCall, dispatch: Dispatch, dialect: Dialect) -> str | None:
    if call.shown is None:  # no tool message came back for it
        return f"{_call(call)}: the agent sent the model no result for it"
    if not dispatch.delivered:  # a scripted fault: what the agent said of it is its own
        return None
    if dialect.shows(call.shown, _shown(call, dispatch)):
        return None
    expected = dialect.forms(_shown(call, dispatch))[0]
    return (
        f"{_call(call)}: the tool returned {_flag(dispatch)}"
        f"{_quote(dispatch.result, call.shown)}, the agent sent the model "
        f"{_quote(call.shown, expected)}"
    )


def _shown(call: WireCall, dispatch: Dispatch) -> Shown:
    return Shown(call.call_id, call.name, dispatch.result, dispatch.succeeded)


def _flag(dispatch: Dispatch) -> str:
    return "" if dispatch.succeeded else "(an error) "


def _call(call: WireCall) -> str:
    return f"turn {call.turn}: {call.name!r} call {call.call_id!r}"


def _quote(text: str, other: str, limit: int = 80) -> str:
    """``text`` quoted, at most ``limit`` characters of it: from a little before where it
    first differs from ``other``, so that a result cut or added to shows where."""
    if len(text) <= limit:
        return repr(text)
    differs = next(
        (i for i, (a, b) in enumerate(zip(text, other, strict=False)) if a != b),
        min(len(text), len(other)),
    )
    start = max(0, min(differs - limit // 2, len(text) - limit))
    window = text[start : start + limit]
    return ("..." if start else "") + repr(window) + ("..." if start + limit < len(text) else "")


def _check(what: str, findings: Iterable[str], fine: str) -> CheckResult:
    listed = list(findings)
    if not listed:
        return CheckResult(f"{FAMILY}: {what}", True, fine)
    shown = "; ".join(listed[:SHOWN])
    more = f"; and {len(listed) - SHOWN} more" if len(listed) > SHOWN else ""
    return CheckResult(f"{FAMILY}: {what}", False, shown + more)
