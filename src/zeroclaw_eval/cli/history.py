"""Looking back at the run history: ``zeroclaw eval history`` and ``zeroclaw eval
compare`` (``run`` writes the history: see :mod:`zeroclaw_eval.history.recorder`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from zeroclaw_eval.cli.common import config_option, errors_to_exit
from zeroclaw_eval.history.recorder import history_path
from zeroclaw_eval.report.model import plural

if TYPE_CHECKING:
    from zeroclaw_eval.history.store import History, Run

FORMATS = ("text", "json")

history_option = click.option(
    "--history",
    "history_file",
    type=click.Path(path_type=Path),
    default=None,
    help="The SQLite history to read (default: .zeroclaw/history.sqlite beside the config file).",
)
suite_option = click.option(
    "--suite",
    type=click.Path(path_type=Path),
    default=None,
    help="Only the runs of this suite directory.",
)
format_option = click.option(
    "--format",
    "format_name",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Output format.",
)


def _open(config_path: Path | None, history_file: Path | None) -> History:
    from zeroclaw_eval.config import load_config
    from zeroclaw_eval.history.store import open_history

    loaded = load_config(config_path)
    return open_history(history_path(loaded, history_file), create=False)


def _suite_name(suite: Path | None) -> str | None:
    """The suite as runs record it (its absolute path), for ``--suite``; ``None``
    means every suite."""
    return None if suite is None else str(suite.resolve())


def shown(suite: str) -> str:
    """A recorded suite as text shows it: relative to the working directory when
    inside it, else as recorded; the working directory itself by its name (a
    suite called "." says nothing in a comparison or a page title)."""
    path = Path(suite)
    try:
        relative = str(path.relative_to(Path.cwd())) if path.is_absolute() else suite
    except ValueError:
        return suite
    return (path.name or suite) if relative == "." else relative


def _commit(run: Run) -> str:
    if run.git_commit is None:
        return "-"
    return run.git_commit[:10] + ("+" if run.git_dirty else "")


@click.command()
@suite_option
@click.option(
    "--case",
    "case",
    default=None,
    metavar="NAME|FIXTURE",
    help="Show this case's outcomes over the runs: its name, or its fixture as reports "
    "show it (needed when fixtures of several suites share the name).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="How many of the latest runs to look at.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Write a self-contained HTML trend page of the suite to this file.",
)
@history_option
@format_option
@config_option
def history(
    suite: Path | None,
    case: str | None,
    limit: int,
    html_path: Path | None,
    history_file: Path | None,
    format_name: str,
    config_path: Path | None,
) -> None:
    """List the latest runs, or one case's outcomes and pass rate (--case).

    Runs of every suite are listed unless --suite picks one. With --html, the
    suite's trend page (default: the suite of the latest run) is written too.
    """
    from zeroclaw_eval.errors import HistoryError

    with errors_to_exit():
        store = _open(config_path, history_file)
        with store:
            suite_name = _suite_name(suite)
            if html_path is not None:
                _write_page(store, suite_name, limit, html_path)
            runs = store.runs(suite_name, limit)
            if case is not None:
                attempts = _one_fixture(store, [run.id for run in runs], case)
                if not attempts:
                    where = f" in {shown(suite_name)}" if suite_name else ""
                    raise HistoryError(
                        f"{store.path}: case {case!r} is in none of the last "
                        f"{plural(len(runs), 'run')}{where}"
                    )
                document = _case_document(attempts[0].case_name, runs, attempts)
                text = _case_text(document)
            else:
                counts = store.attempt_counts([run.id for run in runs])
                document = _runs_document(runs, counts, suite_name)
                text = _runs_text(runs, document)
    click.echo(
        json.dumps(document, indent=2, ensure_ascii=False) if format_name == "json" else text
    )


def _run_document(run: Run) -> dict[str, Any]:
    return {
        "id": run.id,
        "started_at": run.started_at,
        "suite": run.suite,
        "mode": run.mode,
        "agent": run.agent,
        "config_digest": run.config_digest,
        "git_commit": run.git_commit,
        "git_dirty": run.git_dirty,
        "duration_s": run.duration_s,
        "verdict": run.verdict,
        "repeats": run.repeats,
        "total": run.total,
        "passed": run.passed,
        "plugins": run.plugins,
        "live_settings": run.live_settings,
    }


def _runs_document(
    runs: list[Run], counts: dict[int, tuple[int, int]], suite: str | None
) -> dict[str, Any]:
    """The runs, each with its attempts' pass rate and Wilson interval; for one suite
    (``--suite``), the pass rate over all of them too."""
    from zeroclaw_eval.util.stats import wilson_interval

    rows = []
    for run in runs:
        passes, attempts = counts.get(run.id, (0, 0))
        row = _run_document(run)
        row.update(
            attempts=attempts,
            attempts_passed=passes,
            pass_rate=passes / attempts if attempts else None,
            wilson_95=list(wilson_interval(passes, attempts)),
        )
        rows.append(row)
    document: dict[str, Any] = {"schema_version": 1, "runs": rows}
    if suite is not None and rows:
        passes = sum(row["attempts_passed"] for row in rows)
        attempts = sum(row["attempts"] for row in rows)
        document.update(
            suite=suite,
            attempts=attempts,
            attempts_passed=passes,
            pass_rate=passes / attempts if attempts else None,
            wilson_95=list(wilson_interval(passes, attempts)),
        )
    return document


def _runs_text(runs: list[Run], document: dict[str, Any]) -> str:
    if not runs:
        return "no runs recorded"
    lines = [
        f"{'run':>5}  {'started (UTC)':<20}  {'commit':<11}  {'cases':>9}  "
        f"{'attempts':>19}  verdict  suite"
    ]
    for run, row in zip(runs, document["runs"], strict=True):
        repeats = f" x{run.repeats}" if run.repeats > 1 else ""
        low, high = row["wilson_95"]
        rate = f"{row['attempts_passed']}/{row['attempts']} [{low:.2f}, {high:.2f}]"
        lines.append(
            f"{run.id:>5}  {run.started_at:<20}  {_commit(run):<11}  "
            f"{f'{run.passed}/{run.total}':>9}  {rate:>19}  {run.verdict:<7}  "
            f"{shown(run.suite)} ({run.mode}{repeats})"
        )
    if "suite" in document:
        low, high = document["wilson_95"]
        lines.append(
            f"pass rate over {'this run' if len(runs) == 1 else f'these {len(runs)} runs'}: "
            f"{document['pass_rate']:.2f} "
            f"({document['attempts_passed']}/{document['attempts']} attempts), "
            f"95 % Wilson interval [{low:.2f}, {high:.2f}]"
        )
    return "\n".join(lines)


def _one_fixture(store: History, run_ids: list[int], case: str) -> list[Any]:
    """The attempts of the one fixture ``case`` names: a case name, else a fixture as
    reports show it. A name that fixtures of several suites share is refused, listing
    them: their outcomes pooled would describe no fixture (a passing copy and a
    failing one made a pass rate of 0.61)."""
    from zeroclaw_eval.errors import HistoryError

    attempts = store.attempts(run_ids, case) or store.attempts(run_ids, source=case)
    fixtures = sorted({attempt.source for attempt in attempts})
    if len(fixtures) > 1:
        listed = ", ".join(fixtures)
        raise HistoryError(
            f"{store.path}: case {case!r} is the name of {len(fixtures)} fixtures: {listed}; "
            "give one of them with --case FIXTURE"
        )
    return attempts


def _case_document(case: str, runs: list[Run], attempts: list[Any]) -> dict[str, Any]:
    from zeroclaw_eval.history.compare import tallies
    from zeroclaw_eval.util.stats import wilson_interval

    by_run: dict[int, list[Any]] = {}
    for attempt in attempts:
        by_run.setdefault(attempt.run_id, []).append(attempt)
    rows: list[dict[str, Any]] = []
    passes = total = 0
    for run in runs:  # newest first
        mine = by_run.get(run.id)
        if not mine:
            continue
        tally = tallies(mine)[case]
        passes, total = passes + tally.passes, total + tally.attempts
        failing = next((a for a in mine if not a.passed), None)
        rows.append(
            {
                "run": run.id,
                "started_at": run.started_at,
                "git_commit": run.git_commit,
                "git_dirty": run.git_dirty,
                "passes": tally.passes,
                "attempts": tally.attempts,
                "flaky": 0 < tally.passes < tally.attempts,
                "why": None if failing is None else _why(failing),
            }
        )
    low, high = wilson_interval(passes, total)
    return {
        "schema_version": 1,
        "case": case,
        "fixture": attempts[0].source,
        "runs": rows,
        "passes": passes,
        "attempts": total,
        "pass_rate": passes / total,
        "wilson_95": [low, high],
    }


def _why(attempt: Any) -> str:
    if attempt.error is not None:
        return str(attempt.error)
    return "; ".join(f"{check}: {detail}" for check, passed, detail in attempt.checks if not passed)


def _case_text(document: dict[str, Any]) -> str:
    from zeroclaw_eval.errors import one_line

    runs = document["runs"]
    last = "the last run" if len(runs) == 1 else f"the last {len(runs)} runs"
    case = f"{one_line(document['case'])} ({one_line(document['fixture'])})"
    lines = [f"case {case}: {last} with it"]
    for row in document["runs"]:
        commit = "-" if row["git_commit"] is None else row["git_commit"][:10]
        commit += "+" if row["git_dirty"] else ""
        mark = "✓" if row["passes"] == row["attempts"] else "✗"
        flaky = "  flaky" if row["flaky"] else ""
        why = f"  {one_line(row['why'])}" if row["why"] else ""
        lines.append(
            f"{mark} run {row['run']:>4}  {row['started_at']}  {commit:<11}  "
            f"{row['passes']}/{row['attempts']} passed{flaky}{why}"
        )
    low, high = document["wilson_95"]
    lines.append(
        f"pass rate {document['pass_rate']:.2f} ({document['passes']}/{document['attempts']}), "
        f"95 % Wilson interval [{low:.2f}, {high:.2f}]"
    )
    return "\n".join(lines)


def _write_page(store: History, suite: str | None, limit: int, path: Path) -> None:
    from zeroclaw_eval.errors import HistoryError
    from zeroclaw_eval.history.trend import trend_page

    if suite is None:
        latest = store.runs(limit=1)
        if not latest:
            raise HistoryError(f"{store.path}: no runs recorded: nothing to draw")
        suite = latest[0].suite
    runs = list(reversed(store.runs(suite, limit)))  # oldest first, as time runs
    page = trend_page(shown(suite), runs, store.attempts([run.id for run in runs]))
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise HistoryError(f"{path}: cannot write the page: {exc.strerror or exc}") from None
    click.echo(f"wrote {path} ({plural(len(runs), 'run')} of {shown(suite)})", err=True)


@click.command()
@click.argument("base", type=int, required=False)
@click.argument("head", type=int, required=False)
@suite_option
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level of Fisher's exact test.",
)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when a case's pass rate fell significantly.",
)
@history_option
@format_option
@config_option
def compare(
    base: int | None,
    head: int | None,
    suite: Path | None,
    alpha: float,
    fail_on_regression: bool,
    history_file: Path | None,
    format_name: str,
    config_path: Path | None,
) -> None:
    """Compare two runs case by case (default: the latest run and the one before it
    of the same suite): newly failing, newly passing, pass rate moved, new, removed.

    BASE and HEAD are run ids (see `zeroclaw eval history`). A change is
    significant when Fisher's exact test on the two pass rates gives p < --alpha;
    with one attempt per case no change can be, so gate on regressions with
    --repeat.
    """
    from zeroclaw_eval.errors import HistoryError
    from zeroclaw_eval.history.compare import compare as compare_runs
    from zeroclaw_eval.history.compare import comparison_document

    with errors_to_exit():
        store = _open(config_path, history_file)
        with store:
            suite_name = _suite_name(suite)
            head_run = store.run(head) if head is not None else None
            if head is not None and head_run is None:
                raise HistoryError(f"{store.path}: no run {head}")
            if head_run is None:
                latest = store.runs(suite_name, 1)
                if not latest:
                    raise HistoryError(f"{store.path}: no runs recorded: nothing to compare")
                head_run = latest[0]
            if base is not None:
                base_run = store.run(base)
                if base_run is None:
                    raise HistoryError(f"{store.path}: no run {base}")
            else:
                earlier = [r for r in store.runs(head_run.suite) if r.id < head_run.id]
                if not earlier:
                    raise HistoryError(
                        f"{store.path}: run {head_run.id} is the first of {shown(head_run.suite)}: "
                        "nothing to compare it with"
                    )
                base_run = earlier[0]
            comparison = compare_runs(
                base_run,
                head_run,
                store.attempts([base_run.id]),
                store.attempts([head_run.id]),
                alpha,
            )
    if format_name == "json":
        click.echo(json.dumps(comparison_document(comparison), indent=2, ensure_ascii=False))
    else:
        click.echo(_comparison_text(comparison))
    if fail_on_regression and comparison.regressions:
        sys.exit(1)


def _comparison_text(comparison: Any) -> str:
    from zeroclaw_eval.errors import one_line

    base, head = comparison.base, comparison.head
    lines = [
        f"base: run {base.id} of {shown(base.suite)} ({base.started_at}, {_commit(base)})",
        f"head: run {head.id} of {shown(head.suite)} ({head.started_at}, {_commit(head)})",
    ]
    if base.suite != head.suite:
        lines.append("note: the runs are of different suites")
    if not comparison.same_settings:
        lines.append(
            f"note: the runs used different settings (config digest {base.config_digest} "
            f"vs {head.config_digest})"
        )
    titles = {
        "newly_failing": "newly failing",
        "newly_passing": "newly passing",
        "rate_moved": "pass rate moved",
        "new": "new",
        "removed": "removed",
    }
    for kind, title in titles.items():
        changes = comparison.of_kind(kind)
        if not changes:
            continue
        lines.append(f"{title} ({len(changes)}):")
        for change in changes:
            if change.p_value is None:
                counts = str(change.head or change.base)
                lines.append(f"  {one_line(change.name)}: {counts} passed")
                continue
            verdict = "significant" if change.significant else "not significant"
            if change.regressed:
                verdict = "REGRESSION, " + verdict
            lines.append(
                f"  {one_line(change.name)}: {change.base} -> {change.head} passed "
                f"(Fisher p={change.p_value:.3g}, {verdict})"
            )
    unchanged = len(comparison.of_kind("unchanged"))
    lines.append(f"unchanged: {unchanged} case{'s' if unchanged != 1 else ''}")
    if comparison.base_spend is not None or comparison.head_spend is not None:
        # Beside the pass rates: what each run spent, as its provider reported it.
        lines.append(
            f"spent: base {comparison.base_spend or 'not measured'}; "
            f"head {comparison.head_spend or 'not measured'}"
        )
    regressions = comparison.regressions
    lines.append(
        f"{len(regressions)} significant regression{'s' if len(regressions) != 1 else ''} "
        f"(alpha={comparison.alpha:g})"
    )
    return "\n".join(lines)
