"""Answers bound to evidence: ``response_grounded`` and ``response_claims_backed``.

Both grade the final response against the dispatch record, never against what the
model says it did. ``response_grounded`` finds the values of the kinds the author
names in the final response (``id``: a token mixing letters and digits such as
``BK-482913``; ``number``; ``amount``: a number with a currency sign or code;
``url``), and every match of the author's own ``patterns``, and requires each to
occur in a source: the result of a call that crossed the dispatch boundary and
succeeded (``results``), or the user's input (``user_input``). A model that
invents a booking reference fails, naming the value and the nearest one the
sources hold. Numbers and amounts are compared by value (``$1,250.00`` is
grounded by a result's ``1250``); identifiers as whole tokens; URLs and pattern
matches as text.

``response_claims_backed`` maps a claim phrase (``"refunded"``) to the call that
must have happened for the answer to say it: a tool, optionally with arguments
compared as :mod:`~zeroclaw_eval.builtin.sequence` compares a step's. An answer
that makes the claim (the phrase, in any case, as whole words) passes only if a
call fitting the pattern crossed the boundary and succeeded; an answer that does
not make it passes.

Admission refuses a pattern that does not compile or matches the empty string,
and, for an agent that plays the script as written, an entry the fixture settles
(:meth:`~zeroclaw_eval.grading.family.Family.settled`): a scripted answer whose
values the user input and the scripted results already hold, or that never makes
the claim. ``zeroclaw eval check`` finds the answers the script can never ground.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field

from zeroclaw_eval.builtin.sequence import (
    ArgumentMatch,
    CallPattern,
    Candidates,
    argument_differences,
    call_labels,
    name_matcher,
    pattern_problems,
)
from zeroclaw_eval.builtin.tools import observed_calls
from zeroclaw_eval.grading.family import Family, NonEmptyStr, Params, Problem, ToolReference
from zeroclaw_eval.grading.record import RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural, shorten

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import Finding, Script

Kind = Literal["id", "number", "amount", "url"]
Source = Literal["results", "user_input"]

#: How many ungrounded values, and grounded ones, a detail lists before it counts the rest.
SHOWN = 5

_NUMBER = r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_CURRENCY = r"USD|EUR|GBP|JPY|CHF|CAD|AUD"
#: A value of each kind as it appears in an answer. A number inside a token
#: (``BK-482913``, ``v2``, ``2024-05-01``) is part of that token, not a number.
_IN_ANSWER: dict[str, re.Pattern[str]] = {
    "id": re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[^\W\d_])\w[\w-]{2,}(?<=\w)(?![\w-])"),
    "number": re.compile(rf"(?<![\w.,-]){_NUMBER}(?![\w-]|[.,]\d)"),
    "amount": re.compile(
        rf"(?:[$€£¥]\s?|\b(?:{_CURRENCY})\s?)(?P<a>{_NUMBER})"
        rf"|(?<![\w.,-])(?P<b>{_NUMBER})\s?(?:{_CURRENCY})\b"
    ),
    "url": re.compile(r"https?://[^\s<>\"'`)\]}]+"),
}
#: Every number a source holds, also inside tokens: evidence is read generously.
_IN_SOURCE_NUMBERS = re.compile(r"\d+(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


class GroundedValues(Params):
    """Which values of the final response must occur in a source, and which sources."""

    kinds: Annotated[list[Kind], Field(min_length=1)] | None = Field(
        None,
        description="id (letters and digits mixed, BK-482913), number, amount (a number "
        "with $, EUR...), url",
    )
    patterns: Annotated[list[NonEmptyStr], Field(min_length=1)] | None = Field(
        None, description="regular expressions: each match in the answer must occur in a source"
    )
    sources: Annotated[list[Source], Field(min_length=1)] = Field(
        ["results", "user_input"],
        description="where a value may come from: results (of calls that succeeded), "
        "user_input; both by default",
    )


@dataclass(frozen=True)
class _Value:
    """One value found in the answer: its kind (or pattern), its text, and for a
    number or an amount its value."""

    kind: str
    text: str
    number: Decimal | None = None

    @property
    def label(self) -> str:
        return f"{self.kind} {self.text}"


@dataclass(frozen=True)
class _Source:
    """A text a value may come from, and how a detail names it."""

    label: str
    text: str
    usable: bool = True


def _decimal(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def _strip_url(url: str) -> str:
    # A sentence's own punctuation after a link is not part of it.
    return url.rstrip(".,;:!?")


def answer_values(answer: str, params: GroundedValues) -> tuple[list[_Value], str | None]:
    """The values of the answer the entry grounds, each once, in order of kind; and
    why an author's pattern could not be searched, if one could not."""
    values: list[_Value] = []
    for kind in params.kinds or ():
        for match in _IN_ANSWER[kind].finditer(answer):
            if kind == "url":
                values.append(_Value(kind, _strip_url(match.group(0))))
            elif kind == "amount":
                number = match.group("a") or match.group("b")
                values.append(_Value(kind, match.group(0), _decimal(number)))
            elif kind == "number":
                values.append(_Value(kind, match.group(0), _decimal(match.group(0))))
            else:
                values.append(_Value(kind, match.group(0)))
    failure = None
    if params.patterns:
        # An author's pattern runs in the time-limited worker: one that backtracks
        # catastrophically fails the check instead of hanging the run.
        from zeroclaw_eval.util.warmup import setting_up

        with setting_up():
            from zeroclaw_eval.util import regexsearch
        for pattern in params.patterns:
            outcome = regexsearch.find_all(pattern, answer)
            if isinstance(outcome, regexsearch.FoundAll):
                values += [_Value(f"/{pattern}/", text) for text in outcome.texts if text]
            elif isinstance(outcome, regexsearch.TimedOut):
                failure = f"the search for /{pattern}/ did not finish within {outcome.seconds:g} s"
            elif isinstance(outcome, regexsearch.Error):
                failure = f"the search for /{pattern}/ failed: {outcome.message}"
    unique = list(dict.fromkeys(values))
    return unique, failure


