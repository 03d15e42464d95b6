"""The names of MCP's streamable HTTP transport that the tool server, the upstream
client and the relay share, and the variable an agent finds its endpoint in.

Standard library only, and little of it: ``zeroclaw-eval-mcp-relay`` imports this and
nothing heavier, so that an agent that spawns it once per case or per turn pays
little more than a bare interpreter's start.
"""

from __future__ import annotations

# typing is not imported for this alone: the relay imports this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

#: The variable a command agent served its tools finds its case's MCP endpoint in. Its
#: children inherit it, ``zeroclaw-eval-mcp-relay`` among them, unless the agent's MCP
#: client starts the servers it spawns with an environment of its own (several
#: frameworks' stdio clients do): then pass the URL as the relay's argument.
MCP_URL_ENV = "ZEROCLAW_EVAL_MCP_URL"

#: The ``_meta`` key of a stateless request's revision.
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"

#: The HTTP headers that mirror a stateless request's body (compared case-insensitively).
VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"

#: The header of a handshake-era session.
SESSION_HEADER = "Mcp-Session-Id"


def mirrored_headers(body: Mapping[str, Any]) -> dict[str, str]:
    """The headers a client sends beside the stateless request ``body`` (none for a
    message of the handshake era): its revision, its method, and a call's tool name."""
    params = body.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get(PROTOCOL_VERSION_KEY), str):
        return {}
    headers = {VERSION_HEADER: meta[PROTOCOL_VERSION_KEY]}
    if isinstance(body.get("method"), str):
        headers[METHOD_HEADER] = body["method"]
        assert isinstance(params, dict)
        if body["method"] == "tools/call" and isinstance(params.get("name"), str):
            headers[NAME_HEADER] = encode_header(params["name"])
    return headers


def encode_header(value: str) -> str:
    """``value`` as an HTTP header value: as it is when it is plain visible ASCII (with
    spaces or tabs inside, none at its ends), else in the specification's Base64
    sentinel form (a value that looks like that form itself included)."""
    plain = (
        value == value.strip()
        and all(" " <= char <= "~" or char == "\t" for char in value)
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )
    if plain:
        return value
    import base64

    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="
