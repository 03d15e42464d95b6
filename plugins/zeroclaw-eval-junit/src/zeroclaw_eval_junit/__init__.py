"""The ``junit`` formatter: the suite report as JUnit XML, the format CI tools read.

One ``<testsuite>`` (inside ``<testsuites>``, as pytest writes it) with the
counts, one ``<testcase>`` per case. A case run several times (``--repeat``)
is still one ``<testcase>``: its ``<properties>`` give the attempts, the passes
and whether it is flaky, its ``<system-out>`` every attempt's outcome, and it
fails (``type="flaky"`` when its attempts disagree) unless every attempt passed.
A failed case carries ``<failure>`` whose
``message`` is its first failing check and whose body lists every failing check
with its detail (``type="undecided"`` when every failing check lacked a figure to
be decided: ``n/a``, never a pass); a run error is an ``<error>``. What the run warned of without
failing the case (a drift under ``drift = "warn"``, with its diff) is the
case's ``<system-err>``. A suite that failed to load is
one ``<testcase>`` with an ``<error>`` listing every problem, so the document is
never green when the run was not.

Details quote whatever a run produced, so the document is written by hand rather
than trusted to a serializer: every character XML 1.0 forbids is replaced by a
visible escape (``\\x1b``) and newlines in attributes are written as ``&#10;``,
so the document always parses and multi-line messages survive.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from zeroclaw_eval import CaseReport, Formatter, SuiteReport, hookimpl

__all__ = ["JunitFormatter", "JunitSettings", "classname", "xml_attr", "xml_safe", "xml_text"]


@cache
def _not_xml() -> re.Pattern[str]:
    """Everything outside the XML 1.0 Char production (lone surrogates included).

    Compiled on first use: a class spanning most of Unicode takes milliseconds to
    compile, which every run would otherwise pay only to register the formatter.
    """
    return re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 forbids replaced by ``\\xNN``/``\\uNNNN``."""
    return _not_xml().sub(_visible, text)


