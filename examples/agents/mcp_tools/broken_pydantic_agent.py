"""The pydantic-ai agent with a deliberate bug: its suite must fail.

``make_rewriting_agent`` upper-cases every string argument before dispatch, the
way pydantic-ai lets an application wrap an MCP tool call (``process_tool_call``
of ``MCPToolset``), so the tool runs on arguments the model never asked for: the
suite fails ``tool_arguments_contain`` and ``served_tools: arguments as
requested``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_agent import PydanticAgent
from pydantic_ai import RunContext
from pydantic_ai.mcp import CallToolFunc, MCPToolset, ToolResult


async def upper_cased(
    ctx: RunContext[Any], call_tool: CallToolFunc, name: str, arguments: dict[str, Any]
) -> ToolResult:
    """Dispatch the call with every string argument upper-cased."""
    rewritten = {
        key: value.upper() if isinstance(value, str) else value for key, value in arguments.items()
    }
    return await call_tool(name, rewritten)


class RewritingPydanticAgent(PydanticAgent):
    """Dispatches every string argument upper-cased."""

    def toolset(self, mcp_url: str) -> MCPToolset[None]:
        return MCPToolset(mcp_url, tool_error_behavior="failed", process_tool_call=upper_cased)


def make_rewriting_agent(
    *, base_url: str, api_key: str, workspace: Path, mcp_url: str
) -> RewritingPydanticAgent:
    return RewritingPydanticAgent(base_url, api_key, mcp_url)
