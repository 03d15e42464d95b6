"""``tool_sequence`` and ``tool_call_status``: each mode and argument mode fails
where it should, and the failure shows the alignment.

The failing cases are real fixtures, replayed by a real ``zeroclaw eval run``
(one process for the lot); the passing ones ship in ``evals/regression``. Each
failing case is one edit away from a pass: the detail must say which step found
no call, the nearest call and how its arguments differ, or which call no step
accounts for.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zeroclaw_eval.util import jsonmatch, jsonvalue

from .cli_process import json_report
from .conftest import PROJECT, zeroclaw

Call = tuple[str, dict[str, Any]]


def case(name: str, turns: list[list[list[Call]]], expects: dict[str, Any]) -> dict[str, Any]:
    """A fixture whose turns dispatch the given batches of calls, then answer ``ok``."""
    scripted = []
    number = 0
    for t, batches in enumerate(turns):
        steps = []
        for batch in batches:
            tool_calls = []
            for tool, arguments in batch:
                number += 1
                tool_calls.append({"id": f"c{number}", "name": tool, "arguments": arguments})
            steps.append({"response": {"type": "tool_calls", "tool_calls": tool_calls}})
        steps.append({"response": {"type": "text", "content": "ok"}})
        scripted.append({"user_input": f"turn {t}", "steps": steps})
    return {"model_name": name, "turns": scripted, "expects": expects}


def echo(message: str, **more: Any) -> Call:
    return ("echo", {"message": message, **more})


def sequence(mode: str, *steps: dict[str, Any], **entry: Any) -> dict[str, Any]:
    return {"tool_sequence": [{"mode": mode, "steps": list(steps), **entry}]}


def step(tool: str = "echo", **fields: Any) -> dict[str, Any]:
    return {"tool": tool, **fields}


def said(message: str, **fields: Any) -> dict[str, Any]:
    return step(arguments={"message": message}, **fields)


# id -> (turns, expects, the failing check, its detail)
FAILING: dict[str, tuple[list[list[list[Call]]], dict[str, Any], str, str]] = {
    "in_order_out_of_order": (
        [[[echo("a"), echo("b")]]],
        sequence("in_order", said("b"), said("a")),
        "tool_sequence: in_order echo -> echo",
        "step 1 echo: no call paired (echo[0] (turn 0, call 0) matches, but it is out of "
        "order with the steps paired around it); paired: step 0 echo -> echo[1] (turn 0, call 1)",
    ),
    "exact_extra_call": (
        [[[echo("a"), echo("b"), echo("c")]]],
        sequence("exact", said("a"), said("c")),
        "tool_sequence: exact echo -> echo",
        "extra call echo[1] (turn 0, call 1) pairs with no step (exact allows no other call); "
        "paired: step 0 echo -> echo[0] (turn 0, call 0), step 1 echo -> echo[2] (turn 0, call 2)",
    ),
    "exact_optional_step_does_not_excuse_a_different_call": (
        [[[echo("a"), echo("x"), echo("c")]]],
        sequence("exact", said("a"), said("b", optional=True), said("c")),
        "tool_sequence: exact echo -> echo? -> echo",
        "extra call echo[1] (turn 0, call 1) pairs with no step (exact allows no other call); "
        "paired: step 0 echo -> echo[0] (turn 0, call 0), step 2 echo -> echo[2] (turn 0, call 2)",
    ),
    "unordered_different_multiset": (
        [[[echo("a"), echo("a")]]],
        sequence("unordered", said("a"), said("b")),
        "tool_sequence: unordered echo, echo",
        "step 1 echo: no call paired (nearest: echo[1] (turn 0, call 1), arguments differ: "
        '/message: expected "b", got "a"); extra call echo[1] (turn 0, call 1) pairs with no '
        "step (unordered allows no other call); paired: step 0 echo -> echo[0] (turn 0, call 0)",
    ),
    "calls_include_missing_call": (
        [[[echo("a"), ("search", {"query": {"q": "dogs", "limit": 5}})]]],
        sequence(
            "calls_include", step("search", arguments={"query": {"q": "cats"}}, match="partial")
        ),
        "tool_sequence: calls_include search",
        "step 0 search: no call paired (nearest: search[0] (turn 0, call 1), arguments differ: "
        '/query/q: expected "cats", got "dogs"); no step paired; 2 calls: echo, search',
    ),
    "calls_only_among_call_outside": (
        [[[echo("a"), ("shell", {"cmd": "ls"})]]],
        sequence("calls_only_among", step(), step(optional=True)),
        "tool_sequence: calls_only_among echo, echo?",
        "extra call shell[0] (turn 0, call 1) pairs with no step (calls_only_among allows no "
        "other call); paired: step 0 echo -> echo[0] (turn 0, call 0)",
    ),
    "calls_only_among_one_step_one_call": (
        [[[echo("a"), echo("b")]]],
        sequence("calls_only_among", step()),
        "tool_sequence: calls_only_among echo",
        "extra call echo[1] (turn 0, call 1) pairs with no step (calls_only_among allows no "
        "other call); paired: step 0 echo -> echo[0] (turn 0, call 0)",
    ),
    "turn_scope": (
        [[[echo("a")]], [[("search", {"q": "a"})]]],
        sequence("in_order", said("a"), turn=1),
        "tool_sequence: in_order echo in turn 1",
        "step 0 echo: no call paired (no call to echo; 1 call in turn 1: search); "
        "no step paired; 1 call in turn 1: search",
    ),
    "arguments_exact_extra_key": (
        [[[echo("a", n=1)]]],
        sequence("in_order", said("a")),
        "tool_sequence: in_order echo",
        "step 0 echo: no call paired (nearest: echo[0] (turn 0, call 0), arguments differ: "
        "/n: not expected (got 1)); no step paired; 1 call: echo",
    ),
    "arguments_exact_true_is_not_1": (
        [[[echo("a", flag=1)]]],
        sequence("in_order", step(arguments={"message": "a", "flag": True})),
        "tool_sequence: in_order echo",
        "step 0 echo: no call paired (nearest: echo[0] (turn 0, call 0), arguments differ: "
        "/flag: expected true, got 1); no step paired; 1 call: echo",
    ),
    "arguments_partial_recurses_into_arrays": (
        [[[echo("a", meta={"k": [1, 3], "x": 0})]]],
        sequence("in_order", step(arguments={"meta": {"k": [1, 2]}}, match="partial")),
        "tool_sequence: in_order echo",
        "step 0 echo: no call paired (nearest: echo[0] (turn 0, call 0), arguments differ: "
        "/meta/k/1: expected 2, got 3); no step paired; 1 call: echo",
    ),
    "arguments_paths_compare_decoded_values": (
        [[[echo("a", opts={"limit": "10"})]]],
        sequence(
            "in_order",
            step(arguments={"opts": {"limit": 10}}, match="paths", paths=["/opts/limit"]),
        ),
        "tool_sequence: in_order echo",
        "step 0 echo: no call paired (nearest: echo[0] (turn 0, call 0), arguments differ: "
        '/opts/limit: expected 10, got "10"); no step paired; 1 call: echo',
    ),
    "pattern_fits_a_call_with_other_arguments": (
        [[[echo("a"), ("file_write", {"path": "x"})]]],
        sequence("calls_include", step("file_*", arguments={"path": "y"})),
        "tool_sequence: calls_include file_*",
        "step 0 file_*: no call paired (nearest: file_write[0] (turn 0, call 1), arguments "
        'differ: /path: expected "y", got "x"); no step paired; 2 calls: echo, file_write',
    ),
    "matcher_regex_miss": (
        [[[echo("Paris")]]],
        sequence("in_order", step(arguments={"message": {"$regex": "^San"}})),
        "tool_sequence: in_order echo",
        "step 0 echo: no call paired (nearest: echo[0] (turn 0, call 0), arguments differ: "
        '/message: expected a string matching /^San/, got "Paris"); no step paired; 1 call: echo',
    ),
    "matcher_one_of_and_tolerance_miss": (
        [[[echo("LA", n=3.2), echo("SF", n=3.3)]]],
        sequence(
            "calls_include",
            step(
                arguments={
                    "message": {"$one_of": ["SF", "San Francisco"]},
                    "n": {"$approx": 3.14, "$tol": 0.01},
                }
            ),
        ),
        "tool_sequence: calls_include echo",
        "step 0 echo: no call paired (nearest: echo[1] (turn 0, call 1), arguments differ: "
        "/n: expected 3.14 ± 0.01, got 3.3); no step paired; 2 calls: echo, echo",
    ),
    "matcher_true_is_not_a_number": (
        [[[echo("a", n=True)]]],
        sequence("in_order", step(arguments={"message": "a", "n": {"$gte": 1}})),
        "tool_sequence: in_order echo",
        "step 0 echo: no call paired (nearest: echo[0] (turn 0, call 0), arguments differ: "
        "/n: expected a number >= 1, got true); no step paired; 1 call: echo",
    ),
    "matcher_literal_dollar_key": (
        [[[echo("a", q={"$set": 2})]]],
        sequence("in_order", step(arguments={"message": "a", "q": {"$literal": {"$set": 1}}})),
        "tool_sequence: in_order echo",
        "step 0 echo: no call paired (nearest: echo[0] (turn 0, call 0), arguments differ: "
        "/q/$set: expected 1, got 2); no step paired; 1 call: echo",
    ),
    "ignore_keeps_every_other_key_exact": (
        [[[echo("a", ts=5, x=1)]]],
        sequence("in_order", said("a", ignore=["/ts"])),
        "tool_sequence: in_order echo",
        "step 0 echo: no call paired (nearest: echo[0] (turn 0, call 0), arguments differ: "
        "/x: not expected (got 1)); no step paired; 1 call: echo",
    ),
    "subset_refuses_a_key_the_step_lacks": (
        [[[echo("a", x=1)]]],
        sequence("in_order", step(arguments={"message": "a", "n": 1}, match="subset")),
        "tool_sequence: in_order echo",
        "step 0 echo: no call paired (nearest: echo[0] (turn 0, call 0), arguments differ: "
        "/x: not expected (got 1)); no step paired; 1 call: echo",
    ),
    "status_never_called": (
        [[[("search", {"q": "a"})]]],
        {"tool_call_status": [{"tool": "echo", "status": "succeeded"}]},
        "tool_call_status: echo succeeded",
        "echo was never called (calls: search)",
    ),
    "status_index_beyond": (
        [[[echo("a")]]],
        {"tool_call_status": [{"tool": "echo", "status": "succeeded", "call_index": 1}]},
        "tool_call_status: echo[1] succeeded",
        "no call 1 to echo: observed 1 call to it",
    ),
    "status_one_call_of_many_failed": (
        [[[echo("a"), ("echo_twice", {"message": "b"})]]],
        {"tool_call_status": [{"tool": "echo_twice", "status": "succeeded"}]},
        "tool_call_status: echo_twice succeeded",
        "echo_twice[0] (turn 0, call 1) failed: \"unknown tool 'echo_twice'\"",
    ),
}


@pytest.fixture(scope="module")
def failing_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The JSON report of one ``zeroclaw eval run`` over every failing case."""
    suite = tmp_path_factory.mktemp("sequence") / "suite"
    suite.mkdir()
    for name, (turns, expects, _, _) in FAILING.items():
        data = case(name.replace("_", "-"), turns, expects)
        (suite / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite, "--format", "json", "--no-history")
    assert result.returncode == 1, result.stderr
    report = json_report(result)
    assert report["errors"] == []
    return {c["name"]: c for c in report["cases"]}


