"""The reference agent loop (SPEC §9), driven through ``Agent`` and the runner.

Providers here are real objects that record what the loop sends them; tools are
real tools registered by a plugin, as a third party would.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from zeroclaw_eval import (
    Agent,
    CaseProvider,
    EvalConfig,
    LlmTrace,
    ModelReply,
    RecordedCall,
    Registry,
    RunError,
    RunMode,
    RunRecord,
    Tool,
    ToolCallRequest,
    ToolResult,
    admit_file,
    case_workspace,
    get_plugin_manager,
    hookimpl,
    run_case,
    run_cases,
    run_suite,
)

from .conftest import echo_case

Message = dict[str, Any]


class ScriptedProvider:
    """Answers from a list of replies and keeps a copy of every conversation it was sent."""

    def __init__(self, replies: Sequence[ModelReply]) -> None:
        self.replies = list(replies)
        self.seen: list[list[Message]] = []

    def respond(self, messages: Sequence[Message], tools: Sequence[Tool]) -> ModelReply:
        self.seen.append(copy.deepcopy(list(messages)))
        return self.replies.pop(0)


def calls(*names: str, **arguments: Any) -> ModelReply:
    """A reply asking for one call per name (ids c0, c1...), all with ``arguments``."""
    return ModelReply(
        tool_calls=tuple(
            ToolCallRequest(f"c{i}", name, dict(arguments)) for i, name in enumerate(names)
        )
    )


def text(content: str) -> ModelReply:
    return ModelReply(content)


class EchoLike:
    """A minimal tool: returns ``message``."""

    description = "returns its message"
    parameters: Mapping[str, Any] = {"type": "object"}

    def __init__(self, name: str = "echo") -> None:
        self.name = name

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(str(arguments.get("message", "")))


# --- history and dispatch ---------------------------------------------------------


def test_history_carries_across_turns() -> None:
    provider = ScriptedProvider([calls("echo", message="hi"), text("said hi"), text("bye")])
    agent = Agent(provider, {"echo": EchoLike()})
    assert agent.run_turn(0, "echo hi") == "said hi"
    assert agent.run_turn(1, "and now?") == "bye"
    turn_0 = [
        {"role": "user", "content": "echo hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c0",
                    "type": "function",
                    "function": {"name": "echo", "arguments": '{"message": "hi"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c0", "content": "hi"},
    ]
    assert provider.seen == [
        turn_0[:1],
        turn_0,
        [
            *turn_0,
            {"role": "assistant", "content": "said hi"},
            {"role": "user", "content": "and now?"},
        ],
    ]
    assert agent.record.responses == ["said hi", "bye"]
    assert [(c.turn, c.name, c.result) for c in agent.record.calls] == [(0, "echo", "hi")]


def test_several_calls_in_one_response_are_dispatched_in_order() -> None:
    order: list[str] = []

    class Logged(EchoLike):
        def run(self, arguments: dict[str, Any]) -> ToolResult:
            order.append(self.name)
            return ToolResult(f"{self.name} done")

    provider = ScriptedProvider([calls("b", "a", "c"), text("ok")])
    agent = Agent(provider, {name: Logged(name) for name in "abc"})
    agent.run_turn(0, "go")
    assert order == ["b", "a", "c"]
    assert [(c.call_id, c.name) for c in agent.record.calls] == [
        ("c0", "b"),
        ("c1", "a"),
        ("c2", "c"),
    ]
    assert provider.seen[1][-3:] == [
        {"role": "tool", "tool_call_id": "c0", "content": "b done"},
        {"role": "tool", "tool_call_id": "c1", "content": "a done"},
        {"role": "tool", "tool_call_id": "c2", "content": "c done"},
    ]


def test_the_tool_gets_a_copy_so_the_record_keeps_what_crossed_the_boundary() -> None:
    class Mutating(EchoLike):
        def run(self, arguments: dict[str, Any]) -> ToolResult:
            arguments["message"] = "changed"
            return ToolResult("ok")

    agent = Agent(
        ScriptedProvider([calls("echo", message="original"), text("ok")]), {"echo": Mutating()}
    )
    agent.run_turn(0, "go")
    assert agent.record.calls[0].arguments == {"message": "original"}


class Raises(EchoLike):
    def run(self, arguments: dict[str, Any]) -> ToolResult:
        raise OSError("disk on fire")


class ReportsFailure(EchoLike):
    def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult("permission denied", success=False)


class ReturnsNumber(EchoLike):
    def run(self, arguments: dict[str, Any]) -> ToolResult:
        return 42  # type: ignore[return-value]  # a buggy tool, on purpose


class ReturnsNonTextOutput(EchoLike):
    def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(b"bytes")  # type: ignore[arg-type]  # a buggy tool, on purpose


@pytest.mark.parametrize(
    ("tools", "result"),
    [
        ({}, "unknown tool 'disk'"),
        ({"disk": Raises("disk")}, "tool 'disk' raised OSError: disk on fire"),
        ({"disk": ReportsFailure("disk")}, "tool 'disk' failed: permission denied"),
        ({"disk": ReturnsNumber("disk")}, "tool 'disk' returned int, not text"),
        ({"disk": ReturnsNonTextOutput("disk")}, "tool 'disk' returned bytes, not text"),
    ],
    ids=["unknown", "raises", "reports_failure", "returns_number", "returns_bytes"],
)
def test_a_failing_call_is_recorded_and_fed_back_naming_the_tool(
    tools: dict[str, Tool], result: str
) -> None:
    provider = ScriptedProvider([calls("disk", path="/"), text("could not")])
    agent = Agent(provider, tools)
    assert agent.run_turn(0, "wipe") == "could not"
    assert agent.record.calls == [
        RecordedCall(0, "c0", "disk", {"path": "/"}, result, succeeded=False, response=0)
    ]
    assert provider.seen[1][-1] == {"role": "tool", "tool_call_id": "c0", "content": result}
    assert agent.record.all_succeeded is False


def test_a_string_returned_by_a_tool_counts_as_success() -> None:
    class Plain(EchoLike):
        def run(self, arguments: dict[str, Any]) -> ToolResult:
            return "plain"  # type: ignore[return-value]

    agent = Agent(ScriptedProvider([calls("echo"), text("ok")]), {"echo": Plain()})
    agent.run_turn(0, "go")
    assert (agent.record.calls[0].result, agent.record.calls[0].succeeded) == ("plain", True)


# --- the tool-iteration limit -----------------------------------------------------


def test_iteration_limit_defaults_to_10_round_trips_per_turn() -> None:
    at_limit = Agent(ScriptedProvider([calls("echo")] * 10 + [text("done")]), {"echo": EchoLike()})
    assert at_limit.run_turn(0, "go") == "done"
    assert len(at_limit.record.calls) == 10

    beyond = Agent(ScriptedProvider([calls("echo")] * 11 + [text("done")]), {"echo": EchoLike()})
    with pytest.raises(RunError) as stopped:
        beyond.run_turn(3, "go")
    assert str(stopped.value) == (
        "turn 3: the model asked for tools more than max_tool_iterations=10 times in one turn"
    )
    assert len(beyond.record.calls) == 10  # the 11th request was never dispatched


def test_iteration_limit_counts_per_turn() -> None:
    script = [calls("echo"), calls("echo"), text("one"), calls("echo"), calls("echo"), text("two")]
    agent = Agent(ScriptedProvider(script), {"echo": EchoLike()}, max_tool_iterations=2)
    assert [agent.run_turn(0, "a"), agent.run_turn(1, "b")] == ["one", "two"]


def two_round_case(write_case: Callable[..., Path], name: str = "two-rounds") -> Path:
    step = echo_case()["turns"][0]["steps"]
    return write_case(
        echo_case(
            model_name=name,
            turns=[{"user_input": "twice", "steps": [step[0], step[0], step[1]]}],
            expects={"exact_tool_calls": 2},
        ),
        name=f"{name}.json",
    )


def test_iteration_limit_is_configurable_and_its_breach_is_a_run_error(
    write_case: Callable[..., Path], registry: Registry, replay: RunMode
) -> None:
    case = admit_file(two_round_case(write_case), registry, replay)
    allowed = run_case(case, replay, registry, EvalConfig(max_tool_iterations=2))
    assert allowed.passed
    refused = run_case(case, replay, registry, EvalConfig(max_tool_iterations=1))
    assert (refused.passed, refused.checks) == (False, ())
    assert refused.error == (
        "case 'two-rounds': turn 0: the model asked for tools more than "
        "max_tool_iterations=1 times in one turn"
    )


# --- one fresh agent per case -----------------------------------------------------


class Counter:
    """A stateful tool: reports how many times this instance ran."""

    name = "counter"
    description = "counts its own calls"
    parameters: Mapping[str, Any] = {"type": "object"}

    def __init__(self) -> None:
        self.count = 0

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        self.count += 1
        return ToolResult(f"count={self.count}")


class CounterPlugin:
    @hookimpl
    def zeroclaw_eval_register_tools(
        self, register: Callable[[str, Callable[[], Tool]], None]
    ) -> None:
        register("counter", Counter)


class RecordingMode(RunMode):
    """Replays the scripted steps and keeps every conversation each case's provider saw."""

    name = "recording"

    def __init__(self) -> None:
        self.seen: dict[str, list[list[Message]]] = {}

    def provider(self, trace: LlmTrace, config: EvalConfig) -> CaseProvider:
        seen = self.seen.setdefault(trace.model_name, [])
        replies = [
            ModelReply(step.response.content)
            if step.response.type == "text"
            else ModelReply(
                tool_calls=tuple(
                    ToolCallRequest(c.id, c.name, c.arguments) for c in step.response.tool_calls
                )
            )
            for turn in trace.turns
            for step in turn.steps or ()
        ]

        class Provider(CaseProvider):
            def respond(self, messages: Sequence[Message], tools: Sequence[Tool]) -> ModelReply:
                seen.append(copy.deepcopy(list(messages)))
                return replies.pop(0)

        return Provider()


