"""A real OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benchmarks.

It runs in a thread of the test process, answers ``POST /v1/chat/completions``
from a script, and keeps every request it received (headers and JSON body) so a
test can assert what the harness sent. It never listens beyond loopback.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

#: A self-signed certificate for 127.0.0.1 (valid until 2126) and its key, test data
#: only. A client trusts it through ``SSL_CERT_FILE=TLS_CERTIFICATE``.
TLS_CERTIFICATE = Path(__file__).parent / "tls" / "loopback.crt"
TLS_KEY = Path(__file__).parent / "tls" / "loopback.key"


@dataclass(frozen=True)
class Reply:
    """What the server answers: a status, a body (an object is sent as JSON), headers, a
    delay before answering, and ``drip_s``: send the body one byte every ``drip_s`` seconds.
    """

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drip_s: float = 0.0


@dataclass(frozen=True)
class Request:
    """A request the server received."""

    path: str
    headers: dict[str, str]
    body: Any
    received_at: float


def text(content: str, prompt_tokens: int = 10, completion_tokens: int = 5) -> Reply:
    """A chat-completions reply that ends the turn with ``content``."""
    return _completion({"role": "assistant", "content": content}, prompt_tokens, completion_tokens)


def tool_calls(
    *calls: tuple[str, str, Any], prompt_tokens: int = 10, completion_tokens: int = 5
) -> Reply:
    """A reply asking for ``(id, name, arguments)`` calls; dict arguments are sent as JSON text."""
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for call_id, name, args in calls
        ],
    }
    return _completion(message, prompt_tokens, completion_tokens)


def _completion(message: dict[str, Any], prompt_tokens: int, completion_tokens: int) -> Reply:
    return Reply(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": "example-model",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def shaped(
    reply: Reply,
    *,
    message: dict[str, Any] | None = None,
    drop_message: tuple[str, ...] = (),
    drop: tuple[str, ...] = (),
    finish_reason: str | None = None,
    **top: Any,
) -> Reply:
    """``reply`` reshaped as real servers send it: ``message`` keys merged into the
    message (``content``, ``refusal``, ``reasoning_content``...), message keys in
    ``drop_message`` and top-level keys in ``drop`` removed (``usage``, a call's
    ``id`` via ``drop_message=("tool_call_ids",)``), another ``finish_reason``, and
    any top-level field set (``model``, ``system_fingerprint``...).
    """
    body = json.loads(json.dumps(reply.body))
    choice = body["choices"][0]
    choice["message"].update(message or {})
    for key in drop_message:
        if key == "tool_call_ids":
            for call in choice["message"]["tool_calls"]:
                del call["id"]
        else:
            del choice["message"][key]
    if finish_reason is not None:
        choice["finish_reason"] = finish_reason
    for key in drop:
        del body[key]
    body.update(top)
    return Reply(body, reply.status, reply.headers, reply.delay_s, reply.drip_s)


Responder = Callable[[Request], Reply]


def conversations(script: dict[str, list[Reply]], delay_s: float = 0.0) -> Responder:
    """Answer each conversation from its own script, whatever order requests arrive in.

    A conversation is keyed by its first user message; the reply is the script's
    entry at the number of assistant messages the conversation holds so far.
    Safe for cases running concurrently.
    """

    def respond(request: Request) -> Reply:
        messages = request.body["messages"]
        first = next(m["content"] for m in messages if m["role"] == "user")
        index = sum(1 for m in messages if m["role"] == "assistant")
        replies = script.get(first)
        if replies is None or index >= len(replies):
            return Reply({"error": f"no scripted reply {index} for {first!r}"}, status=400)
        reply = replies[index]
        return Reply(reply.body, reply.status, reply.headers, reply.delay_s + delay_s)

    return respond


class ChatServer:
    """The server. Use as a context manager; ``url`` is the ``base_url`` to configure."""

    def __init__(self, responder: Responder | None = None, *, tls: bool = False) -> None:
        self.script: deque[Reply] = deque()
        self.requests: list[Request] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._responder = responder or self._next_scripted
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._scheme = "http"
        if tls:  # HTTPS with the self-signed loopback certificate (TLS_CERTIFICATE)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(TLS_CERTIFICATE, TLS_KEY)
            self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
            self._scheme = "https"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"{self._scheme}://{host!s}:{port}/v1"

    def add(self, replies: Iterable[Reply]) -> None:
        """Queue replies for the default responder, answered in request order."""
        self.script.extend(replies)

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()

    def _next_scripted(self, request: Request) -> Reply:
        with self._lock:
            if self.script:
                return self.script.popleft()
        return Reply({"error": "the test script has no reply left"}, status=400)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length).decode("utf-8"))
                request = Request(self.path, dict(self.headers.items()), body, time.monotonic())
                with server._lock:
                    server.requests.append(request)
                    server._in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server._in_flight)
                try:
                    reply = server._responder(request)
                    time.sleep(reply.delay_s)
                finally:
                    # Counted out before answering: once the client has its reply it
                    # may send the next request before this thread runs again.
                    with server._lock:
                        server._in_flight -= 1
                # OSError: the client gave up (a timeout under test): nothing to answer.
                with contextlib.suppress(OSError):
                    self._send(reply)

            def _send(self, reply: Reply) -> None:
                if isinstance(reply.body, bytes):
                    payload = reply.body
                else:
                    payload = json.dumps(reply.body).encode("utf-8")
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if not reply.drip_s:
                    self.wfile.write(payload)
                    return
                for index in range(len(payload)):  # a stalled server: a byte at a time
                    self.wfile.write(payload[index : index + 1])
                    self.wfile.flush()
                    time.sleep(reply.drip_s)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        return Handler


def unused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
