"""What the loopback model bridge costs per model round trip, beside the reference loop.

    .venv/bin/python benchmarks/bridge.py [--cases 100] [--rounds 5] [--parallel 1000]

The same fixtures (W3 of ``benchmarks/run.py``: one scripted ``echo`` call, then
a final text; two model round trips a case) are answered by the same replay
provider in every row, in one process, interleaved round by round:

- ``reference``: the built-in loop calls the provider directly (no HTTP);
- ``raw http``: a keep-alive ``http.client`` connection posts each request to the
  bridge: the bridge's own cost, with the thinnest client there is;
- ``sdk``: the official ``openai`` SDK posts each request, non-streaming;
- ``sdk .stream()``: the same with ``stream: true``, reassembled by the SDK's
  ``chat.completions.stream`` helper;
- ``notes agent``: the example agent of ``examples/agents/openai_sdk`` (on the
  SDK, ``stream=True``, rebuilding the deltas itself) runs each case whole, its
  ``echo`` tool included.

Each row prints medians: milliseconds per case (everything: opening the route,
making the client, the turn); per model round trip (the turn alone, halved);
``+ms/trip``, that round trip minus the reference loop's, the overhead an agent
behind the bridge pays; and the CPU of one round trip split between the agent's
thread (the client: the SDK's own work) and the rest of the process (the
bridge's threads). On a shared machine the wall columns wait for a core; the CPU
columns do not.

Then ``--parallel`` cases (1,000 by default) run 8 at a time on one bridge,
through the reference loop and through the notes agent: the whole run's
seconds, against the target of 10 s for the notes agent. This drives the agent
and the bridge directly, as the runner does; ``benchmarks/bridged_suite.py``
times the same through the real ``zeroclaw eval run``.

Target: the bridge adds under 2 ms per round trip. Its share is the ``raw http``
row's ``+ms/trip`` (the bridge with the least client there is) and, with the SDK
as client, the ``bridge cpu`` column; the rest of an SDK round trip is the SDK's
own work (``agent cpu``), which an agent pays against any endpoint. Every
case's calls and final text are checked, so a fast wrong answer stops the
script.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai

from zeroclaw_eval.agents.loop import Agent
from zeroclaw_eval.bridge.server import ModelBridge
from zeroclaw_eval.bridge.wire import BridgeRequest
from zeroclaw_eval.builtin.echo import EchoTool
from zeroclaw_eval.builtin.replay import ReplayProvider
from zeroclaw_eval.case.fixture import LlmTrace

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT / "examples" / "agents" / "openai_sdk"))

from notes_agent import make_agent, shared_http_client  # noqa: E402

sys.path.insert(0, str(PROJECT / "benchmarks"))
from run import echo_case  # noqa: E402

Row = Callable[[LlmTrace, int, ModelBridge], "Turn"]
"""Runs one case and returns what its turn (its model round trips) cost."""

TARGET_MS = 2.0
WORKERS = 8
PARALLEL_TARGET_S = 10.0
TRIPS_PER_CASE = 2
ECHO_SCHEMA = {
    "type": "function",
    "function": {
        "name": EchoTool.name,
        "description": EchoTool.description,
        "parameters": dict(EchoTool.parameters),
    },
}


def traces(count: int) -> list[LlmTrace]:
    return [LlmTrace.model_validate(echo_case(i)) for i in range(count)]


def expect(case: int, text: str, results: list[str]) -> None:
    token = f"token-{case}"
    if text != f"The echo tool said: {token}" or results != [token]:
        sys.exit(f"case {case}: wrong run: text={text!r} results={results!r}")


def replay_answer(provider: ReplayProvider) -> Callable[[BridgeRequest], Any]:
    return lambda request: provider.respond(request.messages, ())


@dataclass(frozen=True)
class Turn:
    """What one turn cost: wall seconds, CPU of the agent's thread, CPU of the process."""

    wall_s: float
    agent_cpu_s: float
    process_cpu_s: float

    @property
    def bridge_cpu_s(self) -> Turn:
        """CPU spent outside the agent's thread: the bridge's threads (nothing else runs)."""
        return self.process_cpu_s - self.agent_cpu_s


