"""A small agent written on the official ``openai`` SDK, the way a team writes its own.

It streams every model reply (``stream=True``, rebuilding text and tool calls
from the deltas as they arrive), runs the tools the model asks for, sends their
results back, and answers when the model does.
Its tools are its own, and real:

- ``echo``: returns its ``message`` argument, or ``(empty)`` when that is missing
  or not a string (exactly like the harness's own ``echo``);
- ``write_note`` / ``read_note``: write and read a text file in the agent's
  workspace directory.

Two ways in, the two zeroclaw-eval offers:

- in-process: ``make_agent(base_url=..., api_key=..., workspace=...)`` is the
  ``[eval.agent] factory``; the harness calls ``run_turn(user_input)`` per turn;
- as a command: ``python notes_agent.py`` speaks the JSON-lines protocol on
  stdin/stdout, reading ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` (which the
  ``openai`` SDK reads by itself) and working in its current directory.

Nothing here knows about zeroclaw-eval: pointed at a real endpoint, it is a real agent.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai

EMPTY = "(empty)"
MODEL = os.environ.get("NOTES_AGENT_MODEL", "gpt-4o-mini")
MAX_ROUNDS = 10

SYSTEM = "You are a helpful assistant. Use the tools when they help."

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "echo",
            "description": "Echo back the given message.",
            "parameters": {
                "type": "object",
                "properties": {"message": {"type": "string"}},
                "required": ["message"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_note",
            "description": "Save a text note under a file name in the workspace.",
            "parameters": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "text": {"type": "string"}},
                "required": ["name", "text"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_note",
            "description": "Read a note saved earlier.",
            "parameters": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        },
    },
]


class NotesAgent:
    """One conversation: its history, its client, its workspace."""

    def __init__(self, client: openai.OpenAI, workspace: Path) -> None:
        self.client = client
        self.workspace = workspace
        self.history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        self.tools: dict[str, Callable[[dict[str, Any]], str]] = {
            "echo": self.echo,
            "write_note": self.write_note,
            "read_note": self.read_note,
        }

    # --- the loop -----------------------------------------------------------------

    def run_turn(self, user_input: str) -> str:
        """Answer one user message, calling tools as the model asks."""
        self.history.append({"role": "user", "content": user_input})
        for _ in range(MAX_ROUNDS):
            text, calls = self.ask()
            if not calls:
                self.history.append({"role": "assistant", "content": text})
                return text
            self.history.append({"role": "assistant", "content": text or None, "tool_calls": calls})
            for call in calls:
                self.send_result(call["id"], self.run_tool(call["function"]))
        raise RuntimeError(f"the model asked for tools {MAX_ROUNDS} times in a row")

    def ask(self) -> tuple[str, list[dict[str, Any]]]:
        """One streamed model reply: its text and its tool calls, rebuilt from the deltas."""
        # The history and tools are plain dicts, not the SDK's TypedDicts.
        stream = self.client.chat.completions.create(  # type: ignore[call-overload]
            model=MODEL,
            messages=self.history,
            tools=TOOLS,
            stream=True,
            stream_options={"include_usage": True},
        )
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        for chunk in stream:
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)  # a UI would render it now
                for piece in delta.tool_calls or ():
                    call = calls.setdefault(
                        piece.index,
                        {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                    )
                    call["id"] = piece.id or call["id"]
                    if piece.function is not None:
                        call["function"]["name"] += piece.function.name or ""
                        call["function"]["arguments"] += piece.function.arguments or ""
        return "".join(text), [calls[index] for index in sorted(calls)]

    def send_result(self, call_id: str, result: str) -> None:
        """Give a tool's result to the model with the next request."""
        self.history.append({"role": "tool", "tool_call_id": call_id, "content": result})

    def run_tool(self, function: dict[str, str]) -> str:
        """Run one requested tool; whatever goes wrong is text for the model."""
        name = function["name"]
        tool = self.tools.get(name)
        if tool is None:
            return f"unknown tool {name!r}"
        try:
            arguments = json.loads(function["arguments"] or "{}")
        except ValueError as exc:
            return f"arguments are not JSON: {exc}"
        if not isinstance(arguments, dict):
            return "arguments are not a JSON object"
        try:
            return tool(arguments)
        except Exception as exc:  # a tool's failure is the model's to read
            return f"{name} failed: {exc}"

    # --- the tools ----------------------------------------------------------------

    def echo(self, arguments: dict[str, Any]) -> str:
        message = arguments.get("message")
        return message if isinstance(message, str) else EMPTY

    def write_note(self, arguments: dict[str, Any]) -> str:
        path = self.note_path(arguments.get("name"))
        text = arguments.get("text")
        if not isinstance(text, str):
            raise ValueError("text must be a string")
        path.write_text(text, encoding="utf-8")
        return f"saved {path.name} ({len(text)} characters)"

    def read_note(self, arguments: dict[str, Any]) -> str:
        path = self.note_path(arguments.get("name"))
        if not path.is_file():
            raise FileNotFoundError(f"no note named {path.name!r}")
        return path.read_text(encoding="utf-8")

    def note_path(self, name: Any) -> Path:
        if not isinstance(name, str) or not name or Path(name).name != name:
            raise ValueError(f"a note name is a plain file name, not {name!r}")
        return self.workspace / f"{name}.txt"


_http_client: openai.DefaultHttpxClient | None = None
_http_client_lock = threading.Lock()


def shared_http_client() -> openai.DefaultHttpxClient:
    """One connection pool for every agent of this process.

    Each ``openai.OpenAI()`` otherwise builds its own HTTP client, TLS context
    included: tens of milliseconds, per case. The SDK takes a shared one as
    ``http_client``; it is thread-safe.
    """
    global _http_client
    with _http_client_lock:
        if _http_client is None:
            _http_client = openai.DefaultHttpxClient()
        return _http_client


def make_agent(*, base_url: str, api_key: str, workspace: Path) -> NotesAgent:
    """The in-process factory: one agent per case, talking to ``base_url``."""
    client = openai.OpenAI(base_url=base_url, api_key=api_key, http_client=shared_http_client())
    return NotesAgent(client, workspace)


def serve(agent: Any, stdin: Any = sys.stdin, stdout: Any = sys.stdout) -> int:
    """The JSON-lines protocol: one ``turn`` line in, one ``reply`` (or ``error``) line out."""
    for line in stdin:
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
        stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
        stdout.flush()
    return 0


def main(agent_class: type[NotesAgent] = NotesAgent) -> int:
    """Run as a command: the model's address comes from the environment."""
    client = openai.OpenAI()  # reads OPENAI_BASE_URL and OPENAI_API_KEY
    workspace = Path(os.environ.get("ZEROCLAW_EVAL_WORKSPACE", os.getcwd()))
    return serve(agent_class(client, workspace))


if __name__ == "__main__":
    sys.exit(main())