@pytest.mark.parametrize(
    ("name", "check", "detail"),
    [(name, check, detail) for name, (_, _, check, detail) in FAILING.items()],
    ids=FAILING.keys(),
)
def test_a_failing_case_fails_its_check_and_shows_the_alignment(
    failing_report: dict[str, dict[str, Any]], name: str, check: str, detail: str
) -> None:
    reported = failing_report[name.replace("_", "-")]
    assert reported["error"] is None
    failed = [c for c in reported["checks"] if not c["passed"]]
    # The trajectory score beside it is pinned in tests/test_trajectory_score.py.
    assert [{k: v for k, v in c.items() if k != "score"} for c in failed] == [
        {"check": check, "passed": False, "undecided": False, "detail": detail}
    ]


SHIPPED = sorted((PROJECT / "evals" / "regression").glob("sequence_*.json"))


def test_the_shipped_cases_use_every_mode_argument_mode_and_option() -> None:
    modes, matching, options = set(), set(), set()
    for path in SHIPPED:
        for entry in json.loads(path.read_text(encoding="utf-8"))["expects"]["tool_sequence"]:
            modes.add(entry["mode"])
            options.update({"turn"} & entry.keys())
            for expected in entry["steps"]:
                arguments = "arguments" in expected
                matching.add(expected.get("match", "exact" if arguments else "ignore"))
                options.update({"optional", "ignore"} & expected.keys())
                options.update({"matchers"} if jsonmatch.has_matchers(expected) else ())
                options.update({"pattern"} if "*" in expected["tool"] else ())
    assert modes == {"in_order", "exact", "unordered", "calls_include", "calls_only_among"}
    assert matching == {"exact", "partial", "subset", "ignore", "paths"}
    assert options == {"turn", "optional", "pattern", "ignore", "matchers"}


