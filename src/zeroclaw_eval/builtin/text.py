"""The ``text`` formatter: one line per case, the failing checks under it, a total."""

from __future__ import annotations

from collections.abc import Callable

from zeroclaw_eval.agents.base import DEFAULT_AGENT
from zeroclaw_eval.errors import one_line
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.formatter import Formatter
from zeroclaw_eval.report.model import CaseReport, SuiteReport, plural


class TextFormatter(Formatter):
    """For people: ``✓``/``✗``, name, source, passed/total checks; failures in detail;
    then, when cases failed, a short summary of each with its first failing check."""

    name = "text"
    description = "human-readable summary (default)"

    def __init__(self, verbosity: int = 0, colour: bool = False) -> None:
        self.verbosity = verbosity
        """-1 (``-q``): passing cases are left out; 1 (``-v``): every check is listed."""
        self.colour = colour
        """Whether marks and the total are coloured (ANSI): for a terminal only."""

    def with_verbosity(self, verbosity: int) -> TextFormatter:
        return self if verbosity == self.verbosity else TextFormatter(verbosity, self.colour)

    def with_colour(self, colour: bool) -> TextFormatter:
        return self if colour == self.colour else TextFormatter(self.verbosity, colour)

    def render(self, report: SuiteReport) -> str:
        # Names, sources and messages come from fixtures and plugins: escaped to one
        # line each, so that none can forge a line of the report (a fake "✓").
        paint = _paint if self.colour else _plain
        lines = [f"error: {one_line(error)}" for error in report.errors]
        if report.agent and report.agent != DEFAULT_AGENT:  # the reference loop goes unsaid
            lines.insert(0, f"agent: {one_line(report.agent)}")
        for case in report.cases:
            if self.verbosity < 0 and case.passed:
                continue
            mark = _mark(case.passed, case.undecided, paint)
            title = f"{mark} {one_line(case.name)} ({one_line(case.source)})"
            if case.attempts:
                lines.extend(_repeated(title, case, report.ks, paint))
                continue
            if case.error is not None:
                lines.append(f"{title}: error: {one_line(case.error)}")
                lines.extend(_notes(case))
                continue
            passed = sum(1 for check in case.checks if check.passed)
            lines.append(f"{title}: {passed}/{len(case.checks)} checks")
            shown = case.checks if self.verbosity > 0 else case.failed_checks
            for check in shown:
                mark = _mark(check.passed, check.undecided, paint)
                lines.extend(block(f"    {mark} {one_line(check.check)}: ", check.detail))
            lines.extend(_notes(case))
        lines.extend(short_summary(report, paint))
        total = f"{report.passed_count}/{len(report.cases)} cases passed"
        if report.undecided_count:
            total += f", {report.undecided_count} undecided (n/a: a figure was missing)"
        total = paint(BOLD_GREEN if report.all_passed else BOLD_RED, total)
        lines.append(f"{total}{_scope(report)}")
        if report.repeats > 1:
            flaky = [one_line(case.name) for case in report.cases if case.flaky]
            lines.append(
                f"each case ran {report.repeats} times; a case passes only if every attempt"
                f" passed; flaky: {', '.join(flaky) if flaky else 'none'}"
            )
        if report.errors and report.cases and report.passed_count == len(report.cases):
            # Every case passed, yet the run is red: the last line says why.
            count = "an error" if len(report.errors) == 1 else f"{len(report.errors)} errors"
            lines.append(
                paint(BOLD_RED, "red")
                + f": {count} outside the cases, first: {one_line(report.errors[0])}"
            )
        if not report.gating:
            lines.append("not gating: failures are reported but do not change the exit code")
            if report.run_errors:
                lines.append(
                    f"but {report.run_errors} of {plural(len(report.cases), 'case')} hit a run "
                    "error and measured nothing: exit 1"
                )
        return "\n".join(lines) + "\n"


GREEN, RED, BOLD_GREEN, BOLD_RED, YELLOW = "32", "31", "1;32", "1;31", "33"

#: How much of a failing check's detail, or of an error, the short summary quotes.
SUMMARY_CHARS = 200


def _paint(code: str, text: str) -> str:
    return f"\033[{code}m{text}\033[0m"


def _plain(code: str, text: str) -> str:
    return text


def short_summary(report: SuiteReport, paint: Callable[[str, str], str] = _plain) -> list[str]:
    """The failed cases again, one line each with the first thing that failed, as
    pytest's short summary: in a run of hundreds of cases they are not lost in the
    scroll. Nothing when no case failed, or when the report holds only one case
    (its own line says it all). Cases listed but never run are counted, not listed.
    """
    failed = [case for case in report.cases if not case.passed]
    if not failed or len(report.cases) < 2:
        return []
    ran = [case for case in failed if case.ran]
    not_run = len(failed) - len(ran)
    heading = f"short summary: {plural(len(ran), 'failed case')}"
    if not_run:
        heading += f", {not_run} not run"
    lines = [paint(YELLOW, heading)]
    for case in ran:
        title = f"{one_line(case.name)} ({one_line(case.source)})"
        lines.append(f"{paint(RED, _kind(case))} {title}: {_first_failure(case)}")
    return lines


