"""Model requests in their normalised form: what a recording stores and drift compares.

:meth:`~zeroclaw_eval.grading.record.ModelRequest.normalised` gives one request as
plain JSON data::

    {"messages": [...], "tools": {"NAME": {"description": ..., "parameters": ...}},
     "settings": {...}}

The masking rules, which make two runs of an unchanged agent give equal requests:

- tool-call ids become ``call_1``, ``call_2``... in order of first appearance in
  the request, in ``tool_calls[].id`` and ``tool_call_id`` alike, so which result
  answers which call is still visible;
- in every text (message contents, tool descriptions) an ISO 8601 date-time
  (``2026-12-03T12:34:56Z``, with or without seconds, fraction, zone) becomes
  ``<timestamp>`` and a UUID becomes ``<uuid>`` (a date alone is kept: it is as
  often the subject of a request as a clock reading);
- the settings ``user``, ``metadata``, ``prompt_cache_key`` and
  ``safety_identifier`` are dropped (:data:`VOLATILE_SETTINGS`): they identify a
  caller or a cache, not what the model is asked;
- a message keeps ``role``, ``content``, ``refusal``, ``name``, ``tool_calls`` (each
  as ``id``, ``name`` and ``arguments``, parsed from their JSON text when they
  parse) and ``tool_call_id``; other keys are dropped;
- tools are keyed by name, in name order: offering them in another order is no
  change.

A recording stores the requests of a case compactly (:func:`compact`): each
request after the first names how many leading messages it shares with the
previous one (``history``) and lists only the rest, and leaves ``tools`` or
``settings`` out when they are the previous request's. :func:`expand` gives the
full requests back.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zeroclaw_eval.grading.record import ModelRequest

#: Settings that identify a caller or a cache rather than shape the request.
VOLATILE_SETTINGS = frozenset({"user", "metadata", "prompt_cache_key", "safety_identifier"})

#: The message keys a normalised message keeps.
MESSAGE_KEYS = ("role", "content", "refusal", "name", "tool_calls", "tool_call_id")

_TIMESTAMP = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b"
)
_UUID = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)


def mask_text(text: str) -> str:
    """``text`` with its timestamps and UUIDs masked."""
    if "-" not in text:  # both patterns need one: most texts are spared the regexes
        return text
    return _UUID.sub("<uuid>", _TIMESTAMP.sub("<timestamp>", text))


def normalise(request: ModelRequest) -> dict[str, Any]:
    """``request`` as plain JSON data, with the masking rules of this module applied."""
    ids: dict[str, str] = {}

    def mask_id(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        return ids.setdefault(value, f"call_{len(ids) + 1}")

    messages = [_message(message, mask_id) for message in request.messages]
    tools = {
        tool.name: {
            "description": mask_text(tool.description or ""),
            "parameters": _plain(tool.parameters),
        }
        for tool in sorted(request.tools, key=lambda tool: tool.name)
    }
    settings = {
        key: _plain(value)
        for key, value in sorted(request.settings.items())
        if key not in VOLATILE_SETTINGS
    }
    return {"messages": messages, "tools": tools, "settings": settings}


def _message(message: Mapping[str, Any], mask_id: Any) -> dict[str, Any]:
    shaped: dict[str, Any] = {}
    for key in MESSAGE_KEYS:
        if key not in message:
            continue
        value = message[key]
        if key in ("content", "refusal") and isinstance(value, str):
            value = mask_text(value)
        elif key == "tool_call_id":
            value = mask_id(value)
        elif key == "tool_calls" and isinstance(value, list):
            value = [_call(call, mask_id) for call in value]
        shaped[key] = _plain(value)
    return shaped


def _call(call: Any, mask_id: Any) -> Any:
    if not isinstance(call, Mapping):
        return _plain(call)
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        # Text that is no JSON is kept as the agent sent it: that is what the model saw.
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments)
    return {
        "id": mask_id(call.get("id")),
        "name": function.get("name"),
        "arguments": _plain(arguments),
    }


def _plain(value: Any) -> Any:
    """``value`` as JSON data (mappings as dicts, sequences as lists, strings masked)."""
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)  # a plugin tool's schema may hold anything; a request is JSON


# --- the compact form a recording stores ----------------------------------------


def compact(requests: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The normalised requests of one case, each stored as what changed since the
    previous one (see the module's documentation); :func:`expand` reverses it."""
    stored: list[dict[str, Any]] = []
    previous: Mapping[str, Any] | None = None
    for request in requests:
        messages = request["messages"]
        entry: dict[str, Any] = {}
        if previous is None:
            entry["messages"] = messages
            entry["tools"] = request["tools"]
            entry["settings"] = request["settings"]
        else:
            shared = _shared_prefix(previous["messages"], messages)
            if shared:
                entry["history"] = shared
            entry["messages"] = messages[shared:]
            if request["tools"] != previous["tools"]:
                entry["tools"] = request["tools"]
            if request["settings"] != previous["settings"]:
                entry["settings"] = request["settings"]
        stored.append(entry)
        previous = request
    return stored


