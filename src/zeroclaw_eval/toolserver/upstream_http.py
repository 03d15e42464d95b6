"""A team's own MCP server reached over streamable HTTP: the channel of
:class:`~zeroclaw_eval.toolserver.upstream.Upstream` for an ``http(s)://`` URL.

Standard library only (``http.client``). Each JSON-RPC message is one ``POST`` to
the URL, accepting ``application/json`` and ``text/event-stream``: a JSON reply
is the response; an event stream is read event by event until the JSON-RPC
response carrying the request's id arrives (notifications, other messages and
comments before it are passed over). A ``4xx`` whose body is no recognised modern
JSON-RPC error tells a handshake-era server (the probe then falls back to
``initialize``). A handshake-era session (``Mcp-Session-Id`` from ``initialize``)
is sent back on every later request, and ended with ``DELETE`` when the case ends.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator, Mapping
from contextlib import suppress
from typing import Any
from urllib.parse import urlsplit

from zeroclaw_eval.errors import RunError, one_line
from zeroclaw_eval.toolserver.headers import SESSION_HEADER
from zeroclaw_eval.toolserver.jsonrpc import MODERN_ERRORS
from zeroclaw_eval.toolserver.upstream_channel import Channel, NotModern, Unanswered

#: The longest error body quoted in a one-line error.
QUOTED = 200


class HttpChannel(Channel):
    """One MCP endpoint, one connection per request."""

    has_headers = True

    def __init__(self, url: str) -> None:
        self.url = url
        self.shown = url
        parts = urlsplit(url)
        self._secure = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.session: str | None = None

    def _connection(self, timeout_s: float) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self._secure else http.client.HTTPConnection
        return kind(self._host, self._port, timeout=timeout_s)

    def _post(
        self, message: Mapping[str, Any], headers: Mapping[str, str], timeout_s: float
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        sent = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        }
        if self.session is not None:
            sent[SESSION_HEADER] = self.session
        connection = self._connection(timeout_s)
        try:
            connection.request("POST", self._path, json.dumps(message).encode("utf-8"), sent)
            return connection, connection.getresponse()
        except TimeoutError:
            connection.close()
            raise Unanswered("no answer") from None
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise RunError(
                f"the MCP server {self.shown} could not be reached for {message.get('method')}: "
                f"{one_line(str(getattr(exc, 'strerror', None) or exc))}"
            ) from None

    def request(
        self, message: Mapping[str, Any], headers: Mapping[str, str], timeout_s: float
    ) -> dict[str, Any]:
        method = message.get("method")
        deadline = time.monotonic() + timeout_s
        connection, response = self._post(message, headers, timeout_s)
        try:
            if method == "initialize":
                self.session = response.getheader(SESSION_HEADER) or None
            kind = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
            if response.status >= 400:
                return self._refusal(response, str(method))
            if kind == "text/event-stream":
                return self._from_stream(response, message.get("id"), str(method), deadline)
            if kind != "application/json":
                raise RunError(
                    f"the MCP server {self.shown} answered {method} with HTTP "
                    f"{response.status} and a {kind or 'typeless'} body, not JSON"
                )
            reply = self._json(response.read(), str(method))
            if not isinstance(reply, dict) or reply.get("id") != message.get("id"):
                raise RunError(
                    f"the MCP server {self.shown} answered {method} with something other "
                    "than its JSON-RPC response"
                )
            return reply
        except TimeoutError:
            raise Unanswered("no answer") from None
        except (OSError, http.client.HTTPException) as exc:
            raise RunError(
                f"the MCP server {self.shown} broke off its answer to {method}: "
                f"{one_line(str(exc))}"
            ) from None
        finally:
            connection.close()

    def _refusal(self, response: http.client.HTTPResponse, method: str) -> dict[str, Any]:
        """A ``4xx``/``5xx``: its JSON-RPC error when the body holds one. A ``4xx``
        without a recognised modern error is :class:`NotModern`: the probe's fallback."""
        body = response.read()
        with suppress(ValueError, UnicodeDecodeError):
            reply = json.loads(body)
            error = reply.get("error") if isinstance(reply, dict) else None
            if isinstance(error, dict):
                if response.status < 500 and error.get("code") not in MODERN_ERRORS:
                    raise NotModern(
                        f"HTTP {response.status}: {one_line(str(error.get('message')))}"
                    )
                return {**reply, "id": reply.get("id")}
        quoted = one_line(body.decode("utf-8", "replace"))[:QUOTED]
        if response.status < 500:
            raise NotModern(f"HTTP {response.status}" + (f": {quoted}" if quoted else ""))
        raise RunError(
            f"the MCP server {self.shown} answered {method} with HTTP {response.status}"
            + (f": {quoted}" if quoted else "")
        )

    def _from_stream(
        self, response: http.client.HTTPResponse, wanted: Any, method: str, deadline: float
    ) -> dict[str, Any]:
        """The JSON-RPC response with id ``wanted`` from an event stream."""
        for data in events(response):
            with suppress(ValueError):
                message = json.loads(data)
                if (
                    isinstance(message, dict)
                    and message.get("id") == wanted
                    and ("result" in message or "error" in message)
                ):
                    return message
            if time.monotonic() > deadline:  # a server that only ever pings
                raise Unanswered("no answer")
        raise RunError(
            f"the MCP server {self.shown} ended its event stream without answering {method}"
        )

    def _json(self, body: bytes, method: str) -> Any:
        try:
            return json.loads(body)
        except ValueError:
            raise RunError(
                f"the MCP server {self.shown} answered {method} with a body that is not JSON"
            ) from None

    def notify(
        self, message: Mapping[str, Any], headers: Mapping[str, str], timeout_s: float
    ) -> None:
        connection, response = self._post(message, headers, timeout_s)
        try:
            response.read()
            if response.status >= 400:
                raise RunError(
                    f"the MCP server {self.shown} refused {message.get('method')} "
                    f"with HTTP {response.status}"
                )
        finally:
            connection.close()

    def close(self) -> None:
        """End the handshake-era session, if the server opened one (it may refuse with
        ``405``: then it ends sessions its own way)."""
        session, self.session = self.session, None
        if session is None:
            return
        with suppress(OSError, http.client.HTTPException):
            connection = self._connection(5.0)
            try:
                connection.request("DELETE", self._path, headers={SESSION_HEADER: session})
                connection.getresponse().read()
            finally:
                connection.close()


def events(response: http.client.HTTPResponse) -> Iterator[str]:
    """The ``data`` of each event of a ``text/event-stream`` body, as it arrives.

    Lines starting ``:`` are comments (keep-alive pings); fields other than ``data``
    (``event``, ``id``, ``retry``) say nothing a reply needs.
    """
    data: list[str] = []
    while True:
        raw = response.readline()
        if not raw:
            if data:
                yield "\n".join(data)
            return
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                yield "\n".join(data)
            data = []
        elif line.startswith("data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(" ") else value)
