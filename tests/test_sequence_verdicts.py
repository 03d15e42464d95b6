"""Each decision of ``tool_sequence``, ``tool_call_status`` and the JSON comparison
they use, pinned at its edge: the bound that is just allowed and the one just
refused, the value that is just equal and the one that is not.

The families are admitted and graded in process against recorded runs (the CLI
path is covered by tests/test_sequence.py); what is asserted is the verdict, the
refusal and its field, and the detail whole.
"""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_eval import AdmissionError, RecordedCall, Registry, RunMode, RunRecord
from zeroclaw_eval.case.admission import admit_data
from zeroclaw_eval.util import jsonvalue
from zeroclaw_eval.util.jsonvalue import MISSING

from .conftest import echo_case

# Tools the admitted fixtures' script calls, so that expectations may name them.
SCRIPTED = ("echo", "search", "file_write")


def fixture(**expects: Any) -> dict[str, Any]:
    """A two-turn fixture whose first turn calls each scripted tool once (the second
    answers in text), with ``expects``: entries may name turn 0 or 1."""
    calls = [{"id": f"c{n}", "name": name, "arguments": {}} for n, name in enumerate(SCRIPTED)]
    case = echo_case(expects=expects)
    case["turns"][0]["steps"][0]["response"]["tool_calls"] = calls
    second = {"response": {"type": "text", "content": "Nothing more."}}
    case["turns"].append({"user_input": "And then?", "steps": [second]})
    return case


def refusal(registry: Registry, replay: RunMode, **expects: Any) -> tuple[str, str]:
    """The field and message of the refusal of a fixture with ``expects``."""
    with pytest.raises(AdmissionError) as refused:
        admit_data(fixture(**expects), registry, replay, source="case.json")
    return refused.value.field, refused.value.message


def graded(
    registry: Registry, replay: RunMode, calls: list[RecordedCall], **expects: Any
) -> list[tuple[bool, str]]:
    """The verdict and detail of each check of an admitted fixture over ``calls``."""
    case = admit_data(fixture(**expects), registry, replay, source="case.json")
    return [(c.passed, c.detail) for c in case.grade(RunRecord(responses=["ok"], calls=calls))]


def call(name: str, turn: int = 0, succeeded: bool = True, **arguments: Any) -> RecordedCall:
    return RecordedCall(turn, "c", name, arguments, "done" if succeeded else "boom", succeeded)


# --- JSON values ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        ([1, True], [1, 1], False),  # the second element decides, not the first
        ([True, 1], [True, True], False),
        ({"a": 1, "b": True}, {"a": 1, "b": 1}, False),
        ([{"a": True}], [{"a": 1}], False),
        ([1, [2, {"c": 3}]], [1.0, [2.0, {"c": 3.0}]], True),
        (True, True, True),
        (False, False, True),
        (None, None, True),
        (2, 2.0, True),
        ("", "", True),
    ],
)
def test_equal_tells_booleans_from_numbers_at_any_depth(
    expected: Any, actual: Any, same: bool
) -> None:
    assert jsonvalue.equal(expected, actual) is same
    assert jsonvalue.equal(actual, expected) is same


@pytest.mark.parametrize(
    ("expected", "actual", "contained"),
    [
        ({}, [], False),
        ({}, "x", False),
        ({"a": None}, {}, False),
        ({"a": None}, {"a": None}, True),
        ([], {}, False),
        ([], [], True),
        ([1], [1, 2], False),
        ([1, 2], [1], False),
        ([1, 2], [1, 3], False),
        ([1, 2], [1.0, 2], True),
        ([{"a": 1}], [{"a": 1, "b": 2}], True),
        ({"a": 1, "b": 2}, {"a": 1}, False),
        ({"a": 1, "b": 2}, {"b": 2}, False),
        (1, True, False),
    ],
)
def test_contains_requires_each_key_and_the_same_array_length(
    expected: Any, actual: Any, contained: bool
) -> None:
    assert jsonvalue.contains(expected, actual) is contained


@pytest.mark.parametrize(
    ("pointer", "tokens"),
    [
        ("", ()),
        ("/", ("",)),
        ("/a/b", ("a", "b")),
        ("/~01", ("~1",)),  # '~1' is undone before '~0', never the other way round
        ("/~10", ("/0",)),
        ("/a~1b/m~0n", ("a/b", "m~n")),
    ],
)
def test_a_pointer_parses_into_its_reference_tokens(pointer: str, tokens: tuple[str, ...]) -> None:
    assert jsonvalue.parse_pointer(pointer) == tokens


