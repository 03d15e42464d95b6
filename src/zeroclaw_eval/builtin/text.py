"""The ``text`` formatter: one line per case, the failing checks under it, a total."""

from __future__ import annotations

from collections.abc import Callable

from zeroclaw_eval.errors import one_line
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report import Formatter, SuiteReport


class TextFormatter(Formatter):
    """For people: ``✓``/``✗``, name, source, passed/total checks; failures in detail."""

    name = "text"
    description = "human-readable summary (default)"

    def render(self, report: SuiteReport) -> str:
        # Names, sources and messages come from fixtures and plugins: escaped to one
        # line each, so that none can forge a line of the report (a fake "✓").
        lines = [f"error: {one_line(error)}" for error in report.errors]
        for case in report.cases:
            mark = "✓" if case.passed else "✗"
            title = f"{mark} {one_line(case.name)} ({one_line(case.source)})"
            if case.error is not None:
                lines.append(f"{title}: error: {one_line(case.error)}")
            else:
                passed = sum(1 for check in case.checks if check.passed)
                lines.append(f"{title}: {passed}/{len(case.checks)} checks")
                lines.extend(
                    f"    ✗ {one_line(check.check)}: {one_line(check.detail)}"
                    for check in case.failed_checks
                )
            if case.models:
                lines.append(f"    model: {one_line(', '.join(case.models))}")
            if case.retries:
                listed = "; ".join(str(retry) for retry in case.retries)
                lines.append(f"    retried {len(case.retries)}x: {one_line(listed)}")
        lines.append(f"{report.passed_count}/{len(report.cases)} cases passed")
        if not report.gating:
            lines.append("not gating: failures are reported but do not change the exit code")
            if report.run_errors:
                lines.append(
                    f"but {report.run_errors} of {len(report.cases)} cases hit a run error "
                    "and measured nothing: exit 1"
                )
        return "\n".join(lines) + "\n"


@hookimpl
def zeroclaw_eval_register_formatters(register: Callable[[Formatter], None]) -> None:
    register(TextFormatter())
