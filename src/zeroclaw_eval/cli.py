"""The command line: ``zeroclaw eval run | check | plugins | record``, and
``history | compare`` (in :mod:`zeroclaw_eval.commands.history`).

This is the one boundary where errors become text: every
:class:`~zeroclaw_eval.errors.ZeroclawEvalError` is printed as ``Error: ...`` on
stderr with exit code 1; usage errors exit 2 (click's convention). Exit code 0
means every case passed, and nothing else.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

import click

from zeroclaw_eval.run_history import (
    filed_under,
    open_run_history,
    repeat_and_history_options,
)

if TYPE_CHECKING:
    from zeroclaw_eval.admission import Case
    from zeroclaw_eval.config import EvalConfig, LoadedConfig
    from zeroclaw_eval.expression import Expression
    from zeroclaw_eval.mode import RunMode
    from zeroclaw_eval.plugins import PluginManager
    from zeroclaw_eval.registry import Registered, Registry
    from zeroclaw_eval.report import Formatter, SuiteReport
    from zeroclaw_eval.report_files import ReportTarget
    from zeroclaw_eval.shard import ShardSpec
    from zeroclaw_eval.under_test import AgentUnderTest

T = TypeVar("T")

# The harness itself is imported inside the commands: ``zeroclaw --help`` and
# usage errors answer without paying for pydantic and the plugins.

_COLLECTOR_PAUSED = "zeroclaw_eval.collector_paused"
"""Set in ``ctx.meta`` when :func:`main` paused the cyclic collector."""

_PLUGIN_MANAGER = "zeroclaw_eval.plugin_manager"
"""The command's plugin manager, in ``ctx.meta``: the history records what it loaded."""

