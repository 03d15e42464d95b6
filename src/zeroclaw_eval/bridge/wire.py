"""What every wire format of the bridge shares: the request, the route, refusals, helpers.

Each endpoint (:mod:`~zeroclaw_eval.bridge.chat`, :mod:`~zeroclaw_eval.bridge.responses`,
:mod:`~zeroclaw_eval.bridge.anthropic`) reads its API's request into one
:class:`BridgeRequest` in the chat-completions shape, asks the route for the reply
(:func:`ask`), and writes the reply back in its API's shape. A request it cannot
serve raises :class:`Refusal`, which the server turns into an error reply.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zeroclaw_eval.errors import RunError, one_line
from zeroclaw_eval.protocol import HttpError, ModelReply
from zeroclaw_eval.util.loopback import Route

if TYPE_CHECKING:
    from zeroclaw_eval.bridge.server import ModelBridge

#: Characters per streamed text or ``arguments`` delta (a few tokens' worth):
#: small enough that a client really reassembles pieces, large enough to keep
#: the chunks, which an SDK parses one by one, few.
STREAM_PIECE_CHARS = 32

#: ``code`` of the error body when the script cannot answer (HTTP 400: not retried).
CODE_SCRIPT_EXHAUSTED = "zeroclaw_eval_script_exhausted"
#: ``code`` of the error body when answering failed in any other way.
CODE_RUN_ERROR = "zeroclaw_eval_run_error"


@dataclass(frozen=True)
class BridgeRequest:
    """One model request an agent made, as the answering provider sees it.

    ``messages`` are in the chat-completions shape, exactly as sent, except that
    a ``content`` given as a list of text parts is joined into one string:
    assistant ``tool_calls`` keep their ids and *string* ``arguments``, and
    ``role: "tool"`` messages keep their ``tool_call_id``. ``tools`` are the
    request's ``tools`` entries as sent; ``body`` is the whole decoded request;
    ``traceparent`` its ``traceparent`` header, when the agent's instrumentation
    sent one (the agent's span that made the request).
    """

    api: str
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    stream: bool
    body: dict[str, Any]
    traceparent: str | None = None


Answer = Callable[[BridgeRequest], ModelReply]
"""Answers one request; raises :class:`RunError` when the script cannot."""


#: How a route's key starts: then comes its token, a dash, and its secret.
KEY_PREFIX = "zc-"


def token_of(key: str) -> str | None:
    """The route token a key names, or ``None`` when it has not a route key's form."""
    if not key.startswith(KEY_PREFIX):
        return None
    token, dash, _ = key[len(KEY_PREFIX) :].partition("-")
    return token if dash and token else None


class BridgeRoute(Route):
    """One case attempt's private way in: its base URL, its API key, what it saw.

    ``requests`` holds every parsed request, answered or refused by ``answer``,
    in order; ``errors`` one line per failure on this route (``answer`` raised,
    a malformed request, a wrong key, an unknown endpoint, a request after
    :meth:`close`). The lines do not name the case: the runner does.
    """

    def __init__(self, bridge: ModelBridge, label: str, answer: Answer) -> None:
        super().__init__(bridge)
        self.label = label
        #: The route's key; it names the route (its token), so that one base URL
        #: serves every case of a run and an agent can keep one client for them all.
        self.api_key = f"{KEY_PREFIX}{self.token}-{secrets.token_hex(16)}"
        #: What SDKs that add ``/v1`` themselves (Anthropic's) take as their base URL:
        #: the same for every route of the run.
        self.root_url = bridge.url
        #: What ``OPENAI_BASE_URL`` / ``base_url=`` of the OpenAI SDKs take: the same
        #: for every route of the run (``/r/<token>/v1`` reaches the route too).
        self.base_url = f"{self.root_url}/v1"
        self.requests: list[BridgeRequest] = []
        self.errors: list[str] = []
        self.models: list[str] = []
        #: What a wire format keeps between requests (the Responses API's stored
        #: responses, for ``previous_response_id``).
        self.memory: dict[str, Any] = {}
        self._answer = answer

    def answer(self, request: BridgeRequest) -> ModelReply:
        """Record ``request`` and ask the route's ``answer`` for the reply."""
        self.requests.append(request)
        if request.model and request.model not in self.models:
            self.models.append(request.model)
        return self._answer(request)

    def fail(self, message: str) -> None:
        """Keep one line saying what went wrong on this route."""
        self.errors.append(one_line(message))


@dataclass(frozen=True)
class Dropped:
    """A reply whose connection drops before it is complete (a scripted fault).

    ``payload`` is what was sent before the drop: the events of a stream, cut in
    the middle of its last tool call, or the whole JSON document, of which the
    server sends half the bytes of a body whose length it announced whole.
    """

    payload: dict[str, Any] | list[bytes]


Served = tuple[int, "dict[str, Any] | list[bytes] | Dropped"]
"""What an endpoint serves: the status and a JSON document, a list of SSE events, or
either cut short (:class:`Dropped`)."""


class Refusal(Exception):
    """Raised by an endpoint to refuse a request: an OpenAI-style error reply with
    ``status``, and, on a known route, one line of its ``errors``."""

    def __init__(
        self, status: int, message: str, code: str | None, kind: str = "invalid_request_error"
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.kind = kind


#: A scripted HTTP error's ``type`` and ``code`` in an OpenAI error body, by status.
_OPENAI_ERRORS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    408: ("server_error", "timeout"),
    409: ("invalid_request_error", "conflict"),
    413: ("invalid_request_error", "request_too_large"),
    429: ("requests", "rate_limit_exceeded"),
}
#: A scripted HTTP error's ``type`` in an Anthropic error body, by status.
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class ServedError(Refusal):
    """A scripted HTTP error, served in the API's own error shape with its status and
    ``Retry-After``: what the script says the model's server answers, so neither a
    failure of the route nor a refusal a client must not retry."""

    def __init__(self, error: HttpError) -> None:
        server = error.status >= 500
        kind, code = _OPENAI_ERRORS.get(
            error.status, ("server_error" if server else "invalid_request_error", None)
        )
        super().__init__(error.status, error.message, code, kind)
        self.retry_after = error.retry_after
        self.anthropic_kind = _ANTHROPIC_ERRORS.get(
            error.status, "api_error" if error.status >= 500 else "invalid_request_error"
        )


def ask(route: BridgeRoute, request: BridgeRequest) -> ModelReply:
    """``route``'s answer to ``request``; every failure becomes a recorded 400 refusal,
    and a scripted HTTP error a :class:`ServedError`."""
    with route.lock:
        try:
            reply = route.answer(request)
        except RunError as exc:
            raise Refusal(400, str(exc), CODE_SCRIPT_EXHAUSTED) from None
        except BaseException as exc:  # a provider bug fails its case, not the bridge
            raise Refusal(
                400, f"answering failed: {type(exc).__name__}: {exc}", CODE_RUN_ERROR
            ) from None
    if not isinstance(reply, ModelReply):
        raise Refusal(
            400, f"answering returned {type(reply).__name__}, not a ModelReply", CODE_RUN_ERROR
        )
    if reply.error is not None:
        raise ServedError(reply.error)
    return reply


def cut_events(events: list[bytes], key: str, call_id: str) -> list[bytes]:
    """``events`` up to the one after the first whose JSON has ``key`` ``call_id`` (the
    event opening that call), so that a stream dropped there stops inside the call."""
    marker = json.dumps({key: call_id}, ensure_ascii=False)[1:-1].encode("utf-8")
    opening = next((index for index, event in enumerate(events) if marker in event), 0)
    return events[: opening + 2]


def decode_object(raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object, or a refusal saying why it is not one."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refusal(400, f"malformed request: the body is not JSON ({exc})", None) from None
    if not isinstance(body, dict):
        raise Refusal(400, "malformed request: the body is not a JSON object", None)
    return body


def model_name(body: Mapping[str, Any]) -> str:
    """The request's ``model``: a non-empty string, or a refusal."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise Refusal(400, "malformed request: model must be a non-empty string", None)
    return model


def string_field(item: Mapping[str, Any], key: str, where: str) -> str:
    """``item[key]`` as a string, or a refusal naming ``where.key``."""
    value = item.get(key)
    if not isinstance(value, str):
        raise Refusal(400, f"malformed request: {where}.{key} must be a string", None)
    return value


def flag(body: Mapping[str, Any], key: str) -> bool:
    """A boolean switch of the request (``stream``...): absent or null is false."""
    value = body.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise Refusal(400, f"malformed request: {key} must be true or false", None)
    return value


def text_content(where: str, content: Any) -> str | None:
    """``content`` as one string: a list of text parts is joined, anything else refused."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for position, part in enumerate(content):
            if not isinstance(part, dict) or not isinstance(part.get("text"), str):
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise Refusal(
                    400,
                    f"malformed request: {where}[{position}] is a {kind!s} part; "
                    "the bridge carries text parts only",
                    None,
                )
            texts.append(part["text"])
        return "".join(texts)
    raise Refusal(400, f"malformed request: {where} is {type(content).__name__}, not text", None)


def pieces(text: str) -> Iterator[str]:
    """``text`` cut into the deltas of a stream."""
    for start in range(0, len(text), STREAM_PIECE_CHARS):
        yield text[start : start + STREAM_PIECE_CHARS]


def sse(document: Mapping[str, Any]) -> bytes:
    return b"data: " + json.dumps(document, ensure_ascii=False).encode("utf-8") + b"\n\n"
