"""What the fault guards cost: the per-case timeout thread and the regex worker process.

Run: ``.venv/bin/python benchmarks/fault_guards.py [CASES]``. Prints medians of
several rounds and their ratios to the unguarded work:

- running and grading every case of the regression suite, repeated to ``CASES``
  cases, through ``run_cases`` (in a supervised worker thread, each case under
  ``case_timeout_s``) and directly on the calling thread;
- one ``response_matches`` search through the worker process, and with ``re``
  in this process.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from zeroclaw_eval import EvalConfig, Registry, get_plugin_manager, load_suite
from zeroclaw_eval.run.runner import execute, run_cases, select_mode
from zeroclaw_eval.util import regexsearch

ROUNDS = 5


def median_s(work: Callable[[], object]) -> float:
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    registry = Registry.from_plugin_manager(get_plugin_manager())
    mode = select_mode(registry, "replay")
    config = EvalConfig()
    suite = load_suite(Path(__file__).parent.parent / config.suite_dir, registry, mode)
    cases = (suite * (count // len(suite) + 1))[:count]

    guarded = median_s(lambda: run_cases(cases, mode, registry, config))
    direct = median_s(lambda: [case.grade(execute(case, mode, registry, config)) for case in cases])
    print(f"{count} cases, guarded by case_timeout_s: {guarded * 1e6 / count:8.1f} us/case")
    print(f"{count} cases, on the calling thread:     {direct * 1e6 / count:8.1f} us/case")
    print(f"  ratio guarded/direct: {guarded / direct:.2f}")

    text, pattern, searches = "ticket ZC-1234 closed", r"ZC-\d{4}", 2000
    regexsearch.search(pattern, text)  # start the worker: paid once per run
    worker = median_s(lambda: [regexsearch.search(pattern, text) for _ in range(searches)])
    local = median_s(lambda: [re.search(pattern, text) for _ in range(searches)])
    print(f"regex search in the worker process: {worker * 1e6 / searches:8.1f} us/search")
    print(f"regex search in this process:       {local * 1e6 / searches:8.1f} us/search")
    print(f"  ratio worker/local: {worker / local:.0f}")


if __name__ == "__main__":
    main()
