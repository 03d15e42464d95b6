"""Admission fails closed: one test per rule of SPEC §7 (and the replay extras).

Every refusal must name the fixture file and the offending field in one line, and
never surface as a traceback. Each rule is checked through ``admit_file`` and, for
the whole table at once, through one real run of the ``zeroclaw`` console script.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import (
    AdmissionError,
    Registry,
    RunMode,
    SuiteLoadError,
    admit_file,
    load_suite,
)

from .conftest import echo_case, zeroclaw_all

ECHO_TEXT = json.dumps(echo_case())


def expects(**entries: Any) -> dict[str, Any]:
    """The echo case with ``expects`` replaced by ``entries``."""
    return echo_case(expects=entries)


def edited(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """The echo case after ``change`` edited it in place."""
    case = echo_case()
    change(case)
    return case


def step(index: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Accessor for ``turns[0].steps[index]`` of a case (0: tool_calls, 1: text)."""
    return lambda case: case["turns"][0]["steps"][index]


def replaced(old: str, new: str, text: str = ECHO_TEXT) -> str:
    """The echo case's JSON text with ``old`` replaced (for what json.dumps cannot write)."""
    assert old in text
    return text.replace(old, new, 1)


EXACT_1 = '"exact_tool_calls": 1'
BOUNDARY = {"tool": "echo", "needle": "hello"}

