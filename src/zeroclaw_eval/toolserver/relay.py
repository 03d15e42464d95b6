"""``zeroclaw-eval-mcp-relay``: the case's tools for an agent that only spawns MCP servers.

    zeroclaw-eval-mcp-relay [URL]

Some agents start every MCP server as a process and speak to it over stdio
(newline-delimited JSON-RPC on stdin and stdout). Configure this command as that
server: it relays each message it reads to the case's MCP route (``URL``, or
``$ZEROCLAW_EVAL_MCP_URL``, which a command agent served its tools is given, and
its children inherit), keeps the session the route opens, and writes each reply
on stdout, one line each. A request of the stateless revision (``2026-07-28``)
goes with the headers that mirror its body, as an HTTP client sends them; a
client of the handshake era keeps its session. Everything the route records (the
dispatches, the faults) is recorded as for an HTTP client.

Nothing but replies goes to stdout. When the route cannot be reached the relay
says why in one line on stderr and exits 1; at the end of stdin it ends the
session and exits 0.
"""

from __future__ import annotations

import http.client
import json
import os
import sys
from collections.abc import Sequence
from contextlib import suppress
from typing import IO
from urllib.parse import urlsplit

from zeroclaw_eval.agents.base import MCP_URL_ENV
from zeroclaw_eval.toolserver.jsonrpc import mirrored_headers
from zeroclaw_eval.toolserver.server import SESSION_HEADER

#: How long one relayed request may take: a tool may be slow, a dead route is not.
TIMEOUT_S = 300.0

PROGRAM = "zeroclaw-eval-mcp-relay"


def relay(url: str, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Relay every line of ``stdin`` to ``url`` and every reply to ``stdout``.

    Raises :class:`OSError` (or :class:`http.client.HTTPException`) when the route
    cannot be reached.
    """
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=TIMEOUT_S)
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
            connection.request("POST", parts.path, message, headers)
            response = connection.getresponse()
            body = response.read()
            session = response.getheader(SESSION_HEADER) or session
            if body.strip():  # a request's reply; a notification gets none
                stdout.write(body.strip().replace(b"\n", b" ") + b"\n")
                stdout.flush()
    finally:
        if session is not None:
            with suppress(OSError, http.client.HTTPException):
                connection.request("DELETE", parts.path, headers={SESSION_HEADER: session})
                connection.getresponse().read()
        connection.close()


def _mirrored(line: bytes) -> dict[str, str]:
    """The headers mirroring the message on ``line``; none for a line that is not a
    JSON object (the route says what is wrong with it)."""
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
    except (OSError, http.client.HTTPException) as exc:
        sys.stderr.write(f"{PROGRAM}: the MCP route {url} cannot be reached: {exc}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
