"""The accounting budgets rest on, on hand-built run records: sums that list what was
missing instead of counting it as 0, prices as ranges when the cached part is not
known, and each budget's three outcomes (passed, failed, undecided).

The same families run against a real server in tests/test_budgets_live.py; here
every branch is pinned on its own, in-process, for the mutation tool.
"""

from __future__ import annotations

from typing import Any

import pytest

from zeroclaw_eval.agents.bridged import OfferedTool
from zeroclaw_eval.builtin.budgets import MaxCost, MaxInputTokens, MaxOutputTokens, MaxTotalTokens
from zeroclaw_eval.builtin.request_size import (
    MaxRequestChars,
    MaxTotalRequestChars,
    request_chars,
)
from zeroclaw_eval.config import Rate
from zeroclaw_eval.grading.accounting import cost, metering, tokens
from zeroclaw_eval.grading.record import ModelRequest, RequestUsage, RunRecord
from zeroclaw_eval.protocol import Usage
from zeroclaw_eval.report.model import CheckResult

RATE = Rate(input=2.0, output=8.0, cached_input=0.5, checked="2026-01-15")
M = 1_000_000


def run(*usages: Usage | None, model: str | None = "m", **rates: Rate) -> RunRecord:
    return RunRecord(
        responses=["x"],
        usage=[RequestUsage(0, step, model, usage) for step, usage in enumerate(usages)],
        rates=rates or {"m": RATE},
    )


def test_a_total_is_exact_only_when_every_request_reported_the_kind() -> None:
    exact = tokens(run(Usage(input_tokens=3), Usage(input_tokens=4)), "input_tokens")
    partial = tokens(run(Usage(input_tokens=3), Usage(output_tokens=4), None), "input_tokens")

    assert (exact.reported, exact.missing, exact.exact) == (7, (), True)
    assert partial.reported == 3 and not partial.exact
    assert partial.missing == (
        "turn 0 request 1: no input tokens reported",
        "turn 0 request 2: no usage reported",
    )


def test_total_tokens_need_both_input_and_output() -> None:
    total = tokens(
        run(Usage(input_tokens=3, output_tokens=2), Usage(input_tokens=1)), "total_tokens"
    )

    assert total.reported == 6
    assert total.missing == ("turn 0 request 1: no output tokens reported",)


def test_requests_without_usage_entries_and_agents_that_record_none_are_missing() -> None:
    request = ModelRequest(0, 0, [{"role": "user", "content": "hi"}], [])
    unmetered = RunRecord(responses=["x"], requests=[request, request])
    silent = RunRecord(responses=["x"])

    assert tokens(unmetered, "input_tokens").missing == ("2 requests with no reply recorded",)
    assert tokens(silent, "input_tokens").missing == ("the agent recorded no model request",)
    assert cost(silent).missing == ("the agent recorded no model request",)
    assert tokens(RunRecord(), "input_tokens").exact  # nothing ran: nothing is missing


def test_cost_prices_the_uncached_cached_and_output_parts() -> None:
    priced = cost(run(Usage(input_tokens=1000, output_tokens=100, cached_input_tokens=400)))

    assert priced.exact
    assert priced.reported == pytest.approx((600 * 2.0 + 400 * 0.5 + 100 * 8.0) / M)


def test_cost_without_the_cached_part_is_a_range() -> None:
    priced = cost(run(Usage(input_tokens=1000, output_tokens=100)))

    assert not priced.exact and priced.missing == ()
    assert priced.reported == pytest.approx((1000 * 0.5 + 100 * 8.0) / M)
    assert priced.most == pytest.approx((1000 * 2.0 + 100 * 8.0) / M)


def test_a_rate_without_a_cached_price_makes_no_range() -> None:
    plain = Rate(input=2.0, output=8.0, checked="2026-01-15")
    priced = cost(run(Usage(input_tokens=1000, output_tokens=0), m=plain))

    assert priced.exact and priced.reported == pytest.approx(1000 * 2.0 / M)


