"""``zeroclaw eval merge``: the JSON reports of a sharded run, as one suite report."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import click

from zeroclaw_eval.cli import (
    _emit,
    _errors,
    _named,
    _on_stdout,
    _render,
    _setup,
    config_option,
    eval_group,
    plugin_option,
)


@eval_group.command()
@click.argument("reports", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "format_name",
    default=None,
    help="Report format for stdout (text, json, junit, github, or a plugin's).",
)
@click.option(
    "--report",
    "report_specs",
    multiple=True,
    metavar="FORMAT:PATH",
    help="Also write the merged report as FORMAT to PATH (repeatable); PATH - is stdout, "
    "in place of --format.",
)
@config_option
@plugin_option
def merge(
    reports: tuple[Path, ...],
    format_name: str | None,
    report_specs: tuple[str, ...],
    config_path: Path | None,
    blocked: tuple[str, ...],
) -> None:
    """Merge the JSON reports of every --shard K/N run of a suite into one report.

    REPORTS are the files `zeroclaw eval run --shard K/N --report json:PATH` wrote.
    Exit 0 iff the merged suite passed. A missing or repeated shard, a case in two
    shards, or reports of different suites or settings are errors (exit 1): a
    partial merge is never green.
    """
    from zeroclaw_eval.errors import ZeroclawEvalError, one_line
    from zeroclaw_eval.merge import MergeError, merge_reports
    from zeroclaw_eval.report import SuiteReport
    from zeroclaw_eval.report_files import check_writable, resolve, write_reports
    from zeroclaw_eval.report_json import ReadReport, ReportReadError, read_report

    with _errors():
        loaded, registry = _setup(config_path, blocked)
        name = format_name or loaded.config.format
        formatter = _named(registry.formatters, name, "format", format_name and "--format", loaded)
        try:
            targets = resolve(report_specs, registry)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--report'") from None
        formatter = _on_stdout(formatter, targets, format_name)
        check_writable(targets)
        read: list[ReadReport] = []
        problems: list[str] = []
        for path in reports:
            try:
                read.append(read_report(path))
            except ReportReadError as exc:
                problems.append(str(exc))
        # What was read lives until the process exits: out of the cyclic collector's
        # sight, as the cases of a run are (see cli._load_suite), so that enabling
        # it again does not traverse 10,000 reports once more at exit.
        gc.freeze()
        try:
            if problems:
                raise MergeError(
                    f"{len(problems)} of {len(reports)} reports cannot be read", problems
                )
            merged = merge_reports(read)
        except MergeError as exc:
            lines = (str(exc), *exc.problems)
            for line in lines:
                click.echo(f"Error: {one_line(line)}", err=True)
            # Machine-readable outputs and report files still say the run is red.
            suite = read[0].report.suite if read else "?"
            failed = SuiteReport(suite, (), read[0].report.mode if read else "replay", lines)
            try:
                if formatter.machine_readable:
                    _emit(_render(registry, formatter, failed))
                write_reports(targets, failed)
            except ZeroclawEvalError as failure:
                click.echo(f"Error: {failure}", err=True)
            sys.exit(1)
        _emit(_render(registry, formatter, merged))
        write_reports(targets, merged)
    sys.exit(merged.exit_code())
