"""Print what a smolagents stack sent its model, request by request, case by case.

    .matrix/smolagents/bin/python examples/agents/smolagents_tools/show_wire.py \
        examples/agents/smolagents_tools/own.toml [-k unknown_city]

Runs the configuration once more with ``[eval] report_requests = "all"`` (from a
copy written beside it, removed afterwards), reads ``model_requests`` off the JSON
report, and prints every request's messages in full (the report stores each request
after the first as the messages it shares with the previous one, ``history``, and
the rest), the system prompt left out. This is how the wire shapes in the stacks'
READMEs were captured.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def requests_of(config: Path, selection: list[str]) -> dict[str, Any]:
    """The JSON report of a run of ``config`` that keeps every case's model requests."""
    text = config.read_text(encoding="utf-8")
    if "\n[eval]\n" not in f"\n{text}":
        raise SystemExit(f"{config}: no [eval] table to add report_requests to")
    copy = config.with_name(f".wire-{config.name}")
    copy.write_text(
        f"\n{text}".replace("\n[eval]\n", '\n[eval]\nreport_requests = "all"\n', 1),
        encoding="utf-8",
    )
    zeroclaw = Path(sys.executable).with_name("zeroclaw")
    argv = [str(zeroclaw), "eval", "run", "--config", str(copy), "--format", "json"]
    try:
        run = subprocess.run(
            [*argv, "--no-history", *selection],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        copy.unlink()
    if not run.stdout:
        raise SystemExit(run.stderr)
    report: dict[str, Any] = json.loads(run.stdout)
    return report


def show(report: dict[str, Any]) -> None:
    for case in report["cases"]:
        verdict = "passed" if case["passed"] else "FAILED"
        print(f"=== {case['name']} ({verdict}, {case['duration_s'] * 1000:.0f} ms)")
        for check in case["checks"]:
            if not check["passed"]:
                print(f"    failed: {check['check']}: {check['detail']}")
        previous: list[dict[str, Any]] = []
        for request in case["attempts"][-1].get("model_requests") or []:
            messages = previous[: request.get("history", 0)] + request["messages"]
            previous = messages
            print(f"--- turn {request['turn']} step {request['step']}")
            for message in messages:
                if message["role"] != "system":
                    print(json.dumps(message, ensure_ascii=False))


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    show(requests_of(Path(argv[0]).resolve(), argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
