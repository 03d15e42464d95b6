"""The ``zeroclaw`` console script: the command line, started so that an interrupt
during its start ends it quietly.

A command answers SIGINT and SIGTERM itself from its start
(:mod:`zeroclaw_eval.run.signals`), and click turns a KeyboardInterrupt inside a
command into ``Aborted!``. Before both, while the command line's modules are
imported (click, pydantic: tens of milliseconds, several times that on a loaded
machine), Python's own handler would raise KeyboardInterrupt in the middle of an
import and print a traceback. So while they are imported, SIGINT ends the process
as the signal's default does, printing nothing; then Python's handler is back.
"""

from __future__ import annotations

import signal


def main() -> None:
    """Start ``zeroclaw``: import the command line with SIGINT at its default, then run it."""
    python_handler = signal.signal(signal.SIGINT, signal.SIG_DFL)
    from zeroclaw_eval.cli import main as command_line

    signal.signal(signal.SIGINT, python_handler)
    command_line()