def sources_of(run: RunRecord, params: GroundedValues) -> list[_Source]:
    """The texts the entry's values may come from: each user input and each result
    of a call that crossed the boundary; a failed call's error text is kept, unusable,
    so that a detail can say a value occurs only there."""
    users = [
        _Source(f"the user input of turn {turn}", text) for turn, text in enumerate(run.user_inputs)
    ]
    labels = call_labels(run.calls, run)
    results = [_Source(labels[n], call.result, call.succeeded) for n, call in enumerate(run.calls)]
    return [
        *(users if "user_input" in params.sources else ()),
        *(results if "results" in params.sources else ()),
    ]


def _holds(source: str, value: _Value) -> bool:
    if value.number is not None:
        return any(_decimal(n) == value.number for n in _IN_SOURCE_NUMBERS.findall(source))
    if value.kind == "id":
        return re.search(rf"(?<![\w-]){re.escape(value.text)}(?![\w-])", source) is not None
    return value.text in source


def _nearest(value: _Value, sources: Sequence[_Source]) -> str:
    """The closest thing the sources hold: where the value occurs in an error only,
    else the nearest number (by value) or token (by likeness), and where."""
    failed = next((s for s in sources if not s.usable and _holds(s.text, value)), None)
    if failed is not None:
        return f"it occurs only in the error of {failed.label}"
    if value.number is not None:
        numbers = [
            (abs(_decimal(text) - value.number), text, source.label)
            for source in sources
            if source.usable
            for text in _IN_SOURCE_NUMBERS.findall(source.text)
        ]
        if not numbers:
            return "the sources hold no number"
        _, text, where = min(numbers, key=lambda found: found[0])
        return f"nearest: {text} in {where}"
    from difflib import SequenceMatcher

    best: tuple[float, str, str] | None = None
    for source in sources:
        if not source.usable:
            continue
        for token in re.findall(r"[^\s\"'<>,;(){}\[\]]+", source.text):
            score = SequenceMatcher(None, value.text, token).ratio()
            if best is None or score > best[0]:
                best = (score, token, source.label)
    if best is None or best[0] < 0.5:
        return "nothing like it in the sources"
    return f"nearest: {shorten(best[1], 60)} in {best[2]}"


def _kinds_label(params: GroundedValues) -> str:
    kinds = [*(params.kinds or ()), *(f"/{p}/" for p in params.patterns or ())]
    return ", ".join(kinds)


def _sources_label(params: GroundedValues) -> str:
    """``tool result nor user input``: what a value was looked for in."""
    names = {"results": "tool result", "user_input": "user input"}
    return " nor ".join(names[source] for source in dict.fromkeys(params.sources))


