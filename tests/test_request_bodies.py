"""What the loopback servers read of a request body, over raw sockets: nothing before
the route and its key are checked, and never past the limit, however the body is
framed (a chunk size of ``-1`` once made the bridge read until the client stopped
sending: 200 MiB took the harness to 452 MB)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from zeroclaw_eval.bridge.server import MAX_BODY_BYTES, ModelBridge
from zeroclaw_eval.bridge.wire import BridgeRoute
from zeroclaw_eval.builtin.echo import EchoTool
from zeroclaw_eval.protocol import ModelReply, ToolResult
from zeroclaw_eval.toolserver.server import ToolRoute, ToolServer

#: How long an answer may take: a server that waits for the body never gives one.
ANSWER_S = 5.0

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def bridge() -> Iterator[ModelBridge]:
    with ModelBridge() as served:
        yield served


@pytest.fixture
def tools() -> Iterator[ToolServer]:
    with ToolServer() as served:
        yield served


def connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return socket.create_connection((parts.hostname, parts.port), timeout=ANSWER_S)


def answer_of(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The status, headers and body of the next answer on ``sock``; a server that
    never answers fails the test with a socket timeout."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection without answering: {received!r}"
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk
        body += chunk
    return int(lines[0].split()[1]), headers, body[:length]


def closed_after(sock: socket.socket) -> bool:
    """Whether the server closed the connection after its answer."""
    return sock.recv(1) == b""


def post(path: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def chat_route(bridge: ModelBridge) -> BridgeRoute:
    return bridge.open_route("bodies", lambda request: ModelReply("read whole"))


def chat_path(route: BridgeRoute) -> str:
    return f"/r/{route.token}/v1/chat/completions"


# --- the model bridge ---------------------------------------------------------------


@pytest.mark.parametrize(
    "size",
    ["-1", "-0", "+5", "0x10", "zz", "", " ", "1 0", "FFFFFFFFFFFFFFFFF"],
    ids=["minus-one", "minus-zero", "plus", "0x", "not-hex", "empty", "blank", "space", "17-hex"],
)
def test_a_malformed_chunk_size_is_a_400_at_once_and_the_connection_ends(
    bridge: ModelBridge, size: str
) -> None:
    route = chat_route(bridge)
    with connect(bridge.url) as sock:
        sock.sendall(
            post(
                chat_path(route),
                {"Authorization": f"Bearer {route.api_key}", "Transfer-Encoding": "chunked"},
                f"{size}\r\n".encode(),
            )
        )
        # Nothing more is sent: a server reading "until the end" never answers.
        status, headers, body = answer_of(sock)
        assert status == 400
        assert headers.get("connection") == "close"
        assert "malformed chunked request body" in json.loads(body)["error"]["message"]
        assert closed_after(sock)
    assert len(route.errors) == 1 and "malformed chunked request body" in route.errors[0]


def test_an_absurd_chunk_size_is_a_413_before_any_of_it_is_read(bridge: ModelBridge) -> None:
    route = chat_route(bridge)
    with connect(bridge.url) as sock:
        sock.sendall(
            post(
                chat_path(route),
                {"Authorization": f"Bearer {route.api_key}", "Transfer-Encoding": "chunked"},
                b"FFFFFFFFFFFF\r\n",
            )
        )
        status, headers, _ = answer_of(sock)
        assert (status, headers.get("connection")) == (413, "close")
        assert closed_after(sock)
    assert route.errors == [f"a request body of more than {MAX_BODY_BYTES} bytes is too large"]


def test_chunks_adding_up_past_the_limit_are_refused_at_the_chunk_that_passes_it(
    bridge: ModelBridge,
) -> None:
    route = chat_route(bridge)
    half = MAX_BODY_BYTES // 2 + 1
    with connect(bridge.url) as sock:
        sock.sendall(
            post(
                chat_path(route),
                {"Authorization": f"Bearer {route.api_key}", "Transfer-Encoding": "chunked"},
                b"%x\r\n" % half + b" " * half + b"\r\n" + b"%x\r\n" % half,
            )
        )
        status, _, _ = answer_of(sock)
    assert status == 413


@pytest.mark.parametrize(
    "length", ["+5", " 5x", "5_0", "-1", "0x10"], ids=["plus", "junk", "underscore", "neg", "hex"]
)
def test_a_content_length_that_is_not_digits_is_a_400(bridge: ModelBridge, length: str) -> None:
    route = chat_route(bridge)
    with connect(bridge.url) as sock:
        sock.sendall(
            post(
                chat_path(route),
                {"Authorization": f"Bearer {route.api_key}", "Content-Length": length},
            )
        )
        status, headers, _ = answer_of(sock)
        assert (status, headers.get("connection")) == (400, "close")


def test_both_framings_at_once_and_another_coding_are_refused(bridge: ModelBridge) -> None:
    route = chat_route(bridge)
    key = {"Authorization": f"Bearer {route.api_key}"}
    both = {**key, "Transfer-Encoding": "chunked", "Content-Length": "5"}
    gzip = {**key, "Transfer-Encoding": "gzip"}
    for headers, status in ((both, 400), (gzip, 501)):
        with connect(bridge.url) as sock:
            sock.sendall(post(chat_path(route), headers))
            assert answer_of(sock)[0] == status


@pytest.mark.parametrize("framing", ["length", "chunked"])
def test_a_wrong_key_is_refused_before_a_byte_of_the_body_is_read(
    bridge: ModelBridge, framing: str
) -> None:
    route = chat_route(bridge)
    announced = (
        {"Content-Length": str(MAX_BODY_BYTES - 1)}
        if framing == "length"
        else {"Transfer-Encoding": "chunked"}
    )
    with connect(bridge.url) as sock:
        # The headers alone: the body is never sent, so only a server that does not
        # wait for it answers.
        sock.sendall(post(chat_path(route), {"Authorization": "Bearer wrong", **announced}))
        status, headers, _ = answer_of(sock)
        assert (status, headers.get("connection")) == (401, "close")
        assert closed_after(sock)
    assert route.errors == ["a request with a missing or wrong API key (use the route's api_key)"]


def test_a_body_for_no_route_or_no_endpoint_is_never_read(bridge: ModelBridge) -> None:
    route = chat_route(bridge)
    key = {"Authorization": f"Bearer {route.api_key}", "Content-Length": "1000000"}
    for path, status in (
        ("/r/no-such-token/v1/chat/completions", 404),
        (f"/r/{route.token}/v1/embeddings", 404),
    ):
        with connect(bridge.url) as sock:
            sock.sendall(post(path, key))
            answer, headers, _ = answer_of(sock)
            assert (answer, headers.get("connection")) == (status, "close")


def test_100_continue_is_sent_only_once_the_key_is_right(bridge: ModelBridge) -> None:
    route = chat_route(bridge)
    body = json.dumps(CHAT).encode()
    expect = {"Expect": "100-continue", "Content-Length": str(len(body))}
    with connect(bridge.url) as sock:
        sock.sendall(post(chat_path(route), {"Authorization": "Bearer wrong", **expect}))
        assert answer_of(sock)[0] == 401  # no "100 Continue" first: the body is not wanted
    with connect(bridge.url) as sock:
        sock.sendall(post(chat_path(route), {"Authorization": f"Bearer {route.api_key}", **expect}))
        assert answer_of(sock)[0] == 100
        sock.sendall(body)
        status, _, reply = answer_of(sock)
    assert status == 200
    assert json.loads(reply)["choices"][0]["message"]["content"] == "read whole"


def test_a_well_formed_chunked_body_with_extensions_and_trailers_is_read_whole(
    bridge: ModelBridge,
) -> None:
    route = chat_route(bridge)
    body = json.dumps(CHAT).encode()
    chunked = (
        b"%x;name=value\r\n" % 10
        + body[:10]
        + b"\r\n"
        + b"%X\r\n" % (len(body) - 10)
        + body[10:]
        + b"\r\n0\r\nX-Trailer: 1\r\n\r\n"
    )
    with connect(bridge.url) as sock:
        sock.sendall(
            post(
                chat_path(route),
                {"Authorization": f"Bearer {route.api_key}", "Transfer-Encoding": "chunked"},
                chunked,
            )
        )
        status, headers, reply = answer_of(sock)
    assert status == 200 and headers.get("connection") is None  # kept alive
    assert json.loads(reply)["choices"][0]["message"]["content"] == "read whole"


# --- the MCP tool server ------------------------------------------------------------


def tool_route(tools: ToolServer) -> ToolRoute:
    def dispatch(name: str, arguments: dict[str, object]) -> ToolResult:
        return EchoTool().run(arguments)

    return tools.open_route("bodies", {"echo": EchoTool()}, dispatch)


STATELESS_LIST = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/list",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}
MODERN = {
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/list",
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
}


def test_the_tool_server_never_reads_a_body_sent_to_no_route(tools: ToolServer) -> None:
    route = tool_route(tools)
    with connect(route.url) as sock:
        sock.sendall(post("/mcp/no-such-token", {"Content-Length": str(8 * 1024 * 1024)}))
        status, headers, _ = answer_of(sock)
        assert (status, headers.get("connection")) == (404, "close")
        assert closed_after(sock)
    assert route.errors == []


@pytest.mark.parametrize("size", ["-1", "0x10", "zz", "FFFFFFFFFFFFFFFFF"])
def test_the_tool_server_refuses_a_malformed_chunk_size_at_once(
    tools: ToolServer, size: str
) -> None:
    route = tool_route(tools)
    with connect(route.url) as sock:
        sock.sendall(
            post(urlsplit(route.url).path, {"Transfer-Encoding": "chunked"}, f"{size}\r\n".encode())
        )
        status, headers, _ = answer_of(sock)
        assert (status, headers.get("connection")) == (400, "close")
        assert closed_after(sock)
    assert len(route.errors) == 1 and "malformed chunked request body" in route.errors[0]


def test_the_tool_server_reads_a_chunked_request_whole(tools: ToolServer) -> None:
    route = tool_route(tools)
    body = json.dumps(STATELESS_LIST).encode()
    chunked = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    with connect(route.url) as sock:
        sock.sendall(
            post(urlsplit(route.url).path, {"Transfer-Encoding": "chunked", **MODERN}, chunked)
        )
        status, _, reply = answer_of(sock)
    assert status == 200, reply
    assert [tool["name"] for tool in json.loads(reply)["result"]["tools"]] == ["echo"]
    assert route.errors == []
