"""Families over the final response: ``response_contains``, ``response_not_contains``,
``response_matches``.

"Final response" is the agent's text for the last turn. In replay it is scripted,
so these families prove response shaping, never what crossed a tool boundary.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from zeroclaw_eval.grading.family import Family, NonEmptyStr, Problem
from zeroclaw_eval.grading.record import RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, shorten

if TYPE_CHECKING:
    from zeroclaw_eval.grading.script import Finding, Script


def _observed(run: RunRecord) -> str:
    if run.final_response is None:
        return "there is no final response"
    return f"the final response is {shorten(run.final_response)}"


class ResponseContains(Family[list[str]]):
    """The final response contains each substring."""

    name = "response_contains"

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"response"})

    params = list[NonEmptyStr]
    description = "the final response contains each substring"

    def consistency(self, params: list[str], script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding

        for index, needle in enumerate(params):
            final = script.final_response
            if final is not None and needle not in final:
                yield Finding(
                    (index,),
                    f"the agent passes the script's text through, and the last turn's "
                    f"scripted text {shorten(final)} lacks it: can never pass",
                )
            elif final is None and not any(needle in reply for reply in script.replies):
                yield Finding(
                    (index,),
                    "no scripted reply contains it: passes only if the agent writes it itself",
                    error=False,
                )

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        final = run.final_response
        return [
            CheckResult(
                f"{self.name}: {shorten(needle)}",
                ok := final is not None and needle in final,
                "found" if ok else f"not found: {_observed(run)}",
            )
            for needle in params
        ]


class ResponseNotContains(Family[list[str]]):
    """The final response contains none of the substrings."""

    name = "response_not_contains"

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"response"})

    params = list[NonEmptyStr]
    description = "the final response contains none of the substrings"

    def rules(self, params: list[str], expects: Mapping[str, Any]) -> Iterable[Problem]:
        required = expects.get(ResponseContains.name, [])
        for index, needle in enumerate(params):
            clash = next((text for text in required if needle in text), None)
            if clash is not None:
                yield Problem(
                    (index,),
                    f"contradicts response_contains {shorten(clash)}: no response can satisfy both",
                )

    def consistency(self, params: list[str], script: Script) -> Iterable[Finding]:
        from zeroclaw_eval.grading.script import Finding

        final = script.final_response
        for index, needle in enumerate(params):
            if final is not None and needle in final:
                yield Finding(
                    (index,),
                    f"the agent passes the script's text through, and the last turn's "
                    f"scripted text {shorten(final)} contains it: can never pass",
                )

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        final = run.final_response or ""
        results = []
        for needle in params:
            at = final.find(needle)
            results.append(
                CheckResult(
                    f"{self.name}: {shorten(needle)}",
                    at < 0,
                    "absent" if at < 0 else f"present at offset {at}: {_observed(run)}",
                )
            )
        return results


class ResponseMatches(Family[list[str]]):
    """Each regular expression is found in the final response (``re.search``)."""

    name = "response_matches"

    def evidence(self, params: Any) -> frozenset[str]:
        return frozenset({"response"})

    params = list[NonEmptyStr]
    description = "each regular expression is found (search) in the final response"

    def rules(self, params: list[str], expects: Mapping[str, Any]) -> Iterable[Problem]:
        for index, pattern in enumerate(params):
            # re raises more than re.error for patterns it cannot compile.
            try:
                re.compile(pattern)
            except (re.error, OverflowError) as exc:  # OverflowError: a{99999999999}
                yield Problem((index,), f"not a valid regular expression: {exc}")
            except RecursionError:
                yield Problem((index,), "not a valid regular expression: nested too deeply")

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        return [self._grade_one(pattern, run) for pattern in params]

    def _grade_one(self, pattern: str, run: RunRecord) -> CheckResult:
        check = f"{self.name}: {shorten(pattern)}"
        if run.final_response is None:
            return CheckResult(check, False, f"no match: {_observed(run)}")
        # In a separate process with a time limit: a catastrophically backtracking
        # pattern must fail its check, not hang the run (see regexsearch, imported
        # here: it brings subprocess and threads, which only this family needs;
        # the import, like the worker's start, is set-up, not this case's time).
        from zeroclaw_eval.util.warmup import setting_up

        with setting_up():
            from zeroclaw_eval.util import regexsearch

        outcome = regexsearch.search(pattern, run.final_response)
        if isinstance(outcome, regexsearch.Found):
            return CheckResult(check, True, f"matched {shorten(outcome.text)}")
        if isinstance(outcome, regexsearch.NotFound):
            return CheckResult(check, False, f"no match: {_observed(run)}")
        if isinstance(outcome, regexsearch.TimedOut):
            detail = (
                f"the search did not finish within {outcome.seconds:g} s and was stopped "
                "(catastrophic backtracking? avoid nested quantifiers such as (a+)+): "
                f"{_observed(run)}"
            )
            return CheckResult(check, False, detail)
        return CheckResult(check, False, f"the search failed: {outcome.message}")


FAMILIES: tuple[Callable[[], Family[Any]], ...] = (
    ResponseContains,
    ResponseNotContains,
    ResponseMatches,
)


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    for family in FAMILIES:
        register(family())
