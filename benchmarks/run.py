"""Time the real ``zeroclaw`` console script as whole processes, next to the floor.

    .venv/bin/python benchmarks/run.py            # 7 rounds, every workload
    .venv/bin/python benchmarks/run.py --runs 15 --only W1 W3
    .venv/bin/python benchmarks/run.py --baseline ../other/.venv/bin/zeroclaw

The workloads are generated into a temporary directory:

- W1: a suite of 1 case (one turn, scripted text, one ``response_contains``);
- W2: 1,000 such text cases, distinct inputs;
- W3: 1,000 cases each with one scripted ``echo`` call and a final text, graded on
  the response, ``exact_tool_calls`` and ``tool_results_contain``;
- W4: 10,000 W3 cases, to show how cost grows with suite size;
- floor: ``python -c "import pydantic, click, pluggy"``, the least any Python tool
  built on our dependencies can cost; ``floor+model`` also defines one pydantic
  model (what validating with pydantic costs before any of our code runs);
  ``floor+json`` also parses W3's 1,000 files.

Every measurement is a fresh child process, timed from spawn to exit; its CPU
time and peak RSS are read from ``os.wait4`` (that child's own rusage, not a
maximum over all children). Workloads are interleaved round by round, so a burst of load from
elsewhere on the machine hits all of them alike; the ratios to the floor cancel
much of that noise. Each command must exit 0 and report every case passed, or the
script stops: a fast wrong answer is not a result.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BIN = Path(sys.executable).parent
FLOOR_CODE = "import pydantic, click, pluggy"
# What any tool that validates with a pydantic model pays before its own code runs:
# the first model class imports pydantic.main, pydantic.fields and the plugin
# loader (which imports importlib.metadata and scans every distribution).
FLOOR_MODEL_CODE = "import pydantic, click, pluggy\nclass M(pydantic.BaseModel):\n    x: int\n"
FLOOR_JSON_CODE = (
    "import json, pathlib, pydantic, click, pluggy\n"
    "for p in sorted(pathlib.Path('w3').glob('*.json')): json.loads(p.read_bytes())\n"
)


def text_case(i: int) -> dict[str, Any]:
    """W1/W2: one turn, scripted text, one ``response_contains``."""
    return {
        "model_name": f"greet-{i}",
        "turns": [
            {
                "user_input": f"Say hello to visitor {i}",
                "steps": [{"response": {"type": "text", "content": f"Hello, visitor {i}!"}}],
            }
        ],
        "expects": {"response_contains": [f"visitor {i}"]},
    }


def echo_case(i: int) -> dict[str, Any]:
    """W3/W4: one scripted ``echo`` call then a final text, graded three ways."""
    token = f"token-{i}"
    return {
        "model_name": f"echo-{i}",
        "turns": [
            {
                "user_input": f"Echo {token} for me",
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [
                                {"id": "call_1", "name": "echo", "arguments": {"message": token}}
                            ],
                            "input_tokens": 30,
                            "output_tokens": 15,
                        }
                    },
                    {
                        "response": {
                            "type": "text",
                            "content": f"The echo tool said: {token}",
                            "input_tokens": 50,
                            "output_tokens": 10,
                        }
                    },
                ],
            }
        ],
        "expects": {
            "response_contains": [token],
            "exact_tool_calls": 1,
            "tool_results_contain": [{"tool": "echo", "needle": token}],
        },
    }


def write_suite(directory: Path, count: int, make: Callable[[int], dict[str, Any]]) -> None:
    directory.mkdir()
    width = len(str(count))
    for i in range(count):
        text = json.dumps(make(i), indent=2)
        (directory / f"case_{i:0{width}d}.json").write_text(text, encoding="utf-8")


@dataclass
class Workload:
    name: str
    cases: int
    argv: list[str]
    suite: str | None = None
    target_s: float | None = None
    target_rss_mib: float | None = None
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_mib: list[float] = field(default_factory=list)


def child_env(root: Path) -> dict[str, str]:
    """The environment of every measured child: bytecode cached, as after an install.

    An install compiles every module once (pip does, or the first run does); a
    shell with ``PYTHONDONTWRITEBYTECODE`` set would instead recompile each module
    from source on every run, which measures the compiler, not the tool. The cache
    goes to a directory of its own, filled by the warm-up round, so the source tree
    is left untouched.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    return env


