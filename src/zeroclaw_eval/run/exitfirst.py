"""``-x/--exitfirst``: stop after the first case that fails, listing the rest as not run.

The runner does it (:func:`~zeroclaw_eval.run.runner.run_cases` with
``exitfirst``), with the run's one model bridge and its concurrency; one case at a
time (the replay default), the same suite stops at the same case on every run.
"""

from __future__ import annotations

from collections.abc import Sequence

from zeroclaw_eval.agents.base import AgentUnderTest
from zeroclaw_eval.case.admission import Case
from zeroclaw_eval.config import EvalConfig
from zeroclaw_eval.modes.base import RunMode
from zeroclaw_eval.plugins.registry import Registry
from zeroclaw_eval.report.model import SuiteReport
from zeroclaw_eval.report.trace import SpanContext
from zeroclaw_eval.run.runner import NOT_RUN, Progress, run_cases

__all__ = ["NOT_RUN", "run_until_failure"]


def run_until_failure(
    cases: Sequence[Case],
    mode: RunMode,
    registry: Registry,
    config: EvalConfig,
    *,
    suite: str = "",
    progress: Progress | None = None,
    agent: AgentUnderTest | None = None,
    trace: SpanContext | None = None,
) -> SuiteReport:
    """:func:`~zeroclaw_eval.run.runner.run_cases`, stopping after the first case that
    does not pass. Each case keeps its time limit; an interruption returns the same
    partial report ``run_cases`` would.
    """
    return run_cases(
        cases,
        mode,
        registry,
        config,
        suite=suite,
        progress=progress,
        agent=agent,
        exitfirst=True,
        trace=trace,
    )
