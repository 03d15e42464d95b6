"""The loopback MCP tool server: streamable HTTP on 127.0.0.1, one route per case attempt.

Beside the model bridge, a run whose agent takes its tools over MCP starts one
:class:`ToolServer` (an ephemeral port). Each case attempt opens a
:class:`ToolRoute`: a private endpoint ``http://127.0.0.1:PORT/mcp/<token>`` that
serves that case's tools and hands every ``tools/call`` to the case's ``dispatch``,
one at a time (a per-case tool is never called twice at once).

The transport is the specification's streamable HTTP, answering in JSON (never a
stream: every reply is one response), in both eras of the protocol
(:mod:`~zeroclaw_eval.toolserver.jsonrpc`):

- ``POST`` of a stateless request (``2026-07-28``: its ``MCP-Protocol-Version``
  header names a revision no handshake offers, or its ``_meta`` names one): served
  on its own, no session; its envelope and mirrored headers are checked, and an
  error goes back with the status the specification gives it (``400``, ``404``
  for an unknown method);
- ``POST`` of the handshake era: ``initialize`` opens a session, whose id comes
  back in ``Mcp-Session-Id``; every later request must carry it (missing: 400;
  unknown, ended, or another route's: 404);
- notifications and client responses get ``202 Accepted``;
- ``GET`` (a server-to-client stream): ``405``, the server sends nothing unasked;
- ``DELETE``: ends a session.

A request whose ``Origin`` header is not a loopback origin is refused (403), as
the specification asks of a local server (DNS rebinding). A request's route (its
token is its key) and origin are checked before a byte of its body is read, and
a body is read only as far as :data:`MAX_BODY_BYTES`, however it is framed
(:meth:`~zeroclaw_eval.util.loopback.TrackedHandler.read_body`).

Whatever goes wrong on a route is one line of :attr:`ToolRoute.errors` (a
malformed message, a body too large, a call refused by ``dispatch``, a call on
a closed route, a session of another route, a client that hung up before its
result was sent), prefixed by where the case was (``where()``), where the
session of the case finds it. Nothing is printed.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import select
import socket
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from zeroclaw_eval.errors import one_line
from zeroclaw_eval.protocol import Tool, ToolFault
from zeroclaw_eval.toolserver.headers import SESSION_HEADER, VERSION_HEADER
from zeroclaw_eval.toolserver.jsonrpc import (
    HANDSHAKE_VERSIONS,
    HTTP_STATUS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RUN_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    Dispatch,
    Message,
    ProtocolError,
    ScriptedError,
    answer,
    check_param_headers,
    error_reply,
    initialize_result,
    modern_version,
    parse,
    stateless,
)
from zeroclaw_eval.util.loopback import (
    BodyRefused,
    LoopbackServer,
    Route,
    RoutedServer,
    TrackedHandler,
)

#: The largest request body read: a tool call's arguments, not an upload.
MAX_BODY_BYTES = 8 * 1024 * 1024

#: How often a scripted hang looks whether its client gave up, or its case ended.
HANG_POLL_S = 0.05


#: The requests served inside a session; any other is ``-32601``, session or not.
SESSION_METHODS = frozenset({"ping", "tools/list", "tools/call"})

_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


class ToolRoute(Route):
    """One case attempt's MCP endpoint: its URL, its tools, what went wrong on it.

    ``errors`` holds one line per failure, in order; :meth:`close` stops serving
    (a later request is refused and recorded). Idempotent.
    """

    def __init__(
        self,
        server: ToolServer,
        label: str,
        tools: Mapping[str, Tool],
        dispatch: Dispatch,
        where: Callable[[], str],
    ) -> None:
        super().__init__(server)
        self.label = label
        self.url = f"{server.url}/mcp/{self.token}"
        self.tools = dict(tools)
        self.errors: list[str] = []
        self.sessions: set[str] = set()
        self._dispatch = dispatch
        self._where = where

    def dispatch(self, name: str, arguments: dict[str, Any]) -> Any:
        return self._dispatch(name, arguments)

    def settle(self) -> None:
        """Wait for the call being run on this route, if any, to be settled (its
        failure, if it fails, recorded): what the case saw is then complete."""
        with self.lock:
            pass

    def fail(self, message: str) -> None:
        """Keep one line saying what went wrong, prefixed with where the case was."""
        where = self._where()
        self.errors.append(one_line(f"{where}: {message}" if where else message))


class ToolServer(RoutedServer[ToolRoute]):
    """The run's loopback MCP server, shared by every case through their routes."""

    what = "the MCP tool server"
    thread_name = "zeroclaw-eval-tool-server"
    close_wait_s = 5.0

    def __init__(self, host: str = "127.0.0.1") -> None:
        super().__init__(host)
        self._sessions: weakref.WeakValueDictionary[str, ToolRoute] = weakref.WeakValueDictionary()

    def _make_server(self, address: tuple[str, int]) -> LoopbackServer:
        server = _Server(address, _Handler, self.thread_name)
        server.tools = self
        return server

    def open_route(
        self,
        label: str,
        tools: Mapping[str, Tool],
        dispatch: Dispatch,
        where: Callable[[], str] = lambda: "",
    ) -> ToolRoute:
        """A new private route serving ``tools``; ``dispatch`` runs each call."""
        return self._add_route(ToolRoute(self, label, tools, dispatch, where))

    def routes(self) -> ToolRoutes:
        """What an agent session is handed: a way to open routes, nothing else."""
        return ToolRoutes(self)

    def new_session(self, route: ToolRoute) -> str:
        """A session of the handshake era on ``route``: its id, known until it ends."""
        session = secrets.token_hex(16)
        with self._lock:
            self._sessions[session] = route
            route.sessions.add(session)
        return session

    def session_route(self, session: str) -> ToolRoute | None:
        with self._lock:
            return self._sessions.get(session)


