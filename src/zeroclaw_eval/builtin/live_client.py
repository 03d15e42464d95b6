"""The model side of the ``live`` mode: an OpenAI-compatible chat-completions client.

One request per model turn: ``POST {base_url}/chat/completions`` with the
conversation, the offered tools' schemas and the generation settings that are
set; the reply's text or ``tool_calls``, usage and reported model become a
:class:`~zeroclaw_eval.protocol.ModelReply`.

Only :mod:`zeroclaw_eval.builtin.live` imports this module, and only when a live
case is about to run, so a replay run never loads an HTTP client.

Network behaviour: ``timeout_s`` bounds each request whole (connect, send, and
the reply to its last byte): a watchdog shuts the socket when the time is up, so
a server that drips a byte a second cannot hold a case. 429 and 5xx answers are
retried, waiting what ``Retry-After`` asks (at most :data:`MAX_RETRY_AFTER_S`) or
else ``retry_backoff_s`` doubled per attempt; the ``max_retries`` retries are a
budget for the whole case, shared by its requests, and no wait may run past the
case's ``case_timeout_s``. Each retry is noted for the case report
(:mod:`zeroclaw_eval.modes.notes`). Timeouts and refused connections are not
retried: they say the endpoint is wrong or down, and waiting would only hide it.
Everything that goes wrong is a :class:`~zeroclaw_eval.errors.RunError` for the
case, with the API key scrubbed from any text it quotes; and every reply, a
successful one too, has the key redacted from all its text (``content``, the
reported ``model``, a refusal, tool calls' names, ids and arguments) before the
agent or any report sees it: a server that echoes the key puts it nowhere.
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from zeroclaw_eval.builtin.usage import usage_of
from zeroclaw_eval.config import LiveConfig
from zeroclaw_eval.errors import RunError
from zeroclaw_eval.modes.base import CaseProvider
from zeroclaw_eval.modes.notes import case_notes
from zeroclaw_eval.protocol import Message, ModelReply, Tool, ToolCallRequest
from zeroclaw_eval.util.redact import Secrets

#: The longest ``Retry-After`` honoured; a server asking for more is waited on this long.
MAX_RETRY_AFTER_S = 60.0

#: How much of an unexpected reply body an error message quotes.
QUOTE_LIMIT = 200


def read_api_key(config: LiveConfig) -> str | None:
    """The key from the environment variable ``api_key_env`` names (``None`` if none is named).

    Raises :class:`RunError` naming the variable, never its value, when it is unset.
    """
    if config.api_key_env is None:
        return None
    key = os.environ.get(config.api_key_env)
    if not key:
        raise RunError(
            f"eval.live.api_key_env: the environment variable {config.api_key_env} is not set"
        )
    return key


def tool_schema(tool: Tool) -> dict[str, Any]:
    """A tool as the chat-completions ``tools`` list describes it."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters),
        },
    }


