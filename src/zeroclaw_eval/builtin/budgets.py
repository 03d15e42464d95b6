"""Token and cost budgets per case: ``max_input_tokens``, ``max_cached_input_tokens``,
``max_reasoning_tokens``, ``max_output_tokens``, ``max_total_tokens``, ``max_cost``.

Each sums what the provider reported for every model request of the case
(:mod:`zeroclaw_eval.grading.accounting`) and holds it to an inclusive maximum;
``max_total_tokens`` counts input plus output, ``max_cost`` prices the usage at
the ``[eval.rates]`` of the model that answered. A missing figure is never 0: a
request without usage (or without the kind counted), a model without a rate,
leave the check *undecided* (``n/a``, naming the request or the model), which does
not pass; unless what was reported is already over the budget, which no missing
figure can undo, and then the check fails.

They read ``usage``: a mode that has none to give (``replay``, whose counts are the
script's) refuses them at admission, pointing at the request-size budgets of
:mod:`zeroclaw_eval.builtin.request_size`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, PositiveInt

from zeroclaw_eval.grading.family import Family
from zeroclaw_eval.grading.record import RunRecord
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.model import CheckResult, plural

if TYPE_CHECKING:
    from zeroclaw_eval.grading.accounting import Total

#: How many of the requests that lacked a figure a check names.
NAMED = 3

USAGE = frozenset({"usage"})


def _missing(total: Total) -> str:
    named = "; ".join(total.missing[:NAMED])
    more = len(total.missing) - NAMED
    return named + (f"; and {more} more" if more > 0 else "")


def _graded(
    check: str, limit: float, total: Total, unit: Callable[[float], str], run: RunRecord
) -> CheckResult:
    """The check of ``total`` against ``limit``: failed once what is known is over it,
    passed when it is all known and within it, else undecided."""
    over = f" over {plural(len(run.usage), 'request')}"
    if total.reported > limit:
        detail = f"{unit(total.reported)}{over}, more than {unit(limit)}"
        if not total.exact:
            detail += " already (" + (_missing(total) if total.missing else "at the least") + ")"
        return CheckResult(check, False, detail)
    if total.missing:
        return CheckResult.not_decided(
            check, f"n/a: {_missing(total)} (the rest reported {unit(total.reported)})"
        )
    if total.most > limit:  # only a range is known, and it straddles the limit
        return CheckResult.not_decided(
            check,
            f"n/a: between {unit(total.reported)} and {unit(total.most)}: a reply did not "
            "say how much of its input was cached",
        )
    shown = unit(total.most) + over
    return CheckResult(check, True, shown if total.upper is None else f"at most {shown}")


class _TokenBudget(Family[int]):
    """At most ``n`` tokens of one kind over every request of the case."""

    kind: str
    params = PositiveInt

    def evidence(self, params: Any) -> frozenset[str]:
        return USAGE

    def grade(self, params: int, run: RunRecord) -> list[CheckResult]:
        from zeroclaw_eval.grading.accounting import TOKEN_KINDS, tokens

        words = TOKEN_KINDS.get(self.kind, "tokens (input and output)")

        def unit(count: float) -> str:
            return f"{int(count)} {words}"

        return [_graded(f"{self.name}: {params}", params, tokens(run, self.kind), unit, run)]


class MaxInputTokens(_TokenBudget):
    """At most ``n`` input tokens (cached ones included) over the case's requests."""

    name = "max_input_tokens"
    kind = "input_tokens"
    description = "at most n input tokens, as the provider reported them, over the case"


class MaxCachedInputTokens(_TokenBudget):
    """At most ``n`` input tokens read from the provider's cache over the case's requests."""

    name = "max_cached_input_tokens"
    kind = "cached_input_tokens"
    description = "at most n cached input tokens, as the provider reported them, over the case"


class MaxReasoningTokens(_TokenBudget):
    """At most ``n`` reasoning tokens over the case's requests."""

    name = "max_reasoning_tokens"
    kind = "reasoning_tokens"
    description = "at most n reasoning tokens, as the provider reported them, over the case"


class MaxOutputTokens(_TokenBudget):
    """At most ``n`` output tokens (reasoning included) over the case's requests."""

    name = "max_output_tokens"
    kind = "output_tokens"
    description = "at most n output tokens, as the provider reported them, over the case"


class MaxTotalTokens(_TokenBudget):
    """At most ``n`` input plus output tokens over the case's requests."""

    name = "max_total_tokens"
    kind = "total_tokens"
    description = "at most n input plus output tokens, as the provider reported them"


Money = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class MaxCost(Family[float]):
    """At most this much spent over the case's requests, priced at ``[eval.rates]``."""

    name = "max_cost"
    params = Money
    description = "at most this cost over the case, priced at [eval.rates] (their currency)"

    def evidence(self, params: Any) -> frozenset[str]:
        return USAGE

    def grade(self, params: float, run: RunRecord) -> list[CheckResult]:
        from zeroclaw_eval.grading.accounting import cost

        def unit(amount: float) -> str:
            return f"{amount:.6g}"

        return [_graded(f"{self.name}: {params:g}", params, cost(run), unit, run)]


FAMILIES: tuple[type[Family[Any]], ...] = (
    MaxInputTokens,
    MaxCachedInputTokens,
    MaxReasoningTokens,
    MaxOutputTokens,
    MaxTotalTokens,
    MaxCost,
)


@hookimpl
def zeroclaw_eval_register_families(register: Callable[[Family[Any]], None]) -> None:
    for family in FAMILIES:
        register(family())
