"""The ``tool_data_flow`` family: a value one call returned is one a later call was given.

An edge names its producer, a tool and a JSON pointer (RFC 6901) into that call's
result decoded as JSON, and its consumer, a tool and a pointer into that call's
arguments: ``{"from": {"tool": "create_order", "result": "/order/id"}, "to":
{"tool": "pay", "argument": "/order_id"}}`` passes when some call to ``pay``,
dispatched after a call to ``create_order`` that succeeded and returned a JSON
document, was given at ``/order_id`` the value that document holds at
``/order/id`` (equal as JSON: ``"42"`` is not ``42``), whatever other calls came
between. Both come from the dispatch record: what the tool returned, what the
agent passed on.

A failure says what was tried: the producer calls and what their results hold at
the pointer, the consumer calls and what they were given, and the nearest miss,
both values shown with their pointers. Admission refuses a pointer that does not
parse or can never reach a value, a tool ``tools_not_used`` bans, and (for an
agent that plays the script as written) an edge the scripted results and
arguments already satisfy; ``zeroclaw eval check`` finds a producer whose
scripted results lack the pointer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import Field

from zeroclaw_eval.builtin.sequence import call_labels, name_matcher
from zeroclaw_eval.builtin.tools import observed_calls
from zeroclaw_eval.grading.family import Family, NonEmptyStr, Params, Problem, ToolReference
from zeroclaw_eval.grading.record import RecordedCall, RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural, shorten

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import Finding, Script

#: How many calls a detail lists before it counts the rest.
SHOWN = 4


class Producer(Params):
    """The call a value comes from: a tool, and where the value is in its result."""

    tool: NonEmptyStr = Field(
        description="the producing tool; '*' stands for any run of characters"
    )
    result: str = Field(
        description="a JSON pointer (RFC 6901) into the call's result decoded as JSON; '' is "
        "the whole result"
    )


class Consumer(Params):
    """The call a value must reach: a tool, and where the value is in its arguments."""

    tool: NonEmptyStr = Field(
        description="the consuming tool; '*' stands for any run of characters"
    )
    argument: NonEmptyStr = Field(description="a JSON pointer (RFC 6901) into the call's arguments")


class FlowEdge(Params):
    """A value of a producer's result given to a later consumer call."""

    source: Producer = Field(alias="from", description="the call the value comes from")
    to: Consumer = Field(description="the later call that must be given it")

    @property
    def label(self) -> str:
        """``create_order /order/id -> pay /order_id``."""
        result = self.source.result or "(whole result)"
        return f"{self.source.tool} {result} -> {self.to.tool} {self.to.argument}"


def produced(call: RecordedCall, tokens: tuple[str, ...]) -> tuple[Any, str]:
    """The value a call's result holds at ``tokens``, or :data:`MISSING` with why."""
    from zeroclaw_eval.util.jsonvalue import MISSING, resolve, show

    if not call.succeeded:
        return MISSING, f"failed: {shorten(call.result, 80)}"
    try:
        document = json.loads(call.result)
    except ValueError:
        return MISSING, f"returned text that is not JSON: {shorten(call.result, 80)}"
    value = resolve(document, tokens)
    if value is MISSING:
        return MISSING, f"returned {show(document, 80)}, with nothing there"
    return value, ""


def _likeness(a: Any, b: Any) -> float:
    """How close two values are, for naming the nearest miss: the same JSON type
    first, then how alike their texts read."""
    from difflib import SequenceMatcher

    from zeroclaw_eval.util.jsonvalue import show

    same_type = type(a) is type(b)
    return (1.0 if same_type else 0.0) + SequenceMatcher(None, show(a), show(b)).ratio()