CONFIG_HELP = (
    "TOML file with an [eval] table (default: the nearest zeroclaw.toml, or pyproject.toml "
    "with [tool.zeroclaw.eval], in this directory or above)."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(None, "-V", "--version", package_name="zeroclaw-eval")
@click.pass_context
def main(ctx: click.Context) -> None:
    """zeroclaw: tools for the zeroclaw agent loop."""
    # No cyclic garbage collection until the suite is admitted: see _load_suite.
    # Put back when the command ends, for in-process invocations.
    if gc.isenabled():
        gc.disable()
        ctx.meta[_COLLECTOR_PAUSED] = True
        ctx.call_on_close(gc.enable)


@main.group(name="eval")
def eval_group() -> None:
    """Replay agent-loop fixtures and gate CI on their expectations."""


@contextmanager
def _errors() -> Iterator[None]:
    """Turn the harness's own errors into ``Error: ...`` lines and exit code 1."""
    from zeroclaw_eval.errors import SuiteLoadError, ZeroclawEvalError, one_line

    try:
        yield
    except KeyboardInterrupt:
        # Before a report could exist (plugins still loading): a line, not click's
        # "Aborted!", and the exit code of a Ctrl-C.
        click.echo("Error: interrupted by SIGINT", err=True)
        sys.exit(128 + signal.SIGINT)
    except ZeroclawEvalError as exc:
        click.echo(f"Error: {one_line(str(exc))}", err=True)
        if isinstance(exc, SuiteLoadError):
            for problem in exc.problems:
                click.echo(f"Error: {one_line(problem)}", err=True)
        sys.exit(1)


@dataclass(frozen=True)
class InProcessPlugins:
    """Plugin objects to register for one in-process invocation, passed as click's
    ``obj`` (see :func:`zeroclaw_eval.testing.run_cli`). The command line never sets it.
    """

    plugins: tuple[object, ...] = ()


def _render(registry: Registry, formatter: Formatter, report: SuiteReport) -> str:
    """The formatter's document; see :func:`zeroclaw_eval.report.render`."""
    from zeroclaw_eval.report import render

    entry = registry.formatters.get(formatter.name)
    return render(formatter, report, entry.plugin if entry is not None else "?")


def _emit(document: str) -> None:
    """Write the report to stdout. Not being able to (stdout closed, full, a broken
    pipe) is a :class:`ReportError`: exit 1, never a report silently lost."""
    from zeroclaw_eval.errors import ReportError

    stream = sys.stdout
    if stream is None:  # started with stdout closed
        raise ReportError("cannot write the report: stdout is closed")
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is None or stream.isatty():  # a terminal: click knows its quirks
            click.echo(document, nl=False)
        else:
            stream.flush()
            # Text the stream's encoding cannot hold is escaped, not a crash.
            data = memoryview(document.encode(stream.encoding or "utf-8", "backslashreplace"))
            # When the reader goes away mid-write, a buffered write returns the count
            # it managed and drops the rest without raising: write until all of it
            # is taken, so that the next write raises instead.
            while data:
                written = buffer.write(data)
                if not written:
                    raise OSError("stdout took no data")
                data = data[written:]
        stream.flush()
    except OSError as exc:
        # Point stdout at the null device, so that the interpreter's own flush at
        # exit does not fail a second time with a traceback.
        with suppress(OSError, ValueError):  # a stream with no file descriptor
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, stream.fileno())
            os.close(null)
        raise ReportError(f"cannot write the report to stdout: {exc.strerror or exc}") from None


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """While cases run, SIGTERM (how CI cancels a job) stops the suite as Ctrl-C does:
    with a partial report marked interrupted, instead of no report at all."""
    from zeroclaw_eval.runner import SuiteInterrupted

    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise SuiteInterrupted(signum)

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _plugin_manager(blocked: tuple[str, ...]) -> PluginManager:
    """Built-ins, any in-process plugins, then entry points; ``-p no:NAME`` and the
    environment decide what is never imported.
    """
    from zeroclaw_eval.plugins import get_plugin_manager

    ctx = click.get_current_context()
    in_process = ctx.find_object(InProcessPlugins)
    extra = in_process.plugins if in_process is not None else ()
    pm = get_plugin_manager(blocked=blocked, plugins=extra)
    ctx.meta[_PLUGIN_MANAGER] = pm
    for name in blocked:
        if name not in pm.known_names:  # a typo would otherwise block nothing, silently
            known = ", ".join(sorted(pm.known_names)) or "none"
            click.echo(
                f"Warning: -p no:{name}: no plugin is named {name!r}, so it blocks nothing "
                f"(plugins: {known})",
                err=True,
            )
    return pm


def _setup(
    config_path: Path | None, blocked: tuple[str, ...] = ()
) -> tuple[LoadedConfig, Registry]:
    from zeroclaw_eval.config import load_config
    from zeroclaw_eval.registry import Registry

    loaded = load_config(config_path)
    return loaded, Registry.from_plugin_manager(_plugin_manager(blocked))