# id -> (fixture as data or raw text, field as the message names it, what it says)
REFUSALS: dict[str, tuple[Any, str, str]] = {
    # 1. not JSON, duplicate keys, non-finite numbers, wrong types, negative counts
    "invalid_json": ('{"model_name": ', "", "not valid JSON"),
    "empty_file": ("", "", "not valid JSON"),
    "trailing_garbage": (ECHO_TEXT + " {}", "", "not valid JSON: Extra data"),
    "duplicate_top_level_key": (
        replaced('"model_name": "echo-hello"', '"model_name": "a", "model_name": "b"'),
        "",
        'duplicate key "model_name" at the top level',
    ),
    "duplicate_key_in_tool_call": (
        replaced('"id": "c1"', '"id": "c1", "id": "c2"'),
        "turns[0].steps[0].response.tool_calls[0]",
        'duplicate key "id"',
    ),
    "duplicate_key_in_arguments": (
        replaced('"message": "hello"', '"message": "hello", "message": "bye"'),
        "turns[0].steps[0].response.tool_calls[0].arguments",
        'duplicate key "message"',
    ),
    "duplicate_family_in_expects": (
        replaced(EXACT_1, EXACT_1 + ", " + EXACT_1.replace("1", "2")),
        "expects",
        'duplicate key "exact_tool_calls"',
    ),
    "duplicate_key_in_boundary_entry": (
        replaced('"needle": "hello"', '"needle": "hello", "needle": "x"'),
        "expects.tool_results_contain[0]",
        'duplicate key "needle"',
    ),
    "nan": (replaced(EXACT_1, '"exact_tool_calls": NaN'), "expects.exact_tool_calls", "NaN"),
    "infinity": (
        replaced('"type": "text"', '"type": "text", "input_tokens": Infinity'),
        "turns[0].steps[1].response.input_tokens",
        "non-finite number Infinity",
    ),
    "minus_infinity": (
        replaced(EXACT_1, '"exact_tool_calls": -Infinity'),
        "expects.exact_tool_calls",
        "non-finite number -Infinity",
    ),
    "overflowing_float": (
        replaced(EXACT_1, '"exact_tool_calls": 1e999'),
        "expects.exact_tool_calls",
        "1e999 is too large",
    ),
    "overlong_integer": (
        replaced(EXACT_1, '"exact_tool_calls": ' + "9" * 5000),
        "expects.exact_tool_calls",
        "integer with 5000 digits is too large",
    ),
    "lone_surrogate": (
        replaced('"message": "hello"', '"message": "\\ud800"'),
        "turns[0].steps[0].response.tool_calls[0].arguments.message",
        "lone surrogate \\ud800",
    ),
    "count_as_string": (expects(exact_tool_calls="3"), 'expects.exact_tool_calls="3"', "integer"),
    "count_as_true": (expects(max_tool_calls=True), "expects.max_tool_calls=true", "integer"),
    "count_as_float": (
        replaced(EXACT_1, '"exact_tool_calls": 3.0'),
        "expects.exact_tool_calls=3.0",
        "integer",
    ),
    "count_as_null": (expects(min_tool_calls=None), "expects.min_tool_calls=null", "integer"),
    "bool_as_1": (
        expects(all_tools_succeeded=1, exact_tool_calls=1),
        "expects.all_tools_succeeded=1",
        "boolean",
    ),
    "bool_as_string": (
        expects(all_tools_succeeded="true", exact_tool_calls=1),
        'expects.all_tools_succeeded="true"',
        "boolean",
    ),
    "call_index_as_string": (
        expects(tool_results_contain=[{**BOUNDARY, "call_index": "0"}]),
        'expects.tool_results_contain[0].call_index="0"',
        "integer",
    ),
    "tokens_as_string": (
        edited(lambda c: step(0)(c)["response"].update(input_tokens="30")),
        'turns[0].steps[0].response.input_tokens="30"',
        "integer",
    ),
    "string_family_as_string": (
        expects(response_contains="hello"),
        'expects.response_contains="hello"',
        "must be an array",
    ),
    "boundary_family_as_object": (
        expects(tool_arguments_contain=BOUNDARY),
        "expects.tool_arguments_contain",
        "must be an array",
    ),
    "model_name_as_number": (echo_case(model_name=3), "model_name=3", "string"),
    "user_input_as_null": (
        edited(lambda c: c["turns"][0].update(user_input=None)),
        "turns[0].user_input=null",
        "string",
    ),
    "empty_user_input": (
        edited(lambda c: c["turns"][0].update(user_input="")),
        'turns[0].user_input=""',
        "must not be empty",
    ),
    "content_as_null": (
        edited(lambda c: step(1)(c)["response"].update(content=None)),
        "turns[0].steps[1].response.content=null",
        "string",
    ),
    "arguments_as_list": (
        edited(lambda c: step(0)(c)["response"]["tool_calls"][0].update(arguments=[])),
        "turns[0].steps[0].response.tool_calls[0].arguments",
        "must be an object",
    ),
    "expects_as_list": (echo_case(expects=[]), "expects", "must be an object, not an array"),
    "negative_max": (
        expects(max_tool_calls=-1),
        "expects.max_tool_calls=-1",
        "greater than or equal to 0",
    ),
    "negative_min": (
        expects(min_tool_calls=-2),
        "expects.min_tool_calls=-2",
        "greater than or equal to 0",
    ),
    "negative_exact": (
        expects(exact_tool_calls=-1),
        "expects.exact_tool_calls=-1",
        "greater than or equal to 0",
    ),
    "negative_call_index": (
        expects(tool_arguments_contain=[BOUNDARY, {**BOUNDARY, "call_index": -1}]),
        "expects.tool_arguments_contain[1].call_index=-1",
        "greater than or equal to 0",
    ),
    "negative_input_tokens": (
        edited(lambda c: step(0)(c)["response"].update(input_tokens=-1)),
        "turns[0].steps[0].response.input_tokens=-1",
        "greater than or equal to 0",
    ),
    "negative_output_tokens": (
        edited(lambda c: step(1)(c)["response"].update(output_tokens=-5)),
        "turns[0].steps[1].response.output_tokens=-5",
        "greater than or equal to 0",
    ),
    # 2. unknown keys, at every level
    "unknown_top_level_key": (echo_case(expect={}), "expect", "unknown key"),
    "unknown_family": (
        expects(response_contain=["hello"]),
        "expects.response_contain",
        "no such expectation family",
    ),
    "unknown_key_in_turn": (
        edited(lambda c: c["turns"][0].update(step=[])),
        "turns[0].step",
        "unknown key",
    ),
    "unknown_key_in_step": (
        edited(lambda c: step(1)(c).update(delay=1)),
        "turns[0].steps[1].delay=1",
        "unknown key",
    ),
    "unknown_key_in_text_response": (
        edited(lambda c: step(1)(c)["response"].update(text="x")),
        'turns[0].steps[1].response.text="x"',
        "unknown key",
    ),
    "unknown_key_in_tool_calls_response": (
        edited(lambda c: step(0)(c)["response"].update(text="x")),
        'turns[0].steps[0].response.text="x"',
        "unknown key",
    ),
    "unknown_key_in_tool_call": (
        edited(lambda c: step(0)(c)["response"]["tool_calls"][0].update(args={})),
        "turns[0].steps[0].response.tool_calls[0].args",
        "unknown key",
    ),
    "unknown_key_in_boundary_entry": (
        expects(tool_results_contain=[BOUNDARY, {**BOUNDARY, "index": 0}]),
        "expects.tool_results_contain[1].index=0",
        "unknown key",
    ),
    # keys are data: odd ones are quoted, so the field stays visible and on one line
    "unknown_key_with_newline": (echo_case(**{"bad\nkey": 1}), '["bad\\nkey"]=1', "unknown key"),
    "empty_family_name": (
        expects(**{"": ["hello"]}),
        'expects[""]',
        "no such expectation family",
    ),
    "unknown_key_with_dot": (
        edited(lambda c: step(1)(c)["response"].update({"meta.id": 1})),
        'turns[0].steps[1].response["meta.id"]=1',
        "unknown key",
    ),
    # 3. no turns
    "no_turns": (echo_case(turns=[]), "turns", "must not be empty"),
    "turns_missing": (
        edited(lambda c: c.pop("turns")),
        "turns",
        "required key is missing",
    ),
    # 4. expects missing, empty, or producing no check
    "expects_missing": (edited(lambda c: c.pop("expects")), "expects", "required key is missing"),
    "expects_empty": (echo_case(expects={}), "expects", "declares no expectation"),
    "expects_null": (echo_case(expects=None), "expects=null", "must be an object, not null"),
    "expects_only_empty_lists": (
        expects(response_contains=[], tools_used=[], tool_results_contain=[]),
        "expects",
        "declares nothing that would produce a check",
    ),
    # 5. a zero-length entry in a string family
    **{
        f"empty_entry_in_{family}": (
            expects(exact_tool_calls=1, **{family: ["echo", ""]}),
            f'expects.{family}[1]=""',
            "must not be empty",
        )
        for family in (
            "response_contains",
            "response_not_contains",
            "response_matches",
            "tools_used",
            "tools_not_used",
        )
    },
    # 6. dispatch-boundary entries with an empty tool or needle
    **{
        f"empty_{key}_in_{family}": (
            expects(**{family: [BOUNDARY, {**BOUNDARY, key: ""}]}),
            f'expects.{family}[1].{key}=""',
            "must not be empty",
        )
        for family in ("tool_arguments_contain", "tool_results_contain")
        for key in ("tool", "needle")
    },
    # 7. a lower bound of zero
    "min_tool_calls_0": (
        expects(min_tool_calls=0, exact_tool_calls=1),
        "expects.min_tool_calls=0",
        "a lower bound of 0 asserts nothing",
    ),
    # 8. contradicting bounds
    "min_above_max": (
        expects(min_tool_calls=3, max_tool_calls=2),
        "expects.max_tool_calls=2",
        "contradicts min_tool_calls=3",
    ),
    "exact_above_max": (
        expects(exact_tool_calls=3, max_tool_calls=2),
        "expects.exact_tool_calls=3",
        "contradicts max_tool_calls=2",
    ),
    "exact_below_min": (
        expects(exact_tool_calls=1, min_tool_calls=2),
        "expects.exact_tool_calls=1",
        "contradicts min_tool_calls=2",
    ),
    "call_index_beyond_exact": (
        expects(exact_tool_calls=1, tool_results_contain=[{**BOUNDARY, "call_index": 1}]),
        "expects.exact_tool_calls=1",
        "contradicts tool_results_contain echo[1], which needs at least 2 calls",
    ),
    "call_index_beyond_max": (
        expects(max_tool_calls=2, tool_arguments_contain=[{**BOUNDARY, "call_index": 2}]),
        "expects.max_tool_calls=2",
        "contradicts tool_arguments_contain echo[2], which needs at least 3 calls",
    ),
    "boundary_entry_with_max_0": (
        expects(max_tool_calls=0, tool_results_contain=[BOUNDARY]),
        "expects.max_tool_calls=0",
        "contradicts tool_results_contain echo[0]",
    ),
    "tools_used_beyond_exact": (
        expects(exact_tool_calls=1, tools_used=["echo", "shell"]),
        "expects.exact_tool_calls=1",
        "contradicts tools_used, which needs at least 2 calls",
    ),
    "tools_used_and_not_used": (
        expects(tools_used=["echo"], tools_not_used=["shell", "echo"]),
        'expects.tools_not_used[1]="echo"',
        "contradicts tools_used naming 'echo'",
    ),
    "boundary_tool_not_used": (
        expects(tools_not_used=["echo"], tool_arguments_contain=[BOUNDARY]),
        'expects.tools_not_used[0]="echo"',
        "contradicts a dispatch-boundary entry naming 'echo'",
    ),
    "response_contains_and_not_contains": (
        expects(response_contains=["hello world"], response_not_contains=["bye", "world"]),
        'expects.response_not_contains[1]="world"',
        'contradicts response_contains "hello world"',
    ),
    "failure_expected_with_max_0": (
        expects(all_tools_succeeded=False, max_tool_calls=0),
        "expects.max_tool_calls=0",
        "contradicts all_tools_succeeded=false, which needs at least 1 call",
    ),
    "failure_expected_with_exact_0": (
        expects(all_tools_succeeded=False, exact_tool_calls=0),
        "expects.exact_tool_calls=0",
        "contradicts all_tools_succeeded=false",
    ),
    # 9. a regex that does not compile
    "bad_regex": (
        expects(response_matches=["hel+o", "(unclosed"]),
        'expects.response_matches[1]="(unclosed"',
        "not a valid regular expression",
    ),
    # re refuses these with OverflowError and RecursionError, not re.error
    "regex_repeat_too_large": (
        expects(response_matches=["a{99999999999}"]),
        'expects.response_matches[0]="a{99999999999}"',
        "not a valid regular expression: the repetition number is too large",
    ),
    "regex_nested_too_deeply": (
        expects(response_matches=["(" * 2000 + "a" + ")" * 2000]),
        'expects.response_matches[0]="' + "(" * 55 + '..."',
        "not a valid regular expression",
    ),
    # the top level must be an object
    **{
        f"top_level_{kind}": (text, "", f"a fixture must be a JSON object, not {article}")
        for kind, text, article in (
            ("array", "[]", "an array"),
            ("string", '"case"', "a string"),
            ("number", "3", "a number"),
            ("null", "null", "null"),
            ("boolean", "true", "a boolean"),
        )
    },
    # replay: every response and every turn must be playable
    "tool_calls_response_without_calls": (
        edited(lambda c: step(1)(c).update(response={"type": "tool_calls", "tool_calls": []})),
        "turns[0].steps[1].response.tool_calls",
        "must not be empty",
    ),
    "turn_with_no_steps": (
        edited(lambda c: c["turns"].append({"user_input": "again", "steps": []})),
        "turns[1].steps",
        "replay needs at least one scripted step per turn",
    ),
    "turn_without_steps_key": (
        edited(lambda c: c["turns"].append({"user_input": "again"})),
        "turns[1].steps",
        "replay needs at least one scripted step per turn",
    ),
    "unknown_response_type": (
        edited(lambda c: step(1)(c)["response"].update(type="image")),
        'turns[0].steps[1].response.type="image"',
        "unknown response type (expected one of: 'text', 'tool_calls', 'http_error')",
    ),
    "response_without_type": (
        edited(lambda c: step(1)(c)["response"].pop("type")),
        "turns[0].steps[1].response",
        "required key 'type' is missing",
    ),
    "tool_call_with_empty_name": (
        edited(lambda c: step(0)(c)["response"]["tool_calls"][0].update(name="")),
        'turns[0].steps[0].response.tool_calls[0].name=""',
        "must not be empty",
    ),
    "empty_model_name": (echo_case(model_name=""), 'model_name=""', "must not be empty"),
}


