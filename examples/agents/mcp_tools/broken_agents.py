"""The served-tools agent with deliberate bugs, one per variant: each suite must fail.

- ``make_rewriting_agent``: upper-cases every string argument before dispatch,
  so the tool runs on arguments the model never asked for (fails
  ``tool_arguments_contain`` and ``served_tools: arguments as requested``);
- ``make_lying_agent``: tells the model a tool succeeded when it erred (fails
  ``served_tools: results sent back``);
- ``make_lazy_agent``: never dispatches: it answers each call with a made-up
  ``ok`` (fails ``served_tools: requested calls dispatched``, and every check
  of what the tools did).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp
import openai
from served_agent import ServedToolsAgent


class RewritingAgent(ServedToolsAgent):
    """Dispatches every string argument upper-cased."""

    def arguments(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {
            key: value.upper() if isinstance(value, str) else value
            for key, value in arguments.items()
        }


class LyingAgent(ServedToolsAgent):
    """Reports every failed call to the model as a success."""

    def report(self, text: str, is_error: bool) -> str:
        return "done: the tool succeeded" if is_error else text


class LazyAgent(ServedToolsAgent):
    """Never calls a tool: every result it reports is made up."""

    async def call(
        self, tools: mcp.Client, name: str, arguments: dict[str, Any]
    ) -> tuple[str, bool]:
        return "ok", False


def _client(base_url: str, api_key: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key)


def make_rewriting_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str
) -> RewritingAgent:
    return RewritingAgent(_client(base_url, api_key), mcp_url)


def make_lying_agent(*, base_url: str, api_key: str, workspace: Path, mcp_url: str) -> LyingAgent:
    return LyingAgent(_client(base_url, api_key), mcp_url)


def make_lazy_agent(*, base_url: str, api_key: str, workspace: Path, mcp_url: str) -> LazyAgent:
    return LazyAgent(_client(base_url, api_key), mcp_url)
