"""Families over the recorded calls: ``tools_used``, ``tools_not_used``,
``max_tool_calls``, ``min_tool_calls``, ``exact_tool_calls``, ``all_tools_succeeded``.

Everything here is derived from the recorded calls, the canonical dispatch fact.
Bounds are inclusive; contradictory bounds are refused at admission.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import NonNegativeInt

from zeroclaw_eval.grading.family import Family, NonEmptyStr, Problem
from zeroclaw_eval.grading.record import RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import Finding, Script

MAX, MIN, EXACT = "max_tool_calls", "min_tool_calls", "exact_tool_calls"
NEVER = "can never pass"
BOUNDARY_FAMILIES = ("tool_arguments_contain", "tool_results_contain")


def observed_calls(run: RunRecord) -> str:
    """The recorded calls as a detail reads them: ``2 calls: echo, shell``."""
    if not run.calls:
        return "no tool was called"
    return f"{plural(len(run.calls), 'call')}: {', '.join(run.tool_names)}"


def boundary_tools(expects: Mapping[str, Any]) -> list[str]:
    """Tools that the dispatch-boundary families say must have been called."""
    return [entry.tool for family in BOUNDARY_FAMILIES for entry in expects.get(family, [])]


class ToolsUsed(Family[list[str]]):
    """Each named tool was called at least once."""

    name = "tools_used"

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"calls"})

    params = list[NonEmptyStr]
    description = "each tool was called at least once"

    def consistency(self, params: list[str], script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding

        for index, tool in enumerate(params):
            if tool not in script.tool_names:
                yield Finding((index,), f"the script never calls {tool!r}: {NEVER}")

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        names = run.tool_names
        return [
            CheckResult(
                f"{self.name}: {tool}",
                ok := tool in names,
                f"called {plural(names.count(tool), 'time')}"
                if ok
                else f"never called ({observed_calls(run)})",
            )
            for tool in params
        ]


class ToolsNotUsed(Family[list[str]]):
    """None of the named tools was called."""

    name = "tools_not_used"

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"calls"})

    params = list[NonEmptyStr]
    description = "none of the tools was called"

    def consistency(self, params: list[str], script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding

        for index, tool in enumerate(params):
            if tool in script.tool_names:
                turn = script.calls_to(tool)[0].turn
                yield Finding((index,), f"the script calls {tool!r} in turn {turn}: {NEVER}")

    def rules(self, params: list[str], expects: Mapping[str, Any]) -> Iterable[Problem]:
        required = {tool: ToolsUsed.name for tool in expects.get(ToolsUsed.name, [])}
        required.update({tool: "a dispatch-boundary entry" for tool in boundary_tools(expects)})
        for index, tool in enumerate(params):
            if tool in required:
                yield Problem((index,), f"contradicts {required[tool]} naming {tool!r}")

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        names = run.tool_names
        return [
            CheckResult(
                f"{self.name}: {tool}",
                ok := tool not in names,
                "not called"
                if ok
                else f"called {plural(names.count(tool), 'time')} ({observed_calls(run)})",
            )
            for tool in params
        ]


class _CountBound(Family[int]):
    params = NonNegativeInt

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"calls"})

    def holds(self, bound: int, count: int) -> bool:
        raise NotImplementedError

    def consistency(self, params: int, script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding

        count = len(script.calls)
        if not self.holds(params, count):
            yield Finding((), f"the script makes {plural(count, 'tool call')}: {NEVER}")

    def grade(self, params: int, run: RunRecord) -> list[CheckResult]:
        count = len(run.calls)
        ok = self.holds(params, count)
        return [CheckResult(f"{self.name}: {params}", ok, f"observed {observed_calls(run)}")]


def needed_tools(expects: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The tools entries say must have been called, by name (a pattern some other
    tool could meet is left out), each with the family that says so."""
    needed = [(tool, ToolsUsed.name) for tool in expects.get(ToolsUsed.name, [])]
    needed += [
        (entry.tool, family)
        for family in (*BOUNDARY_FAMILIES, "tool_call_status")
        for entry in expects.get(family, [])
    ]
    needed += [
        (tool, "a tool_call_counts min")
        for tool, bounds in (expects.get("tool_call_counts") or {}).items()
        if bounds.min and "*" not in tool
    ]
    return needed