def counter_case(name: str) -> dict[str, Any]:
    return echo_case(
        model_name=name,
        turns=[
            {
                "user_input": f"count for {name}",
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [{"id": "k", "name": "counter", "arguments": {}}],
                        }
                    },
                    {"response": {"type": "text", "content": "counted"}},
                ],
            }
        ],
        expects={"tool_results_contain": [{"tool": "counter", "needle": "count=1"}]},
    )


def test_each_case_gets_a_fresh_agent_and_fresh_tools(
    write_case: Callable[..., Path], replay: RunMode
) -> None:
    pm = get_plugin_manager(load_entry_points=False)
    pm.register(CounterPlugin(), name="counter")
    registry = Registry.from_plugin_manager(pm)
    mode = RecordingMode()
    cases = [
        admit_file(write_case(counter_case(name), name=f"{name}.json"), registry, replay)
        for name in ("first", "second")
    ]
    report = run_cases(cases, mode, registry, EvalConfig())
    # Had the tool been shared, the second case would have seen count=2.
    assert [(c.name, c.passed) for c in report.cases] == [("first", True), ("second", True)]
    # Had the agent been shared, the second case would have started with the first's history.
    assert mode.seen["second"][0] == [{"role": "user", "content": "count for second"}]


# --- the runner around the loop ---------------------------------------------------


