"""Answers bound to evidence: ``response_grounded`` and ``response_claims_backed``.

Graded from the dispatch record (what the tools returned, whether each call
succeeded, what the user said), never from the answer's own narration: a
model that invents a booking reference, or claims a refund whose call failed or
never ran, fails, and the detail names the value or the claim, and the nearest
thing the record holds. In process, so that their mutants run in seconds; the
CLI runs are in tests/test_evidence_cli.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest

from zeroclaw_eval import (
    Family,
    Problem,
    RecordedCall,
    Registry,
    RunMode,
    RunRecord,
    get_plugin_manager,
    hookimpl,
)
from zeroclaw_eval.builtin.evidence import ResponseClaimsBacked, ResponseGrounded
from zeroclaw_eval.case.admission import admit_data
from zeroclaw_eval.report.model import CheckResult

from .admitting import findings, refusal

BOOKING = json.dumps({"booking": "BK-482913", "total": 1250, "url": "https://example.com/b/1"})


def call(name: str, result: str, ok: bool = True, **arguments: Any) -> RecordedCall:
    return RecordedCall(0, f"id-{name}", name, arguments, result, ok)


def run(
    answer: str | None, *calls: RecordedCall, said: str = "Book it for order A1B2C3"
) -> RunRecord:
    return RunRecord(
        responses=[] if answer is None else [answer], calls=list(calls), user_inputs=[said]
    )


def grounded(raw: dict[str, Any], record: RunRecord) -> CheckResult:
    family = ResponseGrounded()
    (check,) = family.grade(family.adapter.validate_python(raw), record)
    return check


def claims(raw: list[dict[str, Any]], record: RunRecord) -> list[CheckResult]:
    family = ResponseClaimsBacked()
    return family.grade(family.adapter.validate_python(raw), record)


LOOKUP = call("lookup", BOOKING)

# id -> (params, answer, calls, passed, detail)
GROUNDED: dict[str, tuple[dict[str, Any], str | None, tuple[RecordedCall, ...], bool, str]] = {
    "an_id_the_tool_returned": (
        {"kinds": ["id"]},
        "Your booking BK-482913 is confirmed.",
        (LOOKUP,),
        True,
        "1 value grounded: id BK-482913 in lookup[0] (turn 0, call 0)",
    ),
    "an_invented_id": (
        {"kinds": ["id"]},
        "Your booking BK-482914 is confirmed.",
        (LOOKUP,),
        False,
        '1 value of 1 in no tool result nor user input: id BK-482914 (nearest: "BK-482913" '
        "in lookup[0] (turn 0, call 0))",
    ),
    "an_id_only_a_prefix_of_the_returned_one": (
        {"kinds": ["id"]},
        "Booking BK-4829 it is.",
        (LOOKUP,),
        False,
        '1 value of 1 in no tool result nor user input: id BK-4829 (nearest: "BK-482913" '
        "in lookup[0] (turn 0, call 0))",
    ),
    "an_id_from_the_user": (
        {"kinds": ["id"]},
        "Order A1B2C3 is on its way.",
        (),
        True,
        "1 value grounded: id A1B2C3 in the user input of turn 0",
    ),
    "an_id_from_the_user_when_only_results_count": (
        {"kinds": ["id"], "sources": ["results"]},
        "Order A1B2C3 is on its way.",
        (LOOKUP,),
        False,
        "1 value of 1 in no tool result: id A1B2C3 (nothing like it in the sources)",
    ),
    "an_id_from_a_result_when_only_the_user_counts": (
        {"kinds": ["id"], "sources": ["user_input"]},
        "Booking BK-482913.",
        (LOOKUP,),
        False,
        "1 value of 1 in no user input: id BK-482913 (nothing like it in the sources)",
    ),
    "an_id_only_in_a_failed_call": (
        {"kinds": ["id"]},
        "Booking BK-777777 is yours.",
        (call("book", "tool 'book': BK-777777 is taken", ok=False),),
        False,
        "1 value of 1 in no tool result nor user input: id BK-777777 (it occurs only in the "
        "error of book[0] (turn 0, call 0))",
    ),
    "an_amount_by_value": (
        {"kinds": ["amount"]},
        "The total is $1,250.00.",
        (LOOKUP,),
        True,
        "1 value grounded: amount $1,250.00 in lookup[0] (turn 0, call 0)",
    ),
    "an_amount_by_code": (
        {"kinds": ["amount"]},
        "The total is 1250 EUR.",
        (LOOKUP,),
        True,
        "1 value grounded: amount 1250 EUR in lookup[0] (turn 0, call 0)",
    ),
    "an_invented_amount": (
        {"kinds": ["amount"]},
        "The total is $1,205.00, or EUR 12.",
        (LOOKUP,),
        False,
        "2 values of 2 in no tool result nor user input: amount $1,205.00 (nearest: 1250 in "
        "lookup[0] (turn 0, call 0)); amount EUR 12 (nearest: 3 in the user input of turn 0)",
    ),
    "a_number_by_value": (
        {"kinds": ["number"]},
        "It costs 1250.0 in all.",
        (LOOKUP,),
        True,
        "1 value grounded: number 1250.0 in lookup[0] (turn 0, call 0)",
    ),
    "a_number_with_no_number_in_the_sources": (
        {"kinds": ["number"], "sources": ["results"]},
        "It costs -7.5.",
        (),
        False,
        "1 value of 1 in no tool result: number -7.5 (the sources hold no number)",
    ),
    "a_number_nearest_by_value": (
        {"kinds": ["number"], "sources": ["user_input"]},
        "It costs -7.5.",
        (),
        False,
        "1 value of 1 in no user input: number -7.5 (nearest: 1 in the user input of turn 0)",
    ),
    "the_digits_of_an_id_are_no_number": (
        {"kinds": ["number"]},
        "Booking BK-99 and v2 and 2024-05-01.",
        (LOOKUP,),
        True,
        "the final response holds no number: nothing to ground",
    ),
    "a_url_without_the_sentence_stop": (
        {"kinds": ["url"]},
        "See https://example.com/b/1.",
        (LOOKUP,),
        True,
        "1 value grounded: url https://example.com/b/1 in lookup[0] (turn 0, call 0)",
    ),
    "an_invented_url": (
        {"kinds": ["url"]},
        "See https://example.com/b/2",
        (LOOKUP,),
        False,
        "1 value of 1 in no tool result nor user input: url https://example.com/b/2 "
        '(nearest: "https://example.com/b/1" in lookup[0] (turn 0, call 0))',
    ),
    "a_pattern_of_the_author": (
        {"patterns": ["BK-[0-9]+"]},
        "Booked BK-482913; also BK-1.",
        (LOOKUP,),
        False,
        '1 value of 2 in no tool result nor user input: /BK-[0-9]+/ BK-1 (nearest: "BK-482913" '
        "in lookup[0] (turn 0, call 0))",
    ),
    "no_value_in_the_answer": (
        {"kinds": ["id", "url"]},
        "Your table is booked.",
        (),
        True,
        "the final response holds no id, url: nothing to ground",
    ),
    "no_answer": (
        {"kinds": ["id"]},
        None,
        (LOOKUP,),
        False,
        "there is no final response",
    ),
    "many_invented_values_are_counted": (
        {"kinds": ["id"]},
        "A1 is not it, nor AB12, AB13, AB14, AB15, AB16 or AB17.",
        (),
        False,
        '6 values of 6 in no tool result nor user input: id AB12 (nearest: "A1B2C3" in the '
        'user input of turn 0); id AB13 (nearest: "A1B2C3" in the user input of turn 0); id AB14 '
        "(nothing like it in the sources); id AB15 (nothing like it in the sources); id AB16 "
        "(nothing like it in the sources); ... and 1 more",
    ),
}


@pytest.mark.parametrize(
    ("raw", "answer", "calls", "passed", "detail"), GROUNDED.values(), ids=GROUNDED.keys()
)
def test_response_grounded(
    raw: dict[str, Any],
    answer: str | None,
    calls: tuple[RecordedCall, ...],
    passed: bool,
    detail: str,
) -> None:
    check = grounded(raw, run(answer, *calls))
    assert (check.passed, check.detail) == (passed, detail)


def test_the_title_names_the_kinds_the_patterns_and_any_narrowed_sources() -> None:
    raw = {"kinds": ["id", "amount"], "patterns": ["X-\\d+"], "sources": ["results"]}
    assert grounded(raw, run("x")).check == r"response_grounded: id, amount, /X-\d+/ from results"
    assert grounded({"kinds": ["id"]}, run("x")).check == "response_grounded: id"


def test_many_grounded_values_are_counted() -> None:
    result = json.dumps(["AB11", "AB12", "AB13", "AB14", "AB15", "AB16"])
    check = grounded({"kinds": ["id"]}, run("AB11 AB12 AB13 AB14 AB15 AB16", call("list", result)))
    assert check.passed
    assert check.detail.startswith("6 values grounded: id AB11 in list[0] (turn 0, call 0); ")
    assert check.detail.endswith("id AB15 in list[0] (turn 0, call 0); ... and 1 more")


def test_more_grounded_and_nearest_misses() -> None:
    cases = [
        # a code before the number, and after it
        ({"kinds": ["amount"]}, "USD 1250 or 1250 AUD", (LOOKUP,), "2 values grounded"),
        # a url's own last character is kept; only a sentence's stop goes
        (
            {"kinds": ["url"]},
            "See https://example.com/BOX, https://example.com/b/1; or https://example.com/b/1!",
            (call("list", "https://example.com/BOX https://example.com/b/1"),),
            "2 values grounded: url https://example.com/BOX in list[0] (turn 0, call 0); url "
            "https://example.com/b/1 in list[0] (turn 0, call 0)",
        ),
        # kinds and patterns together
        (
            {"kinds": ["url"], "patterns": ["BK-[0-9]+"]},
            "BK-482913 at https://example.com/b/1",
            (LOOKUP,),
            "2 values grounded: url https://example.com/b/1 in lookup[0] (turn 0, call 0); "
            "/BK-[0-9]+/ BK-482913 in lookup[0] (turn 0, call 0)",
        ),
        # a failed call that does not hold the value is not where it occurs
        (
            {"kinds": ["id"]},
            "AB12",
            (call("x", "down", ok=False), call("y", "AB13 AB14")),
            '1 value of 1 in no tool result nor user input: id AB12 (nearest: "AB13" in '
            "y[0] (turn 0, call 1))",
        ),
        # of equally near tokens, the first; exactly half alike is near enough
        (
            {"kinds": ["id"], "sources": ["results"]},
            "AB12",
            (call("y", "AB99"),),
            '1 value of 1 in no tool result: id AB12 (nearest: "AB99" in y[0] (turn 0, call 0))',
        ),
        # nothing to compare with at all
        (
            {"kinds": ["id"], "sources": ["results"]},
            "AB12",
            (call("y", ""),),
            "1 value of 1 in no tool result: id AB12 (nothing like it in the sources)",
        ),
        # of equally near numbers, the first found
        (
            {"kinds": ["number"], "sources": ["results"]},
            "It is 5",
            (call("y", "6 or 4"),),
            "1 value of 1 in no tool result: number 5 (nearest: 6 in y[0] (turn 0, call 0))",
        ),
    ]
    for raw, answer, calls, detail in cases:
        check = grounded(raw, run(answer, *calls))
        assert check.detail.startswith(detail), (answer, check.detail)


def test_a_pattern_the_worker_cannot_search_fails_its_check() -> None:
    # Admission refuses such a pattern; grading still fails closed on one.
    check = grounded({"patterns": ["("]}, run("x"))
    assert not check.passed
    assert check.detail.startswith("the search for /(/ failed: error: ")


def test_the_schema_and_the_registry_describe_the_families() -> None:
    family = ResponseGrounded()
    properties = family.adapter.json_schema()["properties"]
    assert {key: value["description"] for key, value in properties.items()} == {
        "kinds": "id (letters and digits mixed, BK-482913), number, amount (a number with $, "
        "EUR...), url",
        "patterns": "regular expressions: each match in the answer must occur in a source",
        "sources": "where a value may come from: results (of calls that succeeded), "
        "user_input; both by default",
    }
    assert family.description == (
        "every id, number, amount, url (kinds) or pattern match in the final response occurs "
        "in a successful tool result or the user input"
    )
    claims_family = ResponseClaimsBacked()
    claim = claims_family.adapter.json_schema()["$defs"]["BackedClaim"]["properties"]
    assert claim["claim"]["description"] == (
        "the phrase that makes the claim (refunded): any case, whole words"
    )
    assert claim["match"]["description"] == (
        "how the arguments are compared: partial (the default with arguments), exact, subset, "
        "ignore (the default without), paths"
    )
    assert claims_family.description == (
        "an answer that makes the claim (a phrase) is backed by a successful call to the tool "
        "(optionally with arguments)"
    )


def test_a_value_said_twice_is_one_value() -> None:
    check = grounded({"kinds": ["id"]}, run("BK-482913, yes BK-482913", LOOKUP))
    assert check.detail == "1 value grounded: id BK-482913 in lookup[0] (turn 0, call 0)"


def test_the_first_source_holding_a_value_is_named() -> None:
    check = grounded({"kinds": ["id"]}, run("BK-482913", LOOKUP, said="about BK-482913"))
    assert check.detail == "1 value grounded: id BK-482913 in the user input of turn 0"


def test_an_author_pattern_that_backtracks_forever_fails_its_check() -> None:
    check = grounded({"patterns": ["(a+)+$"]}, run("a" * 40 + "!"))
    assert not check.passed
    assert check.detail == "the search for /(a+)+$/ did not finish within 2 s"


# --- claims -----------------------------------------------------------------------

REFUND = {"claim": "refunded", "tool": "refund"}
REFUND_20 = {"claim": "refunded", "tool": "refund", "arguments": {"amount": 20}}

# id -> (entry, answer, calls, passed, detail)
CLAIMS: dict[str, tuple[dict[str, Any], str | None, tuple[RecordedCall, ...], bool, str]] = {
    "backed": (
        REFUND,
        "Your order was Refunded.",
        (call("refund", "ok", amount=20),),
        True,
        "the final response claims 'Refunded'; refund[0] (turn 0, call 0) succeeded",
    ),
    "the_call_failed": (
        REFUND,
        "You have been refunded.",
        (call("refund", "tool 'refund': card declined", ok=False, amount=20),),
        False,
        "the final response claims 'refunded', but no such call succeeded: refund[0] (turn 0, "
        "call 0) failed: \"tool 'refund': card declined\"",
    ),
    "never_called": (
        REFUND,
        "You have been refunded.",
        (call("lookup", BOOKING),),
        False,
        "the final response claims 'refunded', but refund was never called (1 call: lookup)",
    ),
    "another_amount": (
        REFUND_20,
        "You have been  refunded.",
        (call("refund", "ok", amount=25),),
        False,
        "the final response claims 'refunded', but no call to refund has the arguments: "
        "nearest refund[0] (turn 0, call 0), arguments differ: /amount: expected 20, got 25",
    ),
    "a_later_call_succeeded": (
        REFUND_20,
        "Refunded.",
        (
            call("refund", "timeout", ok=False, amount=20),
            call("refund", "ok", amount=20, note="retry"),
        ),
        True,
        "the final response claims 'Refunded'; refund[1] (turn 0, call 1) succeeded",
    ),
    "not_claimed": (
        REFUND,
        "I could not process the return.",
        (call("refund", "declined", ok=False),),
        True,
        "the final response does not claim 'refunded'",
    ),
    "part_of_a_word_is_no_claim": (
        REFUND,
        "The item is nonrefunded.",
        (),
        True,
        "the final response does not claim 'refunded'",
    ),
    "a_phrase_across_spaces": (
        {"claim": "money  sent", "tool": "pay"},
        "The money\nsent at noon.",
        (),
        False,
        "the final response claims 'money\\nsent', but pay was never called (no tool was called)",
    ),
    "no_answer": (REFUND, None, (), False, "there is no final response"),
}


@pytest.mark.parametrize(
    ("entry", "answer", "calls", "passed", "detail"), CLAIMS.values(), ids=CLAIMS.keys()
)
def test_response_claims_backed(
    entry: dict[str, Any],
    answer: str | None,
    calls: tuple[RecordedCall, ...],
    passed: bool,
    detail: str,
) -> None:
    (check,) = claims([entry], run(answer, *calls))
    assert (check.passed, check.detail) == (passed, detail)


def test_each_claim_is_one_check_titled_by_claim_and_call() -> None:
    checks = claims([REFUND, REFUND_20], run("refunded", call("refund", "ok", amount=20)))
    assert [check.check for check in checks] == [
        "response_claims_backed: 'refunded' needs refund",
        "response_claims_backed: 'refunded' needs refund {\"amount\":20}",
    ]
    assert all(check.passed for check in checks)


def test_several_failed_calls_are_listed() -> None:
    failed = [call("refund", f"error {n}", ok=False) for n in range(6)]
    (check,) = claims([REFUND], run("refunded", *failed))
    assert check.detail.count(" failed: ") == 5
    (check,) = claims([REFUND], run("refunded", *failed[:2]))
    assert check.detail == (
        "the final response claims 'refunded', but no such call succeeded: refund[0] (turn 0, "
        'call 0) failed: "error 0"; refund[1] (turn 0, call 1) failed: "error 1"'
    )


def test_the_nearest_call_differs_least_and_shows_three_differences() -> None:
    entry = {"claim": "refunded", "tool": "refund", "arguments": {"a": 1, "b": 2, "c": 3, "d": 4}}
    far = call("refund", "ok", a=0, b=0, c=0, d=0)
    near = call("refund", "ok", a=1, b=0, c=0, d=0)
    (check,) = claims([entry], run("refunded", far, near))
    assert check.detail == (
        "the final response claims 'refunded', but no call to refund has the arguments: "
        "nearest refund[1] (turn 0, call 1), arguments differ: /b: expected 2, got 0; "
        "/c: expected 3, got 0; /d: expected 4, got 0"
    )
    (check,) = claims([entry], run("refunded", far, call("refund", "ok", a=0, b=0, c=0, d=0)))
    assert check.detail.startswith(
        "the final response claims 'refunded', but no call to refund has the arguments: "
        "nearest refund[0] (turn 0, call 0), arguments differ: /a: expected 1, got 0; "
        "/b: expected 2, got 0; /c: expected 3, got 0"
    )
    assert check.detail.endswith("/c: expected 3, got 0")  # three differences, not four


def test_claims_name_their_tools_for_the_offer() -> None:
    family = ResponseClaimsBacked()
    params = family.adapter.validate_python([REFUND, {"claim": "sent", "tool": "mail_*"}])
    named = list(family.tools_named(params))
    assert [(ref.path, ref.written) for ref in named] == [
        ((0, "tool"), "refund"),
        ((1, "tool"), "mail_*"),
    ]
    assert named[1].accepts("mail_send") and not named[1].accepts("refund")


def test_a_claim_with_punctuation_and_an_empty_argument_is_admitted(
    registry: Registry, replay: RunMode
) -> None:
    entry = {"claim": "refunded!", "tool": "refund", "arguments": {"note": ""}}
    admit_data(case({"response_claims_backed": [entry]}), registry, replay, source="case.json")


def test_settled_names_every_entry_the_script_settles() -> None:
    from zeroclaw_eval.grading.script import Script, ScriptedCall

    family = ResponseClaimsBacked()
    params = family.adapter.validate_python(
        [{"claim": "cancelled", "tool": "refund"}, {"claim": "moved", "tool": "refund"}, REFUND]
    )
    script = Script((ScriptedCall(0, "refund", result="ok"),), ("refunded",), "refunded")
    assert [(p.path, p.message) for p in family.settled(params, script)] == [
        ((0, "claim"), "the scripted answer never claims 'cancelled', so the check passes"),
        ((1, "claim"), "the scripted answer never claims 'moved', so the check passes"),
        ((2, "claim"), "a scripted call to 'refund' with a scripted success backs it"),
    ]
    runs = Script((ScriptedCall(0, "refund"),), ("refunded",), "refunded")
    assert list(family.settled(params, runs))[2:] == []  # the tool runs: it may fail


def test_five_grounded_values_are_all_listed() -> None:
    result = json.dumps(["AB11", "AB12", "AB13", "AB14", "AB15"])
    check = grounded({"kinds": ["id"]}, run("AB11 AB12 AB13 AB14 AB15", call("list", result)))
    assert check.detail.endswith("id AB15 in list[0] (turn 0, call 0)")


def test_claims_compare_arguments_partially_by_default() -> None:
    (check,) = claims([REFUND_20], run("refunded", call("refund", "ok", amount=20, to="card")))
    assert check.passed
    (check,) = claims(
        [{**REFUND_20, "match": "exact"}], run("refunded", call("refund", "ok", amount=20, to="x"))
    )
    assert not check.passed


def test_evidence_read() -> None:
    family = ResponseClaimsBacked()
    params = family.adapter.validate_python
    assert family.evidence(params([REFUND])) == {"response", "calls", "status"}
    assert family.evidence(params([REFUND, REFUND_20])) == {
        "response",
        "calls",
        "status",
        "arguments",
    }
    other = ResponseGrounded()
    assert other.evidence(other.adapter.validate_python({"kinds": ["id"]})) == {
        "response",
        "calls",
        "results",
        "status",
    }
    only_user = other.adapter.validate_python({"kinds": ["id"], "sources": ["user_input"]})
    assert other.evidence(only_user) == {"response"}


# --- admission ----------------------------------------------------------------------


def case(
    expects: dict[str, Any],
    answer: str = "Booked BK-482913, refunded",
    tool_results: dict[str, Any] | None = None,
    user_input: str = "Book it",
) -> dict[str, Any]:
    """A one-turn case: a call to lookup, then ``answer``."""
    data: dict[str, Any] = {
        "model_name": "evidence",
        "turns": [
            {
                "user_input": user_input,
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [
                                {"id": "c1", "name": "echo", "arguments": {"message": BOOKING}},
                                {"id": "c2", "name": "refund", "arguments": {"amount": 20}},
                            ],
                        }
                    },
                    {"response": {"type": "text", "content": answer}},
                ],
            }
        ],
        "expects": expects,
    }
    if tool_results is not None:
        data["tool_results"] = tool_results
    return data


REFUND_OK = {"refund": [{"result": "refunded 20"}]}


@pytest.fixture(scope="module")
def reference(registry: Registry) -> Any:
    return registry.agents["reference"].obj


REFUSED: dict[str, tuple[dict[str, Any], str]] = {
    "nothing_to_ground": (
        {"response_grounded": {"sources": ["results"]}},
        "expects.response_grounded: names no value to ground: give kinds, patterns or both",
    ),
    "a_kind_twice": (
        {"response_grounded": {"kinds": ["id", "id"]}},
        "expects.response_grounded.kinds: names a kind twice",
    ),
    "a_source_twice": (
        {"response_grounded": {"kinds": ["id"], "sources": ["results", "results"]}},
        "expects.response_grounded.sources: names a source twice",
    ),
    "an_unknown_kind": (
        {"response_grounded": {"kinds": ["iban"]}},
        "expects.response_grounded.kinds[0]=\"iban\": input should be 'id', 'number', "
        "'amount' or 'url'",
    ),
    "a_bad_pattern": (
        {"response_grounded": {"patterns": ["BK-("]}},
        'expects.response_grounded.patterns[0]="BK-(": not a valid regular expression: '
        "missing ), unterminated subpattern at position 3",
    ),
    "a_pattern_matching_nothing": (
        {"response_grounded": {"patterns": ["x", "[0-9]*"]}},
        'expects.response_grounded.patterns[1]="[0-9]*": matches the empty string: it finds '
        "nothing to ground, so it asserts nothing",
    ),
    "an_empty_pattern": (
        {"response_grounded": {"patterns": [""]}},
        'expects.response_grounded.patterns[0]="": must not be empty',
    ),
    "no_kind": (
        {"response_grounded": {"kinds": []}},
        "expects.response_grounded.kinds: must not be empty",
    ),
    "no_pattern": (
        {"response_grounded": {"kinds": ["id"], "patterns": []}},
        "expects.response_grounded.patterns: must not be empty",
    ),
    "no_source": (
        {"response_grounded": {"kinds": ["id"], "sources": []}},
        "expects.response_grounded.sources: must not be empty",
    ),
    "a_claim_of_no_word": (
        {"response_claims_backed": [REFUND, {"claim": "!!", "tool": "refund"}]},
        'expects.response_claims_backed[1].claim="!!": has no word in it: it can claim nothing',
    ),
    "a_claim_with_a_bad_matcher": (
        {"response_claims_backed": [{**REFUND, "arguments": {"amount": {"$approx": 1}}}]},
        "expects.response_claims_backed[0].arguments.amount",
    ),
    "a_claim_ignoring_its_arguments": (
        {"response_claims_backed": [{**REFUND_20, "match": "ignore"}]},
        'expects.response_claims_backed[0].match="ignore": ignores the arguments given beside it',
    ),
    "no_claim": (
        {"response_claims_backed": []},
        "expects: declares nothing that would produce a check (every entry is empty)",
    ),
    "an_empty_claim": (
        {"response_claims_backed": [{"claim": "", "tool": "refund"}]},
        'expects.response_claims_backed[0].claim="": must not be empty',
    ),
}


@pytest.mark.parametrize(("expects", "message"), REFUSED.values(), ids=REFUSED.keys())
def test_admission_refuses(
    registry: Registry, replay: RunMode, expects: dict[str, Any], message: str
) -> None:
    assert refusal(case(expects), registry, replay).startswith(message)


SETTLED = "cannot fail for agent 'reference', which plays the script as written: "


def test_an_empty_pattern_is_refused_by_its_type(registry: Registry, replay: RunMode) -> None:
    data = case({"response_grounded": {"patterns": [""]}})
    assert refusal(data, registry, replay) == (
        'expects.response_grounded.patterns[0]="": must not be empty'
    )


def test_a_pattern_nested_too_deeply_is_refused(registry: Registry, replay: RunMode) -> None:
    data = case(
        {"response_grounded": {"kinds": ["id"], "patterns": ["x", "(" * 2000 + ")" * 2000]}}
    )
    message = refusal(data, registry, replay)
    assert message.startswith("expects.response_grounded.patterns[1]")
    assert message.endswith(": not a valid regular expression: nested too deeply")


def test_an_answer_the_fixture_grounds_itself_is_refused_for_the_reference_agent(
    registry: Registry, replay: RunMode, reference: Any
) -> None:
    data = case(
        {"response_grounded": {"kinds": ["id", "amount"]}},
        answer="Booked BK-482913 for $20",
        tool_results={"echo": [{"result": BOOKING}], **REFUND_OK},
    )
    assert refusal(data, registry, replay, reference) == (
        f"expects.response_grounded: {SETTLED}the scripted answer is grounded by the fixture "
        "itself: 2 values grounded: id BK-482913 in echo[0] (turn 0, call 0); amount $20 in "
        "refund[0] (turn 0, call 1)"
    )
    # Without the agent, or with one that writes its own answer, it can fail.
    admit_data(data, registry, replay, source="case.json")


def test_an_answer_grounded_only_by_a_tool_that_runs_is_admitted(
    registry: Registry, replay: RunMode, reference: Any
) -> None:
    data = case(
        {"response_grounded": {"kinds": ["id"]}}, answer="Booked BK-482913", tool_results=REFUND_OK
    )
    admit_data(data, registry, replay, source="case.json", agent=reference)


def test_an_answer_with_nothing_to_ground_is_refused_for_the_reference_agent(
    registry: Registry, replay: RunMode, reference: Any
) -> None:
    data = case({"response_grounded": {"kinds": ["url"]}}, tool_results=REFUND_OK)
    assert refusal(data, registry, replay, reference).endswith(
        "the scripted answer is grounded by the fixture itself: the final response holds no "
        "url: nothing to ground"
    )


def test_claims_the_fixture_settles_are_refused_for_the_reference_agent(
    registry: Registry, replay: RunMode, reference: Any
) -> None:
    never = case({"response_claims_backed": [{"claim": "cancelled", "tool": "refund"}]})
    assert refusal(never, registry, replay, reference) == (
        f'expects.response_claims_backed[0].claim="cancelled": {SETTLED}the scripted answer '
        "never claims 'cancelled', so the check passes"
    )
    backed = case({"response_claims_backed": [REFUND_20]}, tool_results=REFUND_OK)
    assert refusal(backed, registry, replay, reference) == (
        f'expects.response_claims_backed[0].claim="refunded": {SETTLED}a scripted call to '
        "'refund' with a scripted success backs it"
    )


def test_claims_whose_backing_call_can_fail_are_admitted(
    registry: Registry, replay: RunMode, reference: Any
) -> None:
    for expects, results in (
        # refund runs for real (it is no registered tool: a failed call)
        ({"response_claims_backed": [REFUND]}, None),
        # the scripted call has other arguments: no call backs it
        ({"response_claims_backed": [{**REFUND_20, "arguments": {"amount": 5}}]}, REFUND_OK),
        # the scripted call fails
        (
            {"response_claims_backed": [REFUND]},
            {"refund": [{"result": "declined", "error": True}]},
        ),
    ):
        data = case({**expects, "tools_used": ["echo"]}, tool_results=results)
        admit_data(data, registry, replay, source="case.json", agent=reference)


# --- eval check ---------------------------------------------------------------------


def test_check_finds_an_answer_no_scripted_result_grounds(
    registry: Registry, replay: RunMode
) -> None:
    data = case(
        {"response_grounded": {"kinds": ["id"]}},
        answer="Booked BK-482914",
        tool_results={"echo": [{"result": BOOKING}], **REFUND_OK},
    )
    assert findings(data, registry, replay) == [
        "case.json: expects.response_grounded: no scripted result nor user input grounds the "
        "scripted answer: 1 value of 1 in no tool result nor user input: id BK-482914 "
        '(nearest: "BK-482913" in echo[0] (turn 0, call 0)): can never pass'
    ]
    # A tool that runs for real may return it: nothing is certain.
    del data["tool_results"]["echo"]
    assert findings(data, registry, replay) == []


def test_check_reads_only_the_sources_named(registry: Registry, replay: RunMode) -> None:
    data = case(
        {"response_grounded": {"kinds": ["id"], "sources": ["user_input"]}},
        answer="Booked BK-482913",
        tool_results=REFUND_OK,
    )
    assert len(findings(data, registry, replay)) == 1


def test_check_finds_each_claim_no_scripted_call_backs(registry: Registry, replay: RunMode) -> None:
    data = case(
        {"response_claims_backed": [REFUND, {**REFUND_20, "arguments": {"amount": 5}}]},
        tool_results={"refund": [{"result": "declined", "error": True}]},
    )
    assert [found.split(": ", 2)[1] for found in findings(data, registry, replay)] == [
        'expects.response_claims_backed[0].claim="refunded"',
        'expects.response_claims_backed[1].claim="refunded"',
    ]
    # A call whose tool runs for real may back the claim: no finding.
    ran = case({"response_claims_backed": [{"claim": "booked", "tool": "echo"}]}, "booked")
    assert findings(ran, registry, replay) == []


def test_check_finds_a_claim_whose_scripted_call_fails(registry: Registry, replay: RunMode) -> None:
    data = case(
        {"response_claims_backed": [REFUND]},
        tool_results={"refund": [{"result": "declined", "error": True}]},
    )
    assert findings(data, registry, replay) == [
        'case.json: expects.response_claims_backed[0].claim="refunded": the final response '
        "claims 'refunded', but no such call succeeded: refund[0] (turn 0, call 1) failed: "
        '"declined": can never pass'
    ]
    ran = case({"response_claims_backed": [REFUND]})  # refund runs: it may succeed
    assert findings(ran, registry, replay) == []


# --- admission's reading of the script ----------------------------------------------


class _SettledRaises(Family[list[str]]):
    """A plugin family whose settled() has a bug."""

    name = "settled_raises"
    params = list[str]

    def settled(self, params: list[str], script: Any) -> Iterable[Problem]:
        raise KeyError("bug in settled")

    def grade(self, params: list[str], run: RunRecord) -> list[CheckResult]:
        return [CheckResult(self.name, False, "x")]


class _SettledPlugin:
    @hookimpl
    def zeroclaw_eval_register_families(self, register: Any) -> None:
        register(_SettledRaises())


def test_a_family_whose_settled_raises_is_refused_naming_its_plugin(
    replay: RunMode, reference: Any
) -> None:
    pm = get_plugin_manager(load_entry_points=False)
    pm.register(_SettledPlugin(), name="acme-settled")
    registry = Registry.from_plugin_manager(pm)
    data = case({"settled_raises": ["x"]})
    assert refusal(data, registry, replay, reference) == (
        "expects.settled_raises: family 'settled_raises' of plugin 'acme-settled' failed "
        "during admission: KeyError: 'bug in settled'"
    )


def test_settled_is_asked_only_of_the_reference_agent_in_a_mode_that_replays(
    registry: Registry, replay: RunMode, reference: Any
) -> None:
    data = case({"response_claims_backed": [{"claim": "cancelled", "tool": "refund"}]})
    live = registry.modes["live"].obj  # the model writes the answer: nothing is settled
    admit_data(data, registry, live, source="case.json", agent=reference)
    never = case({"response_claims_backed": [{"claim": "cancelled", "tool": "refund"}]})
    assert "cannot fail for agent 'reference'" in refusal(never, registry, replay, reference)
