"""What starting ``zeroclaw-eval-mcp-relay`` costs, beside starting Python itself.

    .venv/bin/python benchmarks/relay_start.py [--runs 60] [--baseline OTHER_RELAY]

An agent that spawns its MCP servers starts the relay once per case, or once per
turn: its start is its cost. Each round spawns, interleaved, the interpreter next
to the running one with ``-c pass`` (the floor no Python program goes under), this
install's relay, and (with ``--baseline``) another install's
(``OTHER/bin/zeroclaw-eval-mcp-relay``), each given a URL and
an empty stdin, so it starts, imports, reads the end of its input and exits 0 without
a connection. Prints each row's median, fastest and slowest wall time, and the
median of each round's difference to the floor. Target: the relay at most 30 ms.
Every spawn must exit 0, or the script stops.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

URL = "http://127.0.0.1:9/mcp/benchmark"


def spawn(command: list[str]) -> float:
    """Seconds from spawning ``command`` with an empty stdin to its exit 0."""
    started = time.perf_counter()
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} exited {done.returncode}: {done.stderr.decode()!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--baseline", type=Path, help="another install's relay script")
    args = parser.parse_args()
    rows = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "relay": [str(Path(sys.executable).parent / "zeroclaw-eval-mcp-relay"), URL],
    }
    if args.baseline:
        rows["relay base"] = [str(args.baseline), URL]
    for command in rows.values():
        spawn(command)  # warm the page cache
    times: dict[str, list[float]] = {row: [] for row in rows}
    for _ in range(args.runs):
        for row, command in rows.items():
            times[row].append(spawn(command))
    floor = times["python -c pass"]
    print(f"{'row':16} {'median ms':>10} {'min':>7} {'max':>7} {'+ms floor':>10}")
    for row, seconds in times.items():
        over = statistics.median(s - f for s, f in zip(seconds, floor, strict=True))
        print(
            f"{row:16} {statistics.median(seconds) * 1000:10.1f} {min(seconds) * 1000:7.1f} "
            f"{max(seconds) * 1000:7.1f} {over * 1000:10.1f}"
        )


if __name__ == "__main__":
    main()
