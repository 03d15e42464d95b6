"""A whole bridged suite, end to end: 1,000 one-tool cases through a team's own agent.

    .venv/bin/python benchmarks/bridged_suite.py [--cases 1000] [--rounds 3]
    .venv/bin/python benchmarks/bridged_suite.py --baseline /other/checkout/.venv/bin/zeroclaw

The fixtures are W3 of ``benchmarks/run.py`` (one scripted ``echo`` call, then a
final text; graded by ``response_contains``, ``exact_tool_calls`` and
``tool_results_contain``). Each row is a fresh ``zeroclaw eval run`` process,
from spawn to exit, on the same suite, rows interleaved round by round:

- ``reference``: the built-in loop, one case at a time (the default);
- ``notes 1-way``: the example agent of ``examples/agents/openai_sdk`` (official
  ``openai`` SDK, streaming, its own ``echo`` tool), attached in-process with
  ``[eval.agent] factory``, every model call going through the loopback bridge;
- ``notes 8-way``: the same with ``max_concurrency = 8``;
- ``urllib 8-way``: the stdlib agent of ``tests/agents/echo_agent.py`` (``urllib``,
  no SDK), 8-way: what the harness and the bridge cost when the client is thin.

Columns: the median, fastest and slowest wall time, the median per case, the
median CPU time of the process (user + system, of the reaped child), and the ratio
of the median to the reference row's. Target: the 8-way row under 10 s for 1,000
cases. Each run must exit 0 and report every case passed, or the script stops.

``--baseline`` adds every row run by another install (rows ``... base``),
interleaved with this one's: the only fair before/after on a shared machine. Its
agents are those of the checkout its ``zeroclaw`` sits in (``.venv/bin`` inside
the project), so a change to an example agent is measured too.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
ZEROCLAW = Path(sys.executable).with_name("zeroclaw")

sys.path.insert(0, str(PROJECT / "benchmarks"))
from run import echo_case, write_suite  # noqa: E402

#: Seconds the 8-way row may take for 1,000 cases.
TARGET_S = 10.0


def agent_path(project: Path) -> str:
    """Where the example agents of ``project`` are imported from."""
    agents = (project / "examples" / "agents" / "openai_sdk", project / "tests" / "agents")
    return os.pathsep.join(map(str, agents))


@dataclass
class Row:
    name: str
    config: str
    target_s: float | None = None
    zeroclaw: Path = ZEROCLAW
    agents: str = agent_path(PROJECT)
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def measure(row: Row, root: Path, suite: Path, cases: int) -> None:
    config = root / f"{row.name.replace(' ', '-')}.toml"
    config.write_text(row.config, encoding="utf-8")
    # The example agent's module is found beside its own configuration in the
    # project; here the configuration is a temporary file, so say where it is.
    # No run history: the rows measure the agent and the bridge, and a baseline
    # install may read an older history schema than this one writes.
    env = {**os.environ, "PYTHONPATH": row.agents, "ZEROCLAW_EVAL_NO_HISTORY": "1"}
    argv = [str(row.zeroclaw), "eval", "run", "--config", str(config), "--suite", str(suite)]
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=root
    )
    stdout, stderr = process.communicate()
    elapsed = time.perf_counter() - started
    if process.returncode != 0 or f"{cases}/{cases} cases passed" not in stdout.decode():
        tail = (stdout.decode()[-600:] + stderr.decode()[-600:]).strip()
        sys.exit(f"{row.name}: exit {process.returncode}, not every case passed:\n{tail}")
    row.seconds.append(elapsed)


def cpu_of_children() -> float:
    """User + system CPU of every child reaped so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another install's zeroclaw script, in .venv/bin of its project checkout",
    )
    args = parser.parse_args()
    factory = '[eval.agent]\nfactory = "notes_agent:make_agent"\n'
    rows = [
        Row("reference", "[eval]\n"),
        Row("notes 1-way", factory),
        Row("notes 8-way", factory + "max_concurrency = 8\n", TARGET_S * args.cases / 1000),
        Row(
            "urllib 8-way", '[eval.agent]\nfactory = "echo_agent:make_agent"\nmax_concurrency = 8\n'
        ),
    ]
    if args.baseline is not None:
        baseline = args.baseline.absolute()
        project = baseline.parent.parent.parent
        rows += [
            Row(f"{row.name} base", row.config, row.target_s, baseline, agent_path(project))
            for row in rows
        ]
    with tempfile.TemporaryDirectory(prefix="zeroclaw-bridged-bench-") as tmp:
        root = Path(tmp)
        suite = root / "suite"
        write_suite(suite, args.cases, echo_case)
        print(f"load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
        for round_no in range(args.rounds):
            for row in rows:
                before = cpu_of_children()
                measure(row, root, suite, args.cases)
                row.cpu.append(cpu_of_children() - before)
            print(f"  round {round_no + 1} done", file=sys.stderr)
        print(f"load average after: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    base = statistics.median(rows[0].seconds)
    header = (
        f"{'row':<18}{'cases':>7}{'median s':>10}{'min s':>8}{'max s':>8}"
        f"{'ms/case':>9}{'cpu s':>8}{'x ref':>7}  target"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        median = statistics.median(row.seconds)
        target = ""
        if row.target_s is not None:
            target = f"<= {row.target_s:g} s {'ok' if median <= row.target_s else 'MISSED'}"
        print(
            f"{row.name:<18}{args.cases:>7}{median:>10.2f}{min(row.seconds):>8.2f}"
            f"{max(row.seconds):>8.2f}{median / args.cases * 1000:>9.2f}"
            f"{statistics.median(row.cpu):>8.2f}{median / base:>7.2f}  {target}"
        )


if __name__ == "__main__":
    main()
