"""How a client reaches a team's own MCP server: the :class:`Channel` kind
:class:`~zeroclaw_eval.toolserver.upstream.Upstream` speaks the protocol over
(stdio there, streamable HTTP in :mod:`~zeroclaw_eval.toolserver.upstream_http`),
and the signs a channel gives of the server's era."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zeroclaw_eval.errors import RunError


class NotModern(Exception):
    """The transport's own sign that the server does not speak the modern revision
    (over HTTP: a ``4xx`` whose body is no recognised modern error)."""


class Channel:
    """How requests reach one MCP server; an ``Upstream`` speaks the protocol over it."""

    #: How the server is named in errors: its argv or its URL.
    shown: str = ""
    #: Whether requests carry HTTP headers (``Mcp-Param-*`` among them): elsewhere
    #: the annotations asking for them are ignored, as the revision allows.
    has_headers: bool = False

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

    def close(self) -> None:
        """End it all; idempotent, never raises."""


class Unanswered(RunError):
    """No answer in time: over stdio a probe's verdict, otherwise the case's error."""
