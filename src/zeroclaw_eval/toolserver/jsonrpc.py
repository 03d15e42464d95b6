"""The Model Context Protocol as the tool server speaks it: JSON-RPC 2.0 messages in,
replies out, with no socket in sight.

Both eras of the protocol are spoken (a *dual-era* server, as the ``2026-07-28``
revision calls it):

- **stateless** (``2026-07-28``): no handshake, no session. Every request carries
  its revision and the client's capabilities in ``params._meta``
  (``io.modelcontextprotocol/protocolVersion``, ``.../clientCapabilities``), which
  :func:`modern_version` checks against the HTTP headers that mirror them; a
  revision not spoken is ``-32022`` naming those that are. ``server/discover``
  says what the server speaks. Every result carries ``resultType`` and the
  server's identity in ``_meta``; ``tools/list`` carries its cache hints;
- **handshake** (``2025-11-25``, ``2025-06-18``, ``2025-03-26``): ``initialize``
  answers the client's revision when spoken, else the newest, and the HTTP layer
  opens a session (``Mcp-Session-Id``); ``ping`` answers an empty result.

The methods served in both: ``tools/list`` (every tool of the route with its
``inputSchema``, in one page: no ``nextCursor``) and ``tools/call`` (the tool's
output as one text content item, and ``isError`` when the tool failed). A name
the route does not serve is the protocol error ``-32602``, as the specification
has it (``dispatch`` decides, and keeps the call). Notifications and responses
from the client are accepted and need no reply. Any other method is ``-32601``.
A message that is not a JSON-RPC 2.0 request, notification or response is
``-32600``; a body that is not JSON is ``-32700``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from zeroclaw_eval.errors import RunError, UnknownToolError
from zeroclaw_eval.protocol import Tool, ToolFault, ToolResult
from zeroclaw_eval.toolserver.headers import (
    METHOD_HEADER,
    NAME_HEADER,
    PROTOCOL_VERSION_KEY,
    VERSION_HEADER,
)
from zeroclaw_eval.version import __version__

#: The stateless revisions spoken (the revision on every request), newest first.
STATELESS_VERSIONS = ("2026-07-28",)
#: The handshake revisions spoken (``initialize``), newest first.
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[0]
#: Every revision spoken, as ``server/discover`` and ``-32022`` name them.
SUPPORTED_VERSIONS = STATELESS_VERSIONS + HANDSHAKE_VERSIONS

#: The ``_meta`` keys of a stateless request's envelope, and of a result's identity
#: (the revision's key, and the headers that mirror a body, are in ``headers``).
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

#: How long a client may cache a route's ``tools/list``: a route's tools never change.
TOOLS_TTL_MS = 3_600_000

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
#: A server error of the implementation-defined range: the harness refused the call
#: (it broke the case's script, came after the case ended, returned too much).
RUN_ERROR = -32000
#: The headers of a stateless request disagree with its body, or one is missing.
HEADER_MISMATCH = -32020
#: The request needs a capability the client did not declare.
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
#: The request's revision is not spoken; ``data`` names those that are.
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: The errors only a server of the stateless revision sends: a client probing with
#: ``server/discover`` that gets one of them has found such a server.
MODERN_ERRORS = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)

#: The HTTP status a stateless request's error is sent with (any other: 200).
HTTP_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}

SERVER_NAME = "zeroclaw-eval"

Dispatch = Callable[[str, dict[str, Any]], ToolResult]
"""Runs one ``tools/call`` (name, arguments) and returns the tool's result; raises
:class:`~zeroclaw_eval.errors.UnknownToolError` for a name the route does not serve, and
:class:`~zeroclaw_eval.errors.RunError` to refuse the call."""


class ProtocolError(Exception):
    """A JSON-RPC error to send back: ``code``, ``message``, optional ``data``, and the
    request's ``id``."""

    def __init__(self, code: int, message: str, request_id: Any = None, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id
        self.data = data

    def reply(self) -> dict[str, Any]:
        return error_reply(self.request_id, self.code, self.message, self.data)


class ScriptedError(ProtocolError):
    """A JSON-RPC error a fixture scripts for a tool call: served as any error, and
    never a failure of the route (whatever its code)."""


def error_reply(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


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


INSTRUCTIONS = "The tools of the case under test, served by the zeroclaw-eval harness."


def initialize_result(params: Mapping[str, Any]) -> dict[str, Any]:
    """The ``initialize`` result: the client's revision when spoken, else the newest."""
    asked = params.get("protocolVersion")
    version = asked if asked in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE_VERSION
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
        "instructions": INSTRUCTIONS,
    }


def stateless(message: Message) -> bool:
    """Whether ``message`` is a stateless request: its ``_meta`` names a revision."""
    meta = message.params.get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def modern_version(message: Message, header: Callable[[str], str | None] | None) -> str:
    """The revision of the stateless request ``message``, its envelope checked.

    ``header`` reads an HTTP header of the request (``None`` off HTTP). Raises
    :class:`ProtocolError`: ``-32602`` for an envelope missing its keys, ``-32020``
    for a header missing or disagreeing with the body (checked first, so a client
    that disagrees with itself is told so), ``-32022`` for a revision not spoken.
    """
    request_id = message.request_id
    meta = message.params.get("_meta")
    missing = [
        key
        for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY)
        if not isinstance(meta, dict) or key not in meta
    ]
    if missing:
        raise ProtocolError(
            INVALID_PARAMS,
            f"params._meta lacks the envelope key(s) {', '.join(missing)}",
            request_id,
        )
    assert isinstance(meta, dict)
    version = meta[PROTOCOL_VERSION_KEY]
    if header is not None:
        name = message.params.get("name") if message.method == "tools/call" else None
        mirrored = [
            (VERSION_HEADER, version, header(VERSION_HEADER)),
            (METHOD_HEADER, message.method, header(METHOD_HEADER)),
        ]
        if name is not None:
            mirrored.append((NAME_HEADER, name, decode_header(header(NAME_HEADER))))
        for header_name, body_value, sent in mirrored:
            if sent is None:
                raise ProtocolError(
                    HEADER_MISMATCH, f"Header mismatch: {header_name} is missing", request_id
                )
            if sent != body_value:
                raise ProtocolError(
                    HEADER_MISMATCH,
                    f"Header mismatch: {header_name} {sent!r} does not match the body's "
                    f"{body_value!r}",
                    request_id,
                )
    if version not in STATELESS_VERSIONS:
        data = {"supported": list(SUPPORTED_VERSIONS), "requested": version}
        raise ProtocolError(
            UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", request_id, data
        )
    return str(version)


