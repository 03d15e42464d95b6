"""A team's own MCP server made with the official ``mcp`` SDK (``MCPServer``), dual-era.

    python sdk_server.py stdio [PIDFILE]
    python sdk_server.py http [--json] [--legacy-only] [--log PATH] [--tls CERT KEY]

Tools: ``forecast(city, days)`` (a real schema: ``city`` required; an unknown city
is an error result; a log notification precedes the result), ``count()`` (a
counter kept in the process: 1, 2, ...) and ``protocol()`` (the protocol version
the request was served under), ``query(region, sql)`` (``region`` mirrored
into an ``Mcp-Param-Region`` header) and ``pay(amount)`` (its header annotation
is on a number: invalid, so a modern HTTP client leaves the tool out).

Over stdio it appends its pid to PIDFILE, if given. Over HTTP it listens on an
ephemeral loopback port and prints its URL as the first line of stdout;
``--json`` answers ``application/json`` instead of event streams, ``--log`` appends
one JSON line per HTTP request (method, the MCP headers, the reply's status
and content type), and ``--legacy-only``
turns a request at a revision after the handshake era away as a ``2025-11-25``
server does (``400``, a ``-32600`` error), so that only ``initialize`` works;
``--tls CERT KEY`` serves HTTPS.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import warnings
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

# The log notification is the point (a message before the result), not its future.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")

FORECASTS = {"Oslo": "snow", "Paris": "light rain"}
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

server = MCPServer("forecasts", log_level="WARNING")
counter = 0


@server.tool(description="The forecast for a city, some days ahead.")
async def forecast(city: str, ctx: Context, days: int = 1) -> str:
    # A notification before the result: on an event stream, the client passes it over.
    await ctx.info(f"looking up {city}")
    if city not in FORECASTS:
        raise ToolError(f"no forecast for {city}")
    return f"{city}: {FORECASTS[city]} for {days} day(s)"


@server.tool(description="Counts its calls.")
def count() -> str:
    global counter
    counter += 1
    return str(counter)


@server.tool(description="The protocol version this request was served under.")
def protocol(ctx: Context) -> str:
    return str(ctx.protocol_version)


@server.tool(description="Runs a query in a region, which is mirrored into a header.")
def query(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], sql: str
) -> str:
    return f"{region}: {sql}"


@server.tool(description="Its header annotation is invalid (on a number): a client leaves it out.")
def pay(amount: float) -> str:
    return f"paid {amount}"


# The SDK refuses the invalid annotation at registration; a server in another
# language may not: it is added to the listed schema afterwards.
server._tool_manager.get_tool("pay").parameters["properties"]["amount"]["x-mcp-header"] = "Amount"  # type: ignore[union-attr]


def wrapped(app: Any, log: str | None, legacy_only: bool) -> Any:
    """``app`` with each request logged and, ``legacy_only``, modern requests refused."""

    async def handle(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {key.decode().lower(): value.decode() for key, value in scope["headers"]}
        version = headers.get("mcp-protocol-version")
        entry = {
            "http": scope["method"],
            "version": version,
            "session": headers.get("mcp-session-id"),
            "mcp_method": headers.get("mcp-method"),
            "mcp_name": headers.get("mcp-name"),
            "region": headers.get("mcp-param-region"),
        }

        async def logged(message: Any) -> None:
            if message["type"] == "http.response.start" and log is not None:
                sent = {key.decode().lower(): value.decode() for key, value in message["headers"]}
                entry["status"] = message["status"]
                entry["type"] = sent.get("content-type", "").split(";")[0]
                with open(log, "a", encoding="utf-8") as out:
                    out.write(json.dumps(entry) + "\n")
            await send(message)

        if legacy_only and version is not None and version not in HANDSHAKE_VERSIONS:
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": "server-error",
                    "error": {
                        "code": -32600,
                        "message": f"Bad Request: Unsupported protocol version: {version}",
                    },
                }
            ).encode()
            start = {
                "type": "http.response.start",
                "status": 400,
                "headers": [(b"content-type", b"application/json")],
            }
            await logged(start)
            await logged({"type": "http.response.body", "body": body})
            return
        await app(scope, receive, logged)

    return handle


def serve_http(arguments: list[str]) -> None:
    import anyio
    import uvicorn

    log = arguments[arguments.index("--log") + 1] if "--log" in arguments else None
    app = server.streamable_http_app(json_response="--json" in arguments)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    tls: dict[str, Any] = {}
    if "--tls" in arguments:
        where = arguments.index("--tls")
        tls = {"ssl_certfile": arguments[where + 1], "ssl_keyfile": arguments[where + 2]}
    config = uvicorn.Config(
        wrapped(app, log, "--legacy-only" in arguments), log_level="warning", lifespan="on", **tls
    )
    scheme = "https" if tls else "http"
    print(f"{scheme}://127.0.0.1:{listener.getsockname()[1]}/mcp", flush=True)
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[listener]))


def main() -> None:
    if sys.argv[1] == "http":
        serve_http(sys.argv[2:])
        return
    if len(sys.argv) > 2:
        with open(sys.argv[2], "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\n")
    server.run("stdio")


if __name__ == "__main__":
    main()
