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

    @abstractmethod
    def render(self, report: SuiteReport) -> str:
        """Return the whole document, ending with a newline."""

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