def measure(workload: Workload, cwd: Path, env: dict[str, str]) -> tuple[float, float, float, str]:
    """Run once as a fresh child: wall seconds, CPU seconds, peak RSS in MiB, stdout."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        child = subprocess.Popen(
            workload.argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        stderr = child.stderr.read().decode() if child.stderr else ""
        if child.stderr:
            child.stderr.close()
        out.seek(0)
        stdout = out.read().decode()
    if child.returncode != 0:
        sys.exit(f"{workload.name} exited {child.returncode}:\n{stderr}{stdout[-2000:]}")
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    rss_mib = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return elapsed, usage.ru_utime + usage.ru_stime, rss_mib, stdout


def check_output(workload: Workload, stdout: str) -> None:
    if workload.cases == 0:
        return
    expected = f"{workload.cases}/{workload.cases} cases passed"
    last = stdout.rstrip("\n").rsplit("\n", 1)[-1]
    if last != expected:
        sys.exit(f"{workload.name}: expected {expected!r}, got {last!r}")


def fmt_s(value: float) -> str:
    return f"{value:.3f}"


def report(workloads: list[Workload], floor: Workload | None) -> str:
    base = statistics.median(floor.seconds) if floor else None
    w1_medians = {
        w.name.replace("W1", "", 1): statistics.median(w.seconds)
        for w in workloads
        if w.name.startswith("W1") and w.seconds
    }
    header = (
        f"{'workload':<11}{'cases':>7}{'median s':>10}{'min s':>8}{'max s':>8}"
        f"{'x floor':>9}{'ms/case':>9}{'cpu s':>8}{'RSS MiB':>9}  target"
    )
    lines = [header, "-" * len(header)]
    for w in workloads:
        if not w.seconds:
            continue
        median = statistics.median(w.seconds)
        ratio = f"{median / base:.2f}" if base else "-"
        # Cost of each case beyond the first: flat across W2/W3/W4 means linear growth.
        per_case = "-"
        w1_median = w1_medians.get(w.name[2:]) if w.name.startswith("W") else None
        if w1_median is not None and w.cases > 1:
            per_case = f"{(median - w1_median) / (w.cases - 1) * 1000:.3f}"
        rss = statistics.median(w.rss_mib)
        targets = []
        if w.target_s is not None:
            ok = "ok" if median <= w.target_s else "MISSED"
            targets.append(f"<= {w.target_s:g} s {ok}")
        if w.target_rss_mib is not None:
            ok = "ok" if rss <= w.target_rss_mib else "MISSED"
            targets.append(f"<= {w.target_rss_mib:g} MiB {ok}")
        lines.append(
            f"{w.name:<11}{w.cases:>7}{fmt_s(median):>10}{fmt_s(min(w.seconds)):>8}"
            f"{fmt_s(max(w.seconds)):>8}{ratio:>9}{per_case:>9}"
            f"{fmt_s(statistics.median(w.cpu)):>8}{rss:>9.1f}  {', '.join(targets)}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="measured rounds (default 7)")
    parser.add_argument(
        "--warmup", type=int, default=1, help="unmeasured rounds first (at least 1)"
    )
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="workloads to run (the floors always run)"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="SCRIPT",
        help="another install's zeroclaw script, measured side by side (rows '... base')",
    )
    args = parser.parse_args()
    if args.warmup < 1:
        parser.error("--warmup must be at least 1: the first round fills the bytecode cache")

    zeroclaw = BIN / "zeroclaw"
    if not zeroclaw.exists():
        found = shutil.which("zeroclaw")
        if found is None:
            sys.exit("no zeroclaw console script: install the project first (pip install -e .)")
        zeroclaw = Path(found)
    python = sys.executable

    scripts = {"": zeroclaw}
    if args.baseline is not None:
        scripts[" base"] = args.baseline.resolve()
    workloads = [
        Workload("floor", 0, [python, "-c", FLOOR_CODE]),
        Workload("floor+model", 0, [python, "-c", FLOOR_MODEL_CODE]),
        Workload("floor+json", 0, [python, "-c", FLOOR_JSON_CODE], suite="w3"),
    ]
    for label, script in scripts.items():

        def run(suite: str, script: Path = script) -> list[str]:
            return [str(script), "eval", "run", "--suite", suite]

        workloads += [
            Workload(f"W1{label}", 1, run("w1"), "w1", target_s=0.20),
            Workload(f"W2{label}", 1_000, run("w2"), "w2"),
            Workload(f"W3{label}", 1_000, run("w3"), "w3", target_s=0.50, target_rss_mib=60),
            Workload(f"W4{label}", 10_000, run("w4"), "w4", target_s=3.0),
        ]
    if args.only:
        wanted = {name.lower() for name in args.only} | {"floor", "floor+model"}
        workloads = [w for w in workloads if w.name.split()[0].lower() in wanted]
    needed = {w.suite for w in workloads}

    with tempfile.TemporaryDirectory(prefix="zeroclaw-bench-") as tmp:
        root = Path(tmp)
        print(f"generating workloads in {root} ...", file=sys.stderr)
        suites = {"w1": (1, text_case), "w2": (1_000, text_case)}
        suites |= {"w3": (1_000, echo_case), "w4": (10_000, echo_case)}
        for suite, (count, make) in suites.items():
            if suite in needed:
                write_suite(root / suite, count, make)

        print(
            f"{args.warmup} warm-up + {args.runs} measured rounds, interleaved; "
            f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}",
            file=sys.stderr,
        )
        env = child_env(root)
        for round_no in range(args.warmup + args.runs):
            for w in workloads:
                elapsed, cpu, rss, stdout = measure(w, root, env)
                check_output(w, stdout)
                if round_no >= args.warmup:
                    w.seconds.append(elapsed)
                    w.cpu.append(cpu)
                    w.rss_mib.append(rss)
            print(f"  round {round_no + 1} done", file=sys.stderr)

    floor = next(w for w in workloads if w.name == "floor")
    print(report(workloads, floor))
    print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