def test_the_shipped_cases_pass_with_their_alignment_shown() -> None:
    result = zeroclaw("eval", "run", *SHIPPED, "--format", "json", "--no-history")
    assert result.returncode == 0, result.stdout + result.stderr
    checks = [c for reported in json_report(result)["cases"] for c in reported["checks"]]
    sequences = [c for c in checks if c["check"].startswith("tool_sequence: ")]
    assert len(sequences) >= 5
    assert all(c["passed"] and c["detail"].startswith("paired: step 0 ") for c in sequences)


# --- JSON values ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        ({"a": 1, "b": [1, 2]}, {"b": [1.0, 2], "a": 1.0}, True),  # one number type, any key order
        (True, 1, False),
        ([False], [0], False),
        ({"a": None}, {}, False),
        ("1", 1, False),
        ([1, 2], [2, 1], False),
    ],
)
def test_values_are_compared_as_decoded_json(expected: Any, actual: Any, same: bool) -> None:
    assert jsonvalue.equal(expected, actual) is same
    assert jsonvalue.equal(actual, expected) is same


@pytest.mark.parametrize(
    ("expected", "actual", "contained"),
    [
        ({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3}, True),
        ({"a": [{"b": 1}]}, {"a": [{"b": 1, "c": 2}]}, True),
        ({"a": [{"b": 1}]}, {"a": [{"b": 1}, {"b": 2}]}, False),  # arrays keep their length
        ({"a": {"b": 1}}, {"a": {"c": 1}}, False),
        ({"a": True}, {"a": 1}, False),
        ({}, {"anything": 1}, True),
    ],
)
def test_partial_matching_recurses_into_objects_and_arrays(
    expected: Any, actual: Any, contained: bool
) -> None:
    assert jsonvalue.contains(expected, actual) is contained


