"""The ``tool_calls_forbidden`` family: calls that must never happen.

An entry is a call pattern (a tool, ``*`` for any run of characters, and
optionally its arguments, compared as :mod:`~zeroclaw_eval.builtin.sequence`
compares a step's, matchers included) that no call may fit: "never ``refund``
with ``amount`` over 100" is ``{"tool": "refund", "arguments": {"amount": {"$gt":
100}}}``. Arguments are compared ``partial`` by default here: a forbidden call is
one whose arguments *include* these, whatever else it passes (``exact`` would let
the same call through with one more key). With ``after``, the call is forbidden
only after a call fitting that pattern ("never ``delete`` after ``search``");
with ``turn``, only in that turn (0-based).

Admission refuses what another entry contradicts: a required ``tool_sequence``
step that only a forbidden call could pair with (an ordered pair of steps, for
``after``), and a tool ``tools_used``, a boundary entry, ``tool_call_status`` or a
``tool_call_counts`` minimum needs called that is forbidden outright.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field, NonNegativeInt

from zeroclaw_eval.builtin.sequence import (
    ArgumentMatch,
    CallPattern,
    Candidates,
    SequenceEntry,
    argument_test,
    call_labels,
    expected_arguments,
    name_matcher,
    pattern_problems,
)
from zeroclaw_eval.grading.family import Family, Problem, ToolReference
from zeroclaw_eval.grading.record import RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import Finding, Script

_MATCH = (
    "how the arguments are compared: partial (the default with arguments: the call's "
    "arguments include these), exact, subset, ignore (the default without), paths"
)


class ForbiddenCallLike(CallPattern):
    """A call an entry forbids, or one it is forbidden after."""

    DEFAULT_MATCH: ClassVar[str] = "partial"

    match: ArgumentMatch | None = Field(None, description=_MATCH)


class ForbiddenCall(ForbiddenCallLike):
    """A call that must never happen (in ``turn``, after a call like ``after``)."""

    after: ForbiddenCallLike | None = Field(
        None, description="forbidden only after a call like this one (dispatch order)"
    )
    turn: NonNegativeInt | None = Field(
        None, description="only the calls of this turn (0-based); the whole case without it"
    )


def pattern_label(pattern: CallPattern) -> str:
    """``refund {"amount":{"$gt":100}}``: the tool, then the arguments as written."""
    from zeroclaw_eval.util.jsonmatch import show_pattern

    if pattern.arguments is None:
        return pattern.tool
    return f"{pattern.tool} {show_pattern(pattern.arguments)}"


def implied(pattern: CallPattern, step: CallPattern) -> bool:
    """Whether every call ``step`` can pair with fits ``pattern``: the step names a
    plain tool the pattern accepts, and the pattern ignores the arguments, or the
    step fixes them without a matcher, to values the pattern accepts, either
    exactly or (``partial``, or ``exact`` with ``ignore``) as a floor the call may
    add keys to, which a ``partial`` or ``paths`` pattern still accepts."""
    from zeroclaw_eval.util.jsonmatch import has_matchers

    fixed = step.arguments is not None and not has_matchers(step.arguments)
    exactly = fixed and step.matching == "exact" and not step.ignore
    at_least = fixed and step.matching in ("exact", "partial")
    return (
        "*" not in step.tool
        and name_matcher(pattern.tool)(step.tool)
        and (
            pattern.matching == "ignore"
            or (
                (exactly or (at_least and pattern.matching in ("partial", "paths")))
                and argument_test(pattern, expected_arguments(pattern))(step.arguments or {})
            )
        )
    )


class ToolCallsForbidden(Family[list[ForbiddenCall]]):
    """No call fits a forbidden pattern (after ``after``, in ``turn``)."""

    name = "tool_calls_forbidden"
    params = list[ForbiddenCall]
    description = (
        "no call fits the pattern: a tool, optionally with arguments (matchers allowed, "
        "partial by default), optionally only after another call or in one turn"
    )
    allow_empty_strings = True  # an expected argument may be ""; names are typed non-empty

    def evidence(self, params: list[ForbiddenCall]) -> frozenset[str]:
        patterns = [p for entry in params for p in (entry, entry.after) if p is not None]
        compares = any(p.matching != "ignore" for p in patterns)
        return frozenset({"calls", "arguments"} if compares else {"calls"})

    def tools_named(self, params: list[ForbiddenCall]) -> Iterable[ToolReference]:
        for index, entry in enumerate(params):
            yield ToolReference((index, "tool"), entry.tool, name_matcher(entry.tool))
            if entry.after is not None:
                after = entry.after.tool
                yield ToolReference((index, "after", "tool"), after, name_matcher(after))

    def turns_named(
        self, params: list[ForbiddenCall]
    ) -> Iterable[tuple[tuple[str | int, ...], int]]:
        return [((index, "turn"), e.turn) for index, e in enumerate(params) if e.turn is not None]

    def rules(self, params: list[ForbiddenCall], expects: Mapping[str, Any]) -> Iterable[Problem]:
        for index, entry in enumerate(params):
            yield from pattern_problems(entry, (index,))
            if entry.after is not None:
                yield from pattern_problems(entry.after, (index, "after"))
            yield from _contradictions(entry, expects, index)

    def consistency(self, params: list[ForbiddenCall], script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding

        for index, entry in enumerate(params):
            # The script's arguments are not read here: only patterns that ignore
            # them are settled by the names alone.
            patterns = [entry] if entry.after is None else [entry.after, entry]
            if any(pattern.matching != "ignore" for pattern in patterns):
                continue
            calls = [c for c in script.calls if entry.turn is None or c.turn == entry.turn]
            # The first call fitting each pattern in turn: the last one found is forbidden.
            fits = [name_matcher(pattern.tool) for pattern in patterns]
            found = 0
            for call in calls:
                if fits[found](call.name):
                    found += 1
                    if found == len(fits):
                        after = "" if entry.after is None else f" after {entry.after.tool!r}"
                        yield Finding(
                            (index, "tool"),
                            f"the script calls {call.name!r}{after} in turn {call.turn}: "
                            "can never pass",
                        )
                        break

    def grade(self, params: list[ForbiddenCall], run: RunRecord) -> list[CheckResult]:
        return [self._grade_one(entry, run) for entry in params]

    def _grade_one(self, entry: ForbiddenCall, run: RunRecord) -> CheckResult:
        calls = [c for c in run.calls if entry.turn is None or c.turn == entry.turn]
        scope = "" if entry.turn is None else f" in turn {entry.turn}"
        after = "" if entry.after is None else f" after {pattern_label(entry.after)}"
        check = f"{self.name}: {pattern_label(entry)}{after}{scope}"
        finder = Candidates(calls)
        hits = finder.of(entry)
        first = None
        if entry.after is not None:
            earlier = finder.of(entry.after)
            first = min(earlier, default=None)
            hits = [p for p in hits if first is not None and p > first]
        named = [p for p, call in enumerate(calls) if name_matcher(entry.tool)(call.name)]
        if not hits:
            if entry.after is not None and first is None:
                detail = f"no call like {pattern_label(entry.after)}{scope}"
            elif not named:
                detail = f"no call to {entry.tool}{scope}"
            else:
                kind = "forbidden" if entry.after is None else "forbidden after it"
                detail = f"{plural(len(named), 'call')} to {entry.tool}{scope}, none {kind}"
            return CheckResult(check, True, detail)
        labels = call_labels(calls, run)
        shown = [f"{labels[p]}{_why(entry, calls[p].arguments)}" for p in hits[:5]]
        if len(hits) > 5:
            shown.append(f"... and {len(hits) - 5} more")
        head = f"{plural(len(hits), 'forbidden call')}: {'; '.join(shown)}"
        if first is not None:
            head += f" (after {labels[first]})"
        return CheckResult(check, False, head)


def _why(pattern: CallPattern, arguments: dict[str, Any]) -> str:
    """What of a call's arguments the pattern caught: each key it names, with the
    value the call gave and what the pattern forbids there."""
    from zeroclaw_eval.util.jsonmatch import show_pattern
    from zeroclaw_eval.util.jsonvalue import MISSING, parse_pointer, pointer, resolve, show

    if pattern.matching == "ignore":
        return ""
    expected = expected_arguments(pattern)
    if pattern.matching == "paths":
        places = [parse_pointer(p) for p in pattern.paths or ()]
    else:
        places = [(key,) for key in expected if key in arguments]
    said = [
        f"{pointer(tokens)} {show(resolve(arguments, tokens))} "
        f"(forbidden: {show_pattern(resolve(expected, tokens))})"
        for tokens in places
        if resolve(expected, tokens) is not MISSING
    ]
    return f" with {', '.join(said)}" if said else ""


def _contradictions(
    entry: ForbiddenCall, expects: Mapping[str, Any], index: int
) -> Iterator[Problem]:
    from zeroclaw_eval.builtin.tools import needed_tools

    for number, sequence in enumerate(expects.get("tool_sequence", ())):
        found = _implied_steps(entry, sequence)
        if found is not None:
            yield Problem(
                (index, "tool"),
                f"contradicts tool_sequence[{number}].steps[{found}], a required step only "
                "a forbidden call can pair with",
            )
            return
    if entry.after is not None or entry.turn is not None or entry.matching != "ignore":
        return  # the tool may still be called: before, elsewhere, or otherwise
    for tool, family in needed_tools(expects):
        if name_matcher(entry.tool)(tool):
            yield Problem((index, "tool"), f"contradicts {family} naming {tool!r}")
            return


def _implied_steps(entry: ForbiddenCall, sequence: SequenceEntry) -> int | None:
    """The number of a required step of ``sequence`` that only a call this entry
    forbids can pair with (after a step that only a call like ``after`` can pair
    with, in an ordered mode), or ``None``."""
    if entry.turn is not None and sequence.turn != entry.turn:
        return None  # the step's call may come in another turn
    required = [(n, step) for n, step in enumerate(sequence.steps) if not step.optional]
    if entry.after is None:
        return next((n for n, step in required if implied(entry, step)), None)
    if sequence.mode not in ("in_order", "exact"):
        return None
    earlier = False
    for number, step in required:
        if earlier and implied(entry, step):
            return number
        earlier = earlier or implied(entry.after, step)
    return None


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    register(ToolCallsForbidden())
