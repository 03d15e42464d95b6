"""Time the real ``zeroclaw`` console script as whole processes, next to the dependency floor.

    .venv/bin/python benchmarks/run.py                 # 1 warm-up + 15 measured rounds
    .venv/bin/python benchmarks/run.py --runs 31 --only W1 W3
    .venv/bin/python benchmarks/run.py --baseline ../other/.venv/bin/zeroclaw

The workloads are generated into a temporary directory:

- W1: a suite of 1 case (one turn, scripted text, one ``response_contains``), run
  with the default settings: no configuration file, so the run history is on;
- W1 no-history: W1 with ``--no-history``, to show what the history costs;
- W1 git: W1 in a git work tree, where the history also records the commit (a
  ``git status`` in the background);
- W2: 1,000 such text cases, distinct inputs;
- W3: 1,000 cases each with one scripted ``echo`` call and a final text, graded on
  the response, ``exact_tool_calls`` and ``tool_results_contain``;
- W4: 10,000 W3 cases, to show how cost grows with suite size;
- floor: ``python -c`` importing pydantic, click and pluggy and defining one pydantic
  model: the dependency floor, the least any Python tool that validates with
  pydantic pays before its own code runs (the first model class imports
  ``pydantic.main`` and pydantic's plugin loader, which reads every installed
  distribution). ``imports`` is the imports alone, ``imports+json`` the imports and
  ``json.loads`` of W3's 1,000 files.

Every measurement is a fresh child process, timed from spawn to exit; its CPU
time and peak RSS are read from ``os.wait4`` (that child's own rusage, with the
children it waited for, not a maximum over all processes). Workloads are
interleaved round by round, in reverse order every other round, so that a burst
of load from elsewhere on the machine, and a workload's place in the round,
weigh on all of them alike; the ``x floor`` and ``x base`` columns are the median
of each round's ratio, which cancels most of what is left. Each
command must exit 0 and report every case passed, or the script stops: a fast
wrong answer is not a result.
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
IMPORTS_CODE = "import pydantic, click, pluggy"
FLOOR_CODE = "import pydantic, click, pluggy\nclass M(pydantic.BaseModel):\n    x: int\n"
IMPORTS_JSON_CODE = (
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
    directory.mkdir(parents=True)
    width = len(str(count))
    for i in range(count):
        text = json.dumps(make(i), indent=2)
        (directory / f"case_{i:0{width}d}.json").write_text(text, encoding="utf-8")


def git_checkout(directory: Path) -> None:
    """Make ``directory`` a git work tree with one commit (a W1 suite in ``w1``)."""
    write_suite(directory / "w1", 1, text_case)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
    }
    for argv in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "w1"]):
        subprocess.run(argv, cwd=directory, env=env, check=True, capture_output=True)


@dataclass
class Workload:
    name: str
    cases: int
    argv: list[str]
    suite: str | None = None
    cwd: str = ""
    """Where it runs, below the temporary directory: each suite is a project of its
    own (``w3/w3/*.json``, its history in ``w3/.zeroclaw``), so that one workload's
    history rows never weigh on another's appends."""
    floor_target: float | None = None
    """The most ``x floor`` may be."""
    target_rss_mib: float | None = None
    target_s: float | None = None
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_mib: list[float] = field(default_factory=list)


def child_env(root: Path) -> dict[str, str]:
    """The environment of every measured child: bytecode cached, as after an install.

    An install compiles every module once (pip does, or the first run does); a
    shell with ``PYTHONDONTWRITEBYTECODE`` set would instead recompile each module
    from source on every run, which measures the compiler, not the tool. The cache
    goes to a directory of its own, filled by the warm-up round, so the source tree
    is left untouched. ``ZEROCLAW_EVAL_NO_HISTORY`` is dropped: W1 runs with the
    default settings, history on.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("ZEROCLAW_EVAL_NO_HISTORY", None)
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


def paired(mine: list[float], reference: list[float]) -> float:
    """The median of the round-by-round ratios ``mine / reference``."""
    return statistics.median(m / r for m, r in zip(mine, reference, strict=True))


def report(workloads: list[Workload]) -> str:
    by_name = {w.name: w for w in workloads}
    floor = by_name["floor"]
    header = (
        f"{'workload':<20}{'cases':>7}{'median s':>10}{'min s':>8}{'max s':>8}"
        f"{'x floor':>9}{'x base':>8}{'ms/case':>9}{'cpu s':>8}{'RSS MiB':>9}  target"
    )
    lines = [header, "-" * len(header)]
    for w in workloads:
        if not w.seconds:
            continue
        median = statistics.median(w.seconds)
        ratio = paired(w.seconds, floor.seconds)
        is_base = w.name.endswith(" base")
        base = None if is_base else by_name.get(f"{w.name} base")
        versus = f"{paired(w.seconds, base.seconds):.3f}" if base and base.seconds else "-"
        # Cost of each case beyond the first: flat across W2/W3/W4 means linear growth.
        per_case = "-"
        w1 = by_name.get("W1 base" if is_base else "W1")
        if w1 is not None and w1.seconds and w.cases > 1:
            per_case = f"{(median - statistics.median(w1.seconds)) / (w.cases - 1) * 1000:.3f}"
        rss = statistics.median(w.rss_mib)
        targets = []
        if w.floor_target is not None:
            ok = "ok" if ratio <= w.floor_target else "MISSED"
            targets.append(f"<= {w.floor_target:g} x floor {ok}")
        if w.target_s is not None:
            ok = "ok" if median <= w.target_s else "MISSED"
            targets.append(f"<= {w.target_s:g} s {ok}")
        if w.target_rss_mib is not None:
            ok = "ok" if rss <= w.target_rss_mib else "MISSED"
            targets.append(f"<= {w.target_rss_mib:g} MiB {ok}")
        lines.append(
            f"{w.name:<20}{w.cases:>7}{median:>10.3f}{min(w.seconds):>8.3f}"
            f"{max(w.seconds):>8.3f}{ratio:>9.3f}{versus:>8}{per_case:>9}"
            f"{statistics.median(w.cpu):>8.3f}{rss:>9.1f}  {', '.join(targets)}"
        )
    for suffix in ("", " base"):
        on, off = by_name.get("W1" + suffix), by_name.get("W1 no-history" + suffix)
        if on and off and on.seconds and off.seconds:
            share = 1 - paired(off.seconds, on.seconds)
            lines.append(
                f"the run history's share of W1{suffix}: {share:.1%} "
                "(1 - W1 no-history / W1, paired by round)"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="measured rounds (default 15)")
    parser.add_argument(
        "--warmup", type=int, default=1, help="unmeasured rounds first (at least 1)"
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="workloads to run (the floors always run), e.g. W1 W3",
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
        Workload("imports", 0, [python, "-c", IMPORTS_CODE]),
        Workload("imports+json", 0, [python, "-c", IMPORTS_JSON_CODE], "w3", cwd="w3"),
    ]
    for label, script in scripts.items():
        # Each install runs in its own copy of the workloads, so has its own history:
        # one of another schema version would refuse the other's file.
        own = "-base" if label else ""

        def run(suite: str, *more: str, script: Path = script) -> list[str]:
            return [str(script), "eval", "run", "--suite", suite, *more]

        workloads += [
            Workload(f"W1{label}", 1, run("w1"), "w1" + own, "w1" + own, floor_target=1.15),
            Workload(f"W1 no-history{label}", 1, run("w1", "--no-history"), "w1" + own, "w1" + own),
            Workload(f"W1 git{label}", 1, run("w1"), "git" + own, "git" + own),
            Workload(f"W2{label}", 1_000, run("w2"), "w2" + own, "w2" + own),
            Workload(
                f"W3{label}",
                1_000,
                run("w3"),
                "w3" + own,
                "w3" + own,
                floor_target=2.0,
                target_rss_mib=60,
            ),
            Workload(f"W4{label}", 10_000, run("w4"), "w4" + own, "w4" + own, target_s=3.0),
        ]
    if args.only:
        wanted = {name.lower() for name in args.only} | {"floor", "imports"}
        workloads = [w for w in workloads if w.name.split()[0].lower() in wanted]
    needed = {w.suite for w in workloads}

    with tempfile.TemporaryDirectory(prefix="zeroclaw-bench-") as tmp:
        root = Path(tmp)
        print(f"generating workloads in {root} ...", file=sys.stderr)
        suites = {"w1": (1, text_case), "w2": (1_000, text_case)}
        suites |= {"w3": (1_000, echo_case), "w4": (10_000, echo_case)}
        for suite, (count, make) in suites.items():
            for copy in (suite, suite + "-base"):
                if copy in needed:
                    write_suite(root / copy / suite, count, make)
        for copy in ("git", "git-base"):
            if copy in needed:
                git_checkout(root / copy)

        print(
            f"{args.warmup} warm-up + {args.runs} measured rounds, interleaved; "
            f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}",
            file=sys.stderr,
        )
        env = child_env(root)
        for round_no in range(args.warmup + args.runs):
            # Every other round runs the workloads in reverse: a workload's place
            # in the round (right after a heavy one, say) then weighs on all alike.
            for w in workloads if round_no % 2 == 0 else workloads[::-1]:
                elapsed, cpu, rss, stdout = measure(w, root / w.cwd, env)
                check_output(w, stdout)
                if round_no >= args.warmup:
                    w.seconds.append(elapsed)
                    w.cpu.append(cpu)
                    w.rss_mib.append(rss)
            print(f"  round {round_no + 1} done", file=sys.stderr)

    print(report(workloads))
    print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
