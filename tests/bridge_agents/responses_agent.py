"""An agent on the ``openai`` SDK's Responses API, with the harness's ``echo`` semantics.

It keeps no history of its own: each request names the previous response
(``previous_response_id``) and sends only what is new, the user's message or
the outputs of the calls the model asked for, as stateful Responses agents do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai

ECHO = {
    "type": "function",
    "name": "echo",
    "description": "Echo back the given message.",
    "parameters": {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
}


def echo(arguments: str) -> str:
    message = json.loads(arguments or "{}").get("message")
    return message if isinstance(message, str) else "(empty)"


class ResponsesAgent:
    def __init__(self, client: openai.OpenAI) -> None:
        self.client = client
        self.previous: str | None = None

    def run_turn(self, user_input: str) -> str:
        new_input: list[Any] = [{"role": "user", "content": user_input}]
        while True:
            response = self.client.responses.create(
                model="gpt-test",
                input=new_input,
                tools=[ECHO],
                previous_response_id=self.previous,
            )
            self.previous = response.id
            calls = [item for item in response.output if item.type == "function_call"]
            if not calls:
                return response.output_text
            new_input = [
                {
                    "type": "function_call_output",
                    "call_id": call.call_id,
                    "output": echo(call.arguments) if call.name == "echo" else "unknown tool",
                }
                for call in calls
            ]


def make_agent(*, base_url: str, api_key: str, workspace: Path) -> ResponsesAgent:
    return ResponsesAgent(openai.OpenAI(base_url=base_url, api_key=api_key))
