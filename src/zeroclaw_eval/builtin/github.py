"""The ``github`` formatter: GitHub Actions annotations, and a step summary.

stdout gets one ``::error file=...,line=...,title=...::message`` workflow command
per failed check, run error and refused fixture (and a ``::warning`` per warning
of a case, a drift under ``drift = "warn"``), which GitHub shows on the pull
request beside the fixture; then the plain count. File paths are made relative to
the work tree (``GITHUB_WORKSPACE``, else the git work tree holding the fixture,
else the working directory), as annotations require. When ``GITHUB_STEP_SUMMARY`` names a
file, a Markdown table of the suite is appended to it, the page GitHub shows for
the job.

Everything quoted comes from fixtures and plugins, so it is escaped by the
workflow-command rules (``%``, ``\\r``, ``\\n``; in properties also ``:`` and
``,``): no message can end its command early or forge a second one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path

from zeroclaw_eval.agents.base import DEFAULT_AGENT
from zeroclaw_eval.errors import one_line
from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.report.formatter import Formatter
from zeroclaw_eval.report.model import CaseReport, SuiteReport

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
"""The file GitHub renders as the job's summary page; appended to, never truncated."""

WORKSPACE_ENV = "GITHUB_WORKSPACE"
"""The checkout GitHub resolves annotation paths against."""

#: Rows of the summary table at most: failing cases first, then passing ones.
MAX_SUMMARY_ROWS = 1000

# A refusal line names its fixture first: "<file>.json: <field>: <message>".
_REFUSAL = re.compile(r"(?P<file>.+?\.json): (?P<message>.*)", re.DOTALL)

# The field of a refusal, as admission writes it: "turns[0].steps[1].response" or
# "expects.max_tool_calls=-1" (a value may follow "="), then ": ".
_FIELD = re.compile(r"(?P<field>(?:[^\s=:\[.]+|\[[^\]]*\]|\.)+?)(?:=[^:]*)?: ")
_KEY = re.compile(r'\["((?:[^"\\]|\\.)*)"\]|\[\d+\]|([^.\[]+)')


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's toolkit does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``file``, ``title``...), escaped."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """One workflow command line: ``::name key=value,...::message``."""
    given = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None and value != ""
    )
    return f"::{name}{' ' + given if given else ''}::{escape_data(message)}"


