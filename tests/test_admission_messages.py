"""Admission's own refusals, each asserted whole: the file, the field, the sentence.

The wording of a refusal is the contract a fixture's author reads in CI: a test
that only looks for a word in it would stay green if the rest were mangled. The
refusals of what a path is (a directory, a pipe, a device, a link to nothing, a
file too big) are made with real files of each kind, and must come back at once:
a pipe with no writer must not block the reader.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BeforeValidator

from zeroclaw_eval import (
    AdmissionError,
    CheckResult,
    Family,
    Params,
    Problem,
    Registry,
    RunMode,
    RunRecord,
    get_plugin_manager,
    hookimpl,
)
from zeroclaw_eval.case import admission
from zeroclaw_eval.case.admission import admit_data, admit_file, admit_text
from zeroclaw_eval.case.fixture import LlmTrace
from zeroclaw_eval.grading.record import RecordedCall

from .conftest import echo_case

SOURCE = "suite/case.json"


def refused_file(path: Path, registry: Registry, replay: RunMode) -> str:
    """The refusal of ``path``, which must come back within seconds (never block)."""
    outcome: list[BaseException | None] = []

    def admit() -> None:
        try:
            admit_file(path, registry, replay)
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    worker = threading.Thread(target=admit, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert outcome, f"admitting {path} blocked"
    error = outcome[0]
    assert isinstance(error, AdmissionError), error
    return str(error)


def refused_data(data: Any, registry: Registry, replay: RunMode, **options: Any) -> str:
    with pytest.raises(AdmissionError) as refused:
        admit_data(data, registry, replay, source=SOURCE, **options)
    return str(refused.value)


# --- what the path is ----------------------------------------------------------------


def test_a_directory_is_refused(tmp_path: Path, registry: Registry, replay: RunMode) -> None:
    path = tmp_path / "case.json"
    path.mkdir()
    assert refused_file(path, registry, replay) == f"{path}: is a directory, not a fixture file"


def test_a_link_to_nothing_is_refused(tmp_path: Path, registry: Registry, replay: RunMode) -> None:
    path = tmp_path / "case.json"
    path.symlink_to(tmp_path / "gone.json")
    assert refused_file(path, registry, replay) == (
        f"{path}: cannot be read: no such file (dangling link?)"
    )


def test_a_link_loop_is_refused_with_the_system_s_reason(
    tmp_path: Path, registry: Registry, replay: RunMode
) -> None:
    path = tmp_path / "case.json"
    path.symlink_to(path)
    assert refused_file(path, registry, replay) == (
        f"{path}: cannot be read: Too many levels of symbolic links"
    )


def test_a_pipe_with_no_writer_is_refused_at_once(
    tmp_path: Path, registry: Registry, replay: RunMode
) -> None:
    path = tmp_path / "case.json"
    os.mkfifo(path)
    assert refused_file(path, registry, replay) == (
        f"{path}: is not a regular file (a pipe, socket or device)"
    )


def test_a_socket_is_refused(tmp_path: Path, registry: Registry, replay: RunMode) -> None:
    path = tmp_path / "s.json"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        assert refused_file(path, registry, replay) == (
            f"{path}: is not a regular file (a pipe, socket or device)"
        )


def test_a_link_to_a_device_is_refused(tmp_path: Path, registry: Registry, replay: RunMode) -> None:
    path = tmp_path / "case.json"
    path.symlink_to("/dev/zero")
    assert refused_file(path, registry, replay) == (
        f"{path}: is not a regular file (a pipe, socket or device)"
    )


def test_a_file_one_byte_over_64_mib_is_refused_unread(
    tmp_path: Path, registry: Registry, replay: RunMode
) -> None:
    limit = 64 * 1024 * 1024
    assert limit == admission.MAX_FIXTURE_BYTES
    over = tmp_path / "over.json"
    with over.open("wb") as handle:  # sparse: no 64 MiB written
        handle.truncate(limit + 1)
    assert refused_file(over, registry, replay) == (
        f"{over}: larger than 64 MiB: too big to be a fixture"
    )


def test_a_file_of_exactly_64_mib_is_read(
    tmp_path: Path, registry: Registry, replay: RunMode
) -> None:
    text = json.dumps(echo_case())
    exact = tmp_path / "exact.json"
    with exact.open("wb") as handle:
        handle.write(text.encode())
        handle.write(b" " * 1024)
        handle.truncate(admission.MAX_FIXTURE_BYTES)  # NUL bytes after the spaces
    message = refused_file(exact, registry, replay)
    assert message.startswith(f"{exact}: not valid JSON: Extra data (line 1, column ")


def test_a_fixture_is_read_whole(tmp_path: Path, registry: Registry, replay: RunMode) -> None:
    path = tmp_path / "case.json"
    path.write_text(json.dumps(echo_case()) + " " * 100_000, encoding="utf-8")
    assert admit_file(path, registry, replay).name == "echo-hello"


def test_bytes_that_are_not_utf8_are_refused_with_the_offset(
    tmp_path: Path, registry: Registry, replay: RunMode
) -> None:
    path = tmp_path / "case.json"
    path.write_bytes(b'{"model_name": "\xff"}')
    assert refused_file(path, registry, replay) == (
        f"{path}: not UTF-8 text (invalid byte at offset 16)"
    )


def test_the_source_names_the_file_in_messages(
    tmp_path: Path, registry: Registry, replay: RunMode
) -> None:
    path = tmp_path / "case.json"
    path.write_text("[]", encoding="utf-8")
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, registry, replay, source="suite/case.json")
    assert str(refused.value) == "suite/case.json: a fixture must be a JSON object, not an array"


# --- what the document says -----------------------------------------------------------


def test_text_with_a_byte_order_mark_is_admitted(registry: Registry, replay: RunMode) -> None:
    case = admit_text("\ufeff" + json.dumps(echo_case()), registry, replay, source=SOURCE)
    assert (case.source, case.name) == (SOURCE, "echo-hello")


def test_not_json_is_refused_with_the_parser_s_position(
    registry: Registry, replay: RunMode
) -> None:
    with pytest.raises(AdmissionError) as refused:
        admit_text('{"model_name": 1, "model_name": 2}', registry, replay, source=SOURCE)
    assert str(refused.value) == f'{SOURCE}: duplicate key "model_name" at the top level'


def test_a_case_must_assert_something(registry: Registry, replay: RunMode) -> None:
    assert refused_data(echo_case(expects={}), registry, replay) == (
        f"{SOURCE}: expects: declares no expectation: a case must assert something"
    )
    assert refused_data(
        echo_case(expects={"response_contains": [], "tools_used": []}), registry, replay
    ) == (f"{SOURCE}: expects: declares nothing that would produce a check (every entry is empty)")


def test_an_empty_entry_beside_a_real_one_is_admitted(registry: Registry, replay: RunMode) -> None:
    data = echo_case(expects={"response_contains": [], "tools_used": ["echo"]})
    case = admit_data(data, registry, replay, source=SOURCE)
    assert [e.name for e in case.expectations] == ["response_contains", "tools_used"]
    assert [c.check for c in case.grade(RunRecord())] == ["tools_used: echo"]
    # In either order: the entry that produces checks may come first.
    data = echo_case(expects={"tools_used": ["echo"], "response_contains": []})
    case = admit_data(data, registry, replay, source=SOURCE)
    assert [e.name for e in case.expectations] == ["tools_used", "response_contains"]


def test_an_entry_limited_to_a_turn_past_the_last_is_refused(
    registry: Registry, replay: RunMode
) -> None:
    def saw(turn: int) -> dict[str, Any]:
        return echo_case(expects={"model_saw": [{"needle": "Echo hello", "turn": turn}]})

    assert refused_data(saw(1), registry, replay) == (
        f"{SOURCE}: expects.model_saw[0].turn=1: no run reaches turn 1: the fixture has "
        "1 turn, numbered from 0"
    )
    admit_data(saw(0), registry, replay, source=SOURCE)  # the last turn is reachable


def test_an_unknown_family_lists_the_known_ones(registry: Registry, replay: RunMode) -> None:
    known = ", ".join(sorted(registry.families))
    assert refused_data(echo_case(expects={"response_contain": ["x"]}), registry, replay) == (
        f"{SOURCE}: expects.response_contain: unknown key: no such expectation family "
        f"(did you mean 'response_contains'?) (known: {known})"
    )


def test_an_unknown_family_names_the_blocked_plugins_that_may_have_it(replay: RunMode) -> None:
    registry = Registry.from_plugin_manager(
        get_plugin_manager(blocked=["response", "dispatch"], load_entry_points=False)
    )
    known = ", ".join(sorted(registry.families))
    assert refused_data(echo_case(), registry, replay) == (
        f"{SOURCE}: expects.response_contains: unknown key: no such expectation family "
        f"(known: {known}; blocked plugins: dispatch, response)"
    )


def test_a_typo_is_shown_beside_the_key_it_misspells(registry: Registry, replay: RunMode) -> None:
    data = echo_case()
    data["modle_name"] = data.pop("model_name")
    with pytest.raises(AdmissionError) as refused:
        admit_data(data, registry, replay, source=SOURCE)
    assert refused.value.lines == (
        f"{SOURCE}: model_name: required key is missing",
        f"{SOURCE}: modle_name=\"echo-hello\": unknown key (did you mean 'model_name'?)",
    )


def test_an_unknown_response_type_lists_the_types(registry: Registry, replay: RunMode) -> None:
    data = echo_case()
    data["turns"][0]["steps"][1]["response"]["type"] = "image"
    assert refused_data(data, registry, replay) == (
        f'{SOURCE}: turns[0].steps[1].response.type="image": unknown response type '
        "(expected one of: 'text', 'tool_calls', 'http_error')"
    )


def test_a_field_inside_a_tool_calls_response_is_located_past_the_tag(
    registry: Registry, replay: RunMode
) -> None:
    # The tag "tool_calls" is also a key of that response: the error is in the list.
    data = echo_case()
    data["turns"][0]["steps"][0]["response"]["tool_calls"][0]["arguments"] = []
    assert refused_data(data, registry, replay) == (
        f"{SOURCE}: turns[0].steps[0].response.tool_calls[0].arguments: "
        "must be an object, not an array"
    )


def test_a_missing_field_of_a_text_response_is_named(registry: Registry, replay: RunMode) -> None:
    data = echo_case()
    del data["turns"][0]["steps"][1]["response"]["content"]
    assert refused_data(data, registry, replay) == (
        f"{SOURCE}: turns[0].steps[1].response.content: required key is missing"
    )


def test_the_mode_refuses_with_the_field_it_names(registry: Registry, replay: RunMode) -> None:
    data = echo_case()
    data["turns"][0]["steps"] = []
    assert refused_data(data, registry, replay) == (
        f"{SOURCE}: turns[0].steps: replay needs at least one scripted step per turn"
    )


class Skeptic:
    """An agent under test that cannot certify ``tools_used`` (only ``admit`` and
    ``unobservable`` are asked)."""

    unobservable: Mapping[str, str] = {}

    def admit(self, trace: LlmTrace) -> Iterable[Problem]:
        if "tools_used" in trace.expects:
            yield Problem(("expects", "tools_used"), "agent 'skeptic' cannot certify this family")


def test_the_agent_refuses_what_it_cannot_certify(registry: Registry, replay: RunMode) -> None:
    data = echo_case(expects={"tools_used": ["echo"]})
    assert refused_data(data, registry, replay, agent=Skeptic()) == (
        f"{SOURCE}: expects.tools_used: agent 'skeptic' cannot certify this family"
    )


def test_an_agent_that_has_no_objection_admits(registry: Registry, replay: RunMode) -> None:
    case = admit_data(echo_case(), registry, replay, source=SOURCE, agent=Skeptic())
    assert case.name == "echo-hello"


class Blind:
    """An agent under test that cannot observe the results its tools return."""

    label = "blind"
    unobservable: Mapping[str, str] = {"results": "it never shows them"}

    def admit(self, trace: LlmTrace) -> Iterable[Problem]:
        return ()


@pytest.mark.parametrize(
    ("expects", "refused"),
    [
        ({"tool_results_contain": [{"tool": "echo", "needle": "hello"}]}, "tool_results_contain"),
        ({"tools_used": ["echo"], "response_contains": ["hello"]}, None),
    ],
    ids=["reads-results", "reads-others"],
)
def test_an_entry_reading_what_the_agent_cannot_observe_is_refused_with_its_reason(
    expects: dict[str, Any], refused: str | None, registry: Registry, replay: RunMode
) -> None:
    data = echo_case(expects=expects)
    if refused is None:
        assert admit_data(data, registry, replay, source=SOURCE, agent=Blind()).expectations
        return
    assert refused_data(data, registry, replay, agent=Blind()) == (
        f"{SOURCE}: expects.{refused}: agent 'blind' cannot certify this family: "
        "it never shows them"
    )


class Coder:
    """An agent under test whose model writes code that calls the tools."""

    label = "coder"
    unobservable: Mapping[str, str] = {}

    def __init__(self, model_calls: bool) -> None:
        self.model_calls = model_calls

    def admit(self, trace: LlmTrace) -> Iterable[Problem]:
        return ()


def test_a_scripted_result_no_scripted_call_reaches_is_refused_unless_code_makes_the_calls(
    registry: Registry, replay: RunMode
) -> None:
    data = echo_case(expects={"response_contains": ["hello"]})
    data["tool_results"] = {"city_lookup": [{"result": "Paris, France"}]}
    unreached = (
        f"{SOURCE}: tool_results.city_lookup[0]: no scripted call reaches this result: the "
        "steps call 'city_lookup' 0 times"
    )
    assert refused_data(data, registry, replay) == unreached
    assert refused_data(data, registry, replay, agent=Coder(model_calls=True)) == unreached
    case = admit_data(data, registry, replay, source=SOURCE, agent=Coder(model_calls=False))
    assert case.trace.tool_results is not None


# --- a plugin family that breaks its contract ------------------------------------------


class Broken(Family[list[str]]):
    """Fails in the way its ``how`` says: in rules, in grading, or by grading nothing."""

    params = list[str]

    def __init__(self, name: str, how: str) -> None:
        self.name = name  # type: ignore[misc]
        self.how = how

    def rules(self, params: list[str], expects: Mapping[str, Any]) -> Iterable[Problem]:
        if self.how == "rules":
            raise TypeError("oops in rules")
        if "bad" in params:
            yield Problem((params.index("bad"),), "is bad")

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        if self.how == "grade" and run.calls:
            raise ValueError("oops in grade")
        if self.how == "nothing":
            return []
        return [CheckResult(f"{self.name}: {p}", True, "fine") for p in params]


@pytest.fixture(scope="module")
def plugged() -> Registry:
    class Plugin:
        @hookimpl
        def zeroclaw_eval_register_families(self, register: Callable[[Family[Any]], None]) -> None:
            for how in ("rules", "grade", "nothing", "fine"):
                register(Broken(how, how))

    pm = get_plugin_manager(load_entry_points=False)
    pm.register(Plugin(), name="acme")
    return Registry.from_plugin_manager(pm)


def test_a_family_that_raises_during_admission_is_the_plugin_s_defect(
    plugged: Registry, replay: RunMode
) -> None:
    assert refused_data(echo_case(expects={"rules": ["x"]}), plugged, replay) == (
        f"{SOURCE}: expects.rules: family 'rules' of plugin 'acme' failed during admission: "
        "TypeError: oops in rules"
    )


def test_a_family_that_grades_nothing_for_an_entry_is_the_plugin_s_defect(
    plugged: Registry, replay: RunMode
) -> None:
    assert refused_data(echo_case(expects={"nothing": ["x"]}), plugged, replay) == (
        f"{SOURCE}: expects.nothing: family 'nothing' of plugin 'acme' returned no check for a "
        "declared entry: a defect of that plugin (grade() must return one check per entry), "
        "not of this fixture"
    )


def test_a_family_s_own_problem_is_placed_under_its_entry(
    plugged: Registry, replay: RunMode
) -> None:
    assert refused_data(echo_case(expects={"fine": ["ok", "bad"]}), plugged, replay) == (
        f'{SOURCE}: expects.fine[1]="bad": is bad'
    )


def test_a_family_that_raises_while_grading_fails_its_check_not_the_suite(
    plugged: Registry, replay: RunMode
) -> None:
    data = echo_case(expects={"grade": ["x"], "fine": ["y"]})
    case = admit_data(data, plugged, replay, source=SOURCE)
    record = RunRecord(["done"], [RecordedCall(0, "c1", "echo", {}, "hi", True)])
    assert case.grade(record) == (
        CheckResult(
            "grade",
            False,
            "family 'grade' of plugin 'acme' raised ValueError: oops in grade",
        ),
        CheckResult("fine: y", True, "fine"),
    )


def test_a_file_that_says_it_is_empty_is_read_to_its_end(
    tmp_path: Path, registry: Registry, replay: RunMode
) -> None:
    # A /proc file is a regular file of size 0 with content: what is read past the
    # size fstat gave is kept, as for a fixture that grew since. Read whole, this
    # one ("<pid> (<name>) ...") is a number and more; cut to its size, it would
    # be nothing, and to one byte a number alone.
    path = tmp_path / "case.json"
    path.symlink_to(f"/proc/{os.getpid()}/stat")
    message = refused_file(path, registry, replay)
    column = len(str(os.getpid())) + 2
    assert message == f"{path}: not valid JSON: Extra data (line 1, column {column})"


def test_a_file_is_refused_by_the_agent_it_is_admitted_for(
    tmp_path: Path, registry: Registry, replay: RunMode
) -> None:
    path = tmp_path / "case.json"
    path.write_text(json.dumps(echo_case(expects={"tools_used": ["echo"]})), encoding="utf-8")
    with pytest.raises(AdmissionError) as refused:
        admit_file(path, registry, replay, agent=Skeptic())
    assert str(refused.value) == (
        f"{path}: expects.tools_used: agent 'skeptic' cannot certify this family"
    )


def test_a_file_that_fails_while_read_is_refused_with_the_system_s_reason(
    tmp_path: Path, registry: Registry, replay: RunMode
) -> None:
    # A process's memory file opens as a regular file, and its first read fails.
    path = tmp_path / "case.json"
    path.symlink_to(f"/proc/{os.getpid()}/mem")
    assert refused_file(path, registry, replay) == f"{path}: cannot be read: Input/output error"


@pytest.mark.parametrize("over", [1, 0], ids=["one-byte-over", "at-the-limit"])
def test_a_file_that_grows_past_the_limit_while_read_is_refused(
    tmp_path: Path,
    registry: Registry,
    replay: RunMode,
    monkeypatch: pytest.MonkeyPatch,
    over: int,
) -> None:
    # A /proc file's size reads 0 and it has more: as for a file that grew since
    # its size was taken, reading goes on, and what was read is held to the limit
    # (here lowered to the file's length, which no fixture on disk can stage).
    proc = Path(f"/proc/{os.getpid()}/cmdline")
    length = len(proc.read_bytes())  # this process's command line: it does not change
    monkeypatch.setattr(admission, "MAX_FIXTURE_BYTES", length - over)
    path = tmp_path / "case.json"
    path.symlink_to(proc)
    message = refused_file(path, registry, replay)
    if over:
        assert message == f"{path}: larger than 0 MiB: too big to be a fixture"
    else:
        assert message.startswith(f"{path}: not valid JSON")


# --- locating an error in the document -------------------------------------------------


def test_a_key_named_like_the_response_type_is_not_taken_for_the_tag(
    registry: Registry, replay: RunMode
) -> None:
    # pydantic puts the tag "text" into the location, then the key "text" follows.
    data = echo_case()
    data["turns"][0]["steps"][1]["response"]["text"] = 1
    assert refused_data(data, registry, replay) == (
        f"{SOURCE}: turns[0].steps[1].response.text=1: unknown key"
    )


def test_a_top_level_type_key_is_not_taken_for_a_tag(registry: Registry, replay: RunMode) -> None:
    # The root of a fixture is no union: its keys are never a tag.
    data = echo_case(type="turns")
    del data["turns"][0]["user_input"]
    with pytest.raises(AdmissionError) as refused:
        admit_data(data, registry, replay, source=SOURCE)
    assert refused.value.lines == (
        f"{SOURCE}: turns[0].user_input: required key is missing",
        f'{SOURCE}: type="turns": unknown key',
    )


class Typed(Params):
    """Parameters with a ``type`` key of their own: no union, so never a tag."""

    type: str
    count: int


def _reshaping(name: str, reshape: Callable[[Any], Any], params: Any) -> Family[Any]:
    """A plugin family whose parameters are reshaped before they are validated, so
    that pydantic's locations no longer follow the document."""

    class Reshaping(Family[Any]):
        def grade(self, params: Any, run: RunRecord) -> list[CheckResult]:
            return [CheckResult(self.name, True, "graded")]

    Reshaping.name = name
    Reshaping.params = Annotated[params, BeforeValidator(reshape)]
    return Reshaping()


