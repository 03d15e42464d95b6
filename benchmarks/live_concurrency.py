"""Live-mode concurrency: a 40-case suite against a loopback server that answers in 200 ms.

Runs the suite sequentially (``max_concurrency = 1``) and 8-way, several times
each, through the library entry point the CLI uses (``run_suite``), and prints
the medians and their ratio. Target: 8-way under a third of the sequential time.

    .venv/bin/python benchmarks/live_concurrency.py [--repeat N]

Not a test: speed targets are shown here, never asserted in the test suite.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))  # for the test server in tests/

from tests.chat_server import ChatServer, Reply, conversations, text  # noqa: E402

from zeroclaw_eval import EvalConfig, run_suite  # noqa: E402
from zeroclaw_eval.config import LiveConfig  # noqa: E402

CASES = 40
DELAY_S = 0.2


def write_suite(directory: Path) -> dict[str, list[Reply]]:
    """Write the cases; return the server's script (one 200 ms text reply per case)."""
    script: dict[str, list[Reply]] = {}
    for n in range(CASES):
        prompt = f"Say the number {n}"
        case = {
            "model_name": f"bench-{n:02d}",
            "turns": [{"user_input": prompt}],
            "expects": {"response_contains": [str(n)]},
        }
        (directory / f"{n:02d}.json").write_text(json.dumps(case), encoding="utf-8")
        script[prompt] = [text(f"The number is {n}.")]
    return script


def timed_run(suite: Path, url: str, concurrency: int) -> float:
    live = LiveConfig(base_url=url, model="example-model", max_concurrency=concurrency)
    config = EvalConfig(mode="live", live=live)
    started = time.perf_counter()
    report = run_suite(suite, config=config)
    elapsed = time.perf_counter() - started
    if report.exit_code() != 0:
        raise SystemExit(f"the benchmark suite failed: {report.cases}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp)
        script = write_suite(suite)
        with ChatServer(conversations(script, delay_s=DELAY_S)) as server:
            results: dict[int, list[float]] = {1: [], 8: []}
            for _ in range(args.repeat):
                for concurrency in results:
                    results[concurrency].append(timed_run(suite, server.url, concurrency))
    sequential = statistics.median(results[1])
    parallel = statistics.median(results[8])
    print(f"{CASES} live cases, server answers after {DELAY_S * 1000:.0f} ms, {args.repeat} runs")
    print(f"sequential (max_concurrency=1): median {sequential:.3f} s")
    print(f"8-way      (max_concurrency=8): median {parallel:.3f} s")
    ratio = parallel / sequential
    verdict = "meets" if ratio < 1 / 3 else "MISSES"
    print(f"ratio 8-way / sequential: {ratio:.3f} ({verdict} the target of < 0.333)")


if __name__ == "__main__":
    main()
