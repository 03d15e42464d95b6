"""A request the bridge refuses for its body (too large to read) is recorded on its
route: the case fails with the reason, whatever the agent made of the 413."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from zeroclaw_eval.bridge.server import ModelBridge
from zeroclaw_eval.errors import RunError
from zeroclaw_eval.protocol import ModelReply


@pytest.fixture
def bridge() -> Iterator[ModelBridge]:
    served = ModelBridge()
    served.start()
    try:
        yield served
    finally:
        served.close()


def never(request: object) -> ModelReply:
    raise RunError("an oversized request must not reach the case's answer")


def test_an_oversized_body_is_a_413_recorded_on_its_route(bridge: ModelBridge) -> None:
    with bridge.open_route("huge", never) as route:
        host, port = bridge.url.split("//")[1].split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(
                f"POST /r/{route.token}/v1/chat/completions HTTP/1.1\r\n"
                f"Host: x\r\nAuthorization: Bearer {route.api_key}\r\n"
                f"Content-Length: {64 * 1024 * 1024}\r\n\r\n".encode()
            )
            answer = sock.recv(4096).decode()
        assert answer.startswith("HTTP/1.1 413 ")
        assert list(route.errors) == ["a request body of 67108864 bytes is too large"]


def test_a_body_on_no_route_is_refused_unread_and_recorded_nowhere(
    bridge: ModelBridge,
) -> None:
    with bridge.open_route("other", never) as route:
        host, port = bridge.url.split("//")[1].split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(
                "POST /r/no-such-token/v1/chat/completions HTTP/1.1\r\n"
                f"Host: x\r\nContent-Length: {64 * 1024 * 1024}\r\n\r\n".encode()
            )
            # The route is looked up first: no route, no body read, whatever its size.
            assert sock.recv(4096).decode().startswith("HTTP/1.1 404 ")
        assert list(route.errors) == []