class ChatCompletionsClient:
    """Posts chat-completions requests to one endpoint for one case, retrying what is
    worth retrying within the case's budget."""

    def __init__(
        self,
        config: LiveConfig,
        api_key: str | None,
        sleep: Callable[[float], None] = time.sleep,
        *,
        case_deadline: float | None = None,
    ) -> None:
        if config.base_url is None:
            raise RunError("eval.live.base_url: not set")
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self._config = config
        self._api_key = api_key
        #: The key as text to keep out of every reply and error (a server may echo it).
        self.secrets = Secrets.of((api_key,))
        self._sleep = sleep
        self._case_deadline = case_deadline
        self._retries_left = config.max_retries
        self._notes = case_notes()  # the case's, whichever thread sends

    def complete(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request and return the reply document. Raises :class:`RunError`."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            attempt += 1
            status, retry_after, payload = self._post(data)
            if 200 <= status < 300:
                return self._decode(payload)
            failure = f"POST {self.url}: HTTP {status}"
            if attempt > 1:
                failure += f" after {attempt} attempts"
            if status != 429 and status < 500:
                raise RunError(f"{failure}: {self._quote(payload)}")
            if self._retries_left == 0:
                spent = self._config.max_retries
                if spent and attempt == 1:  # earlier requests of the case used them up
                    failure += f" (the case's max_retries={spent} retries are used up)"
                raise RunError(f"{failure}: {self._quote(payload)}")
            delay = self._delay(attempt, retry_after)
            if self._case_deadline is not None and time.monotonic() + delay > self._case_deadline:
                raise RunError(
                    f"{failure}: not retried: waiting {delay:g} s would pass the case's "
                    f"deadline: {self._quote(payload)}"
                )
            self._retries_left -= 1
            asked = f", Retry-After {self._scrub(retry_after)}" if retry_after else ""
            reason = f"HTTP {status}{asked}"
            self._notes.retried(reason, attempt, delay)
            self._sleep(delay)

    def _post(self, data: bytes) -> tuple[int, str | None, bytes]:
        """One attempt, all of it within ``timeout_s``: the status, ``Retry-After`` and body."""
        request = urllib.request.Request(self.url, data=data, method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Accept", "application/json")
        if self._api_key is not None:
            request.add_header("Authorization", f"Bearer {self._api_key}")
        timeout = self._config.timeout_s
        deadline = _Deadline(timeout)
        # urllib's proxy handling is kept; only the connection classes are watched.
        opener = urllib.request.build_opener(
            _WatchedHTTPHandler(deadline), _WatchedHTTPSHandler(deadline)
        )
        result: tuple[int, str | None, bytes]
        too_slow = f"POST {self.url}: no complete reply within timeout_s={timeout:g}"
        try:
            with deadline:
                try:
                    with opener.open(request, timeout=timeout) as response:
                        result = response.status, None, response.read()
                except urllib.error.HTTPError as exc:
                    with exc:
                        result = exc.code, exc.headers.get("Retry-After"), _read_quietly(exc)
        except urllib.error.URLError as exc:
            if deadline.expired or isinstance(exc.reason, TimeoutError):
                raise RunError(too_slow) from None
            raise RunError(f"POST {self.url}: cannot connect: {self._scrub(exc.reason)}") from None
        except TimeoutError:
            raise RunError(too_slow) from None
        except (OSError, http.client.HTTPException) as exc:
            if deadline.expired:
                raise RunError(too_slow) from None
            raise RunError(
                f"POST {self.url}: connection failed: {type(exc).__name__}: {self._scrub(exc)}"
            ) from None
        if deadline.expired:  # the socket was shut under a read that then ended quietly
            raise RunError(too_slow)
        return result

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        """How long to wait before retry ``attempt`` (1-based)."""
        asked = _parse_retry_after(retry_after)
        if asked is not None:
            return min(asked, MAX_RETRY_AFTER_S)
        return float(self._config.retry_backoff_s * 2 ** (attempt - 1))

    def _decode(self, payload: bytes) -> dict[str, Any]:
        try:
            document = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise RunError(
                f"POST {self.url}: the reply is not valid JSON ({exc}): {self._quote(payload)}"
            ) from None
        if not isinstance(document, dict):
            raise RunError(f"POST {self.url}: the reply is JSON but not an object")
        return document

    def _quote(self, payload: bytes) -> str:
        text = payload.decode("utf-8", errors="replace").strip()
        if len(text) > QUOTE_LIMIT:
            text = text[:QUOTE_LIMIT] + "..."
        return self._scrub(text or "(empty body)")

    def _scrub(self, value: object) -> str:
        """``value`` as text, without the API key (some servers echo a rejected key)."""
        return self.secrets.text(str(value))


class _Deadline:
    """Shuts a request's socket when its time is up, wherever the request then is.

    A socket timeout bounds each read, not their sum: a server that sends a byte
    a second never trips it. Shutting the socket from a timer thread ends the
    blocked read at once (it sees the end of the stream), and :attr:`expired`
    tells the caller why.
    """

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` when the time is up (at once if it already is)."""
        with self._lock:
            self._socket = sock
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sock = self._socket
        if sock is not None:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    # The plain socket's shutdown, also for TLS: it wakes the reading thread
    # without touching the TLS object that thread is using.
    with contextlib.suppress(OSError):  # already closed: nothing left to interrupt
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _watched(base: type[http.client.HTTPConnection], deadline: _Deadline) -> Any:
    """``base`` whose socket, once connected, is handed to ``deadline``."""

    class Watched(base):  # type: ignore[valid-type,misc]
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    return Watched


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPConnection, self._deadline), req)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = _watched(http.client.HTTPSConnection, self._deadline)
        return self.do_open(connection, req, context=self._context)  # type: ignore[attr-defined]


def _read_quietly(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read()
    except (OSError, http.client.HTTPException):
        return b""


def _parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), if usable."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    if seconds != seconds:  # NaN
        return None
    return max(seconds, 0.0)


#: ``finish_reason`` values that say a reply is not the model's whole answer.
CUT_SHORT = {
    "length": "the reply was cut off at the token limit (finish_reason 'length')",
    "content_filter": "the server's content filter withheld the reply (finish_reason "
    "'content_filter')",
}


def parse_reply(
    document: Mapping[str, Any],
    new_id: Callable[[int], str] | None = None,
    *,
    max_tokens: int | None = None,
) -> ModelReply:
    """Map a chat-completions reply to a :class:`ModelReply`. Raises :class:`RunError`.

    What the API documents is followed: ``content`` may be ``null`` beside tool
    calls, a ``refusal`` may come instead of text, ``usage`` may be missing (then
    the reply's :attr:`~zeroclaw_eval.protocol.ModelReply.usage` is ``None``: not
    reported, never 0 tokens; :mod:`zeroclaw_eval.builtin.usage` reads its three
    shapes), and fields this harness does not know are ignored. A tool call
    without an id gets ``new_id(index)`` (default ``call_<index + 1>``): the loop
    pairs each result with its call by id. ``max_tokens`` (what the request
    asked for) is quoted when a reply stops at the token limit.

    Run errors, never guesses: a reply cut short (``finish_reason`` ``length`` or
    ``content_filter``) is not the model's answer; arguments that are not a JSON
    object would have the harness dispatch a call the model never made; and two
    calls with one id in a reply cannot be told apart by whatever pairs results
    with calls.
    """
    choices = document.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise RunError("the reply has no choices[0]")
    finish_reason = choices[0].get("finish_reason")
    if isinstance(finish_reason, str) and finish_reason in CUT_SHORT:
        limit = f" (max_tokens={max_tokens})" if finish_reason == "length" and max_tokens else ""
        raise RunError(CUT_SHORT[finish_reason] + limit)
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise RunError("the reply has no choices[0].message object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise RunError(f"choices[0].message.content is {type(content).__name__}, not text")
    refusal = message.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        raise RunError(f"choices[0].message.refusal is {type(refusal).__name__}, not text")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise RunError("choices[0].message.tool_calls is not a list")
    make_id = new_id or (lambda index: f"call_{index + 1}")
    calls = tuple(_tool_call(index, raw, make_id) for index, raw in enumerate(raw_calls))
    first_with: dict[str, int] = {}
    for index, call in enumerate(calls):
        earlier = first_with.setdefault(call.call_id, index)
        if earlier != index:
            raise RunError(
                f"choices[0].message.tool_calls[{index}].id={call.call_id!r}: the same id as "
                f"tool_calls[{earlier}]; each call in a reply needs its own id, to be paired "
                "with its result"
            )
    usage = usage_of(document.get("usage"))
    model = document.get("model")
    return ModelReply(
        content,
        calls,
        # What the agent is told needs a number; the accounting reads ``usage`` alone.
        (usage.input_tokens or 0) if usage is not None else 0,
        (usage.output_tokens or 0) if usage is not None else 0,
        refusal=refusal if not calls else None,
        model=model if isinstance(model, str) and model else None,
        usage=usage,
    )


def _tool_call(index: int, raw: Any, new_id: Callable[[int], str]) -> ToolCallRequest:
    where = f"choices[0].message.tool_calls[{index}]"
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict):
        raise RunError(f"{where}.function is missing")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise RunError(f"{where}.function.name is missing")
    call_id = raw.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = new_id(index)  # some local servers omit ids; the loop needs one
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            raise RunError(
                f"{where}: the model called {name!r} with arguments that are not valid "
                f"JSON ({exc}): {arguments[:QUOTE_LIMIT]!r}"
            ) from None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise RunError(
            f"{where}: the model called {name!r} with arguments that are not a JSON object"
        )
    return ToolCallRequest(call_id, name, arguments)


def request_body(
    config: LiveConfig, messages: Sequence[Message], tools: Sequence[Tool]
) -> dict[str, Any]:
    """The request for one model turn: the harness's fields, then the generation
    settings that are set, then ``extra_body`` (which may not override any of them)."""
    body: dict[str, Any] = {
        "model": config.model,
        "messages": list(messages),
        "temperature": config.temperature,
    }
    if tools:
        body["tools"] = [tool_schema(tool) for tool in tools]
    if config.max_tokens is not None:
        body["max_tokens"] = config.max_tokens
    if config.seed is not None:
        body["seed"] = config.seed
    if config.stop is not None:
        body["stop"] = list(config.stop)
    body.update(config.extra_body)
    return body


class LiveProvider(CaseProvider):
    """Asks a real model, through :class:`ChatCompletionsClient`, for every reply of one case."""

    def __init__(
        self,
        config: LiveConfig,
        client: ChatCompletionsClient | None = None,
        *,
        case_timeout_s: float | None = None,
    ) -> None:
        self._config = config
        deadline = time.monotonic() + case_timeout_s if case_timeout_s is not None else None
        self._client = client or ChatCompletionsClient(
            config, read_api_key(config), case_deadline=deadline
        )
        self._turn = 0
        self._generated = 0
        # Taken now, on the case's thread: a bridge may call respond() from another.
        self._notes = case_notes()

    def begin_turn(self, turn: int) -> None:
        self._turn = turn

    def respond(self, messages: Sequence[Message], tools: Sequence[Tool]) -> ModelReply:
        body = request_body(self._config, messages, tools)
        secrets = self._client.secrets
        try:
            document = self._client.complete(body)
            # Redacted once parsed, so that a key the server escaped (in a tool call's
            # arguments, a JSON text in the JSON) is caught as the agent would read it.
            reply = secrets.value(
                parse_reply(document, self._new_id, max_tokens=self._config.max_tokens)
            )
        except RunError as exc:
            raise RunError(secrets.text(f"turn {self._turn}: {exc}")) from None
        self._notes.served_by(reply.model)
        return reply

    def _new_id(self, index: int) -> str:
        # Unique in the case, and marked as made here: a recording shows the server sent none.
        self._generated += 1
        return f"generated_call_{self._generated}"
