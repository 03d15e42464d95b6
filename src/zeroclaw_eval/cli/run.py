"""``zeroclaw eval run``: run a suite and gate on it."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from zeroclaw_eval.cli.common import (
    StdoutKept,
    collector_resumed,
    colour_wanted,
    config_option,
    emit,
    errors_to_exit,
    import_before_signals,
    open_session,
    plugin_option,
    progress_line,
    repeat_and_history_options,
    shard_option,
    suite_option,
    warn,
)

if TYPE_CHECKING:
    from zeroclaw_eval.selection.keyword import Expression
    from zeroclaw_eval.selection.shard import ShardSpec


def _keyword(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    if value is None or not value.strip():
        return None  # as in pytest, an empty -k selects everything
    keyword = import_before_signals("zeroclaw_eval.selection.keyword")
    try:
        return keyword.Expression.compile(value)
    except keyword.ExpressionError as exc:
        raise click.BadParameter(f"{value!r}: {exc}", ctx=ctx, param=param) from None


@click.command()
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
    help="Report format for stdout (text, json, github, otel, or a plugin's).",
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
    "--drift",
    type=click.Choice(["fail", "warn", "off"]),
    default=None,
    help="Where a recorded step's request differs from the agent's: fail the case, warn, "
    "or do not compare (overrides [eval].drift; default: fail).",
)
@click.option(
    "--report",
    "report_specs",
    multiple=True,
    metavar="FORMAT:PATH",
    help="Also write the report as FORMAT to PATH (repeatable), e.g. json:report.json; "
    "PATH - is stdout, in place of --format; otel also takes an OTLP/HTTP URL, e.g. "
    "otel:http://127.0.0.1:4318/v1/traces. Replaces [eval].report.",
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
    drift: str | None,
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
    # Signals are answered first (the module needs only the standard library), then
    # the harness is imported: an interrupt while pydantic builds its classes may
    # reach us wrapped in another error (Python 3.11 wraps what a class's
    # ``__set_name__`` raises in a RuntimeError), and only the handler's record of
    # the signal tells that error from a real one.
    from zeroclaw_eval.run.signals import ReportsInterrupted, SuiteInterrupted, run_signals

    with run_signals() as signals, errors_to_exit():  # from the start: CI may cancel a job any time
        try:
            from zeroclaw_eval.run.session import RunRequest

            request = RunRequest(
                paths=paths,
                suite=suite,
                keyword=keyword,
                shard=shard_spec,
                exitfirst=exitfirst,
                mode=mode,
                format=format_name,
                agent=agent_name,
                gate=gate,
                drift=drift,
                repeats=repeat,
                pass_k=ks,
                reports=report_specs or None,
                history=history,
                no_history=no_history,
                verbosity=-1 if quiet else 1 if verbose else 0,
                colour=colour_wanted(),
            )
            if quiet and verbose:
                raise click.UsageError("-q and -v contradict each other")
            session = open_session(config_path, blocked)
        except (SuiteInterrupted, Exception) as stopped:
            # An error after a signal is the signal, swallowed on the way (a plugin's
            # validator being built, a class being made): the run was interrupted,
            # not refused.
            signum = stopped.signum if isinstance(stopped, SuiteInterrupted) else signals.received
            if signum is None:
                raise
            name = signal.Signals(signum).name
            raise ReportsInterrupted(
                signum,
                f"interrupted by {name} while the harness and its plugins loaded: "
                "no report was written",
            ) from None
        with StdoutKept() as kept:

            def emit_report(document: str) -> None:
                kept.restore()
                emit(document)

            try:
                report = session.run(
                    request,
                    emit=emit_report,
                    warn=warn,
                    progress=progress_line(),
                    admitted=collector_resumed,
                )
            except ReportsInterrupted:
                raise  # it says which reports were written
            except SuiteInterrupted as stopped:  # the run answers any later one itself
                name = signal.Signals(stopped.signum).name
                raise ReportsInterrupted(
                    stopped.signum,
                    f"interrupted by {name} before the suite loaded: no report was written",
                ) from None
    sys.exit(report.exit_code())
