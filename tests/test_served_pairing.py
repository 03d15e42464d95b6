"""The ``served_tools`` checks, decided in process from the two sides of the boundary.

``pair`` matches each call the model asked for with a dispatch of the same tool
in the same turn (the very arguments first); ``pairing_checks`` turns the
pairing into the four checks. Each is asserted whole here, over hand-built calls
and dispatches, so that every way an agent can betray the model (a call never
dispatched, a dispatch never asked for, arguments rewritten, a result not sent
back or changed) fails its check, and an honest agent passes all four.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from zeroclaw_eval.agents.served import Dispatch, ServedRecord, ServedTools, pair, pairing_checks
from zeroclaw_eval.agents.wire import WireCall
from zeroclaw_eval.builtin.dialects import SMOLAGENTS
from zeroclaw_eval.errors import RunError, UnknownToolError
from zeroclaw_eval.grading.record import ModelRequest, RecordedCall, RunRecord
from zeroclaw_eval.protocol import ToolResult
from zeroclaw_eval.report.model import CheckResult


def asked(
    turn: int, name: str, call_id: str, result: str = "ok", sent: bool = True, **arguments: Any
) -> WireCall:
    """A call the model asked for, with the result the agent sent back (``sent``)."""
    return WireCall(turn, 0, call_id, name, arguments, 0, result if sent else None)


def ran(turn: int, name: str, result: str = "ok", ok: bool = True, **arguments: Any) -> Dispatch:
    return Dispatch(turn, name, arguments, result, ok)


def checks(
    requested: list[RecordedCall], dispatched: list[Dispatch]
) -> list[tuple[str, bool, str]]:
    return [(c.check, c.passed, c.detail) for c in pairing_checks(*pair(requested, dispatched))]


def test_an_honest_agent_passes_the_four_checks() -> None:
    requested = [asked(0, "echo", "c1", "hello", message="hello"), asked(1, "clock", "c2", "noon")]
    dispatched = [ran(0, "echo", "hello", message="hello"), ran(1, "clock", "noon")]
    assert checks(requested, dispatched) == [
        ("served_tools: requested calls dispatched", True, "2 requested calls dispatched"),
        ("served_tools: dispatches requested", True, "every dispatch was asked for"),
        (
            "served_tools: arguments as requested",
            True,
            "every dispatch carried the model's arguments",
        ),
        (
            "served_tools: results sent back",
            True,
            "every result reached the model whole, as returned",
        ),
    ]


def test_pairs_come_in_request_order_the_same_arguments_first() -> None:
    first = asked(0, "echo", "c1", message="a")
    second = asked(0, "echo", "c2", message="b")
    other = asked(0, "clock", "c3")
    b, a, clock = ran(0, "echo", message="b"), ran(0, "echo", message="a"), ran(0, "clock")
    pairs, unrequested, undispatched = pair([first, second, other], [clock, b, a])
    assert [(call.call_id, dispatch) for call, dispatch in pairs] == [
        ("c1", a),
        ("c2", b),
        ("c3", clock),
    ]
    assert (unrequested, undispatched) == ([], [])


def test_the_rest_pair_in_order_and_what_is_left_is_named() -> None:
    requested = [asked(0, "echo", "c1", message="a"), asked(0, "echo", "c2", message="b")]
    x, y, z = ran(0, "echo", message="x"), ran(0, "echo", message="y"), ran(0, "echo", message="z")
    pairs, unrequested, undispatched = pair(requested, [x, y, z])
    assert [(call.call_id, dispatch) for call, dispatch in pairs] == [("c1", x), ("c2", y)]
    assert (unrequested, undispatched) == ([z], [])
    pairs, unrequested, undispatched = pair(requested, [y])
    assert [(call.call_id, dispatch) for call, dispatch in pairs] == [("c1", y)]
    assert (unrequested, undispatched) == ([], [requested[1]])


def test_rewritten_calls_run_side_by_side_pair_by_what_the_model_was_shown() -> None:
    # An agent upper-cases what it dispatches, and the two calls arrive in reverse
    # order: each still pairs with its own dispatch, so only the rewriting is red.
    hello = asked(0, "echo", "c1", result="HELLO", message="hello")
    world = asked(0, "echo", "c2", result="WORLD", message="world")
    upper_world = ran(0, "echo", result="WORLD", message="WORLD")
    upper_hello = ran(0, "echo", result="HELLO", message="HELLO")
    pairs, unrequested, undispatched = pair([hello, world], [upper_world, upper_hello])
    assert [(call.call_id, dispatch) for call, dispatch in pairs] == [
        ("c1", upper_hello),
        ("c2", upper_world),
    ]
    assert (unrequested, undispatched) == ([], [])
    failed = [
        (check, detail)
        for check, passed, detail in checks([hello, world], [upper_world, upper_hello])
        if not passed
    ]
    assert [check for check, _ in failed] == ["served_tools: arguments as requested"]
    # A flattening agent ties no result to its call: the rest pair in arrival order.
    pairs, _, _ = pair([hello, world], [upper_world, upper_hello], SMOLAGENTS)
    assert [(call.call_id, dispatch) for call, dispatch in pairs] == [
        ("c1", upper_world),
        ("c2", upper_hello),
    ]


def test_only_the_same_tool_in_the_same_turn_pairs() -> None:
    requested = [asked(0, "echo", "c1", message="a")]
    other_turn, other_tool = ran(1, "echo", message="a"), ran(0, "clock", message="a")
    pairs, unrequested, undispatched = pair(requested, [other_turn, other_tool])
    assert pairs == []
    assert unrequested == [other_tool, other_turn]
    assert undispatched == requested
    assert pair([], [other_turn]) == ([], [other_turn], [])
    assert pair(requested, []) == ([], [], requested)


def test_a_call_never_dispatched_fails_its_check() -> None:
    requested = [asked(2, "echo", "c1", message="a")]
    assert checks(requested, [])[0] == (
        "served_tools: requested calls dispatched",
        False,
        "turn 2: 'echo' call 'c1' was never dispatched",
    )
    assert [passed for _, passed, _ in checks(requested, [])] == [False, True, True, True]


def test_a_dispatch_never_asked_for_fails_its_check() -> None:
    found = checks([], [ran(1, "rm", path="/")])
    assert found[1] == (
        "served_tools: dispatches requested",
        False,
        'turn 1: the agent dispatched \'rm\' {"path": "/"}, which the model never asked for',
    )
    assert [passed for _, passed, _ in found] == [True, False, True, True]
    assert found[0][2] == "0 requested calls dispatched"


def test_rewritten_arguments_fail_their_check() -> None:
    found = checks([asked(0, "echo", "c1", message="a")], [ran(0, "echo", message="b")])
    assert found[2] == (
        "served_tools: arguments as requested",
        False,
        "turn 0: 'echo' call 'c1': the model asked {\"message\": \"a\"}, the agent dispatched "
        '{"message": "b"}',
    )
    assert [passed for _, passed, _ in found] == [True, True, False, True]


def test_a_result_not_sent_back_fails_its_check() -> None:
    found = checks([asked(0, "echo", "c1", "", False)], [ran(0, "echo", "hello")])
    assert found[3] == (
        "served_tools: results sent back",
        False,
        "turn 0: 'echo' call 'c1': the agent sent the model no result for it",
    )
    assert [passed for _, passed, _ in found] == [True, True, True, False]


def test_a_changed_result_fails_its_check_and_so_does_one_with_text_added_or_cut() -> None:
    found = checks([asked(0, "echo", "c1", "bye")], [ran(0, "echo", "hello")])
    assert found[3] == (
        "served_tools: results sent back",
        False,
        "turn 0: 'echo' call 'c1': the tool returned 'hello', the agent sent the model 'bye'",
    )
    found = checks([asked(0, "echo", "c1", "bye")], [ran(0, "echo", "boom", ok=False)])
    assert found[3][2] == (
        "turn 0: 'echo' call 'c1': the tool returned (an error) 'boom', "
        "the agent sent the model 'bye'"
    )
    # Compared whole: a result with text added, or cut short, is not the result.
    padded = checks([asked(0, "echo", "c1", "hello (cached)")], [ran(0, "echo", "hello")])
    assert padded[3][:2] == ("served_tools: results sent back", False)
    result = "Paris, France: population 2,102,650 (2023); mayor Anne Hidalgo"
    cut = checks([asked(0, "echo", "c1", result[:16])], [ran(0, "echo", result)])
    assert cut[3] == (
        "served_tools: results sent back",
        False,
        f"turn 0: 'echo' call 'c1': the tool returned {result!r}, the agent sent the model "
        f"{result[:16]!r}",
    )
    long = result * 3
    ends = checks([asked(0, "echo", "c1", long + "!")], [ran(0, "echo", long)])
    # The quote shows where the two part: at the end here.
    assert ends[3][2].endswith("'...") is False
    assert "Hidalgo!'" in ends[3][2]


def test_a_check_lists_three_findings_then_counts_the_rest() -> None:
    three = [asked(0, "echo", f"c{n}") for n in range(3)]
    assert checks(three, [])[0][2] == (
        "turn 0: 'echo' call 'c0' was never dispatched; turn 0: 'echo' call 'c1' was never "
        "dispatched; turn 0: 'echo' call 'c2' was never dispatched"
    )
    five = [asked(0, "echo", f"c{n}") for n in range(5)]
    assert checks(five, [])[0][2].endswith("'c2' was never dispatched; and 2 more")


def test_the_record_takes_the_dispatches_as_its_calls_and_carries_the_checks() -> None:
    # The pairing alone, without a route: record() reads only the dispatches.
    served = object.__new__(ServedTools)
    served._tools = {"echo": None, "rm": None}  # type: ignore[dict-item]
    served.dispatches = [ran(0, "echo", "hello", message="hello"), ran(0, "rm", "gone", ok=False)]
    request = ModelRequest(0, 0, [{"role": "user", "content": "Echo hello"}], [], api="chat")
    wire = RunRecord(responses=["done"], input_tokens=3, output_tokens=4, requests=[request])
    requested = [asked(0, "echo", "call_7", "hello", message="hello")]
    record = served.record(wire, requested)
    assert isinstance(record, ServedRecord)
    assert record.calls == [
        # The model call it answers says which reply asked for it; no reply asked for rm.
        RecordedCall(0, "call_7", "echo", {"message": "hello"}, "hello", True, response=0),
        RecordedCall(0, "mcp_1", "rm", {}, "gone", False, response=None),
    ]
    assert (record.responses, record.input_tokens, record.output_tokens) == (["done"], 3, 4)
    assert record.requests == [request]  # what the model was asked stays evidence
    assert record.certified_checks() == pairing_checks(*pair(requested, served.dispatches))
    assert [check.passed for check in record.certified_checks()] == [True, False, True, True]


def test_calls_of_one_reply_run_side_by_side_are_recorded_in_the_order_asked() -> None:
    # The agent ran the two lookups of one reply in threads: Tokyo's came back first.
    # city_lookup[0] must still be Paris, whatever the timing; the note dispatched
    # between them and the unasked dispatch keep their places.
    served = object.__new__(ServedTools)
    served._tools = {"city_lookup": None, "note": None}  # type: ignore[dict-item]
    served.dispatches = [
        ran(0, "city_lookup", "Tokyo: Koike", city="Tokyo"),
        ran(0, "note", "kept", text="x"),
        ran(0, "city_lookup", "Paris: Hidalgo", city="Paris"),
        ran(0, "note", "unasked", text="y"),
        ran(0, "city_lookup", "Lagos: Sanwo-Olu", city="Lagos"),
    ]
    requested = [
        WireCall(0, 0, "c1", "city_lookup", {"city": "Paris"}, 0, "Paris: Hidalgo"),
        WireCall(0, 0, "c2", "city_lookup", {"city": "Tokyo"}, 0, "Tokyo: Koike"),
        WireCall(0, 0, "c3", "note", {"text": "x"}, 0, "kept"),
        WireCall(0, 1, "c4", "city_lookup", {"city": "Lagos"}, 0, "Lagos: Sanwo-Olu"),
    ]
    wire = RunRecord(responses=["done"], input_tokens=1, output_tokens=1)
    record = served.record(wire, requested)
    assert [(call.call_id, call.result, call.response) for call in record.calls] == [
        ("c1", "Paris: Hidalgo", 0),
        ("c2", "Tokyo: Koike", 0),
        ("c3", "kept", 0),
        ("mcp_3", "unasked", None),
        ("c4", "Lagos: Sanwo-Olu", 1),
    ]


def test_a_call_to_a_tool_the_case_does_not_serve_is_recorded_as_a_failed_dispatch() -> None:
    # Over the wire, with the official client: the call crossed the boundary and
    # failed there, so it is a call of the case, failed, and no fault of the route.
    import anyio
    import mcp
    from mcp.shared.exceptions import MCPError

    from zeroclaw_eval.agents.base import ModelSide
    from zeroclaw_eval.builtin.echo import EchoTool
    from zeroclaw_eval.toolserver.server import ToolServer

    with ToolServer() as server:
        side = ModelSide("case-a", provider=None, tools={"echo": EchoTool()}, tool_server=server)  # type: ignore[arg-type]
        served = ServedTools(side, turn=lambda: 0)

        async def agent() -> tuple[int, str]:
            async with mcp.Client(served.route.url) as client:
                await client.call_tool("echo", {"message": "hi"})
                try:
                    await client.call_tool("ecko", {"message": "hi"})
                except MCPError as error:
                    return error.error.code, error.error.message
            raise AssertionError("the unknown tool was answered")

        assert anyio.run(agent) == (-32602, "Unknown tool: 'ecko' (served: echo)")
        served.close()
    assert served.dispatches == [
        ran(0, "echo", "hi", message="hi"),
        ran(0, "ecko", "Unknown tool: 'ecko' (served: echo)", ok=False, message="hi"),
    ]
    assert served.error() is None
    wire = RunRecord(["done"])
    requested = [asked(0, "echo", "c1", "hi", message="hi")]
    assert [(call.name, call.succeeded) for call in served.record(wire, requested).calls] == [
        ("echo", True),
        ("ecko", False),
    ]


class Sized:
    """A tool returning as many characters as it is asked for."""

    name = "sized"
    description = "Returns n characters."
    parameters = MappingProxyType({"type": "object"})

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult("x" * arguments["n"])


def test_a_result_of_exactly_the_bound_is_served_and_one_more_is_not() -> None:
    from zeroclaw_eval.agents.base import ModelSide
    from zeroclaw_eval.agents.served import MAX_RESULT_CHARS
    from zeroclaw_eval.toolserver.server import ToolServer

    with ToolServer() as server:
        tools = {"sized": Sized(), "other": Sized()}
        side = ModelSide("case-a", provider=None, tools=tools, tool_server=server)  # type: ignore[arg-type]
        served = ServedTools(side, turn=lambda: 0)
        dispatch = served.route.dispatch
        assert len(dispatch("sized", {"n": MAX_RESULT_CHARS}).output) == MAX_RESULT_CHARS
        with pytest.raises(RunError, match=f"returned {MAX_RESULT_CHARS + 1} characters"):
            dispatch("sized", {"n": MAX_RESULT_CHARS + 1})
        with pytest.raises(UnknownToolError) as unknown:
            dispatch("missing", {})
        assert str(unknown.value) == "Unknown tool: 'missing' (served: sized, other)"
        served.close()
        bare = ServedTools(ModelSide("case-b", None, {}, tool_server=server), lambda: 0)  # type: ignore[arg-type]
        with pytest.raises(UnknownToolError) as unknown:
            bare.route.dispatch("missing", {})
        assert str(unknown.value) == "Unknown tool: 'missing' (served: none)"
        bare.close()
    # The oversized result was refused, never kept; the unknown tool is a failed call.
    assert [(d.name, d.succeeded) for d in served.dispatches] == [
        ("sized", True),
        ("missing", False),
    ]


# --- what each dialect adds -------------------------------------------------------


def test_the_agents_own_calls_are_named_in_the_first_check_and_expected_nowhere() -> None:
    mine = [asked(0, f"own_{n}", f"c{n}") for n in range(4)]
    first = pairing_checks([], [], [], internal=mine[:3])[0]
    assert first == CheckResult(
        "served_tools: requested calls dispatched",
        True,
        "0 requested calls dispatched; the agent ran its own tools for 'own_0' call 'c0', "
        "'own_1' call 'c1', 'own_2' call 'c2' (internal, not served)",
    )
    assert pairing_checks([], [], [], internal=mine)[0].detail.endswith(
        "'own_2' call 'c2' and 1 more (internal, not served)"
    )


def flat(turn: int, step: int, call_id: str, name: str, shown: str | None) -> WireCall:
    return WireCall(turn, step, call_id, name, {}, 0, shown)


def test_a_flattened_step_is_checked_whole_and_a_step_with_a_call_never_dispatched_is_not() -> None:
    from zeroclaw_eval.builtin.dialects import SMOLAGENTS

    # Step 0: one call dispatched, one never (its result made up: reported as never
    # dispatched, and the step not checked again here); step 1: two results, one of
    # them padded; step 2: no result shown at all.
    made_up = "Observation:\nzero\nmade up"
    zero, lazy = flat(0, 0, "c0", "lookup", made_up), flat(0, 0, "c9", "lookup", made_up)
    padded = "Observation:\none\ntwo (cached)"
    one, two = flat(0, 1, "c1", "lookup", padded), flat(0, 1, "c2", "lookup", padded)
    silent = flat(0, 2, "c3", "echo", None)
    pairs = [
        (zero, ran(0, "lookup", "zero")),
        (one, ran(0, "lookup", "one")),
        (two, ran(0, "lookup", "two")),
        (silent, ran(0, "echo", "hi")),
    ]
    found = pairing_checks(pairs, [], [lazy], SMOLAGENTS)
    assert found[3] == CheckResult(
        "served_tools: results sent back",
        False,
        "turn 0: 'lookup' call 'c1', 'lookup' call 'c2': the tool returned 'one'; 'two', "
        "the agent showed the model 'Observation:\\none\\ntwo (cached)'; turn 0: 'echo' call "
        "'c3': the agent showed the model no result for it in its next request",
    )
    dispatched = [ran(0, "lookup", "one"), ran(0, "lookup", "two")]
    honest = [
        flat(0, 1, "c1", "lookup", "Observation:\none\ntwo"),
        flat(0, 1, "c2", "lookup", "Observation:\none\ntwo"),
    ]
    pairs, unrequested, undispatched = pair(honest, dispatched)
    assert pairing_checks(pairs, unrequested, undispatched, SMOLAGENTS)[3].passed
