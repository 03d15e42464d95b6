"""A small agent with an ``echo`` tool of its own, on plain HTTP (stdlib only).

It is a team's agent as the harness meets it: it knows nothing of fixtures, only
an OpenAI-compatible endpoint. Used in-process (``echo_agent:make_agent``) and as
a command (``python echo_agent.py [--drop-results | --ignore-tools]``).

``drop_results`` makes it forget to send its tool results back to the model;
``ignore_tools`` makes it answer without running the tools the model asked for.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any

ECHO = {
    "type": "function",
    "function": {
        "name": "echo",
        "description": "Return the message.",
        "parameters": {"type": "object", "properties": {"message": {"type": "string"}}},
    },
}


class EchoAgent:
    """History across turns is this object's; tools run here, not in the harness."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        workspace: Path,
        drop_results: bool = False,
        ignore_tools: bool = False,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.workspace = workspace
        self.drop_results = drop_results
        self.ignore_tools = ignore_tools
        self.history: list[dict[str, Any]] = []

    def ask(self) -> dict[str, Any]:
        body = {"model": "echo-agent", "messages": self.history, "tools": [ECHO]}
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            message: dict[str, Any] = json.load(response)["choices"][0]["message"]
            return message

    def run_turn(self, user_input: str) -> str:
        self.history.append({"role": "user", "content": user_input})
        while True:
            message = self.ask()
            calls = message.get("tool_calls") or []
            if not calls or self.ignore_tools:
                text = message.get("content") or ""
                self.history.append({"role": "assistant", "content": text})
                return text
            self.history.append(
                {"role": "assistant", "content": message.get("content"), "tool_calls": calls}
            )
            for call in calls:
                arguments = json.loads(call["function"]["arguments"] or "{}")
                result = str(arguments.get("message", "(empty)"))
                (self.workspace / "echoed.txt").write_text(result, encoding="utf-8")
                if not self.drop_results:
                    self.history.append(
                        {"role": "tool", "tool_call_id": call["id"], "content": result}
                    )


def make_agent(*, base_url: str, api_key: str, workspace: Path) -> EchoAgent:
    return EchoAgent(base_url=base_url, api_key=api_key, workspace=workspace)


def make_forgetful_agent(*, base_url: str, api_key: str, workspace: Path) -> EchoAgent:
    return EchoAgent(base_url=base_url, api_key=api_key, workspace=workspace, drop_results=True)


def main() -> None:
    agent = EchoAgent(
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        workspace=Path(os.environ["ZEROCLAW_EVAL_WORKSPACE"]),
        drop_results="--drop-results" in sys.argv,
        ignore_tools="--ignore-tools" in sys.argv,
    )
    for line in sys.stdin:
        turn = json.loads(line)
        try:
            reply = {
                "type": "reply",
                "turn": turn["turn"],
                "content": agent.run_turn(turn["user_input"]),
            }
        except Exception as exc:  # reported on the protocol, as the harness asks
            print(f"echo agent: {exc}", file=sys.stderr)
            reply = {"type": "error", "turn": turn["turn"], "message": str(exc)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
