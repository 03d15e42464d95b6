"""A team's own MCP server behind the served tools, for ``zeroclaw eval record``.

With ``[eval.agent] mcp_upstream = ["python", "tools_server.py"]``, a run that
talks to a real model (``live``, and so ``record``) starts that server once, over
stdio (newline-delimited JSON-RPC on its stdin and stdout, its stderr kept),
lists its tools, and serves them to the agent beside the registered ones: each
call the agent makes is passed on to the real server and its real result sent
back. ``record`` keeps those results as the recorded fixture's ``tool_results``,
so the case replays in CI without the server (:mod:`zeroclaw_eval.run.recording`).

A server that does not answer a request within :data:`TIMEOUT_S`, exits, or
answers with an error fails the case whose call it was, in one line; the suite
goes on, and however the run ends, the server's process group is killed.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import IO, Any

from zeroclaw_eval.errors import RunError, ZeroclawEvalError, one_line
from zeroclaw_eval.protocol import ToolResult
from zeroclaw_eval.toolserver.jsonrpc import LATEST_HANDSHAKE_VERSION

#: How long the server may take to answer one request.
TIMEOUT_S = 30.0


class StdioUpstream:
    """One MCP server process, spoken to over stdio; thread-safe, one request at a time."""

    def __init__(self, argv: Sequence[str], timeout_s: float | None = None) -> None:
        self.argv = list(argv)
        self.shown = shlex.join(self.argv)
        self.timeout_s = TIMEOUT_S if timeout_s is None else timeout_s
        self._lock = threading.Lock()
        self._next_id = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self._arrived = threading.Condition()
        self._ended = False
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close
        self.process: subprocess.Popen[bytes] | None = None
        self.tools: list[Mapping[str, Any]] = []

    def start(self) -> None:
        """Start the server, shake hands and list its tools. Raises :class:`ZeroclawEvalError`."""
        try:
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,
            )
        except OSError as exc:
            raise ZeroclawEvalError(
                f"the MCP server {self.shown} could not start: {exc.strerror or exc}"
            ) from None
        threading.Thread(target=self._read, name="zeroclaw-eval-mcp-upstream", daemon=True).start()
        try:
            self.request(
                "initialize",
                {
                    "protocolVersion": LATEST_HANDSHAKE_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "zeroclaw-eval", "version": "record"},
                },
            )
            self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            cursor: Any = None
            while True:
                listed = self.request("tools/list", {"cursor": cursor} if cursor else {})
                self.tools.extend(listed.get("tools") or [])
                cursor = listed.get("nextCursor")
                if not cursor:
                    break
        except RunError as exc:
            self.close()
            raise ZeroclawEvalError(str(exc)) from None

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """The server's result for one ``tools/call``. Raises :class:`RunError`."""
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        content = result.get("content") or []
        text = "".join(
            item.get("text", "")
            for item in content
            if isinstance(item, dict) and item.get("type") == "text"
        )
        return ToolResult(text, success=not result.get("isError", False))

    def request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its result. Raises :class:`RunError` naming why not."""
        with self._lock:
            self._next_id += 1
            number = self._next_id
            self._send({"jsonrpc": "2.0", "id": number, "method": method, "params": dict(params)})
            with self._arrived:
                if not self._arrived.wait_for(
                    lambda: number in self._replies or self._ended, self.timeout_s
                ):
                    raise RunError(
                        f"the MCP server {self.shown} did not answer {method} within "
                        f"{self.timeout_s:g} s"
                    )
                reply = self._replies.pop(number, None)
        if reply is None:
            raise RunError(f"the MCP server {self.shown} {self._how_it_ended()} during {method}")
        error = reply.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else error
            raise RunError(
                f"the MCP server {self.shown} refused {method}: {one_line(str(message))}"
            )
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    def _send(self, message: Mapping[str, Any]) -> None:
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except (OSError, ValueError):
            raise RunError(f"the MCP server {self.shown} {self._how_it_ended()}") from None

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            with suppress(ValueError):
                message = json.loads(line)
                if isinstance(message, dict) and isinstance(message.get("id"), int):
                    with self._arrived:
                        self._replies[message["id"]] = message
                        self._arrived.notify_all()
        with self._arrived:
            self._ended = True
            self._arrived.notify_all()

    def _how_it_ended(self) -> str:
        status = self.process.poll() if self.process is not None else None
        if status is None and self.process is not None:
            with suppress(subprocess.TimeoutExpired):
                status = self.process.wait(timeout=1)
        how = "exited" if status is None else f"exited with status {status}"
        self._stderr.seek(0)
        tail = " | ".join(self._stderr.read().decode("utf-8", "replace").strip().splitlines())
        return f"{how}; its stderr ends: {tail[-300:]}" if tail else how

    def close(self) -> None:
        """Kill the server's process group and reap it; idempotent."""
        process = self.process
        if process is not None:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
            for stream in (process.stdin, process.stdout):
                with suppress(OSError, ValueError):
                    if stream is not None:
                        stream.close()
        with suppress(OSError):
            self._stderr.close()


class UpstreamCall:
    """The upstream tools of one case attempt: each call passed on, its failure kept.

    A call the server cannot answer gets a failed result, and the case a run error
    at the end of the turn (:meth:`check`).
    """

    def __init__(self, upstream: StdioUpstream) -> None:
        self.upstream = upstream
        self.failures: list[str] = []

    def tools(self) -> dict[str, UpstreamTool]:
        return {
            entry["name"]: UpstreamTool(self, entry)
            for entry in self.upstream.tools
            if isinstance(entry.get("name"), str)
        }

    def check(self, turn: int) -> None:
        """After turn ``turn``: raise the run error of the first call the server failed."""
        if self.failures:
            raise RunError(f"turn {turn}: {self.failures[0]}")


class UpstreamTool:
    """A tool of the team's MCP server, as the agent is served it. ``upstream`` marks it
    for ``record``, which keeps its results."""

    upstream = True

    def __init__(self, owner: UpstreamCall, entry: Mapping[str, Any]) -> None:
        self._owner = owner
        self.name: str = entry["name"]
        description = entry.get("description")
        self.description = description if isinstance(description, str) else ""
        schema = entry.get("inputSchema")
        self.parameters: Mapping[str, Any] = schema if isinstance(schema, dict) else {}

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        try:
            return self._owner.upstream.call(self.name, arguments)
        except RunError as exc:
            self._owner.failures.append(str(exc))
            return ToolResult(f"tool '{self.name}': {exc}", success=False)