def required_calls(expects: Mapping[str, Any]) -> tuple[int, str] | None:
    """The fewest calls other entries demand, and which entry demands it."""
    needs: list[tuple[int, str]] = []
    if expects.get(MIN):
        needs.append((expects[MIN], f"{MIN}={expects[MIN]}"))
    if expects.get(ToolsUsed.name):
        needs.append((len(set(expects[ToolsUsed.name])), f"{ToolsUsed.name}"))
    if expects.get(AllToolsSucceeded.name) is False:
        needs.append((1, f"{AllToolsSucceeded.name}=false"))
    for family in BOUNDARY_FAMILIES:
        for entry in expects.get(family, []):
            needed = (entry.call_index or 0) + 1
            needs.append((needed, f"{family} {entry.tool}[{entry.call_index or 0}]"))
    return max(needs, default=None)


class MaxToolCalls(_CountBound):
    """At most ``n`` calls were dispatched (``0``: no tool may run)."""

    name = MAX
    description = "at most n tool calls were dispatched"

    def holds(self, bound: int, count: int) -> bool:
        return count <= bound

    def rules(self, params: int, expects: Mapping[str, Any]) -> Iterable[Problem]:
        need = required_calls(expects)
        if need is not None and need[0] > params:
            yield Problem(
                (), f"contradicts {need[1]}, which needs at least {plural(need[0], 'call')}"
            )


class MinToolCalls(_CountBound):
    """At least ``n`` calls were dispatched (``n`` must be 1 or more)."""

    name = MIN
    description = "at least n tool calls were dispatched"

    def holds(self, bound: int, count: int) -> bool:
        return count >= bound

    def rules(self, params: int, expects: Mapping[str, Any]) -> Iterable[Problem]:
        if params == 0:
            yield Problem((), "a lower bound of 0 asserts nothing")


class ExactToolCalls(_CountBound):
    """Exactly ``n`` calls were dispatched."""

    name = EXACT
    description = "exactly n tool calls were dispatched"

    def holds(self, bound: int, count: int) -> bool:
        return count == bound

    def rules(self, params: int, expects: Mapping[str, Any]) -> Iterable[Problem]:
        if MAX in expects and params > expects[MAX]:
            yield Problem((), f"contradicts {MAX}={expects[MAX]}")
        need = required_calls(expects)
        if need is not None and need[0] > params:
            yield Problem(
                (), f"contradicts {need[1]}, which needs at least {plural(need[0], 'call')}"
            )


class AllToolsSucceeded(Family[bool]):
    """``true``: every dispatched call succeeded; ``false``: at least one failed."""

    name = "all_tools_succeeded"

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"calls", "status"})

    params = bool
    description = "true: every dispatched call succeeded; false: at least one failed"

    def consistency(self, params: bool, script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding

        if params is False and not script.calls:
            yield Finding((), f"false needs a failed call, and the script calls no tool: {NEVER}")

    def grade(self, params: bool, run: RunRecord) -> list[CheckResult]:
        failed = [call for call in run.calls if not call.succeeded]
        if failed:
            observed = "; ".join(f"{call.name} failed: {call.result}" for call in failed)
        else:
            observed = f"every call succeeded ({observed_calls(run)})"
        return [
            CheckResult(
                f"{self.name}: {str(params).lower()}", run.all_succeeded == params, observed
            )
        ]


FAMILIES: tuple[Callable[[], Family[Any]], ...] = (
    ToolsUsed,
    ToolsNotUsed,
    MaxToolCalls,
    MinToolCalls,
    ExactToolCalls,
    AllToolsSucceeded,
)


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    for family in FAMILIES:
        register(family())
