"""What serving an agent its tools over MCP costs a case, next to the agent's own tools.

    .venv/bin/python benchmarks/served_ratio.py examples/agents/pydantic_ai \\
        --python .matrix/pydantic_ai/bin/python [--cases 40] [--rounds 5]

Takes a stack of the conformance matrix (``examples/agents/<stack>/``: an
``agent.py`` whose ``make_agent`` runs the agent with tools of its own, or served
over streamable HTTP when given ``mcp_url``; and, if it has one, a
``make_stdio_agent`` whose framework spawns ``zeroclaw-eval-mcp-relay`` over stdio),
writes one-``echo`` cases, and times the real ``zeroclaw eval run --no-history``
of the stack's own environment (``--python``) in each attachment: ``own``,
``http`` and, where the agent has it, ``stdio``, one case at a time.

What a case costs is measured apart from the run's start (the framework's
imports): each round runs every attachment with ``--cases`` cases and with one,
interleaved, and a case's cost is the difference over ``cases - 1``, in wall time
and in CPU time (the run and its children). Prints the medians over the rounds and
the ratios to ``own`` (the targets: ``http`` at most 1.2 and ``stdio`` at most 1.3).
Every run must pass whole, or the script stops.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The attachments, each the [eval.agent] lines it adds to the stack's own.
ATTACHMENTS = {
    "own": 'factory = "agent:make_agent"\n',
    "http": 'factory = "agent:make_agent"\ntools = "served"\n',
    "stdio": 'factory = "agent:make_stdio_agent"\ntools = "served"\n',
}


def case(index: int, answer_tool: str | None) -> dict[str, object]:
    message = f"hello {index}"
    echo = {"id": "call_1", "name": "echo", "arguments": {"message": message}}
    last: dict[str, object] = {"type": "text", "content": f"The echo said: {message}"}
    if answer_tool:
        answer = {"id": "call_2", "name": answer_tool, "arguments": {"answer": message}}
        last = {"type": "tool_calls", "tool_calls": [answer]}
    return {
        "model_name": f"echo-{index}",
        "turns": [
            {
                "user_input": f"Echo {message}",
                "steps": [
                    {"response": {"type": "tool_calls", "tool_calls": [echo]}},
                    {"response": last},
                ],
            }
        ],
        "expects": {
            "tool_results_contain": [{"tool": "echo", "needle": message}],
            "response_contains": [message],
        },
    }


def dialect_of(stack: Path) -> str | None:
    """The dialect the stack's served configuration names, if any."""
    served = stack / "served.toml"
    found = re.search(r'^dialect = "([^"]+)"', served.read_text(encoding="utf-8"), re.M)
    return found.group(1) if found else None


def project(root: Path, stack: Path, attachment: str, cases: int) -> Path:
    """A project running ``cases`` cases through the stack's agent, attached so."""
    directory = root / f"{attachment}-{cases}"
    suite = directory / "suite"
    suite.mkdir(parents=True)
    for source in stack.glob("*.py"):
        shutil.copy(source, directory)
    dialect = dialect_of(stack)
    answer_tool = "final_answer" if dialect == "smolagents" else None
    for index in range(cases):
        text = json.dumps(case(index, answer_tool))
        (suite / f"c{index:04d}.json").write_text(text, encoding="utf-8")
    lines = ['[eval]\nsuite_dir = "suite"\n[eval.agent]\n', ATTACHMENTS[attachment]]
    if dialect:
        lines.append(f'dialect = "{dialect}"\n')
    config = directory / "zeroclaw.toml"
    config.write_text("".join(lines), encoding="utf-8")
    return config


def timed(zeroclaw: Path, config: Path, cases: int) -> tuple[float, float]:
    """Wall and CPU seconds of one ``eval run``, its children's CPU included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(
        [str(zeroclaw), "eval", "run", "--config", str(config), "--no-history", "-q"],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    if result.returncode != 0 or summary != f"{cases}/{cases} cases passed":
        sys.exit(f"{config}: the run did not pass whole: {summary!r}\n{result.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("stack", type=Path)
    parser.add_argument("--python", type=Path, required=True)
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    stack = options.stack.resolve()
    zeroclaw = options.python.absolute().parent / "zeroclaw"
    agent = (stack / "agent.py").read_text(encoding="utf-8")
    attachments = [a for a in ATTACHMENTS if a != "stdio" or "def make_stdio_agent" in agent]
    per_case: dict[str, list[tuple[float, float]]] = {a: [] for a in attachments}
    with tempfile.TemporaryDirectory(prefix="zeroclaw-served-ratio-") as directory:
        root = Path(directory)
        configs = {
            (a, n): project(root, stack, a, n) for a in attachments for n in (1, options.cases)
        }
        for round_number in range(options.rounds + 1):  # the first round warms up
            measured: dict[tuple[str, int], tuple[float, float]] = {}
            order = list(configs) if round_number % 2 else list(reversed(configs))
            for key in order:
                measured[key] = timed(zeroclaw, configs[key], key[1])
            if not round_number:
                continue
            for attachment in attachments:
                (many_wall, many_cpu) = measured[(attachment, options.cases)]
                (one_wall, one_cpu) = measured[(attachment, 1)]
                scale = 1000 / (options.cases - 1)  # milliseconds a case
                per_case[attachment].append(
                    ((many_wall - one_wall) * scale, (many_cpu - one_cpu) * scale)
                )
    own_wall = statistics.median(w for w, _ in per_case["own"])
    own_cpu = statistics.median(c for _, c in per_case["own"])
    print(f"{stack.name}: a case's cost, median of {options.rounds} rounds of {options.cases}")
    print(f"{'attachment':<10} {'wall ms':>9} {'cpu ms':>9} {'x own wall':>11} {'x own cpu':>10}")
    for attachment, samples in per_case.items():
        wall = statistics.median(w for w, _ in samples)
        cpu = statistics.median(c for _, c in samples)
        print(
            f"{attachment:<10} {wall:>9.1f} {cpu:>9.1f} {wall / own_wall:>11.2f} "
            f"{cpu / own_cpu:>10.2f}"
        )


if __name__ == "__main__":
    main()
