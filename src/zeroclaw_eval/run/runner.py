"""Running cases: a fresh agent per case, the mode's provider, then grading.

The agent under test is a registered plugin (:mod:`zeroclaw_eval.agents.base`):
the built-in ``reference`` loop, or a team's own agent reached through the
loopback model bridge, which a run starts once when its agent needs it and stops
however the run ends (:mod:`zeroclaw_eval.run.sessions`).

A run error fails its case and is reported with it; it never stops the suite.
Nor does a case that hangs: cases run in worker threads under the wall-clock
limit ``case_timeout_s`` (:mod:`zeroclaw_eval.run.supervise`). Grading sees only the
case's expectations and the :class:`RunRecord`: families never see the provider,
and nothing here formats.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zeroclaw_eval.agents.base import AgentSession, AgentUnderTest, ModelSide
from zeroclaw_eval.case.admission import Case
from zeroclaw_eval.case.suite import load_suite
from zeroclaw_eval.config import EvalConfig
from zeroclaw_eval.errors import ConfigError, RunError
from zeroclaw_eval.grading.record import ModelRequest, RunRecord
from zeroclaw_eval.modes.base import RunMode, StepsLeftUnused
from zeroclaw_eval.modes.notes import collecting
from zeroclaw_eval.plugins.manager import get_plugin_manager
from zeroclaw_eval.plugins.registry import Registry
from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport, plural
from zeroclaw_eval.run.sessions import (
    Closable,
    OpenSessions,
    model_bridge,
    tool_server,
    workers,
)
from zeroclaw_eval.run.signals import SuiteInterrupted
from zeroclaw_eval.run.supervise import Supervisor
from zeroclaw_eval.util.redact import Secrets
from zeroclaw_eval.util.warmup import set_up_s
from zeroclaw_eval.workspace import fresh_workspace

if TYPE_CHECKING:
    from zeroclaw_eval.agents.base import RouteOpener, ToolRouteOpener
    from zeroclaw_eval.grading.accounting import Metering
    from zeroclaw_eval.report.trace import RunTrace, SpanContext
    from zeroclaw_eval.run.observe import AttemptTracing
    from zeroclaw_eval.toolserver.upstream import UpstreamCall


def execute(
    case: Case,
    mode: RunMode,
    registry: Registry,
    config: EvalConfig,
    *,
    agent: AgentUnderTest | None = None,
    bridge: RouteOpener | None = None,
    tool_server: ToolRouteOpener | None = None,
    opened: Callable[[Closable], None] | None = None,
    traced: AttemptTracing | None = None,
) -> RunRecord:
    """Run a case's turns through a fresh session of ``agent``. Raises :class:`RunError`.

    ``agent`` defaults to the one ``config`` selects; ``bridge`` opens routes of the
    run's model bridge, for an agent that needs one, ``tool_server`` of the run's MCP
    tool server, for an agent served its tools. The fixture's scripted tool
    results take the place of the tools they name. The runner brackets each turn on the
    mode's provider, so a turn that ends before its scripted steps are used is a
    run error whatever the agent. ``opened`` is told the session, and the agent's
    own MCP server (``mcp_upstream``, reached for this attempt alone in a mode that
    talks to a model), as soon as each exists, so that a case abandoned from another
    thread can be closed. ``traced`` (a report traces the run) watches the model
    exchanges, and its span is handed to the agent.

    The record comes back with the provider's key redacted from every text in it
    (:meth:`~zeroclaw_eval.config.EvalConfig.secrets`), before any check quotes it
    and cuts it short; neither the agent's processes nor the team's server inherit
    the variable holding it.
    """
    agent = agent if agent is not None else configured_agent(registry, config)
    provider = mode.provider(case.trace, config)
    if traced is not None:
        provider = traced.observe(provider)
    available = registry.make_tools()
    secrets = config.secrets()
    # Most runs replay, with no server of the team's: no per-case bracket to enter.
    server = agent.mcp_upstream if mode.talks_to_provider else None
    team_server = (
        nullcontext()
        if server is None
        else _team_server(server, agent.mcp_upstream_timeout_s, opened, secrets)
    )
    with team_server as passed_on:
        if passed_on is not None:
            available = {**available, **passed_on.tools()}
        tools = mode.tools(available, config)
        script = None
        if case.trace.tool_results is not None or case.trace.tool_definitions is not None:
            # Only fixtures that script tools pay for this import.
            from zeroclaw_eval.case.scripted import ToolScript, scripted_arguments

            script = ToolScript(
                case.trace.tool_results,
                case.trace.tool_definitions,
                scripted_arguments(case.trace),
            )
            tools = script.tools(tools)
        side = ModelSide(
            case.name,
            provider,
            tools,
            config.max_tool_iterations,
            bridge,
            tool_server,
            secrets,
            traced.span.traceparent if traced is not None else None,
        )
        session = agent.start(side)
        try:
            if opened is not None:
                opened(session)
            for index, turn in enumerate(case.trace.turns):
                provider.begin_turn(index)
                if script is not None:
                    script.begin_turn(index)
                session.run_turn(index, turn.user_input)
                if script is not None:
                    script.check()
                if passed_on is not None:
                    passed_on.check(index)
                try:
                    provider.end_turn(index)
                except StepsLeftUnused as unused:
                    raise agent.steps_left_unused(unused) from None
            record = session.record()
            # What the harness gave, not what the agent says it was given.
            record.user_inputs = [turn.user_input for turn in case.trace.turns]
            # A result left unused is the fixture's fault for an agent that runs what
            # the model asks; an agent served its tools is paired with the model's
            # calls instead, and a call it never dispatched is that pairing's finding
            # (unless its model writes code: then no pairing, and the script says).
            if script is not None and not (agent.serves_tools and agent.model_calls):
                script.finish()
            return secrets.value(record)
        finally:
            session.close()


@contextmanager
def _team_server(
    server: Sequence[str] | str,
    timeout_s: float,
    opened: Callable[[Closable], None] | None,
    secrets: Secrets,
) -> Iterator[UpstreamCall]:
    """The agent's own MCP server (``mcp_upstream``) for one case attempt, in a mode
    that talks to a model: reached afresh, so that no state of one case's leaks into
    the next and a server that dies fails only its case, and ended with the attempt.
    A server it starts never inherits ``secrets``' variables."""
    from zeroclaw_eval.toolserver.upstream import UpstreamCall, connect

    upstream = connect(server, timeout_s, secrets)
    try:
        if opened is not None:
            opened(upstream)  # a start that hangs past case_timeout_s is ended too
        upstream.start()
        yield UpstreamCall(upstream)
    finally:
        upstream.close()


