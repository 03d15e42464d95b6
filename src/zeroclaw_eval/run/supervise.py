"""Running numbered jobs in worker threads, each under a wall-clock deadline.

The runner uses this so that a case that hangs (a tool that never returns, a
provider that never answers) costs ``case_timeout_s`` and a report, not the
whole CI job. A Python thread cannot be killed: a worker whose job outlives its
deadline is abandoned (it is a daemon, so it never keeps the process alive, and
whatever it finishes later is dropped), and a fresh worker takes the next job.

Workers take jobs one after another and the calling thread only sleeps until the
earliest deadline, so a job costs two uncontended lock round trips, not a hand-off
between threads: handing each job to a thread and waiting for it cost a 10,000-case
suite about a second (benchmarks/run.py, W4).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

R = TypeVar("R")


class Supervisor(Generic[R]):
    """Runs ``job(0)`` ... ``job(count - 1)`` on up to ``workers`` threads.

    ``job`` must not raise: it turns its own failures into a result. Each result
    goes to ``finished(index, result)``, called under the supervisor's lock, in
    completion order; a job still running after ``timeout_s`` gets
    ``timed_out(index)`` instead. ``started`` holds the indexes of every job begun,
    so an interrupted caller can tell the jobs cut short from those never begun.
    :meth:`stop_before` lets ``finished`` end the run early (``-x``).
    """

    def __init__(
        self,
        count: int,
        job: Callable[[int], R],
        finished: Callable[[int, R], None],
        timed_out: Callable[[int], R],
        *,
        workers: int = 1,
        timeout_s: float,
    ) -> None:
        self.count = count
        self.started: set[int] = set()
        self._job = job
        self._finished = finished
        self._timed_out = timed_out
        self._workers = max(1, min(workers, count))
        self._timeout_s = timeout_s
        self._lock = threading.Condition()
        self._next = 0
        self._end = count  # no job from this index on is begun
        self._done = 0
        self._running: dict[int, tuple[int, float]] = {}  # worker -> (job, deadline)
        self._serial = 0

    def run(self) -> None:
        """Run every job; return when each has finished or timed out.

        An exception in the calling thread (``KeyboardInterrupt``) abandons every
        worker before it propagates: no result arrives after :meth:`run` ends.
        """
        with self._lock:
            for _ in range(self._workers):
                self._hire()
            try:
                while self._done < self._end:
                    now = time.monotonic()
                    for worker, (index, deadline) in list(self._running.items()):
                        if deadline <= now:
                            del self._running[worker]  # abandoned: its result is dropped
                            self._record(index, self._timed_out(index))
                            self._hire()
                    if self._done < self._end:
                        earliest = min((d for _, d in self._running.values()), default=now + 1)
                        self._lock.wait(max(earliest - now, 0.001))
            finally:
                self._next = self.count  # no worker takes another job
                self._running.clear()  # and none reports the one it has

    def stop_before(self, index: int) -> None:
        """Begin no job from ``index`` on; the jobs already begun still finish.

        Jobs are begun in index order, so every job before ``index`` still runs.
        Call it from ``finished`` (it holds the supervisor's lock).
        """
        with self._lock:
            self._end = min(self._end, max(index, self._next))
            if self._done >= self._end:
                self._lock.notify_all()

    def _hire(self) -> None:
        if self._next < self._end:
            self._serial += 1
            name = f"zeroclaw-eval worker {self._serial}"
            threading.Thread(
                target=self._work, args=(self._serial,), name=name, daemon=True
            ).start()

    def _work(self, worker: int) -> None:
        while True:
            with self._lock:
                if self._next >= self._end:
                    return
                index = self._next
                self._next += 1
                self.started.add(index)
                self._running[worker] = (index, time.monotonic() + self._timeout_s)
            result = self._job(index)
            with self._lock:
                if self._running.pop(worker, None) is None:
                    return  # timed out or abandoned meanwhile: the result is dropped
                self._record(index, result)

    def _record(self, index: int, result: R) -> None:
        self._finished(index, result)
        self._done += 1
        if self._done >= self._end:
            self._lock.notify_all()
