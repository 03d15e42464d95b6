"""The ``echo`` tool: side-effect free, the one tool replay fixtures can rely on."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from zeroclaw_eval.hookspecs import hookimpl
from zeroclaw_eval.protocol import Tool, ToolResult

EMPTY = "(empty)"


class EchoTool:
    """Returns its ``message`` argument; ``(empty)`` when that is missing or not a string.

    It always succeeds, so a fixture can script a malformed call and still grade
    how the loop carried on.
    """

    name = "echo"
    description = "Echo back the given message."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The text to echo back."}},
        "required": ["message"],
    }

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        message = arguments.get("message")
        return ToolResult(message if isinstance(message, str) else EMPTY)


@hookimpl
def zeroclaw_eval_register_tools(register: Callable[[str, Callable[[], Tool]], None]) -> None:
    register(EchoTool.name, EchoTool)
