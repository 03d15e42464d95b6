"""How a run answers SIGINT and SIGTERM: the cases stop, a report is never cut.

CI cancels a job with a signal (SIGINT, then SIGTERM, then SIGKILL a few seconds
later, on GitHub Actions). While the suite loads and its cases run, either signal
stops the run: it raises :class:`SuiteInterrupted`, and the run reports what it
has (a partial report marked ``interrupted``). While the reports are written
(the report files, stdout, the history: :meth:`RunSignals.writing`), a signal is
held instead: the writes go on, and each report is written whole; the run then
ends as interrupted (:class:`ReportsInterrupted`), saying so. A second signal, or
:data:`REPORT_GRACE_S` passing with a write still blocked (a reader that stopped
reading stdout), stops the writing at once: the write under way is cut (a file
never is: files are replaced whole or not at all), nothing more is written, and
the error says which reports were written whole and which were not.

Signal handlers can only be set from the main thread; elsewhere (a run in a
worker thread) nothing is installed and signals keep their handlers. A signal
the process ignores (a background job's SIGINT) stays ignored.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any

#: How long the reports may still take once a signal came while they were written.
REPORT_GRACE_S = 5.0

#: The signals a run answers.
STOPPING = (signal.SIGINT, signal.SIGTERM)


class SuiteInterrupted(KeyboardInterrupt):
    """A signal asked the suite to stop; the runner then returns a partial report.

    A :class:`KeyboardInterrupt`, so that whatever catches Ctrl-C catches it, and no
    ``except Exception`` on the way swallows it.
    """

    def __init__(self, signum: int = signal.SIGINT) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


class ReportsInterrupted(SuiteInterrupted):
    """A signal came while the reports were written: the run ends as interrupted.

    ``message`` says which reports were written whole and which were not; ``whole``
    is true when every one was.
    """

    def __init__(self, signum: int, message: str = "", *, whole: bool = False) -> None:
        super().__init__(signum)
        self.message = message
        self.whole = whole

    def __str__(self) -> str:
        return self.message or super().__str__()


class RunSignals:
    """SIGINT and SIGTERM for one run: they stop it, except while reports are written."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._writing: Writing | None = None
        #: Whether the reports were written whole, no signal meanwhile.
        self.written = False
        #: The signal that stopped the run, once one did: a library may turn the
        #: :class:`SuiteInterrupted` it raised into an error of its own (pydantic-core
        #: does, while it builds a validator), and the signal must still win.
        self.received: int | None = None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """The handler of both signals (main thread)."""
        with self._lock:
            writing = self._writing
        if writing is not None:
            writing.signalled(signum)
        elif self.written:  # the run is over, yet it was stopped: never green
            name = signal.Signals(signum).name
            raise ReportsInterrupted(
                signum, f"interrupted by {name} once every report was written whole", whole=True
            )
        else:
            self.received = signum
            raise SuiteInterrupted(signum)

    @contextmanager
    def writing(self, names: Sequence[str]) -> Iterator[Writing]:
        """Hold signals while ``names`` (the reports, in the order they are written)
        are written; each write is a :meth:`Writing.step`.

        On the way out: a signal that came makes this raise
        :class:`ReportsInterrupted`, saying whether every report was written whole.
        """
        writing = Writing(names)
        with self._lock:
            self._writing = writing
        try:
            yield writing
        except ReportsInterrupted as stopped:
            writing.stopped = stopped.signum
        finally:
            with self._lock:
                self._writing = None
            writing.done()
        interruption = writing.interruption()
        if interruption is not None:
            raise interruption
        self.written = True


class Writing:
    """The reports of one run being written, and the signal that came meanwhile."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.whole: list[str] = []
        self.cut: str | None = None
        self.held: int | None = None
        self.stopped: int | None = None
        self._grace_out = False
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._main = threading.get_ident()

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """Write the report ``name``: whole once the block ends, cut if it is stopped."""
        try:
            yield
        except ReportsInterrupted:
            self.cut = name
            raise
        self.whole.append(name)

    def signalled(self, signum: int) -> None:
        """A signal came (in the main thread's handler): hold the first, while the grace
        lasts; stop the writing at a second one, or once the grace is out."""
        if self.held is None:
            self.held = signum
            timer = threading.Timer(REPORT_GRACE_S, self._out_of_grace)
            timer.daemon = True
            self._timer = timer
            timer.start()
            return
        raise ReportsInterrupted(self.held)

    def _out_of_grace(self) -> None:
        with self._lock:
            if self._timer is None:  # the writing ended meanwhile
                return
            self._grace_out = True
            signum = self.held
        if signum is not None:
            # The main thread may be blocked in a write: a signal of its own wakes it.
            signal.pthread_kill(self._main, signum)

    def done(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def interruption(self) -> ReportsInterrupted | None:
        """What the run ends with once the writing is over: ``None`` if no signal came."""
        if self.held is None:
            return None
        name = signal.Signals(self.held).name
        said = f"interrupted by {name} while the reports were written"
        if self.stopped is None:
            written = ", ".join(self.whole) or "none"
            return ReportsInterrupted(
                self.held, f"{said}: each was written whole ({written})", whole=True
            )
        why = (
            f"not done within {REPORT_GRACE_S:g} s"
            if self._grace_out
            else f"a second {signal.Signals(self.stopped).name}"
        )
        left = [n for n in self.names if n not in self.whole and n != self.cut]
        parts = [f"written whole: {', '.join(self.whole) or 'none'}"]
        if self.cut is not None:
            parts.append(f"cut short: {self.cut}")
        if left:
            parts.append(f"not written: {', '.join(left)}")
        return ReportsInterrupted(self.held, f"{said}, and stopped ({why}): {'; '.join(parts)}")


@contextmanager
def run_signals() -> Iterator[RunSignals]:
    """SIGINT and SIGTERM handled by a :class:`RunSignals` for the block (main thread
    only; a signal the process ignores stays ignored), the previous handlers back
    after. Inside another such block, that block's :class:`RunSignals` is used: a
    front end may answer signals from its start, before its run session exists."""
    signals = RunSignals()
    if threading.current_thread() is not threading.main_thread():
        yield signals
        return
    installed = getattr(signal.getsignal(signal.SIGTERM), "__self__", None)
    if isinstance(installed, RunSignals):
        yield installed
        return
    previous: dict[int, Any] = {}
    for signum in STOPPING:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, signals.handle)
    try:
        yield signals
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler)
