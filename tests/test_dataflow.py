"""``tool_data_flow``: a value one call returned is one a later call was given.

Graded from the dispatch record: what the producer's result holds at its
pointer (decoded as JSON), what the consumer was given at its own, consumer
after producer. A failure names what was tried and the nearest miss, with both
pointers and both values. In process, so that the mutants run in seconds; the
CLI runs are in tests/test_evidence_cli.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from zeroclaw_eval import RecordedCall, Registry, RunMode, RunRecord
from zeroclaw_eval.builtin.dataflow import ToolDataFlow
from zeroclaw_eval.case.admission import admit_data
from zeroclaw_eval.report.model import CheckResult

from .admitting import findings, refusal

EDGE = {
    "from": {"tool": "create_order", "result": "/order/id"},
    "to": {"tool": "pay", "argument": "/order_id"},
}


def call(name: str, result: Any = "ok", ok: bool = True, **arguments: Any) -> RecordedCall:
    text = result if isinstance(result, str) else json.dumps(result)
    return RecordedCall(0, f"id-{name}", name, arguments, text, ok)


def order(order_id: Any) -> RecordedCall:
    return call("create_order", {"order": {"id": order_id}}, item="book")


def flow(raw: list[dict[str, Any]], *calls: RecordedCall) -> list[CheckResult]:
    family = ToolDataFlow()
    return family.grade(family.adapter.validate_python(raw), RunRecord(["done"], list(calls)))


A1 = order("A1")
PAY_A1 = call("pay", order_id="A1")

# id -> (calls, passed, detail)
GRADED: dict[str, tuple[tuple[RecordedCall, ...], bool, str]] = {
    "the_value_flows": (
        (A1, PAY_A1),
        True,
        'create_order[0] (turn 0, call 0) /order/id "A1" -> pay[0] (turn 0, call 1) /order_id "A1"',
    ),
    "whatever_comes_between": (
        (A1, call("lookup", order_id="A2"), order("A2"), call("pay", order_id="A9"), PAY_A1),
        True,
        'create_order[0] (turn 0, call 0) /order/id "A1" -> pay[1] (turn 0, call 4) /order_id "A1"',
    ),
    "a_different_value": (
        (A1, call("pay", order_id="A2")),
        False,
        "no call to pay was given a value a call to create_order returned before it; tried "
        '1 pairing, nearest: create_order[0] (turn 0, call 0) /order/id "A1" -> pay[0] (turn 0, '
        'call 1) /order_id "A2"',
    ),
    "the_nearest_of_several": (
        (order(7), order("B-100"), call("pay", order_id="B-101"), call("pay", order_id=8)),
        False,
        "no call to pay was given a value a call to create_order returned before it; tried "
        '4 pairings, nearest: create_order[1] (turn 0, call 1) /order/id "B-100" -> pay[0] '
        '(turn 0, call 2) /order_id "B-101"',
    ),
    "a_string_is_not_a_number": (
        (order(42), call("pay", order_id="42")),
        False,
        "no call to pay was given a value a call to create_order returned before it; tried "
        "1 pairing, nearest: create_order[0] (turn 0, call 0) /order/id 42 -> pay[0] (turn 0, "
        'call 1) /order_id "42"',
    ),
    "the_consumer_came_first": (
        (PAY_A1, A1),
        False,
        "the value reaches pay only before it was produced: create_order[0] (turn 0, call 1) "
        '/order/id "A1" -> pay[0] (turn 0, call 0) /order_id "A1"; the consumer must come '
        "after the producer",
    ),
    "every_consumer_came_first": (
        (call("pay", order_id="A7"), A1),
        False,
        "no call to pay with /order_id comes after the first create_order result with a "
        "value (create_order[0] (turn 0, call 1))",
    ),
    "every_consumer_came_before_either_producer": (
        (call("pay", order_id="A7"), A1, order("A2")),
        False,
        "no call to pay with /order_id comes after the first create_order result with a "
        "value (create_order[0] (turn 0, call 1))",
    ),
    "the_nearest_by_type_before_text": (
        (order("12"), order(99), call("pay", order_id=12)),
        False,
        "no call to pay was given a value a call to create_order returned before it; tried "
        "2 pairings, nearest: create_order[1] (turn 0, call 1) /order/id 99 -> pay[0] (turn 0, "
        "call 2) /order_id 12",
    ),
    "the_earliest_of_equally_near_consumers": (
        (A1, call("pay", order_id="A2"), call("pay", order_id="A2")),
        False,
        "no call to pay was given a value a call to create_order returned before it; tried "
        '2 pairings, nearest: create_order[0] (turn 0, call 0) /order/id "A1" -> pay[0] (turn 0, '
        'call 1) /order_id "A2"',
    ),
    "no_producer": (
        (PAY_A1,),
        False,
        "no call to create_order (1 call: pay)",
    ),
    "the_producer_failed": (
        (call("create_order", "tool 'create_order': out of stock", ok=False), PAY_A1),
        False,
        "no create_order result holds a value at /order/id: create_order[0] (turn 0, call 0) "
        "failed: \"tool 'create_order': out of stock\"",
    ),
    "the_result_is_not_json": (
        (call("create_order", "order A1 created"), PAY_A1),
        False,
        "no create_order result holds a value at /order/id: create_order[0] (turn 0, call 0) "
        'returned text that is not JSON: "order A1 created"',
    ),
    "the_result_lacks_the_pointer": (
        (call("create_order", {"id": "A1"}), PAY_A1),
        False,
        "no create_order result holds a value at /order/id: create_order[0] (turn 0, call 0) "
        'returned {"id":"A1"}, with nothing there',
    ),
    "no_consumer": (
        (A1,),
        False,
        "no call to pay (1 call: create_order)",
    ),
    "the_consumer_lacks_the_argument": (
        (A1, call("pay", id="A1")),
        False,
        "no pay call has an argument at /order_id: pay[0] (turn 0, call 1) was called with "
        '{"id":"A1"}',
    ),
}


@pytest.mark.parametrize(("calls", "passed", "detail"), GRADED.values(), ids=GRADED.keys())
def test_tool_data_flow(calls: tuple[RecordedCall, ...], passed: bool, detail: str) -> None:
    (check,) = flow([EDGE], *calls)
    assert (check.passed, check.detail) == (passed, detail)


def test_a_producer_with_a_value_after_one_without() -> None:
    (check,) = flow([EDGE], call("create_order", "busy", ok=False), A1, PAY_A1)
    assert check.passed
    assert check.detail.startswith("create_order[1] (turn 0, call 1)")


def test_the_whole_result_and_patterns_of_tool_names() -> None:
    edge = {"from": {"tool": "new_*", "result": ""}, "to": {"tool": "p*", "argument": "/ids/0"}}
    (check,) = flow([edge], call("new_id", "17"), call("pay", ids=[17]))
    assert check.check == "tool_data_flow: new_* (whole result) -> p* /ids/0"
    assert (
        check.detail
        == "new_id[0] (turn 0, call 0) (whole result) 17 -> pay[0] (turn 0, call 1) /ids/0 17"
    )
    (check,) = flow([edge], call("new_id", "[1]"), call("pay", ids=[17]))
    assert not check.passed
    assert "no new_* result holds a value at its root" not in check.detail


def test_each_edge_is_one_check_titled_by_its_pointers() -> None:
    other = {
        "from": {"tool": "pay", "result": "/receipt"},
        "to": {"tool": "mail", "argument": "/body"},
    }
    checks = flow([EDGE, other], A1, PAY_A1)
    assert [c.check for c in checks] == [
        "tool_data_flow: create_order /order/id -> pay /order_id",
        "tool_data_flow: pay /receipt -> mail /body",
    ]
    assert [c.passed for c in checks] == [True, False]


def test_a_call_is_not_its_own_consumer() -> None:
    edge = {
        "from": {"tool": "lookup", "result": "/id"},
        "to": {"tool": "lookup", "argument": "/id"},
    }
    (check,) = flow([edge], call("lookup", {"id": "A1"}, id="A2"))
    assert check.detail == (
        "no call to lookup with /id comes after the first lookup result with a value "
        "(lookup[0] (turn 0, call 0))"
    )
    (check,) = flow([edge], call("lookup", {"id": "A1"}, id="A1"))
    assert not check.passed


def test_up_to_four_failed_producers_are_listed_whole() -> None:
    failed = [call("create_order", f"e{n}", ok=False) for n in range(4)]
    (check,) = flow([EDGE], *failed, PAY_A1)
    assert check.detail == (
        "no create_order result holds a value at /order/id: "
        + "; ".join(f'create_order[{n}] (turn 0, call {n}) failed: "e{n}"' for n in range(4))
    )


def test_consumers_without_the_argument_are_listed() -> None:
    (check,) = flow([EDGE], A1, call("pay", id=1), call("pay", id=2))
    assert check.detail == (
        "no pay call has an argument at /order_id: pay[0] (turn 0, call 1) was called with "
        '{"id":1}; pay[1] (turn 0, call 2) was called with {"id":2}'
    )


def test_many_failed_producers_are_cut() -> None:
    failed = [call("create_order", f"e{n}", ok=False) for n in range(6)]
    (check,) = flow([EDGE], *failed, PAY_A1)
    assert check.detail.count("failed:") == 4
    assert check.detail.endswith("; ...")


def test_many_consumers_without_the_argument_are_cut() -> None:
    consumers = [call("pay", id=n) for n in range(6)]
    (check,) = flow([EDGE], A1, *consumers)
    assert check.detail.count("was called with") == 4


# --- admission and eval check ---------------------------------------------------------


def case(
    edges: list[dict[str, Any]],
    *,
    produced: Any = None,
    paid: Any = "A1",
    **expects: Any,
) -> dict[str, Any]:
    """create_order, then pay with ``paid``; create_order's result scripted when
    ``produced`` is given."""
    data: dict[str, Any] = {
        "model_name": "flow",
        "turns": [
            {
                "user_input": "Order and pay",
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [
                                {"id": "c1", "name": "create_order", "arguments": {"n": 1}},
                                {"id": "c2", "name": "pay", "arguments": {"order_id": paid}},
                            ],
                        }
                    },
                    {"response": {"type": "text", "content": "Paid."}},
                ],
            }
        ],
        "expects": {"tool_data_flow": edges, **expects},
        "tool_results": {"pay": [{"result": "paid"}]},
    }
    if produced is not None:
        data["tool_results"]["create_order"] = [{"result": json.dumps(produced)}]
    return data


@pytest.mark.parametrize(
    ("edge", "expects", "message"),
    [
        (
            {**EDGE, "from": {"tool": "create_order", "result": "order/id"}},
            {},
            "expects.tool_data_flow[0].from.result=\"order/id\": 'order/id' is not a JSON "
            "pointer: it must start with '/'",
        ),
        (
            {**EDGE, "to": {"tool": "pay", "argument": "/a~2"}},
            {},
            "expects.tool_data_flow[0].to.argument=\"/a~2\": '/a~2' is not a JSON pointer: "
            "'~' must be followed by 0 or 1 ('~0', '~1')",
        ),
        (
            {**EDGE, "to": {"tool": "pay", "argument": ""}},
            {},
            'expects.tool_data_flow[0].to.argument="": must not be empty',
        ),
        (
            {**EDGE, "from": {"tool": "", "result": "/id"}},
            {},
            'expects.tool_data_flow[0].from.tool="": must not be empty',
        ),
        (
            {**EDGE, "to": {"tool": "", "argument": "/id"}},
            {},
            'expects.tool_data_flow[0].to.tool="": must not be empty',
        ),
        (
            EDGE,
            {"tools_not_used": ["create_order"]},
            'expects.tool_data_flow[0].from.tool="create_order": contradicts tools_not_used '
            "naming 'create_order': the edge needs it called",
        ),
        (
            EDGE,
            {"tools_not_used": ["pay"]},
            'expects.tool_data_flow[0].to.tool="pay": contradicts tools_not_used naming '
            "'pay': the edge needs it called",
        ),
        (
            {**EDGE, "to": {"tool": "pay", "argument": "/x", "from": "y"}},
            {},
            'expects.tool_data_flow[0].to.from="y": unknown key',
        ),
    ],
    ids=[
        "a_pointer_without_slash",
        "a_bad_escape",
        "no_argument",
        "no_producer_tool",
        "no_consumer_tool",
        "a_banned_producer",
        "a_banned_consumer",
        "a_typo",
    ],
)
def test_admission_refuses(
    registry: Registry, replay: RunMode, edge: dict[str, Any], expects: dict[str, Any], message: str
) -> None:
    data = case([edge])
    data["expects"].update(expects)
    assert refusal(data, registry, replay).startswith(message)


def test_the_schema_describes_every_key_of_an_edge() -> None:
    family = ToolDataFlow()
    schema = family.adapter.json_schema()
    assert schema["items"]["$ref"] == "#/$defs/FlowEdge"
    described = {
        (name, key): value.get("description")
        for name in ("FlowEdge", "Producer", "Consumer")
        for key, value in schema["$defs"][name]["properties"].items()
    }
    assert described == {
        ("FlowEdge", "from"): "the call the value comes from",
        ("FlowEdge", "to"): "the later call that must be given it",
        ("Producer", "tool"): "the producing tool; '*' stands for any run of characters",
        ("Producer", "result"): "a JSON pointer (RFC 6901) into the call's result decoded as "
        "JSON; '' is the whole result",
        ("Consumer", "tool"): "the consuming tool; '*' stands for any run of characters",
        ("Consumer", "argument"): "a JSON pointer (RFC 6901) into the call's arguments",
    }
    assert family.description == (
        "a value from one call's result (tool and JSON pointer) is given to a later call's "
        "arguments (tool and pointer)"
    )
    assert family.evidence(family.adapter.validate_python([EDGE])) == {
        "calls",
        "arguments",
        "results",
        "status",
    }


def test_both_tools_are_named_for_the_offer() -> None:
    family = ToolDataFlow()
    edge = {"from": {"tool": "new_*", "result": ""}, "to": {"tool": "pay", "argument": "/id"}}
    named = list(family.tools_named(family.adapter.validate_python([EDGE, edge])))
    assert [(ref.path, ref.written) for ref in named] == [
        ((0, "from", "tool"), "create_order"),
        ((0, "to", "tool"), "pay"),
        ((1, "from", "tool"), "new_*"),
        ((1, "to", "tool"), "pay"),
    ]
    assert named[2].accepts("new_order") and not named[2].accepts("old_order")


def test_a_pointer_to_the_whole_result_is_admitted(registry: Registry, replay: RunMode) -> None:
    edge = {**EDGE, "from": {"tool": "create_order", "result": ""}}
    admit_data(case([edge]), registry, replay, source="case.json")


def test_an_empty_list_declares_nothing(registry: Registry, replay: RunMode) -> None:
    data = case([], tools_used=["pay"])
    admitted = admit_data(data, registry, replay, source="case.json")
    assert [check.check for check in admitted.grade(RunRecord())] == ["tools_used: pay"]


def test_an_edge_the_script_satisfies_is_refused_for_the_reference_agent(
    registry: Registry, replay: RunMode
) -> None:
    reference = registry.agents["reference"].obj
    data = case([EDGE], produced={"order": {"id": "A1"}})
    assert refusal(data, registry, replay, reference) == (
        "expects.tool_data_flow[0]: cannot fail for agent 'reference', which plays the script "
        "as written: the scripted results and arguments satisfy it already: create_order[0] "
        '(turn 0, call 0) /order/id "A1" -> pay[0] (turn 0, call 1) /order_id "A1"'
    )
    admit_data(data, registry, replay, source="case.json")  # any other agent: it can fail


def test_check_finds_a_scripted_producer_result_without_the_pointer(
    registry: Registry, replay: RunMode
) -> None:
    data = case([EDGE], produced={"id": "A1"})
    assert findings(data, registry, replay) == [
        "case.json: expects.tool_data_flow[0]: no create_order result holds a value at "
        '/order/id: create_order[0] (turn 0, call 0) returned {"id":"A1"}, with nothing '
        "there: can never pass"
    ]


def test_check_finds_scripted_arguments_that_differ(registry: Registry, replay: RunMode) -> None:
    data = case([EDGE], produced={"order": {"id": "A1"}}, paid="A2")
    (found,) = findings(data, registry, replay)
    assert found.endswith('/order_id "A2": can never pass')


def test_check_finds_a_consumer_never_given_the_argument_even_if_the_producer_runs(
    registry: Registry, replay: RunMode
) -> None:
    edge = {**EDGE, "to": {"tool": "pay", "argument": "/amount"}}
    assert findings(case([edge]), registry, replay) == [
        'case.json: expects.tool_data_flow[0].to.argument="/amount": no scripted call to '
        "'pay' has an argument at /amount: can never pass"
    ]
    # Given the argument, a producer that runs for real may return the value.
    assert findings(case([EDGE]), registry, replay) == []


def test_check_finds_a_producer_the_script_never_calls(registry: Registry, replay: RunMode) -> None:
    edge = {**EDGE, "from": {"tool": "quote", "result": "/id"}}
    assert findings(case([edge]), registry, replay) == [
        'case.json: expects.tool_data_flow[0].from.tool="quote": the script never calls '
        "'quote': can never pass"
    ]


def test_check_needs_only_one_consumer_call_with_the_argument(
    registry: Registry, replay: RunMode
) -> None:
    edge = {**EDGE, "to": {"tool": "pay", "argument": "/amount"}}
    data = case([edge])
    data["turns"][0]["steps"][0]["response"]["tool_calls"].append(
        {"id": "c3", "name": "pay", "arguments": {"amount": 3}}
    )
    data["tool_results"]["pay"].append({"result": "paid"})
    assert findings(data, registry, replay) == []


def test_check_grades_only_when_every_producer_result_is_scripted(
    registry: Registry, replay: RunMode
) -> None:
    edge = {**EDGE, "from": {"tool": "create_*", "result": "/order/id"}}
    data = case([edge], produced={"order": {"id": "Z9"}})
    data["turns"][0]["steps"][0]["response"]["tool_calls"].insert(
        0, {"id": "c0", "name": "create_draft", "arguments": {}}
    )
    # create_draft runs for real (an unknown tool here, but the script cannot say so).
    assert findings(data, registry, replay) == []
    del data["turns"][0]["steps"][0]["response"]["tool_calls"][0]
    (found,) = findings(data, registry, replay)
    assert found.endswith('/order_id "A1": can never pass')


def test_check_finds_a_side_the_script_never_calls(registry: Registry, replay: RunMode) -> None:
    edge = {**EDGE, "to": {"tool": "refund", "argument": "/order_id"}}
    data = case([edge])
    data["tool_results"]["refund"] = [{"result": "x"}]
    data["turns"][0]["steps"][0]["response"]["tool_calls"].append(
        {"id": "c3", "name": "echo", "arguments": {}}
    )
    # refund is scripted but never called: admission refuses the unused result; the
    # finding is about the edge alone, so no result is scripted for it.
    del data["tool_results"]["refund"]
    found = findings(data, registry, replay)
    assert found == [
        'case.json: expects.tool_data_flow[0].to.tool="refund": the script never calls '
        "'refund': can never pass"
    ]