def test_an_unexpected_provider_crash_fails_only_its_case(
    write_case: Callable[..., Path], registry: Registry, replay: RunMode
) -> None:
    class Broken(RunMode):
        name = "broken"

        def provider(self, trace: LlmTrace, config: EvalConfig) -> CaseProvider:
            if trace.model_name == "crashes":
                raise ValueError("no model here")
            return replay.provider(trace, config)

    cases = [
        admit_file(write_case(echo_case(model_name=n), name=f"{n}.json"), registry, replay)
        for n in ("crashes", "fine")
    ]
    report = run_cases(cases, Broken(), registry, EvalConfig())
    assert [(c.name, c.error) for c in report.cases] == [
        ("crashes", "case 'crashes': unexpected ValueError: no model here"),
        ("fine", None),
    ]
    assert report.cases[1].passed
    assert report.exit_code() == 1


def test_run_suite_replays_through_the_real_loop(
    write_case: Callable[..., Path], registry: Registry
) -> None:
    write_case(echo_case())
    two_round_case(write_case)
    report = run_suite(write_case(echo_case(), name="again.json").parent, registry=registry)
    assert [(c.name, c.passed, len(c.checks)) for c in report.cases] == [
        ("echo-hello", True, 3),
        ("echo-hello", True, 3),
        ("two-rounds", True, 1),
    ]
    assert report.exit_code() == 0


