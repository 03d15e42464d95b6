"""``zeroclaw-eval-mcp-relay``: the case's tools for an agent that only spawns MCP servers.

    zeroclaw-eval-mcp-relay [URL]

Some agents start every MCP server as a process and speak to it over stdio
(newline-delimited JSON-RPC on stdin and stdout). Configure this command as that
server: it relays each message it reads to the case's MCP route (``URL``, or
``$ZEROCLAW_EVAL_MCP_URL``, which a command agent served its tools is given, and its
children inherit unless their MCP client starts the server with an environment of
its own, as several frameworks' stdio clients do: there, pass the URL as the
argument), keeps the session the route opens, and writes each reply on stdout, one
line each. It imports nothing but the standard library's C modules (``_socket``, and
``json`` only for a request of the stateless revision), so that starting it costs
little more than starting Python: ``socket.py`` and ``json`` pull in ``enum``, ``re``
and ``selectors``, which would double it. A request of the stateless
revision (``2026-07-28``) goes with the headers that mirror its body, as an HTTP
client sends them; a client of the handshake era keeps its session. Everything the
route records (the dispatches, the faults) is recorded as for an HTTP client.

Nothing but replies goes to stdout. When the route cannot be reached the relay says
why in one line on stderr and exits 1; at the end of stdin it ends the session and
exits 0.
"""

from __future__ import annotations

import _socket
import os
import sys

from zeroclaw_eval.toolserver.headers import (
    MCP_URL_ENV,
    PROTOCOL_VERSION_KEY,
    SESSION_HEADER,
    mirrored_headers,
)

# typing is not imported for this alone: the relay's start is its cost (see above).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import IO

#: How long one relayed request may take: a tool may be slow, a dead route is not.
TIMEOUT_S = 300.0

PROGRAM = "zeroclaw-eval-mcp-relay"


class RouteError(OSError):
    """The route answered something that is not an HTTP/1.1 response."""


class Connection:
    """One keep-alive HTTP/1.1 connection to the route, over a bare socket.

    The relay is started once per case (or per turn) by agents that spawn their MCP
    servers: it speaks just the HTTP the tool server answers with (a body of known
    length, or chunked), on the C socket module, so that it imports nothing heavier.
    """

    def __init__(self, host: str, port: int) -> None:
        self._host_port = (host, port)
        self._host = f"{host}:{port}"
        self._socket: _socket.socket | None = None
        self._buffer = b""

    def request(
        self, method: str, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[dict[str, str], bytes]:
        """Send one request and read its response: its headers (names lower-cased) and
        body. A connection the route closed since the last request is opened again."""
        head = [f"{method} {path} HTTP/1.1", f"Host: {self._host}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        head.append(f"Content-Length: {len(body)}")
        data = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        for attempt in (0, 1):
            if self._socket is None:
                self._socket = _connect(*self._host_port)
                self._buffer = b""
            try:
                self._socket.sendall(data)
                return self._response()
            except (ConnectionError, RouteError):
                self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _response(self) -> tuple[dict[str, str], bytes]:
        status = self._readline()
        if not status.startswith(b"HTTP/1."):
            raise RouteError(f"not an HTTP response: {status[:80]!r}")
        headers: dict[str, str] = {}
        while (line := self._readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while size := int(self._readline().split(b";")[0].strip() or b"0", 16):
                body += self._read(size)
                self._readline()
            while self._readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
        else:
            body = self._read(int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            self.close()
        return headers, body

    def _fill(self) -> bool:
        """Read what the route sent next into the buffer; False at the end of the stream."""
        assert self._socket is not None
        chunk = self._socket.recv(65536)
        self._buffer += chunk
        return bool(chunk)

    def _readline(self) -> bytes:
        """The next line, its newline kept (what is left, at the end of the stream)."""
        while (end := self._buffer.find(b"\n")) < 0 and self._fill():
            pass
        cut = len(self._buffer) if end < 0 else end + 1
        line, self._buffer = self._buffer[:cut], self._buffer[cut:]
        return line

    def _read(self, size: int) -> bytes:
        """The next ``size`` bytes (fewer, at the end of the stream)."""
        while len(self._buffer) < size and self._fill():
            pass
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def close(self) -> None:
        if self._socket is not None:
            try:  # noqa: SIM105 - contextlib (functools, collections) is not imported
                self._socket.close()
            except OSError:
                pass
        self._socket = None
        self._buffer = b""


def _connect(host: str, port: int) -> _socket.socket:
    """A TCP connection to ``host``:``port`` (each address it resolves to, in turn)."""
    error: OSError | None = None
    for family, kind, protocol, _, address in _socket.getaddrinfo(
        host, port, 0, _socket.SOCK_STREAM
    ):
        connection = _socket.socket(family, kind, protocol)
        try:
            connection.settimeout(TIMEOUT_S)
            connection.connect(address)
        except OSError as exc:
            connection.close()
            error = exc
            continue
        return connection
    raise error or OSError(f"{host!r} resolves to no address")


def relay(url: str, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Relay every line of ``stdin`` to ``url`` and every reply to ``stdout``.

    Raises :class:`OSError` when the route cannot be reached.
    """
    host, port, path = _parts(url)
    connection = Connection(host, port)
    session: str | None = None
    try:
        for line in stdin:
            message = line.strip()
            if not message:
                continue
            headers = {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **_mirrored(message),
            }
            if session is not None:
                headers[SESSION_HEADER] = session
            answered, body = connection.request("POST", path, message, headers)
            session = answered.get(SESSION_HEADER.lower()) or session
            if body.strip():  # a request's reply; a notification gets none
                stdout.write(body.strip().replace(b"\n", b" ") + b"\n")
                stdout.flush()
    finally:
        if session is not None:
            try:  # noqa: SIM105 - as in Connection.close
                connection.request("DELETE", path, b"", {SESSION_HEADER: session})
            except OSError:
                pass  # the session ends with the route anyway
        connection.close()


def _parts(url: str) -> tuple[str, int, str]:
    """The host, port and path of an ``http://host:port/path`` URL."""
    authority, _, rest = url[len("http://") :].partition("/")
    host, _, port = authority.rpartition(":")
    if not host or not port.isdigit():
        raise OSError(f"no host and port in {url!r}")
    return host.strip("[]"), int(port), "/" + rest


def _mirrored(line: bytes) -> dict[str, str]:
    """The headers mirroring the message on ``line``; none for a line that is not a
    JSON object (the route says what is wrong with it), nor for a message of the
    handshake era, which is not even parsed (no revision key: no headers)."""
    if PROTOCOL_VERSION_KEY.encode() not in line:
        return {}
    import json

    try:
        body = json.loads(line)
    except ValueError:
        return {}
    return mirrored_headers(body) if isinstance(body, dict) else {}


def main(argv: Sequence[str] | None = None) -> int:
    """The console entry: relay stdin to the route until stdin ends."""
    args = list(sys.argv[1:] if argv is None else argv)
    url = args[0] if args else os.environ.get(MCP_URL_ENV, "")
    if len(args) > 1 or not url.startswith("http://"):
        sys.stderr.write(
            f"{PROGRAM}: give the case's MCP URL (http://...) as the one argument or in "
            f"{MCP_URL_ENV}\n"
        )
        return 2
    try:
        relay(url, sys.stdin.buffer, sys.stdout.buffer)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"{PROGRAM}: the MCP route {url} cannot be reached: {exc}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