class Clock:
    """Times a turn by wall clock, this thread's CPU and the whole process's CPU."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.thread = time.thread_time()
        self.process = time.process_time()

    def stop(self) -> Turn:
        return Turn(
            time.perf_counter() - self.wall,
            time.thread_time() - self.thread,
            time.process_time() - self.process,
        )


def reference(trace: LlmTrace, case: int, bridge: ModelBridge) -> Turn:
    provider = ReplayProvider(trace)
    agent = Agent(provider, {"echo": EchoTool()})
    provider.begin_turn(0)
    clock = Clock()
    text = agent.run_turn(0, trace.turns[0].user_input)
    turn = clock.stop()
    provider.end_turn(0)
    expect(case, text, [call.result for call in agent.record.calls])
    return turn


def two_requests(trace: LlmTrace, case: int, post: Callable[[list[Any]], dict[str, Any]]) -> Turn:
    """What any chat-completions agent does for a W3 case: ask, run echo, ask again.

    Returns what the turn cost, from the first request to the last reply.
    """
    clock = Clock()
    messages: list[Any] = [{"role": "user", "content": trace.turns[0].user_input}]
    first = post(messages)
    calls = first["tool_calls"]
    messages.append({"role": "assistant", "content": None, "tool_calls": calls})
    results = [json.loads(call["function"]["arguments"])["message"] for call in calls]
    messages += [
        {"role": "tool", "tool_call_id": call["id"], "content": result}
        for call, result in zip(calls, results, strict=True)
    ]
    second = post(messages)
    turn = clock.stop()
    expect(case, second["content"], results)
    return turn


def raw_http(trace: LlmTrace, case: int, bridge: ModelBridge) -> Turn:
    provider = ReplayProvider(trace)
    provider.begin_turn(0)
    with bridge.open_route(f"bench-{case}", replay_answer(provider)) as route:
        port = int(bridge.url.rsplit(":", 1)[1])
        connection = http.client.HTTPConnection("127.0.0.1", port)
        path = route.base_url.split(str(port), 1)[1] + "/chat/completions"
        headers = {"Authorization": f"Bearer {route.api_key}", "Content-Type": "application/json"}

        def post(messages: list[Any]) -> dict[str, Any]:
            body = json.dumps({"model": "m", "messages": messages, "tools": [ECHO_SCHEMA]})
            connection.request("POST", path, body, headers)
            reply: dict[str, Any] = json.loads(connection.getresponse().read())
            return dict(reply["choices"][0]["message"])

        turn = two_requests(trace, case, post)
        connection.close()
    provider.end_turn(0)
    return turn


def sdk(stream: bool) -> Row:
    def run(trace: LlmTrace, case: int, bridge: ModelBridge) -> Turn:
        provider = ReplayProvider(trace)
        provider.begin_turn(0)
        with bridge.open_route(f"bench-{case}", replay_answer(provider)) as route:
            # One shared HTTP pool, as the notes agent does: a fresh one per case
            # would time the TLS context the SDK builds, not the round trips.
            client = openai.OpenAI(
                base_url=route.base_url, api_key=route.api_key, http_client=shared_http_client()
            )

            def post(messages: list[Any]) -> dict[str, Any]:
                if stream:
                    with client.chat.completions.stream(
                        model="m", messages=messages, tools=[ECHO_SCHEMA]
                    ) as events:
                        completion = events.get_final_completion()
                else:
                    completion = client.chat.completions.create(
                        model="m", messages=messages, tools=[ECHO_SCHEMA]
                    )
                message = completion.choices[0].message
                return {
                    "content": message.content,
                    "tool_calls": [
                        {"id": c.id, "type": "function", "function": c.function.model_dump()}
                        for c in message.tool_calls or []
                    ],
                }

            turn = two_requests(trace, case, post)
        provider.end_turn(0)
        return turn

    return run


def notes_agent(trace: LlmTrace, case: int, bridge: ModelBridge) -> Turn:
    provider = ReplayProvider(trace)
    provider.begin_turn(0)
    with bridge.open_route(f"bench-{case}", replay_answer(provider)) as route:
        agent = make_agent(base_url=route.base_url, api_key=route.api_key, workspace=Path("."))
        clock = Clock()
        text = agent.run_turn(trace.turns[0].user_input)
        turn = clock.stop()
        results = [m["content"] for m in agent.history if m["role"] == "tool"]
    provider.end_turn(0)
    expect(case, text, results)
    return turn


ROWS: dict[str, Row] = {
    "reference": reference,
    "raw http": raw_http,
    "sdk": sdk(stream=False),
    "sdk .stream()": sdk(stream=True),
    "notes agent": notes_agent,
}


def parallel(name: str, traces_: list[LlmTrace], workers: int, bridge: ModelBridge) -> float:
    """Seconds to run every case of ``traces_`` through row ``name``, ``workers`` at a time."""
    run = ROWS[name]
    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda index: run(traces_[index], index, bridge), range(len(traces_))))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100, help="cases per round (default 100)")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds (default 5)")
    parser.add_argument(
        "--parallel", type=int, default=1000, help="cases of the 8-way run (default 1,000; 0: none)"
    )
    options = parser.parse_args()
    cases = traces(options.cases)
    per_case: dict[str, list[float]] = {name: [] for name in ROWS}
    turns: dict[str, list[Turn]] = {name: [] for name in ROWS}
    with ModelBridge() as bridge:
        for round_ in range(options.rounds + 1):  # round 0 warms up
            for name, run in ROWS.items():
                for case, trace in enumerate(cases):
                    started = time.perf_counter()
                    turn = run(trace, case, bridge)
                    if round_:
                        per_case[name].append(time.perf_counter() - started)
                        turns[name].append(turn)

    def per_trip_ms(name: str, measure: Callable[[Turn], float]) -> float:
        return statistics.median(map(measure, turns[name])) * 1000 / TRIPS_PER_CASE

    base = per_trip_ms("reference", lambda turn: turn.wall_s)
    print(
        f"{options.cases} W3 cases x {options.rounds} rounds, {TRIPS_PER_CASE} model round "
        f"trips a case; medians; openai {openai.__version__}; load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    header = (
        f"{'row':<13}{'ms/case':>9}{'ms/trip':>9}{'+ms/trip':>10}"
        f"{'agent cpu':>11}{'bridge cpu':>12}  target: the bridge's share < {TARGET_MS:g} ms"
    )
    print(header)
    print("-" * len(header))
    for name in ROWS:
        case_ms = statistics.median(per_case[name]) * 1000
        trip_ms = per_trip_ms(name, lambda turn: turn.wall_s)
        agent_ms = per_trip_ms(name, lambda turn: turn.agent_cpu_s)
        bridge_ms = per_trip_ms(name, lambda turn: turn.bridge_cpu_s)
        overhead = trip_ms - base
        verdict = ""
        if name == "raw http":  # nothing but the bridge and the least HTTP client
            verdict = f"+ms/trip: {'met' if overhead < TARGET_MS else 'missed'}"
        elif name != "reference":
            verdict = f"bridge cpu: {'met' if bridge_ms < TARGET_MS else 'missed'}"
        print(
            f"{name:<13}{case_ms:>9.3f}{trip_ms:>9.3f}{overhead:>10.3f}"
            f"{agent_ms:>11.3f}{bridge_ms:>12.3f}  {verdict}"
        )
    if not options.parallel:
        return
    many = traces(options.parallel)
    with ModelBridge() as bridge:
        print(
            f"\n{options.parallel} W3 cases, {WORKERS} at a time, one bridge (seconds, whole run):"
        )
        for name in ("reference", "notes agent"):
            parallel(name, many[: WORKERS * 4], WORKERS, bridge)  # warm-up
            seconds = parallel(name, many, WORKERS, bridge)
            target = f"  < {PARALLEL_TARGET_S:g} s: " if name != "reference" else ""
            if target:
                target += "met" if seconds < PARALLEL_TARGET_S else "missed"
            print(f"{name:<13}{seconds:>9.2f}{target}")


if __name__ == "__main__":
    main()
