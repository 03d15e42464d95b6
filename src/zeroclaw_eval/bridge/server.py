"""The loopback model bridge: an OpenAI-compatible server in front of a case's model side.

An agent under test that is not the reference loop (a team's own agent, in any
language) talks to a model over HTTP. The bridge is that model: a stdlib HTTP
server on 127.0.0.1 (ephemeral port, one per run) that speaks the OpenAI Chat
Completions API faithfully enough for the official SDKs, unmodified, and answers
each request from a callable, the running case's mode provider.

Each case attempt opens its own :class:`BridgeRoute`: a private API key, which
names the route. The base URL is the same for every case of a run
(``http://127.0.0.1:PORT/v1``), so that an agent may keep one client for all of
them and give each case its key (``client.with_options(api_key=...)``, a tenth of
a millisecond, where a new client builds an SSL context); the route's own path,
``/r/<token>/v1``, reaches it too. Requests on one route go to that route's
``answer`` one at a time, in arrival order, so parallel cases never cross and a
provider never sees two requests at once.

Endpoints under a route's base URL:

- ``POST /chat/completions``: non-streaming, or ``stream: true`` as server-sent
  events (a role delta, text deltas, tool-call deltas carrying ``index``, ``id``,
  ``type`` and pieces of the function's name and ``arguments`` string, a chunk
  with ``finish_reason``, a usage chunk when ``stream_options.include_usage``,
  then ``data: [DONE]``).
- ``POST /responses``: the OpenAI Responses API, non-streaming and streaming
  (:mod:`zeroclaw_eval.bridge.responses`, imported on first use);
- ``POST /messages``: the Anthropic Messages API, non-streaming and streaming
  (:mod:`zeroclaw_eval.bridge.anthropic`; Anthropic's SDKs take the route's
  ``root_url``, as they add ``/v1`` themselves, and send the key as ``x-api-key``);
- ``GET /models`` and ``GET /models/{id}``: the models the route has been asked
  for, or :data:`DEFAULT_MODEL`.

Whatever the wire format, ``answer`` sees the conversation in the
chat-completions shape (:class:`BridgeRequest`).

A request's route and key are checked before a byte of its body is read, and a
body is read only as far as :data:`MAX_BODY_BYTES`, however it is framed
(:meth:`~zeroclaw_eval.util.loopback.TrackedHandler.read_body`).

Failures never hang and never print: every refusal is an OpenAI-style error
body (``{"error": {"message", "type", "param", "code"}}``) with a 4xx status, so
the SDKs raise at once instead of retrying, and every refusal on a known route
is also appended to :attr:`BridgeRoute.errors`, where the runner finds it.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from zeroclaw_eval.bridge.chat import serve_chat_completions, serve_models
from zeroclaw_eval.bridge.wire import (
    CODE_RUN_ERROR,
    Answer,
    BridgeRoute,
    Dropped,
    Refusal,
    Served,
    ServedError,
    token_of,
)
from zeroclaw_eval.errors import one_line
from zeroclaw_eval.util.loopback import (
    BodyRefused,
    LoopbackServer,
    RoutedServer,
    TrackedHandler,
)

#: The largest request body the bridge reads (a conversation, not an upload).
MAX_BODY_BYTES = 32 * 1024 * 1024


class ModelBridge(RoutedServer[BridgeRoute]):
    """The loopback server: one per run, shared by every case through their routes.

    A context manager; :meth:`close` is idempotent, ends every open connection,
    joins the server's threads and frees the port. Only a connection thread still
    inside an ``answer`` that hangs (a live provider waiting on its network
    timeout) can keep :meth:`close` waiting, for :attr:`close_wait_s` at most.
    """

    what = "the model bridge"
    thread_name = "zeroclaw-eval-bridge"
    close_wait_s = 10.0

    def _make_server(self, address: tuple[str, int]) -> LoopbackServer:
        server = _Server(address, _Handler, self.thread_name)
        server.bridge = self
        return server

    def open_route(self, label: str, answer: Answer) -> BridgeRoute:
        """A new private route whose requests ``answer`` answers; ``label`` names its case."""
        return self._add_route(BridgeRoute(self, label, answer))

    def routes(self) -> Routes:
        """What an agent under test is handed: a way to open routes, and nothing else
        of the server (neither :meth:`close` nor the other cases' routes)."""
        return Routes(self)


class Routes:
    """Opens routes of one :class:`ModelBridge`: all an agent under test may ask of it."""

    __slots__ = ("_bridge",)

    def __init__(self, bridge: ModelBridge) -> None:
        self._bridge = bridge

    def open_route(self, label: str, answer: Answer) -> BridgeRoute:
        """See :meth:`ModelBridge.open_route`."""
        return self._bridge.open_route(label, answer)


class _Server(LoopbackServer):
    """The bridge's HTTP server: its handlers reach the bridge's routes."""

    bridge: ModelBridge


#: The stdlib's limits on request headers (``http.client``).
_MAX_HEADER_LINE = 65536
_MAX_HEADERS = 100
_HTTP_VERSION = re.compile(r"HTTP/(\d{1,10})\.(\d{1,10})")


class _Headers:
    """A request's headers: looked up by name, whatever the case; a repeated one
    keeps its first value, as ``email.message.Message.get`` does."""

    def __init__(self) -> None:
        self._values: dict[str, str] = {}
        self._count = 0

    def add(self, name: str, value: str) -> None:
        self._values.setdefault(name.lower(), value)
        self._count += 1

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(name.lower(), default)

    def __len__(self) -> int:
        return self._count


class _Handler(TrackedHandler):
    """Serves one connection (HTTP/1.1, keep-alive) of the bridge."""

    server_version = "zeroclaw-eval-bridge"
    server: _Server
    raw_requestline: bytes

    def parse_request(self) -> bool:
        """Parse the request line and headers, as the stdlib does, minus ``email``.

        The stdlib parses headers with the ``email`` package, about 75 µs a
        request; the bridge reads a handful of them (key, length, framing,
        ``Connection``, ``Expect``), so a plain split does. Refusals are the
        stdlib's: a bad request line is 400, HTTP/2 is 505, an overlong header
        line or too many headers is 431. Unlike the stdlib, HTTP/0.9 is refused,
        and every refusal has a status line.
        """
        self.command = None  # type: ignore[assignment]  # the stdlib's "no request yet"
        self.request_version = "HTTP/1.0"  # until known: a refusal has a status line
        self.close_connection = True
        self.requestline = requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = requestline.split()
        if not words:
            return False
        match = _HTTP_VERSION.fullmatch(words[-1])
        if len(words) != 3 or match is None:
            self.send_error(400, f"Bad request syntax ({requestline!r})")
            return False
        command, path, version = words
        number = int(match[1]), int(match[2])
        if number >= (2, 0):
            self.send_error(505, f"Invalid HTTP version ({version[5:]})")
            return False
        self.command, self.path, self.request_version = command, path, version
        if self.path.startswith("//"):  # as the stdlib (gh-87389)
            self.path = "/" + self.path.lstrip("/")
        headers = _Headers()
        while True:
            line = self.rfile.readline(_MAX_HEADER_LINE + 1)
            if len(line) > _MAX_HEADER_LINE:
                self.send_error(431, "Line too long")
                return False
            if line in (b"\r\n", b"\n", b""):
                break
            if len(headers) >= _MAX_HEADERS:
                self.send_error(431, "Too many headers")
                return False
            name, _, value = str(line, "iso-8859-1").partition(":")
            headers.add(name.strip(), value.strip())
        self.headers = headers  # type: ignore[assignment]  # read only through .get()
        connection = headers.get("Connection", "").lower()
        self.close_connection = connection == "close" or (
            number < (1, 1) and connection != "keep-alive"
        )
        if headers.get("Expect", "").lower() == "100-continue" and number >= (1, 1):
            return self.handle_expect_100()  # owed until the route and key are checked
        return True

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def _serve(self, method: str) -> None:
        route: BridgeRoute | None = None
        try:
            # The route and its key first: a stranger's body is never read.
            route, endpoint = self._route()
            self._authorize(route)
            handler = ENDPOINTS.get((method, endpoint.split("/")[0]))
            if handler is None:
                raise Refusal(
                    404, f"the bridge does not serve {method} /v1/{endpoint}", "unknown_url"
                )
            try:
                body = self.read_body(MAX_BODY_BYTES)
            except BodyRefused as refused:
                raise Refusal(refused.status, refused.message, None) from None
            status, payload = handler(route, endpoint, body, self.headers.get("traceparent"))
        except Refusal as refusal:
            self._refuse(route, refusal)
            return
        except Exception as exc:  # a bridge bug still answers, and is seen, never retried
            failure = f"the bridge could not serve this request: {type(exc).__name__}: {exc}"
            self._refuse(route, Refusal(400, failure, CODE_RUN_ERROR))
            return
        self._send(status, payload)

    def _refuse(self, route: BridgeRoute | None, refusal: Refusal) -> None:
        if route is not None and not isinstance(refusal, ServedError):  # scripted: no failure
            route.fail(refusal.message)
        if self.body_unread():  # the rest of the connection is that body: end it
            self.close_connection = True
        self._send_error(refusal)

    def _key(self) -> str:
        """The API key the request carries (``Authorization: Bearer``, or ``x-api-key``)."""
        bearer = self.headers.get("Authorization", "")
        key = bearer[7:] if bearer[:7].lower() == "bearer " else self.headers.get("x-api-key", "")
        return str(key).strip()

    def _route(self) -> tuple[BridgeRoute, str]:
        """The route the request names (by its path, or on the run's base URL by its
        key) and the endpoint under its ``/v1``."""
        path = self.path.split("?", 1)[0]
        parts = path.split("/", 4)
        if parts[1:2] == ["v1"] and len(parts) > 2:  # the run's base URL: the key names it
            token = token_of(self._key())
            if token is None or self.server.bridge.lookup(token) is None:
                raise Refusal(
                    401,
                    "a request whose API key opens no route of the bridge (use the route's "
                    "api_key)",
                    "invalid_api_key",
                )
            endpoint = "/".join(parts[2:])
        # ["", "r", token, "v1", endpoint]
        elif len(parts) < 5 or parts[1] != "r" or parts[3] != "v1":
            raise Refusal(404, f"no bridge route at {one_line(path)!r}", "unknown_route")
        else:
            token, endpoint = parts[2], parts[4]
        route = self.server.bridge.lookup(token)
        if route is None:
            raise Refusal(404, "no such bridge route (the case has finished?)", "unknown_route")
        if route.closed:
            route.fail(f"the agent made a request after the case's route was closed: {path}")
            raise Refusal(
                404, f"the bridge route of case {route.label!r} is closed", "unknown_route"
            )
        return route, endpoint.rstrip("/")

    def _authorize(self, route: BridgeRoute) -> None:
        if not hmac.compare_digest(self._key().encode(), route.api_key.encode()):
            raise Refusal(
                401,
                "a request with a missing or wrong API key (use the route's api_key)",
                "invalid_api_key",
            )

    def _send(
        self,
        status: int,
        payload: dict[str, Any] | list[bytes] | Dropped,
        extra: str = "",
        scripted: bool = False,
    ) -> None:
        """Send a JSON document, or a list of server-sent events as a chunked stream;
        a :class:`Dropped` one is cut short and its connection closed. ``extra``: more
        header lines. An error is the bridge's own refusal, which the client must not
        retry, unless ``scripted``: a fault the fixture serves, which it may."""
        dropped = isinstance(payload, Dropped)
        if isinstance(payload, Dropped):
            payload = payload.payload
        if isinstance(payload, dict):
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            head = (
                f"HTTP/1.1 {status} {_reason(status)}\r\n"
                "Content-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\n"
            )
            body = data[: len(data) // 2] if dropped else data
        else:
            head = (
                f"HTTP/1.1 {status} OK\r\n"
                "Content-Type: text/event-stream; charset=utf-8\r\n"
                "Cache-Control: no-cache\r\n"
                "Transfer-Encoding: chunked\r\n"
            )
            body = b"".join(b"%x\r\n%s\r\n" % (len(event), event) for event in payload)
            if not dropped:
                body += b"0\r\n\r\n"
        head += extra
        if status >= 400 and not scripted:
            head += "x-should-retry: false\r\n"
        if dropped:
            self.close_connection = True  # the drop: the client reads an early end
        elif self.close_connection:
            head += "Connection: close\r\n"
        # One write for head and body: no partial reply for a client to wait on.
        self.wfile.write(head.encode("latin-1") + b"\r\n" + body)

    def _send_error(self, refusal: Refusal) -> None:
        # A scripted error is sent as a provider sends it: no "do not retry" (the
        # client decides), the wait it asks for, if any, and nothing that tells the
        # agent it is scripted.
        scripted = isinstance(refusal, ServedError)
        extra = ""
        if isinstance(refusal, ServedError) and refusal.retry_after is not None:
            extra = f"Retry-After: {refusal.retry_after:g}\r\n"
        if self.path.split("?", 1)[0].rstrip("/").endswith("/v1/messages"):
            # The Anthropic SDKs read their own error shape.
            kind = refusal.anthropic_kind if isinstance(refusal, ServedError) else refusal.kind
            error = {"type": kind, "message": refusal.message}
            self._send(refusal.status, {"type": "error", "error": error}, extra, scripted)
            return
        self._send(
            refusal.status,
            {
                "error": {
                    "message": refusal.message,
                    "type": refusal.kind,
                    "param": None,
                    "code": refusal.code,
                }
            },
            extra,
            scripted,
        )


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    413: "Too Large",
    501: "Not Implemented",
}


def _reason(status: int) -> str:
    """The reason phrase of ``status`` (a scripted error may use any 4xx or 5xx)."""
    known = _REASONS.get(status)
    if known is not None:
        return known
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _anthropic_messages(
    route: BridgeRoute, endpoint: str, raw: bytes, traceparent: str | None
) -> Served:
    from zeroclaw_eval.bridge.anthropic import serve_messages  # only when an agent asks

    return serve_messages(route, endpoint, raw, traceparent)


def _responses(route: BridgeRoute, endpoint: str, raw: bytes, traceparent: str | None) -> Served:
    from zeroclaw_eval.bridge.responses import serve_responses  # only when an agent asks

    return serve_responses(route, endpoint, raw, traceparent)


Endpoint = Callable[[BridgeRoute, str, bytes, "str | None"], "Served"]
"""Serves one request: the route, the path under ``/v1``, the raw body, and the
request's ``traceparent`` header (the agent's span that made it), if it sent one."""

#: ``(method, first path segment under /v1)`` -> the function serving it.
ENDPOINTS: dict[tuple[str, str], Endpoint] = {
    ("POST", "chat"): serve_chat_completions,
    ("GET", "models"): serve_models,
    ("POST", "responses"): _responses,
    ("POST", "messages"): _anthropic_messages,
}
