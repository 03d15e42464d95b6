"""``zeroclaw eval merge``: the JSON reports of a sharded run, as one suite report."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import click

from zeroclaw_eval.cli.common import (
    config_option,
    emit,
    errors_to_exit,
    open_session,
    plugin_option,
    warn,
)


@click.command()
@click.argument("reports", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "format_name",
    default=None,
    help="Report format for stdout (text, json, github, otel, or a plugin's, e.g. junit).",
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
    from zeroclaw_eval.errors import ZeroclawEvalError
    from zeroclaw_eval.report.model import SuiteReport, plural
    from zeroclaw_eval.report.reader import ReadReport, ReportReadError, read_report
    from zeroclaw_eval.report.targets import check_writable, write_reports
    from zeroclaw_eval.selection.merge import MergeError, merge_reports

    with errors_to_exit():
        session = open_session(config_path, blocked)
        name = format_name or session.loaded.config.format
        formatter = session.named(
            "format", session.registry.formatters, name, format_name and "--format"
        )
        targets = session.report_targets(report_specs)
        formatter = session.stdout_formatter(formatter, targets, format_name)
        check_writable(targets)
        read: list[ReadReport] = []
        problems: list[str] = []
        for path in reports:
            try:
                read.append(read_report(path))
            except ReportReadError as exc:
                problems.append(str(exc))
        # What was read lives until the process exits: out of the cyclic collector's
        # sight, as the cases of a run are (see common.collector_resumed), so that enabling
        # it again does not traverse 10,000 reports once more at exit.
        gc.freeze()
        try:
            if problems:
                raise MergeError(
                    f"{len(problems)} of {plural(len(reports), 'report')} cannot be read", problems
                )
            merged = merge_reports(read)
        except MergeError as exc:
            lines = (str(exc), *exc.problems)
            for line in lines:
                warn(line)
            # Machine-readable outputs and report files still say the run is red.
            suite = read[0].report.suite if read else "?"
            failed = SuiteReport(suite, (), read[0].report.mode if read else "replay", lines)
            try:
                if formatter.machine_readable:
                    emit(session.render(formatter, failed))
                write_reports(targets, failed)
            except ZeroclawEvalError as failure:
                warn(str(failure))
            sys.exit(1)
        emit(session.render(formatter, merged))
        write_reports(targets, merged)
    sys.exit(merged.exit_code())
