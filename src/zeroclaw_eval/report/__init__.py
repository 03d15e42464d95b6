"""Reports: the result models, the formatter kind, the JSON document, report files.

The models and the formatter kind are re-exported here, where they always were
(``from zeroclaw_eval.report import CaseReport, shorten``).
"""

from zeroclaw_eval.report.formatter import Formatter, render
from zeroclaw_eval.report.model import CaseReport, CheckResult, Retry, SuiteReport, plural, shorten

__all__ = [
    "CaseReport",
    "CheckResult",
    "Formatter",
    "Retry",
    "SuiteReport",
    "plural",
    "render",
    "shorten",
]