class ToolDataFlow(Family[list[FlowEdge]]):
    """A value a producer call returned is given to a later consumer call."""

    name = "tool_data_flow"
    params = list[FlowEdge]
    description = (
        "a value from one call's result (tool and JSON pointer) is given to a later call's "
        "arguments (tool and pointer)"
    )
    allow_empty_strings = True  # a result pointer may be '' (the whole result)

    def evidence(self, params: list[FlowEdge]) -> frozenset[str]:
        return frozenset({"calls", "arguments", "results", "status"})

    def tools_named(self, params: list[FlowEdge]) -> Iterable[ToolReference]:
        for index, edge in enumerate(params):
            yield ToolReference(
                (index, "from", "tool"), edge.source.tool, name_matcher(edge.source.tool)
            )
            yield ToolReference((index, "to", "tool"), edge.to.tool, name_matcher(edge.to.tool))

    def rules(self, params: list[FlowEdge], expects: Mapping[str, Any]) -> Iterable[Problem]:
        from zeroclaw_eval.util.jsonvalue import parse_pointer

        banned = set(expects.get("tools_not_used") or ())
        for index, edge in enumerate(params):
            for path, pointer in (
                ((index, "from", "result"), edge.source.result),
                ((index, "to", "argument"), edge.to.argument),
            ):
                try:
                    parse_pointer(pointer)
                except ValueError as exc:
                    yield Problem(path, str(exc))
            for side, tool in (("from", edge.source.tool), ("to", edge.to.tool)):
                if tool in banned:
                    yield Problem(
                        (index, side, "tool"),
                        f"contradicts tools_not_used naming {tool!r}: the edge needs it called",
                    )

    def settled(self, params: list[FlowEdge], script: Script) -> Iterable[Problem]:
        # A result that runs for real is empty in the played run: it produces
        # nothing, so a pass there rests on scripted results and arguments alone.
        played = script.played()
        for index, edge in enumerate(params):
            check = self._grade_one(edge, played)
            if check.passed:
                yield Problem(
                    (index,),
                    f"the scripted results and arguments satisfy it already: {check.detail}",
                )

    def consistency(self, params: list[FlowEdge], script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding
        from zeroclaw_eval.util.jsonvalue import MISSING, parse_pointer, resolve

        played = script.played()
        for index, edge in enumerate(params):
            from_fits, to_fits = name_matcher(edge.source.tool), name_matcher(edge.to.tool)
            producers = [call for call in script.calls if from_fits(call.name)]
            consumers = [call for call in script.calls if to_fits(call.name)]
            target = parse_pointer(edge.to.argument)
            if not producers or not consumers:
                side, tool = ("from", edge.source.tool) if not producers else ("to", edge.to.tool)
                yield Finding(
                    (index, side, "tool"), f"the script never calls {tool!r}: can never pass"
                )
            elif all(resolve(call.arguments, target) is MISSING for call in consumers):
                yield Finding(
                    (index, "to", "argument"),
                    f"no scripted call to {edge.to.tool!r} has an argument at {edge.to.argument}: "
                    "can never pass",
                )
            elif all(call.result is not None for call in producers):
                # Every producer's result is scripted: the played run is the run.
                check = self._grade_one(edge, played)
                if not check.passed:
                    yield Finding((index,), f"{check.detail}: can never pass")

    def grade(self, params: list[FlowEdge], run: RunRecord) -> list[CheckResult]:
        return [self._grade_one(edge, run) for edge in params]

    def _grade_one(self, edge: FlowEdge, run: RunRecord) -> CheckResult:
        from zeroclaw_eval.util.jsonvalue import MISSING, equal, parse_pointer, resolve, show

        check = f"{self.name}: {edge.label}"
        calls = run.calls
        from_fits, to_fits = name_matcher(edge.source.tool), name_matcher(edge.to.tool)
        producers = [p for p, call in enumerate(calls) if from_fits(call.name)]
        consumers = [p for p, call in enumerate(calls) if to_fits(call.name)]
        labels = call_labels(calls, run)
        if not producers:
            return CheckResult(
                check, False, f"no call to {edge.source.tool} ({observed_calls(run)})"
            )
        # Parsed only once a call is there to read: admission grades an empty run
        # before it reports a malformed pointer, which must not raise.
        source_tokens = parse_pointer(edge.source.result)
        target_tokens = parse_pointer(edge.to.argument)
        values: dict[int, Any] = {}
        why: list[str] = []
        for p in producers:
            value, reason = produced(calls[p], source_tokens)
            if value is MISSING:
                why.append(f"{labels[p]} {reason}")
            else:
                values[p] = value
        if not values:
            listed = "; ".join(why[:SHOWN]) + ("; ..." if len(why) > SHOWN else "")
            return CheckResult(
                check,
                False,
                f"no {edge.source.tool} result holds a value at "
                f"{edge.source.result or 'its root'}: {listed}",
            )
        if not consumers:
            return CheckResult(check, False, f"no call to {edge.to.tool} ({observed_calls(run)})")
        given = {
            q: value
            for q in consumers
            if (value := resolve(calls[q].arguments, target_tokens)) is not MISSING
        }
        if not given:
            shown = "; ".join(
                f"{labels[q]} was called with {show(calls[q].arguments, 80)}"
                for q in consumers[:SHOWN]
            )
            return CheckResult(
                check,
                False,
                f"no {edge.to.tool} call has an argument at {edge.to.argument}: {shown}",
            )

        def pairing(p: int, q: int) -> str:
            return (
                f"{labels[p]} {edge.source.result or '(whole result)'} {show(values[p])} -> "
                f"{labels[q]} {edge.to.argument} {show(given[q])}"
            )

        pairs = [(p, q) for p in values for q in given]
        for p, q in pairs:
            if q > p and equal(values[p], given[q]):
                return CheckResult(check, True, pairing(p, q))
        early = next(((p, q) for p, q in pairs if equal(values[p], given[q])), None)
        if early is not None:
            return CheckResult(
                check,
                False,
                f"the value reaches {edge.to.tool} only before it was produced: {pairing(*early)}; "
                "the consumer must come after the producer",
            )
        ordered = [(p, q) for p, q in pairs if q > p]
        if not ordered:
            first = min(values)
            return CheckResult(
                check,
                False,
                f"no call to {edge.to.tool} with {edge.to.argument} comes after the first "
                f"{edge.source.tool} result with a value ({labels[first]})",
            )
        nearest = max(ordered, key=lambda pq: (_likeness(values[pq[0]], given[pq[1]]), -pq[1]))
        return CheckResult(
            check,
            False,
            f"no call to {edge.to.tool} was given a value a call to {edge.source.tool} returned "
            f"before it; tried {plural(len(ordered), 'pairing')}, nearest: {pairing(*nearest)}",
        )


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    register(ToolDataFlow())