def write_refusal(directory: Path, name: str, fixture: Any) -> Path:
    path = directory / f"{name}.json"
    text = fixture if isinstance(fixture, str) else json.dumps(fixture, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return path


def assert_one_line(message: str) -> None:
    assert "\n" not in message
    assert "Traceback" not in message


@pytest.mark.parametrize(("fixture", "field", "says"), REFUSALS.values(), ids=REFUSALS.keys())
def test_admission_refuses_naming_file_and_field(
    fixture: Any, field: str, says: str, tmp_path: Path, registry: Registry, replay: RunMode
) -> None:
    path = write_refusal(tmp_path, "case", fixture)
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, registry, replay)
    error = refused.value
    assert (error.source, error.field) == (str(path), field)
    assert says in error.message
    where = f"{path}: {field}" if field else str(path)
    assert str(error) == f"{where}: {error.message}"
    assert_one_line(str(error))


def test_the_echo_case_itself_is_admitted(
    write_case: Callable[..., Path], registry: Registry, replay: RunMode
) -> None:
    # Every refusal above is one edit away from this case, so each edit is what is refused.
    case = admit_file(write_case(echo_case()), registry, replay)
    assert [e.name for e in case.expectations] == [
        "response_contains",
        "exact_tool_calls",
        "tool_results_contain",
    ]


