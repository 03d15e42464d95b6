"""A loopback HTTP server of private routes, one route per case attempt.

The model bridge and the MCP tool server are both this: one server per run on
an ephemeral port of 127.0.0.1, serving each case attempt on a route of its own
(a private path holding an unguessable token), whose requests are answered for
that case alone. What they share lives here:

- :class:`LoopbackServer`: the HTTP server. Connection threads are daemons (a
  forgotten server never blocks the interpreter's exit), so the standard
  library does not join them: this server keeps them, shuts their connections
  on close and joins them. A thread serves one connection after another
  (:meth:`LoopbackServer.process_request`), so that a client closing its
  connection after every reply does not cost a thread start per request;
- :class:`TrackedHandler`: the request handler base that registers its
  connection with the server, for :meth:`LoopbackServer.drop_connections`, and
  reads a request's body (:meth:`TrackedHandler.read_body`) only when asked:
  each server checks a request's route (and key) first, so that a stranger's
  body is never read, and a body is framed strictly (a ``Content-Length`` of
  digits, or chunks whose sizes are hex digits) under a limit nothing lifts;
- :class:`RoutedServer`: the lifecycle (start, close, URL, context manager) and
  the route table: open routes by token, and closed routes kept while their
  owner holds them, so that a late request is still recorded against its case.

Nothing here knows what the routes serve.
"""

from __future__ import annotations

import collections
import contextlib
import re
import secrets
import socket
import threading
import time
import weakref
from abc import ABC, abstractmethod
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

if TYPE_CHECKING:
    from typing_extensions import Self

#: How long an idle connection worker waits for the next connection before it ends.
WORKER_IDLE_S = 30.0


