"""The supervisor behind case_timeout_s: every job reported once, hung ones timed out."""

from __future__ import annotations

import _thread
import threading

import pytest

from zeroclaw_eval.run.supervise import Supervisor


def supervise(
    count: int, job: object, *, workers: int = 1, timeout_s: float = 30
) -> tuple[dict[int, str], Supervisor[str]]:
    results: dict[int, str] = {}

    def finished(index: int, result: str) -> None:
        assert index not in results, f"job {index} reported twice"
        results[index] = result

    supervisor: Supervisor[str] = Supervisor(
        count, job, finished, lambda index: "timed out", workers=workers, timeout_s=timeout_s
    )  # type: ignore[arg-type]
    supervisor.run()
    return results, supervisor


def test_every_job_is_reported_once() -> None:
    results, supervisor = supervise(500, lambda index: f"job {index}")
    assert results == {index: f"job {index}" for index in range(500)}
    assert supervisor.started == set(range(500))


def test_a_hung_job_times_out_and_the_rest_still_run() -> None:
    release = threading.Event()

    def job(index: int) -> str:
        if index == 1:
            release.wait()  # hangs until the test ends
        return "done"

    try:
        results, _ = supervise(4, job, timeout_s=0.2)
    finally:
        release.set()
    assert results == {0: "done", 1: "timed out", 2: "done", 3: "done"}


def test_up_to_workers_jobs_run_at_once() -> None:
    lock = threading.Lock()
    running = peak = 0
    all_in = threading.Barrier(4, timeout=10)

    def job(index: int) -> str:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        if index < 4:
            all_in.wait()  # the first four meet: only possible if four run at once
        with lock:
            running -= 1
        return "done"

    results, _ = supervise(12, job, workers=4)
    assert len(results) == 12
    assert peak == 4


def test_an_interruption_abandons_the_workers() -> None:
    started = threading.Event()
    release = threading.Event()

    def job(index: int) -> str:
        started.set()
        release.wait()
        return "late"

    reported: list[int] = []
    supervisor: Supervisor[str] = Supervisor(
        3, job, lambda index, result: reported.append(index), lambda index: "t", timeout_s=30
    )

    def interrupt() -> None:
        started.wait()
        _thread.interrupt_main()  # as Ctrl-C does

    threading.Thread(target=interrupt).start()
    with pytest.raises(KeyboardInterrupt):
        supervisor.run()
    workers = [t for t in threading.enumerate() if t.name.startswith("zeroclaw-eval worker")]
    release.set()
    for worker in workers:
        worker.join(timeout=5)  # the cut-short job returns now...
    assert supervisor.started == {0}
    assert reported == []  # ...and its result is dropped