def _mark(passed: bool, undecided: bool, paint: Callable[[str, str], str]) -> str:
    """``✓``, ``✗``, or ``?`` for what the evidence could not decide (it did not pass)."""
    if passed:
        return paint(GREEN, "✓")
    return paint(YELLOW, "?") if undecided else paint(RED, "✗")


def _kind(case: CaseReport) -> str:
    """``ERROR`` for a run error (the case measured nothing), ``UNDECIDED`` for a case
    that lacked a figure to decide a check, else ``FAILED``."""
    if case.error is not None:
        return "ERROR"
    return "UNDECIDED" if case.undecided else "FAILED"


def _first_failure(case: CaseReport) -> str:
    """The first run error or failing check of ``case`` (of its first failing attempt)."""
    prefix = ""
    if case.attempts:
        failing = case.runs - case.passes
        prefix = f"{failing}/{case.runs} attempts failed; "
    if case.error is not None:
        error = case.error
        own = f"case {case.name!r}: "
        what = error[len(own) :] if error.startswith(own) else error
    else:
        first = case.failed_checks[0] if case.failed_checks else None
        what = "no checks" if first is None else f"{first.check}: {first.detail}"
    what = one_line(what)
    if len(what) > SUMMARY_CHARS:
        what = what[: SUMMARY_CHARS - 3] + "..."
    return prefix + what


def _repeated(
    title: str, case: CaseReport, ks: tuple[int, ...], paint: Callable[[str, str], str]
) -> list[str]:
    """A repeated case: passes out of attempts, flaky or not, its pass@k and pass^k,
    then why each failed attempt failed."""
    from zeroclaw_eval.util.stats import pass_at_k, pass_hat_k  # for repeated runs only

    summary = f"{title}: {case.passes}/{case.runs} attempts passed"
    if case.flaky:
        summary += ", flaky"
    figures = []
    for k in ks:
        if k > case.runs:
            continue
        figure = f"pass@{k} {pass_at_k(case.passes, case.runs, k):.2f}"
        if k > 1:  # pass^1 is pass@1
            figure += f", pass^{k} {pass_hat_k(case.passes, case.runs, k):.2f}"
        figures.append(figure)
    if figures:
        summary += "; " + "; ".join(figures)
    lines = [summary]
    for number, attempt in enumerate(case.attempts, 1):
        if attempt.error is not None:
            lines.append(f"    attempt {number}: error: {one_line(attempt.error)}")
        for check in attempt.failed_checks:
            lines.extend(
                block(
                    f"    attempt {number}: {_mark(False, check.undecided, paint)} "
                    f"{one_line(check.check)}: ",
                    check.detail,
                )
            )
    lines.extend(_notes(case))  # the models and retries of every attempt
    return lines


def _scope(report: SuiteReport) -> str:
    """What part of the suite ran, when it was not all of it."""
    total = report.suite_total
    if report.shard is not None:
        index, count = report.shard
        selected = report.selected_total
        suite = f"a suite of {plural(total, 'case')}" if total is not None else "the suite"
        if selected is not None and total is not None and selected != total:
            return f" (shard {index}/{count} of {selected} selected of {suite})"
        return f" (shard {index}/{count} of {suite})"
    # Cases a run error kept from running (a shard refused, an interrupt) were not
    # deselected: the error says what happened to them.
    if total is not None and total > len(report.cases) and not report.errors:
        return f" ({total - len(report.cases)} of {total} deselected)"
    return ""


def block(first: str, text: str) -> list[str]:
    """``text`` (a detail, a warning: a diff has many lines) under the line opening with
    ``first``: each further line indented behind a bar, escaped to one line, so that
    no line of it can pass for a line of the report."""
    head, *rest = text.split("\n")
    return [first + one_line(head), *(f"        | {one_line(line)}" for line in rest)]


def _notes(case: CaseReport) -> list[str]:
    """What the model side said about a case: which model answered, what was retried,
    what it warned of, what a replay of a recorded fixture reproduced."""
    lines = []
    for warning in case.warnings:
        lines.extend(block("    warning: ", warning))
    if case.models:
        lines.append(f"    model: {one_line(', '.join(case.models))}")
    if case.retries:
        listed = "; ".join(str(retry) for retry in case.retries)
        lines.append(f"    retried {len(case.retries)}x: {one_line(listed)}")
    if case.capture:
        lines.append(f"    capture: {one_line(case.capture)}")
    return lines


@hookimpl
def zeroclaw_eval_register_formatters(register: Callable[[Formatter], None]) -> None:
    register(TextFormatter())
