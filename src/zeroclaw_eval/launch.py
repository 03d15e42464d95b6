"""The ``zeroclaw`` console script: the command line, started so that an interrupt
during its start ends it quietly.

A command answers SIGINT and SIGTERM itself from its start
(:mod:`zeroclaw_eval.run.signals`), and click turns a KeyboardInterrupt inside a
command into ``Aborted!``. Before both, while the command line's modules are
imported (click, pydantic: tens of milliseconds, several times that on a loaded
machine), Python's own handler would raise KeyboardInterrupt in the middle of an
import and print a traceback. So while they are imported, SIGINT ends the process
as the signal's default does, printing nothing; then Python's handler is back. The
command line imports what its options and commands need the same way, until the
command answers signals (:func:`zeroclaw_eval.cli.common.import_before_signals`).

An interrupt can also reach the top wrapped in another error: Python 3.11 wraps
what a class's ``__set_name__`` raises in a RuntimeError, so a Ctrl-C while a
command imports a module making such a class arrives as one. An error raised
because of an interrupt is the interrupt: one line and the signal's exit code,
never a traceback.
"""

from __future__ import annotations

import signal
import sys


def main() -> None:
    """Start ``zeroclaw``: import the command line with SIGINT at its default, then run it."""
    python_handler = signal.signal(signal.SIGINT, signal.SIG_DFL)
    from zeroclaw_eval.cli import main as command_line

    signal.signal(signal.SIGINT, python_handler)
    try:
        command_line()
    except Exception as error:
        interrupt = interrupt_behind(error)
        if interrupt is None:
            raise
        signum = getattr(interrupt, "signum", signal.SIGINT)
        sys.stderr.write(f"Error: interrupted by {signal.Signals(signum).name}\n")
        sys.exit(128 + signum)


def interrupt_behind(error: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt that ``error`` was raised from or while handling, if any,
    followed as a traceback shows the chain (``raise ... from None`` ends it)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        if cause.__cause__ is not None:
            cause = cause.__cause__
        else:
            cause = None if cause.__suppress_context__ else cause.__context__
    return None