@pytest.mark.parametrize(
    ("pointer", "message"),
    [
        ("a", "'a' is not a JSON pointer: it must start with '/'"),
        ("/a~", "'/a~' is not a JSON pointer: '~' must be followed by 0 or 1 ('~0', '~1')"),
        ("/ok/~2", "'/ok/~2' is not a JSON pointer: '~' must be followed by 0 or 1 ('~0', '~1')"),
        ("/~~01", "'/~~01' is not a JSON pointer: '~' must be followed by 0 or 1 ('~0', '~1')"),
        ("/~0~", "'/~0~' is not a JSON pointer: '~' must be followed by 0 or 1 ('~0', '~1')"),
    ],
)
def test_a_malformed_pointer_is_refused_saying_why(pointer: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        jsonvalue.parse_pointer(pointer)
    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("document", "tokens", "value"),
    [
        ([10, 20], ("1",), 20),
        ([10, 20], ("0",), 10),
        ([10, 20], ("2",), MISSING),
        ([10, 20], ("01",), MISSING),
        ([10, 20], ("-1",), MISSING),
        ([10, 20], ("x",), MISSING),
        (list(range(11)), ("10",), 10),
        (["a"] * 2, ("\u0661",), MISSING),  # a digit, but not an ASCII one
        ({"a": None}, ("a",), None),
        ({"a": 1}, ("b",), MISSING),
        ({"a": 1}, ("b", "c"), MISSING),
        ({"a": 1}, ("a", "b"), MISSING),
        ({"a": {"b": [0, {"c": False}]}}, ("a", "b", "1", "c"), False),
        ({"a": 1}, (), {"a": 1}),
        ({"a": "xyz"}, ("a", "0"), MISSING),  # a string is not an array
        ({"a": 5}, ("a", "0"), MISSING),
    ],
)
def test_resolve_reaches_the_value_or_nothing(document: Any, tokens: Any, value: Any) -> None:
    assert jsonvalue.resolve(document, tokens) == value
    assert (jsonvalue.resolve(document, tokens) is MISSING) is (value is MISSING)


@pytest.mark.parametrize(
    ("document", "path", "value"),
    [
        ({"a": [1, 2]}, ("a", 1), 2),
        ({"a": [1, 2]}, ("a", 2), MISSING),
        ({"0": 1}, (0,), MISSING),
        ([1], ("0",), MISSING),
        ({"a": None}, ("a",), None),
        ({}, ("a", "b"), MISSING),
        ({"a": 1}, ("b",), MISSING),
        (3, ("a",), MISSING),
        ({"a": "xyz"}, ("a", 0), MISSING),
        ({"a": 5}, ("a", 0), MISSING),
    ],
)
def test_follow_reads_keys_of_objects_and_indexes_of_arrays_only(
    document: Any, path: Any, value: Any
) -> None:
    assert (jsonvalue.follow(document, path) is MISSING) is (value is MISSING)
    assert jsonvalue.follow(document, path) == value


def test_literal_leaves_lists_every_literal_scalar_with_its_path() -> None:
    from zeroclaw_eval.util import jsonmatch

    value = {"a": [1, {"b": None}], "c": {}, "d": "x", "e": {"$regex": "x"}}
    pattern = jsonmatch.ignoring(jsonmatch.compile_pattern(value), ("f",))
    assert list(jsonmatch.literal_leaves(pattern)) == [
        (("a", 0), 1),
        (("a", 1, "b"), None),
        (("d",), "x"),
    ]
    assert list(jsonmatch.literal_leaves(5)) == [((), 5)]


def test_scalar_keys_are_equal_exactly_when_the_scalars_are() -> None:
    assert jsonvalue.scalar_key(1) == jsonvalue.scalar_key(1.0)
    assert jsonvalue.scalar_key(True) != jsonvalue.scalar_key(1)
    assert jsonvalue.scalar_key(False) != jsonvalue.scalar_key(0)
    assert jsonvalue.scalar_key(None) is not None
    assert jsonvalue.scalar_key("") is not None
    for composite in ({}, [], {"a": 1}, [1], MISSING):
        assert jsonvalue.scalar_key(composite) is None


# --- tool_call_status -------------------------------------------------------------


