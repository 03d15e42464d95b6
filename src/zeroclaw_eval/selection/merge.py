"""Merging shard reports: the ``--shard K/N`` runs of one suite become one suite report.

A CI matrix runs the shards; one job merges their ``json`` reports and gates on the
whole. The merge refuses anything that could make a partial run look green: a
missing shard, a shard given twice, shards of different counts, a case in two
shards, reports of different suites, modes, agents or settings (``config_digest``), and
shards that together do not hold every case of the suite. Every such problem is
reported at once. Errors a shard itself reported (a refused fixture, an
interruption) are carried into the merged report, which is then red.
"""

from __future__ import annotations

from collections.abc import Sequence

from zeroclaw_eval.errors import ZeroclawEvalError
from zeroclaw_eval.report.model import CaseReport, SuiteReport, plural
from zeroclaw_eval.report.reader import ReadReport


class MergeError(ZeroclawEvalError):
    """The reports do not make up one whole run. ``problems`` holds one line each."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        self.problems = tuple(problems)
        super().__init__(message)


def merge_reports(reports: Sequence[ReadReport]) -> SuiteReport:
    """One :class:`SuiteReport` of the whole suite from its shard reports.

    Cases come out in suite (path) order, as an unsharded run lists them. A single
    unsharded report is returned as it is (merge then only re-renders it). Raises
    :class:`MergeError` listing every problem.
    """
    if not reports:
        raise MergeError("no report to merge")
    if len(reports) == 1 and reports[0].shard is None:
        return reports[0].report
    problems = [*_shard_problems(reports), *_sameness_problems(reports)]
    cases, case_problems = _cases(reports)
    problems += case_problems
    if problems:
        raise MergeError(
            f"{plural(len(reports), 'report')} cannot be merged into one run: "
            f"{plural(len(problems), 'problem')}",
            problems,
        )
    first = reports[0].report
    ran = [read.report for read in reports if read.report.config_digest]
    errors = tuple(
        f"shard {read.shard[0]}/{read.shard[1]} ({read.path}): {error}"
        for read in reports
        if read.shard is not None
        for error in read.report.errors
    )
    interrupted = next((r.report.interrupted for r in reports if r.report.interrupted), None)
    return SuiteReport(
        first.suite,
        cases,
        first.mode,
        errors,
        gating=all(report.gating for report in ran) if ran else first.gating,
        interrupted=interrupted,
        config_digest=ran[0].config_digest if ran else "",
        repeats=first.repeats,
        ks=first.ks,
        agent=ran[0].agent if ran else first.agent,
        # A shard whose suite failed to load counted nothing: the totals are the
        # complete shards' (they agree, or the merge was refused above).
        suite_total=next(
            (read.suite_total for read in reports if not read.report.errors),
            reports[0].suite_total,
        ),
        selected_total=sum(len(read.report.cases) for read in reports),
        keyword=first.keyword,
        live_settings=ran[0].live_settings if ran else first.live_settings,
    )


def _shard_problems(reports: Sequence[ReadReport]) -> list[str]:
    problems = [
        f'{read.path}: not a shard report ("shard" is null): merge combines the '
        "--shard K/N reports of one run"
        for read in reports
        if read.shard is None
    ]
    sharded = [read for read in reports if read.shard is not None]
    counts = sorted({read.shard[1] for read in sharded if read.shard is not None})
    if len(counts) > 1:
        listed = ", ".join(f"{read.path} ({_name(read)})" for read in sharded)
        problems.append(f"shards of different counts cannot be merged: {listed}")
        return problems
    if not counts:
        return problems
    count = counts[0]
    seen: dict[int, list[str]] = {}
    for read in sharded:
        assert read.shard is not None
        seen.setdefault(read.shard[0], []).append(read.path)
    for index in range(1, count + 1):
        paths = seen.get(index, [])
        if not paths:
            problems.append(f"shard {index}/{count} is missing: every shard must be merged")
        elif len(paths) > 1:
            problems.append(f"shard {index}/{count} is given more than once: {', '.join(paths)}")
    return problems


def _sameness_problems(reports: Sequence[ReadReport]) -> list[str]:
    problems = []
    first = reports[0]
    for read in reports[1:]:
        if read.report.suite != first.report.suite:
            problems.append(
                f"{read.path}: suite={read.report.suite!r}, but {first.path} is of "
                f"suite={first.report.suite!r}: reports of different suites"
            )
        if read.report.mode != first.report.mode:
            problems.append(
                f"{read.path}: mode={read.report.mode!r}, but {first.path} ran in "
                f"mode={first.report.mode!r}"
            )
        if (read.report.repeats, read.report.ks) != (first.report.repeats, first.report.ks):
            problems.append(
                f"{read.path}: repeats={read.report.repeats}, pass_k={list(read.report.ks)}, "
                f"but {first.path} has repeats={first.report.repeats}, "
                f"pass_k={list(first.report.ks)}"
            )
    # A report whose suite failed to load ran nothing and has no digest; its errors
    # make the merge red on their own.
    ran = [read for read in reports if read.report.config_digest]
    for read in ran[1:]:
        if read.report.config_digest != ran[0].report.config_digest:
            problems.append(
                f"{read.path}: config_digest={read.report.config_digest}, but {ran[0].path} "
                f"has {ran[0].report.config_digest}: the shards ran under different settings"
            )
        if read.report.agent != ran[0].report.agent:
            problems.append(
                f"{read.path}: agent={read.report.agent!r}, but {ran[0].path} ran "
                f"agent={ran[0].report.agent!r}: reports of different agents"
            )
        if read.report.keyword != first.report.keyword:
            problems.append(
                f"{read.path}: keyword={read.report.keyword!r}, but {first.path} has "
                f"keyword={first.report.keyword!r}: shards of different -k selections"
            )
    complete = [read for read in reports if not read.report.errors]
    totals = sorted({read.suite_total for read in complete})
    selections = sorted({read.selected_total for read in complete})
    if len(totals) > 1:
        listed = ", ".join(f"{read.path}: {read.suite_total}" for read in complete)
        problems.append(f"the shards disagree on the suite's case count (suite_total): {listed}")
    elif len(selections) > 1:
        listed = ", ".join(f"{read.path}: {read.selected_total}" for read in complete)
        problems.append(
            f"the shards disagree on how many cases were selected (selected_total): {listed}"
        )
    elif selections and len(complete) == len(reports):
        held = sum(len(read.report.cases) for read in reports)
        if held != selections[0]:
            whole = "the suite has" if selections[0] == totals[0] else "the selection had"
            problems.append(
                f"the shards hold {plural(held, 'case')} but {whole} {selections[0]}: "
                "a merge of them would not be the whole run (shards run with different "
                "PATH arguments cannot be merged into one)"
            )
    return problems


def _cases(reports: Sequence[ReadReport]) -> tuple[tuple[CaseReport, ...], list[str]]:
    """Every case once, in path order; a case found in two reports is a problem."""
    where: dict[str, str] = {}
    cases: list[CaseReport] = []
    problems = []
    for read in reports:
        for case in read.report.cases:
            if case.source in where:
                problems.append(
                    f"case {case.name!r} ({case.source}) is in both {where[case.source]} "
                    f"and {read.path}"
                )
                continue
            where[case.source] = read.path
            cases.append(case)
    cases.sort(key=lambda case: case.source)
    return tuple(cases), problems


def _name(read: ReadReport) -> str:
    return f"shard {read.shard[0]}/{read.shard[1]}" if read.shard is not None else "unsharded"
