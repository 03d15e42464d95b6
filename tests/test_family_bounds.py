"""The exact edges of every built-in family's verdict, and of the rules that admit it.

Each boundary is pinned from both sides: a needle at offset 0 of the response, a
count equal to its bound and one past it, ``call_index`` equal to the number of
calls, ``exact_tool_calls`` equal to ``max_tool_calls``. A refusal's message is
asserted whole, with the file and the field it names: the wording is the contract
a fixture's author reads.
"""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_eval import AdmissionError, Registry, RunMode
from zeroclaw_eval.case.admission import admit_data
from zeroclaw_eval.grading.record import RecordedCall, RunRecord
from zeroclaw_eval.report.model import CheckResult

from .conftest import echo_case

SOURCE = "suite/case.json"


def call(name: str, result: str = "ok", ok: bool = True, **arguments: Any) -> RecordedCall:
    return RecordedCall(0, f"id-{name}", name, arguments or {"message": result}, result, ok)


def run(*responses: str, calls: tuple[RecordedCall, ...] = ()) -> RunRecord:
    return RunRecord(responses=list(responses), calls=list(calls))


def grade(registry: Registry, family: str, params: Any, record: RunRecord) -> list[CheckResult]:
    entry = registry.family(family)
    assert entry is not None
    obj = entry.obj
    return obj.grade(obj.adapter.validate_python(params, strict=True), record)


def one(registry: Registry, family: str, params: Any, record: RunRecord) -> tuple[bool, str]:
    [check] = grade(registry, family, params, record)
    return check.passed, check.detail


def admit(registry: Registry, replay: RunMode, **entries: Any) -> list[str]:
    """The families of the admitted echo case with ``expects`` set to ``entries``."""
    case = admit_data(echo_case(expects=entries), registry, replay, source=SOURCE)
    return [expectation.name for expectation in case.expectations]


def refusal(registry: Registry, replay: RunMode, **entries: Any) -> str:
    with pytest.raises(AdmissionError) as refused:
        admit_data(echo_case(expects=entries), registry, replay, source=SOURCE)
    return str(refused.value)


# --- the final response ----------------------------------------------------------------


def test_a_forbidden_needle_at_offset_0_fails_response_not_contains(registry: Registry) -> None:
    verdict = one(registry, "response_not_contains", ["deleted"], run("deleted /srv/data"))
    assert verdict == (
        False,
        'present at offset 0: the final response is "deleted /srv/data"',
    )


def test_a_forbidden_needle_further_in_names_its_offset(registry: Registry) -> None:
    verdict = one(registry, "response_not_contains", ["rm"], run("I ran rm -rf"))
    assert verdict == (False, 'present at offset 6: the final response is "I ran rm -rf"')


def test_an_absent_needle_passes_response_not_contains(registry: Registry) -> None:
    assert one(registry, "response_not_contains", ["deleted"], run("kept")) == (True, "absent")


def test_with_no_final_response_every_forbidden_needle_is_absent(registry: Registry) -> None:
    checks = grade(registry, "response_not_contains", ["X", "XX", "deleted"], run())
    assert [(c.passed, c.detail) for c in checks] == [(True, "absent")] * 3


def test_response_contains_at_the_edges(registry: Registry) -> None:
    assert one(registry, "response_contains", ["hi"], run("hi")) == (True, "found")
    assert one(registry, "response_contains", ["hi"], run("hello")) == (
        False,
        'not found: the final response is "hello"',
    )
    assert one(registry, "response_contains", ["hi"], run()) == (
        False,
        "not found: there is no final response",
    )
    # Only the last turn's text is the final response.
    assert one(registry, "response_contains", ["hi"], run("hi", "bye"))[0] is False


def test_response_matches_decides_on_a_search_of_the_final_response(
    registry: Registry,
) -> None:
    assert one(registry, "response_matches", ["T-[0-9]+"], run("ticket T-42 open")) == (
        True,
        'matched "T-42"',
    )
    assert one(registry, "response_matches", ["^T-[0-9]+"], run("ticket T-42")) == (
        False,
        'no match: the final response is "ticket T-42"',
    )
    assert one(registry, "response_matches", ["x*"], run()) == (
        False,
        "no match: there is no final response",
    )


def test_one_check_per_needle_in_declaration_order(registry: Registry) -> None:
    checks = grade(registry, "response_contains", ["a", "zz", "b"], run("a b"))
    assert [(c.check, c.passed) for c in checks] == [
        ('response_contains: "a"', True),
        ('response_contains: "zz"', False),
        ('response_contains: "b"', True),
    ]
    checks = grade(registry, "response_not_contains", ["a", "zz"], run("a b"))
    assert [(c.check, c.passed) for c in checks] == [
        ('response_not_contains: "a"', False),
        ('response_not_contains: "zz"', True),
    ]
    checks = grade(registry, "response_matches", ["a", "z"], run("a b"))
    assert [(c.check, c.passed) for c in checks] == [
        ('response_matches: "a"', True),
        ('response_matches: "z"', False),
    ]


