"""The JSON document of a run: what the ``json`` formatter prints and ``merge`` reads back.

One document for the report of a run, versioned (:data:`SCHEMA_VERSION`) and
described field by field in docs/REPORT.md. :func:`report_document` writes it;
:mod:`zeroclaw_eval.report.reader` reads it back into a
:class:`~zeroclaw_eval.report.model.SuiteReport`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport
from zeroclaw_eval.util.stats import pass_at_k, pass_hat_k

#: Bumped whenever a field changes meaning or disappears; adding fields keeps it.
#: Version 1 gained repeats (``repeats``, ``pass_k``, ``flaky``, and per case
#: ``runs``, ``passes``, ``flaky``, ``pass_at_k``, ``pass_hat_k``, ``attempts``):
#: added fields, so still 1. docs/REPORT.md describes every field.
SCHEMA_VERSION = 1

#: The most model requests a report carries for one attempt: the first ones (the
#: rest are counted in ``requests_omitted``). A report is read by people and CI;
#: the recording keeps every request.
MAX_REPORTED_REQUESTS = 32

#: The longest text a reported request keeps; a longer one is cut, ending ``…``.
MAX_REPORTED_TEXT = 2000


def report_document(report: SuiteReport) -> dict[str, Any]:
    """The report as plain data: the document the ``json`` formatter prints."""
    return {
        "schema_version": SCHEMA_VERSION,
        "suite": report.suite,
        "mode": report.mode,
        "total": len(report.cases),
        "passed": report.passed_count,
        "failed": len(report.cases) - report.passed_count,
        "undecided": report.undecided_count,
        "all_passed": report.all_passed,
        "gating": report.gating,
        "errors": list(report.errors),
        "interrupted": report.interrupted,
        "config_digest": report.config_digest,
        "agent": report.agent,
        "shard": None
        if report.shard is None
        else {"index": report.shard[0], "count": report.shard[1]},
        "suite_total": len(report.cases) if report.suite_total is None else report.suite_total,
        "selected_total": _selected_total(report),
        "keyword": report.keyword,
        "live_settings": None if report.live_settings is None else dict(report.live_settings),
        "repeats": report.repeats,
        "pass_k": list(report.ks),
        "flaky": sum(1 for case in report.cases if case.flaky),
        "cases": [_case(case, report.ks) for case in report.cases],
    }


def _selected_total(report: SuiteReport) -> int:
    """The cases chosen before sharding: what the shards of one run add up to."""
    if report.selected_total is not None:
        return report.selected_total
    if report.shard is None or report.suite_total is None:
        return len(report.cases)
    return report.suite_total


def _attempt(case: CaseReport) -> dict[str, Any]:
    return {
        "passed": case.passed,
        "ran": case.ran,
        "error": case.error,
        "duration_s": round(case.duration_s, 6),
        "input_tokens": case.input_tokens,
        "output_tokens": case.output_tokens,
        "cached_input_tokens": case.cached_input_tokens,
        "reasoning_tokens": case.reasoning_tokens,
        "cost": case.cost,
        "usage": [dict(entry) for entry in case.usage],
        "models": list(case.models),
        "retries": [
            {"reason": r.reason, "attempt": r.attempt, "waited_s": r.waited_s} for r in case.retries
        ],
        "checks": [_check(check) for check in case.checks],
        "warnings": list(case.warnings),
        "capture": case.capture,
        "model_requests": [_bounded(request) for request in case.requests[:MAX_REPORTED_REQUESTS]],
        "requests_omitted": max(0, len(case.requests) - MAX_REPORTED_REQUESTS),
    }


def _check(check: CheckResult) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "check": check.check,
        "passed": check.passed,
        "undecided": check.undecided,
        "detail": check.detail,
    }
    if check.score is not None:
        doc["score"] = check.score
    return doc


def _bounded(value: Any) -> Any:
    """``value`` with every text longer than :data:`MAX_REPORTED_TEXT` cut."""
    if isinstance(value, str):
        return value if len(value) <= MAX_REPORTED_TEXT else value[: MAX_REPORTED_TEXT - 1] + "…"
    if isinstance(value, Mapping):
        return {key: _bounded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_bounded(item) for item in value]
    return value


def _case(case: CaseReport, ks: tuple[int, ...]) -> dict[str, Any]:
    """A case: its verdict and, for a repeated one, every attempt and its figures.

    ``error``/``checks`` of a repeated case are its first failed attempt's
    (see :meth:`CaseReport.of_attempts`); ``attempts`` lists them all.
    """
    attempts = case.attempts or (case,)
    shown = _attempt(case)
    document: dict[str, Any] = {
        "name": case.name,
        "source": case.source,
        "passed": case.passed,
        "ran": case.ran,
        "error": case.error,
        "duration_s": round(case.duration_s, 6),
        "models": list(case.models),
        "retries": shown["retries"],
        "checks": shown["checks"],
        "warnings": shown["warnings"],
        "capture": shown["capture"],
        "model_requests": shown["model_requests"],
        "requests_omitted": shown["requests_omitted"],
        "runs": case.runs,
        "passes": case.passes,
        "flaky": case.flaky,
        "pass_at_k": {str(k): pass_at_k(case.passes, case.runs, k) for k in ks if k <= case.runs},
        "pass_hat_k": {str(k): pass_hat_k(case.passes, case.runs, k) for k in ks if k <= case.runs},
        "attempts": [_attempt(attempt) for attempt in attempts],
    }
    return document
