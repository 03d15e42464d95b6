"""Comparing two runs case by case: what newly fails, newly passes, appeared,
disappeared, or changed its pass rate, and whether the change is more than noise.

A case is matched across runs by its name. Its pass rate in a run is its passing
attempts over its attempts (one attempt per case unless the run used repeats).
Two rates are compared with Fisher's exact test (two-sided); a case *regressed*
when its rate fell and the test says the fall is significant at ``alpha``. With
one attempt per run no single change can be significant (a pass turning into a
failure has p = 1): to gate on regressions, run with repeats.

Beside the pass rates, what each run (and each case in it) spent, when it ran
against a real provider (:mod:`zeroclaw_eval.history.spend`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from zeroclaw_eval.history.spend import Spend, spend
from zeroclaw_eval.history.store import Attempt, Run
from zeroclaw_eval.util.stats import fisher_exact

#: The default significance level.
DEFAULT_ALPHA = 0.05

#: The kinds of change, in the order a comparison lists them.
KINDS = ("newly_failing", "newly_passing", "rate_moved", "new", "removed", "unchanged")


@dataclass(frozen=True)
class Tally:
    """A case's passes out of attempts in one run."""

    passes: int
    attempts: int

    @property
    def rate(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0

    def __str__(self) -> str:
        return f"{self.passes}/{self.attempts}"


@dataclass(frozen=True)
class CaseChange:
    """One case across the two runs. ``base``/``head`` is ``None`` where it is missing;
    ``p_value`` is Fisher's two-sided p, ``None`` unless the case is in both."""

    name: str
    kind: str
    base: Tally | None
    head: Tally | None
    p_value: float | None
    significant: bool
    base_spend: Spend | None = None
    head_spend: Spend | None = None

    @property
    def regressed(self) -> bool:
        """The rate fell, significantly."""
        return (
            self.significant
            and self.base is not None
            and self.head is not None
            and self.head.rate < self.base.rate
        )


@dataclass(frozen=True)
class Comparison:
    """Every case of two runs, classified, in the head run's order then the removed."""

    base: Run
    head: Run
    changes: tuple[CaseChange, ...]
    alpha: float
    base_spend: Spend | None = None
    head_spend: Spend | None = None

    def of_kind(self, kind: str) -> list[CaseChange]:
        return [change for change in self.changes if change.kind == kind]

    @property
    def regressions(self) -> list[CaseChange]:
        """The cases whose pass rate fell significantly."""
        return [change for change in self.changes if change.regressed]

    @property
    def same_settings(self) -> bool:
        """Whether both runs ran under the same settings (their config digests agree)."""
        return self.base.config_digest == self.head.config_digest


def tallies(attempts: Iterable[Attempt]) -> dict[str, Tally]:
    """Each case's passes and attempts, in the order the cases first appear."""
    counts: dict[str, list[int]] = {}
    for attempt in attempts:
        count = counts.setdefault(attempt.case_name, [0, 0])
        count[0] += attempt.passed
        count[1] += 1
    return {name: Tally(passes, total) for name, (passes, total) in counts.items()}


def compare(
    base: Run,
    head: Run,
    base_attempts: Sequence[Attempt],
    head_attempts: Sequence[Attempt],
    alpha: float = DEFAULT_ALPHA,
) -> Comparison:
    """Classify every case of ``base`` and ``head`` (see the module docstring)."""
    before, after = tallies(base_attempts), tallies(head_attempts)
    changes = [_change(name, before.get(name), tally, alpha) for name, tally in after.items()]
    changes.extend(
        _change(name, tally, None, alpha) for name, tally in before.items() if name not in after
    )
    spent_before, spent_after = _by_case(base_attempts), _by_case(head_attempts)
    changes = [
        replace(
            change,
            base_spend=spent_before.get(change.name),
            head_spend=spent_after.get(change.name),
        )
        for change in changes
    ]
    return Comparison(base, head, tuple(changes), alpha, spend(base_attempts), spend(head_attempts))


def _by_case(attempts: Sequence[Attempt]) -> dict[str, Spend]:
    """Each metered case's spend."""
    grouped: dict[str, list[Attempt]] = {}
    for attempt in attempts:
        grouped.setdefault(attempt.case_name, []).append(attempt)
    found = {name: spend(mine) for name, mine in grouped.items()}
    return {name: spent for name, spent in found.items() if spent is not None}


def _change(name: str, base: Tally | None, head: Tally | None, alpha: float) -> CaseChange:
    if base is None or head is None:
        return CaseChange(name, "new" if base is None else "removed", base, head, None, False)
    p = fisher_exact(
        base.passes, base.attempts - base.passes, head.passes, head.attempts - head.passes
    )
    base_all, head_all = base.passes == base.attempts, head.passes == head.attempts
    if base_all and not head_all:
        kind = "newly_failing"
    elif head_all and not base_all:
        kind = "newly_passing"
    elif base.rate != head.rate:
        kind = "rate_moved"
    else:
        kind = "unchanged"
    return CaseChange(name, kind, base, head, p, p < alpha)


def comparison_document(comparison: Comparison) -> dict[str, Any]:
    """The comparison as plain data: what ``compare --format json`` prints."""

    def run(r: Run) -> dict[str, Any]:
        return {
            "id": r.id,
            "started_at": r.started_at,
            "suite": r.suite,
            "config_digest": r.config_digest,
            "git_commit": r.git_commit,
            "git_dirty": r.git_dirty,
            "repeats": r.repeats,
        }

    def tally(t: Tally | None) -> dict[str, int] | None:
        return None if t is None else {"passes": t.passes, "attempts": t.attempts}

    def spent(s: Spend | None) -> dict[str, int | float | None] | None:
        return None if s is None else s.document()

    return {
        "schema_version": 1,
        "base": run(comparison.base),
        "head": run(comparison.head),
        "same_settings": comparison.same_settings,
        "alpha": comparison.alpha,
        "regressions": [change.name for change in comparison.regressions],
        "base_spend": spent(comparison.base_spend),
        "head_spend": spent(comparison.head_spend),
        "cases": [
            {
                "name": change.name,
                "change": change.kind,
                "base": tally(change.base),
                "head": tally(change.head),
                "p_value": change.p_value,
                "significant": change.significant,
                "regressed": change.regressed,
                "base_spend": spent(change.base_spend),
                "head_spend": spent(change.head_spend),
            }
            for change in comparison.changes
        ],
    }
