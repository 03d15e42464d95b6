"""The exact outcome of drift for each setting, in process.

A fixture storing the requests it answered is compared with hand-built live
requests: which steps are compared (only those storing a request, each with its
own live request), what ``fail`` and ``warn`` add, what ``off`` and a case
storing nothing add (nothing), and that both the configuration's and the
fixture's ``drift_ignore`` paths are left out.
"""

from __future__ import annotations

from typing import Any

from zeroclaw_eval.case.fixture import LlmTrace
from zeroclaw_eval.config import EvalConfig
from zeroclaw_eval.grading.record import ModelRequest, RunRecord
from zeroclaw_eval.run.drift import drift_outcome, find_drift


def live(turn: int, step: int, text: str, temperature: float = 0.0) -> ModelRequest:
    return ModelRequest(
        turn, step, [{"role": "user", "content": text}], [], {"temperature": temperature}
    )


def stored(text: str, temperature: float = 0.0) -> dict[str, Any]:
    return {
        "history": 0,
        "messages": [{"role": "user", "content": text}],
        "tools": {},
        "settings": {"temperature": temperature},
    }


def answer(content: str, request: dict[str, Any] | None) -> dict[str, Any]:
    step: dict[str, Any] = {"response": {"type": "text", "content": content}}
    if request is not None:
        step["request"] = request
    return step


def trace(*turns: list[dict[str, Any]], ignore: list[str] | None = None) -> LlmTrace:
    data: dict[str, Any] = {
        "model_name": "drifting",
        "turns": [{"user_input": f"input {n}", "steps": steps} for n, steps in enumerate(turns)],
        "expects": {"response_contains": ["a"]},
    }
    if ignore is not None:
        data["drift_ignore"] = ignore
    return LlmTrace.model_validate(data)


def config(drift: str, ignore: tuple[str, ...] = ()) -> EvalConfig:
    return EvalConfig.model_validate({"drift": drift, "drift_ignore": list(ignore)})


def outcome(
    case: LlmTrace, run: RunRecord, drift: str = "fail", ignore: tuple[str, ...] = ()
) -> Any:
    checks, warnings = drift_outcome(case, run, config(drift, ignore))
    return [(check.check, check.passed, check.detail) for check in checks], list(warnings)


RECORDED = trace([answer("a", stored("one"))], [answer("b", stored("two"))])
AS_RECORDED = RunRecord(requests=[live(0, 0, "one"), live(1, 0, "two")])
CHANGED = RunRecord(requests=[live(0, 0, "one"), live(1, 0, "three")])

CHANGED_DIFF = 'messages.0.content: "two" -> "three"'


def test_requests_as_recorded_pass_one_check_counting_them() -> None:
    assert outcome(RECORDED, AS_RECORDED) == (
        [("drift: 2 recorded requests", True, "every live request is as recorded")],
        [],
    )
    one = trace([answer("a", stored("one"))])
    assert outcome(one, AS_RECORDED) == (
        [("drift: 1 recorded request", True, "every live request is as recorded")],
        [],
    )


def test_a_changed_request_fails_under_fail_naming_turn_step_and_diff() -> None:
    [(check, passed, detail)], warnings = outcome(RECORDED, CHANGED)
    assert (check, passed, warnings) == ("drift: turn 1, step 0", False, [])
    assert detail == CHANGED_DIFF


def test_a_changed_request_only_warns_under_warn() -> None:
    checks, [warning] = outcome(RECORDED, CHANGED, "warn")
    assert checks == []
    assert warning == "drift at turn 1, step 0: " + CHANGED_DIFF
    assert outcome(RECORDED, AS_RECORDED, "warn") == ([], [])


def test_off_compares_nothing() -> None:
    assert outcome(RECORDED, CHANGED, "off") == ([], [])
    assert outcome(RECORDED, RunRecord(), "off") == ([], [])


def test_a_case_storing_no_request_is_never_compared() -> None:
    written = trace([answer("a", None)], [answer("b", None)])
    assert find_drift(written, CHANGED) == (0, [])
    assert outcome(written, CHANGED) == ([], [])
    assert outcome(written, RunRecord(), "warn") == ([], [])


def test_only_steps_storing_a_request_are_compared_and_every_one_is() -> None:
    # The first step stores nothing: the later ones are still compared.
    partly = trace([answer("a", None), answer("b", stored("one"))], [answer("c", stored("two"))])
    run = RunRecord(requests=[live(0, 0, "zero"), live(0, 1, "one"), live(1, 0, "changed")])
    compared, drifts = find_drift(partly, run)
    assert compared == 2
    assert [drift.where for drift in drifts] == ["turn 1, step 0"]
    run = RunRecord(requests=[live(0, 0, "zero"), live(0, 1, "one"), live(1, 0, "two")])
    assert outcome(partly, run) == (
        [("drift: 2 recorded requests", True, "every live request is as recorded")],
        [],
    )


def test_a_step_without_its_live_request_drifts_and_the_rest_are_still_compared() -> None:
    run = RunRecord(requests=[live(1, 0, "three")])
    checks, _ = outcome(RECORDED, run)
    assert [check[:2] for check in checks] == [
        ("drift: turn 0, step 0", False),
        ("drift: turn 1, step 0", False),
    ]
    assert checks[0][2] == ("no live request was recorded for this step (the agent records none)")


def test_the_first_live_request_of_a_step_is_the_one_compared() -> None:
    run = RunRecord(requests=[live(0, 0, "one"), live(0, 0, "other"), live(1, 0, "two")])
    assert outcome(RECORDED, run)[0][0][1] is True


def test_the_configured_ignored_paths_are_not_compared() -> None:
    warmer = RunRecord(requests=[live(0, 0, "one", 0.5), live(1, 0, "two", 0.5)])
    assert outcome(RECORDED, warmer)[0][0][1] is False
    assert outcome(RECORDED, warmer, ignore=("settings.temperature",))[0] == [
        ("drift: 2 recorded requests", True, "every live request is as recorded")
    ]


def test_the_fixtures_ignored_paths_are_not_compared_beside_the_configured_ones() -> None:
    ignoring = trace(
        [answer("a", stored("one"))], [answer("b", stored("two"))], ignore=["messages.*.content"]
    )
    warmer = RunRecord(requests=[live(0, 0, "one", 0.5), live(1, 0, "three", 0.5)])
    assert outcome(ignoring, warmer, ignore=("settings.temperature",))[0][0][1] is True
    assert outcome(ignoring, warmer)[0][0][1] is False


def test_one_change_reaching_several_steps_is_one_check_naming_each() -> None:
    hotter = RunRecord(requests=[live(0, 0, "one", 0.5), live(1, 0, "two", 0.5)])
    assert outcome(RECORDED, hotter) == (
        [("drift: turn 0, step 0; turn 1, step 0", False, "settings.temperature: 0.0 -> 0.5")],
        [],
    )
    both = trace([answer("a", stored("one")), answer("b", stored("one"))])
    steps = RunRecord(requests=[live(0, 0, "one", 0.5), live(0, 1, "one", 0.5)])
    assert outcome(both, steps)[0][0][0] == "drift: turn 0, steps 0 and 1"
    _, warnings = outcome(RECORDED, hotter, "warn")
    assert warnings == ["drift at turn 0, step 0; turn 1, step 0: settings.temperature: 0.0 -> 0.5"]