class ToolRoutes:
    """Opens routes of one :class:`ToolServer`: all an agent session may ask of it."""

    __slots__ = ("_server",)

    def __init__(self, server: ToolServer) -> None:
        self._server = server

    def open_route(
        self,
        label: str,
        tools: Mapping[str, Tool],
        dispatch: Dispatch,
        where: Callable[[], str] = lambda: "",
    ) -> ToolRoute:
        """See :meth:`ToolServer.open_route`."""
        return self._server.open_route(label, tools, dispatch, where)


class _Server(LoopbackServer):
    """The tool server's HTTP server: its handlers reach the server's routes."""

    tools: ToolServer


class _Handler(TrackedHandler):
    """Serves one connection (HTTP/1.1, keep-alive) of the tool server."""

    server_version = "zeroclaw-eval-tools"
    server: _Server

    # --- methods ---------------------------------------------------------------------

    def do_GET(self) -> None:
        # No server-initiated messages: the specification's answer is 405.
        self._reply(405, None, extra={"Allow": "POST, DELETE"})

    def do_DELETE(self) -> None:
        route = self._route()
        session = self.headers.get(SESSION_HEADER, "")
        if route is None or session not in route.sessions:
            self._reply(404, error_reply(None, INVALID_REQUEST, "no such session"))
            return
        route.sessions.discard(session)
        self._reply(200, None)

    def do_POST(self) -> None:
        # The route (its token is the key) and the origin first: a stranger's body is
        # never read.
        route = self._route()
        if route is None:
            self._refuse_unknown_route()
            return
        if not self._local_origin():
            route.fail(f"a request from origin {self.headers.get('Origin')!r} was refused")
            self._reply(403, error_reply(None, INVALID_REQUEST, "origin not allowed"))
            return
        try:
            raw = self.read_body(MAX_BODY_BYTES)
        except BodyRefused as refused:
            route.fail(refused.message)
            self._reply(refused.status, error_reply(None, INVALID_REQUEST, refused.message))
            return
        try:
            message = parse(json.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, ValueError) as exc:
            route.fail(f"malformed JSON-RPC: the body is not JSON ({exc})")
            self._reply(400, error_reply(None, PARSE_ERROR, f"Parse error: {exc}"))
            return
        except ProtocolError as error:
            route.fail(f"malformed JSON-RPC: {error.message}")
            self._reply(400, error.reply())
            return
        if self._stateless(message):
            self._serve_stateless(route, message)
            return
        if message.method == "initialize" and message.expects_reply:
            self._initialize(route, message.request_id, message.params)
            return
        if message.expects_reply and message.method not in SESSION_METHODS:
            # Before any session: a client probing for a revision it prefers
            # (``server/discover``) is told there is no such method, and falls back.
            self._reply(
                200,
                error_reply(
                    message.request_id, METHOD_NOT_FOUND, f"Method not found: {message.method}"
                ),
            )
            return
        if not self._in_session(route, message.request_id) or self._acknowledged(route, message):
            return
        status, reply = self._answer(route, message, modern=False)
        if reply is not None:
            self._reply(status, reply)

    def _serve_stateless(self, route: ToolRoute, message: Message) -> None:
        """One request of the stateless revision: no session, its envelope checked."""
        if self._acknowledged(route, message):
            return
        try:
            modern_version(message, self.headers.get)
        except ProtocolError as error:
            # A revision not spoken is the negotiation the client retries from; an
            # envelope that contradicts itself is the agent's client at fault.
            if error.code != UNSUPPORTED_PROTOCOL_VERSION:
                route.fail(f"a malformed {message.method} request: {error.message}")
            self._reply(HTTP_STATUS.get(error.code, 200), error.reply())
            return
        if message.method == "tools/call":
            try:
                check_param_headers(message, route.tools, self.headers.get)
            except ProtocolError as error:
                # Not a fault: a client that called before listing learns the tool's
                # headers from tools/list and retries, as the specification has it;
                # one that does not never dispatches, which the pairing shows.
                self._reply(HTTP_STATUS.get(error.code, 200), error.reply())
                return
        status, reply = self._answer(route, message, modern=True)
        if reply is not None:
            self._reply(status, reply)

    def _acknowledged(self, route: ToolRoute, message: Message) -> bool:
        """Whether ``message`` is settled without an answer: refused (and recorded) when
        its case has ended, accepted (``202``) when it expects no reply."""
        if route.closed:
            what = f"a {message.method}" if message.method else "a message"
            route.fail(f"{what} on the MCP route after the case ended")
            self._reply(404, error_reply(message.request_id, INVALID_REQUEST, "the case has ended"))
            return True
        if not message.expects_reply:
            self._reply(202, None)
            return True
        return False

    def _answer(
        self, route: ToolRoute, message: Message, *, modern: bool
    ) -> tuple[int, dict[str, Any] | None]:
        """The status and reply to a request, run under the route's lock (held until a
        call is settled: see :meth:`ToolRoute.settle`); ``None`` when the client hung
        up before its result."""
        try:
            return self._answer_locked(route, message, modern=modern)
        except ToolFault as fault:  # a scripted drop or hang, served outside the lock
            if fault.kind == "hang":
                # Never answered: until the agent gives up on the call (it hangs up)
                # or its case ends (the route closes), which bounds every hang.
                while not route.closed and not self._peer_gone():
                    time.sleep(HANG_POLL_S)
            self.close_connection = True  # no reply: the connection just ends
            return 200, None

    def _answer_locked(
        self, route: ToolRoute, message: Message, *, modern: bool
    ) -> tuple[int, dict[str, Any] | None]:
        with route.lock:
            status = 200
            try:
                reply = answer(message, route.tools, route.dispatch, modern=modern)
            except ProtocolError as error:
                if error.code == RUN_ERROR and not isinstance(error, ScriptedError):
                    route.fail(error.message)
                # The handshake era sends every JSON-RPC error with 200; the stateless
                # revision gives the protocol's errors their HTTP status.
                status = HTTP_STATUS.get(error.code, 200) if modern else 200
                reply = error.reply()
            if message.method == "tools/call" and self._peer_gone():
                name = message.params.get("name")
                route.fail(
                    f"the agent hung up before the result of its tools/call to {name!r} came"
                )
                self.close_connection = True
                return status, None
        return status, reply

    # --- helpers ---------------------------------------------------------------------

    def _stateless(self, message: Message) -> bool:
        """Whether ``message`` is of the stateless revision: its version header names a
        revision no handshake offers (as the official server routes eras), or its
        ``_meta`` names one."""
        version = self.headers.get(VERSION_HEADER)
        return (version is not None and version not in HANDSHAKE_VERSIONS) or stateless(message)

    def _route(self) -> ToolRoute | None:
        parts = self.path.split("?", 1)[0].rstrip("/").split("/")
        # ["", "mcp", token]
        if len(parts) != 3 or parts[1] != "mcp":
            return None
        return self.server.tools.lookup(parts[2])

    def _refuse_unknown_route(self) -> None:
        session = self.headers.get(SESSION_HEADER)
        owner = self.server.tools.session_route(session) if session else None
        if owner is not None:
            owner.fail("a request on an MCP route that is not its case's")
        self._reply(404, error_reply(None, INVALID_REQUEST, "no such MCP route"))

    def _initialize(self, route: ToolRoute, request_id: Any, params: Any) -> None:
        if route.closed:
            route.fail("an initialize on the MCP route after the case ended")
            self._reply(404, error_reply(request_id, INVALID_REQUEST, "the case has ended"))
            return
        session = self.server.tools.new_session(route)
        reply = {"jsonrpc": "2.0", "id": request_id, "result": initialize_result(params)}
        self._reply(200, reply, extra={SESSION_HEADER: session})

    def _in_session(self, route: ToolRoute, request_id: Any) -> bool:
        """Whether the request carries a session of ``route``; if not, refuse it."""
        session = self.headers.get(SESSION_HEADER)
        if not session:
            route.fail(f"a request without the {SESSION_HEADER} header that initialize gave")
            self._reply(
                400,
                error_reply(request_id, INVALID_REQUEST, f"missing {SESSION_HEADER} header"),
            )
            return False
        if session in route.sessions:
            return True
        owner = self.server.tools.session_route(session)
        if owner is not None and owner is not route:
            # The case at fault is the session's: the route's own case did nothing.
            owner.fail(f"a request on another case's MCP route (case {route.label!r})")
        else:
            route.fail("a request with an unknown or ended MCP session")
        self._reply(404, error_reply(request_id, INVALID_REQUEST, "no such session"))
        return False

    def _local_origin(self) -> bool:
        origin = self.headers.get("Origin")
        if not origin or origin == "null":
            return origin is None
        return (urlsplit(origin).hostname or "") in _LOOPBACK_HOSTS

    def _peer_gone(self) -> bool:
        """Whether the client closed its end while its call ran."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _reply(
        self, status: int, document: dict[str, Any] | None, extra: dict[str, str] | None = None
    ) -> None:
        body = b"" if document is None else json.dumps(document, ensure_ascii=False).encode()
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'OK')}"]
        if document is not None:
            head.append("Content-Type: application/json")
        head.append(f"Content-Length: {len(body)}")
        head.extend(f"{name}: {value}" for name, value in (extra or {}).items())
        if self.body_unread():  # refused before its body: the rest of the connection is it
            self.close_connection = True
        if self.close_connection:
            head.append("Connection: close")
        with contextlib.suppress(OSError):
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)


_REASONS = {
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Content Too Large",
    501: "Not Implemented",
}