def test_cache_writes_are_priced_apart_and_need_their_rate() -> None:
    usage = Usage(
        input_tokens=1000, output_tokens=0, cached_input_tokens=0, cache_write_input_tokens=200
    )
    writing = Rate(input=2.0, output=8.0, cache_write_input=2.5, checked="2026-01-15")

    priced = cost(run(usage, m=writing))
    unpriced = cost(run(usage))

    assert priced.reported == pytest.approx((800 * 2.0 + 200 * 2.5) / M)
    assert unpriced.missing == (
        "turn 0 request 0 (m): 200 cache-write tokens and no cache_write_input rate",
    )


@pytest.mark.parametrize(
    ("usage", "why"),
    [
        (Usage(output_tokens=1), "no input tokens reported"),
        (Usage(input_tokens=1), "no output tokens reported"),
        (
            Usage(input_tokens=10, output_tokens=1, cached_input_tokens=4),
            "4 cached input tokens and no cached_input rate",
        ),
    ],
)
def test_what_a_rate_cannot_price_is_missing(usage: Usage, why: str) -> None:
    plain = Rate(input=2.0, output=8.0, checked="2026-01-15")

    assert cost(run(usage, m=plain)).missing == (f"turn 0 request 0 (m): {why}",)


def test_a_reply_naming_no_model_is_priced_at_the_model_asked_for() -> None:
    record = run(Usage(input_tokens=M, output_tokens=0, cached_input_tokens=0), model=None)
    nameless = cost(record)
    record.requested_model = "m"

    assert nameless.missing == ("turn 0 request 0: the model is not known",)
    assert cost(record).reported == pytest.approx(2.0)


def test_metering_keeps_each_request_and_totals_only_what_is_known() -> None:
    record = run(
        Usage(input_tokens=10, output_tokens=2, cached_input_tokens=0, reasoning_tokens=1),
        Usage(input_tokens=20, output_tokens=3),
    )

    metered = metering(record)

    assert metered.input_tokens == 30 and metered.output_tokens == 5
    assert metered.cached_input_tokens is None and metered.reasoning_tokens is None
    assert metered.cost is None  # the second request is priced only as a range
    assert metered.requests[0]["cost"] == pytest.approx((10 * 2.0 + 2 * 8.0) / M)
    assert metered.requests[1]["cost"] is None
    assert metered.requests[1]["cached_input_tokens"] is None
    assert metering(RunRecord(rates={})).cost is None  # nothing to price with
    exact = metering(run(Usage(input_tokens=1, output_tokens=1, cached_input_tokens=0)))
    assert exact.cost == pytest.approx(10.0 / M)


def grade(family: Any, params: Any, record: RunRecord) -> CheckResult:
    (check,) = family.grade(params, record)
    return check


def test_a_budget_at_its_bound_passes_and_one_token_over_fails() -> None:
    at = grade(MaxOutputTokens(), 10, run(Usage(output_tokens=4), Usage(output_tokens=6)))
    over = grade(MaxOutputTokens(), 10, run(Usage(output_tokens=5), Usage(output_tokens=6)))

    assert at == CheckResult("max_output_tokens: 10", True, "10 output tokens over 2 requests")
    assert over == CheckResult(
        "max_output_tokens: 10",
        False,
        "11 output tokens over 2 requests, more than 10 output tokens",
    )


def test_what_was_reported_already_over_the_budget_fails_whatever_is_missing() -> None:
    check = grade(MaxInputTokens(), 10, run(Usage(input_tokens=11), None))

    assert check == CheckResult(
        "max_input_tokens: 10",
        False,
        "11 input tokens over 2 requests, more than 10 input tokens already (turn 0 "
        "request 1: no usage reported)",
    )


def test_an_undecided_check_names_at_most_three_requests() -> None:
    check = grade(MaxTotalTokens(), 100, run(None, None, None, None, None))

    assert check.undecided and not check.passed
    assert check.detail == (
        "n/a: turn 0 request 0: no usage reported; turn 0 request 1: no usage reported; "
        "turn 0 request 2: no usage reported; and 2 more (the rest reported 0 tokens (input "
        "and output))"
    )


