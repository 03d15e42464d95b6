"""The built-in expectation families (SPEC §6), graded through admitted cases.

Each family gets a run that passes and a run that fails; a failing check's detail
must show what was observed. Runs are built as ``RunRecord`` values, the only
thing grading may look at, except where the real loop is the point.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zeroclaw_eval import (
    CheckResult,
    Family,
    ModelRequest,
    RecordedCall,
    Registry,
    RunMode,
    RunRecord,
    admit_file,
    get_plugin_manager,
    hookimpl,
    run_suite,
)
from zeroclaw_eval.agents.bridged import OfferedTool
from zeroclaw_eval.config import Rate
from zeroclaw_eval.grading.record import RequestUsage
from zeroclaw_eval.protocol import Usage

from .conftest import echo_case


def call(
    name: str, message: str = "hello", result: str | None = None, ok: bool = True
) -> RecordedCall:
    return RecordedCall(0, f"id-{name}", name, {"message": message}, result or message, ok)


def run(*responses: str, calls: tuple[RecordedCall, ...] = ()) -> RunRecord:
    return RunRecord(responses=list(responses), calls=list(calls))


def asked(*messages: dict[str, Any], tools: tuple[str, ...] = ("echo",)) -> RunRecord:
    """A run whose one model request sent ``messages`` and offered ``tools``."""
    offered = [OfferedTool(name, f"the {name} tool", {"type": "object"}) for name in tools]
    return RunRecord(responses=["x"], requests=[ModelRequest(0, 0, list(messages), offered)])


HI = {"role": "user", "content": "hi"}

RATE = Rate(input=2.0, output=8.0, checked="2026-01-15")


def metered(*usages: Usage | None, model: str = "m") -> RunRecord:
    """A run whose requests' replies reported ``usages`` (``None``: no usage), priced at
    :data:`RATE` for model ``m``."""
    return RunRecord(
        responses=["x"],
        usage=[RequestUsage(0, step, model, usage) for step, usage in enumerate(usages)],
        rates={"m": RATE},
    )


@pytest.fixture
def grade(
    write_case: Callable[..., Path], registry: Registry, replay: RunMode
) -> Callable[[dict[str, Any], RunRecord], list[CheckResult]]:
    """Admit a case with the given ``expects`` and grade it against a run."""

    def grade(expects: dict[str, Any], record: RunRecord) -> list[CheckResult]:
        # Token and cost budgets read usage, which replay refuses: admitted as live cases.
        mode = registry.modes["live"].obj if USAGE_FAMILIES & expects.keys() else replay
        case = admit_file(write_case(echo_case(expects=expects)), registry, mode)
        return list(case.grade(record))

    return grade


USAGE_FAMILIES = {
    "max_input_tokens",
    "max_cached_input_tokens",
    "max_reasoning_tokens",
    "max_output_tokens",
    "max_total_tokens",
    "max_cost",
}

ECHO = call("echo")
SHELL_FAILED = call("shell", result="unknown tool 'shell'", ok=False)

# id -> (expects, a run that passes, a run that fails, the failing check, its detail)
FAMILIES: dict[str, tuple[dict[str, Any], RunRecord, RunRecord, str, str]] = {
    "response_contains": (
        {"response_contains": ["hello"]},
        run("hello there"),
        run("hello there", "goodbye"),  # only the last turn's text counts
        'response_contains: "hello"',
        'not found: the final response is "goodbye"',
    ),
    "response_contains_without_response": (
        {"response_contains": ["hello"]},
        run("hello"),
        run(),
        'response_contains: "hello"',
        "not found: there is no final response",
    ),
    "response_not_contains": (
        {"response_not_contains": ["secret"], "exact_tool_calls": 0},
        run("nothing to see"),
        run("the secret is out"),
        'response_not_contains: "secret"',
        'present at offset 4: the final response is "the secret is out"',
    ),
    "response_matches": (
        {"response_matches": [r"#\d{3}\b"]},
        run("ticket #123 opened"),
        run("ticket #12 opened"),
        'response_matches: "#\\\\d{3}\\\\b"',
        'no match: the final response is "ticket #12 opened"',
    ),
    "tools_used": (
        {"tools_used": ["echo"]},
        run("x", calls=(ECHO,)),
        run("x", calls=(SHELL_FAILED,)),
        "tools_used: echo",
        "never called (1 call: shell)",
    ),
    "tools_not_used": (
        {"tools_not_used": ["shell"], "tools_used": ["echo"]},
        run("x", calls=(ECHO,)),
        run("x", calls=(ECHO, SHELL_FAILED)),
        "tools_not_used: shell",
        "called 1 time (2 calls: echo, shell)",
    ),
    "max_tool_calls": (
        {"max_tool_calls": 1, "response_contains": ["x"]},
        run("x", calls=(ECHO,)),
        run("x", calls=(ECHO, ECHO)),
        "max_tool_calls: 1",
        "observed 2 calls: echo, echo",
    ),
    "max_tool_calls_0": (
        {"max_tool_calls": 0, "response_contains": ["x"]},
        run("x"),
        run("x", calls=(ECHO,)),
        "max_tool_calls: 0",
        "observed 1 call: echo",
    ),
    "min_tool_calls": (
        {"min_tool_calls": 2},
        run("x", calls=(ECHO, SHELL_FAILED, ECHO)),
        run("x", calls=(ECHO,)),
        "min_tool_calls: 2",
        "observed 1 call: echo",
    ),
    "exact_tool_calls_too_few": (
        {"exact_tool_calls": 2},
        run("x", calls=(ECHO, ECHO)),
        run("x"),
        "exact_tool_calls: 2",
        "observed no tool was called",
    ),
    "exact_tool_calls_too_many": (
        {"exact_tool_calls": 2},
        run("x", calls=(ECHO, SHELL_FAILED)),
        run("x", calls=(ECHO, ECHO, ECHO)),
        "exact_tool_calls: 2",
        "observed 3 calls: echo, echo, echo",
    ),
    "all_tools_succeeded_true": (
        {"all_tools_succeeded": True, "exact_tool_calls": 2},
        run("x", calls=(ECHO, ECHO)),
        run("x", calls=(ECHO, SHELL_FAILED)),
        "all_tools_succeeded: true",
        "shell failed: unknown tool 'shell'",
    ),
    "all_tools_succeeded_false": (
        {"all_tools_succeeded": False},
        run("x", calls=(ECHO, SHELL_FAILED)),
        run("x", calls=(ECHO,)),
        "all_tools_succeeded: false",
        "every call succeeded (1 call: echo)",
    ),
    "tool_arguments_contain": (
        {"tool_arguments_contain": [{"tool": "echo", "needle": '"message": "hello"'}]},
        run("x", calls=(ECHO,)),
        run("x", calls=(call("echo", "bye"),)),
        'tool_arguments_contain: echo "\\"message\\": \\"hello\\""',
        'not found in the arguments: observed "{\\"message\\": \\"bye\\"}"',
    ),
    "tool_results_contain": (
        {"tool_results_contain": [{"tool": "echo", "needle": "hello"}]},
        run("x", calls=(call("echo", "x", result="hello back"),)),
        run("x", calls=(call("echo", "hello", result="(empty)"),)),
        'tool_results_contain: echo "hello"',
        'not found in the result: observed "(empty)"',
    ),
    "tool_results_contain_never_called": (
        {"tool_results_contain": [{"tool": "echo", "needle": "hello"}]},
        run("x", calls=(ECHO,)),
        run("x", calls=(SHELL_FAILED,)),
        'tool_results_contain: echo "hello"',
        "echo was never called (calls: shell)",
    ),
    "model_saw": (
        {"model_saw": [{"needle": "hello", "role": "tool"}]},
        asked(HI, {"role": "tool", "tool_call_id": "c1", "content": "hello"}),
        asked({"role": "user", "content": "hello"}),
        'model_saw: "hello" at role tool',
        "never shown in 1 request; the last (turn 0 step 0) ended with: nothing",
    ),
    "model_never_saw": (
        {"model_never_saw": ["sk-"]},
        asked(HI),
        asked({"role": "user", "content": "my key is sk-1"}),
        'model_never_saw: "sk-"',
        'shown at turn 0 step 0: "my key is sk-1"',
    ),
    "tools_offered": (
        {"tools_offered": {"exactly": ["echo"]}},
        asked(HI),
        asked(HI, tools=("echo", "shell")),
        "tools_offered: exactly echo",
        "turn 0 step 0 offered echo, shell: also offered shell",
    ),
    "tool_results_contain_error_text": (
        {"tool_results_contain": [{"tool": "shell", "needle": "unknown tool 'shell'"}]},
        run("x", calls=(SHELL_FAILED,)),
        run("x", calls=(call("shell", result="ran"),)),
        "tool_results_contain: shell \"unknown tool 'shell'\"",
        'not found in the result: observed "ran"',
    ),
    "tool_sequence": (
        {"tool_sequence": [{"mode": "in_order", "steps": [{"tool": "echo"}, {"tool": "shell"}]}]},
        run("x", calls=(ECHO, SHELL_FAILED)),
        run("x", calls=(SHELL_FAILED, ECHO)),
        "tool_sequence: in_order echo -> shell",
        "step 1 shell: no call paired (shell[0] (turn 0, call 0) matches, but it is out of "
        "order with the steps paired around it); paired: step 0 echo -> echo[0] (turn 0, call 1)",
    ),
    "tool_calls_forbidden": (
        {"tool_calls_forbidden": [{"tool": "echo", "arguments": {"message": {"$icase": "RM"}}}]},
        run("x", calls=(ECHO, call("echo", "rmx"))),
        run("x", calls=(ECHO, call("echo", "rm"))),
        'tool_calls_forbidden: echo {"message":{"$icase":"RM"}}',
        '1 forbidden call: echo[1] (turn 0, call 1) with /message "rm" (forbidden: "RM" in any '
        "case)",
    ),
    "tool_call_counts": (
        {"tool_call_counts": {"echo": {"max": 1}}},
        run("x", calls=(ECHO, SHELL_FAILED)),
        run("x", calls=(ECHO, ECHO)),
        "tool_call_counts: echo at most 1",
        "2 calls to echo (2 calls: echo, echo)",
    ),
    "tool_call_status": (
        {"tool_call_status": [{"tool": "shell", "status": "failed"}]},
        run("x", calls=(ECHO, SHELL_FAILED)),
        run("x", calls=(call("shell", result="ran"),)),
        "tool_call_status: shell failed",
        'shell[0] (turn 0, call 0) succeeded: "ran"',
    ),
    "max_request_chars": (
        {"max_request_chars": 40},
        asked(HI),  # "hi", and echo: its name, description and schema, 36 characters
        asked(HI, tools=("echo", "shell")),
        "max_request_chars: 40",
        "1 request over 40 characters (turn 0 request 0: 72)",
    ),
    "max_total_request_chars": (
        {"max_total_request_chars": 36},
        asked(HI),
        asked(HI, tools=("echo", "shell")),
        "max_total_request_chars: 36",
        "72 characters over 1 request, more than 36",
    ),
    "max_input_tokens": (
        {"max_input_tokens": 100},
        metered(Usage(input_tokens=60), Usage(input_tokens=40)),
        metered(Usage(input_tokens=60), Usage(input_tokens=41)),
        "max_input_tokens: 100",
        "101 input tokens over 2 requests, more than 100 input tokens",
    ),
    "max_input_tokens_without_usage": (
        {"max_input_tokens": 100},
        metered(Usage(input_tokens=100)),
        metered(Usage(input_tokens=60), None),
        "max_input_tokens: 100",
        "n/a: turn 0 request 1: no usage reported (the rest reported 60 input tokens)",
    ),
    "max_cached_input_tokens": (
        {"max_cached_input_tokens": 10},
        metered(Usage(cached_input_tokens=10)),
        metered(Usage(cached_input_tokens=11)),
        "max_cached_input_tokens: 10",
        "11 cached input tokens over 1 request, more than 10 cached input tokens",
    ),
    "max_reasoning_tokens": (
        {"max_reasoning_tokens": 10},
        metered(Usage(reasoning_tokens=0)),
        metered(Usage(output_tokens=5)),
        "max_reasoning_tokens: 10",
        "n/a: turn 0 request 0: no reasoning tokens reported (the rest reported 0 reasoning "
        "tokens)",
    ),
    "max_output_tokens": (
        {"max_output_tokens": 10},
        metered(Usage(output_tokens=10)),
        metered(Usage(output_tokens=11)),
        "max_output_tokens: 10",
        "11 output tokens over 1 request, more than 10 output tokens",
    ),
    "max_total_tokens": (
        {"max_total_tokens": 10},
        metered(Usage(input_tokens=5, output_tokens=5)),
        metered(Usage(input_tokens=6, output_tokens=5)),
        "max_total_tokens: 10",
        "11 tokens (input and output) over 1 request, more than 10 tokens (input and output)",
    ),
    "max_cost": (
        {"max_cost": 1},
        # 500,000 input tokens at 2.0 the million, no cache: 1.0 exactly
        metered(Usage(input_tokens=500_000, output_tokens=0, cached_input_tokens=0)),
        metered(Usage(input_tokens=1, output_tokens=1), model="other"),
        "max_cost: 1",
        "n/a: turn 0 request 0: no rate for model 'other' (the rest reported 0)",
    ),
    "response_grounded": (
        {"response_grounded": {"kinds": ["id"]}},
        run("ticket ZC-1024", calls=(call("echo", "ZC-1024"),)),
        run("ticket ZC-1025", calls=(call("echo", "ZC-1024"),)),
        "response_grounded: id",
        '1 value of 1 in no tool result nor user input: id ZC-1025 (nearest: "ZC-1024" in '
        "echo[0] (turn 0, call 0))",
    ),
    "response_claims_backed": (
        {"response_claims_backed": [{"claim": "echoed", "tool": "echo"}]},
        run("echoed", calls=(ECHO,)),
        run("echoed", calls=(call("echo", ok=False, result="tool 'echo': down"),)),
        "response_claims_backed: 'echoed' needs echo",
        "the final response claims 'echoed', but no such call succeeded: echo[0] (turn 0, "
        "call 0) failed: \"tool 'echo': down\"",
    ),
    "tool_data_flow": (
        {
            "tool_data_flow": [
                {
                    "from": {"tool": "echo", "result": "/id"},
                    "to": {"tool": "echo", "argument": "/message"},
                }
            ]
        },
        run("x", calls=(call("echo", result='{"id": "hello"}'), ECHO)),
        run("x", calls=(ECHO, call("echo", result='{"id": "hello"}'))),
        "tool_data_flow: echo /id -> echo /message",
        "the value reaches echo only before it was produced: echo[1] (turn 0, call 1) /id "
        '"hello" -> echo[0] (turn 0, call 0) /message "hello"; the consumer must come after '
        "the producer",
    ),
}


@pytest.mark.parametrize(
    ("expects", "passing", "failing", "check", "detail"), FAMILIES.values(), ids=FAMILIES.keys()
)
def test_family_passes_and_fails_showing_what_was_observed(
    expects: dict[str, Any],
    passing: RunRecord,
    failing: RunRecord,
    check: str,
    detail: str,
    grade: Callable[[dict[str, Any], RunRecord], list[CheckResult]],
) -> None:
    assert [c for c in grade(expects, passing) if not c.passed] == []
    failed = [c for c in grade(expects, failing) if not c.passed]
    # A check the evidence cannot decide says so first (n/a), and is marked undecided;
    # the trajectory score beside a sequence check is pinned in test_trajectory_score.py.
    assert [CheckResult(c.check, c.passed, c.detail, undecided=c.undecided) for c in failed] == [
        CheckResult(check, False, detail, undecided=detail.startswith("n/a: "))
    ]


def answered(*requests: ModelRequest) -> RunRecord:
    return RunRecord(responses=["x"], requests=list(requests))


def result_for(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


# Graded where no script settles the count of requests (live): in replay, admission
# refuses max_model_requests, and retry_after_respected without a Retry-After.
LIVE_FAMILIES: dict[str, tuple[dict[str, Any], RunRecord, RunRecord, str, str]] = {
    "max_model_requests": (
        {"max_model_requests": {"per_case": 1}, "response_contains": ["x"]},
        answered(ModelRequest(0, 0, [HI], [])),
        answered(ModelRequest(0, 0, [HI], []), ModelRequest(0, 1, [HI], [])),
        "max_model_requests: at most 1 per case",
        "2 requests made",
    ),
    "tool_calls_answered": (
        {"tool_calls_answered": True},
        answered(
            ModelRequest(0, 0, [HI], [], calls_sent=("c1",)),
            ModelRequest(0, 1, [HI, result_for("c1")], []),
        ),
        answered(ModelRequest(0, 0, [HI], [], calls_sent=("c1",)), ModelRequest(0, 1, [HI], [])),
        "tool_calls_answered: every tool call answered",
        "no later request showed the model a result for c1 (turn 0 step 0) (1 call handed over)",
    ),
    "retry_after_respected": (
        {"retry_after_respected": True},
        answered(
            ModelRequest(0, 0, [HI], [], retry_after=1, replied=5.0),
            ModelRequest(0, 1, [HI], [], received=6.5),
        ),
        answered(
            ModelRequest(0, 0, [HI], [], retry_after=1, replied=5.0),
            ModelRequest(0, 1, [HI], [], received=5.25),
        ),
        "retry_after_respected: waited as asked",
        "turn 0 step 0: waited 0.25s of the 1s asked",
    ),
}


@pytest.mark.parametrize(
    ("expects", "passing", "failing", "check", "detail"),
    LIVE_FAMILIES.values(),
    ids=LIVE_FAMILIES.keys(),
)
def test_family_of_a_live_run_passes_and_fails_showing_what_was_observed(
    expects: dict[str, Any],
    passing: RunRecord,
    failing: RunRecord,
    check: str,
    detail: str,
    write_case: Callable[..., Path],
    registry: Registry,
) -> None:
    live = {"model_name": "live", "turns": [{"user_input": "hi"}], "expects": expects}
    case = admit_file(write_case(live), registry, registry.modes["live"].obj)
    assert [c for c in case.grade(passing) if not c.passed] == []
    assert [c for c in case.grade(failing) if not c.passed] == [CheckResult(check, False, detail)]


def test_every_built_in_family_is_covered() -> None:
    covered = {
        key
        for table in (FAMILIES, LIVE_FAMILIES)
        for expects, *_ in table.values()
        for key in expects
    }
    built_ins = Registry.from_plugin_manager(get_plugin_manager(load_entry_points=False))
    built_in = set(built_ins.families)
    assert built_in <= covered


def test_each_entry_is_one_check_and_none_short_circuits_another(
    grade: Callable[[dict[str, Any], RunRecord], list[CheckResult]],
) -> None:
    checks = grade(
        {
            "response_contains": ["a", "b", "c"],
            "tools_used": ["echo", "shell"],
            "exact_tool_calls": 3,
        },
        run("b"),
    )
    assert [(c.check, c.passed) for c in checks] == [
        ('response_contains: "a"', False),
        ('response_contains: "b"', True),
        ('response_contains: "c"', False),
        ("tools_used: echo", False),
        ("tools_used: shell", False),
        ("exact_tool_calls: 3", False),
    ]


# --- call_index -------------------------------------------------------------------

ACROSS_TURNS = run(
    "x",
    calls=(
        RecordedCall(0, "a", "echo", {"message": "first"}, "first", True),
        RecordedCall(0, "b", "shell", {"message": "other"}, "unknown tool 'shell'", False),
        RecordedCall(1, "c", "echo", {"message": "second"}, "second", True),
    ),
)


@pytest.mark.parametrize(
    ("entry", "passed", "detail"),
    [
        ({"needle": "second"}, True, "found"),  # without call_index any call may match
        ({"needle": "first", "call_index": 0}, True, "found"),
        # 0-based among calls to that tool, across turns: the shell call does not count
        ({"needle": "second", "call_index": 1}, True, "found"),
        ({"needle": "first", "call_index": 1}, False, 'not found in the result: observed "second"'),
        ({"needle": "first", "call_index": 2}, False, "no call 2 to echo: observed 2 calls to it"),
    ],
)
def test_call_index_counts_calls_to_that_tool_across_turns(
    entry: dict[str, Any],
    passed: bool,
    detail: str,
    grade: Callable[[dict[str, Any], RunRecord], list[CheckResult]],
) -> None:
    [check] = grade({"tool_results_contain": [{"tool": "echo", **entry}]}, ACROSS_TURNS)
    assert (check.passed, check.detail) == (passed, detail)


@pytest.mark.parametrize("family", ["tool_arguments_contain", "tool_results_contain"])
def test_call_index_names_one_call_and_never_the_ones_after_it(
    family: str, grade: Callable[[dict[str, Any], RunRecord], list[CheckResult]]
) -> None:
    # Only the second call holds "second": call 0 must not find it there.
    [check] = grade({family: [{"tool": "echo", "needle": "second", "call_index": 0}]}, ACROSS_TURNS)
    assert check.passed is False
    assert "first" in check.detail


# --- needles against the dispatched JSON, through the real loop -----------------


def test_needles_match_the_dispatched_json_with_non_ascii_as_is(
    write_case: Callable[..., Path], registry: Registry
) -> None:
    message = "café 日本 👋"
    case = echo_case(
        model_name="unicode",
        expects={
            "tool_arguments_contain": [
                {"tool": "echo", "needle": '{"message": "café 日本 👋"}'},
                {"tool": "echo", "needle": "\\u00e9"},  # the escaped form was never sent
            ],
            "tool_results_contain": [{"tool": "echo", "needle": message}],
        },
    )
    case["turns"][0]["steps"][0]["response"]["tool_calls"][0]["arguments"] = {"message": message}
    report = run_suite(write_case(case).parent, registry=registry)
    checks = report.cases[0].checks
    assert [c.passed for c in checks] == [True, False, True]
    assert checks[1].detail == (
        'not found in the arguments: observed "{\\"message\\": \\"café 日本 👋\\"}"'
    )


# --- a family that raises while grading -------------------------------------------


class Explodes(Family[list[str]]):
    """Grades the empty run (as admission does) but raises on a run with calls."""

    name = "explodes"
    params = list[str]

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        if run.calls:
            raise KeyError("bug in the family")
        return [CheckResult(f"explodes: {p}", False, "no calls") for p in params]


class ExplodingPlugin:
    @hookimpl
    def zeroclaw_eval_register_families(self, register: Callable[[Family[Any]], None]) -> None:
        register(Explodes())


def test_a_family_that_raises_while_grading_is_a_failed_check_naming_family_and_plugin(
    write_case: Callable[..., Path], replay: RunMode
) -> None:
    pm = get_plugin_manager(load_entry_points=False)
    pm.register(ExplodingPlugin(), name="acme-checks")
    registry = Registry.from_plugin_manager(pm)
    path = write_case(echo_case(expects={"explodes": ["x"], "exact_tool_calls": 1}))
    checks = admit_file(path, registry, replay).grade(run("x", calls=(ECHO,)))
    assert checks == (
        CheckResult(
            "explodes",
            False,
            "family 'explodes' of plugin 'acme-checks' raised KeyError: 'bug in the family'",
        ),
        CheckResult("exact_tool_calls: 1", True, "observed 1 call: echo"),
    )
