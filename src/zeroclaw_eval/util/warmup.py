"""One-time set-up of the harness, kept out of the time of the case that triggered it.

Some of the harness's machinery starts on first use (the regex worker process,
about a tenth of a second): the case that happens to use it first would be
charged for it, in its report, in the history, and so in how ``--shard`` weighs it
(one case weighing a hundred times the others made shards of 1, 12 and 11
cases). That set-up is wrapped in :func:`setting_up`, which adds its time to a
per-thread tally; the runner takes the tally's growth out of the case's time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_tally = threading.local()


def set_up_s() -> float:
    """Seconds this thread has spent setting the harness up so far."""
    seconds: float = getattr(_tally, "seconds", 0.0)
    return seconds


@contextmanager
def setting_up() -> Iterator[None]:
    """Count what runs inside as set-up of the harness, not as the current case's time."""
    started = time.perf_counter()
    try:
        yield
    finally:
        _tally.seconds = set_up_s() + time.perf_counter() - started
