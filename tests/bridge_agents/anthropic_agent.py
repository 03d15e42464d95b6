"""An agent on the official ``anthropic`` SDK (Messages API, streaming), with ``echo``.

The harness hands a factory the OpenAI-style base URL (ending in ``/v1``); the
Anthropic SDK adds ``/v1`` itself, so the agent strips it. Run as a command
(``python anthropic_agent.py``), it configures nothing: the SDK reads
``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` from the environment the
harness gives it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anthropic

ECHO = {
    "name": "echo",
    "description": "Echo back the given message.",
    "input_schema": {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
}


def echo(arguments: Any) -> str:
    message = arguments.get("message") if isinstance(arguments, dict) else None
    return message if isinstance(message, str) else "(empty)"


class AnthropicAgent:
    def __init__(self, client: anthropic.Anthropic) -> None:
        self.client = client
        self.history: list[Any] = []

    def run_turn(self, user_input: str) -> str:
        self.history.append({"role": "user", "content": user_input})
        while True:
            with self.client.messages.stream(
                model="claude-test",
                max_tokens=1024,
                messages=self.history,
                tools=[ECHO],
            ) as stream:
                message = stream.get_final_message()
            blocks = [block.model_dump(exclude_none=True) for block in message.content]
            self.history.append({"role": "assistant", "content": blocks})
            uses = [block for block in message.content if block.type == "tool_use"]
            if not uses:
                return "".join(block.text for block in message.content if block.type == "text")
            self.history.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": use.id,
                            "content": echo(use.input) if use.name == "echo" else "unknown tool",
                        }
                        for use in uses
                    ],
                }
            )


def make_agent(*, base_url: str, api_key: str, workspace: Path) -> AnthropicAgent:
    root = base_url.removesuffix("/v1")
    return AnthropicAgent(anthropic.Anthropic(base_url=root, api_key=api_key))


def main() -> None:
    """The JSON-lines protocol on stdin and stdout; the client from the environment only."""
    agent = AnthropicAgent(anthropic.Anthropic())
    for line in sys.stdin:
        turn = json.loads(line)
        reply = {
            "type": "reply",
            "turn": turn["turn"],
            "content": agent.run_turn(turn["user_input"]),
        }
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