def check_param_headers(
    message: Message, tools: Mapping[str, Tool], header: Callable[[str], str | None]
) -> None:
    """Check the ``Mcp-Param-*`` headers of a stateless ``tools/call`` against its body.

    A property the tool's schema marks ``x-mcp-header`` is mirrored by the client
    in ``Mcp-Param-<name>``: a value present in the arguments needs its header,
    equal once decoded; an absent or ``null`` one, none. Raises
    :class:`ProtocolError` ``-32020`` for the first mismatch. A tool whose
    annotations are invalid marks nothing (a client leaves it out), and a call of a
    tool the route does not serve is left to ``dispatch``.
    """
    name = message.params.get("name")
    arguments = message.params.get("arguments")
    tool = tools.get(name) if isinstance(name, str) else None
    if tool is None or not isinstance(arguments, dict):
        return
    try:
        marked = param_headers(tool.parameters or {})
    except ValueError:
        return
    for path, token in marked.items():
        expected = param_text(argument_at(arguments, path))
        sent = header(f"Mcp-Param-{token}")
        if expected is None and sent is None:
            continue
        if expected is None:
            problem = f"is sent but {'.'.join(path)} is not"
        elif sent is None:
            problem = "is missing"
        elif decode_header(sent) != expected:
            problem = f"{sent!r} does not match the body's {expected!r}"
        else:
            continue
        raise ProtocolError(
            HEADER_MISMATCH, f"Header mismatch: Mcp-Param-{token} {problem}", message.request_id
        )