# --- the file itself --------------------------------------------------------------


def test_bytes_that_are_not_utf8_are_refused(
    write_case: Callable[..., Path], registry: Registry, replay: RunMode
) -> None:
    path = write_case("")
    path.write_bytes(ECHO_TEXT.encode("utf-8").replace(b"hello", b"h\xe9llo", 1))
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, registry, replay)
    assert str(refused.value).startswith(f"{path}: not UTF-8 text (invalid byte at offset ")


def test_a_utf8_bom_is_accepted_and_fields_are_still_named(
    write_case: Callable[..., Path], registry: Registry, replay: RunMode
) -> None:
    good = write_case("\ufeff" + ECHO_TEXT, name="good.json")
    assert admit_file(good, registry, replay).name == "echo-hello"
    bad = write_case("\ufeff" + json.dumps(expects(max_tool_calls=-1)), name="bad.json")
    with pytest.raises(AdmissionError) as refused:
        admit_file(bad, registry, replay)
    assert (refused.value.source, refused.value.field) == (str(bad), "expects.max_tool_calls=-1")


def test_a_directory_named_like_a_fixture_is_refused(
    tmp_path: Path, registry: Registry, replay: RunMode
) -> None:
    path = tmp_path / "x.json"
    path.mkdir()
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, registry, replay)
    assert str(refused.value) == f"{path}: is a directory, not a fixture file"