def status(tool: str = "echo", state: str = "succeeded", **entry: Any) -> list[dict[str, Any]]:
    return [{"tool": tool, "status": state, **entry}]


def test_every_call_succeeding_passes_and_says_how_many(
    registry: Registry, replay: RunMode
) -> None:
    run = [call("echo"), call("search", succeeded=False), call("echo")]
    assert graded(registry, replay, run, tool_call_status=status()) == [
        (True, "every call to echo succeeded (2 calls)")
    ]
    assert graded(registry, replay, run, tool_call_status=status("search", "failed")) == [
        (True, "every call to search failed (1 call)")
    ]


def test_one_call_with_the_other_status_fails_naming_it(
    registry: Registry, replay: RunMode
) -> None:
    run = [call("echo"), call("echo", turn=1, succeeded=False)]
    assert graded(registry, replay, run, tool_call_status=status()) == [
        (False, 'echo[1] (turn 1, call 1) failed: "boom"')
    ]
    assert graded(registry, replay, run, tool_call_status=status(state="failed")) == [
        (False, 'echo[0] (turn 0, call 0) succeeded: "done"')
    ]


def test_every_call_with_the_other_status_is_named(registry: Registry, replay: RunMode) -> None:
    run = [call("echo", succeeded=False), call("search"), call("echo", succeeded=False)]
    assert graded(registry, replay, run, tool_call_status=status()) == [
        (
            False,
            'echo[0] (turn 0, call 0) failed: "boom"; echo[1] (turn 0, call 2) failed: "boom"',
        )
    ]


def test_call_index_looks_at_that_call_alone(registry: Registry, replay: RunMode) -> None:
    run = [call("echo"), call("search"), call("echo", succeeded=False)]
    assert graded(registry, replay, run, tool_call_status=status(state="failed", call_index=1)) == [
        (True, "echo[1] failed")
    ]
    assert graded(registry, replay, run, tool_call_status=status(call_index=0)) == [
        (True, "echo[0] succeeded")
    ]
    assert graded(registry, replay, run, tool_call_status=status(call_index=1)) == [
        (False, 'echo[1] (turn 0, call 2) failed: "boom"')
    ]
    assert graded(registry, replay, run, tool_call_status=status(call_index=2)) == [
        (False, "no call 2 to echo: observed 2 calls to it")
    ]


def test_a_tool_never_called_fails_whatever_the_status(registry: Registry, replay: RunMode) -> None:
    assert graded(registry, replay, [], tool_call_status=status(state="failed")) == [
        (False, "echo was never called (calls: none)")
    ]
    assert graded(registry, replay, [call("search")], tool_call_status=status()) == [
        (False, "echo was never called (calls: search)")
    ]
    run = [call("search"), call("file_write")]
    assert graded(registry, replay, run, tool_call_status=status()) == [
        (False, "echo was never called (calls: search, file_write)")
    ]


@pytest.mark.parametrize("bound", ["max_tool_calls", "exact_tool_calls"])
def test_call_status_needs_no_more_calls_than_the_bound_allows(
    registry: Registry, replay: RunMode, bound: str
) -> None:
    admit_data(
        fixture(tool_call_status=status(call_index=2), **{bound: 3}), registry, replay, source="c"
    )
    admit_data(fixture(tool_call_status=status(), **{bound: 1}), registry, replay, source="c")
    assert refusal(registry, replay, tool_call_status=status(call_index=3), **{bound: 3}) == (
        "expects.tool_call_status[0]",
        f"needs at least 4 calls to echo, more than {bound}=3 allows",
    )


def test_call_status_contradictions_are_refused_only_when_they_contradict(
    registry: Registry, replay: RunMode
) -> None:
    for admitted in (
        {"tool_call_status": status(state="failed"), "all_tools_succeeded": False},
        {"tool_call_status": status(), "all_tools_succeeded": True},
        {"tool_call_status": status(), "tools_not_used": ["search"]},
    ):
        admit_data(fixture(**admitted), registry, replay, source="c")
    assert refusal(
        registry, replay, tool_call_status=status(state="failed"), all_tools_succeeded=True
    ) == ('expects.tool_call_status[0].status="failed"', "contradicts all_tools_succeeded=true")
    assert refusal(registry, replay, tool_call_status=status(), tools_not_used=["echo"]) == (
        'expects.tool_call_status[0].tool="echo"',
        "contradicts tools_not_used naming 'echo'",
    )


# --- tool_sequence: admission -------------------------------------------------------

