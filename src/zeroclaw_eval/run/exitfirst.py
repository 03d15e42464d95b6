"""``-x/--exitfirst``: run cases one at a time, in suite order, and stop at the first failure.

"First" means first in suite order, so the same suite stops at the same case on
every run (a concurrent run would stop at whichever failure finished first). The
cases after it are listed as not run, each failed with an error saying why, so
the report still names every case and is never green.
"""

from __future__ import annotations

import signal
from collections.abc import Sequence
from dataclasses import replace

from zeroclaw_eval.agents.base import AgentUnderTest
from zeroclaw_eval.case.admission import Case
from zeroclaw_eval.config import EvalConfig
from zeroclaw_eval.modes.base import RunMode
from zeroclaw_eval.plugins.registry import Registry
from zeroclaw_eval.report.model import CaseReport, SuiteReport
from zeroclaw_eval.run.runner import (
    Progress,
    SuiteInterrupted,
    configured_agent,
    interrupted_report,
    pass_ks,
    run_cases,
)

NOT_RUN = "not run: the run stopped after the first failure (-x/--exitfirst)"


def run_until_failure(
    cases: Sequence[Case],
    mode: RunMode,
    registry: Registry,
    config: EvalConfig,
    *,
    suite: str = "",
    progress: Progress | None = None,
    agent: AgentUnderTest | None = None,
) -> SuiteReport:
    """:func:`~zeroclaw_eval.run.runner.run_cases`, one case at a time, stopping after
    the first case that does not pass. Each case keeps its time limit; an
    interruption returns the same partial report ``run_cases`` would.
    """
    agent = agent if agent is not None else configured_agent(registry, config)
    reports: list[CaseReport | None] = [None] * len(cases)
    failures = 0
    index = 0
    try:
        for index, case in enumerate(cases):
            one = run_cases([case], mode, registry, config, suite=suite, agent=agent)
            if one.interrupted is not None:
                raise SuiteInterrupted(signal.Signals[one.interrupted])
            report = one.cases[0]
            reports[index] = report
            failures += not report.passed
            if progress is not None:
                progress(index + 1, len(cases), failures, "case")
            if not report.passed:
                if progress is not None and index + 1 < len(cases):
                    # The cases left count as done and failed, as the report lists them.
                    not_run = len(cases) - index - 1
                    progress(len(cases), len(cases), failures + not_run, "case")
                break
    except KeyboardInterrupt as exc:  # during a case, or between two
        signum = exc.signum if isinstance(exc, SuiteInterrupted) else signal.SIGINT
        started = {index} if cases and reports[index] is None else set()
        partial = interrupted_report(suite, mode.name, list(cases), reports, started, signum)
        return replace(
            partial,
            repeats=config.repeats,
            ks=pass_ks(config),
            agent=agent.run_name,
            live_settings=mode.generation_settings(config),
        )
    listed = tuple(
        report
        if report is not None
        else CaseReport(case.name, case.source, error=NOT_RUN, ran=False)
        for case, report in zip(cases, reports, strict=True)
    )
    return SuiteReport(
        suite,
        listed,
        mode.name,
        gating=config.gating,
        config_digest=config.digest(),
        repeats=config.repeats,
        ks=pass_ks(config),
        agent=agent.run_name,
        live_settings=mode.generation_settings(config),
    )
