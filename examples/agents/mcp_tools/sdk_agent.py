"""An agent on the OpenAI Agents SDK, taking its tools from an MCP server.

The agent is the SDK's ``Agent`` with one ``MCPServerStreamableHttp`` (the URL the
harness serves the case's tools on) and a Chat Completions model at the model
bridge's base URL. Its history across turns is the SDK's own input list. Nothing
here knows about zeroclaw-eval.

In-process only: ``make_agent(base_url=..., api_key=..., workspace=..., mcp_url=...)``
is the ``[eval.agent] factory`` (``tools = "served"``).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled

MODEL = os.environ.get("SDK_AGENT_MODEL", "gpt-4o-mini")

set_tracing_disabled(True)  # no trace is sent anywhere


class SdkAgent:
    """One conversation on the Agents SDK."""

    def __init__(self, base_url: str, api_key: str, mcp_url: str) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.mcp_url = mcp_url
        self.items: list[Any] = []

    def run_turn(self, user_input: str) -> str:
        """Answer one user message (the harness calls this once per turn)."""
        return asyncio.run(self.turn(user_input))

    async def turn(self, user_input: str) -> str:
        # Both clients are closed within the turn's event loop, which ends with it.
        async with (
            AsyncOpenAI(base_url=self.base_url, api_key=self.api_key) as client,
            MCPServerStreamableHttp(
                params={"url": self.mcp_url}, name="case tools", cache_tools_list=True
            ) as server,
        ):
            model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
            agent = Agent(
                name="assistant",
                instructions="You are a helpful assistant. Use the tools when they help.",
                model=model,
                mcp_servers=[server],
            )
            result = await Runner.run(agent, [*self.items, {"role": "user", "content": user_input}])
        self.items = result.to_input_list()
        return str(result.final_output)


def make_agent(*, base_url: str, api_key: str, workspace: Path, mcp_url: str) -> SdkAgent:
    """The in-process factory: one agent per case."""
    return SdkAgent(base_url, api_key, mcp_url)