def _blocked(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[str, ...]:
    from zeroclaw_eval.plugins import blocked_from_options

    try:
        return tuple(blocked_from_options(values))
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


def _load_suite(
    directory: Path,
    registry: Registry,
    mode: RunMode,
    paths: Sequence[Path] = (),
    source: Callable[[Path], str] = str,
    config: EvalConfig | None = None,
    agent: AgentUnderTest | None = None,
) -> list[Case]:
    """Admit the suite, then let the cyclic collector run, blind to all built so far.

    With ``config``, scripted calls are held to its tool offer (:mod:`zeroclaw_eval.offer`).

    What a command builds before its cases run (pydantic and its models, the
    plugins, the admitted cases) lives until the process exits and is next to no
    garbage, yet the collector traversed it again and again as it grew, and once
    more at exit. So :func:`main` pauses the collector, and here ``gc.freeze()``
    puts every object alive out of its sight for good before it resumes: it
    collects what running the cases makes (tools and modes may make cycles), and
    nothing else. CPU time (benchmarks/run.py): W1 0.47 -> 0.35 s, W4 4.1 -> 2.7 s.
    """
    from zeroclaw_eval.selection import load_named
    from zeroclaw_eval.suite import load_suite

    try:
        if paths:
            return load_named(paths, registry, mode, source=source, config=config, agent=agent)
        return load_suite(directory, registry, mode, source=source, config=config, agent=agent)
    finally:
        gc.freeze()
        if click.get_current_context().meta.get(_COLLECTOR_PAUSED):
            gc.enable()


def _suite_dir(loaded: LoadedConfig, suite: Path | None) -> Path:
    """``--suite`` is relative to the working directory; the file's, to the file."""
    if suite is not None:
        return suite
    configured = Path(loaded.config.suite_dir)
    if configured.is_absolute() or loaded.base_dir.resolve() == Path.cwd().resolve():
        return configured  # kept relative, so reports name fixtures as the user does
    return loaded.base_dir / configured


def _shown(loaded: LoadedConfig) -> Callable[[Path], str]:
    """How reports name a fixture: relative to the work tree, else to the configuration."""
    from zeroclaw_eval.paths import display_root, shown_from

    return shown_from(display_root(loaded.base_dir))


def _named(
    table: Mapping[str, Registered[T]], name: str, key: str, flag: str | None, loaded: LoadedConfig
) -> T:
    """The registered formatter or mode called ``name``.

    An unknown name given with ``flag`` is a usage error (exit 2); one read from the
    configuration is a :class:`ConfigError` naming the file and the key. Both list
    the known names.
    """
    from zeroclaw_eval.errors import ConfigError

    entry = table.get(name)
    if entry is not None:
        return entry.obj
    known = ", ".join(sorted(table)) or "none"
    if flag is not None:
        raise click.BadParameter(f"unknown {key} {name!r} (known: {known})", param_hint=f"'{flag}'")
    raise ConfigError(f"{loaded.field(key)}={name!r}: unknown {key} (known: {known})")


def _agent(registry: Registry, loaded: LoadedConfig, flag: str | None) -> AgentUnderTest:
    """The agent under test: ``--agent NAME``, else ``[eval].agent`` or ``[eval.agent]``."""
    from zeroclaw_eval.agent_run import select_agent

    setting = loaded.config.agent
    if flag is not None or isinstance(setting, str):
        name = flag if flag is not None else str(setting)
        return _named(registry.agents, name, "agent", flag and "--agent", loaded)
    return select_agent(registry, setting, base_dir=loaded.base_dir, field=loaded.field)


def _keyword(ctx: click.Context, param: click.Parameter, value: str | None) -> Expression | None:
    from zeroclaw_eval.expression import Expression, ExpressionError

    if value is None or not value.strip():
        return None  # as in pytest, an empty -k selects everything
    try:
        return Expression.compile(value)
    except ExpressionError as exc:
        raise click.BadParameter(f"{value!r}: {exc}", ctx=ctx, param=param) from None


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> ShardSpec | None:
    from zeroclaw_eval.shard import ShardSpec

    if value is None:
        return None
    try:
        return ShardSpec.parse(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


shard_option = click.option(
    "--shard",
    "shard_spec",
    metavar="K/N",
    default=None,
    callback=_shard,
    help="Run only the K-th of N deterministic slices of the cases (1 <= K <= N), for a CI "
    "matrix; balanced by the run history's recorded durations when it has some.",
)
suite_option = click.option(
    "--suite",
    type=click.Path(path_type=Path),
    default=None,
    help="Suite directory (overrides [eval].suite_dir).",
)
config_option = click.option(
    "--config", "config_path", type=click.Path(path_type=Path), default=None, help=CONFIG_HELP
)
# Spelled as in pytest: ``-p no:NAME`` blocks the plugin NAME before it is imported.
plugin_option = click.option(
    "-p",
    "blocked",
    multiple=True,
    metavar="no:NAME",
    callback=_blocked,
    help="Do not load the plugin NAME (repeatable). Also: ZEROCLAW_EVAL_DISABLE_PLUGINS=a,b; "
    "ZEROCLAW_EVAL_DISABLE_PLUGIN_AUTOLOAD=1 loads built-ins only.",
)


@eval_group.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@suite_option
@click.option(
    "-k",
    "keyword",
    metavar="EXPR",
    default=None,
    callback=_keyword,
    help="Only cases whose name or file name matches EXPR, as pytest's -k: substrings "
    "(case-insensitive) with and, or, not and parentheses.",
)
@shard_option
@click.option(
    "-x",
    "--exitfirst",
    is_flag=True,
    help="Stop after the first failed case; list the rest as not run.",
)
@click.option("-q", "--quiet", is_flag=True, help="Text report: only failures and the total.")
@click.option("-v", "--verbose", is_flag=True, help="Text report: every check of every case.")
@click.option(
    "--mode", default=None, help="Run mode (overrides [eval].mode): replay, or a plugin's."
)
@click.option(
    "--format",
    "format_name",
    default=None,
    help="Report format for stdout (text, json, or a plugin's).",
)
@click.option(
    "--agent",
    "agent_name",
    default=None,
    help="Agent under test (overrides [eval].agent): reference, or a plugin's.",
)
@click.option(
    "--gate/--no-gate",
    "gate",
    default=None,
    help="Whether failures fail the exit code (overrides [eval].gating; default: gate).",
)
@click.option(
    "--report",
    "report_specs",
    multiple=True,
    metavar="FORMAT:PATH",
    help="Also write the report as FORMAT to PATH (repeatable), e.g. junit:report.xml; "
    "PATH - is stdout, in place of --format. Replaces [eval].report.",
)
@repeat_and_history_options
@config_option
@plugin_option
def run(
    paths: tuple[Path, ...],
    suite: Path | None,
    keyword: Expression | None,
    shard_spec: ShardSpec | None,
    exitfirst: bool,
    quiet: bool,
    verbose: bool,
    mode: str | None,
    format_name: str | None,
    agent_name: str | None,
    gate: bool | None,
    report_specs: tuple[str, ...],
    repeat: int | None,
    ks: list[int] | None,
    history: Path | None,
    no_history: bool,
    config_path: Path | None,
    blocked: tuple[str, ...],
) -> None:
    """Run a suite (or the fixture files and suite directories PATHS) and print its
    report. Exit 0 iff every case passed (unless --no-gate).

    The run is appended to the history (see `zeroclaw eval history`) unless --no-history.
    """
    from zeroclaw_eval.errors import SuiteLoadError, ZeroclawEvalError
    from zeroclaw_eval.exitfirst import run_until_failure
    from zeroclaw_eval.report import SuiteReport
    from zeroclaw_eval.report_files import check_writable, resolve, write_reports
    from zeroclaw_eval.runner import run_cases
    from zeroclaw_eval.selection import select, suite_label

    if paths and suite is not None:
        raise click.UsageError("give PATH arguments or --suite, not both")
    if quiet and verbose:
        raise click.UsageError("-q and -v contradict each other")
    with _errors():
        loaded, registry = _setup(config_path, blocked)
        config = loaded.config
        if mode is not None or format_name is not None:
            config = config.model_copy(
                update={"mode": mode or config.mode, "format": format_name or config.format}
            )
        if gate is not None:
            config = config.model_copy(update={"gating": gate})
        if repeat is not None:
            config = config.model_copy(update={"repeats": repeat})
        if ks is not None:
            config = config.model_copy(update={"pass_k": ks})
        agent = _agent(registry, loaded, agent_name)
        if agent_name is not None:  # so the report's config digest names the agent run
            config = config.model_copy(update={"agent": agent_name})
        formatter = _named(
            registry.formatters, config.format, "format", format_name and "--format", loaded
        )
        run_mode = _named(registry.modes, config.mode, "mode", mode and "--mode", loaded)
        try:
            targets = resolve(report_specs, registry)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--report'") from None
        if not report_specs:
            targets = _configured_reports(loaded, registry)
        formatter = _on_stdout(formatter, targets, format_name)
        formatter = _with_verbosity(formatter, -1 if quiet else 1 if verbose else 0)
        check_writable(targets)  # before any case runs
        directory = _suite_dir(loaded, suite)
        shown = _shown(loaded)
        label = suite_label([Path(shown(path)) for path in paths or (directory,)])
        sharded = (shard_spec.index, shard_spec.count) if shard_spec is not None else None
        filed = filed_under(directory, paths, label)
        recorder = open_run_history(loaded, history, no_history, directory, filed)
        try:
            admitted = _load_suite(directory, registry, run_mode, paths, shown, config, agent)
            durations = None
            if shard_spec is not None:  # balanced by the history's durations, if it has any
                chosen = len(select(admitted, keyword).cases)
                durations = recorder.durations(config.mode, chosen)
            selected = select(admitted, keyword, shard_spec, durations)
        except SuiteLoadError as exc:
            errors = (str(exc), *exc.problems)
            report = SuiteReport(label, (), config.mode, errors, shard=sharded)
            # The reports are still rendered (a machine-readable stdout, CI's files);
            # a failure there is reported, and the load error still is.
            try:
                if formatter.machine_readable:
                    _emit(_render(registry, formatter, report))
                write_reports(targets, report)
            except ZeroclawEvalError as failure:
                click.echo(f"Error: {failure}", err=True)
            raise
        except KeyboardInterrupt:
            sys.exit(_loading_interrupted(registry, formatter, targets, label, config, sharded))
        runner = run_until_failure if exitfirst else run_cases
        with _sigterm_interrupts():
            report = runner(
                selected.cases,
                run_mode,
                registry,
                config,
                suite=label,
                progress=_progress(),
                agent=agent,
            )
        report = replace(
            report,
            shard=sharded,
            suite_total=selected.suite_total,
            selected_total=selected.selected_total,
            keyword=keyword.text if keyword is not None else None,
        )
        _emit(_render(registry, formatter, report))
        write_reports(targets, report)
        recorder.append(report, click.get_current_context().meta.get(_PLUGIN_MANAGER))
    sys.exit(report.exit_code())


def _loading_interrupted(
    registry: Registry,
    formatter: Formatter,
    targets: Sequence[ReportTarget],
    label: str,
    config: EvalConfig,
    shard: tuple[int, int] | None,
) -> int:
    """Ctrl-C while the suite loaded: the report says so (no case ran), on stdout and
    in every ``--report`` file, each written whole. Returns the exit code, 130."""
    from zeroclaw_eval.report import SuiteReport
    from zeroclaw_eval.report_files import write_reports

    error = "interrupted by SIGINT while the suite loaded: no case was run"
    report = SuiteReport(
        label, (), config.mode, (error,), config.gating, interrupted="SIGINT", shard=shard
    )
    _emit(_render(registry, formatter, report))
    write_reports(targets, report)
    return report.exit_code()


def _configured_reports(loaded: LoadedConfig, registry: Registry) -> list[ReportTarget]:
    """The ``report`` key's targets, paths relative to the configuration file."""
    from zeroclaw_eval.errors import ConfigError
    from zeroclaw_eval.report_files import relative_to, resolve

    try:
        return resolve(relative_to(loaded.config.report, loaded.base_dir), registry)
    except ValueError as exc:
        raise ConfigError(f"{loaded.field('report')}: {exc}") from None


def _on_stdout(
    formatter: Formatter, targets: Sequence[ReportTarget], format_name: str | None
) -> Formatter:
    """The formatter for stdout: a ``FORMAT:-`` report's, else ``formatter``.
    ``--format`` given as well is a usage error: one stdout cannot hold two documents."""
    target = next((target for target in targets if target.to_stdout), None)
    if target is None:
        return formatter
    if format_name is not None:
        raise click.UsageError(
            f"--format {format_name} and --report {target.spec} both write stdout"
        )
    return target.formatter


def _with_verbosity(formatter: Formatter, verbosity: int) -> Formatter:
    """The text formatter at ``-q``/``-v``; other formats always show everything."""
    from zeroclaw_eval.builtin.text import TextFormatter

    if verbosity and isinstance(formatter, TextFormatter):
        return TextFormatter(verbosity)
    return formatter


def _description(registry: Registry, kind: str, name: str) -> str:
    """What a registered family, formatter or mode says it does (tools say nothing)."""
    from zeroclaw_eval.errors import one_line

    tables: dict[str, Mapping[str, Registered[Any]]] = {
        "families": registry.families,
        "formatters": registry.formatters,
        "modes": registry.modes,
    }
    entry = tables.get(kind, {}).get(name)
    return one_line(str(getattr(entry.obj, "description", "") or "")) if entry else ""


def _progress() -> Callable[[int, int, int], None] | None:
    """A progress line on stderr when it is a terminal; nothing otherwise (logs, CI, pipes)."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int, failures: int) -> None:
        end = "\n" if done == total else ""
        sys.stderr.write(f"\r{done}/{total} cases done, {failures} failed{end}")
        sys.stderr.flush()

    return show


@eval_group.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@suite_option
@config_option
@plugin_option
def check(
    paths: tuple[Path, ...], suite: Path | None, config_path: Path | None, blocked: tuple[str, ...]
) -> None:
    """Admit a suite (or the fixture files and suite directories PATHS) and grade each
    fixture against an empty run, running nothing.

    Exit 1 if any fixture is refused, or is vacuous: a run that does nothing
    (no response, no tool call) would pass all of its checks.
    """
    from zeroclaw_eval.suite import vacuity

    if paths and suite is not None:
        raise click.UsageError("give PATH arguments or --suite, not both")
    with _errors():
        loaded, registry = _setup(config_path, blocked)
        directory = _suite_dir(loaded, suite)
        run_mode = _named(registry.modes, loaded.config.mode, "mode", None, loaded)
        agent = _agent(registry, loaded, None)
        cases = _load_suite(
            directory, registry, run_mode, paths, _shown(loaded), loaded.config, agent
        )
        vacuous = [found for case in cases if (found := vacuity(case)) is not None]
        for found in vacuous:
            click.echo(f"Error: {found}", err=True)
        if vacuous:
            click.echo(f"{len(vacuous)}/{len(cases)} fixtures are vacuous", err=True)
            sys.exit(1)
        click.echo(f"{len(cases)} fixtures admitted; none is satisfied by an empty run")


@eval_group.command()
@click.option(
    "--suite",
    type=click.Path(path_type=Path),
    required=True,
    help="Suite of live cases to run.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="Directory the replay fixtures are written to (created if missing).",
)
@click.option("--force", is_flag=True, help="Overwrite fixtures that already exist in --out.")
@config_option
@plugin_option
def record(
    suite: Path, out: Path, force: bool, config_path: Path | None, blocked: tuple[str, ...]
) -> None:
    """Run a suite live and write each case as a replay fixture of the model's replies.

    A fixture keeps the case's name, inputs and expects; its steps are what the
    model answered. It replays to the verdict the live run had. A case that hit a
    run error, or whose recording replay would refuse, is reported and not
    written. Exit 0 iff every case passed and was written.
    """
    from zeroclaw_eval.errors import AdmissionError, ZeroclawEvalError
    from zeroclaw_eval.record_mode import RecordingMode, fixture_document, write_fixture
    from zeroclaw_eval.runner import run_cases, select_mode

    with _errors():
        loaded, registry = _setup(config_path, blocked)
        formatter = _record_formatter(registry)  # before running anything
        # One attempt per case: a fixture records one conversation, and replays to its verdict.
        config = loaded.config.model_copy(update={"mode": "live", "repeats": 1, "pass_k": None})
        live = RecordingMode(select_mode(registry, "live"))
        replay = select_mode(registry, "replay")
        agent = _agent(registry, loaded, None)
        cases = _load_suite(
            suite, registry, live, source=_shown(loaded), config=config, agent=agent
        )
        targets = [out / Path(case.source).name for case in cases]
        existing = [str(target) for target in targets if target.exists()]
        if existing and not force:
            more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
            raise ZeroclawEvalError(
                f"{existing[0]}{more}: already exists; pass --force to overwrite"
            )
        try:
            out.mkdir(parents=True, exist_ok=True)  # before running: fail fast, not after
        except OSError as exc:
            raise ZeroclawEvalError(f"{out}: cannot create the output directory: {exc}") from None
        report = run_cases(
            cases, live, registry, config, suite=str(suite), progress=_progress(), agent=agent
        )
        written = 0
        refused: list[str] = []
        for case, case_report, target in zip(cases, report.cases, targets, strict=True):
            if case_report.error is None:
                document = fixture_document(case, live.replies(case))
                try:
                    write_fixture(document, target, registry, replay, config)
                except AdmissionError as exc:
                    refused.append(f"Error: {exc} (recorded, not written)")
                    continue
                except OSError as exc:
                    raise ZeroclawEvalError(f"{target}: cannot write: {exc}") from None
                written += 1
        _emit(_render(registry, formatter, report))
        for line in refused:
            click.echo(line, err=True)
        click.echo(f"recorded {written}/{len(cases)} cases into {out}", err=True)
    sys.exit(report.exit_code() or (1 if refused else 0))


def _record_formatter(registry: Registry) -> Formatter:
    """The ``text`` formatter ``record`` prints with; missing only when it was blocked."""
    from zeroclaw_eval.errors import ConfigError

    entry = registry.formatters.get("text")
    if entry is not None:
        return entry.obj
    if "text" in registry.blocked:
        raise ConfigError(
            "record prints its report with the 'text' formatter, and the plugin 'text' "
            "that provides it is blocked (-p no:text or ZEROCLAW_EVAL_DISABLE_PLUGINS)"
        )
    raise ConfigError("record prints its report with the 'text' formatter, which is not registered")


@eval_group.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON document instead of text.")
@plugin_option
def plugins(as_json: bool, blocked: tuple[str, ...]) -> None:
    """List the registered plugins, where they come from and what they provide.

    A plugin comes from an installed distribution (shown with its version and
    entry point) or is built in. Blocked plugins are listed last.
    """
    from zeroclaw_eval.registry import KINDS, Registry

    with _errors():
        pm = _plugin_manager(blocked)
        registry = Registry.from_plugin_manager(pm)
    never_loaded = sorted(name for name, plugin in pm.list_name_plugin() if plugin is None)
    rows = [
        {
            "name": origin.name,
            "builtin": origin.builtin,
            "distribution": origin.distribution,
            "version": origin.version,
            "entry_point": origin.entry_point,
            "provides": registry.provided_by(origin.name),
            "descriptions": {
                kind: {name: _description(registry, kind, name) for name in names}
                for kind, names in registry.provided_by(origin.name).items()
                if names and kind != "tools"
            },
        }
        for origin in pm.origins.values()
    ]
    if as_json:
        click.echo(json.dumps({"plugins": rows, "blocked": never_loaded}, indent=2))
        return
    for origin in pm.origins.values():
        if origin.distribution:
            source = f"{origin.distribution} {origin.version}, entry point {origin.entry_point}"
        else:
            source = "built-in" if origin.builtin else "in-process"
        click.echo(f"{origin.name} ({source})")
        provided = registry.provided_by(origin.name)
        for kind in KINDS:
            if provided[kind]:
                click.echo(f"    {kind}: {', '.join(provided[kind])}")
                for name in provided[kind]:
                    if description := _description(registry, kind, name):
                        click.echo(f"        {name}: {description}")
    if never_loaded:
        click.echo(f"blocked: {', '.join(never_loaded)}")


# Commands in modules of their own attach themselves to the group when imported.
from zeroclaw_eval.commands import history as _history  # noqa: E402, F401
from zeroclaw_eval.commands import merge as _merge  # noqa: E402, F401
from zeroclaw_eval.commands import schema as _schema  # noqa: E402, F401