#: The schema keyword naming the header a tool parameter is mirrored into.
X_MCP_HEADER = "x-mcp-header"
#: RFC 9110 ``tchar``: what a header name may hold.
TOKEN_CHARS = frozenset(
    "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
#: Keywords whose values are instances, not schemas: nothing in them annotates.
INSTANCE_KEYWORDS = frozenset({"default", "examples", "const", "enum"})


def param_headers(schema: Any) -> dict[tuple[str, ...], str]:
    """The ``Mcp-Param-*`` headers a tool's ``inputSchema`` asks for: each annotated
    property's path (a chain of ``properties`` keys) and its header's name part.

    Raises :class:`ValueError` naming why the definition is invalid, as the
    ``2026-07-28`` revision has it: an annotation off a pure ``properties`` chain
    (or on the root), one that is not an RFC 9110 token, one on a property whose
    type is not integer, string or boolean, or one repeated (case-insensitively).
    """
    found: dict[tuple[str, ...], str] = {}
    seen: set[str] = set()

    def walk(node: Any, path: tuple[str, ...] | None) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, None)
            return
        if not isinstance(node, Mapping):  # a tool's schema may be read-only
            return
        if X_MCP_HEADER in node:
            name = node[X_MCP_HEADER]
            where = ".".join(path or ())
            if not path:
                raise ValueError(f"{X_MCP_HEADER} where no property is statically reachable")
            if not isinstance(name, str) or not name or not set(name) <= TOKEN_CHARS:
                raise ValueError(f"property {where!r}: {X_MCP_HEADER} {name!r} is not a token")
            if node.get("type") not in ("integer", "string", "boolean"):
                raise ValueError(
                    f"property {where!r}: {X_MCP_HEADER} on a property that is not an "
                    "integer, a string or a boolean"
                )
            if name.lower() in seen:
                raise ValueError(f"property {where!r}: {X_MCP_HEADER} {name!r} repeated")
            seen.add(name.lower())
            found[path] = name
        for key, value in node.items():
            if key in INSTANCE_KEYWORDS or key == X_MCP_HEADER:
                continue
            if key == "properties" and isinstance(value, Mapping) and path is not None:
                for name, sub in value.items():
                    walk(sub, (*path, name))
            else:
                walk(value, None)  # below any other keyword nothing is statically reachable

    walk(schema, ())
    return found


def param_text(value: Any) -> str | None:
    """An argument as its ``Mcp-Param-*`` header says it, before encoding; ``None``
    when it has none (absent, ``null``, or not an integer, a string or a boolean).
    An integral float is the integer it is, as a header compares numerically."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else None


def argument_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The argument at ``path`` (a chain of keys), or ``None`` when there is none."""
    for key in path:
        if not isinstance(arguments, Mapping):
            return None
        arguments = arguments.get(key)
    return arguments


def decode_header(value: str | None) -> str | None:
    """A header value as sent: the specification's ``=?base64?...?=`` sentinel decoded
    (a value that is not valid base64 stays as it came, and so mismatches)."""
    if value is None or not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    import base64
    import binascii

    try:
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return value


def tool_entry(tool: Tool) -> dict[str, Any]:
    """One ``tools/list`` entry: name, description and the JSON Schema of its arguments."""
    schema = dict(tool.parameters) if tool.parameters else {}
    if schema.get("type") != "object":
        schema = {"type": "object", **{k: v for k, v in schema.items() if k != "type"}}
    return {"name": tool.name, "description": tool.description, "inputSchema": schema}


def answer(
    message: Message, tools: Mapping[str, Tool], dispatch: Dispatch, *, modern: bool = False
) -> dict[str, Any] | None:
    """The reply to ``message`` (``None`` for a notification): a request of an
    initialized session, or (``modern``) a stateless request whose envelope
    :func:`modern_version` accepted.

    Raises :class:`ProtocolError`; :data:`RUN_ERROR` when ``dispatch`` refuses a
    call, which the HTTP layer records against the case.
    """
    if not message.expects_reply:
        return None
    method, request_id = message.method, message.request_id
    if method == "ping" and not modern:  # removed from the stateless revision
        return _result(request_id, {})
    if method == "server/discover" and modern:
        discovered = {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": {"tools": {}},
            "instructions": INSTRUCTIONS,
            "ttlMs": TOOLS_TTL_MS,
            "cacheScope": "private",
        }
        return _result(request_id, _complete(discovered))
    if method == "tools/list":
        listed: dict[str, Any] = {"tools": [tool_entry(tool) for tool in tools.values()]}
        if modern:
            listed = _complete({**listed, "ttlMs": TOOLS_TTL_MS, "cacheScope": "private"})
        return _result(request_id, listed)
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
        try:
            result = dispatch(name, arguments)
        except UnknownToolError as exc:
            raise ProtocolError(INVALID_PARAMS, str(exc), request_id) from None
        except RunError as exc:
            raise ProtocolError(RUN_ERROR, str(exc), request_id) from None
        except ToolFault as fault:
            if fault.kind == "jsonrpc_error" and fault.code is not None:
                raise ScriptedError(fault.code, fault.message, request_id) from None
            raise  # a drop or a hang: the HTTP layer serves it
        called = {
            "content": [{"type": "text", "text": result.output}],
            "isError": not result.success,
        }
        return _result(request_id, _complete(called) if modern else called)
    raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method}", request_id)


def _complete(result: dict[str, Any]) -> dict[str, Any]:
    """A stateless revision's result: complete, and saying which server answered."""
    identity = {"name": SERVER_NAME, "version": __version__}
    return {**result, "resultType": "complete", "_meta": {SERVER_INFO_KEY: identity}}


def _result(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}