def test_a_forbidden_needle_inside_a_required_one_is_refused(
    registry: Registry, replay: RunMode
) -> None:
    message = refusal(
        registry, replay, response_contains=["hello"], response_not_contains=["zz", "ell"]
    )
    assert message == (
        f'{SOURCE}: expects.response_not_contains[1]="ell": contradicts response_contains '
        '"hello": no response can satisfy both'
    )


def test_forbidden_needles_that_no_required_one_contains_are_admitted(
    registry: Registry, replay: RunMode
) -> None:
    assert admit(registry, replay, response_not_contains=["deleted"]) == ["response_not_contains"]
    both = admit(registry, replay, response_contains=["hello"], response_not_contains=["help"])
    assert both == ["response_contains", "response_not_contains"]


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("(unclosed", "missing ), unterminated subpattern at position 0"),
        ("a{99999999999}", "the repetition number is too large"),
        ("(" * 100_000 + ")" * 100_000, "nested too deeply"),
    ],
    ids=["syntax", "overflow", "recursion"],
)
def test_a_pattern_that_does_not_compile_is_refused(
    registry: Registry, replay: RunMode, pattern: str, why: str
) -> None:
    message = refusal(registry, replay, response_matches=["ok", pattern])
    field = "expects.response_matches[1]"
    assert message.startswith(f"{SOURCE}: {field}")
    assert message.endswith(f": not a valid regular expression: {why}")


# --- the recorded calls -----------------------------------------------------------------


ECHO, SHELL = call("echo", "hi"), call("shell", "unknown tool 'shell'", ok=False)


@pytest.mark.parametrize(
    ("family", "bound", "calls", "passes"),
    [
        ("max_tool_calls", 2, 2, True),
        ("max_tool_calls", 2, 3, False),
        ("max_tool_calls", 0, 0, True),
        ("max_tool_calls", 0, 1, False),
        ("min_tool_calls", 2, 2, True),
        ("min_tool_calls", 2, 1, False),
        ("min_tool_calls", 2, 3, True),
        ("exact_tool_calls", 2, 2, True),
        ("exact_tool_calls", 2, 1, False),
        ("exact_tool_calls", 2, 3, False),
        ("exact_tool_calls", 0, 0, True),
    ],
)
def test_count_bounds_are_inclusive_and_exact(
    registry: Registry, family: str, bound: int, calls: int, passes: bool
) -> None:
    record = run("done", calls=(ECHO,) * calls)
    observed = "no tool was called" if not calls else f"{calls} call{'s' * (calls != 1)}: "
    [check] = grade(registry, family, bound, record)
    assert (check.check, check.passed) == (f"{family}: {bound}", passes)
    assert check.detail.startswith(f"observed {observed}")


def test_a_count_detail_lists_the_calls(registry: Registry) -> None:
    record = run("done", calls=(ECHO, SHELL))
    assert one(registry, "max_tool_calls", 1, record) == (
        False,
        "observed 2 calls: echo, shell",
    )
    assert one(registry, "min_tool_calls", 1, run("done", calls=(ECHO,))) == (
        True,
        "observed 1 call: echo",
    )


def test_tools_used_and_not_used_at_the_edges(registry: Registry) -> None:
    twice = run("done", calls=(ECHO, SHELL, ECHO))
    assert one(registry, "tools_used", ["echo"], twice) == (True, "called 2 times")
    assert one(registry, "tools_used", ["shell"], twice) == (True, "called 1 time")
    assert one(registry, "tools_used", ["grep"], twice) == (
        False,
        "never called (3 calls: echo, shell, echo)",
    )
    assert one(registry, "tools_used", ["echo"], run("done")) == (
        False,
        "never called (no tool was called)",
    )
    assert one(registry, "tools_not_used", ["grep"], twice) == (True, "not called")
    assert one(registry, "tools_not_used", ["shell"], twice) == (
        False,
        "called 1 time (3 calls: echo, shell, echo)",
    )
    checks = grade(registry, "tools_not_used", ["grep", "echo"], twice)
    assert [c.passed for c in checks] == [True, False]


