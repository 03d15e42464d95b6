"""The formatter kind: a :class:`~zeroclaw_eval.report.model.SuiteReport` becomes a document.

Formatters are plugins (``zeroclaw_eval_register_formatters``); the CLI and
``--report`` files reach them through the registry by name, never by import.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from zeroclaw_eval.errors import ReportError
from zeroclaw_eval.report.model import SuiteReport


class Formatter(ABC):
    """Renders a :class:`SuiteReport` as a document. Register one with
    ``zeroclaw_eval_register_formatters``.

    ``machine_readable`` formatters own stdout: the CLI sends every warning and
    progress line to stderr while they are in use.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    machine_readable: ClassVar[bool] = False
    traces: ClassVar[bool] = False
    """Whether it reports what a run observed for tracing: when a run is asked for
    such a report, and only then, the run opens a trace and keeps each case
    attempt's times and model exchanges
    (:attr:`~zeroclaw_eval.report.model.CaseReport.trace`)."""
    sends: ClassVar[bool] = False
    """Whether it can send its report to a URL (``--report FORMAT:http://...``,
    :meth:`send`) as well as write it to a file."""

    @abstractmethod
    def render(self, report: SuiteReport) -> str:
        """Return the whole document, ending with a newline."""

    def check(self) -> None:  # noqa: B027 - optional, nothing to check by default
        """Raise :class:`~zeroclaw_eval.errors.ConfigError` if this formatter cannot
        write its report here (a missing optional dependency, a bad setting in the
        environment). Called for each ``--report`` target before any case runs."""

    def send(self, report: SuiteReport, url: str) -> None:
        """Send ``report`` to ``url`` (``http`` or ``https``, checked already), for a
        formatter whose :attr:`sends` is true; raise
        :class:`~zeroclaw_eval.errors.ReportError` saying why one was refused."""
        raise ReportError(f"formatter {self.name!r} cannot send a report to {url}")

    def with_verbosity(self, verbosity: int) -> Formatter:
        """This formatter at a verbosity: -1 (``-q``), 0, or 1 (``-v``).

        The default ignores it and returns ``self``: only formatters for people
        have something to leave out or add.
        """
        return self

    def with_colour(self, colour: bool) -> Formatter:
        """This formatter for a terminal that shows colour (``True``), or for one that
        does not, a pipe or a file (``False``, how every formatter starts).

        The default ignores it and returns ``self``: only formatters for people
        colour anything, and only the report on stdout is ever asked to.
        """
        return self


def render(formatter: Formatter, report: SuiteReport, plugin: str) -> str:
    """``formatter``'s document for ``report``, for stdout or a ``--report`` file.

    A formatter that raises, or returns anything but text, is a
    :class:`~zeroclaw_eval.errors.ReportError` naming it and its ``plugin``: exit 1,
    never a missing report read as a pass, never a traceback.
    """
    try:
        document = formatter.render(report)
    except Exception as exc:
        raise ReportError(
            f"formatter {formatter.name!r} of plugin {plugin!r} raised {type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(document, str):
        raise ReportError(
            f"formatter {formatter.name!r} returned {type(document).__name__}, not text"
        )
    return document


def send(formatter: Formatter, report: SuiteReport, url: str, plugin: str) -> None:
    """``formatter`` sends ``report`` to ``url`` (a ``--report FORMAT:URL`` target).

    Its own :class:`~zeroclaw_eval.errors.ReportError` (the endpoint refused it, or
    could not be reached) is raised as it is; anything else it raises is one
    naming it and its ``plugin``, as for :func:`render`.
    """
    try:
        formatter.send(report, url)
    except ReportError:
        raise
    except Exception as exc:
        raise ReportError(
            f"formatter {formatter.name!r} of plugin {plugin!r} raised {type(exc).__name__}: {exc}"
        ) from None
