"""The ``text`` formatter: one line per case, the failing checks under it, a total."""

from __future__ import annotations

from collections.abc import Callable

from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report import Formatter, SuiteReport


class TextFormatter(Formatter):
    """For people: ``✓``/``✗``, name, source, passed/total checks; failures in detail."""

    name = "text"
    description = "human-readable summary (default)"

    def render(self, report: SuiteReport) -> str:
        lines = [f"error: {error}" for error in report.errors]
        for case in report.cases:
            mark = "✓" if case.passed else "✗"
            if case.error is not None:
                lines.append(f"{mark} {case.name} ({case.source}): error: {case.error}")
                continue
            passed = sum(1 for check in case.checks if check.passed)
            lines.append(f"{mark} {case.name} ({case.source}): {passed}/{len(case.checks)} checks")
            lines.extend(f"    ✗ {check.check}: {check.detail}" for check in case.failed_checks)
        lines.append(f"{report.passed_count}/{len(report.cases)} cases passed")
        if not report.gating:
            lines.append("not gating: failures are reported but do not change the exit code")
        return "\n".join(lines) + "\n"


@hookimpl
def zeroclaw_eval_register_formatters(register: Callable[[Formatter], None]) -> None:
    register(TextFormatter())
