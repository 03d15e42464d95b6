"""Running cases: a fresh agent per case, the mode's provider, then grading.

A run error fails its case and is reported with it; it never stops the suite.
Grading sees only the case's expectations and the :class:`RunRecord`: families
never see the provider, and nothing here formats.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from zeroclaw_eval.admission import Case
from zeroclaw_eval.agent import Agent
from zeroclaw_eval.config import EvalConfig
from zeroclaw_eval.errors import ConfigError, RunError
from zeroclaw_eval.mode import RunMode
from zeroclaw_eval.plugins import get_plugin_manager
from zeroclaw_eval.record import RunRecord
from zeroclaw_eval.registry import Registry
from zeroclaw_eval.report import CaseReport, SuiteReport
from zeroclaw_eval.suite import load_suite


def execute(case: Case, mode: RunMode, registry: Registry, config: EvalConfig) -> RunRecord:
    """Run a case's turns through a fresh agent. Raises :class:`RunError`."""
    provider = mode.provider(case.trace, config)
    tools = mode.tools(registry.make_tools(), config)
    agent = Agent(provider, dict(tools), config.max_tool_iterations)
    for index, turn in enumerate(case.trace.turns):
        provider.begin_turn(index)
        agent.run_turn(index, turn.user_input)
        provider.end_turn(index)
    return agent.record


def run_case(case: Case, mode: RunMode, registry: Registry, config: EvalConfig) -> CaseReport:
    """Run and grade one case; a run error becomes the report's ``error``."""
    started = time.perf_counter()
    try:
        run = execute(case, mode, registry, config)
    except RunError as exc:
        error = f"case {case.name!r}: {exc}"
        return CaseReport(case.name, case.source, (), error, time.perf_counter() - started)
    except Exception as exc:  # a tool, provider or mode bug fails this case only
        error = f"case {case.name!r}: unexpected {type(exc).__name__}: {exc}"
        return CaseReport(case.name, case.source, (), error, time.perf_counter() - started)
    checks = case.grade(run)
    return CaseReport(case.name, case.source, checks, None, time.perf_counter() - started)


Progress = Callable[[int, int, int], None]
"""Told ``(cases done, total, failures so far)`` each time a case finishes."""


def run_cases(
    cases: Iterable[Case],
    mode: RunMode,
    registry: Registry,
    config: EvalConfig,
    *,
    suite: str = "",
    progress: Progress | None = None,
) -> SuiteReport:
    """Run already admitted cases and collect their reports, in suite order.

    Up to ``mode.concurrency(config)`` cases run at once, in threads (a live suite
    waits on the network, not the CPU); each case still has its own agent, tools
    and provider. Raises :class:`ConfigError` when the mode refuses the configuration.
    """
    mode.check_config(config, registry)
    todo = list(cases)
    reports: list[CaseReport | None] = [None] * len(todo)
    done = failures = 0

    def finished(index: int, report: CaseReport) -> None:
        nonlocal done, failures
        reports[index] = report
        done += 1
        failures += not report.passed
        if progress is not None:
            progress(done, len(todo), failures)

    workers = min(mode.concurrency(config), len(todo))
    if workers <= 1:
        for index, case in enumerate(todo):
            finished(index, run_case(case, mode, registry, config))
    else:
        pool = ThreadPoolExecutor(max_workers=workers)
        try:
            futures = {
                pool.submit(run_case, case, mode, registry, config): index
                for index, case in enumerate(todo)
            }
            for future in as_completed(futures):
                finished(futures[future], future.result())
        finally:
            # On Ctrl-C, cases not yet started must not run anyway.
            pool.shutdown(wait=True, cancel_futures=True)
    ordered = tuple(report for report in reports if report is not None)
    return SuiteReport(suite, ordered, mode.name, gating=config.gating)


def run_suite(
    suite: str | Path | None = None,
    *,
    config: EvalConfig | None = None,
    registry: Registry | None = None,
) -> SuiteReport:
    """Load, admit and run a suite: the library form of ``zeroclaw eval run``.

    ``suite`` defaults to ``config.suite_dir``; ``registry`` to every installed
    plugin. Raises :class:`~zeroclaw_eval.errors.SuiteLoadError` when the suite
    cannot be admitted whole, and ``ConfigError`` for an unknown mode.
    """
    config = config or EvalConfig()
    registry = registry or Registry.from_plugin_manager(get_plugin_manager())
    directory = Path(suite if suite is not None else config.suite_dir)
    mode = select_mode(registry, config.mode)
    cases = load_suite(directory, registry, mode)
    return run_cases(cases, mode, registry, config, suite=str(directory))


def select_mode(registry: Registry, name: str) -> RunMode:
    """The registered mode called ``name``, or a :class:`ConfigError` listing the known ones."""
    entry = registry.modes.get(name)
    if entry is None:
        known = ", ".join(sorted(registry.modes)) or "none"
        raise ConfigError(f"mode {name!r} is not registered (known modes: {known})")
    return entry.obj