def test_a_dangling_symlink_is_refused(tmp_path: Path, registry: Registry, replay: RunMode) -> None:
    path = tmp_path / "gone.json"
    path.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, registry, replay)
    assert str(refused.value).startswith(f"{path}: cannot be read: no such file")


def test_source_names_the_file_as_the_caller_does(
    write_case: Callable[..., Path], registry: Registry, replay: RunMode
) -> None:
    path = write_case(echo_case(extra=1))
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, registry, replay, source="evals/x.json")
    assert str(refused.value) == "evals/x.json: extra=1: unknown key"


# --- a whole suite ----------------------------------------------------------------


def test_load_suite_reports_every_refused_fixture_at_once(
    write_case: Callable[..., Path], registry: Registry, replay: RunMode
) -> None:
    good = write_case(echo_case(), name="a_good.json")
    typo = write_case(expects(exact_tool_call=1), name="b_typo.json")
    count = write_case(expects(exact_tool_calls="1"), name="c_count.json")
    with pytest.raises(SuiteLoadError) as refused:
        load_suite(good.parent, registry, replay)
    assert str(refused.value) == (
        f"suite {good.parent}: 2 fixtures refused (of 3); no case was run"
    )
    assert [problem.split(": ")[:2] for problem in refused.value.problems] == [
        [str(typo), "expects.exact_tool_call"],
        [str(count), 'expects.exact_tool_calls="1"'],
    ]


# --- the same table through the real console script --------------------------------

FILE_LEVEL = ("not_utf8", "directory", "dangling_link", "named_pipe")


