"""The ``json`` formatter: a versioned document, the only thing written to stdout."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report import Formatter, SuiteReport

#: Bumped whenever a field changes meaning or disappears; adding fields keeps it.
SCHEMA_VERSION = 1


def report_document(report: SuiteReport) -> dict[str, Any]:
    """The report as plain data: the document the ``json`` formatter prints."""
    return {
        "schema_version": SCHEMA_VERSION,
        "suite": report.suite,
        "mode": report.mode,
        "total": len(report.cases),
        "passed": report.passed_count,
        "failed": len(report.cases) - report.passed_count,
        "all_passed": report.all_passed,
        "gating": report.gating,
        "errors": list(report.errors),
        "interrupted": report.interrupted,
        "config_digest": report.config_digest,
        "shard": None
        if report.shard is None
        else {"index": report.shard[0], "count": report.shard[1]},
        "suite_total": len(report.cases) if report.suite_total is None else report.suite_total,
        "cases": [
            {
                "name": case.name,
                "source": case.source,
                "passed": case.passed,
                "error": case.error,
                "duration_s": round(case.duration_s, 6),
                "models": list(case.models),
                "retries": [
                    {"reason": r.reason, "attempt": r.attempt, "waited_s": r.waited_s}
                    for r in case.retries
                ],
                "checks": [
                    {"check": check.check, "passed": check.passed, "detail": check.detail}
                    for check in case.checks
                ],
            }
            for case in report.cases
        ],
    }


class JsonFormatter(Formatter):
    """For machines: counts, ``all_passed``, and every case with every check."""

    name = "json"
    description = "versioned JSON document"
    machine_readable = True

    def render(self, report: SuiteReport) -> str:
        return json.dumps(report_document(report), ensure_ascii=False, indent=2) + "\n"


@hookimpl
def zeroclaw_eval_register_formatters(register: Callable[[Formatter], None]) -> None:
    register(JsonFormatter())
