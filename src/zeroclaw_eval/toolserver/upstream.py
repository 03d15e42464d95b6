"""A team's own MCP server behind the served tools, for ``zeroclaw eval record``.

With ``[eval.agent] mcp_upstream``, a run that talks to a real model (``live``,
and so ``record``) reaches that server afresh for each case attempt, lists its
tools, and serves them to the agent beside the registered ones: each call the
agent makes is passed on to the real server and its real result sent back.
``record`` keeps those results as the recorded fixture's ``tool_results``, and
each tool's description and schema as its ``tool_definitions``, so the case
replays in CI without the server (:mod:`zeroclaw_eval.run.recording`).

The server is an argv, started over stdio (newline-delimited JSON-RPC on its
stdin and stdout, its stderr kept), or an ``http://``/``https://`` URL spoken to
over streamable HTTP (:mod:`zeroclaw_eval.toolserver.upstream_http`). Either way
the client is dual-era, as the ``2026-07-28`` revision describes: it probes with
``server/discover`` and, when the server answers it, sends every request
stateless with the ``_meta`` envelope; on any error that is not a recognised
modern one (or, over stdio, no answer in time) it falls back to the
``initialize`` handshake of ``2025-11-25``.

Per case attempt, so that a stateful server's state never leaks from one case
into the next (a replay plays each case's own script) and a server that dies
fails only the case it served. A server that does not answer a request within
``mcp_upstream_timeout_s``, exits, or answers with an error fails that case in
one line; the suite goes on, and however the case ends the server's process group
is killed (stdio) or its session deleted (HTTP).
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

from zeroclaw_eval.config import DEFAULT_MCP_UPSTREAM_TIMEOUT_S
from zeroclaw_eval.errors import RunError, one_line
from zeroclaw_eval.protocol import ToolResult
from zeroclaw_eval.toolserver import jsonrpc
from zeroclaw_eval.toolserver.headers import PROTOCOL_VERSION_KEY, encode_header, mirrored_headers
from zeroclaw_eval.toolserver.jsonrpc import (
    CLIENT_CAPABILITIES_KEY,
    MODERN_ERRORS,
    UNSUPPORTED_PROTOCOL_VERSION,
    argument_at,
    param_headers,
    param_text,
)
from zeroclaw_eval.toolserver.upstream_channel import Channel, NotModern, Unanswered
from zeroclaw_eval.util.processes import Mark, adopt_orphans
from zeroclaw_eval.util.redact import NO_SECRETS, Secrets

#: The stateless revision this client speaks (``server/discover``, ``_meta`` envelope).
MODERN_VERSION = jsonrpc.STATELESS_VERSIONS[0]
#: The handshake revisions, newest first: the fallback offers the first. A team's
#: stdio server may answer one older than any the tool server speaks over HTTP.
HANDSHAKE_VERSIONS = (*jsonrpc.HANDSHAKE_VERSIONS, "2024-11-05")

CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_INFO = {"name": "zeroclaw-eval", "version": "record"}

#: The longest a stdio probe waits before taking silence for a handshake-era server.
PROBE_TIMEOUT_S = 10.0


class Upstream:
    """One MCP server for one case attempt: its era found, its tools listed, calls passed on."""

    def __init__(self, channel: Channel, timeout_s: float = DEFAULT_MCP_UPSTREAM_TIMEOUT_S) -> None:
        self.channel = channel
        self.shown = channel.shown
        self.timeout_s = timeout_s
        self.modern = False
        self.protocol_version = MODERN_VERSION
        self.tools: list[Mapping[str, Any]] = []
        #: Tools listed but not served, each with the reason (an invalid definition).
        self.left_out: dict[str, str] = {}
        self._params: dict[str, dict[tuple[str, ...], str]] = {}
        self._lock = threading.Lock()
        self._next_id = 0

    def start(self) -> None:
        """Reach the server, find its era and list its tools. Raises :class:`RunError`."""
        try:
            self.channel.open()
            self._find_era()
            cursor: Any = None
            while True:
                listed = self.request("tools/list", {"cursor": cursor} if cursor else {})
                for entry in listed.get("tools") or []:
                    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                        self._list(entry)
                cursor = listed.get("nextCursor")
                if not cursor:
                    break
        except BaseException:
            self.close()
            raise

    def _list(self, entry: Mapping[str, Any]) -> None:
        """Keep one listed tool, with the ``Mcp-Param-*`` headers its calls carry.

        A tool whose header annotations are invalid is left out, as a modern client
        must, whatever the channel: the harness serves it again over HTTP, where
        the agent's client would leave it out, so neither the agent nor the
        recording is offered a tool that is not really there.
        """
        try:
            headers = param_headers(entry.get("inputSchema") or {})
        except ValueError as exc:
            self.left_out[entry["name"]] = str(exc)
            return
        if self.modern and self.channel.has_headers:
            self._params[entry["name"]] = headers
        self.tools.append(entry)

    def _find_era(self) -> None:
        """Probe with ``server/discover``; fall back to ``initialize`` unless the answer
        is positive evidence of a modern server."""
        probe_timeout = self.timeout_s
        if self.channel.timed_out_means_legacy():
            probe_timeout = min(self.timeout_s, PROBE_TIMEOUT_S)
        try:
            reply = self._exchange("server/discover", {}, modern=True, timeout_s=probe_timeout)
        except NotModern:
            reply = None
        except Unanswered:
            if not self.channel.timed_out_means_legacy():
                raise
            reply = None
        if reply is not None and self._is_modern(reply):
            self.modern = True
            return
        result = self._result(
            "initialize",
            self._exchange(
                "initialize",
                {
                    "protocolVersion": HANDSHAKE_VERSIONS[0],
                    "capabilities": {},
                    "clientInfo": CLIENT_INFO,
                },
                modern=False,
            ),
        )
        version = result.get("protocolVersion")
        if version not in HANDSHAKE_VERSIONS:
            raise RunError(
                f"the MCP server {self.shown} answered initialize with protocol version "
                f"{version!r}, which this client does not speak "
                f"({', '.join(HANDSHAKE_VERSIONS)})"
            )
        self.protocol_version = version
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self.channel.notify(initialized, self._headers(initialized, modern=False), self.timeout_s)

    def _is_modern(self, reply: Mapping[str, Any]) -> bool:
        """Whether the probe's ``reply`` shows a modern server; raises :class:`RunError`
        when it shows one this client cannot speak to."""
        error = reply.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            if code not in MODERN_ERRORS:
                return False  # any other error: a handshake-era server
            data = error.get("data")
            supported = data.get("supported") if isinstance(data, dict) else None
            if code == UNSUPPORTED_PROTOCOL_VERSION and isinstance(supported, list):
                if any(version in HANDSHAKE_VERSIONS for version in supported):
                    return False  # it still speaks a handshake revision: use that
                raise RunError(
                    f"the MCP server {self.shown} speaks only protocol versions "
                    f"{', '.join(map(str, supported))}; this client speaks {MODERN_VERSION} "
                    f"and {', '.join(HANDSHAKE_VERSIONS)}"
                )
            raise RunError(
                f"the MCP server {self.shown} refused server/discover: "
                f"{one_line(str(error.get('message')))}"
            )
        result = reply.get("result")
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        # A discover answer naming no modern version advertises the handshake era.
        return isinstance(versions, list) and MODERN_VERSION in versions

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """The server's result for one ``tools/call``. Raises :class:`RunError`."""
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        if result.get("resultType", "complete") != "complete":
            raise RunError(
                f"the MCP server {self.shown} answered tools/call {name!r} with a "
                f"{result.get('resultType')!r} result, which a recording cannot answer"
            )
        content = result.get("content") or []
        text = "".join(
            item.get("text", "")
            for item in content
            if isinstance(item, dict) and item.get("type") == "text"
        )
        return ToolResult(text, success=not result.get("isError", False))

    def request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request in the server's era and wait for its result. Raises
        :class:`RunError` naming why not."""
        try:
            reply = self._exchange(method, params, modern=self.modern)
        except NotModern as exc:
            raise RunError(f"the MCP server {self.shown} refused {method}: {exc}") from None
        return self._result(method, reply)

    def _result(self, method: str, reply: Mapping[str, Any]) -> dict[str, Any]:
        error = reply.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else error
            raise RunError(
                f"the MCP server {self.shown} refused {method}: {one_line(str(message))}"
            )
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    def _exchange(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        modern: bool,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        body = dict(params)
        if modern:
            body["_meta"] = {
                PROTOCOL_VERSION_KEY: MODERN_VERSION,
                CLIENT_CAPABILITIES_KEY: {},
                CLIENT_INFO_KEY: CLIENT_INFO,
            }
        with self._lock:  # one request at a time: ids in order, a stdio pipe unshared
            self._next_id += 1
            message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": body}
            headers = self._headers(message, modern=modern)
            timeout = self.timeout_s if timeout_s is None else timeout_s
            try:
                return self.channel.request(message, headers, timeout)
            except Unanswered as exc:
                raise Unanswered(
                    f"the MCP server {self.shown} did not answer {method} within {timeout:g} s"
                ) from exc

    def _headers(self, message: Mapping[str, Any], *, modern: bool) -> dict[str, str]:
        """The HTTP headers ``message`` carries (a stdio channel ignores them)."""
        if not modern:
            # The handshake itself goes without a version: none is agreed yet.
            if message.get("method") == "initialize":
                return {}
            return {"MCP-Protocol-Version": self.protocol_version}
        headers = mirrored_headers(message)  # its revision, method and a call's tool name
        params = message.get("params") or {}
        name = params.get("name")
        if message.get("method") == "tools/call" and isinstance(name, str):
            for path, header in self._params.get(name, {}).items():
                value = param_text(argument_at(params.get("arguments"), path))
                if value is not None:
                    headers[f"Mcp-Param-{header}"] = encode_header(value)
        return headers

    def diagnostics(self) -> str:
        """Nothing to add to a timeout: a request it left unanswered fails with its own line."""
        return ""

    def close(self) -> None:
        """End the server (stdio) or its session (HTTP); idempotent."""
        self.channel.close()


class StdioChannel(Channel):
    """One MCP server process, spoken to over stdio.

    It runs with the harness's environment less ``secrets``' variables (the
    provider's key: a team's tool server is the agent's code, and what it returns is
    recorded into fixtures that ship), and its stderr is quoted without their values.
    It is marked as a command agent is (:class:`~zeroclaw_eval.util.processes.Mark`),
    so that closing it ends what it started too, a daemon that left its group included.
    """

    def __init__(self, argv: Sequence[str], secrets: Secrets | None = None) -> None:
        self.argv = list(argv)
        self._secrets = secrets if secrets is not None else NO_SECRETS
        self._mark = Mark()
        self.shown = shlex.join(self.argv)
        self._replies: dict[int, dict[str, Any]] = {}
        self._arrived = threading.Condition()
        self._ended = False
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close
        self.process: subprocess.Popen[bytes] | None = None

    def open(self) -> None:
        adopt_orphans()
        try:
            self.process = subprocess.Popen(
                self.argv,
                env=self._mark.environment(self._secrets.environment(os.environ)),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                start_new_session=True,  # its own process group: all of it is killed
            )
        except OSError as exc:
            raise RunError(
                f"the MCP server {self.shown} could not start: {exc.strerror or exc}"
            ) from None
        self._mark.lead(self.process.pid)
        threading.Thread(target=self._read, name="zeroclaw-eval-mcp-upstream", daemon=True).start()

    def timed_out_means_legacy(self) -> bool:
        return True

    def request(
        self, message: Mapping[str, Any], headers: Mapping[str, str], timeout_s: float
    ) -> dict[str, Any]:
        number = message["id"]
        self._send(message, str(message["method"]))
        with self._arrived:
            if not self._arrived.wait_for(
                lambda: number in self._replies or self._ended, timeout_s
            ):
                raise Unanswered("no answer")
            reply = self._replies.pop(number, None)
        if reply is None:
            raise RunError(
                f"the MCP server {self.shown} {self._how_it_ended()} during {message['method']}"
            )
        return reply

    def notify(
        self, message: Mapping[str, Any], headers: Mapping[str, str], timeout_s: float
    ) -> None:
        self._send(message, str(message["method"]))

    def _send(self, message: Mapping[str, Any], method: str) -> None:
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except (OSError, ValueError):
            raise RunError(
                f"the MCP server {self.shown} {self._how_it_ended()} during {method}"
            ) from None

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
        text = self._secrets.text(self._stderr.read().decode("utf-8", "replace"))
        tail = " | ".join(text.strip().splitlines())
        return f"{how}; its stderr ends: {tail[-300:]}" if tail else how

    def close(self) -> None:
        """Kill the server's process group and reap it; idempotent."""
        process = self.process
        if process is not None:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
            self._mark.sweep()
            for stream in (process.stdin, process.stdout):
                with suppress(OSError, ValueError):
                    if stream is not None:
                        stream.close()
        with suppress(OSError):
            self._stderr.close()


