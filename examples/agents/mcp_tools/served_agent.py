"""An agent that takes its tools from an MCP server: the official ``openai`` and ``mcp`` SDKs.

Each turn it connects to the MCP server at ``mcp_url`` (streamable HTTP), lists
the tools, offers them to the model, and when the model asks for one, calls it
on the server (``tools/call``) and sends the model the result's text, an error
included as it came. Nothing here knows about zeroclaw-eval: pointed at a real
model and a real MCP server, it is a real agent.

Two ways in, as for every agent zeroclaw-eval runs:

- in-process: ``make_agent(base_url=..., api_key=..., workspace=..., mcp_url=...)``
  is the ``[eval.agent] factory`` (with ``tools = "served"``, the harness passes
  ``mcp_url``);
- as a command: ``python served_agent.py`` speaks JSON lines on stdin/stdout and
  reads ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``ZEROCLAW_EVAL_MCP_URL``.

The hooks :meth:`ServedToolsAgent.arguments`, :meth:`ServedToolsAgent.call` and
:meth:`ServedToolsAgent.report` are where the broken variants of
``broken_agents.py`` put their bugs.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import mcp
import openai

MODEL = os.environ.get("SERVED_AGENT_MODEL", "gpt-4o-mini")
MAX_ROUNDS = 10


class ServedToolsAgent:
    """One conversation: its history, its model client, its MCP server's address."""

    def __init__(self, client: openai.AsyncOpenAI, mcp_url: str) -> None:
        self.client = client
        self.mcp_url = mcp_url
        self.history: list[dict[str, Any]] = []
        # One event loop for the conversation: the async client's connections
        # belong to the loop they were opened on.
        self.loop = asyncio.new_event_loop()

    def run_turn(self, user_input: str) -> str:
        """Answer one user message (the harness calls this once per turn)."""
        return self.loop.run_until_complete(self.turn(user_input))

    def close(self) -> None:
        """End the conversation: close the client and the loop."""
        self.loop.run_until_complete(self.client.close())
        self.loop.close()

    async def turn(self, user_input: str) -> str:
        self.history.append({"role": "user", "content": user_input})
        async with mcp.Client(self.mcp_url) as tools:
            listed = await tools.list_tools()
            offer: list[Any] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description or "",
                        "parameters": tool.input_schema,
                    },
                }
                for tool in listed.tools
            ]
            for _ in range(MAX_ROUNDS):
                # The history and tools are plain dicts, not the SDK's TypedDicts.
                messages: list[Any] = self.history
                reply = await self.client.chat.completions.create(
                    model=MODEL, messages=messages, tools=offer
                )
                message = reply.choices[0].message
                if not message.tool_calls:
                    text = message.content or ""
                    self.history.append({"role": "assistant", "content": text})
                    return str(text)
                self.history.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls:
                    if call.type != "function":  # a custom tool: not offered here
                        raise RuntimeError(f"the model called a {call.type} tool")
                    name = call.function.name
                    arguments = self.arguments(name, json.loads(call.function.arguments or "{}"))
                    text, is_error = await self.call(tools, name, arguments)
                    self.history.append(
                        {
                            "role": "tool",
                            "tool_call_id": call.id,
                            "content": self.report(text, is_error),
                        }
                    )
        raise RuntimeError(f"the model asked for tools {MAX_ROUNDS} times in a row")

    def arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments to dispatch for the model's call: the model's own."""
        return arguments

    async def call(
        self, tools: mcp.Client, name: str, arguments: dict[str, Any]
    ) -> tuple[str, bool]:
        """Call the tool on the MCP server: its text, and whether it erred."""
        result = await tools.call_tool(name, arguments)
        text = "".join(item.text for item in result.content if item.type == "text")
        return text, bool(result.is_error)

    def report(self, text: str, is_error: bool) -> str:
        """What the model is told the tool returned: its text, as it came."""
        return text


def make_agent(*, base_url: str, api_key: str, workspace: Path, mcp_url: str) -> ServedToolsAgent:
    """The in-process factory: one agent per case."""
    return ServedToolsAgent(openai.AsyncOpenAI(base_url=base_url, api_key=api_key), mcp_url)


def serve(agent: Any) -> int:
    """The JSON-lines protocol: one ``turn`` line in, one ``reply`` (or ``error``) line out."""
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        turn = request.get("turn")
        try:
            reply = {
                "type": "reply",
                "turn": turn,
                "content": agent.run_turn(request["user_input"]),
            }
        except Exception as exc:
            reply = {"type": "error", "turn": turn, "message": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    agent.close()
    return 0


def main(agent_class: type[ServedToolsAgent] = ServedToolsAgent) -> int:
    """Run as a command: the model's and the tools' addresses come from the environment."""
    return serve(agent_class(openai.AsyncOpenAI(), os.environ["ZEROCLAW_EVAL_MCP_URL"]))


if __name__ == "__main__":
    sys.exit(main())