def _shared_prefix(before: Sequence[Any], after: Sequence[Any]) -> int:
    shared = 0
    for old, new in zip(before, after, strict=False):
        if old != new:
            break
        shared += 1
    return shared


class StoredRequestError(ValueError):
    """A stored request that cannot be expanded; ``index`` is its place in the list."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


def expand(stored: Iterable[Mapping[str, Any] | None]) -> list[dict[str, Any] | None]:
    """The full normalised requests of a case from their stored forms, in order.

    ``None`` stands for a step stored without its request, and stays ``None``; a
    request after it may not refer to the previous one (``history``, or leaving
    ``tools``/``settings`` out). Raises :class:`StoredRequestError` otherwise.
    """
    full: list[dict[str, Any] | None] = []
    previous: dict[str, Any] | None = None
    for index, entry in enumerate(stored):
        if entry is None:
            full.append(None)
            previous = None
            continue
        history = entry.get("history", 0)
        leans = history or "tools" not in entry or "settings" not in entry
        if previous is None and leans and index > 0:
            raise StoredRequestError(
                index, "refers to the previous step's request, which is not stored"
            )
        base = previous or {"messages": [], "tools": {}, "settings": {}}
        if history > len(base["messages"]):
            raise StoredRequestError(
                index,
                f"history={history}, but the previous request has only "
                f"{len(base['messages'])} messages",
            )
        request = {
            "messages": [*base["messages"][:history], *entry.get("messages", [])],
            "tools": entry["tools"] if "tools" in entry else base["tools"],
            "settings": entry["settings"] if "settings" in entry else base["settings"],
        }
        full.append(request)
        previous = request
    return full


def compact_record(requests: Sequence[ModelRequest]) -> list[dict[str, Any]]:
    """A run's requests normalised and compacted, each entry led by its ``turn`` and
    ``step``: what a report carries."""
    stored = compact([request.normalised() for request in requests])
    return [
        {"turn": request.turn, "step": request.step, **entry}
        for request, entry in zip(requests, stored, strict=True)
    ]


# --- comparing two requests -----------------------------------------------------


def without(request: Mapping[str, Any], ignored: Iterable[str]) -> dict[str, Any]:
    """``request`` with every path of ``ignored`` removed.

    A path is dotted keys and list indices (``settings.temperature``,
    ``messages.0.content``, ``tools.echo.description``); ``*`` matches every key or
    index at its place (``messages.*.content``).
    """
    copy: dict[str, Any] = json.loads(json.dumps(request))
    for path in ignored:
        _remove(copy, path.split("."))
    return copy


def _remove(node: Any, parts: list[str]) -> None:
    head, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        keys = list(node) if head == "*" else [head] if head in node else []
    elif isinstance(node, list):
        if head == "*":
            keys = list(range(len(node)))
        elif head.isdigit() and int(head) < len(node):
            keys = [int(head)]
        else:
            keys = []
    else:
        return
    if not rest:
        if isinstance(node, dict):
            for key in keys:
                del node[key]
        else:  # a list keeps its length: later indices still name the same items
            for key in keys:
                node[key] = "<ignored>"
        return
    for key in keys:
        _remove(node[key], rest)
