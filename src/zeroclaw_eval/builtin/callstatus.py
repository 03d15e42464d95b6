"""The ``tool_call_status`` family: whether a tool's calls succeeded or failed.

An entry names a tool and a status (``succeeded`` or ``failed``): without
``call_index`` every call to the tool must have it, and the tool must have been
called at least once (a tool never called has no status to certify); with it,
the call at that index (0-based, counting the calls to that tool in dispatch
order across all turns, as the boundary families count).

Success is what the dispatch boundary observed: the reference loop sees it, a
bridged agent does not (its tools run on its side), so a bridged agent refuses
this family at admission.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import NonNegativeInt

from zeroclaw_eval.grading.family import Family, NonEmptyStr, Params, Problem, ToolReference
from zeroclaw_eval.grading.record import RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural, shorten

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import Finding, Script


class StatusEntry(Params):
    """The calls to ``tool`` (or the one at ``call_index``) ended with ``status``."""

    tool: NonEmptyStr
    status: Literal["succeeded", "failed"]
    call_index: NonNegativeInt | None = None


class ToolCallStatus(Family[list[StatusEntry]]):
    """Every call to a tool, or the call at an index, succeeded (or failed)."""

    name = "tool_call_status"

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"calls", "status"})

    params = list[StatusEntry]
    description = (
        "every call to the tool (at least one), or the call at call_index, succeeded or failed"
    )

    def rules(self, params: list[StatusEntry], expects: Mapping[str, Any]) -> Iterable[Problem]:
        banned = expects.get("tools_not_used") or []
        for index, entry in enumerate(params):
            if entry.tool in banned:
                yield Problem((index, "tool"), f"contradicts tools_not_used naming {entry.tool!r}")
            if entry.status == "failed" and expects.get("all_tools_succeeded") is True:
                yield Problem((index, "status"), "contradicts all_tools_succeeded=true")
            needed = (entry.call_index or 0) + 1
            for bound in ("max_tool_calls", "exact_tool_calls"):
                if isinstance(expects.get(bound), int) and expects[bound] < needed:
                    yield Problem(
                        (index,),
                        f"needs at least {plural(needed, 'call')} to {entry.tool}, more than "
                        f"{bound}={expects[bound]} allows",
                    )

    def tools_named(self, params: list[StatusEntry]) -> Iterable[ToolReference]:
        for index, entry in enumerate(params):
            yield ToolReference((index, "tool"), entry.tool, entry.tool.__eq__)

    def consistency(self, params: list[StatusEntry], script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import calls_findings

        return calls_findings(params, script)

    def grade(self, params: list[StatusEntry], run: RunRecord) -> list[CheckResult]:
        return [self._grade_one(entry, run) for entry in params]

    def _grade_one(self, entry: StatusEntry, run: RunRecord) -> CheckResult:
        calls = [(number, call) for number, call in enumerate(run.calls) if call.name == entry.tool]
        target = entry.tool if entry.call_index is None else f"{entry.tool}[{entry.call_index}]"
        check = f"{self.name}: {target} {entry.status}"
        if not calls:
            others = ", ".join(run.tool_names) or "none"
            return CheckResult(check, False, f"{entry.tool} was never called (calls: {others})")
        indexed = list(enumerate(calls))
        if entry.call_index is not None:
            if entry.call_index >= len(calls):
                detail = (
                    f"no call {entry.call_index} to {entry.tool}: "
                    f"observed {plural(len(calls), 'call')} to it"
                )
                return CheckResult(check, False, detail)
            indexed = [indexed[entry.call_index]]
        wanted = entry.status == "succeeded"
        wrong = [
            f"{entry.tool}[{index}] (turn {call.turn}, call {number}) "
            f"{'succeeded' if call.succeeded else 'failed'}: {shorten(call.result, 80)}"
            for index, (number, call) in indexed
            if call.succeeded != wanted
        ]
        if wrong:
            return CheckResult(check, False, "; ".join(wrong))
        if entry.call_index is None:
            detail = f"every call to {entry.tool} {entry.status} ({plural(len(calls), 'call')})"
        else:
            detail = f"{target} {entry.status}"
        return CheckResult(check, True, detail)


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    register(ToolCallStatus())
