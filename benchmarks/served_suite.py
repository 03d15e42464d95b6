"""One-tool cases through an agent served its tools over MCP, end to end.

    .venv/bin/python benchmarks/served_suite.py [--cases 1000] [--agent sdk] [--concurrency 8]

Writes ``--cases`` fixtures (a scripted ``echo`` call graded with
``tool_arguments_contain``, then a text) into a temporary project beside a copy of
an example agent of ``examples/agents/mcp_tools/`` (``sdk``: the OpenAI Agents
SDK; ``plain``: the ``openai`` and ``mcp`` SDKs), attached in-process with
``tools = "served"``, and times the real ``zeroclaw eval run --no-history``: both
bridges, the model's and the tools'. Prints the wall time, the CPU time of the
run, and both per case; every case must pass, or the script stops.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AGENTS = {"sdk": "sdk_agent", "plain": "served_agent"}


def case(index: int) -> dict[str, object]:
    message = f"hello {index}"
    return {
        "model_name": f"echo-{index}",
        "turns": [
            {
                "user_input": "Echo hello",
                "steps": [
                    {
                        "response": {
                            "type": "tool_calls",
                            "tool_calls": [
                                {"id": "c1", "name": "echo", "arguments": {"message": message}}
                            ],
                        }
                    },
                    {"response": {"type": "text", "content": message}},
                ],
            }
        ],
        "expects": {
            "tool_arguments_contain": [{"tool": "echo", "needle": message}],
            "exact_tool_calls": 1,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--agent", choices=sorted(AGENTS), default="sdk")
    parser.add_argument("--concurrency", type=int, default=8)
    options = parser.parse_args()

    module = AGENTS[options.agent]
    with tempfile.TemporaryDirectory(prefix="zeroclaw-served-") as directory:
        project = Path(directory)
        suite = project / "suite"
        suite.mkdir()
        for index in range(options.cases):
            (suite / f"c{index:05d}.json").write_text(json.dumps(case(index)), encoding="utf-8")
        shutil.copy(ROOT / "examples" / "agents" / "mcp_tools" / f"{module}.py", project)
        config = project / "zeroclaw.toml"
        config.write_text(
            '[eval]\nsuite_dir = "suite"\n[eval.agent]\n'
            f'factory = "{module}:make_agent"\ntools = "served"\n'
            f"max_concurrency = {options.concurrency}\n",
            encoding="utf-8",
        )
        zeroclaw = Path(sys.executable).parent / "zeroclaw"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run(
            [str(zeroclaw), "eval", "run", "--config", str(config), "--no-history"],
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    if result.returncode != 0 or summary != f"{options.cases}/{options.cases} cases passed":
        sys.exit(f"the run did not pass whole: {summary!r}\n{result.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    per_case = 1000 / options.cases
    print(
        f"{options.cases} cases, {options.agent} agent, {options.concurrency} at a time: "
        f"{wall:.1f} s wall ({wall * per_case:.1f} ms a case), "
        f"{cpu:.1f} s CPU ({cpu * per_case:.1f} ms a case)"
    )


if __name__ == "__main__":
    main()
