"""An agent on pydantic-ai, taking its tools from an MCP server.

The agent is pydantic-ai's ``Agent`` with an ``OpenAIChatModel`` (Chat Completions
at the model bridge's base URL) and one ``MCPToolset`` (the URL the harness serves
the case's tools on) as its toolset. Its history across turns is pydantic-ai's own
message history (``message_history=``, ``result.all_messages()``). Nothing here
knows about zeroclaw-eval.

In-process only: ``make_agent(base_url=..., api_key=..., workspace=..., mcp_url=...)``
is the ``[eval.agent] factory`` (``tools = "served"``).

:meth:`PydanticAgent.toolset` is where the broken variant of
``broken_pydantic_agent.py`` puts its bug.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from openai import AsyncOpenAI
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

MODEL = os.environ.get("PYDANTIC_AGENT_MODEL", "gpt-4o-mini")


class PydanticAgent:
    """One conversation on pydantic-ai: its model client, its MCP toolset, its history."""

    def __init__(self, base_url: str, api_key: str, mcp_url: str) -> None:
        # One event loop for the conversation: the async clients' connections
        # belong to the loop they were opened on.
        self.loop = asyncio.new_event_loop()
        self.client = AsyncOpenAI(base_url=base_url, api_key=api_key)
        model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=self.client))
        self.agent = Agent(
            model,
            instructions="You are a helpful assistant. Use the tools when they help.",
            toolsets=[self.toolset(mcp_url)],
        )
        self.history: list[ModelMessage] = []

    def toolset(self, mcp_url: str) -> MCPToolset[None]:
        """The MCP server's tools.

        A call the tool itself failed is sent to the model as a failed result
        (``"failed"``), not a prompt to retry (the default): an outage is not the
        model's mistake, and retries are not spent on it.
        """
        return MCPToolset(mcp_url, tool_error_behavior="failed")

    def run_turn(self, user_input: str) -> str:
        """Answer one user message (the harness calls this once per turn)."""
        return self.loop.run_until_complete(self.turn(user_input))

    async def turn(self, user_input: str) -> str:
        result = await self.agent.run(user_input, message_history=self.history)
        self.history = result.all_messages()
        return result.output

    def close(self) -> None:
        """End the conversation: close the model client and the loop."""
        self.loop.run_until_complete(self.client.close())
        self.loop.close()


def make_agent(*, base_url: str, api_key: str, workspace: Path, mcp_url: str) -> PydanticAgent:
    """The in-process factory: one agent per case."""
    return PydanticAgent(base_url, api_key, mcp_url)