def test_a_cost_range_decides_when_it_can() -> None:
    # 1,000,000 input tokens, cached part unknown: 0.5 to 2.0
    usage = Usage(input_tokens=M, output_tokens=0)

    within = grade(MaxCost(), 2.0, run(usage))
    between = grade(MaxCost(), 1.0, run(usage))
    over = grade(MaxCost(), 0.4, run(usage))

    assert within == CheckResult("max_cost: 2", True, "at most 2 over 1 request")
    assert between == CheckResult.not_decided(
        "max_cost: 1",
        "n/a: between 0.5 and 2: a reply did not say how much of its input was cached",
    )
    assert over == CheckResult(
        "max_cost: 0.4", False, "0.5 over 1 request, more than 0.4 already (at the least)"
    )


def test_a_known_cost_within_the_budget_passes() -> None:
    exact = Usage(input_tokens=M, output_tokens=0, cached_input_tokens=0)

    assert grade(MaxCost(), 2.0, run(exact)) == CheckResult("max_cost: 2", True, "2 over 1 request")
    assert not grade(MaxCost(), 1.99, run(exact)).passed


HI = {"role": "user", "content": "hi"}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": "{}"}}
    ],
}
ECHO = OfferedTool("echo", "Echo.", {"type": "object"})


def test_a_request_measures_its_texts_its_calls_and_its_tools() -> None:
    assert request_chars(ModelRequest(0, 0, [HI], [])) == 2
    # "echo" and "{}" of the call; the tool result's text
    with_call = [HI, CALL, {"role": "tool", "tool_call_id": "c1", "content": "done"}]
    assert request_chars(ModelRequest(0, 1, with_call, [])) == 2 + 4 + 2 + 4
    # the tool's name, description and compact schema: 4 + 5 + 17
    assert request_chars(ModelRequest(0, 0, [HI], [ECHO])) == 2 + 26
    # characters, not bytes
    assert request_chars(ModelRequest(0, 0, [{"role": "user", "content": "héllo 日本"}], [])) == 8


def requests(*sizes: int) -> RunRecord:
    made = [
        ModelRequest(0, step, [{"role": "user", "content": "x" * size}], [])
        for step, size in enumerate(sizes)
    ]
    return RunRecord(responses=["x"], requests=made)


def test_the_request_size_budgets_hold_at_their_bound() -> None:
    assert grade(MaxRequestChars(), 5, requests(5, 3)) == CheckResult(
        "max_request_chars: 5", True, "the largest of 2 requests: 5 characters"
    )
    assert grade(MaxRequestChars(), 4, requests(5, 3, 6, 7, 9)) == CheckResult(
        "max_request_chars: 4",
        False,
        "4 requests over 4 characters (turn 0 request 0: 5; turn 0 request 2: 6; turn 0 "
        "request 3: 7; ...)",
    )
    assert grade(MaxTotalRequestChars(), 8, requests(5, 3)).passed
    assert grade(MaxTotalRequestChars(), 7, requests(5, 3)) == CheckResult(
        "max_total_request_chars: 7", False, "8 characters over 2 requests, more than 7"
    )


def test_a_size_budget_over_an_agent_that_records_no_request_is_undecided() -> None:
    silent = RunRecord(responses=["x"])

    for family in (MaxRequestChars(), MaxTotalRequestChars()):
        check = grade(family, 10, silent)
        assert check.undecided and check.detail.startswith("n/a: the agent recorded no model")
    assert grade(MaxRequestChars(), 10, RunRecord()).passed  # a run that did nothing


def test_three_missing_figures_are_all_named_with_nothing_more() -> None:
    check = grade(MaxTotalTokens(), 100, run(None, None, None))

    assert check.detail == (
        "n/a: turn 0 request 0: no usage reported; turn 0 request 1: no usage reported; "
        "turn 0 request 2: no usage reported (the rest reported 0 tokens (input and output))"
    )


@pytest.mark.parametrize("limit", [0, -1.5, float("inf"), float("nan")])
def test_a_cost_budget_must_be_a_positive_finite_amount(limit: float) -> None:
    from zeroclaw_eval.case.admission import admit_data
    from zeroclaw_eval.errors import AdmissionError
    from zeroclaw_eval.testing import make_registry

    registry = make_registry()
    case = {
        "model_name": "c",
        "turns": [{"user_input": "hi"}],
        "expects": {"response_contains": ["hi"], "max_cost": limit},
    }
    with pytest.raises(AdmissionError) as refused:
        admit_data(case, registry, registry.modes["live"].obj, source="c.json")
    assert refused.value.field.startswith("expects.max_cost")


