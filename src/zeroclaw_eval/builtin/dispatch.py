"""Dispatch-boundary families: ``tool_arguments_contain`` and ``tool_results_contain``.

They grade what actually crossed the boundary between the agent and its tools:
the JSON text of the arguments as dispatched (non-ASCII kept as is) and the text
the tool returned (for a failed call, its error text). ``call_index`` counts, from
0, the calls to that tool in dispatch order across all turns; without it any call
to the tool may match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pydantic import NonNegativeInt

from zeroclaw_eval.grading.family import Family, NonEmptyStr, Params
from zeroclaw_eval.grading.record import RecordedCall, RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural, shorten

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import Finding, Script


class BoundaryEntry(Params):
    """One boundary assertion: ``needle`` crossed the boundary of a call to ``tool``."""

    tool: NonEmptyStr
    needle: NonEmptyStr
    call_index: NonNegativeInt | None = None


class _BoundaryFamily(Family[list[BoundaryEntry]]):
    params = list[BoundaryEntry]
    side = ""

    def text(self, call: RecordedCall) -> str:
        raise NotImplementedError

    def consistency(self, params: list[BoundaryEntry], script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import calls_findings

        return calls_findings(params, script)

    def grade(self, params: list[BoundaryEntry], run: RunRecord) -> list[CheckResult]:
        return [self._grade_one(entry, run) for entry in params]

    def _grade_one(self, entry: BoundaryEntry, run: RunRecord) -> CheckResult:
        calls = run.calls_to(entry.tool)
        target = entry.tool if entry.call_index is None else f"{entry.tool}[{entry.call_index}]"
        check = f"{self.name}: {target} {shorten(entry.needle)}"
        if entry.call_index is not None:
            if entry.call_index >= len(calls):
                detail = (
                    f"no call {entry.call_index} to {entry.tool}: "
                    f"observed {plural(len(calls), 'call')} to it"
                )
                return CheckResult(check, False, detail)
            calls = [calls[entry.call_index]]
        elif not calls:
            others = ", ".join(run.tool_names) or "none"
            return CheckResult(check, False, f"{entry.tool} was never called (calls: {others})")
        texts = [self.text(call) for call in calls]
        if any(entry.needle in text for text in texts):
            return CheckResult(check, True, "found")
        observed = "; ".join(shorten(text) for text in texts)
        return CheckResult(check, False, f"not found in the {self.side}: observed {observed}")


class ToolArgumentsContain(_BoundaryFamily):
    """The arguments the agent passed to ``tool`` contain ``needle``."""

    name = "tool_arguments_contain"

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"calls", "arguments"})

    side = "arguments"
    description = "the arguments dispatched to a tool contain the needle"

    def text(self, call: RecordedCall) -> str:
        return call.arguments_json


class ToolResultsContain(_BoundaryFamily):
    """The output ``tool`` returned (or its error text) contains ``needle``."""

    name = "tool_results_contain"

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"calls", "results"})

    side = "result"
    description = "the text a tool returned (or its error) contains the needle"

    def text(self, call: RecordedCall) -> str:
        return call.result


FAMILIES: tuple[Callable[[], Family[Any]], ...] = (ToolArgumentsContain, ToolResultsContain)


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    for family in FAMILIES:
        register(family())
