"""A served-tools agent that misbehaves on the MCP route, one way per factory.

It speaks MCP with a few raw HTTP requests (``http.client``), then asks the model
once for the turn's answer. The factories:

- ``hang_up``: sends a ``tools/call`` of ``wait_for_file``, and once the tool has
  started, closes its socket and creates the file the tool waits for;
- ``malformed``: posts a body that is not JSON in its session;
- ``late``: calls ``echo`` from ``close()``, after its case's last turn;
- ``oversized``: calls ``big``, whose scripted result is over the bound;
- ``cross`` / ``victim``: ``cross`` sends a request with its own session to the
  route of the concurrent ``victim`` case, which then goes on and passes.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: The victim's MCP URL, for the crossing agent (both run in one process).
VICTIM_URL: list[str] = []
CROSSED = threading.Event()


class RawMcp:
    """An MCP session over plain HTTP/1.1 requests."""

    def __init__(self, url: str) -> None:
        self.url = url
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "", parts.port or 80, parts.path
        status, headers, _ = self.post(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
        )
        assert status == 200, status
        self.session = headers["mcp-session-id"]

    def post(
        self, message: Any, *, raw: bytes | None = None, url: str | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if getattr(self, "session", None):
            headers["Mcp-Session-Id"] = self.session
        path = urlsplit(url).path if url else self.path
        body = raw if raw is not None else json.dumps(message).encode()
        connection.request("POST", path, body, headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[int, bytes]:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        status, _, data = self.post(message)
        return status, data

    def hang_up_during(self, name: str, arguments: dict[str, Any]) -> None:
        """Send a ``tools/call`` and close the connection without reading the result."""
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        ).encode()
        head = (
            f"POST {self.path} HTTP/1.1\r\nHost: {self.host}\r\n"
            f"Content-Type: application/json\r\nMcp-Session-Id: {self.session}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        started = Path(arguments["path"]).with_suffix(".started")
        with socket.create_connection((self.host, self.port)) as connection:
            connection.sendall(head + body)
            deadline = time.monotonic() + 10
            while not started.exists() and time.monotonic() < deadline:
                time.sleep(0.005)  # the call is running: now hang up
            connection.shutdown(socket.SHUT_RDWR)


class FaultAgent:
    def __init__(self, base_url: str, api_key: str, workspace: Path, mcp_url: str, fault: str):
        self.base_url = base_url
        self.api_key = api_key
        self.workspace = workspace
        self.mcp = RawMcp(mcp_url)
        self.fault = fault

    def run_turn(self, user_input: str) -> str:
        if self.fault == "hang_up":
            flag = self.workspace / "hung-up"
            self.mcp.hang_up_during("wait_for_file", {"path": str(flag)})
            flag.write_text("", encoding="utf-8")
        elif self.fault == "malformed":
            self.mcp.post(None, raw=b"{not json")
        elif self.fault == "oversized":
            self.mcp.call("big", {})
        elif self.fault == "victim":
            CROSSED.clear()
            VICTIM_URL.append(self.mcp.url)
            CROSSED.wait(30)
        elif self.fault == "cross":
            deadline = time.monotonic() + 30
            while not VICTIM_URL and time.monotonic() < deadline:
                time.sleep(0.01)
            victim = VICTIM_URL.pop()
            self.mcp.post({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, url=victim)
            CROSSED.set()
        return self.ask_model(user_input)

    def ask_model(self, user_input: str) -> str:
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            json.dumps(
                {"model": "m", "messages": [{"role": "user", "content": user_input}]}
            ).encode(),
            {"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            reply = json.loads(response.read())
        return str(reply["choices"][0]["message"]["content"])

    def close(self) -> None:
        if self.fault == "late":
            self.mcp.call("echo", {"message": "too late"})


def _factory(fault: str) -> Any:
    def make(*, base_url: str, api_key: str, workspace: Path, mcp_url: str) -> FaultAgent:
        return FaultAgent(base_url, api_key, workspace, mcp_url, fault)

    return make


make_hang_up = _factory("hang_up")
make_malformed = _factory("malformed")
make_late = _factory("late")
make_oversized = _factory("oversized")


def make_by_input(*, base_url: str, api_key: str, workspace: Path, mcp_url: str) -> Any:
    """For the crossing pair: the fault is the case's first user input (``cross``/``victim``)."""

    class ByInput(FaultAgent):
        def run_turn(self, user_input: str) -> str:
            self.fault = user_input
            return super().run_turn(user_input)

    return ByInput(base_url, api_key, workspace, mcp_url, "")