@pytest.fixture(scope="module")
def hostile_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every refusal of the table as one suite, plus the refusals of the file itself."""
    suite = tmp_path_factory.mktemp("hostile")
    for name, (fixture, _, _) in REFUSALS.items():
        write_refusal(suite, name, fixture)
    (suite / "not_utf8.json").write_bytes(b"\xff\xfe{}")
    (suite / "directory.json").mkdir()
    (suite / "dangling_link.json").symlink_to(suite / "nowhere")
    # Read, a pipe blocks until a writer comes: the CLI run's timeout turns a hang into a failure.
    os.mkfifo(suite / "named_pipe.json")
    return suite


@pytest.fixture(scope="module")
def cli_runs(hostile_suite: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """One ``run``, one ``run --format json`` and one ``check`` over the hostile suite,
    from its parent directory, so messages name fixtures as ``hostile0/<id>.json``."""
    suite, cwd = hostile_suite.name, hostile_suite.parent
    return zeroclaw_all(
        {
            "text": (("eval", "run", "--suite", suite), cwd),
            "json": (("eval", "run", "--suite", suite, "--format", "json"), cwd),
            "check": (("eval", "check", "--suite", suite), cwd),
        }
    )


@pytest.mark.parametrize("run", ["text", "json", "check"])
def test_cli_refuses_the_hostile_suite_without_a_traceback(
    run: str, cli_runs: dict[str, subprocess.CompletedProcess[str]], hostile_suite: Path
) -> None:
    result = cli_runs[run]
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    total = len(REFUSALS) + len(FILE_LEVEL)
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"Error: suite {hostile_suite.name}: {total} fixtures refused (of {total}); no case was run"
    )
    # then exactly one line per refused fixture, in path order
    names = sorted([*REFUSALS, *FILE_LEVEL])
    assert [line.split(": ")[1] for line in lines[1:]] == [
        f"{hostile_suite.name}/{name}.json" for name in names
    ]


@pytest.mark.parametrize("name", REFUSALS)
def test_cli_names_file_and_field(
    name: str, cli_runs: dict[str, subprocess.CompletedProcess[str]], hostile_suite: Path
) -> None:
    _, field, says = REFUSALS[name]
    source = f"{hostile_suite.name}/{name}.json"
    where = f"{source}: {field}: " if field else f"{source}: "
    [line] = [line for line in cli_runs["text"].stderr.splitlines() if f": {source}: " in line]
    assert line.startswith(f"Error: {where}")
    assert says in line
    [error] = [e for e in json.loads(cli_runs["json"].stdout)["errors"] if e.startswith(where)]
    assert says in error


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("not_utf8", "not UTF-8 text (invalid byte at offset 0)"),
        ("directory", "is a directory, not a fixture file"),
        ("dangling_link", "cannot be read: no such file"),
        ("named_pipe", "is not a regular file (a pipe, socket or device)"),
    ],
)
def test_cli_names_unreadable_files(
    name: str,
    says: str,
    cli_runs: dict[str, subprocess.CompletedProcess[str]],
    hostile_suite: Path,
) -> None:
    assert f"Error: {hostile_suite.name}/{name}.json: {says}" in cli_runs["text"].stderr


@pytest.mark.parametrize(
    ("expects", "fails", "vacuous"),
    [
        ({"max_tool_calls": 0}, False, ("max_tool_calls: 0",)),
        ({"max_tool_calls": 0, "response_contains": ["hello"]}, True, None),
        ({"response_contains": ["hello"], "max_tool_calls": 0}, True, None),
    ],
    ids=["passes-idle", "fails-idle-last", "fails-idle-first"],
)
def test_admission_knows_whether_a_run_doing_nothing_fails_the_case(
    expects: dict[str, Any],
    fails: bool,
    vacuous: tuple[str, ...] | None,
    registry: Registry,
    replay: RunMode,
) -> None:
    """Admission grades a run that does nothing anyway; the gate's vacuity reads it."""
    from zeroclaw_eval.case.admission import admit_data
    from zeroclaw_eval.case.suite import vacuity

    case = admit_data(echo_case(expects=expects), registry, replay, source="c.json")
    assert case.idle_fails is fails
    found = vacuity(case)
    assert (found.checks if found is not None else None) == vacuous
