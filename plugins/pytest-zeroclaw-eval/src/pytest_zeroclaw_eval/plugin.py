"""The pytest plugin: every fixture of a zeroclaw-eval suite is one pytest item.

``pytest --zeroclaw-suite evals/regression`` (or ``zeroclaw_suite`` in the ini
file) collects each direct ``*.json`` child of the suite as a file holding one
item, named after the file. Collection is the harness's admission: a refused
fixture is a collection error naming the file and the field. Running an item is
the harness's run: the same run mode, agent under test, tools, families and
``[eval]`` settings as ``zeroclaw eval run``, read from the same configuration file, with the same
plugins (entry points of the ``zeroclaw_eval`` group; ``--zeroclaw-disable-plugin``
and ``ZEROCLAW_EVAL_DISABLE_PLUGINS`` keep one out, as ``-p no:NAME`` does for the
CLI). A failed case's message lists its failed checks as the text report does.

Everything else is pytest's own: ``-k``, ``-x``, ``--lf``, ``--junitxml``,
``pytest-xdist``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from zeroclaw_eval.errors import SuiteLoadError, UsageError, ZeroclawEvalError, one_line
from zeroclaw_eval.report import CaseReport, SuiteReport
from zeroclaw_eval.run.session import Plan, RunRequest, Session

if TYPE_CHECKING:
    from zeroclaw_eval.case.admission import Case

INI_SUITES = "zeroclaw_suite"


@dataclass(frozen=True)
class Harness:
    """What every item of the session shares: built once, in ``pytest_configure``."""

    suites: frozenset[Path]
    """The suite directories, resolved: their direct ``*.json`` children are cases."""
    session: Session
    """The harness's run session: the [eval] configuration and the plugins, as
    ``zeroclaw eval run`` opens them."""
    plan: Plan
    """What the cases run under: the settings, the run mode and the agent under test."""


HARNESS = pytest.StashKey[Harness]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("zeroclaw-eval", "zeroclaw-eval fixtures as test items")
    group.addoption(
        "--zeroclaw-suite",
        action="append",
        default=[],
        metavar="DIR",
        help="Collect the fixtures of this suite directory, and only what else the "
        "command line names (repeatable).",
    )
    group.addoption(
        "--zeroclaw-config",
        metavar="FILE",
        default=None,
        help="TOML file with the [eval] table (default: found as zeroclaw eval finds it).",
    )
    group.addoption(
        "--zeroclaw-mode", metavar="NAME", default=None, help="Run mode (overrides [eval].mode)."
    )
    group.addoption(
        "--zeroclaw-disable-plugin",
        action="append",
        default=[],
        metavar="NAME",
        help="Do not load the zeroclaw-eval plugin NAME (repeatable); as the CLI's -p no:NAME.",
    )
    parser.addini(
        INI_SUITES,
        type="paths",
        default=[],
        help="zeroclaw-eval suite directories (relative to the ini file) whose fixtures "
        "are collected wherever pytest walks them.",
    )


def pytest_configure(config: pytest.Config) -> None:
    given = [Path(value) for value in config.getoption("zeroclaw_suite")]
    suites = [config.invocation_params.dir / path for path in given]
    suites += [Path(path) for path in config.getini(INI_SUITES)]
    if not suites:
        return  # installed but not asked for: nothing changes
    try:
        config.stash[HARNESS] = _harness(config, suites)
    except ZeroclawEvalError as exc:
        raise pytest.UsageError(f"zeroclaw-eval: {one_line(str(exc))}") from None
    if given:
        # The suites given on the command line are what to run: they replace the
        # default arguments (testpaths, the current directory), or add to explicit ones;
        # a suite something on the command line already lies in (a fixture, a node id
        # such as suite/case.json::case) is not added whole: that narrows it.
        if config.args_source != pytest.Config.ArgsSource.ARGS:
            config.args[:] = []
        named = [
            (config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args
        ]
        for suite in suites[: len(given)]:
            where = suite.resolve()
            if not any(path == where or where in path.parents for path in named):
                config.args.append(str(suite))


#: The harness's option names, as this plugin spells them.
OPTIONS = {"--mode": "--zeroclaw-mode"}


def _harness(config: pytest.Config, suites: list[Path]) -> Harness:
    for suite in suites:
        if not suite.is_dir():
            raise ZeroclawEvalError(f"suite {suite}: no such directory")
    path = config.getoption("zeroclaw_config")
    session = Session.open(
        config=Path(path) if path else None,
        cwd=config.invocation_params.dir,
        blocked=config.getoption("zeroclaw_disable_plugin"),
    )
    try:
        plan = session.plan(RunRequest(mode=config.getoption("zeroclaw_mode") or None))
    except UsageError as exc:
        option = OPTIONS.get(exc.option or "", exc.option)
        raise ZeroclawEvalError(f"{option}: {exc}" if option else str(exc)) from None
    session.check(plan)  # before any item runs, as the CLI's run does before any case
    return Harness(frozenset(s.resolve() for s in suites), session, plan)


def pytest_report_header(config: pytest.Config) -> str | None:
    harness = config.stash.get(HARNESS, None)
    if harness is None:
        return None
    suites = ", ".join(sorted(harness.session.shown(suite) for suite in harness.suites))
    return f"zeroclaw-eval: suites {suites}; mode {harness.plan.mode.name}"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> FixtureFile | None:
    harness = parent.config.stash.get(HARNESS, None)
    if harness is None or file_path.suffix != ".json":
        return None
    # Not recursive, as a suite is loaded: only direct children are cases.
    if file_path.parent.resolve() not in harness.suites:
        return None
    fixture: FixtureFile = FixtureFile.from_parent(parent, path=file_path)
    return fixture


class FixtureFile(pytest.File):
    """A fixture file: admitted when collected, holding one item named after the file."""

    def collect(self) -> Iterator[pytest.Item]:
        harness = self.config.stash[HARNESS]
        try:
            # The suite loader's own admission: the tool offer and the agent's rules too.
            [case] = harness.session.admit_files(
                harness.plan, [self.path], suite=harness.session.shown(self.path.parent)
            )
        except SuiteLoadError as exc:
            # A collection error showing the refusal: file, field and what is wrong.
            raise self.CollectError(
                "\n".join(f"zeroclaw-eval: {problem}" for problem in exc.problems)
            ) from None
        yield CaseItem.from_parent(self, name=self.path.stem, case=case)


class CaseFailed(Exception):
    """Raised by a case that did not pass; carries its report."""

    def __init__(self, report: CaseReport) -> None:
        super().__init__(report.name)
        self.report = report


class CaseItem(pytest.Item):
    """One admitted case, run through the harness's runner when the item runs."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        # -k also matches the case's own name, not only the file's.
        self.extra_keyword_matches.add(case.name)

    def runtest(self) -> None:
        harness = self.config.stash[HARNESS]
        # The harness's runner, as for a suite of one: the agent (and its model bridge),
        # case_timeout_s, and [eval].repeats (the item passes only if every attempt does).
        [report] = harness.session.run_cases(harness.plan, [self.case]).cases
        passed = sum(1 for check in report.checks if check.passed)
        self.user_properties.append(("zeroclaw_checks", f"{passed}/{len(report.checks)}"))
        if report.runs > 1:
            self.user_properties.append(("zeroclaw_passes", f"{report.passes}/{report.runs}"))
        if not report.passed:
            raise CaseFailed(report)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, CaseFailed):
            return failure_text(self.config.stash[HARNESS], excinfo.value.report)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[os.PathLike[str] | str, int | None, str]:
        return self.path, None, f"zeroclaw case {self.case.name}"


def failure_text(harness: Harness, report: CaseReport) -> str:
    """The case as the text report shows it: its line, then each failed check."""
    entry = harness.session.registry.formatters.get("text")
    if entry is None:  # the text formatter was blocked: say the same, plainly
        lines = [f"{report.name} ({report.source}): {report.error or 'failed'}"]
        lines += [f"    ✗ {check.check}: {check.detail}" for check in report.failed_checks]
        return "\n".join(lines)
    document = entry.obj.render(SuiteReport("", (report,), harness.plan.mode.name))
    # The last line is the suite's count, which says nothing about one case.
    return "\n".join(document.rstrip("\n").splitlines()[:-1])
