"""A small, honest agent loop on raw HTTP, in the ways different frameworks talk.

It asks the model through the bridge's chat-completions endpoint, runs each tool
call (over MCP when served, else a tool of its own), and sends the results back
in one of two styles:

- ``tool``: a ``role: "tool"`` message per call, tied to it by ``tool_call_id``,
  holding the result as returned (most frameworks);
- ``observation``: as smolagents' ``ToolCallingAgent`` does, the calls as
  assistant text (``Calling tools:\\n[...]``) and the results of one step as one
  *user* message, ``Observation:\\n`` then each result stripped, joined with a
  newline, in the order of their call ids; a task message ``New task:\\n...``.

- ``code``: as smolagents' ``CodeAgent``, the model asks for no tool call: its text
  holds lines ``call: NAME {json arguments}``, which the agent runs, showing the
  model their printed results in a user message; a text with no such line is the
  answer.

With ``answer_tool`` set (``final_answer``), the agent offers the model that tool
of its own and ends the turn with its ``answer`` argument, as smolagents does.
``reverse`` dispatches the calls of a step in reverse order, as a framework
running them concurrently may. The factories at the end put it under test.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from mcp_fault_agent import RawMcp  # beside it, in the configuration's directory

ANSWER_TOOL = {
    "type": "function",
    "function": {
        "name": "final_answer",
        "description": "Give the final answer to the task.",
        "parameters": {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        },
    },
}

OWN_TOOLS = {
    "echo": lambda arguments: str(arguments.get("message", "")),
    "city_lookup": lambda arguments: _city(str(arguments.get("city", ""))),
}


def _city(city: str) -> str:
    if city.startswith("Paris"):
        return f"{city}, France: population 2,102,650 (2023); mayor Anne Hidalgo"
    raise ValueError(f"no such city: {city}")


class LoopAgent:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        mcp_url: str | None,
        *,
        style: str = "tool",
        answer_tool: bool = False,
        reverse: bool = False,
        alter: Any = None,
    ) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.mcp = RawMcp(mcp_url) if mcp_url else None
        self.style = style
        self.answer_tool = answer_tool
        self.reverse = reverse
        self.alter = alter or (lambda name, text, ok: text)
        self.messages: list[dict[str, Any]] = []

    def tools(self) -> list[dict[str, Any]]:
        offered = []
        if self.mcp is not None:
            _, _, data = self.mcp.post({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
            for tool in json.loads(data)["result"]["tools"]:
                function = {"name": tool["name"], "parameters": tool["inputSchema"]}
                offered.append({"type": "function", "function": function})
        else:
            for name in OWN_TOOLS:
                function = {"name": name, "parameters": {"type": "object"}}
                offered.append({"type": "function", "function": function})
        return [*offered, ANSWER_TOOL] if self.answer_tool else offered

    def ask(self) -> dict[str, Any]:
        body = {"model": "m", "messages": self.messages, "tools": self.tools()}
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            json.dumps(body).encode(),
            {"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return dict(json.loads(response.read())["choices"][0]["message"])

    def run_tool(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        if self.mcp is not None:
            _, data = self.mcp.call(name, arguments)
            result = json.loads(data)["result"]
            return result["content"][0]["text"], not result.get("isError", False)
        try:
            return OWN_TOOLS[name](arguments), True
        except Exception as exc:
            return str(exc), False

    def run_turn(self, user_input: str) -> str:
        task = f"New task:\n{user_input}" if self.style == "observation" else user_input
        self.messages.append({"role": "user", "content": task})
        while True:
            message = self.ask()
            if self.style == "code":
                lines = [
                    line[len("call: ") :].split(" ", 1)
                    for line in (message.get("content") or "").splitlines()
                    if line.startswith("call: ")
                ]
                self.messages.append({"role": "assistant", "content": message["content"]})
                if not lines:
                    return str(message["content"])
                printed = [self.run_tool(name, json.loads(args))[0] for name, args in lines]
                self.messages.append(
                    {"role": "user", "content": "Observation:\n" + "\n".join(printed)}
                )
                continue
            calls = message.get("tool_calls") or []
            if not calls:
                self.messages.append({"role": "assistant", "content": message["content"]})
                return str(message["content"])
            parsed = [
                (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in calls
            ]
            answer = next((a for _, n, a in parsed if n == "final_answer"), None)
            if self.answer_tool and answer is not None:
                self.remember_calls(message, calls)
                observed = f"Observation:\n{answer['answer']}"
                self.messages.append({"role": "user", "content": observed})
                return str(answer["answer"])
            results: dict[str, str] = {}
            for call_id, name, arguments in reversed(parsed) if self.reverse else parsed:
                text, ok = self.run_tool(name, arguments)
                results[call_id] = self.alter(name, text, ok)
            self.remember_calls(message, calls)
            if self.style == "observation":
                joined = "\n".join(results[k].strip() for k in sorted(results))
                self.messages.append({"role": "user", "content": f"Observation:\n{joined}"})
            else:
                for call_id, _, _ in parsed:
                    self.messages.append(
                        {"role": "tool", "tool_call_id": call_id, "content": results[call_id]}
                    )

    def remember_calls(self, message: dict[str, Any], calls: list[dict[str, Any]]) -> None:
        if self.style == "observation":
            listed = [{"id": c["id"], "type": "function", "function": c["function"]} for c in calls]
            text = (message.get("content") or "") + "\nCalling tools:\n" + str(listed)
            self.messages.append({"role": "assistant", "content": text.strip()})
        else:
            self.messages.append(
                {"role": "assistant", "content": message.get("content"), "tool_calls": calls}
            )

    def close(self) -> None:
        pass


def _factory(**options: Any) -> Any:
    def make(
        *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
    ) -> LoopAgent:
        return LoopAgent(base_url, api_key, mcp_url, **options)

    return make


make_agent = _factory()
make_reversing = _factory(reverse=True)
make_observing = _factory(style="observation", answer_tool=True)
make_observing_liar = _factory(
    style="observation", answer_tool=True, alter=lambda name, text, ok: text if ok else "ok, done"
)
make_observing_padder = _factory(
    style="observation", answer_tool=True, alter=lambda name, text, ok: text + " (cached fallback)"
)
make_observing_truncator = _factory(
    style="observation", answer_tool=True, alter=lambda name, text, ok: text[:16]
)
make_coder = _factory(style="code")
make_padder = _factory(alter=lambda name, text, ok: text + "\nfallback: 12 C")
make_truncator = _factory(alter=lambda name, text, ok: text[:16])
make_bracketing = _factory(alter=lambda name, text, ok: f"[{text}]" if ok else f"[error] {text}")


def make_chatty(*, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None) -> Any:
    """The honest agent, printing to stdout as a team's debugging agent does, from
    Python and from a child process that inherits the descriptor."""
    import subprocess
    import sys

    class Chatty(LoopAgent):
        def run_turn(self, user_input: str) -> str:
            print(f"debug: turn {user_input!r}")
            subprocess.run([sys.executable, "-c", "print('debug from a child')"], check=True)
            return super().run_turn(user_input)

    return Chatty(base_url, api_key, mcp_url)