def run_case(case: Case, mode: RunMode, registry: Registry, config: EvalConfig) -> CaseReport:
    """Run and grade one case; a run error becomes the report's ``error``.

    Running and grading together may take ``config.case_timeout_s`` seconds; a case
    that takes longer is a run error, and is abandoned (see :mod:`zeroclaw_eval.run.supervise`).
    """
    return run_cases([case], mode, registry, config).cases[0]


def attempt(
    case: Case,
    mode: RunMode,
    registry: Registry,
    config: EvalConfig,
    *,
    agent: AgentUnderTest | None = None,
    bridge: RouteOpener | None = None,
    tool_server: ToolRouteOpener | None = None,
    opened: Callable[[Closable], None] | None = None,
    run_span: SpanContext | None = None,
) -> CaseReport:
    """Run and grade one case on this thread, turning every failure into its report.

    ``SystemExit`` and other non-``Exception`` errors raised by the code run are
    failures too, so a plugin that calls ``sys.exit(0)`` fails its case instead of
    ending the run green. With ``run_span`` (a report traces the run), the attempt
    gets a span of its own under it, and its report keeps the attempt's times and
    model exchanges (:class:`~zeroclaw_eval.report.trace.AttemptTrace`).
    """
    traced = None
    if run_span is not None:
        from zeroclaw_eval.run.observe import AttemptTracing

        traced = AttemptTracing(run_span.child())
    started = time.perf_counter()
    set_up = set_up_s()  # the harness's own first-use set-up is not this case's time
    checks: tuple[CheckResult, ...] = ()
    warnings: tuple[str, ...] = ()
    requests: tuple[dict[str, Any], ...] = ()
    error = None
    tokens: tuple[int | None, int | None] = (None, None)
    metered: Metering | None = None
    started_sessions: list[AgentSession] = []

    def opened_here(session: Closable) -> None:
        if isinstance(session, AgentSession):  # its requests, should the case hit a run error
            started_sessions.append(session)
        if opened is not None:
            opened(session)

    with collecting() as notes:  # what the model side reports: models, retries
        try:
            with fresh_workspace():
                record = execute(
                    case,
                    mode,
                    registry,
                    config,
                    agent=agent,
                    bridge=bridge,
                    tool_server=tool_server,
                    opened=opened_here,
                    traced=traced,
                )
                tokens = (record.input_tokens, record.output_tokens)
                if mode.talks_to_provider:  # the provider's own figures, priced
                    from zeroclaw_eval.grading.accounting import metering

                    record.rates = config.rates
                    record.requested_model = config.live.model
                    metered = metering(record)
                    tokens = (metered.input_tokens, metered.output_tokens)
                checks = case.grade(record) + record.certified_checks()
                warnings = record.certified_notes()
                if mode.replays_scripts and config.drift != "off" and case.trace.stores_requests:
                    from zeroclaw_eval.run.drift import drift_outcome

                    drifted, drift_warnings = drift_outcome(case.trace, record, config)
                    checks += drifted
                    warnings += drift_warnings
                passed = all(check.passed for check in checks)
                requests = _reported_requests(record.requests, passed, config)
        except RunError as exc:
            error = f"case {case.name!r}: {exc}"
        except BaseException as exc:  # a tool, provider or mode bug fails this case only
            error = f"case {case.name!r}: unexpected {type(exc).__name__}: {exc}"
        if error is not None and started_sessions:
            requests = _reported_requests(started_sessions[0].requests_so_far(), False, config)
    trace = None
    if traced is not None:
        made = started_sessions[0].requests_so_far() if started_sessions else ()
        trace = traced.finish(made)
    return CaseReport(
        case.name,
        case.source,
        checks,
        error,
        max(0.0, time.perf_counter() - started - (set_up_s() - set_up)),
        models=tuple(notes.models),
        retries=tuple(notes.retries),
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        warnings=warnings,
        requests=requests,
        capture=notes.reproduced if error is None else None,
        trace=trace,
        **(_metered(metered) if metered is not None else {}),
    )


