"""The model side of the ``live`` mode: an OpenAI-compatible chat-completions client.

One request per model turn: ``POST {base_url}/chat/completions`` with the
conversation and the offered tools' schemas; the reply's text or ``tool_calls``
and its usage become a :class:`~zeroclaw_eval.agent.ModelReply`.

Only :mod:`zeroclaw_eval.builtin.live` imports this module, and only when a live
case is about to run, so a replay run never loads an HTTP client.

Network behaviour: each request has a timeout (``timeout_s``, per connect and per
read); 429 and 5xx answers are retried up to ``max_retries`` times, waiting what
``Retry-After`` asks (at most :data:`MAX_RETRY_AFTER_S`) or else
``retry_backoff_s`` doubled per attempt. Timeouts and refused connections are not
retried: they say the endpoint is wrong or down, and waiting would only hide it.
Everything that goes wrong is a :class:`~zeroclaw_eval.errors.RunError` for the
case, with the API key scrubbed from any text it quotes.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from zeroclaw_eval.agent import Message, ModelReply, Tool, ToolCallRequest
from zeroclaw_eval.config import LiveConfig
from zeroclaw_eval.errors import RunError
from zeroclaw_eval.mode import CaseProvider

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
    """Posts chat-completions requests to one endpoint, retrying what is worth retrying."""

    def __init__(
        self,
        config: LiveConfig,
        api_key: str | None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if config.base_url is None:
            raise RunError("eval.live.base_url: not set")
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self._config = config
        self._api_key = api_key
        self._sleep = sleep

    def complete(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request and return the reply document. Raises :class:`RunError`."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempts = self._config.max_retries + 1
        for attempt in range(1, attempts + 1):
            status, retry_after, payload = self._post(data)
            if 200 <= status < 300:
                return self._decode(payload)
            retryable = status == 429 or status >= 500
            if not retryable or attempt == attempts:
                tries = f" after {attempts} attempts" if retryable and attempts > 1 else ""
                raise RunError(f"POST {self.url}: HTTP {status}{tries}: {self._quote(payload)}")
            self._sleep(self._delay(attempt, retry_after))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _post(self, data: bytes) -> tuple[int, str | None, bytes]:
        """One attempt: the status, the ``Retry-After`` header and the body."""
        request = urllib.request.Request(self.url, data=data, method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Accept", "application/json")
        if self._api_key is not None:
            request.add_header("Authorization", f"Bearer {self._api_key}")
        timeout = self._config.timeout_s
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, None, response.read()
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, exc.headers.get("Retry-After"), _read_quietly(exc)
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise RunError(f"POST {self.url}: no reply within timeout_s={timeout}") from None
            raise RunError(f"POST {self.url}: cannot connect: {self._scrub(exc.reason)}") from None
        except TimeoutError:
            raise RunError(f"POST {self.url}: no reply within timeout_s={timeout}") from None
        except (OSError, http.client.HTTPException) as exc:
            raise RunError(
                f"POST {self.url}: connection failed: {type(exc).__name__}: {self._scrub(exc)}"
            ) from None

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
        text = str(value)
        if self._api_key:
            text = text.replace(self._api_key, "[redacted]")
        return text


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


def parse_reply(document: Mapping[str, Any]) -> ModelReply:
    """Map a chat-completions reply to a :class:`ModelReply`. Raises :class:`RunError`.

    Tool-call arguments arrive as a JSON string; arguments that are not a JSON
    object are a run error, not a guess: dispatching ``{}`` instead would grade a
    call the model never made.
    """
    choices = document.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise RunError("the reply has no choices[0]")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise RunError("the reply has no choices[0].message object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise RunError(f"choices[0].message.content is {type(content).__name__}, not text")
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise RunError("choices[0].message.tool_calls is not a list")
    calls = tuple(_tool_call(index, raw) for index, raw in enumerate(raw_calls))
    usage = document.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return ModelReply(
        content,
        calls,
        _count(usage.get("prompt_tokens")),
        _count(usage.get("completion_tokens")),
    )


def _tool_call(index: int, raw: Any) -> ToolCallRequest:
    where = f"choices[0].message.tool_calls[{index}]"
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict):
        raise RunError(f"{where}.function is missing")
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise RunError(f"{where}.function.name is missing")
    call_id = raw.get("id")
    if not isinstance(call_id, str) or not call_id:
        call_id = f"call_{index + 1}"  # some local servers omit ids; the loop needs one
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


def _count(value: Any) -> int:
    """A token count as reported, or 0 when the server reports none (or nonsense)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return 0


class LiveProvider(CaseProvider):
    """Asks a real model, through :class:`ChatCompletionsClient`, for every reply."""

    def __init__(self, config: LiveConfig, client: ChatCompletionsClient | None = None) -> None:
        self._config = config
        self._client = client or ChatCompletionsClient(config, read_api_key(config))
        self._turn = 0

    def begin_turn(self, turn: int) -> None:
        self._turn = turn

    def respond(self, messages: Sequence[Message], tools: Sequence[Tool]) -> ModelReply:
        body: dict[str, Any] = {
            "model": self._config.model,
            "messages": list(messages),
            "temperature": self._config.temperature,
        }
        if tools:
            body["tools"] = [tool_schema(tool) for tool in tools]
        try:
            return parse_reply(self._client.complete(body))
        except RunError as exc:
            raise RunError(f"turn {self._turn}: {exc}") from None
