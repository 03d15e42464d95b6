"""``re.search`` with a time limit, for patterns written in fixtures.

A pattern such as ``(a+)+$`` backtracks catastrophically: searching a few dozen
characters takes longer than the age of the universe. Python's ``re`` holds the
GIL for the whole search, so no thread, timer or per-case timeout in this process
can stop it, or even run while it lasts. The search therefore runs in a small
worker process (``python -I -S``: only ``re`` and ``json``), which can be killed.

The worker is started on the first search and kept for the next ones, so a suite
pays its start-up once and then about a pipe round trip per search. A search
that outlasts :data:`TIMEOUT_S` kills it (the next search starts a new one) and
is reported as :class:`TimedOut`: the caller fails its check, it never passes.
Patterns were compiled once at admission, in this process, so a pattern that
reaches the worker compiles there too; anything else going wrong in the worker
is an :class:`Error`, a failed check as well.
"""

from __future__ import annotations

import atexit
import json
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import IO

from zeroclaw_eval.util.warmup import setting_up

#: Seconds one search may take. Searches in fixtures are linear in practice
#: (milliseconds even over megabytes); this only ends the pathological ones.
TIMEOUT_S = 2.0

#: The longest matched text sent back: enough for a check's detail.
_KEEP = 200

#: The most matches :func:`find_all` sends back.
_KEEP_ALL = 200

#: Seconds the worker may take to start; not counted in any search's time.
_START_S = 30.0

_WORKER = f"""
import json, re, sys
sys.stdout.write("[]\\n")
sys.stdout.flush()
for line in sys.stdin:
    pattern, text, every = json.loads(line)
    try:
        if every:
            found = [m.group(0) for _, m in zip(range({_KEEP_ALL}), re.finditer(pattern, text))]
            reply = ["all", found]
        else:
            match = re.search(pattern, text)
            reply = ["match", match.group(0)[:{_KEEP}]] if match else ["none"]
    except BaseException as exc:
        reply = ["error", type(exc).__name__ + ": " + str(exc)]
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""


@dataclass(frozen=True)
class Found:
    """The pattern was found; ``text`` is the start of the matched text."""

    text: str


@dataclass(frozen=True)
class FoundAll:
    """Every match, in order (:func:`find_all`): the whole matched texts, at most 200."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class NotFound:
    """The search finished without a match."""


@dataclass(frozen=True)
class TimedOut:
    """The search did not finish within ``seconds`` and was killed."""

    seconds: float


@dataclass(frozen=True)
class Error:
    """The search could not be done; ``message`` says why."""

    message: str


Outcome = Found | NotFound | TimedOut | Error
FindOutcome = FoundAll | TimedOut | Error


class _Worker:
    """One worker process, its pipes, and a thread that reads its replies."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.replies: queue.Queue[bytes] = queue.Queue()
        stdout = self.process.stdout
        assert stdout is not None
        # Replies are awaited with a timeout through a queue: a blocking read of
        # the pipe could not be given one portably.
        threading.Thread(target=self._read, args=(stdout,), daemon=True).start()
        # Wait for it to be ready, so that a slow start on a busy machine is not
        # counted against the first search.
        try:
            ready = self.replies.get(timeout=_START_S)
        except queue.Empty:
            ready = b""
        if ready.strip() != b"[]":
            self.stop()
            raise OSError(f"it did not start within {_START_S:g} s")

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self.replies.put(line)
        self.replies.put(b"")  # the worker ended

    def search(
        self, pattern: str, text: str, timeout_s: float, every: bool
    ) -> Outcome | FindOutcome:
        stdin = self.process.stdin
        assert stdin is not None
        # ASCII JSON: the pipe carries any text (lone surrogates included) unchanged.
        stdin.write(json.dumps([pattern, text, every]).encode("ascii") + b"\n")
        stdin.flush()
        try:
            line = self.replies.get(timeout=timeout_s)
        except queue.Empty:
            return TimedOut(timeout_s)
        if not line:
            return Error(f"the regex process ended unexpectedly (exit {self.process.wait()})")
        reply = json.loads(line)
        if reply[0] == "match":
            return Found(reply[1])
        if reply[0] == "all":
            return FoundAll(tuple(reply[1]))
        if reply[0] == "none":
            return NotFound()
        return Error(reply[1])

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


_lock = threading.Lock()
_worker: _Worker | None = None


def search(pattern: str, text: str, timeout_s: float = TIMEOUT_S) -> Outcome:
    """Search ``text`` for ``pattern`` (``re.search``) in the worker, for at most ``timeout_s``.

    Thread-safe: concurrent callers take turns with the one worker.
    """
    outcome = _ask(pattern, text, timeout_s, every=False)
    assert not isinstance(outcome, FoundAll)  # asked for the first match only
    return outcome


def find_all(pattern: str, text: str, timeout_s: float = TIMEOUT_S) -> FindOutcome:
    """Every match of ``pattern`` in ``text`` (``re.finditer``, the whole match of
    each) in the worker, for at most ``timeout_s``: :class:`FoundAll` (maybe
    empty), or :class:`TimedOut` or :class:`Error`."""
    outcome = _ask(pattern, text, timeout_s, every=True)
    assert not isinstance(outcome, (Found, NotFound))  # asked for every match
    return outcome


def _ask(pattern: str, text: str, timeout_s: float, *, every: bool) -> Outcome | FindOutcome:
    global _worker
    with _lock:
        try:
            if _worker is None:
                with setting_up():  # not the time of the case that searched first
                    _worker = _Worker()
            outcome = _worker.search(pattern, text, timeout_s, every)
        except (OSError, ValueError) as exc:  # it could not start, died, or garbled a reply
            outcome = Error(f"the regex process failed: {exc}")
        if not isinstance(outcome, (Found, FoundAll, NotFound)) and _worker is not None:
            _worker.stop()
            _worker = None
        return outcome


@atexit.register
def _stop_worker() -> None:
    # Without the lock: a thread abandoned mid-search may hold it. Killing the
    # worker matters, as one stuck in a search would outlive this process.
    if _worker is not None:
        _worker.stop()
