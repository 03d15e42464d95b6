"""What attaching an agent costs a case, next to its framework driven by its own scripted
model: the OpenAI Agents SDK.

    .venv/bin/python benchmarks/framework_ratio.py [--cases 40] [--rounds 5]

One agent (``Agent`` with an ``echo`` function tool of its own, tracing off), two ways,
each over cases of one ``echo`` call then a final text:

- ``framework``: ``Runner.run`` with ``agents.testing.ScriptedModel``, in this process,
  on one event loop: what the SDK itself costs a case;
- ``framework over HTTP``: the same, its model an ``OpenAIChatCompletionsModel`` on one
  ``AsyncOpenAI`` talking to a canned Chat Completions server in this process (a
  stdlib ``http.server`` that answers the call, then the text): what the SDK's own
  HTTP path (``openai``, ``httpx``, the message conversion) adds, with no harness;
- ``harness``: the same agent attached the documented way (this file is the factory
  module: one ``AsyncOpenAI`` per worker thread's loop, ``with_options`` per case),
  replayed by the real ``zeroclaw eval run --no-history`` through the model bridge.

A harness case's cost is the difference between a run of ``--cases`` cases and a run
of one, over ``cases - 1`` (the run's start and the SDK's imports taken off), in CPU
time (the run and its children) and wall time; the framework's is its CPU per case.
Prints the medians over the rounds and the ratio (the target: at most 2). Every run
must pass whole, or the script stops. Needs ``openai-agents`` (the ``test`` extra).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from agents.testing import ScriptedModel, assistant_message, function_call
from openai import AsyncOpenAI
from served_ratio import case, timed  # beside this file

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled

set_tracing_disabled(True)  # no network beyond loopback, and no cost of its own

HERE = Path(__file__).resolve().parent
ZEROCLAW = Path(sys.executable).with_name("zeroclaw")


@function_tool
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


def agent_on(model: Any) -> Agent[Any]:
    """The agent both ways: only its model differs."""
    return Agent(name="assistant", instructions="Use your tools.", model=model, tools=[echo])


# --- the harness's factory (this module, imported by zeroclaw eval run) ---------------

_thread = threading.local()


class SdkAgent:
    """One conversation: the history is the SDK's, carried from turn to turn."""

    def __init__(self, base_url: str, api_key: str) -> None:
        if not hasattr(_thread, "loop"):  # one loop and one client per worker thread
            _thread.loop = asyncio.new_event_loop()
            _thread.client = AsyncOpenAI(base_url=base_url, api_key="-")
        self.loop: asyncio.AbstractEventLoop = _thread.loop
        client = _thread.client.with_options(base_url=base_url, api_key=api_key)
        self.agent = agent_on(OpenAIChatCompletionsModel(model="m", openai_client=client))
        self.history: list[Any] = []

    def run_turn(self, user_input: str) -> str:
        result = self.loop.run_until_complete(
            Runner.run(self.agent, [*self.history, {"role": "user", "content": user_input}])
        )
        self.history = result.to_input_list()
        return str(result.final_output)


def make_agent(*, base_url: str, api_key: str, workspace: Path) -> SdkAgent:
    return SdkAgent(base_url, api_key)


# --- the measurement --------------------------------------------------------------------


def project(root: Path, cases: int) -> Path:
    """A project of ``cases`` fixtures whose agent is this module's factory."""
    root.mkdir(parents=True)
    suite = root / "suite"
    suite.mkdir()
    for index in range(cases):
        (suite / f"c{index:03}.json").write_text(json.dumps(case(index, None)), encoding="utf-8")
    config = root / "zeroclaw.toml"
    config.write_text(
        '[eval]\nsuite_dir = "suite"\n\n[eval.agent]\nfactory = "framework_ratio:make_agent"\n',
        encoding="utf-8",
    )
    return config


