"""A small real MCP server over stdio (newline-delimited JSON-RPC), a team's own.

Two tools. ``clock()``, listed with a schema that names no type (never called
here). ``weather(city)``: ``Oslo: 3 C, snow`` for a city it knows, an error
result (``isError``) for ``Atlantis``; for ``hang`` it never answers, for
``crash`` it exits with status 3 after a word on stderr. A method it does not know
is ``-32601``, or, with ``--silent-on-unknown``, never answered; with
``--unsupported V1,V2`` it answers ``server/discover`` with the modern error
``-32022`` naming those versions.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

WEATHER = {"Oslo": "3 C, snow", "Paris": "12 C, light rain"}

TOOL = {
    "name": "weather",
    "description": "The weather in a city, now.",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


#: A schema with no ``type``, as some servers list one: served as an object schema.
CLOCK = {"name": "clock", "description": "The time now.", "inputSchema": {"properties": {}}}


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method = message.get("method")
    if "id" not in message:
        return None  # a notification
    if method == "server/discover" and "--unsupported" in sys.argv:
        # Modern, at none of the client's modern versions: the versions it names instead.
        supported = sys.argv[sys.argv.index("--unsupported") + 1].split(",")
        data = {"supported": supported, "requested": "2026-07-28"}
        error = {"code": -32022, "message": "Unsupported protocol version", "data": data}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": message["params"].get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "weather", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL, CLOCK]}
    elif method == "tools/call":
        city = message["params"]["arguments"].get("city", "")
        if city == "hang":
            time.sleep(3600)
        if city == "crash":
            sys.stderr.write("weather: the forecast backend is gone\n")
            sys.exit(3)
        if city in WEATHER:
            result = {"content": [{"type": "text", "text": f"{city}: {WEATHER[city]}"}]}
        else:
            text = f"no such city: {city}"
            result = {"content": [{"type": "text", "text": text}], "isError": True}
    else:
        if "--silent-on-unknown" in sys.argv:
            return None  # as some servers do with a method from before the handshake
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> int:
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line))
            if reply is not None:
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