ECHO = {"tool": "echo"}
MAYBE = {"tool": "echo", "optional": True}


def seq(mode: str, *steps: dict[str, Any], **entry: Any) -> list[dict[str, Any]]:
    return [{"mode": mode, "steps": list(steps), **entry}]


@pytest.mark.parametrize("bound", ["max_tool_calls", "exact_tool_calls"])
def test_required_steps_may_use_every_call_the_bound_allows(
    registry: Registry, replay: RunMode, bound: str
) -> None:
    sequence = seq("calls_only_among", ECHO, {"tool": "search"}, MAYBE)
    admit_data(fixture(tool_sequence=sequence, **{bound: 2}), registry, replay, source="c")
    assert refusal(registry, replay, tool_sequence=sequence, **{bound: 1}) == (
        "expects.tool_sequence[0].steps",
        f"needs at least 2 calls (one per required step), more than {bound}=1 allows",
    )


@pytest.mark.parametrize("mode", ["exact", "unordered", "calls_only_among"])
@pytest.mark.parametrize("bound", ["exact_tool_calls", "min_tool_calls"])
def test_a_closed_mode_may_demand_as_many_calls_as_it_has_steps(
    registry: Registry, replay: RunMode, mode: str, bound: str
) -> None:
    sequence = seq(mode, ECHO, {"tool": "search"})
    admit_data(fixture(tool_sequence=sequence, **{bound: 2}), registry, replay, source="c")
    assert refusal(registry, replay, tool_sequence=sequence, **{bound: 3}) == (
        "expects.tool_sequence[0].steps",
        f"pairs at most 2 calls and {mode} allows no other call, fewer than {bound}=3 demands",
    )


def test_more_calls_than_steps_may_be_demanded_of_an_open_mode_or_one_turn(
    registry: Registry, replay: RunMode
) -> None:
    for sequence in (
        seq("in_order", ECHO),
        seq("calls_include", ECHO),
        seq("exact", ECHO, turn=0),
        seq("calls_only_among", ECHO, turn=0),
    ):
        for bound in ("exact_tool_calls", "min_tool_calls"):
            expects = {"tool_sequence": sequence, bound: 3}
            admit_data(fixture(**expects), registry, replay, source="c")


def test_every_step_optional_is_refused_saying_why(registry: Registry, replay: RunMode) -> None:
    assert refusal(registry, replay, tool_sequence=seq("exact", MAYBE)) == (
        "expects.tool_sequence[0].steps",
        "every step is optional: a run that calls no tool passes; make at least one step required",
    )
    assert refusal(registry, replay, tool_sequence=seq("calls_only_among", MAYBE, MAYBE)) == (
        "expects.tool_sequence[0].steps",
        "every step is optional: calls_only_among is then satisfied by a run that calls no "
        "tool, and nothing else in the case needs a call; make a step required, or add a "
        "floor (min_tool_calls, exact_tool_calls, tools_used, a tool_call_counts min, a "
        "required step of another entry)",
    )


def test_an_optional_step_that_cannot_matter_is_refused_at_the_first(
    registry: Registry, replay: RunMode
) -> None:
    for mode in ("in_order", "calls_include"):
        assert refusal(registry, replay, tool_sequence=seq(mode, MAYBE, ECHO, MAYBE)) == (
            "expects.tool_sequence[0].steps[0].optional=true",
            f"has no effect: {mode} allows calls that pair with no step, so an optional "
            "step can never change the verdict",
        )
    assert refusal(registry, replay, tool_sequence=seq("unordered", ECHO, MAYBE)) == (
        "expects.tool_sequence[0].steps[1].optional=true",
        "unordered means the same multiset of calls as the steps; for steps that may go "
        "unused, use calls_only_among",
    )


def test_only_a_required_step_naming_a_banned_tool_contradicts_it(
    registry: Registry, replay: RunMode
) -> None:
    for sequence in (
        seq("exact", {"tool": "search"}, MAYBE),
        seq("in_order", {"tool": "ech*"}),
        seq("in_order", {"tool": "search"}),
    ):
        admit_data(
            fixture(tool_sequence=sequence, tools_not_used=["echo"]), registry, replay, source="c"
        )
    assert refusal(
        registry,
        replay,
        tool_sequence=seq("exact", {"tool": "search"}, ECHO),
        tools_not_used=["echo"],
    ) == (
        'expects.tool_sequence[0].steps[1].tool="echo"',
        "contradicts tools_not_used naming 'echo'",
    )