def framework(cases: int) -> float:
    """CPU seconds per case of the SDK driven by its own scripted model, one loop."""
    loop = asyncio.new_event_loop()

    async def one(index: int) -> None:
        token = f"token-{index}"
        model = ScriptedModel(
            [
                [function_call("echo", {"message": token}, call_id="call_1")],
                [assistant_message(f"The echo said {token}")],
            ]
        )
        result = await Runner.run(agent_on(model), f"Echo {token}")
        assert token in str(result.final_output)

    loop.run_until_complete(one(-1))  # the first run's lazy imports are not a case's
    started = time.process_time()
    for index in range(cases):
        loop.run_until_complete(one(index))
    loop.close()
    return (time.process_time() - started) / cases


class _Canned(BaseHTTPRequestHandler):
    """A Chat Completions endpoint that asks for ``echo`` of the task's last word, then
    answers with what the tool returned."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        last = body["messages"][-1]
        message: dict[str, Any]
        if last["role"] == "tool":
            message = {"role": "assistant", "content": f"The echo said {last['content']}"}
        else:
            arguments = json.dumps({"message": last["content"].split()[-1]})
            function = {"name": "echo", "arguments": arguments}
            call = {"id": "call_1", "type": "function", "function": function}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        choice = {"index": 0, "finish_reason": "stop", "message": message}
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        document = {"id": "c", "object": "chat.completion", "created": 0, "model": "m"}
        data = json.dumps({**document, "choices": [choice], "usage": usage}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def framework_over_http(cases: int) -> float:
    """CPU seconds per case of the SDK on a canned HTTP model in this process (the
    server's share included), one loop, one client."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Canned)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    loop = asyncio.new_event_loop()
    client = AsyncOpenAI(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="-")

    async def one(index: int) -> None:
        model = OpenAIChatCompletionsModel(model="m", openai_client=client.with_options())
        result = await Runner.run(agent_on(model), f"Echo token-{index}")
        assert f"token-{index}" in str(result.final_output)

    loop.run_until_complete(one(-1))
    started = time.process_time()
    for index in range(cases):
        loop.run_until_complete(one(index))
    elapsed = time.process_time() - started
    loop.run_until_complete(client.close())
    loop.close()
    server.shutdown()
    server.server_close()
    return elapsed / cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.cases < 2:
        parser.error("--cases must be at least 2")
    own_cpu: list[float] = []
    own_wall: list[float] = []
    sdk_cpu: list[float] = []
    http_cpu: list[float] = []
    # The runs import this module as their agent factory.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(HERE), os.environ.get("PYTHONPATH")])
    )
    with tempfile.TemporaryDirectory() as scratch:
        many = project(Path(scratch) / "many", args.cases)
        one = project(Path(scratch) / "one", 1)
        for round_ in range(args.rounds):
            wall_n, cpu_n = timed(ZEROCLAW, many, args.cases)
            wall_1, cpu_1 = timed(ZEROCLAW, one, 1)
            own_wall.append((wall_n - wall_1) / (args.cases - 1))
            own_cpu.append((cpu_n - cpu_1) / (args.cases - 1))
            sdk_cpu.append(framework(args.cases))
            http_cpu.append(framework_over_http(args.cases))
            print(f"  round {round_ + 1} done", file=sys.stderr)
    sdk = statistics.median(sdk_cpu)
    over_http = statistics.median(http_cpu)
    cpu = statistics.median(own_cpu)
    wall = statistics.median(own_wall)
    print(f"{'per case':<30}{'cpu ms':>8}{'wall ms':>9}{'x framework':>13}")
    for label, spent, took in (
        ("framework (ScriptedModel)", sdk, None),
        ("framework over HTTP (canned)", over_http, None),
        ("harness (bridge, own tools)", cpu, wall),
    ):
        shown = "-" if took is None else f"{took * 1000:.1f}"
        print(f"{label:<30}{spent * 1000:>8.1f}{shown:>9}{spent / sdk:>13.2f}")
    print(f"target: harness at most 2 x framework (CPU): {'ok' if cpu / sdk <= 2 else 'MISSED'}")
    print(f"the harness beside the framework over HTTP: {cpu / over_http:.2f} x")


if __name__ == "__main__":
    main()
