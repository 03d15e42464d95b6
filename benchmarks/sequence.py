"""What grading a ``tool_sequence`` entry costs: 200 calls against 50 expected steps.

Run: ``.venv/bin/python benchmarks/sequence.py [ROUNDS]``. Admits one fixture per
row (as ``zeroclaw eval run`` would) and prints the median time of
``Case.grade`` over ROUNDS rounds (default 201), with the verdict, which each row
states beforehand (a failing row pays for its diagnostics):

- the run: 200 calls over four tools (``echo``, ``search``, ``file_read``,
  ``lookup``), each with arguments ``{"message": ..., "meta": {"n": i, "tags": [...]}}``;
- the steps: 50, one for every fourth call, arguments matched ``partial`` on
  ``meta.n`` (``paths`` on ``/meta/n`` in its row);
- ``in_order`` and ``calls_include`` pass; ``exact``, ``unordered`` and
  ``calls_only_among`` fail on the 150 calls no step accounts for, and list them;
- ``1`` tool: every call and step names ``echo``, so every step fits every
  call by name; with ``ignore`` (no arguments) every step may pair with every
  call, 10,000 candidate pairs: the worst case for the pairing, not a likely
  fixture.

The target: under 5 ms for a 200-call, 50-step entry.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

from zeroclaw_eval import RecordedCall, Registry, RunRecord, get_plugin_manager
from zeroclaw_eval.case.admission import admit_data

TOOLS = ("echo", "search", "file_read", "lookup")
CALLS = 200
STEPS = 50


def calls(one_tool: bool) -> list[RecordedCall]:
    made = []
    for i in range(CALLS):
        name = "echo" if one_tool else TOOLS[i % len(TOOLS)]
        arguments = {"message": f"item-{i:03}", "meta": {"n": i, "tags": ["a", "b"]}}
        made.append(RecordedCall(i // 20, f"c{i}", name, arguments, f"item-{i:03}", True))
    return made


def fixture(mode: str, run: list[RecordedCall], match: str) -> dict[str, Any]:
    steps = []
    for i in range(0, CALLS, CALLS // STEPS):
        step: dict[str, Any] = {"tool": run[i].name}
        if match != "ignore":
            step.update(arguments={"meta": {"n": i}}, match=match)
        if match == "paths":
            step["paths"] = ["/meta/n"]
        steps.append(step)
    turn = {"user_input": "go", "steps": [{"response": {"type": "text", "content": "ok"}}]}
    return {
        "model_name": f"bench-{mode}",
        "turns": [turn],
        "expects": {"tool_sequence": [{"mode": mode, "steps": steps}]},
    }


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 201
    registry = Registry.from_plugin_manager(get_plugin_manager(load_entry_points=False))
    replay = registry.modes["replay"].obj
    rows = [
        ("in_order", False, "partial", True),
        ("in_order", False, "paths", True),
        ("calls_include", False, "partial", True),
        ("exact", False, "partial", False),
        ("unordered", False, "partial", False),
        ("calls_only_among", False, "partial", False),
        ("in_order", True, "partial", True),
        ("calls_include", True, "partial", True),
        ("in_order", True, "ignore", True),
        ("calls_include", True, "ignore", True),
    ]
    print(f"{CALLS} calls, {STEPS} steps, median of {rounds} rounds of Case.grade")
    print(f"{'mode':<18} {'tools':<7} {'match':<8} {'verdict':<8} {'median ms':>9}")
    for mode, one_tool, match, passes in rows:
        run = RunRecord(responses=["ok"], calls=calls(one_tool))
        case = admit_data(fixture(mode, run.calls, match), registry, replay, source="bench.json")
        (check,) = case.grade(run)
        assert check.passed is passes, (mode, check.detail[:300])
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            case.grade(run)
            times.append(time.perf_counter() - started)
        tools = "1" if one_tool else str(len(TOOLS))
        verdict = "pass" if passes else "fail"
        median_ms = statistics.median(times) * 1000
        print(f"{mode:<18} {tools:<7} {match:<8} {verdict:<8} {median_ms:>9.3f}")


if __name__ == "__main__":
    main()
