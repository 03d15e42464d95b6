"""What a tool call costs through the loopback MCP tool server, beside a direct call.

    .venv/bin/python benchmarks/mcp_tools.py [--calls 2000] [--rounds 5]

One route serves the ``echo`` tool, dispatched as a served agent's calls are
(:class:`zeroclaw_eval.agents.served.ServedTools`: the tool run, its result
bounded, the dispatch recorded). Each round, interleaved:

- ``direct``: the same dispatch called in-process (no HTTP): the floor;
- ``raw http``: ``tools/call`` of the handshake era (in the session
  ``initialize`` opened) posted on one keep-alive ``http.client`` connection:
  the server's own round trip, with the thinnest client there is;
- ``stateless``: the same call in the stateless revision (``2026-07-28``: the
  ``_meta`` envelope and the headers that mirror it, no session), checked on
  every request;
- ``mcp sdk``: the official ``mcp`` client's ``call_tool`` (its JSON-RPC and
  anyio work included, on the stateless revision it settles on), what an agent
  on it pays.

Each row prints the median microseconds per call over the rounds' medians, and
``+ms/call`` over ``direct``. Target: the ``raw http`` and ``stateless`` round
trips, the server's overhead, under 2 ms. Every result is checked, so a fast wrong answer stops the
script.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import anyio
import mcp

from zeroclaw_eval.agents.base import ModelSide
from zeroclaw_eval.agents.served import ServedTools
from zeroclaw_eval.builtin.echo import EchoTool
from zeroclaw_eval.builtin.replay import ReplayProvider
from zeroclaw_eval.case.fixture import LlmTrace
from zeroclaw_eval.toolserver.server import ToolServer

TRACE = LlmTrace.model_validate(
    {
        "model_name": "bench",
        "turns": [{"user_input": "x", "steps": [{"response": {"type": "text", "content": "x"}}]}],
        "expects": {"response_contains": ["x"]},
    }
)


def per_call(run: Callable[[int], None], calls: int) -> float:
    started = time.perf_counter()
    run(calls)
    return (time.perf_counter() - started) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()

    with ToolServer() as server:
        side = ModelSide(
            "bench", ReplayProvider(TRACE), {"echo": EchoTool()}, tool_server=server.routes()
        )
        served = ServedTools(side, lambda: 0)
        url = served.route.url
        parts = urlsplit(url)
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port)
        headers = {"Content-Type": "application/json"}
        connection.request(
            "POST",
            parts.path,
            json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
            headers,
        )
        response = connection.getresponse()
        response.read()
        headers["Mcp-Session-Id"] = response.getheader("Mcp-Session-Id") or ""
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "ping"}},
            }
        )

        envelope = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        stateless_body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "ping"}, "_meta": envelope},
            }
        )
        stateless_headers = {
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "echo",
        }

        def direct(calls: int) -> None:
            for _ in range(calls):
                assert served.route.dispatch("echo", {"message": "ping"}).output == "ping"

        def raw_http(calls: int) -> None:
            for _ in range(calls):
                connection.request("POST", parts.path, body, headers)
                reply: Any = json.loads(connection.getresponse().read())
                assert reply["result"]["content"][0]["text"] == "ping"

        def stateless(calls: int) -> None:
            for _ in range(calls):
                connection.request("POST", parts.path, stateless_body, stateless_headers)
                reply: Any = json.loads(connection.getresponse().read())
                assert reply["result"]["content"][0]["text"] == "ping"
                assert reply["result"]["resultType"] == "complete"

        def sdk(calls: int) -> None:
            async def run() -> None:
                async with mcp.Client(url) as client:
                    await client.list_tools()  # as an agent does, before calling
                    await client.call_tool("echo", {"message": "warm"})
                    for _ in range(calls):
                        result = await client.call_tool("echo", {"message": "ping"})
                        assert result.content[0].text == "ping"

            anyio.run(run)

        rows: dict[str, list[float]] = {
            "direct": [],
            "raw http": [],
            "stateless": [],
            "mcp sdk": [],
        }
        for _ in range(options.rounds):
            rows["direct"].append(per_call(direct, options.calls))
            rows["raw http"].append(per_call(raw_http, options.calls))
            rows["stateless"].append(per_call(stateless, options.calls))
            rows["mcp sdk"].append(per_call(sdk, max(1, options.calls // 4)))
        served.close()

    floor = statistics.median(rows["direct"])
    print(f"{'row':<10} {'us/call':>9} {'+ms/call':>9}   (median of {options.rounds} rounds)")
    for name, figures in rows.items():
        median = statistics.median(figures)
        print(f"{name:<10} {median:>9.1f} {(median - floor) / 1000:>9.3f}")
    for row in ("raw http", "stateless"):
        overhead = (statistics.median(rows[row]) - floor) / 1000
        verdict = "under" if overhead < 2 else "OVER"
        print(
            f"MCP tool round trip over loopback ({row}): +{overhead:.3f} ms a call "
            f"({verdict} the 2 ms target)"
        )


if __name__ == "__main__":
    main()
