"""The loopback MCP tool server, on the wire: the official ``mcp`` client, unmodified,
and the Agents SDK's ``MCPServerStreamableHttp``, then raw HTTP for what clients never send.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any
from unittest.mock import ANY
from urllib.parse import urlsplit

import anyio
import pytest

from zeroclaw_eval.builtin.echo import EchoTool
from zeroclaw_eval.errors import RunError, UnknownToolError
from zeroclaw_eval.protocol import ToolResult
from zeroclaw_eval.toolserver.headers import MCP_URL_ENV
from zeroclaw_eval.toolserver.jsonrpc import LATEST_HANDSHAKE_VERSION
from zeroclaw_eval.toolserver.server import ToolRoute, ToolServer


class Failing:
    name = "flaky"
    description = "Fails when asked to."
    parameters: Mapping[str, Any] = MappingProxyType({})

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult("it broke", success=False)


class Regional:
    """A tool whose ``region`` argument a client mirrors in the ``Mcp-Param-Region`` header."""

    name = "query"
    description = "Runs a query in a region."
    parameters: Mapping[str, Any] = MappingProxyType(
        {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "query": {"type": "string"},
            },
            "required": ["query"],
        }
    )

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(f"{arguments.get('region')}: {arguments['query']}")


TOOLS = {"echo": EchoTool(), "flaky": Failing()}


@pytest.fixture
def server() -> Iterator[ToolServer]:
    with ToolServer() as running:
        yield running


def open_route(server: ToolServer, calls: list[tuple[str, dict[str, Any]]]) -> ToolRoute:
    def dispatch(name: str, arguments: dict[str, Any]) -> ToolResult:
        calls.append((name, arguments))
        if name not in TOOLS:
            raise UnknownToolError(f"Unknown tool: {name!r}")
        if arguments.get("message") == "refuse":
            raise RunError("no scripted result for this call")
        return TOOLS[name].run(arguments)

    return server.open_route("case-a", TOOLS, dispatch, lambda: "turn 0")


def test_the_official_mcp_client_lists_and_calls_the_served_tools(server: ToolServer) -> None:
    import mcp
    from mcp.shared.exceptions import MCPError

    calls: list[tuple[str, dict[str, Any]]] = []
    route = open_route(server, calls)

    async def session() -> dict[str, Any]:
        async with mcp.Client(route.url) as client:
            listed = await client.list_tools()
            echoed = await client.call_tool("echo", {"message": "hello"})
            failed = await client.call_tool("flaky", {})
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("shell", {"cmd": "ls"})
            with pytest.raises(MCPError) as refused:
                await client.call_tool("echo", {"message": "refuse"})
            return {
                "version": client.protocol_version,
                "tools": {tool.name: tool.input_schema for tool in listed.tools},
                "echoed": (echoed.content[0].text, echoed.is_error),
                "failed": (failed.content[0].text, failed.is_error),
                "unknown": (unknown.value.error.code, unknown.value.error.message),
                "refused": (refused.value.error.code, refused.value.error.message),
            }

    seen = anyio.run(session)
    # The client probes for the stateless revision, and stays on it.
    assert seen["version"] == "2026-07-28"
    assert seen["tools"] == {"echo": EchoTool.parameters, "flaky": {"type": "object"}}
    assert seen["echoed"] == ("hello", False)
    assert seen["failed"] == ("it broke", True)
    assert seen["unknown"] == (-32602, "Unknown tool: 'shell'")
    assert seen["refused"] == (-32000, "no scripted result for this call")
    # Dispatch sees every call; only the refused one is a fault of the route.
    assert calls == [
        ("echo", {"message": "hello"}),
        ("flaky", {}),
        ("shell", {"cmd": "ls"}),
        ("echo", {"message": "refuse"}),
    ]
    assert route.errors == ["turn 0: no scripted result for this call"]


def test_the_official_mcp_client_in_the_handshake_era_is_served_too(server: ToolServer) -> None:
    import mcp

    calls: list[tuple[str, dict[str, Any]]] = []
    route = open_route(server, calls)

    async def session() -> tuple[str, str]:
        async with mcp.Client(route.url, mode="legacy") as client:
            echoed = await client.call_tool("echo", {"message": "hello"})
            return str(client.protocol_version), echoed.content[0].text

    assert anyio.run(session) == (LATEST_HANDSHAKE_VERSION, "hello")
    assert calls == [("echo", {"message": "hello"})]
    assert route.errors == []


def test_the_agents_sdk_mcp_client_lists_and_calls_the_served_tools(server: ToolServer) -> None:
    from agents.mcp import MCPServerStreamableHttp

    calls: list[tuple[str, dict[str, Any]]] = []
    route = open_route(server, calls)

    async def session() -> tuple[list[str], Any]:
        async with MCPServerStreamableHttp(params={"url": route.url}) as client:
            tools = await client.list_tools()
            result = await client.call_tool("echo", {"message": "hi"})
            return [tool.name for tool in tools], result

    names, result = anyio.run(session)
    assert names == ["echo", "flaky"]
    assert (result.content[0].text, result.is_error) == ("hi", False)
    assert calls == [("echo", {"message": "hi"})]
    assert route.errors == []


# --- raw HTTP: what the specification says of what no SDK sends ---------------------------


class Raw:
    """Plain HTTP requests to one route."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
        self.path = parts.path
        self.session: str | None = None

    def send(
        self,
        message: Any = None,
        *,
        raw: bytes | None = None,
        method: str = "POST",
        headers: dict[str, str] | None = None,
        path: str | None = None,
    ) -> tuple[int, dict[str, str], Any]:
        sent = {"Content-Type": "application/json", **(headers or {})}
        if self.session is not None:
            sent.setdefault("Mcp-Session-Id", self.session)
        body = raw if raw is not None else (None if message is None else json.dumps(message))
        self.connection.request(method, path or self.path, body, sent)
        response = self.connection.getresponse()
        data = response.read()
        document = json.loads(data) if data else None
        return response.status, {k.lower(): v for k, v in response.getheaders()}, document

    def initialize(self) -> None:
        status, headers, _ = self.send(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        )
        assert status == 200
        self.session = headers["mcp-session-id"]