def _metered(metered: Metering) -> dict[str, Any]:
    """The report's usage fields of a case run against a real provider."""
    return {
        "usage": metered.requests,
        "cached_input_tokens": metered.cached_input_tokens,
        "reasoning_tokens": metered.reasoning_tokens,
        "cost": metered.cost,
    }


def _reported_requests(
    made: Sequence[ModelRequest], passed: bool, config: EvalConfig
) -> tuple[dict[str, Any], ...]:
    """The model requests the report carries for this case, per ``[eval] report_requests``:
    normalised only here, when they are reported."""
    wanted = config.report_requests
    if wanted == "off" or not made or (wanted == "failed" and passed):
        return ()
    from zeroclaw_eval.grading.requests import compact_record

    try:
        return tuple(compact_record(made))
    except Exception as exc:  # the evidence must never hide the verdict it explains
        return ({"error": f"the requests could not be reported: {type(exc).__name__}: {exc}"},)


NOT_RUN = "not run: the run stopped after the first failure (-x/--exitfirst)"
"""The error of a case ``-x`` never began."""

Progress = Callable[[int, int, int, str], None]
"""Told ``(done, total, failures so far, unit)`` each time a case attempt finishes;
``unit`` names what is counted: ``case``, or ``attempt`` when cases are repeated."""


