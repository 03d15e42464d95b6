"""Agents on raw HTTP that meet a failing model, one honest and several wrong.

Each asks the bridge's chat-completions endpoint, runs its tools and sends each
result back as a ``role: "tool"`` message. Its tools are its own (``echo``, and
``slow``, which hangs until the agent's tool timeout cancels it), or, served the
case's tools, those of the MCP route, called with a one-second timeout: a
JSON-RPC error or a dropped connection is an error result, a call that times out
is cancelled. What differs is how it meets a failure:

- ``honest``: retries a 408, 409, 429, 5xx or a dropped connection at most twice,
  waiting ``Retry-After``; otherwise tells the user; answers a cancelled call with
  "cancelled";
- ``forever``: retries every failure without waiting, a hundred times (as good as
  without end, for any script);
- ``swallow``: takes a failed request for an empty answer;
- ``dropper``: leaves out the result of a call whose tool it had to cancel;
- ``impatient``: retries at once, ignoring ``Retry-After``.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("echo", "slow")
]
RETRYABLE = {408, 409, 429, *range(500, 600)}


class Failed(Exception):
    def __init__(self, status: int | None, retry_after: float | None, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.retry_after = retry_after


#: How long the agent waits for a served tool's result before cancelling the call.
TOOL_TIMEOUT_S = 1.0


class RecoveryAgent:
    def __init__(self, base_url: str, api_key: str, style: str, mcp_url: str | None) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.style = style
        self.messages: list[dict[str, Any]] = []
        self.mcp = None
        if mcp_url is not None:
            from mcp_fault_agent import RawMcp  # beside it, in the configuration's directory

            self.mcp = RawMcp(mcp_url)

    def call_served(self, name: str, arguments: dict[str, Any]) -> str | None:
        """The result of a served tool; ``None`` for a call cancelled at the timeout."""
        assert self.mcp is not None
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        connection = http.client.HTTPConnection(
            self.mcp.host, self.mcp.port, timeout=TOOL_TIMEOUT_S
        )
        headers = {"Content-Type": "application/json", "Mcp-Session-Id": self.mcp.session}
        try:
            connection.request("POST", self.mcp.path, json.dumps(message).encode(), headers)
            reply = json.loads(connection.getresponse().read())
        except TimeoutError:
            return None
        except (http.client.HTTPException, ConnectionError) as exc:
            return f"error: the tool's connection dropped ({type(exc).__name__})"
        finally:
            connection.close()
        if "error" in reply:
            return f"error: JSON-RPC {reply['error']['code']}: {reply['error']['message']}"
        return str(reply["result"]["content"][0]["text"])

    def post(self) -> dict[str, Any]:
        body = {"model": "m", "messages": self.messages, "tools": TOOLS}
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            json.dumps(body).encode(),
            {"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return dict(json.loads(response.read())["choices"][0]["message"])
        except urllib.error.HTTPError as exc:
            after = exc.headers.get("Retry-After")
            raise Failed(exc.code, float(after) if after else None, exc.read().decode()) from None
        except (http.client.HTTPException, ConnectionError, ValueError) as exc:
            raise Failed(None, None, f"connection: {exc}") from None

    def ask(self) -> dict[str, Any] | None:
        retries = 0
        while True:
            try:
                return self.post()
            except Failed as failure:
                if self.style == "swallow":
                    return {"role": "assistant", "content": ""}
                if self.style == "forever" and retries < 100:
                    retries += 1
                    continue
                if retries >= 2 or (failure.status is not None and failure.status not in RETRYABLE):
                    self.failure = f"The model failed: HTTP {failure.status}: {failure}"
                    return None
                if self.style != "impatient":
                    time.sleep(failure.retry_after if failure.retry_after is not None else 0.05)
                retries += 1

    def run_tool(self, name: str, arguments: str) -> str | None:
        try:
            parsed = json.loads(arguments)
        except ValueError as exc:
            return f"error: arguments are not JSON: {exc}"
        if self.mcp is not None:
            result = self.call_served(name, parsed)
        elif name == "slow":  # the tool hangs: the agent's timeout cancels it
            result = None
        else:
            result = str(parsed.get("message", ""))
        if result is None:
            return None if self.style == "dropper" else "cancelled: the tool timed out"
        return result

    def run_turn(self, user_input: str) -> str:
        self.messages.append({"role": "user", "content": user_input})
        while True:
            message = self.ask()
            if message is None:
                return self.failure
            calls = message.get("tool_calls") or []
            self.messages.append(
                {"role": "assistant", "content": message.get("content"), "tool_calls": calls}
                if calls
                else {"role": "assistant", "content": message.get("content") or ""}
            )
            if not calls:
                return str(message.get("content") or "")
            for call in calls:
                result = self.run_tool(call["function"]["name"], call["function"]["arguments"])
                if result is not None:
                    self.messages.append(
                        {"role": "tool", "tool_call_id": call["id"], "content": result}
                    )

    def close(self) -> None:
        pass


def _factory(style: str) -> Any:
    def make(
        *, base_url: str, api_key: str, workspace: Path, mcp_url: str | None = None
    ) -> RecoveryAgent:
        return RecoveryAgent(base_url, api_key, style, mcp_url)

    return make


make_honest = _factory("honest")
make_forever = _factory("forever")
make_swallow = _factory("swallow")
make_dropper = _factory("dropper")
make_impatient = _factory("impatient")
