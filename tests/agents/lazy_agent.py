"""The honest loop agent, but lazy: it makes every tool result up and never
dispatches over MCP, as a served agent with a caching bug would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loop_agent import LoopAgent  # beside it, in the configuration's directory


class Lazy(LoopAgent):
    def run_tool(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        return "ok", True  # made up: never dispatched


def make_agent(*, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None) -> Lazy:
    return Lazy(base_url, api_key, mcp_url)
