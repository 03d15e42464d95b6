"""Grading results, and the one decision CI reads from them: the exit code."""

from __future__ import annotations

import json
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from zeroclaw_eval.util.frozen import quick_frozen

if TYPE_CHECKING:
    from zeroclaw_eval.report.trace import AttemptTrace, RunTrace


@dataclass(frozen=True)
class Retry:
    """One request retried: why, after which attempt of it (1-based), and how long it waited."""

    reason: str
    attempt: int
    waited_s: float

    def __str__(self) -> str:
        return f"{self.reason} (attempt {self.attempt}, waited {self.waited_s:g} s)"


@quick_frozen
class CheckResult:
    """One graded expectation entry.

    ``check`` names the family and the entry (``response_contains: "hello"``);
    ``detail`` says what was observed, always on failure. ``score``, where the
    family grades a similarity too (``tool_sequence``: how close the calls came to
    the steps, from 0 to 1), is reported and kept in the history beside the
    verdict; nothing decides on it: ``passed`` alone counts. ``undecided`` marks a
    check the evidence could not settle (a budget over a figure the provider never
    reported): it does not pass (``passed`` is false, so a gating run fails), and
    reports show it as ``n/a``, its detail saying what was missing. Build one with
    :meth:`not_decided`.
    """

    check: str
    passed: bool
    detail: str
    score: float | None = None
    undecided: bool = False

    @classmethod
    def not_decided(cls, check: str, detail: str) -> CheckResult:
        """A check the evidence cannot settle: never passed, shown as ``n/a``."""
        return cls(check, False, detail, undecided=True)


@quick_frozen
class CaseReport:
    """The outcome of one case: its checks, or the run error that stopped it.

    ``models`` are the models the server said answered (a replayed recording
    says which answered when it was recorded); ``retries`` the requests the model
    side retried, and why. ``ran`` is false for a case listed but never started
    (``-x`` stopped the run first, or a signal did): its ``error`` says so, and it
    is not a run error.

    A case run several times (``--repeat N``) has one report per attempt in
    ``attempts``, in order; its own ``checks``, ``error`` and ``ran`` are then
    those of its first attempt that hit a run error, else of the first that
    failed, else of the last one, so that a formatter unaware of repeats still
    shows why it failed, and a run error in any attempt counts as the case's. ``input_tokens`` /
    ``output_tokens`` are what the model reported, ``None`` when unknown (the run
    stopped before, or a combined report). ``warnings`` are what the run noticed
    without failing the case (a drift under ``[eval] drift = "warn"``: the diff,
    naming turn and step); ``requests`` the model requests the agent made, normalised
    and compacted (:func:`~zeroclaw_eval.grading.requests.compact_record`), when
    ``[eval] report_requests`` asks the report to carry them. ``capture`` says, for
    a recorded or imported fixture replayed to its end without a run error, that
    its sequence was reproduced and what its maker did and did not observe.
    ``trace`` is the attempt's span and model exchanges
    (:mod:`zeroclaw_eval.report.trace`), kept only when a report asked for them; a
    repeated case's are its attempts'.

    A run against a real provider (``live``) also keeps ``usage``: per model
    request, what the provider reported (``turn``, ``step``, ``model``, each token
    kind, ``null`` when not reported) and its ``cost`` at ``[eval.rates]`` (``null``
    when it could not be priced). Its totals (``input_tokens``, ``output_tokens``,
    ``cached_input_tokens``, ``reasoning_tokens``, ``cost``) are then ``None`` unless
    every request reported the figure: a missing one is never summed as 0.
    """

    name: str
    source: str
    checks: tuple[CheckResult, ...] = ()
    error: str | None = None
    duration_s: float = 0.0
    models: tuple[str, ...] = ()
    retries: tuple[Retry, ...] = ()
    ran: bool = True
    attempts: tuple[CaseReport, ...] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    warnings: tuple[str, ...] = ()
    requests: tuple[Mapping[str, Any], ...] = ()
    capture: str | None = None
    usage: tuple[Mapping[str, Any], ...] = ()
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: float | None = None
    trace: AttemptTrace | None = None

    @classmethod
    def of_attempts(cls, attempts: Sequence[CaseReport]) -> CaseReport:
        """One case's report from the reports of its attempts (at least one)."""
        if len(attempts) == 1:
            return attempts[0]
        # A run error in any attempt is the case's: that attempt measured nothing.
        shown = next((a for a in attempts if a.error is not None and a.ran), None) or next(
            (a for a in attempts if not a.passed), attempts[-1]
        )
        return cls(
            shown.name,
            shown.source,
            shown.checks,
            shown.error,
            sum(a.duration_s for a in attempts),
            models=tuple(dict.fromkeys(model for a in attempts for model in a.models)),
            retries=tuple(retry for a in attempts for retry in a.retries),
            ran=shown.ran,
            attempts=tuple(attempts),
            warnings=tuple(dict.fromkeys(line for a in attempts for line in a.warnings)),
            requests=shown.requests,
            capture=shown.capture,
        )

    @cached_property  # read by the runner, every formatter, the exit code and the history
    def passed(self) -> bool:
        """True only when the case ran without error and every one of its checks passed.

        A case with no checks, or one that never ran, never passes: admission refuses
        the first, the runner never grades the second, and these guards keep a
        hand-built or edited report from passing by accident. A repeated case
        passes only when every attempt passed.
        """
        if self.attempts:
            return all(attempt.passed for attempt in self.attempts)
        return (
            self.ran
            and self.error is None
            and bool(self.checks)
            and all(c.passed for c in self.checks)
        )

    @property
    def runs(self) -> int:
        """How many times the case ran."""
        return len(self.attempts) or 1

    @property
    def passes(self) -> int:
        """How many of its attempts passed."""
        if self.attempts:
            return sum(1 for attempt in self.attempts if attempt.passed)
        return int(self.passed)

    @property
    def flaky(self) -> bool:
        """Whether its attempts disagree: some passed and some failed."""
        return 0 < self.passes < self.runs

    @property
    def failed_checks(self) -> list[CheckResult]:
        """The checks that did not pass, in declaration order (undecided ones included)."""
        return [c for c in self.checks if not c.passed]

    @property
    def undecided(self) -> bool:
        """Whether the case did not pass only because a check could not be decided: it
        ran, and every check that did not pass is undecided. It still does not pass."""
        if self.passed:  # most cases: read for every one by the report and the history
            return False
        if self.attempts:  # one missed at least, since the case did not pass
            return all(attempt.undecided for attempt in self.attempts if not attempt.passed)
        failed = self.failed_checks
        return self.ran and self.error is None and bool(failed) and all(c.undecided for c in failed)


