"""Time the run history: appending a large run, comparing two runs in a long history,
and what keeping a history adds to an ordinary ``zeroclaw eval run``.

    .venv/bin/python benchmarks/history.py             # 9 rounds of each
    .venv/bin/python benchmarks/history.py --runs 15

- append: one run of 10,000 cases (three checks each) appended to a history that
  already holds the earlier rounds' runs, through :func:`open_history` (open,
  schema check, one transaction);
- compare: ``compare`` between the latest two runs of a history of 200 runs of
  1,000 cases each, in-process (open, find the runs, read their attempts,
  classify with Fisher's test) and as a whole ``zeroclaw eval compare`` process;
- run: ``zeroclaw eval run`` on the shipped suite (evals/regression) from the
  project's work tree, with a history (git state included) and with
  ``--no-history``, interleaved round by round so that load from elsewhere hits
  both alike.

Each row prints the median, fastest and slowest of its rounds; the last line the
ratio of the two ``run`` medians (wall and CPU).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from zeroclaw_eval.history.compare import compare
from zeroclaw_eval.history.recorder import NO_HISTORY_ENV
from zeroclaw_eval.history.store import RunInfo, open_history
from zeroclaw_eval.report.model import CaseReport, CheckResult, SuiteReport

PROJECT = Path(__file__).resolve().parent.parent
ZEROCLAW = Path(sys.executable).with_name("zeroclaw")


def suite_report(cases: int, seed: int) -> SuiteReport:
    """A report of ``cases`` cases with three checks each; about one in seven fails."""
    reports = tuple(
        CaseReport(
            f"case-{i:05d}",
            f"evals/generated/case_{i:05d}.json",
            (
                CheckResult(f'response_contains: "token-{i}"', True, "found at offset 12"),
                CheckResult("exact_tool_calls: 1", True, "observed 1 call: echo"),
                CheckResult(
                    f'tool_results_contain: echo "token-{i}"',
                    (i + seed) % 7 != 0,
                    'not found in the result: observed "(empty)"',
                ),
            ),
            None,
            0.0002,
            (),
            30,
            15,
        )
        for i in range(cases)
    )
    return SuiteReport("evals/generated", reports, config_digest="0123456789abcdef")


INFO = RunInfo("2026-12-03T00:00:00Z", 2.5, git_commit="0" * 40, git_dirty=False)


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def child(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process, which must exit 0."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)}: exited {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime


def row(name: str, seconds: list[float], note: str = "") -> None:
    print(
        f"| {name} | {statistics.median(seconds):.3f} | {min(seconds):.3f} | "
        f"{max(seconds):.3f} | {note} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="measured rounds of each row")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()}")
        print("| row | median s | min s | max s | note |")
        print("| --- | ---: | ---: | ---: | --- |")

        big = suite_report(10_000, 0)
        appends = []
        for _ in range(args.runs):

            def append() -> None:
                with open_history(tmp / "append.sqlite") as history:
                    history.append(big, INFO)

            appends.append(timed(append))
        row("append 10,000-case run", appends, f"into a history of up to {args.runs} such runs")

        long_history = tmp / "long.sqlite"
        started = time.perf_counter()
        with open_history(long_history) as history:
            for run in range(200):
                history.append(suite_report(1_000, run), INFO)
        built = time.perf_counter() - started
        size = long_history.stat().st_size / 2**20

        def compare_latest() -> None:
            with open_history(long_history, create=False) as history:
                head, base = history.runs("evals/generated", 2)
                result = compare(
                    base, head, history.attempts([base.id]), history.attempts([head.id])
                )
                assert len(result.changes) == 1_000

        compares = [timed(compare_latest) for _ in range(args.runs)]
        row(
            "compare, 200 runs x 1,000 cases",
            compares,
            f"in-process; history built in {built:.1f} s, {size:.0f} MiB",
        )
        env = {**os.environ, NO_HISTORY_ENV: ""}
        compare_cli = [str(ZEROCLAW), "eval", "compare", "--history", str(long_history)]
        walls = [child(compare_cli, tmp, env)[0] for _ in range(args.runs)]
        row("zeroclaw eval compare, same history", walls, "whole process")

        suite = str(PROJECT / "evals" / "regression")
        with_history = [
            str(ZEROCLAW),
            "eval",
            "run",
            "--suite",
            suite,
            "--history",
            str(tmp / "run.sqlite"),
        ]
        without = [str(ZEROCLAW), "eval", "run", "--suite", suite, "--no-history"]
        child(with_history, PROJECT, env)  # warm-up: bytecode cache, history created
        child(without, PROJECT, env)
        timings: dict[str, list[tuple[float, float]]] = {"with": [], "without": []}
        for _ in range(args.runs):
            timings["with"].append(child(with_history, PROJECT, env))
            timings["without"].append(child(without, PROJECT, env))
        with open_history(tmp / "run.sqlite", create=False) as history:
            recorded = len(history.runs())
        if recorded != args.runs + 1:  # a fast run that recorded nothing is not a result
            sys.exit(f"the history holds {recorded} runs, not {args.runs + 1}")
        for name, label in (("without", "run, --no-history"), ("with", "run, with history")):
            cpu = statistics.median(c for _, c in timings[name])
            row(f"{label} (shipped suite)", [w for w, _ in timings[name]], f"cpu {cpu:.3f} s")
        wall_ratio = statistics.median(w for w, _ in timings["with"]) / statistics.median(
            w for w, _ in timings["without"]
        )
        cpu_ratio = statistics.median(c for _, c in timings["with"]) / statistics.median(
            c for _, c in timings["without"]
        )
        print(
            f"history / no history: wall x{wall_ratio:.3f}, cpu x{cpu_ratio:.3f} (target <= 1.10)"
        )


if __name__ == "__main__":
    main()
