"""The run session: one invocation of the harness, whatever front end asked for it.

``zeroclaw eval run``, ``eval check`` and ``eval record`` on the command line, and
the pytest plugin, each parse their own options into a :class:`RunRequest` and
hand it to a :class:`Session`: the configuration, the plugins, and the one place
that turns a request into settings, a mode, an agent, report targets, admitted
cases, a report and a history row. A new run option is added here once, and
every front end has it.

Nothing here prints or exits, and nothing here knows click: what goes to stdout
goes through the ``emit`` callable a front end passes, and a bad option value is
a :class:`~zeroclaw_eval.errors.UsageError` naming the option, which each front
end reports in its own way.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from zeroclaw_eval.config import load_config
from zeroclaw_eval.errors import ConfigError, SuiteLoadError, UsageError, ZeroclawEvalError
from zeroclaw_eval.plugins.manager import get_plugin_manager
from zeroclaw_eval.plugins.registry import Registry
from zeroclaw_eval.report.formatter import render
from zeroclaw_eval.report.model import SuiteReport

if TYPE_CHECKING:
    from zeroclaw_eval.agents.base import AgentUnderTest
    from zeroclaw_eval.case.admission import Case
    from zeroclaw_eval.config import EvalConfig, LoadedConfig
    from zeroclaw_eval.history.recorder import RunRecorder
    from zeroclaw_eval.modes.base import RunMode
    from zeroclaw_eval.plugins.manager import PluginManager
    from zeroclaw_eval.plugins.registry import Registered
    from zeroclaw_eval.report.formatter import Formatter
    from zeroclaw_eval.report.targets import ReportTarget
    from zeroclaw_eval.report.trace import SpanContext
    from zeroclaw_eval.run.runner import Progress
    from zeroclaw_eval.run.signals import RunSignals
    from zeroclaw_eval.selection.keyword import Expression
    from zeroclaw_eval.selection.shard import ShardSpec

T = TypeVar("T")

Emit = Callable[[str], None]
"""Takes a whole document for stdout."""


@dataclass(frozen=True)
class RunRequest:
    """What a front end asks of a run, each field as its option gave it (``None``:
    not given, so the configuration decides).

    ``paths`` are fixture files and suite directories (``PATH...``), else ``suite``
    (``--suite``), else the configuration's ``suite_dir`` is run. ``reports`` are
    ``FORMAT:PATH`` targets; ``None`` keeps the configuration's ``report`` key.
    ``verbosity`` is -1 (quiet), 0 or 1 (verbose), and ``colour`` whether stdout
    shows colour, for formatters that honour them (report files never get colour).
    """

    paths: tuple[Path, ...] = ()
    suite: Path | None = None
    keyword: Expression | None = None
    shard: ShardSpec | None = None
    exitfirst: bool = False
    mode: str | None = None
    format: str | None = None
    agent: str | None = None
    gate: bool | None = None
    drift: str | None = None
    repeats: int | None = None
    pass_k: Sequence[int] | None = None
    reports: Sequence[str] | None = None
    history: Path | None = None
    no_history: bool = False
    verbosity: int = 0
    colour: bool = False

    def __post_init__(self) -> None:
        if self.paths and self.suite is not None:
            raise UsageError("give PATH arguments or --suite, not both")


class Plan(NamedTuple):
    """A request applied to a session's configuration: what the cases run under.

    ``config`` is the configuration with the request's overrides; ``formatter`` the
    one for stdout (a ``FORMAT:-`` report's, at the request's verbosity), ``None``
    for a plan that reports nothing; ``targets`` the report files.
    """

    config: EvalConfig
    mode: RunMode
    agent: AgentUnderTest
    formatter: Formatter | None = None
    targets: Sequence[ReportTarget] = ()


class Session:
    """The harness for one invocation: a configuration, the plugins it loaded, and
    everything a request resolves to through them.

    Build one with :meth:`open` (or directly, from a configuration and a registry),
    then :meth:`run` a request, or take it apart: :meth:`plan`, :meth:`admit`,
    :meth:`run_cases`, as the pytest plugin does item by item.
    """

    def __init__(
        self,
        loaded: LoadedConfig,
        registry: Registry,
        pm: PluginManager | None = None,
        *,
        cwd: Path | None = None,
    ) -> None:
        self.loaded = loaded
        self.registry = registry
        self.pm = pm
        self.cwd = cwd if cwd is not None else Path.cwd()

    @classmethod
    def open(
        cls,
        *,
        config: Path | None = None,
        cwd: Path | None = None,
        blocked: Iterable[str] = (),
        plugins: Iterable[object] = (),
        load_entry_points: bool = True,
        environ: Mapping[str, str] | None = None,
    ) -> Session:
        """Read the configuration (``config``, else the one found from ``cwd``
        upwards), then load the plugins: the built-ins, ``plugins``, and the entry
        points unless ``load_entry_points`` is false; ``blocked`` are never imported.
        Each plugin that declared settings is handed its ``[eval.plugins.NAME]`` table.

        Raises :class:`~zeroclaw_eval.errors.ConfigError` and
        :class:`~zeroclaw_eval.errors.PluginLoadError`.
        """
        loaded = load_config(config, cwd=cwd)
        pm = get_plugin_manager(
            blocked=blocked,
            plugins=plugins,
            load_entry_points=load_entry_points,
            environ=environ,
        )
        registry = Registry.from_plugin_manager(pm)
        if loaded.config.plugins or registry.settings:  # else nothing to hand or refuse
            from zeroclaw_eval.plugins.settings import configure_plugins

            configure_plugins(loaded, registry)
        return cls(loaded, registry, pm, cwd=cwd)

    # --- what names and settings resolve to --------------------------------------

    def named(
        self, kind: str, table: Mapping[str, Registered[T]], name: str, option: str | None
    ) -> T:
        """The registered ``kind`` (``format``, ``mode``, ``agent``) called ``name``.

        An unknown name given with ``option`` is a :class:`UsageError` naming it; one
        read from the configuration is a :class:`ConfigError` naming the file and the
        key. Both list the known names.
        """
        entry = table.get(name)
        if entry is not None:
            return entry.obj
        known = ", ".join(sorted(table)) or "none"
        if option is not None:
            raise UsageError(f"unknown {kind} {name!r} (known: {known})", option)
        raise ConfigError(f"{self.loaded.field(kind)}={name!r}: unknown {kind} (known: {known})")

    def agent(self, name: str | None = None) -> AgentUnderTest:
        """The agent under test: ``name`` (``--agent``), else ``[eval].agent`` or the
        team's own agent an ``[eval.agent]`` table attaches."""
        setting = self.loaded.config.agent
        if name is not None or isinstance(setting, str):
            chosen = name if name is not None else str(setting)
            return self.named("agent", self.registry.agents, chosen, name and "--agent")
        from zeroclaw_eval.agents.attach import select_agent

        return select_agent(
            self.registry, setting, base_dir=self.loaded.base_dir, field=self.loaded.field
        )

    def report_targets(self, specs: Sequence[str] | None) -> list[ReportTarget]:
        """The report files ``specs`` (``--report``) name, else those of the
        configuration's ``report`` key (paths relative to its file)."""
        if not (self.loaded.config.report if specs is None else specs):
            return []
        from zeroclaw_eval.report.targets import relative_to, resolve

        if specs is None:
            try:
                return resolve(
                    relative_to(self.loaded.config.report, self.loaded.base_dir),
                    self.registry,
                    origin=self.loaded.field("report"),
                )
            except ValueError as exc:
                raise ConfigError(f"{self.loaded.field('report')}: {exc}") from None
        try:
            return resolve(specs, self.registry)
        except ValueError as exc:
            raise UsageError(str(exc), "--report") from None

    def stdout_formatter(
        self, formatter: Formatter, targets: Sequence[ReportTarget], option: str | None
    ) -> Formatter:
        """The formatter for stdout: a ``FORMAT:-`` report's, else ``formatter``.
        A ``FORMAT:-`` report beside ``--format`` (``option``) is a :class:`UsageError`:
        one stdout cannot hold two documents."""
        target = next((target for target in targets if target.to_stdout), None)
        if target is None:
            return formatter
        if option is not None:
            raise UsageError(f"--format {option} and --report {target.spec} both write stdout")
        return target.formatter

    def plugin_of(self, formatter: Formatter) -> str:
        """The plugin that registered ``formatter``, as errors name it."""
        entry = self.registry.formatters.get(formatter.name)
        return entry.plugin if entry is not None else "?"

    def render(self, formatter: Formatter, report: SuiteReport) -> str:
        """``formatter``'s document for ``report`` (see
        :func:`~zeroclaw_eval.report.formatter.render`)."""
        return render(formatter, report, self.plugin_of(formatter))

    def suite_dir(self, suite: Path | None = None) -> Path:
        """``suite`` (``--suite``, relative to the working directory), else the
        configuration's ``suite_dir``, relative to its file."""
        if suite is not None:
            return suite
        configured = Path(self.loaded.config.suite_dir)
        if configured.is_absolute() or self.loaded.base_dir.resolve() == self.cwd.resolve():
            return configured  # kept relative, so reports name fixtures as the user does
        return self.loaded.base_dir / configured

    def shown(self, path: Path) -> str:
        """How reports name a fixture: relative to the work tree, else to the configuration."""
        return self._shown(path)

    @cached_property
    def _shown(self) -> Callable[[Path], str]:
        from zeroclaw_eval.util.paths import display_root, shown_from

        return shown_from(display_root(self.loaded.base_dir, self.cwd))

    def plan(self, request: RunRequest) -> Plan:
        """Apply ``request`` to the configuration and resolve its mode, agent,
        formatter and report files, in that order of errors.

        Raises :class:`UsageError` for a bad option, :class:`ConfigError` for a bad
        setting. The mode and the agent check the rest of the configuration when
        cases run (or at once: :meth:`check`).
        """
        config = self.loaded.config
        updates: dict[str, object] = {}
        if request.mode is not None:
            updates["mode"] = request.mode
        if request.format is not None:
            updates["format"] = request.format
        if request.gate is not None:
            updates["gating"] = request.gate
        if request.drift is not None:
            updates["drift"] = request.drift
        if request.repeats is not None:
            updates["repeats"] = request.repeats
        if request.pass_k is not None:
            updates["pass_k"] = list(request.pass_k)
        agent = self.agent(request.agent)
        if request.agent is not None:  # so the report's config digest names the agent run
            updates["agent"] = request.agent
        if updates:
            config = config.model_copy(update=updates)
        formatter = self.named(
            "format", self.registry.formatters, config.format, request.format and "--format"
        )
        mode = self.named("mode", self.registry.modes, config.mode, request.mode and "--mode")
        targets = self.report_targets(request.reports)
        formatter = self.stdout_formatter(formatter, targets, request.format)
        formatter = formatter.with_verbosity(request.verbosity).with_colour(request.colour)
        return Plan(config, mode, agent, formatter, targets)

    def admission(self) -> Plan:
        """What admission needs and nothing more: the configuration's mode and agent
        (``eval check`` reports nothing, so its formats and files are not looked up)."""
        config = self.loaded.config
        mode = self.named("mode", self.registry.modes, config.mode, None)
        return Plan(config, mode, self.agent())

    def check(self, plan: Plan) -> None:
        """Let the mode and the agent refuse the configuration now, before anything
        runs (the runner asks them again before it runs cases). Raises
        :class:`~zeroclaw_eval.errors.ConfigError`."""
        plan.mode.check_config(plan.config, self.registry.tools.keys())
        plan.agent.check_config(plan.config)

    # --- admitting and running --------------------------------------------------

    def admit(
        self,
        plan: Plan,
        paths: Sequence[Path] = (),
        directory: Path | None = None,
        *,
        admitted: Callable[[], None] | None = None,
        gate: bool = False,
    ) -> list[Case]:
        """Admit the fixtures ``paths`` names, else the suite in ``directory``, for
        ``plan``'s mode and agent, held to its tool offer, and with ``gate`` (a run
        that gates) refusing a vacuous fixture. Raises
        :class:`~zeroclaw_eval.errors.SuiteLoadError` listing every refusal.

        ``admitted`` is called once admission ends, however it ends: the CLI lets
        its cyclic garbage collector run again there.
        """
        try:
            if paths:
                from zeroclaw_eval.selection.select import load_named

                return load_named(
                    paths,
                    self.registry,
                    plan.mode,
                    source=self.shown,
                    config=plan.config,
                    agent=plan.agent,
                    gate=gate,
                )
            from zeroclaw_eval.case.suite import load_suite

            return load_suite(
                directory if directory is not None else self.suite_dir(),
                self.registry,
                plan.mode,
                source=self.shown,
                config=plan.config,
                agent=plan.agent,
                gate=gate,
            )
        finally:
            if admitted is not None:
                admitted()

    def admit_files(self, plan: Plan, files: Sequence[Path], suite: str) -> list[Case]:
        """Admit exactly ``files`` (no suite lookup), naming them ``suite`` in errors; a
        vacuous fixture is refused when ``plan`` gates, as a run refuses it."""
        from zeroclaw_eval.case.suite import admit_files

        return admit_files(
            files,
            self.registry,
            plan.mode,
            suite=suite,
            source=self.shown,
            config=plan.config,
            agent=plan.agent,
            gate=plan.config.gating,
        )

    def run_cases(
        self,
        plan: Plan,
        cases: Sequence[Case],
        *,
        suite: str = "",
        exitfirst: bool = False,
        progress: Progress | None = None,
    ) -> SuiteReport:
        """Run admitted ``cases`` under ``plan``; ``exitfirst`` stops after the first
        case that fails (the rest are listed as not run)."""
        if exitfirst:
            from zeroclaw_eval.run.exitfirst import run_until_failure as runner
        else:
            from zeroclaw_eval.run.runner import run_cases as runner
        return runner(
            cases,
            plan.mode,
            self.registry,
            plan.config,
            suite=suite,
            progress=progress,
            agent=plan.agent,
            trace=_run_span(plan),
        )

    def run(
        self,
        request: RunRequest,
        *,
        emit: Emit | None = None,
        warn: Callable[[str], None] | None = None,
        progress: Progress | None = None,
        admitted: Callable[[], None] | None = None,
    ) -> SuiteReport:
        """Run a request whole: admit, select, run, then report into every report
        file, on stdout (``emit``) and into the history. Returns the report; its
        :meth:`~zeroclaw_eval.report.model.SuiteReport.exit_code` is the verdict.

        Report files are checked writable and the history is opened before any
        case runs. A suite that cannot be admitted still gets its report (on stdout
        when the format is machine-readable, and in every file), then its
        :class:`SuiteLoadError` is raised; ``warn`` is told what could not be
        written then. Ctrl-C or SIGTERM while the suite loads returns a report that
        says so; while cases run, either stops them with a partial report; while
        the reports are written, it is held, so that each report is written whole,
        and then raises :class:`~zeroclaw_eval.run.signals.ReportsInterrupted`
        saying so (see :mod:`zeroclaw_eval.run.signals`).
        """
        from zeroclaw_eval.history.recorder import filed_under, open_run_history

        plan = self.plan(request)
        if plan.targets:
            from zeroclaw_eval.report.targets import check_writable

            check_writable(plan.targets)  # before any case runs
        directory = self.suite_dir(request.suite)
        label = self._label(request.paths, directory)
        sharded = (request.shard.index, request.shard.count) if request.shard else None
        from zeroclaw_eval.run.signals import ReportsInterrupted, SuiteInterrupted, run_signals

        with (
            open_run_history(
                self.loaded,
                request.history,
                request.no_history,
                directory,
                filed_under(directory, request.paths, label),
            ) as recorder,
            run_signals() as signals,  # CI cancels a job with a signal, loading or not
        ):
            try:
                cases = self.admit(
                    plan, request.paths, directory, admitted=admitted, gate=plan.config.gating
                )
                selected, suite_total, selected_total = self._select(request, plan, cases, recorder)
            except Exception as exc:
                if signals.received is not None:  # the interrupt, swallowed on the way
                    return self._interrupted_loading(
                        plan, label, sharded, signals.received, emit, signals
                    )
                if not isinstance(exc, SuiteLoadError):
                    raise
                errors = (str(exc), *exc.problems)
                failed = SuiteReport(label, (), plan.config.mode, errors, shard=sharded)
                # The reports are still rendered (a machine-readable stdout, CI's
                # files); a failure there is reported, and the load error still is.
                machine_readable = plan.formatter is not None and plan.formatter.machine_readable
                try:
                    self._report(plan, failed, emit if machine_readable else None, signals)
                except (ZeroclawEvalError, ReportsInterrupted) as failure:
                    if warn is not None:
                        warn(str(failure))
                raise
            except KeyboardInterrupt as interruption:
                signum: int = signal.SIGINT
                if isinstance(interruption, SuiteInterrupted):
                    signum = interruption.signum
                return self._interrupted_loading(plan, label, sharded, signum, emit, signals)
            report = self.run_cases(
                plan, selected, suite=label, exitfirst=request.exitfirst, progress=progress
            )
            if not plan.config.gating:  # a gating run refused them at admission
                report = _noting_vacuity(report, selected)
            report = replace(
                report,
                shard=sharded,
                suite_total=suite_total,
                selected_total=selected_total,
                keyword=request.keyword.text if request.keyword is not None else None,
            )
            self._report(plan, report, emit, signals, recorder)
            return report

    def _interrupted_loading(
        self,
        plan: Plan,
        label: str,
        sharded: tuple[int, int] | None,
        signum: int,
        emit: Emit | None,
        signals: RunSignals,
    ) -> SuiteReport:
        """The report of a run a signal stopped while its suite loaded: no case run.

        A signal there may also reach the run as another error (a family's module
        imported for the first time, a class being made, a validator being built):
        the signal the handler recorded wins over that error.
        """
        name = signal.Signals(signum).name
        error = f"interrupted by {name} while the suite loaded: no case was run"
        report = SuiteReport(
            label,
            (),
            plan.config.mode,
            (error,),
            plan.config.gating,
            interrupted=name,
            shard=sharded,
        )
        from zeroclaw_eval.run.signals import ReportsInterrupted

        try:
            self._report(plan, report, emit, signals)
        except ReportsInterrupted as stopped:
            if not stopped.whole:
                raise  # a report was not written whole: said on the way out
        return report  # interrupted already: its exit code says so

    def _select(
        self, request: RunRequest, plan: Plan, cases: list[Case], recorder: RunRecorder
    ) -> tuple[list[Case], int, int]:
        """The cases ``-k`` and ``--shard`` keep, the admitted count, and the count
        ``-k`` kept (what the shards of one run add up to)."""
        if request.keyword is None and request.shard is None:
            return cases, len(cases), len(cases)
        from zeroclaw_eval.selection.select import select

        durations = None
        if request.shard is not None:  # balanced by the history's durations, if any
            chosen = len(select(cases, request.keyword).cases)
            durations = recorder.durations(plan.config.mode, chosen)
        selected = select(cases, request.keyword, request.shard, durations)
        return selected.cases, selected.suite_total, selected.selected_total

    def _report(
        self,
        plan: Plan,
        report: SuiteReport,
        emit: Emit | None,
        signals: RunSignals,
        recorder: RunRecorder | None = None,
    ) -> None:
        """``report`` into every report file, then on stdout (when ``emit`` is given),
        then into the history (``recorder``), with signals held (see
        :meth:`~zeroclaw_eval.run.signals.RunSignals.writing`).

        The files come first: they are written whole in milliseconds, where stdout
        may wait on a slow reader. A file that cannot be written does not keep the
        report from stdout: its error is raised once stdout has it.
        """
        files = [target for target in plan.targets if not target.to_stdout]
        printed = emit is not None and plan.formatter is not None
        names = [target.spec for target in files] + ["stdout"] * printed
        recorded = recorder is not None and recorder.history is not None and bool(report.cases)
        names += ["the history"] * recorded
        with signals.writing(names) as writing:
            unwritten: ZeroclawEvalError | None = None
            if files:  # the module that writes them is imported only when there are some
                from zeroclaw_eval.report.targets import write_report

                for target in files:
                    try:
                        with writing.step(target.spec):
                            write_report(target, report)
                    except ZeroclawEvalError as exc:
                        unwritten = unwritten or exc
            if printed:
                assert emit is not None and plan.formatter is not None
                with writing.step("stdout"):
                    emit(self.render(plan.formatter, report))
            if unwritten is not None:
                raise unwritten
            if recorded:
                assert recorder is not None
                with writing.step("the history"):
                    recorder.append(report, self.pm)

    def _label(self, paths: Sequence[Path], directory: Path) -> str:
        """How the report names the suite: the suite directory, or the PATH arguments."""
        if not paths:
            label = str(Path(self.shown(directory)))
            # The suite is the working directory (suite_dir = "." beside the file):
            # named by its name, since "." says nothing in a report or a history.
            return Path(os.path.abspath(directory)).name or label if label == "." else label
        from zeroclaw_eval.selection.select import suite_label

        return suite_label([Path(self.shown(path)) for path in paths])


def _run_span(plan: Plan) -> SpanContext | None:
    """A new trace for the run when one of its reports traces it (``--report
    otel:...``), else ``None``: a plain run keeps no times nor exchanges."""
    formatters = [target.formatter for target in plan.targets]
    if not any(formatter.traces for formatter in (*formatters, plan.formatter) if formatter):
        return None
    from zeroclaw_eval.report.trace import SpanContext

    return SpanContext.root()


def _noting_vacuity(report: SuiteReport, cases: Sequence[Case]) -> SuiteReport:
    """``report`` with a warning on each case a run doing nothing would pass: a
    non-gating run runs it, and says that it certifies nothing."""
    from zeroclaw_eval.case.suite import vacuity

    reasons = {case.source: str(found) for case in cases if (found := vacuity(case))}
    if not reasons:
        return report
    return replace(
        report,
        cases=tuple(
            replace(case, warnings=(*case.warnings, reasons[case.source]))
            if case.source in reasons
            else case
            for case in report.cases
        ),
    )
