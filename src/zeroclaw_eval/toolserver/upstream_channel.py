"""How a client reaches a team's own MCP server: the :class:`Channel` kind
:class:`~zeroclaw_eval.toolserver.upstream.Upstream` speaks the protocol over
(stdio there, streamable HTTP in :mod:`~zeroclaw_eval.toolserver.upstream_http`),
and the signs a channel gives of the server's era."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zeroclaw_eval.errors import RunError

#: JSON-RPC errors only a modern server sends: a probe answered with one of them
#: came from a modern server, and is not a reason to fall back to the handshake.
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
MODERN_ERRORS = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)


class NotModern(Exception):
    """The transport's own sign that the server does not speak the modern revision
    (over HTTP: a ``4xx`` whose body is no recognised modern error)."""


class Channel:
    """How requests reach one MCP server; an ``Upstream`` speaks the protocol over it."""

    #: How the server is named in errors: its argv or its URL.
    shown: str = ""

    def open(self) -> None:
        """Start or reach the server. Raises :class:`RunError`."""

    def request(
        self, message: Mapping[str, Any], headers: Mapping[str, str], timeout_s: float
    ) -> dict[str, Any]:
        """Send one request; its JSON-RPC response. Raises :class:`RunError` (no answer
        in ``timeout_s``, the server gone) or :class:`NotModern`."""
        raise NotImplementedError

    def notify(
        self, message: Mapping[str, Any], headers: Mapping[str, str], timeout_s: float
    ) -> None:
        """Send one notification. Raises :class:`RunError`."""
        raise NotImplementedError

    def timed_out_means_legacy(self) -> bool:
        """Whether a probe left unanswered tells a handshake-era server (stdio), rather
        than a fault (HTTP, where every request is answered)."""
        return False

    def param_headers(self, schema: Any) -> dict[tuple[str, ...], str]:
        """The argument paths a tool's ``inputSchema`` mirrors into ``Mcp-Param-*``
        headers; raises :class:`ValueError` for a definition to leave out. Only HTTP
        has headers: elsewhere the annotations are ignored, as the revision allows."""
        return {}

    def close(self) -> None:
        """End it all; idempotent, never raises."""


class Unanswered(RunError):
    """No answer in time: over stdio a probe's verdict, otherwise the case's error."""


def header_value(value: str) -> str:
    """``value`` as an HTTP header value: as it is when it is plain visible ASCII (with
    spaces or tabs inside, none at its ends), else in the specification's Base64
    sentinel form (a value that looks like that form itself included)."""
    import base64

    plain = (
        value == value.strip()
        and all(" " <= char <= "~" or char == "\t" for char in value)
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )
    if plain:
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="