def test_all_tools_succeeded_in_both_directions(registry: Registry) -> None:
    failed = run("done", calls=(ECHO, SHELL))
    fine = run("done", calls=(ECHO,))
    assert one(registry, "all_tools_succeeded", True, fine) == (
        True,
        "every call succeeded (1 call: echo)",
    )
    assert one(registry, "all_tools_succeeded", True, failed) == (
        False,
        "shell failed: unknown tool 'shell'",
    )
    assert one(registry, "all_tools_succeeded", False, failed)[0] is True
    assert one(registry, "all_tools_succeeded", False, fine)[0] is False
    assert one(registry, "all_tools_succeeded", True, run("done")) == (
        True,
        "every call succeeded (no tool was called)",
    )
    [check] = grade(registry, "all_tools_succeeded", False, fine)
    assert check.check == "all_tools_succeeded: false"
    grep = call("grep", "grep: no such file", ok=False)
    assert one(registry, "all_tools_succeeded", True, run("done", calls=(SHELL, ECHO, grep))) == (
        False,
        "shell failed: unknown tool 'shell'; grep failed: grep: no such file",
    )


def test_exact_equal_to_max_is_not_a_contradiction(registry: Registry, replay: RunMode) -> None:
    assert admit(registry, replay, exact_tool_calls=1, max_tool_calls=1) == [
        "exact_tool_calls",
        "max_tool_calls",
    ]


def test_exact_above_max_is_refused(registry: Registry, replay: RunMode) -> None:
    message = refusal(registry, replay, max_tool_calls=1, exact_tool_calls=2)
    assert message == f"{SOURCE}: expects.exact_tool_calls=2: contradicts max_tool_calls=1"


def test_min_equal_to_max_is_admitted_and_min_above_max_refused(
    registry: Registry, replay: RunMode
) -> None:
    assert admit(registry, replay, min_tool_calls=2, max_tool_calls=2) == [
        "min_tool_calls",
        "max_tool_calls",
    ]
    message = refusal(registry, replay, min_tool_calls=3, max_tool_calls=2)
    assert message == (
        f"{SOURCE}: expects.max_tool_calls=2: contradicts min_tool_calls=3, "
        "which needs at least 3 calls"
    )


def test_a_lower_bound_of_0_is_refused_and_of_1_admitted(
    registry: Registry, replay: RunMode
) -> None:
    assert refusal(registry, replay, min_tool_calls=0) == (
        f"{SOURCE}: expects.min_tool_calls=0: a lower bound of 0 asserts nothing"
    )
    assert admit(registry, replay, min_tool_calls=1) == ["min_tool_calls"]


@pytest.mark.parametrize(
    ("entries", "field", "needs"),
    [
        ({"tools_used": ["echo", "shell", "echo"]}, "tools_used", "2 calls"),
        ({"all_tools_succeeded": False}, "all_tools_succeeded=false", "1 call"),
        (
            {"tool_results_contain": [{"tool": "echo", "needle": "hi", "call_index": 2}]},
            "tool_results_contain echo[2]",
            "3 calls",
        ),
        (
            {"tool_arguments_contain": [{"tool": "echo", "needle": "hi"}]},
            "tool_arguments_contain echo[0]",
            "1 call",
        ),
        (
            {"min_tool_calls": 2, "tools_used": ["echo", "shell", "grep"]},
            "tools_used",
            "3 calls",
        ),
    ],
    ids=["tools-used-distinct", "a-failure", "call-index", "boundary", "the-largest-need"],
)
def test_an_upper_bound_below_what_other_entries_need_is_refused(
    registry: Registry, replay: RunMode, entries: dict[str, Any], field: str, needs: str
) -> None:
    count = int(needs.split()[0]) - 1
    for bound in ("max_tool_calls", "exact_tool_calls"):
        message = refusal(registry, replay, **entries, **{bound: count})
        assert message == (
            f"{SOURCE}: expects.{bound}={count}: contradicts {field}, which needs at least {needs}"
        )
        # One call more is just enough.
        assert bound in admit(registry, replay, **entries, **{bound: count + 1})


def test_all_tools_succeeded_true_needs_no_call(registry: Registry, replay: RunMode) -> None:
    assert admit(registry, replay, all_tools_succeeded=True, max_tool_calls=0) == [
        "all_tools_succeeded",
        "max_tool_calls",
    ]


def test_tools_not_used_contradicting_another_entry_is_refused(
    registry: Registry, replay: RunMode
) -> None:
    assert refusal(registry, replay, tools_used=["echo"], tools_not_used=["grep", "echo"]) == (
        f"{SOURCE}: expects.tools_not_used[1]=\"echo\": contradicts tools_used naming 'echo'"
    )
    boundary = [{"tool": "echo", "needle": "hi"}]
    assert refusal(registry, replay, tool_results_contain=boundary, tools_not_used=["echo"]) == (
        f'{SOURCE}: expects.tools_not_used[0]="echo": contradicts a dispatch-boundary entry '
        "naming 'echo'"
    )
    assert admit(registry, replay, tools_used=["echo"], tools_not_used=["shell"]) == [
        "tools_used",
        "tools_not_used",
    ]


# --- the dispatch boundary -----------------------------------------------------------------


TWO_ECHOES = run("done", calls=(call("echo", "first"), call("shell", "x"), call("echo", "second")))