def request(method: str, request_id: Any = 7, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def test_initialize_answers_the_clients_revision_when_spoken(server: ToolServer) -> None:
    raw = Raw(open_route(server, []).url)
    for asked, answered in [
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("1999-01-01", LATEST_HANDSHAKE_VERSION),
    ]:
        status, headers, reply = raw.send(request("initialize", protocolVersion=asked))
        assert status == 200
        assert headers["content-type"] == "application/json"
        assert headers["mcp-session-id"]
        assert reply["result"]["protocolVersion"] == answered
        assert reply["result"]["capabilities"] == {"tools": {"listChanged": False}}


def test_sessions_notifications_and_http_methods_follow_the_specification(
    server: ToolServer,
) -> None:
    route = open_route(server, [])
    raw = Raw(route.url)
    status, _, reply = raw.send(request("tools/list"))
    assert (status, reply["error"]["code"]) == (400, -32600)  # no session yet
    raw.initialize()
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert raw.send(notification)[:3:2] == (202, None)
    assert raw.send({"jsonrpc": "2.0", "id": 99, "result": {}})[0] == 202  # a client's response
    status, _, reply = raw.send(request("ping"))
    assert (status, reply) == (200, {"jsonrpc": "2.0", "id": 7, "result": {}})
    status, _, reply = raw.send(request("server/discover"))
    assert (status, reply["error"]["code"]) == (200, -32601)
    assert raw.send(method="GET")[0] == 405  # no server-initiated stream
    assert raw.send(method="DELETE")[0] == 200  # the session ends
    status, _, reply = raw.send(request("tools/list"))
    assert (status, reply["error"]["code"]) == (404, -32600)
    assert route.errors == [
        "turn 0: a request without the Mcp-Session-Id header that initialize gave",
        "turn 0: a request with an unknown or ended MCP session",
    ]


# --- the stateless revision (2026-07-28), raw ---------------------------------------------

MODERN = "2026-07-28"


def modern(
    method: str, request_id: Any = 7, version: str = MODERN, **params: Any
) -> dict[str, Any]:
    """A stateless request: its revision and the client's capabilities in ``_meta``."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    }
    return request(method, request_id, **params, _meta=meta)


def mirrored(method: str, version: str = MODERN, name: str | None = None) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "zeroclaw-eval", "version": ANY}}


def test_the_stateless_revision_is_served_without_a_session(server: ToolServer) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    route = open_route(server, calls)
    raw = Raw(route.url)
    status, headers, reply = raw.send(
        modern("server/discover"), headers=mirrored("server/discover")
    )
    assert status == 200
    assert "mcp-session-id" not in headers  # nothing to keep between requests
    assert reply["result"] == {
        "supportedVersions": [MODERN, "2025-11-25", "2025-06-18", "2025-03-26"],
        "capabilities": {"tools": {}},
        "instructions": ANY,
        "ttlMs": 3_600_000,
        "cacheScope": "private",
        "resultType": "complete",
        "_meta": SERVER_INFO,
    }
    status, _, reply = raw.send(modern("tools/list"), headers=mirrored("tools/list"))
    assert status == 200
    assert [tool["name"] for tool in reply["result"]["tools"]] == ["echo", "flaky"]
    assert reply["result"]["resultType"] == "complete"
    assert (reply["result"]["ttlMs"], reply["result"]["cacheScope"]) == (3_600_000, "private")
    # A name outside plain ASCII comes base64-wrapped in its header.
    call = modern("tools/call", name="echo", arguments={"message": "héllo"})
    status, _, reply = raw.send(call, headers=mirrored("tools/call", name="echo"))
    assert (status, reply["result"]["content"], reply["result"]["isError"]) == (
        200,
        [{"type": "text", "text": "héllo"}],
        False,
    )
    assert reply["result"]["_meta"] == SERVER_INFO
    wrapped = mirrored("tools/call", name="=?base64?Zmxha3k=?=")  # "flaky"
    status, _, reply = raw.send(modern("tools/call", name="flaky", arguments={}), headers=wrapped)
    assert (status, reply["result"]["isError"]) == (200, True)
    # A session header from an older client is ignored, not required.
    raw.session = "not-a-session"
    assert raw.send(modern("tools/list"), headers=mirrored("tools/list"))[0] == 200
    # The protocol's errors go with their HTTP status: an unknown method is 404.
    for method in ("ping", "resources/list"):
        status, _, reply = raw.send(modern(method), headers=mirrored(method))
        assert (status, reply["error"]["code"]) == (404, -32601)
    status, _, reply = raw.send(
        modern("tools/call", name="shell", arguments={}),
        headers=mirrored("tools/call", name="shell"),
    )
    assert (status, reply["error"]["code"]) == (400, -32602)
    assert calls == [("echo", {"message": "héllo"}), ("flaky", {}), ("shell", {})]
    assert route.errors == []


def test_a_parameter_marked_for_a_header_is_mirrored_and_checked(server: ToolServer) -> None:
    import mcp

    calls: list[dict[str, Any]] = []

    def dispatch(name: str, arguments: dict[str, Any]) -> ToolResult:
        calls.append(arguments)
        return Regional().run(arguments)

    route = server.open_route("case-a", {"query": Regional()}, dispatch)

    async def session() -> str:
        # Called before listing: refused for the missing header, the client lists
        # the tools and calls again with Mcp-Param-Region, as it must.
        async with mcp.Client(route.url) as client:
            result = await client.call_tool("query", {"region": "eu-wést", "query": "q"})
            return str(result.content[0].text)

    assert anyio.run(session) == "eu-wést: q"
    assert calls == [{"region": "eu-wést", "query": "q"}]  # the refused call never ran
    raw = Raw(route.url)
    call = modern("tools/call", name="query", arguments={"region": "us-1", "query": "q"})
    headers = mirrored("tools/call", name="query")
    for sent, detail in [
        ({}, "Mcp-Param-Region is missing"),
        ({"Mcp-Param-Region": "us-2"}, "Mcp-Param-Region 'us-2' does not match the body's 'us-1'"),
    ]:
        status, _, reply = raw.send(call, headers={**headers, **sent})
        assert (status, reply["error"]) == (
            400,
            {"code": -32020, "message": f"Header mismatch: {detail}"},
        )
    # Sent base64-wrapped, a value compares decoded; an absent value needs no header.
    wrapped = {**headers, "mcp-param-region": "=?base64?dXMtMQ==?="}
    assert raw.send(call, headers=wrapped)[0] == 200
    regionless = modern("tools/call", name="query", arguments={"query": "q"})
    assert raw.send(regionless, headers=headers)[0] == 200
    status, _, reply = raw.send(regionless, headers={**headers, "Mcp-Param-Region": "us-1"})
    assert (status, reply["error"]["code"]) == (400, -32020)
    assert len(calls) == 3
    assert route.errors == []  # a mirrored header is the client's to get right on retry


def test_a_revision_not_spoken_is_named_with_those_that_are(server: ToolServer) -> None:
    route = open_route(server, [])
    status, _, reply = Raw(route.url).send(
        modern("tools/list", version="2099-01-01"), headers=mirrored("tools/list", "2099-01-01")
    )
    assert status == 400
    assert reply["error"]["code"] == -32022
    assert reply["error"]["data"] == {
        "supported": [MODERN, "2025-11-25", "2025-06-18", "2025-03-26"],
        "requested": "2099-01-01",
    }
    assert route.errors == []  # a negotiation the client retries from, not a fault


@pytest.mark.parametrize(
    ("message", "headers", "code", "error"),
    [
        (
            modern("tools/list"),
            {"Mcp-Method": "tools/list"},
            -32020,
            "a malformed tools/list request: Header mismatch: MCP-Protocol-Version is missing",
        ),
        (
            modern("tools/list"),
            mirrored("tools/call"),
            -32020,
            "a malformed tools/list request: Header mismatch: Mcp-Method 'tools/call' does "
            "not match the body's 'tools/list'",
        ),
        (
            modern("tools/call", name="echo", arguments={"message": "x"}),
            mirrored("tools/call", name="flaky"),
            -32020,
            "a malformed tools/call request: Header mismatch: Mcp-Name 'flaky' does not "
            "match the body's 'echo'",
        ),
        (
            request("tools/list", _meta={"io.modelcontextprotocol/protocolVersion": MODERN}),
            mirrored("tools/list"),
            -32602,
            "a malformed tools/list request: params._meta lacks the envelope key(s) "
            "io.modelcontextprotocol/clientCapabilities",
        ),
    ],
    ids=["version-header-missing", "method-header-differs", "name-header-differs", "no-caps"],
)
def test_a_stateless_request_that_contradicts_itself_is_refused_and_recorded(
    server: ToolServer, message: dict[str, Any], headers: dict[str, str], code: int, error: str
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    route = open_route(server, calls)
    status, _, reply = Raw(route.url).send(message, headers=headers)
    assert (status, reply["error"]["code"]) == (400, code)
    assert route.errors == [f"turn 0: {error}"]
    assert calls == []  # nothing reached a tool


def test_a_stateless_call_after_its_case_ended_is_refused_and_recorded(server: ToolServer) -> None:
    route = open_route(server, [])
    raw = Raw(route.url)
    notification = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}
    assert raw.send(notification, headers={"MCP-Protocol-Version": MODERN})[0] == 202
    route.close()
    call = modern("tools/call", name="echo", arguments={"message": "late"})
    status, _, reply = raw.send(call, headers=mirrored("tools/call", name="echo"))
    assert (status, reply["error"]["code"]) == (404, -32600)
    assert route.errors == ["turn 0: a tools/call on the MCP route after the case ended"]


@pytest.mark.parametrize(
    ("body", "code", "error"),
    [
        (b"{oops", -32700, "turn 0: malformed JSON-RPC: the body is not JSON"),
        (b"[]", -32600, "turn 0: malformed JSON-RPC: a JSON-RPC batch"),
        (b'{"id": 1, "method": "ping"}', -32600, "turn 0: malformed JSON-RPC: not JSON-RPC 2.0"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600, "turn 0: malformed JSON-RPC: method"),
    ],
    ids=["not-json", "batch", "no-version", "method-not-a-string"],
)
def test_malformed_json_rpc_is_refused_and_recorded(
    server: ToolServer, body: bytes, code: int, error: str
) -> None:
    route = open_route(server, [])
    raw = Raw(route.url)
    raw.initialize()
    status, _, reply = raw.send(raw=body)
    assert (status, reply["error"]["code"]) == (400, code)
    assert len(route.errors) == 1 and route.errors[0].startswith(error)


def test_a_closed_route_a_foreign_origin_and_an_oversized_body_are_refused(
    server: ToolServer,
) -> None:
    route = open_route(server, [])
    raw = Raw(route.url)
    raw.initialize()
    evil = {"Origin": "http://evil.example"}
    assert raw.send(request("ping"), headers=evil)[0] == 403
    # Refused on its Content-Length, before a byte of it is read.
    assert raw.send(raw=b"{}", headers={"Content-Length": str(8 * 1024 * 1024 + 1)})[0] == 413
    route.close()
    status, _, _ = Raw(route.url).send(request("tools/list"))
    assert status == 400  # a closed route still refuses requests without a session
    raw2 = Raw(route.url)
    raw2.session = raw.session
    assert raw2.send(request("tools/call", name="echo", arguments={}))[0] == 404
    assert route.errors[0] == ("turn 0: a request from origin 'http://evil.example' was refused")
    assert route.errors[1] == "turn 0: a request body of 8388609 bytes is too large"
    assert route.errors[-1] == "turn 0: a tools/call on the MCP route after the case ended"


def test_a_session_used_on_another_route_is_the_error_of_its_own_case(server: ToolServer) -> None:
    mine = open_route(server, [])
    other = server.open_route("case-b", TOOLS, lambda name, arguments: ToolResult("x"))
    raw = Raw(mine.url)
    raw.initialize()
    status, _, _ = raw.send(request("tools/list"), path=urlsplit(other.url).path)
    assert status == 404
    assert mine.errors == ["turn 0: a request on another case's MCP route (case 'case-b')"]
    assert other.errors == []


def test_closing_the_server_frees_its_port() -> None:
    server = ToolServer()
    server.start()
    port = int(server.url.rsplit(":", 1)[1])
    raw = Raw(open_route(server, []).url)
    raw.initialize()  # a kept-alive connection, open as the server closes
    server.close()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0


# --- stdio: the relay an agent spawns as its MCP server -----------------------------------

RELAY = Path(sys.executable).parent / "zeroclaw-eval-mcp-relay"


def test_the_official_client_spawning_the_relay_reaches_the_route_over_stdio(
    server: ToolServer, tmp_path: Path
) -> None:
    import mcp
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    calls: list[tuple[str, dict[str, Any]]] = []
    route = open_route(server, calls)
    spawned = StdioServerParameters(command=str(RELAY), args=[route.url])

    async def session() -> tuple[list[str], tuple[str, bool]]:
        # The relay's stderr goes to a file of its own: the client's default is the
        # sys.stderr of whenever it was first imported, which a test may have replaced.
        with (tmp_path / "relay.log").open("w", encoding="utf-8") as errlog:
            async with mcp.Client(stdio_client(spawned, errlog=errlog)) as client:
                listed = await client.list_tools()
                echoed = await client.call_tool("echo", {"message": "over stdio"})
                failed = await client.call_tool("flaky", {})
        assert (failed.content[0].text, failed.is_error) == ("it broke", True)
        return [tool.name for tool in listed.tools], (echoed.content[0].text, echoed.is_error)

    names, echoed = anyio.run(session)
    assert names == ["echo", "flaky"]
    assert echoed == ("over stdio", False)
    assert calls == [("echo", {"message": "over stdio"}), ("flaky", {})]
    assert route.errors == []


def test_the_relay_says_in_one_line_what_it_cannot_reach() -> None:
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'
    environment = {key: value for key, value in os.environ.items() if key != MCP_URL_ENV}
    no_url = subprocess.run(
        [RELAY], input=ping, capture_output=True, env=environment, timeout=60, check=False
    )
    assert no_url.returncode == 2
    assert no_url.stdout == b""
    assert no_url.stderr.decode().splitlines() == [
        "zeroclaw-eval-mcp-relay: give the case's MCP URL (http://...) as the one argument "
        f"or in {MCP_URL_ENV}"
    ]
    with socket.socket() as unused:  # a port nothing listens on
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    gone = subprocess.run(
        [RELAY, f"http://127.0.0.1:{port}/mcp/x"],
        input=ping,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert gone.returncode == 1
    assert gone.stdout == b""
    (line,) = gone.stderr.decode().splitlines()
    assert line.startswith(
        f"zeroclaw-eval-mcp-relay: the MCP route http://127.0.0.1:{port}/mcp/x cannot be reached: "
    )


def test_the_relay_imports_no_module_heavier_than_the_c_socket() -> None:
    # Its start is its cost, once per case or per turn: socket.py and json would pull
    # in enum, re and selectors, and double it.
    probe = (
        "import sys; before = set(sys.modules); import zeroclaw_eval.toolserver.relay; "
        "print(' '.join(sorted(set(sys.modules) - before)))"
    )
    added = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    heavy = {"socket", "json", "re", "enum", "selectors", "typing", "importlib", "contextlib"}
    assert sorted(heavy.intersection(added)) == []
    assert "_socket" in added


def test_the_relay_reads_chunked_replies_and_reconnects_when_the_route_closes() -> None:
    from zeroclaw_eval.toolserver.relay import Connection

    replies = [
        # chunked, with an extension and a trailer, split across reads
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nMcp-Session-Id: s1\r\n\r\n"
        b"5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nTrailer: x\r\n\r\n",
        # a known length, then the route closes the connection
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
        b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
    ]
    received: list[bytes] = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        def serve() -> None:
            connections = 0
            for reply_index, reply in enumerate(replies):
                if reply_index in (0, 2):
                    peer, _ = listener.accept()
                    connections += 1
                request = b""
                while b"\r\n\r\n" not in request:
                    request += peer.recv(4096)
                head, _, body = request.partition(b"\r\n\r\n")
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                while len(body) < length:
                    body += peer.recv(4096)
                received.append(head.split(b"\r\n")[0] + b" " + body)
                for start in range(0, len(reply), 7):  # the reply in small pieces
                    peer.sendall(reply[start : start + 7])
                if reply_index == 1:
                    peer.close()
            peer.close()

        thread = threading.Thread(target=serve)
        thread.start()
        connection = Connection("127.0.0.1", port)
        try:
            first = connection.request("POST", "/mcp/r", b'{"a": 1}', {})
            second = connection.request("POST", "/mcp/r", b"{}", {})
            third = connection.request("DELETE", "/mcp/r", b"", {})
        finally:
            connection.close()
            thread.join(timeout=30)
    assert first == ({"transfer-encoding": "chunked", "mcp-session-id": "s1"}, b"hello, world")
    assert second == ({"content-length": "2", "connection": "close"}, b"{}")
    assert third == ({"content-length": "0"}, b"")
    assert received == [
        b'POST /mcp/r HTTP/1.1 {"a": 1}',
        b"POST /mcp/r HTTP/1.1 {}",
        b"DELETE /mcp/r HTTP/1.1 ",
    ]