def test_pointers_follow_rfc_6901() -> None:
    document = {"a/b": {"m~n": [10, {"": 7}]}}
    assert jsonvalue.resolve(document, jsonvalue.parse_pointer("/a~1b/m~0n/1/")) == 7
    assert (
        jsonvalue.resolve(document, jsonvalue.parse_pointer("/a~1b/m~0n/01")) is jsonvalue.MISSING
    )
    assert jsonvalue.resolve(document, jsonvalue.parse_pointer("/a~1b/m~0n/2")) is jsonvalue.MISSING
    for bad in ("a/b", "/a~2", "/a~"):
        with pytest.raises(ValueError, match="is not a JSON pointer"):
            jsonvalue.parse_pointer(bad)


# --- the candidate index is exact -----------------------------------------------

_scalars = st.one_of(
    st.booleans(), st.integers(-2, 2), st.sampled_from([1.0, 0.0, 2.5]), st.sampled_from("ab")
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("xyz"), inner, max_size=2)
    ),
    max_leaves=4,
)
_arguments = st.dictionaries(st.sampled_from("xyz"), _values, max_size=3)


def twin(value: Any) -> Any:
    """The same JSON value with every integer written as a float and back."""
    if isinstance(value, dict):
        return {key: twin(item) for key, item in value.items()}
    if isinstance(value, list):
        return [twin(item) for item in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def as_matcher(value: Any) -> Any:
    """``value`` with its first scalar written ``{"$one_of": [scalar]}``, which means the same."""
    done = False

    def walk(item: Any) -> Any:
        nonlocal done
        if isinstance(item, dict):
            return {key: walk(inner) for key, inner in item.items()}
        if isinstance(item, list):
            return [walk(inner) for inner in item]
        if done:
            return item
        done = True
        return {"$one_of": [item]}

    return walk(value)


@given(
    st.lists(_arguments, min_size=1, max_size=20),
    _arguments,
    st.sampled_from(["exact", "partial", "subset", "paths"]),
    st.data(),
)
def test_indexing_calls_by_a_required_scalar_loses_no_candidate(
    arguments: list[dict[str, Any]], expected: dict[str, Any], match: str, data: st.DataObject
) -> None:
    from zeroclaw_eval import RecordedCall
    from zeroclaw_eval.builtin.sequence import (
        Candidates,
        SequenceStep,
        argument_test,
        expected_arguments,
    )

    # Often expect what some call holds (or its numeric twin: 1.0 for 1), so that
    # matches are found, not only misses.
    source = data.draw(st.sampled_from(["drawn", "held", "twin"]))
    if source != "drawn":
        expected = data.draw(st.sampled_from(arguments))
    if source == "twin":
        expected = twin(expected)
    fields: dict[str, Any] = {"tool": "echo", "arguments": expected, "match": match}
    if match == "paths":
        leaves = [path for path, _ in jsonmatch.literal_leaves(expected)]
        if not leaves:
            return
        fields["paths"] = [jsonvalue.pointer(data.draw(st.sampled_from(leaves)))]
    if data.draw(st.booleans()):  # the same expectation, its first scalar a matcher
        fields["arguments"] = as_matcher(expected)
    step = SequenceStep(**fields)
    calls = [RecordedCall(0, f"c{i}", "echo", a, "", True) for i, a in enumerate(arguments)]
    indexed = Candidates(calls)
    indexed.INDEX_FROM = 0  # index every time
    test = argument_test(step, expected_arguments(step))
    assert indexed.of(step) == [p for p, a in enumerate(arguments) if test(a)]


# --- the verdict of each mode, against brute force --------------------------------

_MODES = ["in_order", "exact", "unordered", "calls_include", "calls_only_among"]
_small_steps = st.lists(
    st.fixed_dictionaries(
        {"tool": st.sampled_from(["echo", "fetch", "*"])},
        optional={
            "arguments": st.fixed_dictionaries({"v": st.integers(0, 1)}),
            "optional": st.booleans(),
        },
    ),
    min_size=1,
    max_size=4,
)
_small_calls = st.lists(
    st.tuples(st.sampled_from(["echo", "fetch"]), st.integers(0, 1)), max_size=5
)


def brute_force_verdict(
    mode: str, steps: list[dict[str, Any]], calls: list[tuple[str, int]]
) -> bool:
    """Whether any pairing meets the mode, found by trying them all."""
    from itertools import combinations, permutations

    def fits(step: dict[str, Any], call: tuple[str, int]) -> bool:
        name_fits = step["tool"] == "*" or step["tool"] == call[0]
        return name_fits and ("arguments" not in step or step["arguments"]["v"] == call[1])

    required = {n for n, s in enumerate(steps) if not s.get("optional")}
    for size in range(min(len(steps), len(calls)) + 1):
        for chosen in combinations(range(len(steps)), size):
            for taken in permutations(range(len(calls)), size):
                if mode in ("in_order", "exact") and list(taken) != sorted(taken):
                    continue
                if not all(fits(steps[s], calls[c]) for s, c in zip(chosen, taken, strict=True)):
                    continue
                if not required <= set(chosen):
                    continue
                if mode in ("exact", "unordered", "calls_only_among") and size != len(calls):
                    continue
                return True
    return False


@given(st.sampled_from(_MODES), _small_steps, _small_calls)
def test_each_mode_passes_exactly_when_some_pairing_meets_it(
    registry: Any, replay: Any, mode: str, steps: list[dict[str, Any]], calls: list[tuple[str, int]]
) -> None:
    from zeroclaw_eval import AdmissionError, RecordedCall, RunRecord
    from zeroclaw_eval.case.admission import admit_data

    fixture = case("verdict", [[[echo("x")]]], {"tool_sequence": [{"mode": mode, "steps": steps}]})
    try:
        admitted = admit_data(fixture, registry, replay, source="verdict.json")
    except AdmissionError:
        return  # a refused entry is never graded
    recorded = [
        RecordedCall(0, f"c{i}", name, {"v": v}, "", True) for i, (name, v) in enumerate(calls)
    ]
    (check,) = admitted.grade(RunRecord(responses=["ok"], calls=recorded))
    assert check.passed is brute_force_verdict(mode, steps, calls), check.detail
