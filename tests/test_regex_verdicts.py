"""``response_matches`` when the search itself goes wrong: a pattern that never
finishes, and one the search process cannot run. Both fail their check, with a
detail that says which, and never pass.

Apart from the other family tests because a pattern that never finishes costs
the search's whole time limit.
"""

from __future__ import annotations

from zeroclaw_eval import Registry
from zeroclaw_eval.grading.record import RunRecord
from zeroclaw_eval.util import regexsearch


def grade_one(registry: Registry, pattern: str, response: str) -> tuple[bool, str]:
    entry = registry.family("response_matches")
    assert entry is not None
    family = entry.obj
    # Straight to grading: admission would refuse the pattern that does not compile.
    [check] = family.grade(family.adapter.validate_python([pattern]), RunRecord([response]))
    return check.passed, check.detail


def test_a_search_that_never_finishes_fails_its_check(registry: Registry) -> None:
    response = "a" * 40 + "!"
    assert grade_one(registry, "(a+)+$", response) == (
        False,
        f"the search did not finish within {regexsearch.TIMEOUT_S:g} s and was stopped "
        "(catastrophic backtracking? avoid nested quantifiers such as (a+)+): "
        f'the final response is "{response}"',
    )


def test_a_search_the_process_cannot_run_fails_its_check(registry: Registry) -> None:
    assert grade_one(registry, "(unclosed", "anything") == (
        False,
        "the search failed: error: missing ), unterminated subpattern at position 0",
    )
    # The next search gets a fresh process and works.
    assert grade_one(registry, "any", "anything") == (True, 'matched "any"')
