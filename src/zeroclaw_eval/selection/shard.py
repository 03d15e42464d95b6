"""Sharding: the deterministic slice of a suite that one CI job runs (``--shard K/N``).

Every machine of a CI matrix must cut the suite the same way, whatever its
Python version or hash seed, so nothing here uses ``hash()`` or the order files
come off the disk: cases are ordered by a stable key (the fixture's path relative
to where the suite is named from, then the case name). Every case lands in
exactly one shard.

Without durations, shards are contiguous runs of that order whose sizes differ by
at most one. With durations (case name -> seconds, from a run history), cases are
dealt greedily, longest first, to the shard with the least work so far; a case
with no recorded duration counts as the mean of those recorded. A duration under
:data:`NOISE_FLOOR_S` counts as that floor: below it a recording says more about
the machine (a scheduler pause, another process) than about the case, and one
such hiccup among sub-millisecond cases must not leave a shard with one case
while the others split the rest.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar


class Named(Protocol):
    """What sharding needs of a case: its name and the fixture it came from."""

    @property
    def name(self) -> str: ...

    @property
    def source(self) -> str: ...


C = TypeVar("C", bound=Named)

#: The least a recorded duration weighs, in seconds (see the module's docstring).
NOISE_FLOOR_S = 0.01


@dataclass(frozen=True)
class ShardSpec:
    """``--shard K/N``: the ``index``-th (from 1) of ``count`` shards."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise ValueError(f"{self}: expected K/N with 1 <= K <= N, e.g. 2/4")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        """``"2/4"`` -> ``ShardSpec(2, 4)``. Raises :class:`ValueError` with a one-line reason."""
        index, slash, count = text.strip().partition("/")
        if not slash or not index.strip().isdecimal() or not count.strip().isdecimal():
            raise ValueError(f"{text!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
        try:
            return cls(int(index), int(count))
        except ValueError:
            raise ValueError(f"{text!r}: expected K/N with 1 <= K <= N, e.g. 2/4") from None


def source_key(case: Named) -> str:
    """The default order key: the fixture's path as written, with ``/`` separators."""
    return case.source.replace("\\", "/")


def shard(
    cases: Sequence[C],
    index: int,
    count: int,
    durations: Mapping[str, float] | None = None,
    *,
    key: Callable[[C], str] = source_key,
) -> list[C]:
    """The cases of shard ``index`` (1 to ``count``), in the order they were given.

    ``key`` orders the cases before they are dealt; it must not depend on the
    machine (a path relative to the suite, not an absolute one). ``durations``
    maps case names to seconds; without it (or when it is empty) the shards are
    balanced by case count. Raises :class:`ValueError` for an index outside 1..count.
    """
    ShardSpec(index, count)  # validates
    ordered = sorted(range(len(cases)), key=lambda i: (key(cases[i]), cases[i].name))
    known = _usable(durations or {})
    if not known:
        base, extra = divmod(len(ordered), count)
        start = (index - 1) * base + min(index - 1, extra)
        size = base + (1 if index <= extra else 0)
        chosen = set(ordered[start : start + size])
    else:
        default = math.fsum(known.values()) / len(known)
        weight = {i: known.get(cases[i].name, default) for i in ordered}
        # Longest first; equal durations in name order, then key order (already sorted).
        dealing = sorted(ordered, key=lambda i: (-weight[i], cases[i].name))
        # The least loaded shard, ties to the lowest index: (load, shard) on a heap.
        loads = [(0.0, s) for s in range(count)]
        chosen = set()
        for i in dealing:
            load, target = heapq.heappop(loads)
            heapq.heappush(loads, (load + weight[i], target))
            if target == index - 1:
                chosen.add(i)
    return [case for i, case in enumerate(cases) if i in chosen]


def _usable(durations: Mapping[str, float]) -> dict[str, float]:
    """The recorded durations that can weigh a case (finite and not negative), each at
    least :data:`NOISE_FLOOR_S`."""
    return {
        name: max(float(seconds), NOISE_FLOOR_S)
        for name, seconds in durations.items()
        if isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds >= 0
    }
