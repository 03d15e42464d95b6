"""The Model Context Protocol as the tool server speaks it: JSON-RPC 2.0 messages in,
replies out, with no socket in sight.

The handshake revisions ``2025-11-25`` (the newest the ``initialize`` handshake
reaches), ``2025-06-18`` and ``2025-03-26`` are spoken: a client offering one gets
it back, any other gets the newest. The methods served:

- ``initialize``: the server's ``protocolVersion``, its ``capabilities`` (``tools``
  only) and ``serverInfo``; the HTTP layer opens a session (``Mcp-Session-Id``);
- ``ping``: an empty result;
- ``tools/list``: every tool of the route, each with its ``inputSchema`` (all in
  one page: no ``nextCursor``);
- ``tools/call``: the tool's output as one text content item, and ``isError``
  when the tool failed. A name the route does not serve is the protocol error
  ``-32602``, as the specification has it;
- notifications (``notifications/initialized``, ``notifications/cancelled``...) and
  responses from the client are accepted and need no reply.

Any other method is ``-32601`` (``server/discover`` included: a client probing for
the stateless revision falls back to the handshake). A message that is not a
JSON-RPC 2.0 request, notification or response is ``-32600``; a body that is not
JSON is ``-32700``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from zeroclaw_eval.errors import RunError
from zeroclaw_eval.protocol import Tool, ToolResult
from zeroclaw_eval.version import __version__

#: The handshake revisions spoken, newest first.
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[0]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
#: A server error of the implementation-defined range: the harness refused the call
#: (it broke the case's script, came after the case ended, returned too much).
RUN_ERROR = -32000

SERVER_NAME = "zeroclaw-eval"

Dispatch = Callable[[str, dict[str, Any]], ToolResult]
"""Runs one ``tools/call`` (name, arguments) and returns the tool's result; raises
:class:`~zeroclaw_eval.errors.RunError` to refuse it."""


class ProtocolError(Exception):
    """A JSON-RPC error to send back: ``code``, ``message``, and the request's ``id``."""

    def __init__(self, code: int, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id

    def reply(self) -> dict[str, Any]:
        return error_reply(self.request_id, self.code, self.message)


def error_reply(request_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


@dataclass(frozen=True)
class Message:
    """One parsed message: a request (``id`` set), or a notification or a client's
    response (``expects_reply`` false)."""

    method: str | None
    request_id: Any
    params: Mapping[str, Any]
    expects_reply: bool


def parse(body: Any) -> Message:
    """The JSON-RPC message ``body`` (already decoded JSON) holds, or a :class:`ProtocolError`."""
    if isinstance(body, list):
        raise ProtocolError(
            INVALID_REQUEST, "a JSON-RPC batch: this MCP revision sends one message per POST"
        )
    if not isinstance(body, dict):
        raise ProtocolError(INVALID_REQUEST, "the body is not a JSON-RPC message (an object)")
    request_id = body.get("id")
    valid_id = isinstance(request_id, (str, int)) and not isinstance(request_id, bool)
    if body.get("jsonrpc") != "2.0":
        raise ProtocolError(
            INVALID_REQUEST, 'not JSON-RPC 2.0 ("jsonrpc": "2.0" missing)', _id(body)
        )
    method = body.get("method")
    if method is None and ("result" in body or "error" in body):
        return Message(None, request_id, {}, expects_reply=False)  # a response of the client's
    if not isinstance(method, str) or not method:
        raise ProtocolError(INVALID_REQUEST, "method must be a non-empty string", _id(body))
    params = body.get("params", {})
    if not isinstance(params, dict):
        raise ProtocolError(INVALID_PARAMS, "params must be an object", _id(body))
    if "id" not in body:
        return Message(method, None, params, expects_reply=False)
    if not valid_id:
        raise ProtocolError(INVALID_REQUEST, "id must be a string or an integer")
    return Message(method, request_id, params, expects_reply=True)


def _id(body: Mapping[str, Any]) -> Any:
    request_id = body.get("id")
    ok = isinstance(request_id, (str, int)) and not isinstance(request_id, bool)
    return request_id if ok else None


def initialize_result(params: Mapping[str, Any]) -> dict[str, Any]:
    """The ``initialize`` result: the client's revision when spoken, else the newest."""
    asked = params.get("protocolVersion")
    version = asked if asked in PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
        "instructions": "The tools of the case under test, served by the zeroclaw-eval harness.",
    }


def tool_entry(tool: Tool) -> dict[str, Any]:
    """One ``tools/list`` entry: name, description and the JSON Schema of its arguments."""
    schema = dict(tool.parameters) if tool.parameters else {}
    if schema.get("type") != "object":
        schema = {"type": "object", **{k: v for k, v in schema.items() if k != "type"}}
    return {"name": tool.name, "description": tool.description, "inputSchema": schema}


def answer(
    message: Message, tools: Mapping[str, Tool], dispatch: Dispatch
) -> dict[str, Any] | None:
    """The reply to an initialized session's ``message`` (``None`` for a notification).

    Raises :class:`RunError` when ``dispatch`` refuses a call: the HTTP layer
    records it against the case and replies with :data:`RUN_ERROR`.
    """
    if not message.expects_reply:
        return None
    method, request_id = message.method, message.request_id
    if method == "ping":
        return _result(request_id, {})
    if method == "tools/list":
        return _result(request_id, {"tools": [tool_entry(tool) for tool in tools.values()]})
    if method == "tools/call":
        name = message.params.get("name")
        arguments = message.params.get("arguments", {})
        if arguments is None:
            arguments = {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise ProtocolError(
                INVALID_PARAMS,
                "tools/call needs params.name (a string) and params.arguments (an object)",
                request_id,
            )
        if name not in tools:
            served = ", ".join(tools) or "none"
            raise ProtocolError(
                INVALID_PARAMS, f"Unknown tool: {name!r} (served: {served})", request_id
            )
        try:
            result = dispatch(name, arguments)
        except RunError as exc:
            raise ProtocolError(RUN_ERROR, str(exc), request_id) from None
        content = [{"type": "text", "text": result.output}]
        return _result(request_id, {"content": content, "isError": not result.success})
    raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}", request_id)


def _result(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}