def work_tree(path: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The directory annotation paths are relative to: ``GITHUB_WORKSPACE``, else the
    git work tree holding ``path``, else the working directory."""
    env = os.environ if environ is None else environ
    workspace = env.get(WORKSPACE_ENV)
    if workspace:
        return Path(workspace).resolve()
    return _git_work_tree(path.parent) or Path.cwd().resolve()


@lru_cache(maxsize=64)
def _git_work_tree(directory: Path) -> Path | None:
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():  # a directory, or a file in a linked work tree
            return candidate
    return None


def relative(source: str) -> str:
    """``source`` as GitHub wants it: relative to the work tree, ``/``-separated.

    The harness already names fixtures relative to the work tree when they are in
    it (:mod:`zeroclaw_eval.util.paths`); an absolute path is made relative here when it
    lies in the work tree, and kept (GitHub cannot place it) when it does not.
    """
    path = Path(source)
    if not path.is_absolute():
        return path.as_posix()
    root = work_tree(path)
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return source


def _fixture_file(source: str) -> Path:
    """The file a report's ``source`` names: relative ones are relative to the work tree."""
    path = Path(source)
    if path.is_absolute():
        return path
    roots = [os.environ.get(WORKSPACE_ENV), _git_work_tree(Path.cwd().resolve()), Path.cwd()]
    for root in roots:
        if root and (Path(root) / path).is_file():
            return Path(root) / path
    return path


def field_line(source: str, message: str) -> int | None:
    """The 1-based line of the key a refusal names (``turns[0].steps[1].response:
    ...``) in the fixture: each key of the path looked for after the line of the
    one before, so that the deepest is found where it is. ``None`` if not found."""
    field = _FIELD.match(message)
    if field is None:
        return None
    keys = [quoted or plain for quoted, plain in _KEY.findall(field["field"]) if quoted or plain]
    try:
        lines = _fixture_file(source).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    found, start = None, 0
    for key in keys:
        needle = f'"{key}"'
        hit = next((index for index in range(start, len(lines)) if needle in lines[index]), None)
        if hit is None:
            break
        found, start = hit + 1, hit
    return found


def family_line(source: str, check: str) -> int | None:
    """The 1-based line where the check's family is declared in the fixture, if found."""
    family = check.split(":", 1)[0].strip()
    if not family:
        return None
    try:
        lines = _fixture_file(source).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    # Searched from the "expects" key on: a scripted reply may quote a family's name.
    start = next((index for index, line in enumerate(lines) if '"expects"' in line), 0)
    needle = f'"{family}"'
    return next(
        (number for number, line in enumerate(lines[start:], start + 1) if needle in line), None
    )


class GithubFormatter(Formatter):
    """For GitHub Actions: an annotation per failure, a summary table per job."""

    name = "github"
    description = "GitHub Actions annotations, and a Markdown table in GITHUB_STEP_SUMMARY"
    machine_readable = True

    def __init__(self) -> None:
        # stdout and a --report file render the same report: summarize it once.
        self._summarized: int | None = None

    def render(self, report: SuiteReport) -> str:
        level = "error" if report.gating else "warning"
        lines = [self._problem(level, error) for error in report.errors]
        for case in report.cases:
            if not case.passed:
                lines.extend(self._case(level, case))
            lines.extend(
                command(
                    "warning",
                    warning,
                    file=relative(case.source),
                    title=f"zeroclaw eval: {case.name}",
                )
                for warning in case.warnings
            )
        if report.cases or not report.errors:
            lines.append(f"{report.passed_count}/{len(report.cases)} cases passed")
        else:  # refused, or stopped before any case: "0/0 cases passed" reads as a pass
            lines.append("no case was run")
        if report.errors and report.cases and report.passed_count == len(report.cases):
            # every case passed, yet the run is red: say why
            count = "an error" if len(report.errors) == 1 else f"{len(report.errors)} errors"
            lines.append(f"red: {count} outside the cases, first: {one_line(report.errors[0])}")
        summary = os.environ.get(SUMMARY_ENV)
        if summary and self._summarized != id(report):
            with open(summary, "a", encoding="utf-8", errors="backslashreplace") as handle:
                handle.write(markdown_summary(report))
            self._summarized = id(report)
        return "\n".join(lines) + "\n"

    @staticmethod
    def _problem(level: str, error: str) -> str:
        refusal = _REFUSAL.fullmatch(error)
        if refusal is None:
            return command(level, error, title="zeroclaw eval")
        file = relative(refusal["file"])
        line = field_line(refusal["file"], refusal["message"])
        title = "zeroclaw eval: fixture refused"
        return command(level, refusal["message"], file=file, line=line, title=title)

    @staticmethod
    def _case(level: str, case: CaseReport) -> list[str]:
        file = relative(case.source)
        title = f"zeroclaw eval: {case.name}"
        if case.error is not None:
            return [command(level, case.error, file=file, title=title)]
        failed = case.failed_checks or ()
        if not failed:  # no check at all: never a pass, so it is said
            return [command(level, "no check ran", file=file, title=title)]
        return [
            command(
                level,
                f"{check.check}: {check.detail}",
                file=file,
                line=family_line(case.source, check.check),
                title=title,
            )
            for check in failed
        ]


def _cell(text: str) -> str:
    """Text safe in one Markdown table cell: one line, no pipe, no HTML."""
    escaped = one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("|", "\\|")


def markdown_summary(report: SuiteReport) -> str:
    """The suite as Markdown: a verdict line, any errors, and a table of its cases."""
    total = len(report.cases)
    mark = "✅" if report.all_passed else "❌"
    lines = [
        f"### {mark} zeroclaw eval: {_cell(report.suite)}",
        "",
        f"**{report.passed_count}/{total} cases passed**"
        + (f", {report.undecided_count} undecided (n/a)" if report.undecided_count else "")
        + f" (mode `{_cell(report.mode)}`"
        + (f", agent `{_cell(report.agent)}`" if report.agent not in ("", DEFAULT_AGENT) else "")
        + ("" if report.gating else ", not gating")
        + ")",
        "",
    ]
    lines.extend(f"- error: {_cell(error)}" for error in report.errors)
    if report.errors:
        lines.append("")
    failing = [case for case in report.cases if not case.passed]
    room = max(0, MAX_SUMMARY_ROWS - len(failing))
    passing = [case for case in report.cases if case.passed][:room]
    shown = {id(case) for case in (*failing, *passing)}
    if shown:
        lines += ["| | case | fixture | checks | failures |", "| --- | --- | --- | --- | --- |"]
        for case in report.cases:
            if id(case) not in shown:
                continue
            passed = sum(1 for check in case.checks if check.passed)
            if case.error is not None:
                failures = f"error: {_cell(case.error)}"
            else:
                failures = "<br>".join(
                    f"{_cell(check.check)}: {_cell(check.detail)}" for check in case.failed_checks
                )
            verdict = "✅" if case.passed else "❔ n/a" if case.undecided else "❌"
            lines.append(
                f"| {verdict} | {_cell(case.name)} "
                f"| {_cell(relative(case.source))} | {passed}/{len(case.checks)} "
                f"| {failures} |"
            )
        left_out = total - len(shown)
        if left_out:
            lines += ["", f"{left_out} passing cases not listed."]
    return "\n".join(lines) + "\n\n"


@hookimpl
def zeroclaw_eval_register_formatters(register: Callable[[Formatter], None]) -> None:
    register(GithubFormatter())
