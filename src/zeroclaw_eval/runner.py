"""Running cases: a fresh agent per case, the mode's provider, then grading.

A run error fails its case and is reported with it; it never stops the suite.
Nor does a case that hangs: each runs in a worker thread under the wall-clock
limit ``case_timeout_s``. Grading sees only the case's expectations and the
:class:`RunRecord`: families never see the provider, and nothing here formats.
"""

from __future__ import annotations

import queue
import signal
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import TypeVar

from zeroclaw_eval.admission import Case
from zeroclaw_eval.agent import Agent
from zeroclaw_eval.config import EvalConfig
from zeroclaw_eval.errors import ConfigError, RunError
from zeroclaw_eval.mode import RunMode
from zeroclaw_eval.plugins import get_plugin_manager
from zeroclaw_eval.record import RunRecord
from zeroclaw_eval.registry import Registry
from zeroclaw_eval.report import CaseReport, CheckResult, SuiteReport, plural
from zeroclaw_eval.suite import load_suite

T = TypeVar("T")


class SuiteInterrupted(KeyboardInterrupt):
    """A signal asked the suite to stop; :func:`run_cases` then returns a partial report.

    Ctrl-C arrives as a plain :class:`KeyboardInterrupt` (``SIGINT``); the CLI turns
    ``SIGTERM`` into this, carrying the signal.
    """

    def __init__(self, signum: int = signal.SIGINT) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


class CaseTimeout(RunError):
    """A case did not finish within ``case_timeout_s``."""


class _Worker:
    """A daemon thread that runs the calls of the one thread that owns it, in turn.

    Kept for the next call rather than started per call: handing a call to a
    waiting thread costs a fraction of starting one, which a suite of thousands of
    millisecond-long cases notices.
    """

    def __init__(self) -> None:
        self.calls: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="zeroclaw-eval case", daemon=True).start()

    def _serve(self) -> None:
        while True:
            self.calls.get()()


_workers = threading.local()


def call_with_timeout(timeout_s: float, function: Callable[[], T]) -> T:
    """``function()``, run in a worker thread, or :class:`CaseTimeout` after ``timeout_s``.

    A Python thread cannot be killed. A call that times out is abandoned with its
    worker (the next call gets a fresh one): the thread is a daemon, so it never
    keeps the process alive at exit, and whatever it returns later is dropped. It
    still takes its turns at the GIL whenever it runs Python code; a call stuck in
    C code that never releases the GIL cannot be abandoned at all, which is why
    regex searches run in a separate process.

    Anything ``function`` raises is raised here; ``SystemExit`` and other
    non-``Exception`` errors are turned into a :class:`RunError`, so a plugin that
    calls ``sys.exit(0)`` fails its case instead of ending the run green.
    """
    worker: _Worker | None = getattr(_workers, "worker", None)
    if worker is None:
        worker = _workers.worker = _Worker()
    done = threading.Event()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def call() -> None:
        try:
            outcome.append(function())
        except Exception as exc:
            failure.append(exc)
        except BaseException as exc:  # SystemExit, KeyboardInterrupt raised by the code run
            failure.append(RunError(f"unexpected {type(exc).__name__}: {exc}"))
        finally:
            done.set()

    worker.calls.put(call)
    try:
        finished = done.wait(timeout_s)
    except BaseException:  # interrupted while waiting: the call may still be running
        _workers.worker = None
        raise
    if not finished:
        _workers.worker = None
        raise CaseTimeout(
            f"did not finish within case_timeout_s={timeout_s:g} s: abandoned "
            "(a hung tool, provider or family?)"
        )
    if failure:
        raise failure[0]
    return outcome[0]


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
    """Run and grade one case; a run error becomes the report's ``error``.

    Running and grading together may take ``config.case_timeout_s`` seconds; a case
    that takes longer is a run error, and is abandoned (see :func:`call_with_timeout`).
    """
    started = time.perf_counter()

    def run_and_grade() -> tuple[CheckResult, ...]:
        return case.grade(execute(case, mode, registry, config))

    try:
        checks = call_with_timeout(config.case_timeout_s, run_and_grade)
    except RunError as exc:
        error = f"case {case.name!r}: {exc}"
        return CaseReport(case.name, case.source, (), error, time.perf_counter() - started)
    except Exception as exc:  # a tool, provider or mode bug fails this case only
        error = f"case {case.name!r}: unexpected {type(exc).__name__}: {exc}"
        return CaseReport(case.name, case.source, (), error, time.perf_counter() - started)
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
    On :class:`KeyboardInterrupt` (Ctrl-C, or :class:`SuiteInterrupted` for another
    signal) it stops and returns a partial report marked ``interrupted``.
    """
    mode.check_config(config, registry)
    todo = list(cases)
    reports: list[CaseReport | None] = [None] * len(todo)
    started: set[int] = set()
    done = failures = 0

    def run(index: int) -> CaseReport:
        started.add(index)
        return run_case(todo[index], mode, registry, config)

    def finished(index: int, report: CaseReport) -> None:
        nonlocal done, failures
        reports[index] = report
        done += 1
        failures += not report.passed
        if progress is not None:
            progress(done, len(todo), failures)

    workers = min(mode.concurrency(config), len(todo))
    try:
        if workers <= 1:
            for index in range(len(todo)):
                finished(index, run(index))
        else:
            pool = ThreadPoolExecutor(max_workers=workers)
            try:
                futures = {pool.submit(run, index): index for index in range(len(todo))}
                for future in as_completed(futures):
                    finished(futures[future], future.result())
            finally:
                # On an interruption, cases not yet started must not run anyway.
                pool.shutdown(wait=True, cancel_futures=True)
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, SuiteInterrupted) else signal.SIGINT
        return interrupted_report(suite, mode.name, todo, reports, started, signum)
    ordered = tuple(report for report in reports if report is not None)
    return SuiteReport(suite, ordered, mode.name, gating=config.gating)


def interrupted_report(
    suite: str,
    mode: str,
    cases: list[Case],
    reports: list[CaseReport | None],
    started: set[int],
    signum: int,
) -> SuiteReport:
    """The partial report of a suite stopped by ``signum``: nothing in it is silently missing.

    The finished cases keep their reports; a case that was running and every case
    not yet run are listed as failed with an error saying so.
    """
    name = signal.Signals(signum).name
    unfinished = f"interrupted by {name} before it finished"
    listed = tuple(
        report
        if report is not None
        else CaseReport(case.name, case.source, error=unfinished if index in started else "not run")
        for index, (case, report) in enumerate(zip(cases, reports, strict=True))
    )
    done = sum(1 for report in reports if report is not None)
    summary = (
        f"interrupted by {name} after {done} of {plural(len(cases), 'case')}: "
        f"{len(cases) - done} did not finish"
    )
    return SuiteReport(suite, listed, mode, (summary,), interrupted=name)


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
