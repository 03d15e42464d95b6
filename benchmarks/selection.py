"""What choosing cases costs: ``--shard`` (by count and by durations) and ``-k``.

Run: ``.venv/bin/python benchmarks/selection.py [CASES] [SHARDS]``. Prints medians
of several rounds for a suite of CASES cases (default 10,000) cut into SHARDS
shards (default 64), next to sorting the same cases by path, the least any
deterministic slicing must do:

- ``sort``: the cases sorted by (path, name);
- ``shard by count``: every shard's slice, one ``shard()`` call per shard;
- ``shard by durations``: the same, dealing cases longest first by recorded durations;
- ``-k``: ``(alpha or beta) and not gamma`` evaluated against every case.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from zeroclaw_eval.selection.keyword import Expression, substring_matcher
from zeroclaw_eval.selection.shard import shard

ROUNDS = 5


@dataclass(frozen=True)
class Case:
    name: str
    source: str


def median_s(work: Callable[[], object]) -> float:
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    shards = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    rng = random.Random(0)
    words = ("alpha", "beta", "gamma", "delta")
    cases = [
        Case(f"{rng.choice(words)}-{i}", f"evals/suite/{rng.choice(words)}_{i:05}.json")
        for i in range(count)
    ]
    durations = {case.name: rng.uniform(0.01, 5.0) for case in cases}
    expression = Expression.compile("(alpha or beta) and not gamma")

    def all_shards(recorded: dict[str, float] | None) -> int:
        return sum(len(shard(cases, k, shards, recorded)) for k in range(1, shards + 1))

    assert all_shards(None) == all_shards(durations) == count
    rows = {
        "sort": median_s(lambda: sorted(cases, key=lambda c: (c.source, c.name))),
        "shard by count": median_s(lambda: all_shards(None)) / shards,
        "shard by durations": median_s(lambda: all_shards(durations)) / shards,
        "-k": median_s(
            lambda: [c for c in cases if expression.evaluate(substring_matcher(c.name, c.source))]
        ),
    }
    base = rows["sort"]
    print(f"{count} cases, {shards} shards; median of {ROUNDS} rounds, per shard for shard rows")
    for label, seconds in rows.items():
        print(f"{label:20} {seconds * 1000:9.2f} ms  {seconds / base:6.1f}x sort")


if __name__ == "__main__":
    main()