HELLO = {"tool": "echo", "arguments": {"message": "hello"}}


@pytest.mark.parametrize(
    ("step", "field", "message"),
    [
        (
            {**HELLO, "match": "ignore"},
            'steps[0].match="ignore"',
            "ignores the arguments given beside it: drop them, or say how to compare them "
            "(exact, partial, paths)",
        ),
        (
            {"tool": "echo", "match": "exact"},
            'steps[0].match="exact"',
            "'exact' needs the expected arguments",
        ),
        (
            {"tool": "echo", "match": "paths", "paths": ["/a"]},
            'steps[0].match="paths"',
            "'paths' needs the expected arguments",
        ),
        (
            {**HELLO, "match": "partial", "paths": ["/message"]},
            "steps[0].paths",
            'paths apply only with match "paths"',
        ),
        ({**HELLO, "paths": ["/message"]}, "steps[0].paths", 'paths apply only with match "paths"'),
        (
            {**HELLO, "match": "paths"},
            'steps[0].match="paths"',
            "'paths' needs paths: the JSON pointers whose values must match",
        ),
        (
            {**HELLO, "match": "paths", "paths": ["/message", "/x"]},
            'steps[0].paths[1]="/x"',
            "points at nothing in the step's arguments",
        ),
        (
            {**HELLO, "match": "paths", "paths": ["m", "/x"]},
            'steps[0].paths[0]="m"',
            "'m' is not a JSON pointer: it must start with '/'",
        ),
        (
            {**HELLO, "match": "paths", "paths": ["/message", "m"]},
            'steps[0].paths[1]="m"',
            "'m' is not a JSON pointer: it must start with '/'",
        ),
    ],
)
def test_a_step_whose_arguments_cannot_be_compared_is_refused(
    registry: Registry, replay: RunMode, step: dict[str, Any], field: str, message: str
) -> None:
    assert refusal(registry, replay, tool_sequence=seq("in_order", step)) == (
        f"expects.tool_sequence[0].{field}",
        message,
    )


@pytest.mark.parametrize(
    "step",
    [
        {"tool": "echo", "match": "ignore"},
        {**HELLO, "match": "exact"},
        {**HELLO, "match": "partial"},
        {**HELLO, "match": "paths", "paths": ["/message"]},
        {"tool": "echo", "arguments": {"": {"a/b": [1]}}, "match": "paths", "paths": ["//a~1b/0"]},
    ],
)
def test_a_step_whose_arguments_can_be_compared_is_admitted(
    registry: Registry, replay: RunMode, step: dict[str, Any]
) -> None:
    admit_data(fixture(tool_sequence=seq("in_order", step)), registry, replay, source="c")


# --- tool_sequence: grading -----------------------------------------------------------

SEARCH = {"tool": "search"}


def said(message: str) -> dict[str, Any]:
    return {"tool": "echo", "arguments": {"message": message}}


def echoes(count: int) -> list[RecordedCall]:
    return [call("echo", message=str(n)) for n in range(count)]