@pytest.mark.parametrize(
    ("entry", "passes", "detail"),
    [
        ({"tool": "echo", "needle": "second"}, True, "found"),
        ({"tool": "echo", "needle": "first", "call_index": 0}, True, "found"),
        ({"tool": "echo", "needle": "second", "call_index": 1}, True, "found"),
        (
            {"tool": "echo", "needle": "first", "call_index": 1},
            False,
            'not found in the result: observed "second"',
        ),
        (
            {"tool": "echo", "needle": "x", "call_index": 2},
            False,
            "no call 2 to echo: observed 2 calls to it",
        ),
        (
            {"tool": "echo", "needle": "third"},
            False,
            'not found in the result: observed "first"; "second"',
        ),
        (
            {"tool": "grep", "needle": "x"},
            False,
            "grep was never called (calls: echo, shell, echo)",
        ),
    ],
    ids=["any-call", "index-0", "last-index", "other-call", "index-past-end", "none", "never"],
)
def test_tool_results_contain_at_the_edges(
    registry: Registry, entry: dict[str, Any], passes: bool, detail: str
) -> None:
    assert one(registry, "tool_results_contain", [entry], TWO_ECHOES) == (passes, detail)


def test_a_boundary_family_with_no_call_at_all(registry: Registry) -> None:
    entry = [{"tool": "echo", "needle": "x"}]
    assert one(registry, "tool_results_contain", entry, run("done")) == (
        False,
        "echo was never called (calls: none)",
    )
    indexed = [{"tool": "echo", "needle": "x", "call_index": 0}]
    assert one(registry, "tool_arguments_contain", indexed, run("done")) == (
        False,
        "no call 0 to echo: observed 0 calls to it",
    )


def test_tool_arguments_contain_reads_the_arguments_not_the_result(registry: Registry) -> None:
    record = run("done", calls=(RecordedCall(0, "c1", "echo", {"message": "héllo"}, "out", True),))
    entry = {"tool": "echo", "needle": '"message": "héllo"'}
    [check] = grade(registry, "tool_arguments_contain", [entry], record)
    assert (check.check, check.passed, check.detail) == (
        'tool_arguments_contain: echo "\\"message\\": \\"héllo\\""',
        True,
        "found",
    )
    assert one(registry, "tool_arguments_contain", [{"tool": "echo", "needle": "out"}], record) == (
        False,
        'not found in the arguments: observed "{\\"message\\": \\"héllo\\"}"',
    )
    checks = grade(
        registry,
        "tool_results_contain",
        [{"tool": "echo", "needle": "out", "call_index": 0}, {"tool": "echo", "needle": "zz"}],
        record,
    )
    assert [(c.check, c.passed) for c in checks] == [
        ('tool_results_contain: echo[0] "out"', True),
        ('tool_results_contain: echo "zz"', False),
    ]


@pytest.mark.parametrize(
    ("entries", "field"),
    [
        ({"response_contains": [""]}, 'response_contains[0]=""'),
        ({"response_not_contains": ["a", ""]}, 'response_not_contains[1]=""'),
        ({"response_matches": [""]}, 'response_matches[0]=""'),
        ({"tools_used": [""]}, 'tools_used[0]=""'),
        ({"tools_not_used": ["echo", ""]}, 'tools_not_used[1]=""'),
        (
            {"tool_results_contain": [{"tool": "", "needle": "x"}]},
            'tool_results_contain[0].tool=""',
        ),
        (
            {"tool_arguments_contain": [{"tool": "echo", "needle": ""}]},
            'tool_arguments_contain[0].needle=""',
        ),
    ],
    ids=lambda value: str(value)[:40],
)
def test_an_empty_needle_or_name_is_refused_by_the_family_s_own_type(
    registry: Registry, replay: RunMode, entries: dict[str, Any], field: str
) -> None:
    # The parameter type refuses it, before the family-wide empty-string rule.
    assert refusal(registry, replay, **entries) == f"{SOURCE}: expects.{field}: must not be empty"


@pytest.mark.parametrize(
    "entries",
    [
        {"max_tool_calls": -1},
        {"min_tool_calls": -1},
        {"exact_tool_calls": -1},
        {"tool_results_contain": [{"tool": "echo", "needle": "x", "call_index": -1}]},
        {"tool_arguments_contain": [{"tool": "echo", "needle": "x", "call_index": -1}]},
    ],
    ids=lambda value: next(iter(value)),
)
def test_a_negative_count_or_index_is_refused(
    registry: Registry, replay: RunMode, entries: dict[str, Any]
) -> None:
    [(family, value)] = entries.items()
    field = family if isinstance(value, int) else f"{family}[0].call_index"
    assert refusal(registry, replay, **entries) == (
        f"{SOURCE}: expects.{field}=-1: input should be greater than or equal to 0"
    )
