"""Time ``eval merge``, ``eval schema`` and the pytest plugin as whole processes.

    .venv/bin/python benchmarks/ecosystem.py              # 1 warm-up + 7 measured rounds
    .venv/bin/python benchmarks/ecosystem.py --runs 15

Workloads, generated into a temporary directory:

- ``merge 64x10k``: ``zeroclaw eval merge`` of 64 shard reports of a 10,000-case
  suite (the W4 cases of run.py) into one JSON report. The shards are the real
  JSON report of the whole suite dealt into 64 contiguous ``--shard K/64``
  documents, as the shard runs write them;
- ``schema``: ``zeroclaw eval schema`` (every installed family);
- ``run 1`` / ``run 1000``: ``zeroclaw eval run`` on 1 and on 1,000 W3 cases;
- ``pytest 1`` / ``pytest 1000``: ``python -m pytest --zeroclaw-suite`` on the
  same suites, through the pytest-zeroclaw-eval plugin;
- ``floor``: the dependency floor of ``run.py``: ``python -c`` importing pydantic, click and
  pluggy and defining one model.

The pytest plugin's per-case overhead is read side by side: each tool's cost per
case beyond the first, ``(T(1000) - T(1)) / 999``, and the ratio of the two.
Every measurement is a fresh child process (see run.py); workloads are
interleaved round by round. Each must exit 0 with the expected verdict, or the
script stops.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from run import BIN, FLOOR_CODE, child_env, echo_case, write_suite

SHARDS = 64
MERGE_CASES = 10_000
PLUGIN_CASES = 1_000


@dataclass
class Workload:
    name: str
    argv: list[str]
    expect: str
    """A line the output must end with (the verdict), or "" for no check."""
    target_s: float | None = None
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def measure(workload: Workload, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Run once as a fresh child: wall seconds and CPU seconds; the verdict is checked."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        child = subprocess.Popen(
            workload.argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        stderr = child.stderr.read().decode() if child.stderr else ""
        if child.stderr:
            child.stderr.close()
        out.seek(0)
        stdout = out.read().decode()
    if code != 0:
        sys.exit(f"{workload.name} exited {code}:\n{stderr}{stdout[-2000:]}")
    if workload.expect and workload.expect not in stdout.rstrip("\n").rsplit("\n", 1)[-1]:
        sys.exit(f"{workload.name}: expected {workload.expect!r}, got {stdout[-300:]!r}")
    return elapsed, usage.ru_utime + usage.ru_stime


def shard_reports(root: Path, suite: str, zeroclaw: Path, env: dict[str, str]) -> None:
    """Run the whole suite once and write its report as 64 contiguous shard reports."""
    done = subprocess.run(
        [str(zeroclaw), "eval", "run", "--suite", suite, "--format", "json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    whole: dict[str, Any] = json.loads(done.stdout)
    cases = whole["cases"]
    base, extra = divmod(len(cases), SHARDS)
    start = 0
    for index in range(1, SHARDS + 1):
        size = base + (1 if index <= extra else 0)
        part = cases[start : start + size]
        start += size
        doc = {
            **whole,
            "cases": part,
            "total": len(part),
            "passed": sum(1 for case in part if case["passed"]),
            "failed": sum(1 for case in part if not case["passed"]),
            "all_passed": all(case["passed"] for case in part) and bool(part),
            "shard": {"index": index, "count": SHARDS},
            "suite_total": len(cases),
        }
        (root / f"shard-{index:02}.json").write_text(json.dumps(doc), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="measured rounds (default 7)")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured rounds first")
    args = parser.parse_args()
    zeroclaw = BIN / "zeroclaw"
    python = sys.executable
    try:
        import pytest_zeroclaw_eval  # noqa: F401
    except ImportError:
        sys.exit(
            "pytest-zeroclaw-eval is not installed: pip install -e plugins/pytest-zeroclaw-eval"
        )

    with tempfile.TemporaryDirectory(prefix="zeroclaw-eco-bench-") as tmp:
        root = Path(tmp)
        print(f"generating workloads in {root} ...", file=sys.stderr)
        write_suite(root / "w1", 1, echo_case)
        write_suite(root / "w3", PLUGIN_CASES, echo_case)
        write_suite(root / "w4", MERGE_CASES, echo_case)
        env = child_env(root)
        shard_reports(root, "w4", zeroclaw, env)
        shards = sorted(str(path) for path in root.glob("shard-*.json"))

        plain = root / "plain"
        plain.mkdir()
        for count in (1, PLUGIN_CASES):
            body = "".join(f"def test_{i}():\n    pass\n\n\n" for i in range(count))
            (plain / f"test_plain_{count}.py").write_text(body, encoding="utf-8")

        def pytest_argv(*args: str) -> list[str]:
            return [python, "-m", "pytest", *args, "-q", "-p", "no:cacheprovider"]

        workloads = [
            Workload("floor", [python, "-c", FLOOR_CODE], ""),
            Workload(
                f"merge {SHARDS}x10k",
                [str(zeroclaw), "eval", "merge", *shards],
                f"{MERGE_CASES}/{MERGE_CASES} cases passed",
                target_s=1.0,
            ),
            Workload(
                "merge json",
                [str(zeroclaw), "eval", "merge", *shards, "--format", "json"],
                "}",
            ),
            Workload("schema", [str(zeroclaw), "eval", "schema"], "}", target_s=1.0),
            Workload("run 1", [str(zeroclaw), "eval", "run", "--suite", "w1"], "1/1 cases passed"),
            Workload(
                "run 1000",
                [str(zeroclaw), "eval", "run", "--suite", "w3"],
                f"{PLUGIN_CASES}/{PLUGIN_CASES} cases passed",
            ),
            Workload("pytest 1", pytest_argv("--zeroclaw-suite", "w1"), "1 passed"),
            Workload(
                "pytest 1000",
                pytest_argv("--zeroclaw-suite", "w3"),
                f"{PLUGIN_CASES} passed",
            ),
            Workload("plain 1", pytest_argv("plain/test_plain_1.py"), "1 passed"),
            Workload(
                "plain 1000",
                pytest_argv(f"plain/test_plain_{PLUGIN_CASES}.py"),
                f"{PLUGIN_CASES} passed",
            ),
        ]
        print(
            f"{args.warmup} warm-up + {args.runs} measured rounds, interleaved; "
            f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}",
            file=sys.stderr,
        )
        for round_no in range(args.warmup + args.runs):
            for w in workloads:
                elapsed, cpu = measure(w, root, env)
                if round_no >= args.warmup:
                    w.seconds.append(elapsed)
                    w.cpu.append(cpu)
            print(f"  round {round_no + 1} done", file=sys.stderr)

    header = f"{'workload':<14}{'median s':>10}{'min s':>8}{'max s':>8}{'cpu s':>8}  target"
    print(header)
    print("-" * len(header))
    medians = {}
    for w in workloads:
        median = statistics.median(w.seconds)
        medians[w.name] = median
        target = ""
        if w.target_s is not None:
            target = f"< {w.target_s:g} s {'ok' if median < w.target_s else 'MISSED'}"
        print(
            f"{w.name:<14}{median:>10.3f}{min(w.seconds):>8.3f}"
            f"{max(w.seconds):>8.3f}{statistics.median(w.cpu):>8.3f}  {target}"
        )

    def per_case(tool: str, samples: str) -> float:
        """Milliseconds per case beyond the first, from the medians of ``samples``."""
        one = statistics.median(getattr(by_name[f"{tool} 1"], samples))
        many = statistics.median(getattr(by_name[f"{tool} 1000"], samples))
        return (many - one) / (PLUGIN_CASES - 1) * 1000

    by_name = {w.name: w for w in workloads}
    print()
    print("per case beyond the first (ms):  wall    cpu")
    for tool, label in (
        ("run", "zeroclaw eval run"),
        ("pytest", "pytest plugin"),
        ("plain", "pytest, empty test"),
    ):
        print(f"  {label:<28}{per_case(tool, 'seconds'):>7.3f}{per_case(tool, 'cpu'):>7.3f}")
    for samples in ("seconds", "cpu"):
        ratio = per_case("pytest", samples) / per_case("run", samples)
        print(f"pytest plugin / zeroclaw eval run, per case ({samples}): {ratio:.2f}")
    print(
        f"whole process on {PLUGIN_CASES} cases: "
        f"{medians['pytest 1000'] / medians['run 1000']:.2f} x zeroclaw eval run"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