def connect(
    target: Sequence[str] | str,
    timeout_s: float = DEFAULT_MCP_UPSTREAM_TIMEOUT_S,
    secrets: Secrets | None = None,
) -> Upstream:
    """The server ``target`` names (an argv, or an ``http(s)://`` URL), not yet started:
    :meth:`Upstream.start` reaches it, :meth:`Upstream.close` ends it. A server it
    starts never inherits ``secrets``' variables."""
    channel: Channel
    if isinstance(target, str):
        from zeroclaw_eval.toolserver.upstream_http import HttpChannel

        channel = HttpChannel(target)
    else:
        channel = StdioChannel(target, secrets)
    return Upstream(channel, timeout_s)


class UpstreamCall:
    """The upstream tools of one case attempt: each call passed on, its failure kept.

    A call the server cannot answer gets a failed result, and the case a run error
    at the end of the turn (:meth:`check`).
    """

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.failures: list[str] = []

    def tools(self) -> dict[str, UpstreamTool]:
        return {entry["name"]: UpstreamTool(self, entry) for entry in self.upstream.tools}

    def check(self, turn: int) -> None:
        """After turn ``turn``: raise the run error of the first call the server failed."""
        if self.failures:
            raise RunError(f"turn {turn}: {self.failures[0]}")


class UpstreamTool:
    """A tool of the team's MCP server, as the agent is served it. ``upstream`` marks it
    for ``record``, which keeps its results and its definition."""

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
