"""The ``tool_call_counts`` family: bounds on the calls to each tool.

``{"search": {"max": 3}, "echo": {"min": 1}, "read_*": {"min": 1, "max": 2}}``:
the calls to each tool (a name, or a pattern where ``*`` stands for any run of
characters, counting the calls to every tool it fits) number at least ``min``
and at most ``max``, both inclusive, across the whole case. Where
``max_tool_calls`` bounds every call, this bounds one tool's.

Admission refuses a bound that says nothing (neither key, or ``min`` 0 alone),
``min`` above ``max``, a ``max`` below what other entries need (the required
``tool_sequence`` steps only that tool can pair with, ``tools_used``, a
``call_index`` of a boundary or ``tool_call_status`` entry), a ``min`` above
``max_tool_calls`` or ``exact_tool_calls``, and a ``min`` for a tool of
``tools_not_used``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import Field, NonNegativeInt

from zeroclaw_eval.builtin.sequence import name_matcher
from zeroclaw_eval.builtin.tools import BOUNDARY_FAMILIES, EXACT, MAX, NEVER, observed_calls
from zeroclaw_eval.grading.family import Family, NonEmptyStr, Params, Problem, ToolReference
from zeroclaw_eval.grading.record import RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import Finding, Script


class CountBounds(Params):
    """How many calls to one tool: at least ``min``, at most ``max`` (inclusive)."""

    min: NonNegativeInt | None = Field(None, description="at least this many calls")
    max: NonNegativeInt | None = Field(None, description="at most this many calls")

    def holds(self, count: int) -> bool:
        """Whether ``count`` calls meet both bounds."""
        return (self.min is None or count >= self.min) and (self.max is None or count <= self.max)

    @property
    def label(self) -> str:
        """``at most 3``, ``at least 1``, ``exactly 2``, ``1 to 3``."""
        if self.min is not None and self.max is not None:
            return f"exactly {self.max}" if self.min == self.max else f"{self.min} to {self.max}"
        return f"at most {self.max}" if self.min is None else f"at least {self.min}"


class ToolCallCounts(Family[dict[str, CountBounds]]):
    """The calls to each named tool number within its bounds."""

    name = "tool_call_counts"
    params = dict[NonEmptyStr, CountBounds]
    description = (
        "the calls to each tool (a name, or a pattern with *) number at least min and at "
        "most max, across the case"
    )

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"calls"})

    def tools_named(self, params: dict[str, CountBounds]) -> Iterable[ToolReference]:
        return [ToolReference((tool,), tool, name_matcher(tool)) for tool in params]

    def rules(
        self, params: dict[str, CountBounds], expects: Mapping[str, Any]
    ) -> Iterable[Problem]:
        for tool, bounds in params.items():
            yield from _bound_problems(tool, bounds, expects)

    def consistency(self, params: dict[str, CountBounds], script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding

        for tool, bounds in params.items():
            fits = name_matcher(tool)
            count = sum(1 for call in script.calls if fits(call.name))
            if not bounds.holds(count):
                yield Finding(
                    (tool,), f"the script calls {tool!r} {plural(count, 'time')}: {NEVER}"
                )

    def grade(self, params: dict[str, CountBounds], run: RunRecord) -> list[CheckResult]:
        results = []
        for tool, bounds in params.items():
            fits = name_matcher(tool)
            count = sum(1 for call in run.calls if fits(call.name))
            detail = f"{plural(count, 'call')} to {tool} ({observed_calls(run)})"
            results.append(
                CheckResult(f"{self.name}: {tool} {bounds.label}", bounds.holds(count), detail)
            )
        return results


def _bound_problems(
    tool: str, bounds: CountBounds, expects: Mapping[str, Any]
) -> Iterator[Problem]:
    if bounds.min is None and bounds.max is None:
        yield Problem((tool,), "needs min, max or both")
        return
    if bounds.min == 0 and bounds.max is None:
        yield Problem((tool, "min"), "a lower bound of 0 asserts nothing")
    if bounds.min is not None and bounds.max is not None and bounds.min > bounds.max:
        yield Problem((tool, "min"), f"is above max={bounds.max}: no count meets both")
    if bounds.max is not None:
        need = _needed_calls(tool, expects)
        if need is not None and need[0] > bounds.max:
            yield Problem(
                (tool, "max"),
                f"contradicts {need[1]}, which needs at least {plural(need[0], 'call')} to {tool}",
            )
    if bounds.min:
        for bound in (MAX, EXACT):
            if isinstance(expects.get(bound), int) and bounds.min > expects[bound]:
                yield Problem((tool, "min"), f"is above {bound}={expects[bound]}")
        if "*" not in tool and tool in (expects.get("tools_not_used") or ()):
            yield Problem((tool, "min"), f"contradicts tools_not_used naming {tool!r}")


def _needed_calls(tool: str, expects: Mapping[str, Any]) -> tuple[int, str] | None:
    """The most calls fitting ``tool`` another entry needs, and which entry."""
    fits = name_matcher(tool)
    needs: list[tuple[int, str]] = []
    for number, entry in enumerate(expects.get("tool_sequence", ())):
        # One call pairs with one step: the required steps only such calls can
        # pair with (a plain name the pattern fits) each need one of their own.
        steps = [s for s in entry.steps if not s.optional and "*" not in s.tool and fits(s.tool)]
        if steps:
            needs.append((len(steps), f"tool_sequence[{number}]"))
    if any(fits(name) for name in expects.get("tools_used", ())):
        needs.append((1, "tools_used"))
    for family in (*BOUNDARY_FAMILIES, "tool_call_status"):
        for entry in expects.get(family, ()):
            if fits(entry.tool):
                needs.append(((entry.call_index or 0) + 1, f"{family} {entry.tool}"))
    return max(needs, default=None)


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    register(ToolCallCounts())