def test_four_missing_figures_name_three_and_one_more() -> None:
    check = grade(MaxTotalTokens(), 100, run(None, None, None, None))

    assert check.detail.endswith(
        "no usage reported; and 1 more (the rest reported 0 tokens (input and output))"
    )


def test_cost_sums_every_priceable_request_past_those_it_cannot_price() -> None:
    known = Usage(input_tokens=M, output_tokens=0, cached_input_tokens=0)
    record = run(None, known, known)
    record.usage.insert(1, RequestUsage(0, 9, "other", known))

    priced = cost(record)

    assert priced.reported == 4.0  # two requests at 2.0, exactly: per million
    assert priced.missing == (
        "turn 0 request 0: no usage reported",
        "turn 0 request 9: no rate for model 'other'",
    )


def test_ranges_add_up_over_the_requests() -> None:
    unsplit = Usage(input_tokens=M, output_tokens=0)

    priced = cost(run(unsplit, unsplit))

    assert (priced.reported, priced.most) == (1.0, 4.0)


def test_cache_writes_are_counted_in_both_ends_of_a_range() -> None:
    writing = Rate(
        input=2.0, output=8.0, cached_input=0.5, cache_write_input=3.0, checked="2026-01-15"
    )
    known = Usage(
        input_tokens=M, output_tokens=0, cached_input_tokens=0, cache_write_input_tokens=M // 2
    )
    unsplit = Usage(input_tokens=M, output_tokens=0, cache_write_input_tokens=M // 2)

    exact = cost(run(known, m=writing))
    ranged = cost(run(unsplit, m=writing))

    assert exact.exact and exact.reported == 2.5  # half plain at 2.0, half written at 3.0
    assert (ranged.reported, ranged.most) == (1.75, 2.5)  # the plain half at 0.5 to 2.0


def test_metering_prices_a_nameless_reply_at_the_model_asked_for() -> None:
    record = run(Usage(input_tokens=M, output_tokens=0, cached_input_tokens=0), model=None)
    record.requested_model = "m"

    metered = metering(record)

    assert metered.requests[0]["cost"] == 2.0 and metered.cost == 2.0


def test_metering_keeps_every_figure_of_each_request_and_none_for_a_missing_usage() -> None:
    usage = Usage(input_tokens=5, output_tokens=1, cache_write_input_tokens=0)

    first, second = metering(run(usage, None)).requests

    assert first == {
        "turn": 0,
        "step": 0,
        "model": "m",
        "input_tokens": 5,
        "cached_input_tokens": None,
        "reasoning_tokens": None,
        "output_tokens": 1,
        "cache_write_input_tokens": 0,
        "cost": None,  # the cached part is not known: a range
    }
    assert second == {
        "turn": 0,
        "step": 1,
        "model": "m",
        "input_tokens": None,
        "cached_input_tokens": None,
        "reasoning_tokens": None,
        "output_tokens": None,
        "cache_write_input_tokens": None,
        "cost": None,
    }


def test_a_tool_schema_is_measured_as_compact_json_with_its_characters_as_is() -> None:
    tool = OfferedTool("t", "", {"type": "object", "title": "é"})

    # {"type":"object","title":"é"}: 29 characters, the é one of them
    assert request_chars(ModelRequest(0, 0, [], [tool])) == 1 + 29


def test_three_requests_over_the_bound_are_all_named_with_nothing_more() -> None:
    check = grade(MaxRequestChars(), 4, requests(5, 6, 7))

    assert check.detail == (
        "3 requests over 4 characters (turn 0 request 0: 5; turn 0 request 1: 6; turn 0 "
        "request 2: 7)"
    )


def test_no_request_at_all_is_within_any_size_bound() -> None:
    check = grade(MaxRequestChars(), 10, RunRecord())

    assert check == CheckResult(
        "max_request_chars: 10", True, "the largest of 0 requests: 0 characters"
    )