class ResponseGrounded(Family[GroundedValues]):
    """Every value of the named kinds in the final response occurs in a tool result
    that crossed the dispatch boundary, or in the user's input."""

    name = "response_grounded"
    params = GroundedValues
    description = (
        "every id, number, amount, url (kinds) or pattern match in the final response "
        "occurs in a successful tool result or the user input"
    )

    def evidence(self, params: GroundedValues) -> frozenset[str]:
        if "results" in params.sources:
            return frozenset({"response", "calls", "results", "status"})
        return frozenset({"response"})

    def rules(self, params: GroundedValues, expects: Any) -> Iterable[Problem]:
        if params.kinds is None and params.patterns is None:
            yield Problem((), "names no value to ground: give kinds, patterns or both")
        if params.kinds is not None and len(set(params.kinds)) < len(params.kinds):
            yield Problem(("kinds",), "names a kind twice")
        if len(set(params.sources)) < len(params.sources):
            yield Problem(("sources",), "names a source twice")
        # A pattern is refused as response_matches refuses one; one that compiles is
        # also refused when it matches the empty string.
        from zeroclaw_eval.builtin.response import ResponseMatches

        patterns = params.patterns or []
        refused = [
            (("patterns", *p.path), p.message) for p in ResponseMatches().rules(patterns, {})
        ]
        yield from (Problem(path, message) for path, message in refused)
        for index, pattern in enumerate(patterns):
            if ("patterns", index) not in dict(refused) and re.fullmatch(pattern, "") is not None:
                yield Problem(
                    ("patterns", index),
                    "matches the empty string: it finds nothing to ground, so it asserts nothing",
                )

    def settled(self, params: GroundedValues, script: Script) -> Iterable[Problem]:
        if script.final_response is None:
            return
        # More sources only ground more values: a pass over the scripted results
        # alone (a result that runs for real counts as empty) passes whatever runs.
        check = self._grade_one(params, script.played())
        if check.passed:
            yield Problem(
                (), f"the scripted answer is grounded by the fixture itself: {check.detail}"
            )

    def consistency(self, params: GroundedValues, script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding

        if script.final_response is None:
            return
        if "results" in params.sources and any(call.result is None for call in script.calls):
            return  # a tool that runs for real may return what is missing
        check = self._grade_one(params, script.played())
        if not check.passed:
            yield Finding(
                (),
                f"no scripted result nor user input grounds the scripted answer: {check.detail}: "
                "can never pass",
            )

    def grade(self, params: GroundedValues, run: RunRecord) -> list[CheckResult]:
        return [self._grade_one(params, run)]

    def _grade_one(self, params: GroundedValues, run: RunRecord) -> CheckResult:
        check = f"{self.name}: {_kinds_label(params)}"
        if params.sources != ["results", "user_input"]:
            check += f" from {', '.join(params.sources)}"
        answer = run.final_response
        if answer is None:
            return CheckResult(check, False, "there is no final response")
        values, failure = answer_values(answer, params)
        if failure is not None:
            return CheckResult(check, False, failure)
        if not values:
            return CheckResult(
                check,
                True,
                f"the final response holds no {_kinds_label(params)}: nothing to ground",
            )
        sources = sources_of(run, params)
        grounded: list[str] = []
        missing: list[str] = []
        for value in values:
            where = next((s for s in sources if s.usable and _holds(s.text, value)), None)
            if where is None:
                missing.append(f"{value.label} ({_nearest(value, sources)})")
            else:
                grounded.append(f"{value.label} in {where.label}")
        if not missing:
            return CheckResult(
                check, True, f"{plural(len(values), 'value')} grounded: {_listed(grounded)}"
            )
        return CheckResult(
            check,
            False,
            f"{plural(len(missing), 'value')} of {len(values)} in no "
            f"{_sources_label(params)}: {_listed(missing)}",
        )


def _listed(items: Sequence[str]) -> str:
    """The first :data:`SHOWN` items, then how many more."""
    more = [f"... and {len(items) - SHOWN} more"] if len(items) > SHOWN else []
    return "; ".join([*items[:SHOWN], *more])


# --- claims ---------------------------------------------------------------------


class BackedClaim(CallPattern):
    """A claim the answer may make, and the call that must have succeeded for it."""

    DEFAULT_MATCH: ClassVar[str] = "partial"

    claim: NonEmptyStr = Field(
        description="the phrase that makes the claim (refunded): any case, whole words"
    )
    match: ArgumentMatch | None = Field(
        None,
        description="how the arguments are compared: partial (the default with arguments), "
        "exact, subset, ignore (the default without), paths",
    )


def claim_pattern(phrase: str) -> re.Pattern[str]:
    """The phrase in any case, as whole words, any run of spaces between them."""
    words = r"\s+".join(map(re.escape, phrase.split()))
    return re.compile(rf"(?<!\w){words}(?!\w)", re.IGNORECASE)


def _pattern_label(entry: BackedClaim) -> str:
    from zeroclaw_eval.util.jsonmatch import show_pattern

    if entry.arguments is None:
        return entry.tool
    return f"{entry.tool} {show_pattern(entry.arguments)}"


class ResponseClaimsBacked(Family[list[BackedClaim]]):
    """An answer that makes a claim is backed by a call that crossed the dispatch
    boundary and succeeded."""

    name = "response_claims_backed"
    params = list[BackedClaim]
    description = (
        "an answer that makes the claim (a phrase) is backed by a successful call to the "
        "tool (optionally with arguments)"
    )
    allow_empty_strings = (
        True  # an expected argument may be ""; claims and names are typed non-empty
    )

    def evidence(self, params: list[BackedClaim]) -> frozenset[str]:
        read = {"response", "calls", "status"}
        if any(entry.matching != "ignore" for entry in params):
            read.add("arguments")
        return frozenset(read)

    def tools_named(self, params: list[BackedClaim]) -> Iterable[ToolReference]:
        return [
            ToolReference((index, "tool"), entry.tool, name_matcher(entry.tool))
            for index, entry in enumerate(params)
        ]

    def rules(self, params: list[BackedClaim], expects: Any) -> Iterable[Problem]:
        for index, entry in enumerate(params):
            yield from pattern_problems(entry, (index,))
            if not any(character.isalnum() for character in entry.claim):
                yield Problem((index, "claim"), "has no word in it: it can claim nothing")

    def settled(self, params: list[BackedClaim], script: Script) -> Iterable[Problem]:
        if script.final_response is None:
            return
        played = script.played()
        for index, entry in enumerate(params):
            if claim_pattern(entry.claim).search(script.final_response) is None:
                yield Problem(
                    (index, "claim"),
                    f"the scripted answer never claims {entry.claim!r}, so the check passes",
                )
                continue
            # Only a scripted result's status is certain: a tool that runs may fail.
            backed = [
                p for p in Candidates(played.calls).of(entry) if script.calls[p].result is not None
            ]
            if any(not script.calls[p].failed for p in backed):
                yield Problem(
                    (index, "claim"),
                    f"a scripted call to {entry.tool!r} with a scripted success backs it",
                )

    def consistency(self, params: list[BackedClaim], script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding

        if script.final_response is None:
            return
        # A call whose tool runs for real is played as a success: one that fits the
        # entry may back the claim, and no finding is made.
        played = script.played()
        for index, entry in enumerate(params):
            check = self._grade_one(entry, played)
            if not check.passed:
                yield Finding((index, "claim"), f"{check.detail}: can never pass")

    def grade(self, params: list[BackedClaim], run: RunRecord) -> list[CheckResult]:
        return [self._grade_one(entry, run) for entry in params]

    def _grade_one(self, entry: BackedClaim, run: RunRecord) -> CheckResult:
        check = f"{self.name}: {entry.claim!r} needs {_pattern_label(entry)}"
        answer = run.final_response
        if answer is None:
            return CheckResult(check, False, "there is no final response")
        said = claim_pattern(entry.claim).search(answer)
        if said is None:
            return CheckResult(check, True, f"the final response does not claim {entry.claim!r}")
        head = f"the final response claims {said.group(0)!r}"
        labels = call_labels(run.calls, run)
        fitting = Candidates(run.calls).of(entry)
        succeeded = [p for p in fitting if run.calls[p].succeeded]
        if succeeded:
            return CheckResult(check, True, f"{head}; {labels[succeeded[0]]} succeeded")
        if fitting:
            failures = "; ".join(
                f"{labels[p]} failed: {shorten(run.calls[p].result, 80)}" for p in fitting[:SHOWN]
            )
            return CheckResult(check, False, f"{head}, but no such call succeeded: {failures}")
        fits = name_matcher(entry.tool)
        named = [p for p, call in enumerate(run.calls) if fits(call.name)]
        if not named:
            return CheckResult(
                check, False, f"{head}, but {entry.tool} was never called ({observed_calls(run)})"
            )
        differences = {p: argument_differences(entry, run.calls[p].arguments) for p in named}
        nearest = min(named, key=lambda p: (len(differences[p]), p))
        listed = "; ".join(differences[nearest][:3])
        return CheckResult(
            check,
            False,
            f"{head}, but no call to {entry.tool} has the arguments: nearest "
            f"{labels[nearest]}, arguments differ: {listed}",
        )


def _families() -> Iterator[Family[Any]]:
    yield ResponseGrounded()
    yield ResponseClaimsBacked()


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    for family in _families():
        register(family)
