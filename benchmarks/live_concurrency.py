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
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from zeroclaw_eval import EvalConfig, run_suite
from zeroclaw_eval.config import LiveConfig

CASES = 40
DELAY_S = 0.2


@contextmanager
def chat_server(answers: dict[str, str], delay_s: float) -> Iterator[str]:
    """A chat-completions endpoint on 127.0.0.1 answering each conversation (keyed by
    its first user message) with one text reply after ``delay_s``; yields its base URL.
    The benchmark's own: it never depends on the test suite."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            first = next(m["content"] for m in body["messages"] if m["role"] == "user")
            time.sleep(delay_s)
            message = {"role": "assistant", "content": answers[first]}
            reply: dict[str, Any] = {
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            }
            payload = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def write_suite(directory: Path) -> dict[str, str]:
    """Write the cases; return what the server answers each (one text reply per case)."""
    script: dict[str, str] = {}
    for n in range(CASES):
        prompt = f"Say the number {n}"
        case = {
            "model_name": f"bench-{n:02d}",
            "turns": [{"user_input": prompt}],
            "expects": {"response_contains": [str(n)]},
        }
        (directory / f"{n:02d}.json").write_text(json.dumps(case), encoding="utf-8")
        script[prompt] = f"The number is {n}."
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
        with chat_server(script, DELAY_S) as url:
            results: dict[int, list[float]] = {1: [], 8: []}
            for _ in range(args.repeat):
                for concurrency in results:
                    results[concurrency].append(timed_run(suite, url, concurrency))
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