# id -> (calls, entry, verdict, detail)
VERDICTS: dict[str, tuple[list[RecordedCall], list[dict[str, Any]], bool, str]] = {
    "more_unpaired_steps_than_are_listed": (
        [],
        seq("in_order", *[ECHO] * 7),
        False,
        (
            "step 0 echo: no call paired (no call to echo; no call); "
            "step 1 echo: no call paired (no call to echo; no call); "
            "step 2 echo: no call paired (no call to echo; no call); "
            "step 3 echo: no call paired (no call to echo; no call); "
            "step 4 echo: no call paired (no call to echo; no call); "
            "... and 2 more steps with no call; no step paired; no call"
        ),
    ),
    "more_extra_calls_than_are_listed": (
        echoes(8),
        seq("exact", said("0")),
        False,
        (
            "extra call echo[1] (turn 0, call 1) pairs with no step (exact allows no other call); "
            "extra call echo[2] (turn 0, call 2) pairs with no step (exact allows no other call); "
            "extra call echo[3] (turn 0, call 3) pairs with no step (exact allows no other call); "
            "extra call echo[4] (turn 0, call 4) pairs with no step (exact allows no other call); "
            "extra call echo[5] (turn 0, call 5) pairs with no step (exact allows no other call); "
            "... and 2 more extra calls; paired: step 0 echo -> echo[0] (turn 0, call 0)"
        ),
    ),
    "more_pairs_than_are_listed": (
        echoes(10),
        seq("exact", *[ECHO] * 10),
        True,
        (
            "paired: step 0 echo -> echo[0] (turn 0, call 0), step 1 echo -> echo[1] (turn 0, "
            "call 1), step 2 echo -> echo[2] (turn 0, call 2), step 3 echo -> echo[3] (turn 0, "
            "call 3), step 4 echo -> echo[4] (turn 0, call 4), step 5 echo -> echo[5] (turn 0, "
            "call 5), step 6 echo -> echo[6] (turn 0, call 6), step 7 echo -> echo[7] (turn 0, "
            "call 7), ... and 2 more"
        ),
    ),
    "turn_looks_at_that_turn_alone": (
        [call("echo", 0, message="a"), call("echo", 1, message="b")],
        seq("exact", said("b"), turn=1),
        True,
        "paired: step 0 echo -> echo[1] (turn 1, call 1)",
    ),
    "turn_hides_the_other_turns": (
        [call("echo", 0, message="a"), call("echo", 1, message="b")],
        seq("exact", said("a"), turn=1),
        False,
        (
            "step 0 echo: no call paired (nearest: echo[1] (turn 1, call 1), "
            'arguments differ: /message: expected "a", got "b"); extra call echo[1] (turn 1, '
            "call 1) pairs with no step (exact allows no other call); no step paired; "
            "1 call in turn 1: echo"
        ),
    ),
    "unordered_pairs_in_any_order": (
        [call("search"), call("echo")],
        seq("unordered", ECHO, SEARCH),
        True,
        (
            "paired: step 0 echo -> echo[0] (turn 0, call 1), step 1 search -> search[0] (turn 0, "
            "call 0)"
        ),
    ),
    "exact_keeps_the_order": (
        [call("search"), call("echo")],
        seq("exact", ECHO, SEARCH),
        False,
        (
            "step 1 search: no call paired (search[0] (turn 0, call 0) matches, "
            "but it is out of order with the steps paired around it); "
            "extra call search[0] (turn 0, "
            "call 0) pairs with no step (exact allows no other call); "
            "paired: step 0 echo -> echo[0] (turn 0, call 1)"
        ),
    ),
    "calls_include_allows_other_calls": (
        [call("search"), call("echo"), call("file_write")],
        seq("calls_include", ECHO, SEARCH),
        True,
        (
            "paired: step 0 echo -> echo[0] (turn 0, call 1), step 1 search -> search[0] (turn 0, "
            "call 0)"
        ),
    ),
    "calls_only_among_allows_no_other_call": (
        [call("search"), call("echo"), call("file_write")],
        seq("calls_only_among", ECHO, SEARCH),
        False,
        (
            "extra call file_write[0] (turn 0, "
            "call 2) pairs with no step (calls_only_among allows no other call); "
            "paired: step 0 echo -> echo[0] (turn 0, call 1), step 1 search -> search[0] (turn 0, "
            "call 0)"
        ),
    ),
    "calls_only_among_leaves_an_optional_step_unpaired": (
        [call("search"), call("echo")],
        seq("calls_only_among", ECHO, SEARCH, {"tool": "file_write", "optional": True}),
        True,
        (
            "paired: step 0 echo -> echo[0] (turn 0, call 1), step 1 search -> search[0] (turn 0, "
            "call 0)"
        ),
    ),
    "a_pattern_step_pairs_with_each_fitting_name": (
        [call("file_write"), call("file_read")],
        seq("exact", {"tool": "file_*"}, {"tool": "file_*"}),
        True,
        (
            "paired: step 0 file_* -> file_write[0] (turn 0, call 0), "
            "step 1 file_* -> file_read[0] (turn 0, call 1)"
        ),
    ),
}


@pytest.mark.parametrize(
    ("calls", "sequence", "verdict", "detail"), VERDICTS.values(), ids=VERDICTS.keys()
)
def test_each_mode_decides_and_shows_its_pairing(
    registry: Registry,
    replay: RunMode,
    calls: list[RecordedCall],
    sequence: list[dict[str, Any]],
    verdict: bool,
    detail: str,
) -> None:
    assert graded(registry, replay, calls, tool_sequence=sequence) == [(verdict, detail)]


