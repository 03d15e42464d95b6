"""The exception hierarchy: one root, one subclass per stage that can refuse.

Every error carries a complete one-line message. The CLI prints ``Error: <message>``
for any :class:`ZeroclawEvalError` and exits 1; nothing below it prints.
"""

from __future__ import annotations

from collections.abc import Sequence


def one_line(text: str) -> str:
    """``text`` with every line break and control character escaped (``\\n``, ``\\x1b``...).

    Error messages quote file names, keys and values taken from hostile input; a
    newline in one of them must not split the message, nor forge a second line in
    a CI log; a lone surrogate must not make the message unprintable.
    """
    if text.isprintable():
        return text
    import unicodedata  # only for text that needs escaping

    return "".join(
        char.encode("unicode_escape").decode("ascii")
        if unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp")
        else char
        for char in text
    )


class ZeroclawEvalError(Exception):
    """Root of every error the harness raises on purpose."""


class ConfigError(ZeroclawEvalError):
    """The ``[eval]`` configuration (file or flags) is invalid."""


class UsageError(ZeroclawEvalError):
    """A front end's option was given a value the harness cannot use.

    ``option`` names it as the user typed it (``--mode``), or is ``None`` when
    options contradict each other. Each front end reports it as its own usage
    error: the CLI exits 2, as click does for a bad option; a setting read from a
    file is a :class:`ConfigError` instead.
    """

    def __init__(self, message: str, option: str | None = None) -> None:
        self.option = option
        super().__init__(message)


class PluginLoadError(ZeroclawEvalError):
    """A plugin could not be loaded or registered; the run must not go on without it."""


class AdmissionError(ZeroclawEvalError):
    """A fixture was refused at load time.

    ``source`` is the fixture file, ``field`` the dotted path of the offending field
    (``expects.tool_arguments_contain[1].needle``), or ``""`` when the whole file is
    at fault (it is not JSON, say).
    """

    def __init__(
        self, source: str, field: str, message: str, more: Sequence[tuple[str, str]] = ()
    ) -> None:
        self.source = source
        self.field = field
        self.message = message
        self.more = tuple(more)
        """Further problems of the same fixture, each ``(field, message)``."""
        super().__init__(self._line(field, message))

    def _line(self, field: str, message: str) -> str:
        where = f"{self.source}: {field}" if field else self.source
        return one_line(f"{where}: {message}")

    @property
    def lines(self) -> tuple[str, ...]:
        """Every problem of the fixture, one complete line each, the first one first."""
        return (str(self), *(self._line(field, message) for field, message in self.more))


class SuiteLoadError(ZeroclawEvalError):
    """A suite could not be loaded: it is missing, empty, or some fixtures were refused.

    ``problems`` holds one complete line per refused fixture, so that every bad file
    in a suite is reported at once rather than one per run.
    """

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        self.problems = tuple(problems)
        super().__init__(message)


class ReportError(ZeroclawEvalError):
    """The report could not be rendered (its formatter raised) or written."""


class RunError(ZeroclawEvalError):
    """Running one case went wrong (the script ran dry, a tool loop never ended...).

    A run error fails its case and is reported with it; it never stops the suite.
    """


class UnknownToolError(RunError):
    """An agent called a tool its case does not serve: the agent's error, answered as
    the protocol's "unknown tool" and recorded as a failed call, not a fault of the run."""


class HistoryError(ZeroclawEvalError):
    """The run history cannot be used: corrupt, from a newer schema, or unwritable.

    The message names the file; ``--no-history`` runs without one.
    """