@pytest.fixture(scope="module")
def reshaped() -> Registry:
    families = [
        _reshaping("pairs", lambda v: dict(v) if isinstance(v, list) else v, dict[str, int]),
        _reshaping("padded", lambda v: [*v, "x"] if isinstance(v, list) else v, list[int]),
        _reshaping("words", lambda v: v.split() if isinstance(v, str) else v, list[int]),
        _reshaping("typed", lambda v: v, list[Typed]),
    ]

    class Plugin:
        @hookimpl
        def zeroclaw_eval_register_families(self, register: Callable[[Family[Any]], None]) -> None:
            for family in families:
                register(family)

    pm = get_plugin_manager(load_entry_points=False)
    pm.register(Plugin(), name="shapes")
    return Registry.from_plugin_manager(pm)


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        ({"pairs": [["a", "x"]]}, "expects.pairs.a: input should be a valid integer"),
        ({"padded": [1]}, "expects.padded[1]: input should be a valid integer"),
        ({"words": "ab"}, "expects.words[0]: input should be a valid integer"),
        (
            {"typed": [{"type": "count", "count": "2"}]},
            'expects.typed[0].count="2": must be an integer, not a string',
        ),
    ],
    ids=["key-into-a-list", "index-past-the-end", "index-into-a-string", "type-names-a-key"],
)
def test_a_location_the_document_does_not_have_is_named_without_a_value(
    reshaped: Registry, replay: RunMode, entry: dict[str, Any], line: str
) -> None:
    assert refused_data(echo_case(expects=entry), reshaped, replay) == f"{SOURCE}: {line}"
