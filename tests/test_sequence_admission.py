"""Admission of ``tool_sequence`` and ``tool_call_status`` fails closed.

Each hostile fixture below is one edit away from an admitted one and is refused
with its file and field; the schema points an editor at the same field; an agent
that cannot observe a tool's success refuses ``tool_call_status``; and no entry
admission lets through is satisfied by a run that does nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zeroclaw_eval import AdmissionError, Registry, RunMode, admit_file, empty_run
from zeroclaw_eval.case.admission import admit_data

from .bridged_helpers import command, configure, run, write_suite
from .conftest import echo_case, zeroclaw


def expects(**families: Any) -> dict[str, Any]:
    return echo_case(expects=families)


def steps(mode: str, *items: dict[str, Any], **entry: Any) -> list[dict[str, Any]]:
    return [{"mode": mode, "steps": list(items), **entry}]


ECHO = {"tool": "echo"}
MAYBE = {"tool": "echo", "optional": True}
HELLO = {"tool": "echo", "arguments": {"message": "hello"}}
SEQ = "expects.tool_sequence[0]"

# id -> (fixture, field, what the message says)
REFUSALS: dict[str, tuple[dict[str, Any], str, str]] = {
    "empty_step_list": (
        expects(tool_sequence=steps("in_order")),
        f"{SEQ}.steps",
        "must not be empty",
    ),
    "only_optional_steps": (
        expects(tool_sequence=steps("exact", MAYBE, MAYBE)),
        f"{SEQ}.steps",
        "every step is optional: a run that calls no tool passes",
    ),
    "containment_an_empty_run_satisfies": (
        expects(tool_sequence=steps("calls_only_among", MAYBE)),
        f"{SEQ}.steps",
        "calls_only_among is then satisfied by a run that calls no tool",
    ),
    "containment_in_a_turn_beside_a_case_wide_floor": (
        expects(tool_sequence=steps("calls_only_among", MAYBE, turn=0), min_tool_calls=1),
        f"{SEQ}.steps",
        "a run that calls no tool in turn 0, and nothing else in the case needs a call in turn 0",
    ),
    "closed_mode_without_a_tool_another_entry_needs": (
        expects(tool_sequence=steps("calls_only_among", ECHO), tools_used=["shell"]),
        f"{SEQ}.steps",
        "no step accepts 'shell', which tools_used needs called, and calls_only_among allows "
        "no other call",
    ),
    "exact_without_a_tool_status_needs": (
        expects(
            tool_sequence=steps("exact", ECHO),
            tool_call_status=[{"tool": "shell", "status": "failed"}],
        ),
        f"{SEQ}.steps",
        "no step accepts 'shell', which tool_call_status needs called, and exact allows",
    ),
    "optional_step_in_calls_include": (
        expects(tool_sequence=steps("calls_include", ECHO, MAYBE)),
        f"{SEQ}.steps[1].optional=true",
        "has no effect: calls_include allows calls that pair with no step",
    ),
    "optional_step_in_order": (
        expects(tool_sequence=steps("in_order", ECHO, MAYBE)),
        f"{SEQ}.steps[1].optional=true",
        "has no effect: in_order allows calls that pair with no step",
    ),
    "optional_step_unordered": (
        expects(tool_sequence=steps("unordered", ECHO, MAYBE)),
        f"{SEQ}.steps[1].optional=true",
        "for steps that may go unused, use calls_only_among",
    ),
    "pointer_without_slash": (
        expects(
            tool_sequence=steps(
                "in_order", {**HELLO, "match": "paths", "paths": ["/message", "message"]}
            )
        ),
        f'{SEQ}.steps[0].paths[1]="message"',
        "'message' is not a JSON pointer: it must start with '/'",
    ),
    "pointer_bad_escape": (
        expects(tool_sequence=steps("in_order", {**HELLO, "match": "paths", "paths": ["/a~2"]})),
        f'{SEQ}.steps[0].paths[0]="/a~2"',
        "'~' must be followed by 0 or 1",
    ),
    "pointer_to_nothing": (
        expects(tool_sequence=steps("in_order", {**HELLO, "match": "paths", "paths": ["/msg"]})),
        f'{SEQ}.steps[0].paths[0]="/msg"',
        "points at nothing in the step's arguments",
    ),
    "empty_pointer_list": (
        expects(tool_sequence=steps("in_order", {**HELLO, "match": "paths", "paths": []})),
        f"{SEQ}.steps[0].paths",
        "must not be empty",
    ),
    "paths_without_match_paths": (
        expects(tool_sequence=steps("in_order", {**HELLO, "paths": ["/message"]})),
        f"{SEQ}.steps[0].paths",
        'paths apply only with match "paths"',
    ),
    "match_paths_without_paths": (
        expects(tool_sequence=steps("in_order", {**HELLO, "match": "paths"})),
        f'{SEQ}.steps[0].match="paths"',
        "'paths' needs paths",
    ),
    "ignored_arguments": (
        expects(tool_sequence=steps("in_order", {**HELLO, "match": "ignore"})),
        f'{SEQ}.steps[0].match="ignore"',
        "ignores the arguments given beside it",
    ),
    "partial_without_arguments": (
        expects(tool_sequence=steps("in_order", {"tool": "echo", "match": "partial"})),
        f'{SEQ}.steps[0].match="partial"',
        "'partial' needs the expected arguments",
    ),
    "more_steps_than_max_tool_calls": (
        expects(tool_sequence=steps("in_order", ECHO, ECHO), max_tool_calls=1),
        f"{SEQ}.steps",
        "needs at least 2 calls (one per required step), more than max_tool_calls=1 allows",
    ),
    "more_steps_than_exact_tool_calls": (
        expects(tool_sequence=steps("calls_include", ECHO, ECHO), exact_tool_calls=1),
        f"{SEQ}.steps",
        "more than exact_tool_calls=1 allows",
    ),
    "closed_mode_fewer_steps_than_exact_tool_calls": (
        expects(tool_sequence=steps("exact", ECHO), exact_tool_calls=2),
        f"{SEQ}.steps",
        "pairs at most 1 call and exact allows no other call, fewer than exact_tool_calls=2",
    ),
    "step_contradicts_tools_not_used": (
        expects(tool_sequence=steps("in_order", ECHO), tools_not_used=["echo"]),
        f'{SEQ}.steps[0].tool="echo"',
        "contradicts tools_not_used naming 'echo'",
    ),
    "unknown_mode": (
        expects(tool_sequence=steps("subset", ECHO)),
        f'{SEQ}.mode="subset"',
        "input should be 'in_order', 'exact', 'unordered', 'calls_include' or 'calls_only_among'",
    ),
    "unknown_match": (
        expects(tool_sequence=steps("in_order", {**HELLO, "match": "superset"})),
        f'{SEQ}.steps[0].match="superset"',
        "input should be 'exact', 'partial', 'subset', 'ignore' or 'paths'",
    ),
    "misspelt_step_key": (
        expects(tool_sequence=steps("exact", ECHO, {"tool": "echo", "optinal": True})),
        f"{SEQ}.steps[1].optinal=true",
        "unknown key",
    ),
    "empty_tool_name": (
        expects(tool_sequence=steps("in_order", {"tool": ""})),
        f'{SEQ}.steps[0].tool=""',
        "must not be empty",
    ),
    "negative_turn": (
        expects(tool_sequence=steps("in_order", ECHO, turn=-1)),
        f"{SEQ}.turn=-1",
        "greater than or equal to 0",
    ),
    "turn_past_the_last": (
        expects(tool_sequence=steps("in_order", ECHO, turn=1)),
        f"{SEQ}.turn=1",
        "no run reaches turn 1: the fixture has 1 turn, numbered from 0",
    ),
    "matcher_bad_regex": (
        expects(
            tool_sequence=steps(
                "in_order", {"tool": "echo", "arguments": {"message": {"$regex": "("}}}
            )
        ),
        f'{SEQ}.steps[0].arguments.message.$regex="("',
        "not a valid regular expression: missing ), unterminated subpattern",
    ),
    "matcher_negative_tolerance": (
        expects(
            tool_sequence=steps(
                "in_order", {"tool": "echo", "arguments": {"n": {"$approx": 1, "$tol": -1}}}
            )
        ),
        f"{SEQ}.steps[0].arguments.n.$tol=-1",
        "$tol takes a number of 0 or more",
    ),
    "matcher_unknown_key": (
        expects(
            tool_sequence=steps("in_order", {"tool": "echo", "arguments": {"q": {"$re": "x"}}})
        ),
        f'{SEQ}.steps[0].arguments.q.$re="x"',
        "unknown matcher '$re' (known: $regex,",
    ),
    "matcher_inside_paths_is_checked_too": (
        expects(
            tool_sequence=steps(
                "in_order",
                {
                    "tool": "echo",
                    "arguments": {"q": {"$gt": 2, "$lt": 1}},
                    "match": "paths",
                    "paths": ["/q"],
                },
            )
        ),
        f"{SEQ}.steps[0].arguments.q.$lt=1",
        "no number is > 2 and < 1",
    ),
    "paths_into_a_matcher": (
        expects(
            tool_sequence=steps(
                "in_order",
                {
                    "tool": "echo",
                    "arguments": {"q": {"$regex": "x"}},
                    "match": "paths",
                    "paths": ["/q/$regex"],
                },
            )
        ),
        f'{SEQ}.steps[0].paths[0]="/q/$regex"',
        "points at nothing in the step's arguments",
    ),
    "ignore_a_pointer_that_cannot_exist": (
        expects(tool_sequence=steps("in_order", {**HELLO, "ignore": ["/meta/ts"]})),
        f'{SEQ}.steps[0].ignore[0]="/meta/ts"',
        "can never exist: the step's arguments have no /meta, and the exact comparison",
    ),
    "ignore_a_key_the_step_gives": (
        expects(tool_sequence=steps("in_order", {**HELLO, "ignore": ["/ts", "/message"]})),
        f'{SEQ}.steps[0].ignore[1]="/message"',
        "the step's arguments give /message a value: ignoring it contradicts them",
    ),
    "ignore_a_bad_pointer": (
        expects(tool_sequence=steps("in_order", {**HELLO, "ignore": ["ts"]})),
        f'{SEQ}.steps[0].ignore[0]="ts"',
        "'ts' is not a JSON pointer: it must start with '/'",
    ),
    "ignore_with_partial": (
        expects(tool_sequence=steps("in_order", {**HELLO, "match": "partial", "ignore": ["/ts"]})),
        f"{SEQ}.steps[0].ignore",
        "has no effect: partial already ignores every key the step does not name",
    ),
    "ignore_with_subset": (
        expects(tool_sequence=steps("in_order", {**HELLO, "match": "subset", "ignore": ["/ts"]})),
        f"{SEQ}.steps[0].ignore",
        "has no effect: subset already allows a call without any key the step names",
    ),
    "ignore_without_arguments": (
        expects(tool_sequence=steps("in_order", {"tool": "echo", "ignore": ["/ts"]})),
        f"{SEQ}.steps[0].ignore",
        "has no effect: they apply only to arguments compared exactly",
    ),
    "subset_without_arguments": (
        expects(tool_sequence=steps("in_order", {"tool": "echo", "match": "subset"})),
        f'{SEQ}.steps[0].match="subset"',
        "'subset' needs the expected arguments",
    ),
    "status_unknown": (
        expects(tool_call_status=[{"tool": "echo", "status": "ok"}]),
        'expects.tool_call_status[0].status="ok"',
        "input should be 'succeeded' or 'failed'",
    ),
    "status_index_beyond_max_tool_calls": (
        expects(
            tool_call_status=[{"tool": "echo", "status": "failed", "call_index": 2}],
            max_tool_calls=2,
        ),
        "expects.tool_call_status[0]",
        "needs at least 3 calls to echo, more than max_tool_calls=2 allows",
    ),
    "status_failed_contradicts_all_tools_succeeded": (
        expects(tool_call_status=[{"tool": "echo", "status": "failed"}], all_tools_succeeded=True),
        'expects.tool_call_status[0].status="failed"',
        "contradicts all_tools_succeeded=true",
    ),
    "status_contradicts_tools_not_used": (
        expects(tool_call_status=[{"tool": "echo", "status": "failed"}], tools_not_used=["echo"]),
        'expects.tool_call_status[0].tool="echo"',
        "contradicts tools_not_used naming 'echo'",
    ),
}


@pytest.mark.parametrize(("fixture", "field", "says"), REFUSALS.values(), ids=REFUSALS.keys())
def test_admission_refuses_naming_file_and_field(
    fixture: dict[str, Any],
    field: str,
    says: str,
    write_case: Callable[..., Path],
    registry: Registry,
    replay: RunMode,
) -> None:
    path = write_case(fixture)
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, registry, replay)
    assert (refused.value.source, refused.value.field) == (str(path), field)
    assert says in refused.value.message


def test_each_refused_fixture_is_one_edit_from_an_admitted_one(
    write_case: Callable[..., Path], registry: Registry, replay: RunMode
) -> None:
    admitted = expects(
        tool_sequence=[
            *steps("exact", HELLO, MAYBE),
            *steps("calls_only_among", ECHO, MAYBE),
            *steps("in_order", {**HELLO, "match": "paths", "paths": ["/message"]}, turn=0),
            *steps("in_order", {"tool": "echo", "arguments": {"message": {"$regex": "^h"}}}),
            *steps("in_order", {**HELLO, "ignore": ["/ts"]}),
            *steps("in_order", {**HELLO, "match": "subset"}),
        ],
        tool_call_status=[{"tool": "echo", "status": "succeeded", "call_index": 0}],
        max_tool_calls=1,
    )
    case = admit_file(write_case(admitted), registry, replay)
    assert all(check.passed for check in case.grade(_echo_hello_run()))


def _echo_hello_run() -> Any:
    from zeroclaw_eval import RecordedCall, RunRecord

    call = RecordedCall(0, "c1", "echo", {"message": "hello"}, "hello", True)
    return RunRecord(responses=["The echo said: hello"], calls=[call])


def test_a_step_naming_a_tool_outside_the_offer_is_refused(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    fixture = expects(tool_sequence=steps("in_order", ECHO, {"tool": "grep"}))
    (suite / "case.json").write_text(json.dumps(fixture), encoding="utf-8")
    result = zeroclaw("eval", "run", "--suite", suite, "--no-history")
    assert result.returncode == 1
    assert result.stdout == ""
    assert (
        f'{suite / "case.json"}: {SEQ}.steps[1].tool="grep": names no tool the agent is offered '
        "(echo) nor one the script calls" in result.stderr
    )
    # A tool the script calls, registered or not, may be named (and a pattern that fits it).
    fixture["turns"][0]["steps"][0]["response"]["tool_calls"].append(
        {"id": "c2", "name": "grep", "arguments": {}}
    )
    fixture["expects"] = {"tool_sequence": steps("exact", ECHO, {"tool": "gr*"})}
    (suite / "case.json").write_text(json.dumps(fixture), encoding="utf-8")
    assert zeroclaw("eval", "run", "--suite", suite, "--no-history").returncode == 0


def test_a_bridged_agent_refuses_call_status_and_arguments_but_certifies_the_order(
    tmp_path: Path,
) -> None:
    config = configure(tmp_path / "project", command("echo_agent.py"))
    status = expects(tool_call_status=[{"tool": "echo", "status": "succeeded"}])
    refused = run(config, write_suite(tmp_path / "refused", status))
    assert refused.exit_code == 1
    assert "case0.json: expects.tool_call_status: agent 'command " in refused.stderr
    assert "cannot certify this family: a bridged agent runs its tools itself" in refused.stderr
    # The names of the calls cross the wire: their order is graded from it.
    sequence = expects(tool_sequence=steps("exact", ECHO))
    assert run(config, write_suite(tmp_path / "sequence", sequence)).exit_code == 0
    # The arguments the agent dispatched do not: the script's could not fail.
    arguments = expects(tool_sequence=steps("exact", HELLO))
    refused = run(config, write_suite(tmp_path / "arguments", arguments))
    assert refused.exit_code == 1
    assert "case0.json: expects.tool_sequence: agent 'command " in refused.stderr
    assert "so the harness sees only the arguments the script sent it" in refused.stderr


# --- the JSON Schema ------------------------------------------------------------


@pytest.fixture(scope="module")
def validator() -> jsonschema.protocols.Validator:
    result = zeroclaw("eval", "schema")
    assert result.returncode == 0, result.stderr
    return jsonschema.Draft202012Validator(json.loads(result.stdout))


@pytest.mark.parametrize(
    ("name", "where", "keyword"),
    [
        ("empty_step_list", ["steps"], "minItems"),
        ("unknown_mode", ["mode"], "enum"),
        ("unknown_match", ["steps", 0, "match"], "enum"),
        ("misspelt_step_key", ["steps", 1], "additionalProperties"),
        ("empty_pointer_list", ["steps", 0, "paths"], "minItems"),
        ("negative_turn", ["turn"], "minimum"),
        ("empty_tool_name", ["steps", 0, "tool"], "minLength"),
    ],
)
def test_the_schema_points_at_the_wrong_field(
    validator: jsonschema.protocols.Validator, name: str, where: list[Any], keyword: str
) -> None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(REFUSALS[name][0]))
    assert error is not None
    assert list(error.absolute_path) == ["expects", "tool_sequence", 0, *where]
    assert error.validator == keyword


def test_the_schema_describes_the_status_entry(validator: jsonschema.protocols.Validator) -> None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(REFUSALS["status_unknown"][0]))
    assert error is not None
    assert list(error.absolute_path) == ["expects", "tool_call_status", 0, "status"]
    assert error.validator == "enum"


# --- vacuity --------------------------------------------------------------------

_steps = st.lists(
    st.fixed_dictionaries(
        {"tool": st.sampled_from(["echo", "ech*"])}, optional={"optional": st.booleans()}
    ),
    min_size=1,
    max_size=3,
)
_entries = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(
            ["in_order", "exact", "unordered", "calls_include", "calls_only_among"]
        ),
        "steps": _steps,
    },
    optional={"turn": st.integers(0, 1)},
)


@given(st.lists(_entries, min_size=1, max_size=2))
def test_no_admitted_sequence_is_satisfied_by_an_empty_run(
    registry: Registry, replay: RunMode, entries: list[dict[str, Any]]
) -> None:
    try:
        case = admit_data(expects(tool_sequence=entries), registry, replay, source="case.json")
    except AdmissionError:
        return
    sequence_checks = [c for c in case.grade(empty_run()) if c.check.startswith("tool_sequence")]
    assert len(sequence_checks) == len(entries)
    assert not all(check.passed for check in sequence_checks)
    for entry, check in zip(entries, sequence_checks, strict=True):
        # Only an entry that restricts the calls may pass an empty run, and only
        # beside another that makes it fail (a floor in the same scope).
        if check.passed:
            assert entry["mode"] == "calls_only_among"
            assert all(s.get("optional") for s in entry["steps"])
            assert any(
                other.get("turn") == entry.get("turn")
                and not all(s.get("optional") for s in other["steps"])
                for other in entries
            )


def test_eval_check_finds_no_vacuity_in_the_new_families(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    for number, families in enumerate(
        [
            {"tool_sequence": steps("calls_only_among", ECHO, MAYBE), "max_tool_calls": 2},
            {"tool_call_status": [{"tool": "echo", "status": "succeeded"}]},
        ]
    ):
        fixture = expects(**families)
        (suite / f"case{number}.json").write_text(json.dumps(fixture), encoding="utf-8")
    result = zeroclaw("eval", "check", "--suite", suite)
    assert result.returncode == 0, result.stderr
    assert "2 fixtures admitted; none is satisfied by an empty run" in result.stdout


FLOORS = {
    "min_tool_calls": {"min_tool_calls": 1},
    "exact_tool_calls": {"exact_tool_calls": 1},
    "tools_used": {"tools_used": ["echo"]},
    "all_tools_succeeded_false": {"all_tools_succeeded": False},
    "tool_arguments_contain": {"tool_arguments_contain": [{"tool": "echo", "needle": "h"}]},
    "tool_call_status": {"tool_call_status": [{"tool": "echo", "status": "succeeded"}]},
    "required_step": {"tool_sequence": steps("calls_include", ECHO)},
    "tool_call_counts_min": {"tool_call_counts": {"ech*": {"min": 1}}},
}


@pytest.mark.parametrize("floor", FLOORS.values(), ids=FLOORS.keys())
def test_only_among_optional_steps_is_admitted_beside_a_floor(
    registry: Registry, replay: RunMode, floor: dict[str, Any]
) -> None:
    among = steps("calls_only_among", MAYBE, {"tool": "ech*", "optional": True})
    families = {"tool_sequence": among, **floor}
    if "tool_sequence" in floor:
        families["tool_sequence"] = [*among, *floor["tool_sequence"]]
    case = admit_data(expects(**families), registry, replay, source="case.json")
    # The floor is what fails a run that does nothing; the restriction passes it.
    assert not all(check.passed for check in case.grade(empty_run()))
    assert case.grade(empty_run())[0].passed
    with pytest.raises(AdmissionError, match="nothing else in the case needs a call"):
        admit_data(expects(tool_sequence=among), registry, replay, source="case.json")


def test_a_turn_floor_admits_only_among_in_that_turn(registry: Registry, replay: RunMode) -> None:
    fixture = expects(
        tool_sequence=[
            *steps("calls_only_among", MAYBE, turn=0),
            *steps("in_order", ECHO, turn=0),
        ]
    )
    admit_data(fixture, registry, replay, source="case.json")
    # A required step anywhere in the case leaves turn 0 free to call nothing.
    fixture["expects"]["tool_sequence"][1].pop("turn")
    with pytest.raises(AdmissionError, match="calls no tool in turn 0, and nothing else"):
        admit_data(fixture, registry, replay, source="case.json")
    # Nor does a restriction count as a floor, nor a max.
    fixture = expects(
        tool_sequence=steps("calls_only_among", MAYBE),
        tool_call_counts={"echo": {"max": 1}},
        max_tool_calls=1,
        tools_not_used=["shell"],
    )
    with pytest.raises(AdmissionError, match="nothing else in the case needs a call"):
        admit_data(fixture, registry, replay, source="case.json")


def test_paths_without_arguments_are_refused_once_for_the_arguments(
    registry: Registry, replay: RunMode
) -> None:
    step = {"tool": "echo", "match": "paths", "paths": ["/message"]}
    case = expects(tool_sequence=steps("in_order", step))
    with pytest.raises(AdmissionError) as refused:
        admit_data(case, registry, replay, source="suite/case.json")
    assert refused.value.lines == (
        'suite/case.json: expects.tool_sequence[0].steps[0].match="paths": '
        "'paths' needs the expected arguments",
    )