def run_cases(
    cases: Iterable[Case],
    mode: RunMode,
    registry: Registry,
    config: EvalConfig,
    *,
    suite: str = "",
    progress: Progress | None = None,
    agent: AgentUnderTest | None = None,
    exitfirst: bool = False,
    trace: SpanContext | None = None,
) -> SuiteReport:
    """Run already admitted cases and collect their reports, in suite order.

    Cases run in worker threads, up to ``mode.concurrency(config)`` at once (a live
    suite waits on the network, not the CPU); each case still has its own agent,
    tools and provider, and may take ``config.case_timeout_s`` seconds before it is
    a run error and the suite moves on. Raises :class:`ConfigError` when the mode
    refuses the configuration. On :class:`KeyboardInterrupt` (Ctrl-C, or
    :class:`SuiteInterrupted` for another signal) it stops and returns a partial
    report marked ``interrupted``.

    With ``config.repeats`` above 1, every case runs that many times, each
    attempt with its own agent, tools and workspace, and its report holds them all
    (:meth:`CaseReport.of_attempts`).

    ``agent`` defaults to the one ``config.agent`` selects. When it needs the model
    bridge, one bridge serves the whole run, and is stopped however the run ends;
    a case abandoned at its time limit, or cut short by an interruption, has its
    session closed (a command agent's processes are killed).

    The report comes back with the provider's key redacted from every text in it
    (:meth:`~zeroclaw_eval.config.EvalConfig.secrets`): whatever a case quoted of an
    agent or a model, every report, history row and page made from it is clean.

    ``exitfirst`` (``-x``) begins no case after one that failed (all of a failing
    case's attempts still run); the cases never begun are listed as failed with
    :data:`NOT_RUN`. One case at a time (the replay default) stops at the first
    failure in suite order; with several at once, those already running finish
    and are reported. The bridge and the concurrency are the run's, as without it.

    ``trace`` is the run's span, when a report traces the run: each attempt gets a
    span under it, and the report keeps the run's times
    (:class:`~zeroclaw_eval.report.trace.RunTrace`) and each attempt's.
    """
    run_started_ns = time.time_ns()
    mode.check_config(config, registry.tools.keys())
    agent = agent if agent is not None else configured_agent(registry, config)
    agent.check_config(config)
    ks = pass_ks(config)
    cases = list(cases)
    repeats = config.repeats
    # Each attempt is a job of its own, so that repeats share the workers too.
    todo = [case for case in cases for _ in range(repeats)]
    reports: list[CaseReport | None] = [None] * len(todo)
    done = failures = 0

    unit = "attempt" if repeats > 1 else "case"

    def finished(index: int, report: CaseReport) -> None:
        nonlocal done, failures
        reports[index] = report
        done += 1
        failures += not report.passed
        if progress is not None:
            progress(done, len(todo), failures, unit)
        if exitfirst and not report.passed:  # the rest of this case's attempts still run
            supervisor.stop_before((index // repeats + 1) * repeats)

    def timed_out(index: int) -> CaseReport:
        case = todo[index]
        error = (
            f"case {case.name!r}: did not finish within case_timeout_s="
            f"{config.case_timeout_s:g} s: abandoned (a hung tool, provider or family?)"
        )
        return CaseReport(case.name, case.source, (), error, config.case_timeout_s)

    sessions = OpenSessions()

    def abandoned(index: int) -> CaseReport:
        report = timed_out(index)
        notes = sessions.diagnostics(index)  # before the close ends what they describe
        if sessions.close(index) and agent.needs_bridge:
            error = "; ".join([f"{report.error}; the agent under test was stopped", *notes])
            report = CaseReport(report.name, report.source, (), error, report.duration_s)
        return report

    with (
        model_bridge(agent.needs_bridge) as bridge,
        tool_server(agent.serves_tools) as tools,
    ):

        def job(index: int) -> CaseReport:
            try:
                return attempt(
                    todo[index],
                    mode,
                    registry,
                    config,
                    agent=agent,
                    bridge=bridge,
                    tool_server=tools,
                    opened=lambda session: sessions.add(index, session),
                    run_span=trace,
                )
            finally:
                sessions.forget(index)

        supervisor = Supervisor(
            len(todo),
            job,
            finished,
            abandoned,
            workers=workers(mode, agent, config),
            timeout_s=config.case_timeout_s,
        )
        try:
            supervisor.run()
            if exitfirst and done < len(todo):
                for index, case in enumerate(todo):
                    if reports[index] is None:
                        reports[index] = CaseReport(
                            case.name, case.source, error=NOT_RUN, ran=False
                        )
                if progress is not None:  # what was not run counts as done and failed
                    progress(len(todo), len(todo), failures + len(todo) - done, unit)
        except KeyboardInterrupt as exc:
            signum = exc.signum if isinstance(exc, SuiteInterrupted) else signal.SIGINT
            unit = "attempt" if repeats > 1 else "case"
            partial = interrupted_report(
                suite, mode.name, todo, reports, supervisor.started, signum, unit=unit
            )
            return config.secrets().value(
                replace(
                    partial,
                    cases=by_case(partial.cases, repeats),
                    repeats=repeats,
                    ks=ks,
                    agent=agent.run_name,
                    live_settings=mode.generation_settings(config),
                    trace=_run_trace(trace, run_started_ns),
                )
            )
        finally:
            sessions.close_all()
    ordered = tuple(report for report in reports if report is not None)
    # The one net under every report: what a case quoted of an agent or a model.
    return config.secrets().value(
        SuiteReport(
            suite,
            by_case(ordered, repeats),
            mode.name,
            gating=config.gating,
            config_digest=config.digest(),
            repeats=repeats,
            ks=ks,
            agent=agent.run_name,
            live_settings=mode.generation_settings(config),
            trace=_run_trace(trace, run_started_ns),
        )
    )


def _run_trace(span: SpanContext | None, started_ns: int) -> RunTrace | None:
    """The run's span, from ``started_ns`` to now, when the run is traced."""
    if span is None:
        return None
    from zeroclaw_eval.report.trace import RunTrace

    return RunTrace(span, started_ns, time.time_ns())


def by_case(attempts: Sequence[CaseReport], repeats: int) -> tuple[CaseReport, ...]:
    """One report per case from the attempts' reports, which come ``repeats`` per case."""
    if repeats == 1:
        return tuple(attempts)
    return tuple(
        CaseReport.of_attempts(attempts[start : start + repeats])
        for start in range(0, len(attempts), repeats)
    )


def pass_ks(config: EvalConfig) -> tuple[int, ...]:
    """The k of the pass@k and pass^k figures: ``pass_k``, else 1 and ``repeats``.

    Raises :class:`ConfigError` for a k above ``repeats``: pass@k draws k of the
    attempts, so there must be at least k.
    """
    if config.pass_k is None:
        return tuple(sorted({1, config.repeats})) if config.repeats > 1 else ()
    for k in config.pass_k:
        if k > config.repeats:
            raise ConfigError(
                f"pass_k={k}: more than repeats={config.repeats} "
                "(pass@k draws k of the attempts; run more with --repeat)"
            )
    return tuple(sorted(set(config.pass_k)))


def interrupted_report(
    suite: str,
    mode: str,
    cases: list[Case],
    reports: list[CaseReport | None],
    started: set[int],
    signum: int,
    *,
    unit: str = "case",
) -> SuiteReport:
    """The partial report of a suite stopped by ``signum``: nothing in it is silently missing.

    The finished cases keep their reports; a case that was running and every case
    not yet run are listed as failed with an error saying so. ``unit`` names what
    ``cases`` holds in the summary (``attempt`` when cases are repeated).
    """
    name = signal.Signals(signum).name
    unfinished = f"interrupted by {name} before it finished"
    listed = tuple(
        report
        if report is not None
        else CaseReport(case.name, case.source, error=unfinished)
        if index in started
        else CaseReport(case.name, case.source, error="not run", ran=False)
        for index, (case, report) in enumerate(zip(cases, reports, strict=True))
    )
    done = sum(1 for report in reports if report is not None)
    summary = (
        f"interrupted by {name} after {done} of {plural(len(cases), unit)}: "
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
    agent = configured_agent(registry, config)
    cases = load_suite(directory, registry, mode, config=config, agent=agent)
    return run_cases(cases, mode, registry, config, suite=str(directory), agent=agent)


def configured_agent(registry: Registry, config: EvalConfig) -> AgentUnderTest:
    """The agent ``config.agent`` selects, for callers that name none."""
    from zeroclaw_eval.agents.attach import select_agent  # a front end names its agent

    return select_agent(registry, config.agent)


def select_mode(registry: Registry, name: str) -> RunMode:
    """The registered mode called ``name``, or a :class:`ConfigError` listing the known ones."""
    entry = registry.modes.get(name)
    if entry is None:
        known = ", ".join(sorted(registry.modes)) or "none"
        raise ConfigError(f"mode {name!r} is not registered (known modes: {known})")
    return entry.obj