def xml_text(text: str) -> str:
    """``text`` escaped for element content (a ``\\r`` kept as ``&#13;``, which a
    parser would otherwise turn into a newline).
    """
    text = xml_safe(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\r", "&#13;")


def xml_attr(text: str) -> str:
    """``text`` escaped for a double-quoted attribute; ``\\n``, ``\\r`` and ``\\t`` are
    written as character references because a parser normalizes them to spaces.
    """
    text = xml_text(text).replace('"', "&quot;")
    return text.replace("\n", "&#10;").replace("\t", "&#9;")


def _attrs(**values: str) -> str:
    return " ".join(f'{name}="{xml_attr(value)}"' for name, value in values.items())


def _seconds(value: float) -> str:
    return f"{value:.6f}"


def classname(source: str) -> str:
    """The fixture's directory, dotted: ``evals/regression/x.json`` -> ``evals.regression``.

    CI viewers split a classname at its last dot into package and class, so the file
    name there would show every case in a class called ``json``. Dots inside a
    directory name become ``_`` for the same reason; the file is in ``file``.
    """
    parent = PurePosixPath(source.replace("\\", "/")).parent
    parts = [part.replace(".", "_") for part in parent.parts if part not in ("/", ".", "..")]
    return ".".join(parts) or "zeroclaw-eval"


def _attempts(case: CaseReport) -> list[str]:
    """A repeated case's properties (attempts, passes, flaky) and one line per attempt."""
    properties = [
        "      <properties>",
        f"        <property {_attrs(name='attempts', value=str(case.runs))} />",
        f"        <property {_attrs(name='passes', value=str(case.passes))} />",
        f"        <property {_attrs(name='flaky', value=str(case.flaky).lower())} />",
        "      </properties>",
    ]
    outcomes = []
    for number, attempt in enumerate(case.attempts, 1):
        if attempt.passed:
            outcomes.append(f"attempt {number}: passed")
        elif attempt.error is not None:
            outcomes.append(f"attempt {number}: error: {attempt.error}")
        else:
            failing = "; ".join(f"{c.check}: {c.detail}" for c in attempt.failed_checks)
            outcomes.append(f"attempt {number}: failed: {failing}")
    return [*properties, f"      <system-out>{xml_text(chr(10).join(outcomes))}</system-out>"]


def _repeated_failure(case: CaseReport) -> str:
    """A repeated case fails as a whole: how often it passed, whether it is flaky,
    and why its first failed attempt failed."""
    verdict = f"{case.passes}/{case.runs} attempts passed" + (", flaky" if case.flaky else "")
    number, failing = next((n, a) for n, a in enumerate(case.attempts, 1) if not a.passed)
    if failing.error is not None:
        why = f"attempt {number}: {failing.error}"
    else:
        why = "; ".join(f"attempt {number}: {c.check}: {c.detail}" for c in failing.failed_checks)
    kind = "flaky" if case.flaky else "undecided" if case.undecided else "check"
    return (
        f"      <failure {_attrs(message=f'{verdict}: {why}', type=kind)}>"
        f"{xml_text(verdict + chr(10) + why)}</failure>"
    )


def _testcase(case: CaseReport) -> list[str]:
    attrs = _attrs(
        name=case.name,
        classname=classname(case.source),
        file=case.source,
        time=_seconds(case.duration_s),
    )
    head = f"    <testcase {attrs}"
    if case.passed and not case.attempts and not case.warnings:
        return [head + " />"]
    lines = [head + ">"]
    if case.attempts:
        lines.extend(_attempts(case))
        if not case.passed:
            lines.append(_repeated_failure(case))
        return [*lines, *_warnings(case), "    </testcase>"]
    if case.passed:
        return [*lines, *_warnings(case), "    </testcase>"]
    if case.error is not None:
        lines.append(
            f"      <error {_attrs(message=case.error, type='run error')}>"
            f"{xml_text(case.error)}</error>"
        )
    else:
        failing = case.failed_checks
        if failing:
            message = f"{failing[0].check}: {failing[0].detail}"
            body = "\n".join(f"{check.check}: {check.detail}" for check in failing)
        else:  # admission refuses such a case; a hand-built report must still fail
            message = body = "the case produced no checks"
        # Undecided is not a pass (it fails the build), but it is not the agent's failure
        # either: its own type lets a CI view tell the two apart.
        kind = "undecided" if case.undecided else "check"
        lines.append(
            f"      <failure {_attrs(message=message, type=kind)}>{xml_text(body)}</failure>"
        )
    lines.extend(_warnings(case))
    lines.append("    </testcase>")
    return lines


def _warnings(case: CaseReport) -> list[str]:
    """What the run warned of without failing the case (a drift under
    ``drift = "warn"``, with its diff), as the case's ``<system-err>``."""
    if not case.warnings:
        return []
    return [f"      <system-err>{xml_text(chr(10).join(case.warnings))}</system-err>"]


class JunitSettings(BaseModel):
    """The plugin's table, ``[eval.plugins.junit]``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite_name: str | None = Field(None, min_length=1)
    """The ``name`` of the ``<testsuite>`` the report holds (default: the suite's
    directory, as the run names it), for CI views that group reports by it."""


class JunitFormatter(Formatter):
    """JUnit XML for CI test-report views; the document is the only thing on stdout."""

    name = "junit"
    description = "JUnit XML (one testsuite, one testcase per case)"
    machine_readable = True

    def __init__(self) -> None:
        self.settings = JunitSettings()

    def configure(self, settings: BaseModel) -> None:
        """Take the run's ``[eval.plugins.junit]`` table, validated."""
        assert isinstance(settings, JunitSettings)
        self.settings = settings

    def render(self, report: SuiteReport) -> str:
        cases = list(report.cases)
        # A repeated case that failed is one <failure>, whatever its attempts hit.
        errors = sum(1 for case in cases if case.error is not None and not case.attempts)
        failures = sum(1 for case in cases if not case.passed) - errors
        tests = len(cases)
        body: list[str] = []
        if report.errors:
            # The suite never ran: one erroring testcase keeps the document red.
            tests, errors = tests + 1, errors + 1
            name = xml_attr(report.suite)
            body.append(f'    <testcase name="suite load" classname="{name}" time="0.000000">')
            body.append(
                f"      <error {_attrs(message=report.errors[0], type='load error')}>"
                f"{xml_text(chr(10).join(report.errors))}</error>"
            )
            body.append("    </testcase>")
        for case in cases:
            body.extend(_testcase(case))
        total = sum(case.duration_s for case in cases)
        counts = _attrs(
            tests=str(tests),
            failures=str(failures),
            errors=str(errors),
            skipped="0",
            time=_seconds(total),
        )
        lines = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            f'<testsuites name="zeroclaw-eval" {counts}>',
            f"  <testsuite {_attrs(name=self._suite_name(report))} {counts}>",
            "    <properties>",
            f"      <property {_attrs(name='mode', value=report.mode)} />",
            f"      <property {_attrs(name='repeats', value=str(report.repeats))} />",
            "    </properties>",
            *body,
            "  </testsuite>",
            "</testsuites>",
        ]
        return "\n".join(lines) + "\n"

    def _suite_name(self, report: SuiteReport) -> str:
        return self.settings.suite_name or report.suite or "zeroclaw-eval"


#: The plugin's one formatter: its settings are handed to it when a run opens.
FORMATTER = JunitFormatter()


@hookimpl
def zeroclaw_eval_register_formatters(register: Callable[[Formatter], None]) -> None:
    register(FORMATTER)


@hookimpl
def zeroclaw_eval_register_settings(
    register: Callable[[type[BaseModel], Callable[[BaseModel], None]], None],
) -> None:
    register(JunitSettings, FORMATTER.configure)