# --- RunRecord --------------------------------------------------------------------


def call(name: str, ok: bool = True, turn: int = 0) -> RecordedCall:
    return RecordedCall(turn, f"id-{name}", name, {"message": name}, f"{name} out", ok)


def test_run_record_derives_names_and_success_from_the_calls() -> None:
    record = RunRecord(responses=["first", "last"], calls=[call("echo"), call("shell", ok=False)])
    assert record.final_response == "last"
    assert record.tool_names == ["echo", "shell"]
    assert record.all_succeeded is False
    assert record.calls_to("echo") == [record.calls[0]]
    # Derived, not stored: changing the one canonical list changes every view of it.
    record.calls.append(call("echo", turn=1))
    record.calls.pop(1)
    assert record.tool_names == ["echo", "echo"]
    assert record.all_succeeded is True
    assert [c.turn for c in record.calls_to("echo")] == [0, 1]
    assert [f.name for f in dataclasses.fields(RunRecord)] == [
        "responses",
        "calls",
        "input_tokens",
        "output_tokens",
        "requests",
        "usage",
        "rates",
        "requested_model",
        "user_inputs",
    ]


def test_an_empty_record_has_no_final_response_and_vacuous_success() -> None:
    record = RunRecord()
    assert (record.final_response, record.tool_names, record.all_succeeded) == (None, [], True)


def test_tokens_are_summed_over_every_model_reply() -> None:
    replies = [ModelReply(tool_calls=calls("echo").tool_calls, input_tokens=30, output_tokens=15)]
    replies.append(ModelReply("done", input_tokens=50, output_tokens=10))
    agent = Agent(ScriptedProvider(replies), {"echo": EchoLike()})
    agent.run_turn(0, "go")
    assert (agent.record.input_tokens, agent.record.output_tokens) == (80, 25)


def test_arguments_json_keeps_non_ascii_as_is() -> None:
    recorded = RecordedCall(0, "c", "echo", {"message": "café 日本 👋"}, "", True)
    assert recorded.arguments_json == '{"message": "café 日本 👋"}'


class FileTool:
    """A tool with a side effect: it writes its argument into the case's workspace."""

    name = "file_write"
    description = "Write text to notes.txt in the case's workspace."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    seen: ClassVar[list[tuple[Path, str]]] = []

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        workspace = case_workspace()
        notes = workspace / "notes.txt"
        before = notes.read_text() if notes.exists() else ""
        notes.write_text(before + str(arguments.get("text")))
        FileTool.seen.append((workspace, notes.read_text()))
        return ToolResult(notes.read_text())


class FileToolPlugin:
    @hookimpl
    def zeroclaw_eval_register_tools(self, register: Any) -> None:
        register("file_write", FileTool)


def test_each_case_gets_a_private_workspace_removed_when_it_ends(
    write_case: Callable[..., Path],
) -> None:
    pm = get_plugin_manager(load_entry_points=False)
    pm.register(FileToolPlugin(), name="file-tool")
    registry = Registry.from_plugin_manager(pm)
    call = {"id": "w1", "name": "file_write", "arguments": {"text": "first"}}
    case = echo_case(
        expects={
            "exact_tool_calls": 1,
            "tool_results_contain": [{"tool": "file_write", "needle": "first"}],
        }
    )
    case["turns"][0]["steps"][0]["response"]["tool_calls"] = [call]
    path = write_case(case, "a.json")
    write_case(case, "b.json")
    FileTool.seen.clear()
    report = run_suite(path.parent, registry=registry)
    assert [c.passed for c in report.cases] == [True, True]
    (first, first_notes), (second, second_notes) = FileTool.seen
    # The second case starts empty: it never sees the first one's file ("firstfirst").
    assert (first_notes, second_notes) == ("first", "first")
    assert first != second
    assert not first.exists() and not second.exists()
    with pytest.raises(RuntimeError, match="only available while a case runs"):
        case_workspace()
