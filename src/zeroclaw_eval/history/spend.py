"""What a set of attempts spent, for ``compare`` and the trend page to show beside the
pass rate.

Only metered attempts count (:attr:`~zeroclaw_eval.history.store.Attempt.metered`:
a run against a real provider); a replay's token counts are the script's and are
never shown as spend. A total is ``None`` (shown ``n/a``) when any attempt lacked
the figure, a metered attempt that did not report it or one that stopped before
its usage was read: a missing figure is never summed as 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from zeroclaw_eval.history.store import Attempt

#: What a spend holds, as the JSON documents name it.
FIGURES = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens", "cost")


@dataclass(frozen=True)
class Spend:
    """The totals of some metered attempts; each ``None`` when a figure was missing."""

    attempts: int
    input_tokens: int | None
    output_tokens: int | None
    cached_input_tokens: int | None
    reasoning_tokens: int | None
    cost: float | None

    def document(self) -> dict[str, int | float | None]:
        """The spend as plain data."""
        return {"attempts": self.attempts, **{key: getattr(self, key) for key in FIGURES}}

    def __str__(self) -> str:
        def shown(value: float | None) -> str:
            return "n/a" if value is None else f"{value:g}"

        return (
            f"{shown(self.input_tokens)} input / {shown(self.output_tokens)} output tokens, "
            f"cost {shown(self.cost)}"
        )


def spend(attempts: Iterable[Attempt]) -> Spend | None:
    """What ``attempts`` spent, or ``None`` when none of them was metered (replay)."""
    listed = list(attempts)
    if not any(attempt.metered for attempt in listed):
        return None

    def total(key: str) -> int | float | None:
        values: list[int | float | None] = [
            getattr(attempt, key) if attempt.metered else None for attempt in listed
        ]
        known = [value for value in values if value is not None]
        return sum(known) if len(known) == len(values) else None

    cost = total("cost")
    return Spend(
        len(listed),
        _whole(total("input_tokens")),
        _whole(total("output_tokens")),
        _whole(total("cached_input_tokens")),
        _whole(total("reasoning_tokens")),
        None if cost is None else float(cost),
    )


def _whole(value: int | float | None) -> int | None:
    return None if value is None else int(value)