class LoopbackServer(ThreadingHTTPServer):
    """A threading HTTP server that can end its connections and join their threads."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # parallel agents connect in bursts

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], name: str
    ) -> None:
        super().__init__(address, handler)
        #: The name of each connection worker thread.
        self.worker_name = f"{name}-connection"
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        self.workers: list[threading.Thread] = []
        # Accepted connections waiting for an idle worker, and how many wait.
        self._pending: collections.deque[tuple[Any, Any]] = collections.deque()
        self._idle = 0
        self._closing = False
        self._ready = threading.Condition(self.connections_lock)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Hand the connection to an idle worker, or to a new one.

        Workers outlive their connections: an SDK that closes its connection
        after every streamed reply (the ``openai`` SDK does, as it stops reading
        at ``[DONE]``) would otherwise cost a thread start per request.
        """
        with self._ready:
            if self._idle > len(self._pending):
                self._pending.append((request, client_address))
                self._ready.notify()
                return
            worker = threading.Thread(
                target=self._work,
                args=(request, client_address),
                name=self.worker_name,
                daemon=True,
            )
            self.workers = [thread for thread in self.workers if thread.is_alive()]
            self.workers.append(worker)
        worker.start()

    def _work(self, request: Any, client_address: Any) -> None:
        """Serve connections until idle for :data:`WORKER_IDLE_S` or the server closes."""
        job: tuple[Any, Any] | None = (request, client_address)
        while job is not None:
            self.process_request_thread(*job)
            job = self._next_job()

    def _next_job(self) -> tuple[Any, Any] | None:
        with self._ready:
            self._idle += 1
            try:
                while not self._pending and not self._closing:
                    if not self._ready.wait(WORKER_IDLE_S):
                        break
                return self._pending.popleft() if self._pending else None
            finally:
                self._idle -= 1

    def join_workers(self, timeout_s: float) -> None:
        """Wake idle workers and wait for every worker, at most ``timeout_s`` in all."""
        deadline = time.monotonic() + timeout_s
        with self._ready:
            self._closing = True
            self._ready.notify_all()
            workers, self.workers = self.workers, []
            pending = list(self._pending)
            self._pending.clear()
        for request, _ in pending:  # accepted as the server closed: never served
            self.shutdown_request(request)
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))

    def drop_connections(self) -> None:
        """Shut every open connection, waking threads blocked reading a keep-alive socket."""
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by the client
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay silent: a client that hangs up mid-reply is not the harness's failure;
        the routes report what went wrong on them."""


#: A ``Content-Length``: digits only (``int()`` would take ``+5``, `` 5`` and ``5_0``).
_LENGTH = re.compile(rb"[0-9]{1,19}")
#: A chunk size: hex digits only (``int(..., 16)`` would take ``-1``, and read to the end).
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
#: The longest chunk-size or trailer line read, and how many trailer lines at most.
_CHUNK_LINE_BYTES = 1024
_MAX_TRAILERS = 100


class BodyRefused(Exception):
    """A request body a server will not read: the HTTP status to answer, and why.

    The connection is closed after the answer: what is left of the body is never read.
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class TrackedHandler(BaseHTTPRequestHandler):
    """A handler whose connection the server can shut (HTTP/1.1, keep-alive), and
    which reads a request's body only through :meth:`read_body`."""

    protocol_version = "HTTP/1.1"
    sys_version = ""
    disable_nagle_algorithm = True  # replies are small; do not wait for ACKs
    server: LoopbackServer
    # Per request: a "100 Continue" owed once the body may be read, and whether it was.
    _continue_owed = False
    _body_read = False

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def handle_one_request(self) -> None:
        self._continue_owed = False
        self._body_read = False
        super().handle_one_request()

    def handle_expect_100(self) -> bool:
        """Owe the client its ``100 Continue`` instead of sending it now: it is sent
        by :meth:`read_body`, so a client whose route or key is refused is told so
        before it sends its body."""
        self._continue_owed = True
        return True

    def body_unread(self) -> bool:
        """Whether the request announced a body that was not read: then the
        connection must close after the answer, the rest of the body unread."""
        if self._body_read:
            return False
        length = self.headers.get("Content-Length")
        return self.headers.get("Transfer-Encoding") is not None or length not in (None, "0")

    def read_body(self, limit: int) -> bytes:
        """The request's body, of at most ``limit`` bytes: a ``Content-Length`` of
        digits, or ``Transfer-Encoding: chunked`` whose every size is hex digits.

        Call it once the request's route and key are checked. Raises
        :class:`BodyRefused` (413 over the limit, announced or reached; 400 for
        malformed framing, a body cut short, both framings at once; 501 for another
        transfer coding), with the connection marked to close.
        """
        self._body_read = True
        try:
            coding = self.headers.get("Transfer-Encoding")
            length = self.headers.get("Content-Length")
            if coding is not None and length is not None:
                raise BodyRefused(400, "a request with both Transfer-Encoding and Content-Length")
            if coding is not None:
                if coding.strip().lower() != "chunked":
                    raise BodyRefused(501, f"Transfer-Encoding {coding!r} is not supported")
                self._send_continue()
                return self._read_chunked(limit)
            if length is None:
                return b""
            if not _LENGTH.fullmatch(length.strip().encode("latin-1", "replace")):
                raise BodyRefused(400, f"Content-Length {length!r} is not a number of bytes")
            size = int(length)
            if size > limit:
                raise BodyRefused(413, f"a request body of {size} bytes is too large")
            self._send_continue()
            body = self.rfile.read(size)
            if len(body) < size:
                raise BodyRefused(400, "the request body is cut short")
            return body
        except BodyRefused:
            self.close_connection = True
            raise

    def _send_continue(self) -> None:
        if self._continue_owed:
            self._continue_owed = False
            self.send_response_only(100)
            self.end_headers()

    def _read_chunked(self, limit: int) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(_CHUNK_LINE_BYTES + 1)
            if len(line) > _CHUNK_LINE_BYTES or not line.endswith(b"\n"):
                raise BodyRefused(400, "a malformed chunked request body (a chunk-size line)")
            size_text = line.split(b";", 1)[0].strip()
            if not _CHUNK_SIZE.fullmatch(size_text):
                raise BodyRefused(
                    400, f"a malformed chunked request body (chunk size {size_text[:20]!r})"
                )
            size = int(size_text, 16)
            total += size
            if total > limit:
                raise BodyRefused(413, f"a request body of more than {limit} bytes is too large")
            if size == 0:
                for _ in range(_MAX_TRAILERS):
                    trailer = self.rfile.readline(_CHUNK_LINE_BYTES + 1)
                    if len(trailer) > _CHUNK_LINE_BYTES or not trailer.endswith(b"\n"):
                        raise BodyRefused(400, "a malformed chunked request body (a trailer)")
                    if not trailer.strip():
                        return b"".join(parts)
                raise BodyRefused(400, "a malformed chunked request body (too many trailers)")
            chunk = self.rfile.read(size)
            if len(chunk) < size or self.rfile.readline(3) not in (b"\r\n", b"\n"):
                raise BodyRefused(400, "a malformed chunked request body (a chunk cut short)")
            parts.append(chunk)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.server.connections_lock:
                self.server.connections.discard(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the server reports through its routes, never on stderr."""


class Route:
    """One case attempt's private route: its token, and whether it is closed.

    :meth:`close` stops serving it: later requests are refused, and recorded
    against its case while its owner still holds it. Idempotent; a context manager.
    """

    def __init__(self, owner: RoutedServer[Any]) -> None:
        self.token = secrets.token_hex(8)
        self.closed = False
        # One request at a time per route: what answers it is a per-case object.
        self.lock = threading.Lock()
        self._owner = owner

    def close(self) -> None:
        self.closed = True
        self._owner._forget(self)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


R = TypeVar("R", bound=Route)


class RoutedServer(ABC, Generic[R]):
    """The run's loopback server and its routes, shared by every case through them.

    A context manager; :meth:`close` is idempotent, ends every open connection,
    joins the server's threads and frees the port. Subclasses build the HTTP
    server (:meth:`_make_server`) and open routes, registering each with
    :meth:`_add_route`; a route calls :meth:`_forget` when it closes.
    """

    #: What the server is, in error messages ("the model bridge").
    what: ClassVar[str]
    #: The name of the server's thread; its connection threads add ``-connection``.
    thread_name: ClassVar[str]
    #: How long :meth:`close` waits for connection threads: only a thread still
    #: serving a request that hangs takes this long; it is then left to end on its own.
    close_wait_s: ClassVar[float] = 10.0

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._host = host
        self._server: LoopbackServer | None = None
        self._thread: threading.Thread | None = None
        self._routes: dict[str, R] = {}
        self._closed: weakref.WeakValueDictionary[str, R] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    @abstractmethod
    def _make_server(self, address: tuple[str, int]) -> LoopbackServer:
        """The HTTP server, bound to ``address`` and named :attr:`thread_name`, its
        handler able to reach ``self``."""

    def start(self) -> None:
        """Bind an ephemeral port on the host and serve in a daemon thread."""
        if self._server is not None:
            return
        server = self._make_server((self._host, 0))
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()

    def close(self) -> None:
        """Stop serving, end open connections, join every thread, free the port.

        A connection thread stuck in a request that hangs is waited on for at most
        :attr:`close_wait_s`; its connection is already shut.
        """
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        server.drop_connections()
        server.join_workers(self.close_wait_s)
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` of the running server."""
        if self._server is None:
            raise RuntimeError(f"{self.what} is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def lookup(self, token: str) -> R | None:
        """The route with ``token``, open or closed-but-still-held, else ``None``."""
        with self._lock:
            return self._routes.get(token) or self._closed.get(token)

    def _add_route(self, route: R) -> R:
        with self._lock:
            self._routes[route.token] = route
        return route

    def _forget(self, route: Route) -> None:
        """Called by a route as it closes: it stays known while its owner holds it."""
        with self._lock:
            if (held := self._routes.pop(route.token, None)) is not None:
                self._closed[route.token] = held

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