@dataclass(frozen=True)
class SuiteReport:
    """The outcome of a whole suite, in suite (path) order.

    ``errors`` holds the lines of a failure that stopped the suite before any case
    ran (a refused fixture, an empty suite...), or part-way (an interruption); such
    a report is never green, and formatters can still render it, so a
    machine-readable report always exists. ``gating`` is false for a suite that
    only measures (capability, live): its failures are reported but do not fail the
    exit code. ``interrupted`` names the signal that stopped a partial report
    (``"SIGINT"``), else ``None``. ``config_digest`` is
    :meth:`~zeroclaw_eval.config.EvalConfig.digest` of the settings the cases ran
    under (empty when none ran). ``shard`` is ``(K, N)`` when the cases are the
    ``--shard K/N`` slice of the suite, and ``suite_total`` counts the cases of the
    whole suite before any selection or sharding (``None``: the cases are the suite);
    ``selected_total`` the cases the selection (``-k``, PATH arguments) chose before
    sharding, what the shards of one run add up to (``None``: the suite was not
    narrowed), and ``keyword`` the ``-k`` expression that chose them.
    ``live_settings`` are the ``[eval.live]`` generation settings of a live run
    (:meth:`~zeroclaw_eval.config.LiveConfig.generation`), else ``None``.
    ``trace`` is the run's span (:mod:`zeroclaw_eval.report.trace`) when a report
    asked for one, else ``None``.
    ``repeats`` is how many times each case ran, and ``ks`` the k of the pass@k and
    pass^k figures to show (empty: none). ``agent`` names the agent under test
    (:attr:`~zeroclaw_eval.agents.base.AgentUnderTest.run_name`; empty when no case ran).
    """

    suite: str
    cases: tuple[CaseReport, ...]
    mode: str = "replay"
    errors: tuple[str, ...] = ()
    gating: bool = True
    interrupted: str | None = None
    config_digest: str = ""
    shard: tuple[int, int] | None = None
    suite_total: int | None = None
    repeats: int = 1
    ks: tuple[int, ...] = ()
    agent: str = ""
    selected_total: int | None = None
    keyword: str | None = None
    live_settings: Mapping[str, Any] | None = None
    trace: RunTrace | None = None

    @property
    def passed_count(self) -> int:
        return sum(1 for case in self.cases if case.passed)

    @property
    def undecided_count(self) -> int:
        """How many cases did not pass only for want of a figure (:attr:`CaseReport.undecided`)."""
        return sum(1 for case in self.cases if case.undecided)

    @property
    def run_errors(self) -> int:
        """How many cases ran and hit a run error (nothing of them was graded)."""
        return sum(1 for case in self.cases if case.error is not None and case.ran)

    @property
    def all_passed(self) -> bool:
        """True iff nothing stopped the suite, it has cases, and every case passed."""
        return (
            not self.errors
            and self.interrupted is None
            and bool(self.cases)
            and self.passed_count == len(self.cases)
        )

    def exit_code(self) -> int:
        """The CI gate: 0 if and only if every case passed, else non-zero.

        1 for a failure; a suite with no cases, or one that failed to load, is never
        green. A check the evidence could not decide (:attr:`CheckResult.undecided`)
        is not a pass: it fails a gating suite like a failed check. An interrupted
        suite exits 128 + the signal number (130 for SIGINT, 143 for SIGTERM), as a
        shell reports a process a signal ended, so CI can tell a cancelled run from a
        failed one. A non-gating report (``gating``
        false) exits 0 whatever its checks said, unless the suite failed to load,
        was interrupted, or a case hit a run error: a broken or cancelled suite,
        and a case that never reached grading, measured nothing.
        """
        if self.interrupted is not None:
            signum = getattr(signal.Signals, self.interrupted, None)
            return 128 + signum if signum is not None else 1
        if not self.gating:
            return 1 if self.errors or self.run_errors else 0
        return 0 if self.all_passed else 1


# json.dumps(text, ensure_ascii=False) builds a new encoder on every call: 1.8 us
# against 0.2 us for this one, and every graded check quotes a value or two.
_quote = json.JSONEncoder(ensure_ascii=False).encode


def shorten(text: str | None, limit: int = 160) -> str:
    """A value as it should appear in a check's detail: quoted, and cut if long."""
    if text is None:
        return "nothing"
    quoted = _quote(text)
    if len(quoted) <= limit:
        return quoted
    return quoted[: limit - 4] + '..."'


def plural(count: int, noun: str) -> str:
    """``1 call``, ``2 calls``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


__all__: Sequence[str] = (
    "CaseReport",
    "CheckResult",
    "Retry",
    "SuiteReport",
    "plural",
    "shorten",
)
