"""The ``text`` formatter: one line per case, the failing checks under it, a total."""

from __future__ import annotations

from collections.abc import Callable

from zeroclaw_eval.agents.base import DEFAULT_AGENT
from zeroclaw_eval.errors import one_line
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.formatter import Formatter
from zeroclaw_eval.report.model import CaseReport, SuiteReport


class TextFormatter(Formatter):
    """For people: ``✓``/``✗``, name, source, passed/total checks; failures in detail."""

    name = "text"
    description = "human-readable summary (default)"

    def __init__(self, verbosity: int = 0) -> None:
        self.verbosity = verbosity
        """-1 (``-q``): passing cases are left out; 1 (``-v``): every check is listed."""

    def with_verbosity(self, verbosity: int) -> TextFormatter:
        return self if verbosity == self.verbosity else TextFormatter(verbosity)

    def render(self, report: SuiteReport) -> str:
        # Names, sources and messages come from fixtures and plugins: escaped to one
        # line each, so that none can forge a line of the report (a fake "✓").
        lines = [f"error: {one_line(error)}" for error in report.errors]
        if report.agent and report.agent != DEFAULT_AGENT:  # the reference loop goes unsaid
            lines.insert(0, f"agent: {one_line(report.agent)}")
        for case in report.cases:
            if self.verbosity < 0 and case.passed:
                continue
            mark = "✓" if case.passed else "✗"
            title = f"{mark} {one_line(case.name)} ({one_line(case.source)})"
            if case.attempts:
                lines.extend(_repeated(title, case, report.ks))
                continue
            if case.error is not None:
                lines.append(f"{title}: error: {one_line(case.error)}")
                lines.extend(_notes(case))
                continue
            passed = sum(1 for check in case.checks if check.passed)
            lines.append(f"{title}: {passed}/{len(case.checks)} checks")
            shown = case.checks if self.verbosity > 0 else case.failed_checks
            for check in shown:
                lines.extend(
                    block(
                        f"    {'✓' if check.passed else '✗'} {one_line(check.check)}: ",
                        check.detail,
                    )
                )
            lines.extend(_notes(case))
        lines.append(f"{report.passed_count}/{len(report.cases)} cases passed{_scope(report)}")
        if report.repeats > 1:
            flaky = [one_line(case.name) for case in report.cases if case.flaky]
            lines.append(
                f"each case ran {report.repeats} times; a case passes only if every attempt"
                f" passed; flaky: {', '.join(flaky) if flaky else 'none'}"
            )
        if not report.gating:
            lines.append("not gating: failures are reported but do not change the exit code")
            if report.run_errors:
                lines.append(
                    f"but {report.run_errors} of {len(report.cases)} cases hit a run error "
                    "and measured nothing: exit 1"
                )
        return "\n".join(lines) + "\n"


def _repeated(title: str, case: CaseReport, ks: tuple[int, ...]) -> list[str]:
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
            lines.extend(block(f"    attempt {number}: ✗ {one_line(check.check)}: ", check.detail))
    lines.extend(_notes(case))  # the models and retries of every attempt
    return lines


def _scope(report: SuiteReport) -> str:
    """What part of the suite ran, when it was not all of it."""
    total = report.suite_total
    if report.shard is not None:
        index, count = report.shard
        selected = report.selected_total
        if selected is not None and total is not None and selected != total:
            return f" (shard {index}/{count} of {selected} selected of a {total}-case suite)"
        return f" (shard {index}/{count} of a {total}-case suite)"
    if total is not None and total != len(report.cases):
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
    what it warned of."""
    lines = []
    for warning in case.warnings:
        lines.extend(block("    warning: ", warning))
    if case.models:
        lines.append(f"    model: {one_line(', '.join(case.models))}")
    if case.retries:
        listed = "; ".join(str(retry) for retry in case.retries)
        lines.append(f"    retried {len(case.retries)}x: {one_line(listed)}")
    return lines


@hookimpl
def zeroclaw_eval_register_formatters(register: Callable[[Formatter], None]) -> None:
    register(TextFormatter())
