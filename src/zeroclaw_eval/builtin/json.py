"""The ``json`` formatter: the run's versioned JSON document, the only thing on stdout.

The document itself is the harness's (:mod:`zeroclaw_eval.report.document`), so
that ``zeroclaw eval merge`` reads back exactly what this formatter writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.formatter import Formatter
from zeroclaw_eval.report.model import SuiteReport


class JsonFormatter(Formatter):
    """For machines: counts, ``all_passed``, and every case with every check."""

    name = "json"
    description = "versioned JSON document"
    machine_readable = True

    def render(self, report: SuiteReport) -> str:
        from zeroclaw_eval.report.document import report_document

        return json.dumps(report_document(report), ensure_ascii=False, indent=2) + "\n"


@hookimpl
def zeroclaw_eval_register_formatters(register: Callable[[Formatter], None]) -> None:
    register(JsonFormatter())
