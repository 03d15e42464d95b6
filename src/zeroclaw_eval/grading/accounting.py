"""Honest accounting: the tokens and cost of a run, from what the provider reported.

Every model request of a run has a
:class:`~zeroclaw_eval.grading.record.RequestUsage`: the usage the provider reported
for its reply (``None`` when it reported none) and the model it said
answered. A total over them is exact only when every request reported the kind
counted; otherwise it is a lower bound (the figures that were reported) together
with the requests that lacked it. A missing figure is never read as 0: a budget
over it can fail (the reported part is already over) but never pass.

Cost is priced from the ``[eval.rates."MODEL"]`` tables
(:class:`~zeroclaw_eval.config.Rate`, per million tokens). A request whose model
has no rate, or whose usage a rate cannot price (cached tokens and no
``cached_input`` price), leaves the cost undecided the same way. A request that
reported input tokens but not how many of them were cached is priced as a range:
all cached (the least it can cost) to none cached (the most).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from zeroclaw_eval.grading.record import RunRecord
from zeroclaw_eval.protocol import Usage
from zeroclaw_eval.report.model import plural

#: The token kinds a budget can bound: the :class:`~zeroclaw_eval.protocol.Usage`
#: field, and how a check words it.
TOKEN_KINDS: Mapping[str, str] = {
    "input_tokens": "input tokens",
    "cached_input_tokens": "cached input tokens",
    "reasoning_tokens": "reasoning tokens",
    "output_tokens": "output tokens",
}


class Prices(Protocol):
    """What pricing reads of a rate: prices per million tokens (the ``[eval.rates]``
    table, :class:`~zeroclaw_eval.config.Rate`)."""

    @property
    def input(self) -> float: ...
    @property
    def output(self) -> float: ...
    @property
    def cached_input(self) -> float | None: ...
    @property
    def cache_write_input(self) -> float | None: ...


@dataclass(frozen=True)
class Total:
    """A sum over the requests of a run: ``reported`` is the sum of what was reported,
    ``missing`` says which request lacked a figure (or why it could not be priced).
    Exact when nothing is missing; otherwise ``reported`` is a lower bound."""

    reported: float
    missing: tuple[str, ...] = ()
    upper: float | None = None
    """For a cost: the most it can be when a request did not say how much of its input
    was cached (``None``: the same as ``reported``)."""

    @property
    def exact(self) -> bool:
        return not self.missing and self.upper is None

    @property
    def most(self) -> float:
        return self.reported if self.upper is None else self.upper


def _unmetered(run: RunRecord) -> list[str]:
    """The requests of ``run`` that have no usage entry at all."""
    if len(run.usage) < len(run.requests):
        return [f"{plural(len(run.requests) - len(run.usage), 'request')} with no reply recorded"]
    if not run.usage and run.responses:  # an agent that records no request did something
        return ["the agent recorded no model request"]
    return []


def tokens(run: RunRecord, kind: str) -> Total:
    """The ``kind`` tokens (a key of :data:`TOKEN_KINDS`, or ``total_tokens``: input
    plus output) the requests of ``run`` reported, and which did not report them."""
    reported = 0
    missing = _unmetered(run)
    for entry in run.usage:
        if entry.usage is None:
            missing.append(f"{entry.where}: no usage reported")
            continue
        kinds = ("input_tokens", "output_tokens") if kind == "total_tokens" else (kind,)
        for part in kinds:
            value = getattr(entry.usage, part)
            if value is None:
                missing.append(f"{entry.where}: no {TOKEN_KINDS[part]} reported")
            else:
                reported += value
    return Total(reported, tuple(missing))


def cost(run: RunRecord) -> Total:
    """The cost of the requests of ``run`` at its ``rates``: each priced at the rate of
    the model its reply named, else of the model the run asked for."""
    low = high = 0.0
    missing = _unmetered(run)
    rates = run.rates
    for entry in run.usage:
        model = entry.model or run.requested_model
        usage = entry.usage
        if usage is None:
            missing.append(f"{entry.where}: no usage reported")
            continue
        rate = rates.get(model) if model is not None else None
        if rate is None:
            missing.append(
                f"{entry.where}: no rate for model {model!r}"
                if model is not None
                else f"{entry.where}: the model is not known"
            )
            continue
        priced = _price(usage, rate)
        if isinstance(priced, str):
            missing.append(f"{entry.where} ({model}): {priced}")
            continue
        low += priced[0]
        high += priced[1]
    return Total(low, tuple(missing), None if high == low else high)


def _price(usage: Usage, rate: Prices) -> tuple[float, float] | str:
    """The least and the most one request can have cost, or why it cannot be priced."""
    if usage.input_tokens is None or usage.output_tokens is None:
        kind = "input" if usage.input_tokens is None else "output"
        return f"no {kind} tokens reported"
    written = usage.cache_write_input_tokens or 0  # None: the provider bills no write apart
    if written and rate.cache_write_input is None:
        return f"{written} cache-write tokens and no cache_write_input rate"
    output = usage.output_tokens * rate.output
    writes = written * (rate.cache_write_input or 0.0)
    plain = usage.input_tokens - written
    cached = usage.cached_input_tokens
    if cached is not None:
        if cached and rate.cached_input is None:
            return f"{cached} cached input tokens and no cached_input rate"
        total = (plain - cached) * rate.input + cached * (rate.cached_input or 0.0)
        return _millions(total + writes + output), _millions(total + writes + output)
    # Not said how much was cached: anywhere from all of it to none of it.
    cheapest = min(rate.input, rate.cached_input if rate.cached_input is not None else rate.input)
    return (
        _millions(plain * cheapest + writes + output),
        _millions(plain * rate.input + writes + output),
    )


def _millions(amount: float) -> float:
    return amount / 1_000_000


@dataclass(frozen=True)
class Metering:
    """A run's usage as a report keeps it: every request's figures, and the totals.

    ``requests`` has one entry per request (``turn``, ``step``, ``model``, each token
    kind or ``null`` when not reported, ``cost`` or ``null`` when it could not be
    priced); a total is ``None`` unless every request reported its kind (``cost``:
    unless every request could be priced exactly).
    """

    requests: tuple[Mapping[str, object], ...]
    input_tokens: int | None
    output_tokens: int | None
    cached_input_tokens: int | None
    reasoning_tokens: int | None
    cost: float | None


def metering(run: RunRecord) -> Metering:
    """The report's view of ``run``'s usage and cost (see :class:`Metering`)."""
    requests = []
    for entry in run.usage:
        usage = entry.usage
        one = RunRecord(usage=[entry], rates=run.rates, requested_model=run.requested_model)
        priced = cost(one)
        requests.append(
            {
                "turn": entry.turn,
                "step": entry.step,
                "model": entry.model,
                **{kind: getattr(usage, kind) if usage else None for kind in TOKEN_KINDS},
                "cache_write_input_tokens": usage.cache_write_input_tokens if usage else None,
                "cost": priced.reported if priced.exact else None,
            }
        )

    def exact(kind: str) -> int | None:
        total = tokens(run, kind)
        return int(total.reported) if total.exact else None

    priced = cost(run)
    return Metering(
        tuple(requests),
        exact("input_tokens"),
        exact("output_tokens"),
        exact("cached_input_tokens"),
        exact("reasoning_tokens"),
        priced.reported if priced.exact and run.rates else None,
    )