def test_a_name_pattern_stands_for_any_run_of_characters() -> None:
    from zeroclaw_eval.builtin.sequence import name_matcher

    assert name_matcher("file_*")("file_read\nfile_write")
    assert name_matcher("*")("")
    assert not name_matcher("file_*")("a_file_read")
    assert name_matcher("echo")("echo")
    assert not name_matcher("echo")("echo2")
    assert not name_matcher("e.ho")("echo")


# --- what an editor is shown ------------------------------------------------------


def test_the_schema_shows_each_field_its_constraint_default_and_description(
    registry: Registry,
) -> None:
    from zeroclaw_eval.case.schema import fixture_schema

    schema = fixture_schema(registry)
    families = schema["properties"]["expects"]["properties"]
    assert {name: families[name] for name in FAMILIES} == FAMILIES
    assert {name: schema["$defs"][name] for name in DEFINITIONS} == DEFINITIONS


FAMILIES = {
    "tool_sequence": {
        "type": "array",
        "items": {"$ref": "#/$defs/SequenceEntry"},
        "description": (
            "the calls follow the steps: in_order, exact, unordered, calls_include or "
            "calls_only_among, arguments compared as JSON, pairing optimal [plugin: sequence]"
        ),
    },
    "tool_call_status": {
        "type": "array",
        "items": {"$ref": "#/$defs/StatusEntry"},
        "description": (
            "every call to the tool (at least one), or the call at call_index, succeeded or failed "
            "[plugin: callstatus]"
        ),
    },
}

DEFINITIONS = {
    "SequenceEntry": {
        "additionalProperties": False,
        "description": "Expected steps and the mode that says what else the calls may do.",
        "properties": {
            "mode": {
                "description": (
                    "in_order (gaps allowed), exact (every call, in order, nothing else), "
                    "unordered (the same multiset of calls), calls_include (the calls include "
                    "these), calls_only_among (the calls are only among these)"
                ),
                "enum": ["in_order", "exact", "unordered", "calls_include", "calls_only_among"],
                "title": "Mode",
                "type": "string",
            },
            "steps": {
                "items": {"$ref": "#/$defs/SequenceStep"},
                "minItems": 1,
                "title": "Steps",
                "type": "array",
            },
            "turn": {
                "minimum": 0,
                "type": ["integer", "null"],
                "default": None,
                "description": "only the calls of this turn (0-based); the whole case without it",
                "title": "Turn",
            },
        },
        "required": ["mode", "steps"],
        "title": "SequenceEntry",
        "type": "object",
    },
    "SequenceStep": {
        "additionalProperties": False,
        "description": "One expected call.",
        "properties": {
            "tool": {
                "description": "the tool's name; '*' stands for any run of characters (read_*)",
                "minLength": 1,
                "title": "Tool",
                "type": "string",
            },
            "arguments": {
                "additionalProperties": True,
                "type": ["object", "null"],
                "default": None,
                "description": (
                    "the expected arguments, compared as decoded JSON; a value may be a matcher: "
                    '{"$regex": ...}, {"$contains": ...}, {"$icase": ...}, {"$approx": n, '
                    '"$tol": t}, {"$one_of": [...]}, {"$type": ...}, {"$gt": n} ($gte, $lt, '
                    '$lte), {"$literal": value}'
                ),
                "title": "Arguments",
            },
            "match": {
                "anyOf": [
                    {"enum": ["exact", "partial", "subset", "ignore", "paths"], "type": "string"},
                    {"type": "null"},
                ],
                "default": None,
                "description": (
                    "how the arguments are compared: exact (the default with arguments), partial "
                    "(the call may have more keys; recursive; arrays element by element), subset "
                    "(the call may omit keys the step has), ignore (the default without), paths "
                    "(only the values at the JSON pointers of paths)"
                ),
                "title": "Match",
            },
            "paths": {
                "items": {"minLength": 1, "type": "string"},
                "minItems": 1,
                "type": ["array", "null"],
                "default": None,
                "description": 'with match "paths": JSON pointers (RFC 6901) into arguments',
                "title": "Paths",
            },
            "ignore": {
                "items": {"minLength": 1, "type": "string"},
                "minItems": 1,
                "type": ["array", "null"],
                "default": None,
                "description": (
                    "with match exact: JSON pointers (RFC 6901) to keys of the call's arguments "
                    "whose value, or absence, does not matter (a request id, a timestamp)"
                ),
                "title": "Ignore",
            },
            "optional": {
                "default": False,
                "description": "the step may pair with no call (exact and calls_only_among)",
                "title": "Optional",
                "type": "boolean",
            },
            "batch": {
                "default": None,
                "description": (
                    "steps with the same batch number (next to each other, in in_order or "
                    "exact) pair with calls the model asked for in one reply, in any order "
                    "among them; the batch keeps its place among the other steps"
                ),
                "minimum": 0,
                "title": "Batch",
                "type": ["integer", "null"],
            },
        },
        "required": ["tool"],
        "title": "SequenceStep",
        "type": "object",
    },
    "StatusEntry": {
        "additionalProperties": False,
        "description": (
            "The calls to ``tool`` (or the one at ``call_index``) ended with ``status``."
        ),
        "properties": {
            "tool": {"minLength": 1, "title": "Tool", "type": "string"},
            "status": {"enum": ["succeeded", "failed"], "title": "Status", "type": "string"},
            "call_index": {
                "minimum": 0,
                "type": ["integer", "null"],
                "default": None,
                "title": "Call Index",
            },
        },
        "required": ["tool", "status"],
        "title": "StatusEntry",
        "type": "object",
    },
}


def test_as_many_problems_as_are_listed_need_no_count(registry: Registry, replay: RunMode) -> None:
    ((passed, detail),) = graded(registry, replay, [], tool_sequence=seq("in_order", *[ECHO] * 5))
    assert not passed
    assert detail.count("no call paired") == 5
    assert "more" not in detail
    ((passed, detail),) = graded(registry, replay, echoes(6), tool_sequence=seq("exact", said("0")))
    assert not passed
    assert detail.count("pairs with no step") == 5
    assert "more" not in detail


def test_a_step_without_arguments_takes_any_of_many_calls(
    registry: Registry, replay: RunMode
) -> None:
    # Sixteen calls of one name are indexed by argument; a step that names no
    # arguments must not be looked up in that index.
    ((passed, detail),) = graded(registry, replay, echoes(16), tool_sequence=seq("in_order", ECHO))
    assert passed, detail
    assert detail == "paired: step 0 echo -> echo[0] (turn 0, call 0)"


def test_among_many_calls_only_the_compared_paths_are_looked_up(
    registry: Registry, replay: RunMode
) -> None:
    # Indexed by argument value, the calls must be looked up under a value at one
    # of the step's paths: /a is given but not compared, and no call matches it.
    run = [call("echo", a=0, b=n) for n in range(16)]
    step = {"tool": "echo", "arguments": {"a": 1, "b": 7}, "match": "paths", "paths": ["/b"]}
    ((passed, detail),) = graded(registry, replay, run, tool_sequence=seq("calls_include", step))
    assert passed, detail
    assert detail == "paired: step 0 echo -> echo[7] (turn 0, call 7)"


def test_among_many_calls_a_path_to_an_object_is_compared_in_full(
    registry: Registry, replay: RunMode
) -> None:
    # An object has no single value to look calls up under: every call is compared.
    run = [call("echo", o={"k": n}) for n in range(16)]
    step = {"tool": "echo", "arguments": {"o": {"k": 3}}, "match": "paths", "paths": ["/o"]}
    ((passed, detail),) = graded(registry, replay, run, tool_sequence=seq("calls_include", step))
    assert passed, detail
    assert detail == "paired: step 0 echo -> echo[3] (turn 0, call 3)"


def test_every_path_of_a_step_must_match(registry: Registry, replay: RunMode) -> None:
    step = {"tool": "echo", "arguments": {"a": 1, "b": 2}, "match": "paths", "paths": ["/a", "/b"]}
    ((passed, detail),) = graded(
        registry, replay, [call("echo", a=1, b=3)], tool_sequence=seq("calls_include", step)
    )
    assert not passed
    assert detail.startswith("step 0 echo: no call paired (nearest: echo[0] (turn 0, call 0), ")


def test_a_status_naming_a_tool_never_offered_is_refused_at_its_tool(
    registry: Registry, replay: RunMode
) -> None:
    from zeroclaw_eval.case.offer import check_offer

    case = admit_data(fixture(tool_call_status=status("grep")), registry, replay, source="c")
    with pytest.raises(AdmissionError) as refused:
        check_offer(case, frozenset({"echo"}), ["echo"])
    assert refused.value.field == 'expects.tool_call_status[0].tool="grep"'
    assert refused.value.message.startswith("names no tool the agent is offered (echo)")
